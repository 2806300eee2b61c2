/*
 * agent.yml (the DIS Agent's configuration) -> agent.ini.  libyaml's
 * document API loads the whole file (it is small); the top-level mapping
 * gives [agent], each element of its "flows" list a [flow:NAME].  Nested
 * mappings are flattened to dotted keys ("body: {compress: ...}" is the same
 * as "body.compress..."), which is how the DIS Agent names them anyway.
 *
 * Each key goes through, in order: the rules table below (keys dead in the
 * DIS Agent, keys whose value here is what this agent always does, keys
 * with a better replacement, renamed keys), then conf's key table: a key it
 * knows is written when conf_key_check accepts the value.  Everything else
 * is a comment saying why, and a "FILE:LINE:" note on err, so the operator
 * sees what did not come across.  The output is built in memory and written
 * only when the whole file converted, so a failed import writes nothing.
 * Nesting depth and key count are capped: an alias bomb is an error, not an
 * allocation spree.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "conf.h"
#include "importyml.h"
#include "log.h"
#include "util.h"
#include "ymlopts.h"

#define MAX_DEPTH	8	/* nested mappings under one key */
#define MAX_KEYS	1000	/* keys of one section, flattened */
#define MAX_TOTAL_KEYS	20000	/* keys of all sections */
#define INI_LINE_MAX	199	/* conf.c's line limit */
#define FLOW_NAME_MAX	64
#define NAME_CHARS	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" \
			"0123456789_.-"
#define SHOW_MAX	60	/* value shown in a comment */
#define WRAP		76	/* columns of a comment line */
#define WORD_MAX	100	/* longer words are cut */

enum rule_kind {
	R_DEAD,		/* no effect in the DIS Agent either */
	R_SAME,		/* this agent always behaves as arg */
	R_SKIP,		/* not carried over; arg says what instead */
	R_RENAME,	/* same meaning under the name arg */
};

struct rule {
	const char	*sect;		/* "agent", "flow"; NULL: both */
	const char	*key;
	enum rule_kind	 kind;
	const char	*arg;
};

#define NO_LIMIT	"disagent retries without limit and never drops " \
			"records"

static const struct rule rules[] = {
	{ NULL, "useHttpGzip", R_DEAD, NULL },
	{ NULL, "maxConnections", R_DEAD, NULL },
	{ NULL, "useTcpKeepAlive", R_DEAD, NULL },
	{ NULL, "log.level", R_DEAD, NULL },
	{ NULL, "log.file", R_DEAD, NULL },
	{ "agent", "checkpointFile", R_SKIP, "the DIS Agent's SQLite "
	  "checkpoints cannot be read; disagent keeps its own state file and "
	  "starts each file at initialPosition" },
	{ "agent", "records.retries", R_SKIP, NO_LIMIT },
	{ "agent", "exception.retries", R_SKIP, NO_LIMIT },
	{ "agent", "backoff.max.interval.ms", R_SKIP,
	  "set retryMaxBackoffMillis in each flow" },
	{ "agent", "PROXY_DOMAIN", R_SKIP, "for NTLM, write PROXY_USERNAME as "
	  "DOMAIN\\user" },
	{ "agent", "PROXY_WORKSTATION", R_SKIP, "libcurl sends this host's "
	  "name" },
	{ "agent", "data.compress.enabled", R_SAME, "false" },
	{ "agent", "dataEncryptEnabled", R_SAME, "false" },
	{ "flow", "sendingThreadSize", R_SKIP, "see maxInFlightRequests; "
	  "ordered = true sends one request at a time" },
};

/* Values never shown in a comment or message. */
static const char *const secret_keys[] = {
	"sk", "dataPassword", "PROXY_PASSWORD", "auth.token", "security.token",
	"encrypt.key", NULL,
};

/* One key of a section, flattened. */
struct entry {
	char		*key;		/* new */
	yaml_node_t	*val;		/* borrowed from the document */
	int		 line;		/* of the key, from 1 */
};

struct section {
	struct entry	*v;
	size_t		 n;
};

struct imp {
	const char	*path;
	FILE		*err;
	yaml_document_t	 doc;
	struct buf	 ini;		/* the output, written last */
	struct buf	 notes;		/* lines for err, written last */
	size_t		 nskipped;
	size_t		 ndropped;
	size_t		 nkeys;		/* over all sections */
	char		**names;	/* flow names used so far */
	size_t		 nnames;
	bool		 has_sk;	/* a secret: sk, PROXY_PASSWORD, ... */
	bool		 has_key;	/* encrypt.key, beside what it unlocks */
	bool		 whole;		/* the flow: isFileAppendable = false */
};

/* "FILE:LINE: message" on err (line 0: "FILE: message"); returns -1. */
static int PRINTFLIKE(3, 4)
fail(struct imp *im, int line, const char *fmt, ...)
{
	va_list	 ap;

	if (line > 0)
		fprintf(im->err, "%s:%d: ", im->path, line);
	else
		fprintf(im->err, "%s: ", im->path);
	va_start(ap, fmt);
	vfprintf(im->err, fmt, ap);
	va_end(ap);
	fputc('\n', im->err);
	return -1;
}

static char	*shown(const char *, const char *);

/* --- the document -------------------------------------------------------- */

static void
section_free(struct section *s)
{
	size_t	 i;

	for (i = 0; i < s->n; i++)
		free(s->v[i].key);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

static const char *
scalar(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

static int
add_entry(struct imp *im, struct section *s, const char *key,
    yaml_node_t *val, int line)
{
	char	*k;
	size_t	 i;

	for (i = 0; i < s->n; i++) {
		if (strcmp(s->v[i].key, key) != 0)
			continue;
		k = shown("", key);
		fail(im, line, "duplicate key '%s' (first at line %d)", k,
		    s->v[i].line);
		free(k);
		return -1;
	}
	/* Aliases can repeat a mapping many times over: cap the work. */
	if (s->n == MAX_KEYS || im->nkeys == MAX_TOTAL_KEYS)
		return fail(im, line, "more than %d keys", s->n == MAX_KEYS ?
		    MAX_KEYS : MAX_TOTAL_KEYS);
	im->nkeys++;
	s->v = xrealloc(s->v, (s->n + 1) * sizeof(*s->v));
	s->v[s->n].key = xstrdup(key);
	s->v[s->n].val = val;
	s->v[s->n].line = line;
	s->n++;
	return 0;
}

/*
 * The pairs of mapping m into s, nested mappings as "prefix.key".  At the
 * top (flows not NULL) the value of "flows" is handed back in *flows.
 */
static int
flatten(struct imp *im, yaml_node_t *m, const char *prefix,
    struct section *s, yaml_node_t **flows, int depth)
{
	yaml_node_pair_t	*p;
	yaml_node_t		*k, *v;
	char			*key;
	int			 rc = 0, line;

	if (depth > MAX_DEPTH)
		return fail(im, (int)m->start_mark.line + 1, "mappings nested "
		    "deeper than %d", MAX_DEPTH);
	for (p = m->data.mapping.pairs.start;
	    rc == 0 && p < m->data.mapping.pairs.top; p++) {
		k = yaml_document_get_node(&im->doc, p->key);
		v = yaml_document_get_node(&im->doc, p->value);
		line = (int)k->start_mark.line + 1;
		if (k->type != YAML_SCALAR_NODE)
			return fail(im, line, "a key must be plain text");
		if (flows != NULL && strcmp(scalar(k), "flows") == 0) {
			*flows = v;
			continue;
		}
		key = prefix == NULL ? xstrdup(scalar(k)) :
		    xasprintf("%s.%s", prefix, scalar(k));
		if (v->type == YAML_MAPPING_NODE)
			rc = flatten(im, v, key, s, NULL, depth + 1);
		else
			rc = add_entry(im, s, key, v, line);
		free(key);
	}
	return rc;
}

/* --- values --------------------------------------------------------------- */

static bool
in_list(const char *s, const char *const *list)
{
	for (; *list != NULL; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

static bool
is_null(const yaml_node_t *n)
{
	static const char *const nulls[] = { "", "~", "null", "Null", "NULL",
	    NULL };

	return n->type == YAML_SCALAR_NODE &&
	    n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	    in_list(scalar(n), nulls);
}

/*
 * The value as agent.ini text (new), or NULL when it is null.  Plain
 * scalars are read as SnakeYAML (YAML 1.1) reads them: yes/on/true are
 * booleans, 1_000 is 1000.
 */
static char *
value_text(const yaml_node_t *n)
{
	static const char *const yes[] = { "yes", "Yes", "YES", "true",
	    "True", "TRUE", "on", "On", "ON", NULL };
	static const char *const no[] = { "no", "No", "NO", "false", "False",
	    "FALSE", "off", "Off", "OFF", NULL };
	const char	*s = scalar(n);
	char		*out, *o;
	size_t		 i;

	if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return xstrdup(s);
	if (is_null(n))
		return NULL;
	if (in_list(s, yes) || in_list(s, no))
		return xstrdup(in_list(s, yes) ? "true" : "false");
	i = (s[0] == '+' || s[0] == '-') ? 1 : 0;
	/* Decimal only: 0x10, 010 (octal in YAML 1.1) and 1e3 stay text. */
	if (s[i] < '1' || s[i] > '9' || strspn(s + i, "0123456789_") !=
	    strlen(s + i))
		return xstrdup(s);
	out = o = xmalloc(strlen(s) + 1);
	for (i = s[0] == '+' ? 1 : 0; s[i] != '\0'; i++)
		if (s[i] != '_')
			*o++ = s[i];
	*o = '\0';
	return out;
}

/* Value for a comment: escaped, shortened, hidden when secret (new). */
static char *
shown(const char *key, const char *v)
{
	struct buf	 b;
	size_t		 i;

	if (in_list(key, secret_keys))
		return xstrdup("(hidden)");
	buf_init(&b);
	buf_reserve(&b, 0);
	for (i = 0; v[i] != '\0' && b.len < SHOW_MAX; i++) {
		if (v[i] == '\n')
			buf_addstr(&b, "\\n");
		else if (v[i] == '\t')
			buf_addstr(&b, "\\t");
		else if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
			buf_printf(&b, "\\x%02x", (unsigned char)v[i]);
		else
			buf_addc(&b, v[i]);
	}
	if (v[i] != '\0')
		buf_addstr(&b, "...");
	return b.data;
}

/* Whether "key = v" survives conf.c's reader unchanged. */
static bool
ini_safe(const char *key, const char *v)
{
	size_t	 n = strlen(v);

	if (strlen(key) + 3 + n > MAX(conf_line_max("flow", key),
	    conf_line_max("agent", key)) || v[0] == ';')
		return false;
	if (n > 0 && (strchr(" \t", v[0]) != NULL ||
	    strchr(" \t", v[n - 1]) != NULL))
		return false;
	if (strstr(v, " ;") != NULL || strstr(v, "\t;") != NULL)
		return false;
	for (; *v != '\0'; v++)
		if ((unsigned char)*v < 0x20 || *v == 0x7f)
			return false;
	return true;
}

/* --- output --------------------------------------------------------------- */

/*
 * text as comment lines of at most WRAP columns (conf.c rejects lines over
 * INI_LINE_MAX, comments included); a word longer than WORD_MAX is cut.
 */
static void
wrap(struct buf *b, const char *text)
{
	const char	*prefix = "; ";
	size_t		 col = 0, n;

	for (;;) {
		text += strspn(text, " ");
		if (*text == '\0')
			break;
		n = MIN(strcspn(text, " "), WORD_MAX);
		if (col > 0 && col + 1 + n > WRAP) {
			buf_addc(b, '\n');
			col = 0;
			prefix = ";   ";
		}
		if (col == 0) {
			buf_addstr(b, prefix);
			col = strlen(prefix);
		} else {
			buf_addc(b, ' ');
			col++;
		}
		buf_add(b, text, n);
		col += n;
		text += n;
	}
	if (col > 0)
		buf_addc(b, '\n');
}

/*
 * A comment line in the output and, when counted, the same words as a
 * "FILE:LINE:" note for err.
 */
static void PRINTFLIKE(4, 5)
note(struct imp *im, int line, size_t *count, const char *fmt, ...)
{
	va_list	 ap;
	char	 text[1024];

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	wrap(&im->ini, text);
	if (count == NULL)
		return;
	(*count)++;
	buf_printf(&im->notes, "%s:%d: %s\n", im->path, line, text);
}

static const struct rule *
rule_find(const char *sect, const char *key)
{
	size_t	 i;

	for (i = 0; i < ARRAY_SIZE(rules); i++)
		if ((rules[i].sect == NULL || strcmp(rules[i].sect, sect) == 0)
		    && strcmp(rules[i].key, key) == 0)
			return &rules[i];
	return NULL;
}

static bool
emitted(const struct buf *b, size_t start, const char *key)
{
	const char	*p = b->data + start;
	size_t		 n = strlen(key);

	for (; p != NULL && *p != '\0'; p = strchr(p, '\n')) {
		p += *p == '\n';
		if (strncmp(p, key, n) == 0 && strncmp(p + n, " = ", 3) == 0)
			return true;
	}
	return false;
}

/* key = v when conf accepts it; otherwise a note saying why not. */
static void
put_key(struct imp *im, const char *sect, size_t start, const char *key,
    const char *v, int line)
{
	const char	*other;
	char		 why[512], *s, *k, esc[3];

	/* agent.yml writes the delimiter as the character itself ("\n");
	 * agent.ini needs the escape. */
	if (strcmp(key, "recordDelimiter") == 0 && v[0] != '\0' &&
	    v[1] == '\0' && strchr("\n\r\t", v[0]) != NULL) {
		esc[0] = '\\';
		esc[1] = v[0] == '\n' ? 'n' : v[0] == '\r' ? 'r' : 't';
		esc[2] = '\0';
		v = esc;
	}
	/* The DIS SDK reads it with Protocol.valueOf(): only "HTTPS" means
	 * https there, anything else (even "https") falls back to http. */
	if (strcmp(key, "PROXY_PROTOCOL") == 0 && strcmp(v, "HTTPS") != 0 &&
	    strcasecmp(v, "http") != 0) {
		s = shown(key, v);
		note(im, line, &im->nskipped, "PROXY_PROTOCOL = %s was http in "
		    "the DIS Agent (only HTTPS means https there): written as "
		    "http", s);
		free(s);
		v = "http";
	}
	s = shown(key, v);
	k = shown("", key);
	other = strcmp(sect, "agent") == 0 ? "flow" : "agent";
	if (conf_key_check(sect, key, v, why, sizeof(why)) == 0) {
		if (emitted(&im->ini, start, key))
			note(im, line, &im->nskipped, "not carried over: %s = "
			    "%s (already set above)", key, s);
		else if (!ini_safe(key, v))
			note(im, line, &im->nskipped, "not carried over: %s = "
			    "%s (cannot be written in agent.ini)", key, s);
		else
			buf_printf(&im->ini, "%s = %s\n", key, v);
	} else if (conf_key_known(sect, key))
		note(im, line, &im->nskipped, "not carried over: %s", why);
	else if (conf_key_known(other, key))
		note(im, line, &im->nskipped, "not carried over: %s = %s "
		    "(it belongs in %s)", k, s, strcmp(other, "agent") == 0 ?
		    "[agent]" : "each [flow:NAME]");
	else
		note(im, line, &im->nskipped, "not carried over: %s = %s (not "
		    "supported by disagent)", k, s);
	if (in_list(key, secret_keys) && emitted(&im->ini, start, key))
		im->has_sk = true;
	if (strcmp(key, "encrypt.key") == 0 && emitted(&im->ini, start, key))
		im->has_key = true;
	free(k);
	free(s);
}

/* A value this agent cannot have: it always works as with want. */
static void
put_other(struct imp *im, const struct entry *e, const char *s,
    const char *want)
{
	char	*w;

	w = shown(e->key, want);
	note(im, e->line, &im->nskipped, "not carried over: %s = %s (not "
	    "supported: disagent always works as with %s = %s)", e->key, s,
	    e->key, w);
	free(w);
}

/* dataProcessingOptions, a YAML list: its keys, each checked (ymlopts.h). */
static void
put_options(struct imp *im, size_t start, const struct entry *e)
{
	struct ymlopts	 o = { NULL, 0 };
	size_t		 i;

	ymlopts_convert(&im->doc, e->val, &o);
	for (i = 0; i < o.n; i++)
		if (o.v[i].key != NULL)
			put_key(im, "flow", start, o.v[i].key, o.v[i].text,
			    o.v[i].line);
		else
			note(im, o.v[i].line, &im->nskipped, "%s", o.v[i].text);
	ymlopts_free(&o);
}

/*
 * Flow keys whose meaning depends on isFileAppendable: cleanup keys do
 * nothing in a tailing flow (in the DIS Agent either), and the DIS Agent
 * deletes only for "immediate" in lower case; whole files are sent from
 * their start, oldest first as with the DIS Agent's default
 * fileComparator.  Whether e was dealt with here.
 */
static bool
put_mode_key(struct imp *im, const struct entry *e, const char *v,
    const char *s)
{
	bool	 policy = strcmp(e->key, "deletePolicy") == 0;

	if (!im->whole && ((policy && strcasecmp(v, "never") != 0) ||
	    (strcmp(e->key, "fileMoveToDir") == 0 && v[0] != '\0')))
		note(im, e->line, &im->ndropped, "dropped: %s = %s (no effect "
		    "in the DIS Agent either: only flows with isFileAppendable "
		    "= false clean up files)", e->key, s);
	else if (policy && strcasecmp(v, "immediate") == 0 &&
	    strcmp(v, "immediate") != 0)
		note(im, e->line, &im->nskipped, "not carried over: %s = %s "
		    "(the DIS Agent deletes only for immediate in lower case; "
		    "this works as never there, and here)", e->key, s);
	else if (im->whole && strcmp(e->key, "initialPosition") == 0 &&
	    strcasecmp(v, "END_OF_FILE") == 0)
		note(im, e->line, &im->nskipped, "not carried over: %s = %s "
		    "(whole files are always sent from their start)", e->key,
		    s);
	else if (im->whole && strcmp(e->key, "fileComparator") == 0 &&
	    strcasecmp(v, "NEWEST_FIRST") == 0)
		note(im, e->line, NULL, "same in disagent: %s = %s (whole "
		    "files are sent oldest first)", e->key, s);
	else if (im->whole && strcmp(e->key, "fileComparator") == 0)
		put_other(im, e, s, "NEWEST_FIRST");
	else
		return false;
	return true;
}

/* One entry of section sect; start is where the section's text begins. */
static void
put_entry(struct imp *im, const char *sect, size_t start,
    const struct entry *e)
{
	const struct rule	*r;
	char			*v, *s;

	if (strcmp(sect, "flow") == 0 &&
	    strcmp(e->key, "dataProcessingOptions") == 0 &&
	    e->val->type == YAML_SEQUENCE_NODE) {
		put_options(im, start, e);
		return;
	}

	if (e->val->type != YAML_SCALAR_NODE || is_null(e->val)) {
		s = shown("", e->key);
		if (e->val->type != YAML_SCALAR_NODE)
			note(im, e->line, &im->nskipped, "not carried over: %s "
			    "(a list, not a single value)", s);
		else
			note(im, e->line, NULL, "empty: %s (the default "
			    "applies)", s);
		free(s);
		return;
	}
	v = value_text(e->val);
	s = shown(e->key, v);
	r = rule_find(sect, e->key);
	if (strcmp(sect, "flow") == 0 && put_mode_key(im, e, v, s)) {
		/* noted there */
	} else if (r != NULL && r->kind == R_DEAD)
		note(im, e->line, &im->ndropped, "dropped: %s = %s (no effect "
		    "in the DIS Agent either)", e->key, s);
	else if (r != NULL && r->kind == R_SAME && strcasecmp(v, r->arg) == 0)
		note(im, e->line, NULL, "same in disagent: %s = %s", e->key, s);
	else if (r != NULL && r->kind == R_SAME)
		put_other(im, e, s, r->arg);
	else if (r != NULL && r->kind == R_SKIP)
		note(im, e->line, &im->nskipped, "not carried over: %s = %s "
		    "(%s)", e->key, s, r->arg);
	else
		put_key(im, sect, start, r != NULL ? r->arg : e->key, v,
		    e->line);
	free(s);
	free(v);
}

/* --- sections ------------------------------------------------------------- */

static const struct entry *
entry_find(const struct section *s, const char *key)
{
	size_t	 i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->v[i].key, key) == 0)
			return &s->v[i];
	return NULL;
}

static void
put_agent(struct imp *im, const struct section *s)
{
	size_t	 i, start;

	buf_addstr(&im->ini, "[agent]\n");
	start = im->ini.len;
	for (i = 0; i < s->n; i++)
		put_entry(im, "agent", start, &s->v[i]);
	if (entry_find(s, "ak") == NULL || entry_find(s, "sk") == NULL)
		buf_addstr(&im->ini, "; ak and sk are not set here: give them "
		    "to the agent as DIS_AK and DIS_SK,\n;   or as the systemd "
		    "credentials ak and sk.\n");
}

/* A unique [flow:NAME] name from the stream name or id (new). */
static char *
flow_name(struct imp *im, const char *stream)
{
	char	 base[FLOW_NAME_MAX - 7], *name;
	size_t	 i;
	int	 k;

	for (i = 0; stream[i] != '\0' && i + 1 < sizeof(base); i++)
		base[i] = strchr(NAME_CHARS, stream[i]) != NULL ? stream[i] :
		    '_';
	base[i] = '\0';
	if (i == 0)
		snprintf(base, sizeof(base), "flow");
	name = xstrdup(base);
	for (k = 2;; k++) {
		for (i = 0; i < im->nnames; i++)
			if (strcmp(im->names[i], name) == 0)
				break;
		if (i == im->nnames)
			break;
		free(name);
		name = xasprintf("%s-%d", base, k);
	}
	im->names = xrealloc(im->names, (im->nnames + 1) * sizeof(char *));
	im->names[im->nnames++] = name;
	return name;
}

static const char *
stream_of(const struct section *s, const char *key)
{
	const struct entry	*e = entry_find(s, key);

	if (e == NULL || e->val->type != YAML_SCALAR_NODE ||
	    scalar(e->val)[0] == '\0')
		return NULL;
	return scalar(e->val);
}

static void
put_flow(struct imp *im, const struct section *s, int line)
{
	const struct entry *e;
	const char	*stream, *obs;
	char		*name, *shown_obs, *v;
	size_t		 i, start;

	stream = stream_of(s, "DISStream");
	if (stream == NULL)
		stream = stream_of(s, "streamId");
	if (stream == NULL) {
		obs = stream_of(s, "OBSStream");
		buf_addc(&im->ini, '\n');
		if (obs == NULL) {
			note(im, line, &im->nskipped, "not carried over: the "
			    "flow at line %d (it has no DISStream)", line);
			return;
		}
		shown_obs = shown("OBSStream", obs);
		note(im, line, &im->nskipped, "not carried over: the flow at "
		    "line %d with OBSStream = %s (uploading files to OBS is "
		    "not supported)", line, shown_obs);
		free(shown_obs);
		return;
	}
	name = flow_name(im, stream);
	e = entry_find(s, "isFileAppendable");
	v = e != NULL && e->val->type == YAML_SCALAR_NODE ?
	    value_text(e->val) : NULL;
	im->whole = v != NULL && strcmp(v, "false") == 0;
	free(v);
	buf_printf(&im->ini, "\n[flow:%s]\n", name);
	start = im->ini.len;
	for (i = 0; i < s->n; i++)
		put_entry(im, "flow", start, &s->v[i]);
}

static int
put_flows(struct imp *im, yaml_node_t *flows)
{
	yaml_node_item_t	*it;
	yaml_node_t		*f;
	struct section		 s = { NULL, 0 };
	int			 line, rc = 0;

	if (flows == NULL || is_null(flows)) {
		note(im, 0, NULL, "the file has no flows: add a [flow:NAME] "
		    "section");
		buf_printf(&im->notes, "%s: no flows: add a [flow:NAME] "
		    "section\n", im->path);
		return 0;
	}
	if (flows->type != YAML_SEQUENCE_NODE)
		return fail(im, (int)flows->start_mark.line + 1, "flows is not "
		    "a list");
	for (it = flows->data.sequence.items.start;
	    rc == 0 && it < flows->data.sequence.items.top; it++) {
		f = yaml_document_get_node(&im->doc, *it);
		line = (int)f->start_mark.line + 1;
		if (f->type != YAML_MAPPING_NODE)
			return fail(im, line, "an element of flows is not a "
			    "mapping of keys");
		rc = flatten(im, f, NULL, &s, NULL, 0);
		if (rc == 0)
			put_flow(im, &s, line);
		section_free(&s);
	}
	return rc;
}

/* --- the command ---------------------------------------------------------- */

static int
load(struct imp *im)
{
	yaml_parser_t	 parser;
	FILE		*fp;
	int		 rc = 0;

	fp = fopen(im->path, "r");
	if (fp == NULL)
		return fail(im, 0, "%s", strerror(errno));
	if (!yaml_parser_initialize(&parser))
		fatalx("yaml_parser_initialize: out of memory");
	yaml_parser_set_input_file(&parser, fp);
	if (!yaml_parser_load(&parser, &im->doc)) {
		fprintf(im->err, "%s:%zu:%zu: %s%s%s\n", im->path,
		    parser.problem_mark.line + 1,
		    parser.problem_mark.column + 1,
		    parser.context != NULL ? parser.context : "",
		    parser.context != NULL ? ": " : "",
		    parser.problem != NULL ? parser.problem : "invalid YAML");
		rc = -1;
	}
	yaml_parser_delete(&parser);
	fclose(fp);
	return rc;
}

static void
put_header(struct imp *im, FILE *out)
{
	struct buf	 b;

	buf_init(&b);
	buf_addstr(&b, "; agent.ini for disagent, made by disagent "
	    "--import-yml from\n");
	wrap(&b, im->path);
	buf_addstr(&b, "; What could not be carried over is in comments below "
	    "that say why.\n; Check the result with: disagent -t -c FILE\n");
	if (im->has_sk)
		buf_addstr(&b, "; It holds secrets: make it readable by the "
		    "agent only (chmod 600).\n");
	if (im->has_key)
		buf_addstr(&b, "; encrypt.key unlocks the encrypted values: "
		    "better move it to DIS_ENCRYPT_KEY\n;   or the systemd "
		    "credential encrypt.key.\n");
	buf_addc(&b, '\n');
	fputs(b.data, out);
	buf_cleanup(&b);
}

static int
convert(struct imp *im)
{
	yaml_node_t	*root, *flows = NULL;
	struct section	 top = { NULL, 0 };
	int		 rc;

	root = yaml_document_get_root_node(&im->doc);
	if (root == NULL)
		return fail(im, 0, "the file is empty");
	if (root->type != YAML_MAPPING_NODE)
		return fail(im, (int)root->start_mark.line + 1, "expected keys "
		    "such as region and flows at the top");
	rc = flatten(im, root, NULL, &top, &flows, 0);
	if (rc == 0) {
		put_agent(im, &top);
		rc = put_flows(im, flows);
	}
	section_free(&top);
	return rc;
}

int
importyml_main(const char *yml_path, FILE *out, FILE *err)
{
	struct imp	 im;
	size_t		 i;
	int		 rc;

	memset(&im, 0, sizeof(im));
	im.path = yml_path;
	im.err = err;
	buf_init(&im.ini);
	buf_init(&im.notes);
	rc = load(&im);
	if (rc == 0) {
		rc = convert(&im);
		yaml_document_delete(&im.doc);
	}
	if (rc == 0) {
		put_header(&im, out);
		fwrite(im.ini.data, 1, im.ini.len, out);
		if (im.notes.len > 0)
			fputs(im.notes.data, err);
		if (im.nskipped + im.ndropped > 0)
			fprintf(err, "%s: %zu key%s not carried over, %zu "
			    "dropped; each is a comment in the output\n",
			    yml_path, im.nskipped, im.nskipped == 1 ? "" : "s",
			    im.ndropped);
		rc = fflush(out) == 0 ? 0 : -1;
		if (rc != 0)
			fprintf(err, "disagent: writing the output: %s\n",
			    strerror(errno));
	}
	for (i = 0; i < im.nnames; i++)
		free(im.names[i]);
	free(im.names);
	buf_cleanup(&im.ini);
	buf_cleanup(&im.notes);
	return rc == 0 ? 0 : 1;
}
