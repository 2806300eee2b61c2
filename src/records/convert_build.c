/*
 * Building the chain (convert.h): a flow's dataProcessingOptions keys,
 * checked one by one for the key table and together by convert_new(), and
 * compiled into struct convert (convert_int.h) once per flow.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "base/jackson.h"
#include "records/convert.h"
#include "records/convert_int.h"
#include "records/logparse.h"

const char *const convert_json_words[] = { "COMPACT", "PRETTYPRINT", NULL };
const char *const convert_unmatched_words[] = {
	"deadletter", "raw", "drop", NULL
};
const char *const meta_field_names[] = {
	"hostname", "path", "filename", "offset", "timestamp", NULL
};

/* The option names, as the DIS Agent spells them. */
static const char *const option_words[] = {
	"CSVTOJSON", "LOGTOJSON", "ADDMETADATA", "ADDBRACKETS", "SINGLELINE",
	NULL
};
#define OPT_SINGLELINE	4	/* S_* for the others, in that order */

static char	 why_buf[256];

static int
word(const char *const *words, const char *s, size_t n)
{
	int	 i;

	for (i = 0; words[i] != NULL; i++)
		if (strlen(words[i]) == n && strncasecmp(words[i], s, n) == 0)
			return i;
	return -1;
}

/*
 * The next item of a comma list: *p advances past it and its comma, *s
 * and *n are the item without blanks around it.  false at the end.
 */
static bool
item(const char **p, const char **s, size_t *n)
{
	const char	*q = *p, *e;

	if (*q == '\0')
		return false;
	e = q + strcspn(q, ",");
	*p = *e == ',' ? e + 1 : e;
	q += strspn(q, " \t");
	while (e > q && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	*s = q;
	*n = (size_t)(e - q);
	return true;
}

/* The options in order, as S_* (SINGLELINE left out) into kinds. */
static int
parse_options(const char *v, enum step_kind *kinds, size_t *nk, char *err,
    size_t errlen)
{
	const char	*s;
	size_t		 n;
	int		 w;

	*nk = 0;
	while (item(&v, &s, &n)) {
		w = word(option_words, s, n);
		if (w < 0) {
			snprintf(err, errlen, "has an unknown option '%.*s' (expected "
			    "CSVTOJSON, LOGTOJSON, ADDMETADATA, ADDBRACKETS or "
			    "SINGLELINE)", (int)MIN(n, 40), s);
			return -EINVAL;
		}
		if (w == OPT_SINGLELINE)
			continue;
		if (*nk == MAX_STEPS) {
			snprintf(err, errlen, "has more than %d options", MAX_STEPS);
			return -EINVAL;
		}
		kinds[(*nk)++] = (enum step_kind)w;
	}
	return 0;
}

static void
names_free(struct names *nm)
{
	size_t	 i;

	for (i = 0; i < nm->n; i++)
		free(nm->name[i]);
	free(nm->name);
	free(nm->src);
	memset(nm, 0, sizeof(*nm));
}

/* Add name for column src: a name seen before takes the later column. */
static void
names_put(struct names *nm, const char *name, size_t len, size_t src)
{
	size_t	 i;

	for (i = 0; i < nm->n; i++)
		if (strlen(nm->name[i]) == len &&
		    memcmp(nm->name[i], name, len) == 0) {
			nm->src[i] = src;
			return;
		}
	nm->name = xrealloc(nm->name, (nm->n + 1) * sizeof(*nm->name));
	nm->src = xrealloc(nm->src, (nm->n + 1) * sizeof(*nm->src));
	nm->name[nm->n] = xstrndup(name, len);
	nm->src[nm->n++] = src;
}

/*
 * customFieldNames: "a, b, c", or a JSON array of strings for names with
 * commas or blanks.  *count is the number of names as written.
 */
static int
parse_names(const char *v, struct names *nm, size_t *count, char *err,
    size_t errlen)
{
	char		**list = NULL;
	const char	*s;
	size_t		 n, i, k = 0;
	int		 rc = 0;

	memset(nm, 0, sizeof(*nm));
	*count = 0;
	if (jackson_kind(v) == '[') {
		rc = jackson_string_array(v, &list, &k, err, errlen);
		for (i = 0; i < k; i++) {
			if (rc == 0)
				names_put(nm, list[i], strlen(list[i]), i);
			free(list[i]);
		}
		free(list);
		*count = rc == 0 ? k : 0;
	} else {
		while (rc == 0 && item(&v, &s, &n)) {
			if (n == 0) {
				snprintf(err, errlen, "has an empty field name "
				    "(write a JSON array for unusual names)");
				rc = -EINVAL;
				break;
			}
			names_put(nm, s, n, (*count)++);
		}
	}
	if (rc == 0 && *count > MAX_NAMES) {
		snprintf(err, errlen, "has more than %d field names", MAX_NAMES);
		rc = -EINVAL;
	}
	if (rc == 0 && *count == 0) {
		snprintf(err, errlen, "has no field names");
		rc = -EINVAL;
	}
	if (rc != 0)
		names_free(nm);
	return rc;
}

/*
 * CSVTOJSON.delimiter: its characters (UTF-8), with \t, \s (a blank),
 * \; \\ \n \r for what agent.ini cannot hold as is.
 */
static int
unescape_delimiter(const char *v, struct buf *out, char *err, size_t errlen)
{
	static const char	 from[] = "ts;\\nr", to[] = "\t ;\\\n\r";
	const char		*e;

	buf_reset(out);
	for (; *v != '\0'; v++) {
		if (*v != '\\') {
			buf_addc(out, *v);
			continue;
		}
		e = v[1] != '\0' ? strchr(from, v[1]) : NULL;
		if (e == NULL) {
			snprintf(err, errlen, "has an unknown escape \\%.1s (use \\t, "
			    "\\s for a blank, \\;, \\\\, \\n or \\r)", v + 1);
			return -EINVAL;
		}
		buf_addc(out, to[e - from]);
		v++;
	}
	if (out->len == 0) {
		snprintf(err, errlen, "is empty");
		return -EINVAL;
	}
	if (convert_utf8_valid(out->data, out->len) != out->len) {
		snprintf(err, errlen, "is not valid UTF-8");
		return -EINVAL;
	}
	return 0;
}

/* The separator table from the unescaped delimiter characters. */
static int
set_separators(struct convert *c, const char *v, char *err, size_t errlen)
{
	const unsigned char	*p;
	struct buf		 b;
	size_t			 i, l;
	int			 rc;

	buf_init(&b);
	rc = unescape_delimiter(v, &b, err, errlen);
	p = (const unsigned char *)b.data;
	for (i = 0; rc == 0 && i < b.len; i += l) {
		l = p[i] < 0x80 ? 1 : p[i] < 0xe0 ? 2 : p[i] < 0xf0 ? 3 : 4;
		if (l == 1) {
			c->csv_ascii[p[i]] = true;
			continue;
		}
		if (l == 4) {
			/* Java splits UTF-16 code units: a surrogate pair
			 * would cut characters in half. */
			snprintf(err, errlen, "has characters beyond U+FFFF, "
			    "which are not supported");
			rc = -EINVAL;
			break;
		}
		c->csv_wide = xrealloc(c->csv_wide, (c->ncsv_wide + 1) *
		    sizeof(*c->csv_wide));
		c->csv_wide[c->ncsv_wide++] = xstrndup(b.data + i, l);
	}
	buf_cleanup(&b);
	return rc;
}

static int
parse_meta_fields(struct convert *c, const char *v, char *err, size_t errlen)
{
	const char	*s;
	size_t		 n, i;
	int		 w;

	while (item(&v, &s, &n)) {
		w = word(meta_field_names, s, n);
		if (w < 0) {
			snprintf(err, errlen, "has an unknown field '%.*s' (expected "
			    "hostname, path, filename, offset or timestamp)",
			    (int)MIN(n, 40), s);
			return -EINVAL;
		}
		for (i = 0; i < c->nmeta_fields; i++)
			if (c->meta_fields[i] == (enum meta_field)w) {
				snprintf(err, errlen, "lists %s twice",
				    meta_field_names[w]);
				return -EINVAL;
			}
		c->meta_fields[c->nmeta_fields++] = (enum meta_field)w;
	}
	return 0;
}

/* --- checks of single values ------------------------------------------- */

const char *
convert_check_options(const char *v)
{
	enum step_kind	 k[MAX_STEPS];
	size_t		 n;

	if (parse_options(v, k, &n, why_buf, sizeof(why_buf)) != 0)
		return why_buf;
	return NULL;
}

const char *
convert_check_names(const char *v)
{
	struct names	 nm;
	size_t		 n;

	if (parse_names(v, &nm, &n, why_buf, sizeof(why_buf)) != 0)
		return why_buf;
	names_free(&nm);
	return NULL;
}

const char *
convert_check_delimiter(const char *v)
{
	struct convert	 c;
	const char	*why = NULL;
	size_t		 i;

	memset(&c, 0, sizeof(c));
	if (set_separators(&c, v, why_buf, sizeof(why_buf)) != 0)
		why = why_buf;
	for (i = 0; i < c.ncsv_wide; i++)
		free(c.csv_wide[i]);
	free(c.csv_wide);
	return why;
}

const char *
convert_check_log_format(const char *v)
{
	if (word(logparse_format_names, v, strlen(v)) < 0)
		return "is not one of COMMONAPACHELOG, COMBINEDAPACHELOG, "
		    "APACHEERRORLOG, SYSLOG, RFC3339SYSLOG";
	return NULL;
}

const char *
convert_check_pattern(const char *v)
{
	struct logparse	*lp;

	char		 msg[200];

	if (logparse_new(LP_COMMON, v, &lp, msg, sizeof(msg)) != 0) {
		snprintf(why_buf, sizeof(why_buf), "does not compile: %s", msg);
		return why_buf;
	}
	logparse_free(lp);
	return NULL;
}

const char *
convert_check_metadata(const char *v)
{
	char	 msg[160];

	if (jackson_valid(v, msg, sizeof(msg)))
		return NULL;
	snprintf(why_buf, sizeof(why_buf), "is not a JSON value (%s)", msg);
	return why_buf;
}

const char *
convert_check_meta_fields(const char *v)
{
	struct convert	 c;

	memset(&c, 0, sizeof(c));
	if (parse_meta_fields(&c, v, why_buf, sizeof(why_buf)) != 0)
		return why_buf;
	return NULL;
}

/* --- building ------------------------------------------------------------ */

struct build {
	struct convert	*c;
	const struct convert_opts *o;
	const char	**key;
	char		*err;
	size_t		 errlen;
};

static int PRINTFLIKE(3, 4)
fail(struct build *b, const char *key, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	*b->key = key;
	n = snprintf(b->err, b->errlen, "%s: ", key);
	if (n >= 0 && (size_t)n < b->errlen) {
		va_start(ap, fmt);
		vsnprintf(b->err + n, b->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* A key of an option that is not in the list must not be set. */
static int
unused(struct build *b, const char *value, const char *key,
    const char *option)
{
	if (value == NULL || value[0] == '\0')
		return 0;
	return fail(b, key, "is set, but %s is not in dataProcessingOptions",
	    option);
}

static bool
pretty(const char *v)
{
	return v != NULL && strcasecmp(v, "PRETTYPRINT") == 0;
}

static int
build_csv(struct build *b)
{
	struct convert	*c = b->c;
	char		 msg[200];
	size_t		 n, i;

	if (b->o->csv_fields == NULL || b->o->csv_fields[0] == '\0')
		return fail(b, "CSVTOJSON.customFieldNames", "is required by "
		    "CSVTOJSON");
	if (parse_names(b->o->csv_fields, &c->csv, &n, msg, sizeof(msg)) != 0)
		return fail(b, "CSVTOJSON.customFieldNames", "%s", msg);
	for (i = 0; i < c->csv.n; i++)
		c->ncsv_cols = MAX(c->ncsv_cols, c->csv.src[i] + 1);
	c->cols = xcalloc(c->ncsv_cols, sizeof(*c->cols));
	if (set_separators(c, b->o->csv_delimiter != NULL &&
	    b->o->csv_delimiter[0] != '\0' ? b->o->csv_delimiter : ",", msg,
	    sizeof(msg)) != 0)
		return fail(b, "CSVTOJSON.delimiter", "%s", msg);
	return 0;
}

static int
build_log(struct build *b)
{
	struct convert		*c = b->c;
	const char *const	*def;
	const char		*pat = b->o->log_pattern, *fields = b->o->log_fields;
	char			 msg[256];
	size_t			 n, ndef, i;
	int			 f;

	if (b->o->log_format == NULL || b->o->log_format[0] == '\0')
		return fail(b, "LOGTOJSON.logFormat", "is required by LOGTOJSON");
	f = word(logparse_format_names, b->o->log_format,
	    strlen(b->o->log_format));
	if (f < 0)
		return fail(b, "LOGTOJSON.logFormat", "%s",
		    convert_check_log_format(b->o->log_format));
	c->dash_null = logparse_dash_is_null((enum logparse_format)f);
	pat = pat != NULL && pat[0] != '\0' ? pat : NULL;
	fields = fields != NULL && fields[0] != '\0' ? fields : NULL;
	if (pat != NULL && fields == NULL)
		return fail(b, "LOGTOJSON.customFieldNames", "is required with "
		    "LOGTOJSON.matchPattern");
	if (logparse_new((enum logparse_format)f, pat, &c->lp, msg,
	    sizeof(msg)) != 0)
		return fail(b, "LOGTOJSON.matchPattern", "%s", msg);
	snprintf(c->log_what, sizeof(c->log_what), "%s",
	    pat != NULL ? "matchPattern" : logparse_format_names[f]);
	ndef = logparse_fields((enum logparse_format)f, &def);
	if (fields == NULL) {
		for (i = 0; i < ndef; i++)
			names_put(&c->log, def[i], strlen(def[i]), i);
		return 0;
	}
	if (parse_names(fields, &c->log, &n, msg, sizeof(msg)) != 0)
		return fail(b, "LOGTOJSON.customFieldNames", "%s", msg);
	if (pat == NULL && n != ndef)
		return fail(b, "LOGTOJSON.customFieldNames", "%zu names, but "
		    "%s has %zu fields (set LOGTOJSON.matchPattern for other "
		    "fields)", n, logparse_format_names[f], ndef);
	if (n != logparse_groups(c->lp))
		return fail(b, "LOGTOJSON.customFieldNames", "%zu names, but "
		    "LOGTOJSON.matchPattern has %zu capturing groups", n,
		    logparse_groups(c->lp));
	return 0;
}

/* The metadata rendered once in each format; left open for fields. */
static int
render_meta(struct convert *c, const char *json, bool open_obj, bool pty,
    struct buf *out, char *err, size_t errlen)
{
	struct jw	 w;
	int		 rc;

	jw_init(&w, out, pty, SIZE_MAX);
	/* As the value of "metadata" in the record's object. */
	jw_nest(&w, 1);
	rc = jackson_render(&w, json, open_obj, open_obj ? meta_field_names :
	    NULL, err, errlen);
	if (rc == 0 && open_obj)
		c->meta_members = w.count[2];
	return rc;
}

static int
build_meta(struct build *b)
{
	struct convert	*c = b->c;
	const char	*json = b->o->meta_metadata;
	char		 msg[200];
	bool		 open_obj;
	int		 kind;

	if (b->o->meta_fields != NULL && parse_meta_fields(c,
	    b->o->meta_fields, msg, sizeof(msg)) != 0)
		return fail(b, "ADDMETADATA.fields", "%s", msg);
	/* No metadata key: the DIS Agent's map.get() gives null. */
	if (json == NULL || jackson_kind(json) == 0)
		json = c->nmeta_fields > 0 ? "{}" : "null";
	kind = jackson_kind(json);
	open_obj = c->nmeta_fields > 0;
	if (open_obj && kind != '{')
		return fail(b, "ADDMETADATA.fields", "needs "
		    "ADDMETADATA.metadata to be a JSON object, or unset");
	if (render_meta(c, json, open_obj, pretty(b->o->meta_json), &c->meta,
	    msg, sizeof(msg)) != 0)
		return fail(b, "ADDMETADATA.metadata", "%s", msg);
	return 0;
}

static bool
has(const struct convert *c, enum step_kind k)
{
	size_t	 i;

	for (i = 0; i < c->nsteps; i++)
		if (c->steps[i].kind == k)
			return true;
	return false;
}

static int
build(struct build *b)
{
	const struct convert_opts *o = b->o;
	struct convert	*c = b->c;
	enum step_kind	 k[MAX_STEPS];
	char		 msg[200];
	size_t		 i;
	int		 u;

	if (parse_options(o->options != NULL ? o->options : "", k,
	    &c->nsteps, msg, sizeof(msg)) != 0)
		return fail(b, "dataProcessingOptions", "%s", msg);
	for (i = 0; i < c->nsteps; i++) {
		c->steps[i].kind = k[i];
		c->steps[i].pretty = pretty(k[i] == S_CSV ? o->csv_json :
		    k[i] == S_LOG ? o->log_json : k[i] == S_META ?
		    o->meta_json : NULL);
	}
	if (has(c, S_CSV) ? build_csv(b) != 0 : unused(b, o->csv_fields,
	    "CSVTOJSON.customFieldNames", "CSVTOJSON") != 0)
		return -EINVAL;
	if (has(c, S_LOG) ? build_log(b) != 0 : (unused(b, o->log_format,
	    "LOGTOJSON.logFormat", "LOGTOJSON") != 0 || unused(b,
	    o->log_pattern, "LOGTOJSON.matchPattern", "LOGTOJSON") != 0 ||
	    unused(b, o->log_fields, "LOGTOJSON.customFieldNames",
	    "LOGTOJSON") != 0))
		return -EINVAL;
	if (has(c, S_META) ? build_meta(b) != 0 : (unused(b,
	    o->meta_metadata, "ADDMETADATA.metadata", "ADDMETADATA") != 0 ||
	    unused(b, o->meta_fields, "ADDMETADATA.fields",
	    "ADDMETADATA") != 0))
		return -EINVAL;
	u = o->log_unmatched != NULL ? word(convert_unmatched_words,
	    o->log_unmatched, strlen(o->log_unmatched)) : -1;
	c->unmatched = u < 0 ? CONVERT_DEADLETTER : (enum convert_unmatched)u;
	return 0;
}

int
convert_new(const struct convert_opts *o, int delim, bool keep,
    struct deadletter *dlq, const char *flow, struct convert **out,
    const char **key, char *err, size_t errlen)
{
	struct build	 b;
	struct convert	*c;
	const char	*dummy;

	*out = NULL;
	c = xcalloc(1, sizeof(*c));
	c->counts = c->own;
	c->delim = delim;
	c->keep = keep;
	c->dlq = dlq;
	c->flow = flow;
	c->clock = wall_ms;
	buf_init(&c->a);
	buf_init(&c->b);
	buf_init(&c->meta);
	if (gethostname(c->hostname, sizeof(c->hostname) - 1) != 0)
		snprintf(c->hostname, sizeof(c->hostname), "localhost");
	b.c = c;
	b.o = o;
	b.key = key != NULL ? key : &dummy;
	b.err = err;
	b.errlen = errlen;
	if (build(&b) != 0) {
		convert_free(c);
		return -EINVAL;
	}
	if (c->nsteps == 0)
		convert_free(c);
	else
		*out = c;
	return 0;
}

void
convert_free(struct convert *c)
{
	size_t	 i;

	if (c == NULL)
		return;
	names_free(&c->csv);
	names_free(&c->log);
	free(c->cols);
	for (i = 0; i < c->ncsv_wide; i++)
		free(c->csv_wide[i]);
	free(c->csv_wide);
	logparse_free(c->lp);
	buf_cleanup(&c->meta);
	buf_cleanup(&c->a);
	buf_cleanup(&c->b);
	free(c);
}
