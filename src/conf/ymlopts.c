/*
 * dataProcessingOptions from agent.yml to agent.ini (ymlopts.h).
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jackson.h"
#include "base/log.h"
#include "base/util.h"
#include "conf/ymlopts.h"

#define MAX_JSON	8192	/* metadata longer than this cannot be a line */

/* The keys each option reads (ProcessingUtilsFactory and converters). */
static const struct {
	const char	*option;
	const char	*keys[5];
} known[] = {
	{ "CSVTOJSON", { "customFieldNames", "delimiter", "jsonFormat" } },
	{ "LOGTOJSON", { "logFormat", "matchPattern", "customFieldNames",
	    "jsonFormat" } },
	{ "ADDMETADATA", { "metadata", "jsonFormat" } },
	{ "ADDBRACKETS", { NULL } },
	{ "SINGLELINE", { NULL } },
};

static void PRINTFLIKE(4, 5)
push(struct ymlopts *o, const char *key, int line, const char *fmt, ...)
{
	va_list	 ap;
	char	*s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		fatalx("%s: out of memory", __func__);
	va_end(ap);
	o->v = xrealloc(o->v, (o->n + 1) * sizeof(*o->v));
	o->v[o->n].key = key != NULL ? xstrdup(key) : NULL;
	o->v[o->n].text = s;
	o->v[o->n].line = line;
	o->n++;
}

void
ymlopts_free(struct ymlopts *o)
{
	size_t	 i;

	for (i = 0; i < o->n; i++) {
		free(o->v[i].key);
		free(o->v[i].text);
	}
	free(o->v);
	o->v = NULL;
	o->n = 0;
}

static const char *
sc(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

static int
line_of(const yaml_node_t *n)
{
	return (int)n->start_mark.line + 1;
}

static bool
plain(const yaml_node_t *n)
{
	return n->type == YAML_SCALAR_NODE &&
	    n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

/* --- YAML values as SnakeYAML reads them ---------------------------------- */

static bool
matches(const char *re, const char *s)
{
	regex_t	 r;
	bool	 m;

	if (regcomp(&r, re, REG_EXTENDED | REG_NOSUB) != 0)
		fatalx("%s: bad regex %s", __func__, re);
	m = regexec(&r, s, 0, NULL, 0) == 0;
	regfree(&r);
	return m;
}

/* SnakeYAML's Resolver, YAML 1.1. */
#define RE_NULL	"^(~|null|Null|NULL)?$"
#define RE_BOOL	"^(yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|" \
		"on|On|ON|off|Off|OFF)$"
#define RE_INT	"^([-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(0|[1-9][0-9_]*)|" \
		"[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(:[0-5]?[0-9])+)$"
#define RE_FLOAT "^([-+]?(\\.[0-9]+|[0-9_]+(\\.[0-9_]*)?)([eE][-+]?[0-9]+)?|" \
		"[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\\.[0-9_]*|" \
		"[-+]?\\.(inf|Inf|INF)|\\.(nan|NaN|NAN))$"

/* s without '_' (new). */
static char *
no_underscores(const char *s)
{
	char	*o = xmalloc(strlen(s) + 1), *p = o;

	for (; *s != '\0'; s++)
		if (*s != '_')
			*p++ = *s;
	*p = '\0';
	return o;
}

/* An int as decimal digits into b; false when it does not fit 64 bits. */
static bool
yaml_int(const char *text, struct buf *b)
{
	char			*s = no_underscores(text), *p = s, *part;
	unsigned long long	 v = 0, x;
	bool			 neg = false, ok = true;
	int			 base = 10;

	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if (strchr(p, ':') != NULL) {		/* sexagesimal: 1:30 */
		for (part = strtok(p, ":"); part != NULL;
		    part = strtok(NULL, ":"))
			v = v * 60 + strtoull(part, NULL, 10);
	} else {
		if (p[0] == '0' && p[1] == 'b')
			base = 2, p += 2;
		else if (p[0] == '0' && p[1] == 'x')
			base = 16, p += 2;
		else if (p[0] == '0' && p[1] != '\0')
			base = 8, p++;
		errno = 0;
		x = strtoull(p, NULL, base);
		ok = errno == 0;
		v = x;
	}
	if (ok && v > (unsigned long long)INT64_MAX + neg)
		ok = false;
	if (ok && v == 0)
		neg = false;
	if (ok)
		buf_printf(b, "%s%llu", neg ? "-" : "", v);
	free(s);
	return ok;
}

static int	yaml_json(yaml_document_t *, yaml_node_t *, struct jw *, int,
		    char *, size_t);

/* A scalar: null, bool, int, float or string, as SnakeYAML resolves it. */
static int
scalar_json(yaml_node_t *n, struct jw *w)
{
	const char	*s = sc(n);
	struct buf	 b;
	char		*f;

	if (!plain(n)) {
		jw_string(w, s, n->data.scalar.length);
		return 0;
	}
	buf_init(&b);
	if (matches(RE_NULL, s))
		buf_addstr(&b, "null");
	else if (matches(RE_BOOL, s))
		buf_addstr(&b, strchr("yYtToO", s[0]) != NULL &&
		    strcmp(s, "off") != 0 && strcmp(s, "Off") != 0 &&
		    strcmp(s, "OFF") != 0 ? "true" : "false");
	else if (matches(RE_INT, s) && yaml_int(s, &b))
		;
	else if (matches(RE_FLOAT, s) && strchr(s, ':') == NULL) {
		buf_reset(&b);
		f = no_underscores(s);
		jackson_double(&b, strtod(f, NULL));
		free(f);
	} else {
		buf_reset(&b);
		jw_string(w, s, n->data.scalar.length);
	}
	jw_raw(w, b.data, b.len);
	buf_cleanup(&b);
	return 0;
}

/* A mapping key as Jackson writes a Map key: its toString(). */
static int
key_text(yaml_node_t *k, struct buf *b)
{
	struct buf	 tmp;
	struct jw	 w;

	if (k->type != YAML_SCALAR_NODE)
		return -1;
	if (!plain(k) || (!matches(RE_NULL, sc(k)) && !matches(RE_BOOL,
	    sc(k)) && !matches(RE_INT, sc(k)) && !matches(RE_FLOAT, sc(k)))) {
		buf_add(b, sc(k), k->data.scalar.length);
		return 0;
	}
	if (matches(RE_NULL, sc(k)))
		return -1;	/* Jackson cannot write a null key */
	buf_init(&tmp);
	jw_init(&w, &tmp, false, SIZE_MAX);
	(void)scalar_json(k, &w);
	buf_add(b, tmp.data, tmp.len);
	buf_cleanup(&tmp);
	return 0;
}

static int
map_json(yaml_document_t *d, yaml_node_t *n, struct jw *w, int depth,
    char *why, size_t len)
{
	yaml_node_pair_t	*p;
	struct buf		 k;
	int			 rc = 0;

	jw_object(w);
	buf_init(&k);
	for (p = n->data.mapping.pairs.start;
	    rc == 0 && p < n->data.mapping.pairs.top; p++) {
		buf_reset(&k);
		if (key_text(yaml_document_get_node(d, p->key), &k) != 0) {
			snprintf(why, len, "a key that is not text");
			rc = -1;
			break;
		}
		jw_key(w, k.data != NULL ? k.data : "", k.len);
		rc = yaml_json(d, yaml_document_get_node(d, p->value), w,
		    depth + 1, why, len);
	}
	buf_cleanup(&k);
	jw_end_object(w);
	return rc;
}

static int
yaml_json(yaml_document_t *d, yaml_node_t *n, struct jw *w, int depth,
    char *why, size_t len)
{
	yaml_node_item_t	*it;
	int			 rc = 0;

	if (depth >= JW_MAX_DEPTH || w->b->len > MAX_JSON) {
		snprintf(why, len, "nested too deep or too long");
		return -1;
	}
	switch (n->type) {
	case YAML_SCALAR_NODE:
		return scalar_json(n, w);
	case YAML_SEQUENCE_NODE:
		jw_array(w);
		for (it = n->data.sequence.items.start;
		    rc == 0 && it < n->data.sequence.items.top; it++) {
			jw_item(w);
			rc = yaml_json(d, yaml_document_get_node(d, *it), w,
			    depth + 1, why, len);
		}
		jw_end_array(w);
		return rc;
	case YAML_MAPPING_NODE:
		return map_json(d, n, w, depth, why, len);
	default:
		snprintf(why, len, "an empty node");
		return -1;
	}
}

/* --- the list ------------------------------------------------------------- */

/* customFieldNames: "a, b" when the names allow, else a JSON array. */
static int
names_text(yaml_document_t *d, yaml_node_t *n, struct buf *b)
{
	yaml_node_item_t	*it;
	yaml_node_t		*v;
	struct jw		 w;
	bool			 list = true;
	const char		*s;
	size_t			 l;

	if (n->type != YAML_SEQUENCE_NODE)
		return -1;
	for (it = n->data.sequence.items.start;
	    it < n->data.sequence.items.top; it++) {
		v = yaml_document_get_node(d, *it);
		if (v->type != YAML_SCALAR_NODE)
			return -1;
		s = sc(v);
		l = strlen(s);
		if (l == 0 || strpbrk(s, ",[\"\\") != NULL || s[0] == ' ' ||
		    s[l - 1] == ' ' || strchr(s, '\t') != NULL)
			list = false;
	}
	jw_init(&w, b, false, SIZE_MAX);
	if (!list)
		jw_array(&w);
	for (it = n->data.sequence.items.start;
	    it < n->data.sequence.items.top; it++) {
		v = yaml_document_get_node(d, *it);
		if (!list) {
			jw_item(&w);
			jw_string(&w, sc(v), v->data.scalar.length);
		} else
			buf_printf(b, "%s%s", it == n->data.sequence.items.start
			    ? "" : ", ", sc(v));
	}
	if (!list)
		jw_end_array(&w);
	return 0;
}

/* CSVTOJSON.delimiter's escapes for what agent.ini cannot hold. */
static void
delimiter_text(const char *s, struct buf *b)
{
	for (; *s != '\0'; s++)
		switch (*s) {
		case '\t': buf_addstr(b, "\\t"); break;
		case ' ': buf_addstr(b, "\\s"); break;
		case ';': buf_addstr(b, "\\;"); break;
		case '\\': buf_addstr(b, "\\\\"); break;
		case '\n': buf_addstr(b, "\\n"); break;
		case '\r': buf_addstr(b, "\\r"); break;
		default: buf_addc(b, *s);
		}
}

/* One key of an option: its agent.ini value into b, or -1 with why. */
static int
param_text(yaml_document_t *d, const char *key, yaml_node_t *v,
    struct buf *b, char *why, size_t len)
{
	struct jw	 w;

	if (strcmp(key, "metadata") == 0) {
		jw_init(&w, b, false, SIZE_MAX);
		return yaml_json(d, v, &w, 0, why, len);
	}
	if (strcmp(key, "customFieldNames") == 0) {
		if (names_text(d, v, b) != 0) {
			snprintf(why, len, "not a list of names");
			return -1;
		}
		return 0;
	}
	if (v->type != YAML_SCALAR_NODE) {
		snprintf(why, len, "not a single value");
		return -1;
	}
	if (strcmp(key, "delimiter") == 0)
		delimiter_text(sc(v), b);
	else
		buf_addstr(b, sc(v));
	return 0;
}

static int
option_index(const char *name)
{
	size_t	 i;

	for (i = 0; i < ARRAY_SIZE(known); i++)
		if (strcmp(known[i].option, name) == 0)
			return (int)i;
	return -1;
}

static bool
option_key(int opt, const char *key)
{
	const char *const	*k;

	for (k = known[opt].keys; *k != NULL; k++)
		if (strcmp(*k, key) == 0)
			return true;
	return false;
}

/* The pairs of one item (or of its optionParameters mapping). */
static void
item_params(yaml_document_t *d, yaml_node_t *m, int opt, int idx,
    struct ymlopts *o)
{
	yaml_node_pair_t	*p;
	yaml_node_t		*k, *v;
	struct buf		 b;
	char			 why[120], key[80];

	buf_init(&b);
	for (p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top;
	    p++) {
		k = yaml_document_get_node(d, p->key);
		v = yaml_document_get_node(d, p->value);
		if (k->type != YAML_SCALAR_NODE ||
		    strcmp(sc(k), "optionName") == 0)
			continue;
		if (strcmp(sc(k), "optionParameters") == 0 &&
		    v->type == YAML_MAPPING_NODE) {
			item_params(d, v, opt, idx, o);
			continue;
		}
		if (!option_key(opt, sc(k))) {
			push(o, NULL, line_of(k), "not carried over: "
			    "dataProcessingOptions[%d].%.40s (%s has no such "
			    "key)", idx, sc(k), known[opt].option);
			continue;
		}
		buf_reset(&b);
		snprintf(key, sizeof(key), "%s.%s", known[opt].option, sc(k));
		if (param_text(d, sc(k), v, &b, why, sizeof(why)) != 0)
			push(o, NULL, line_of(k), "not carried over: %s (%s)",
			    key, why);
		else
			push(o, key, line_of(k), "%s", b.data != NULL ?
			    b.data : "");
	}
	buf_cleanup(&b);
}

void
ymlopts_convert(yaml_document_t *d, yaml_node_t *list, struct ymlopts *o)
{
	yaml_node_item_t	*it;
	yaml_node_t		*m, *name;
	yaml_node_pair_t	*p;
	struct buf		 names;
	int			 idx = 0, opt;

	buf_init(&names);
	buf_reserve(&names, 0);
	for (it = list->data.sequence.items.start;
	    it < list->data.sequence.items.top; it++, idx++) {
		m = yaml_document_get_node(d, *it);
		name = NULL;
		if (m->type == YAML_MAPPING_NODE)
			for (p = m->data.mapping.pairs.start;
			    p < m->data.mapping.pairs.top; p++)
				if (strcmp(sc(yaml_document_get_node(d,
				    p->key)), "optionName") == 0)
					name = yaml_document_get_node(d,
					    p->value);
		if (name == NULL || name->type != YAML_SCALAR_NODE ||
		    (opt = option_index(sc(name))) < 0) {
			push(o, NULL, line_of(m), "not carried over: "
			    "dataProcessingOptions[%d] (no optionName the DIS "
			    "Agent knows)", idx);
			continue;
		}
		buf_printf(&names, "%s%s", names.len > 0 ? ", " : "",
		    known[opt].option);
		item_params(d, m, opt, idx, o);
	}
	if (names.len > 0)
		push(o, "dataProcessingOptions", line_of(list), "%s",
		    names.data);
	buf_cleanup(&names);
}
