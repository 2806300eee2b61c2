/*
 * One agent.yml key as agent.ini (importyml_int.h).  The rules table first
 * (keys dead in the DIS Agent, keys whose value here is what this agent
 * always does, keys with a better replacement, renamed keys), then conf's
 * key table: a key it knows is written when conf_key_check accepts the
 * value.  Everything else is a comment saying why and a note.  Secret
 * values never appear in a comment or message.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/util.h"
#include "conf/conf.h"
#include "conf/importyml_int.h"
#include "conf/ymlopts.h"

#define SHOW_MAX	60	/* value shown in a comment */
#define WRAP		76	/* columns of a comment line */
#define WORD_MAX	100	/* longer words are cut */

enum rule_kind {
	R_DEAD,		/* no effect in the DIS Agent either (arg: why) */
	R_SAME,		/* this agent always behaves as arg */
	R_SKIP,		/* not carried over; arg says what instead */
	R_INSTEAD,	/* a DIS Agent key with no equivalent: arg says what
			   disagent does instead */
	R_RENAME,	/* the same key, named arg in agent.ini */
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
	  "checkpoints: disagent keeps its own state file; disagent "
	  "import-state carries the positions over" },
	{ "agent", "records.retries", R_SKIP, NO_LIMIT },
	{ "agent", "exception.retries", R_SKIP, NO_LIMIT },
	{ "agent", "backoff.max.interval.ms", R_SKIP,
	  "set retryMaxBackoffMillis in each flow" },
	{ "agent", "PROXY_DOMAIN", R_SKIP, "for NTLM, write PROXY_USERNAME as "
	  "DOMAIN\\user" },
	{ "agent", "PROXY_WORKSTATION", R_SKIP, "libcurl sends this host's "
	  "name" },
	/* The DIS Agent's names of the SDK's per-record codec keys. */
	{ "agent", "dataEncryptEnabled", R_RENAME, "data.encrypt.enabled" },
	{ "agent", "dataPassword", R_RENAME, "data.password" },
	{ "flow", "sendingThreadSize", R_SKIP, "see maxInFlightRequests; "
	  "ordered = true sends one request at a time" },
	/*
	 * Keys the DIS Agent 1.2.4 reads but that do nothing there.
	 * maxSendingThreads (and maxSendingThreadsPerCore, which only makes
	 * its default: AgentConfiguration.java:150-158) sizes the pool of
	 * Agent.java:259-268, getSendingExecutor(AgentContext), which nothing
	 * calls: startUp (Agent.java:291) gives each flow the pool of
	 * AgentContext.java:110-118, sized by sendingThreadSize.
	 * waitOnFullRetryQueueMillis is named at FileFlow.java:56 and read
	 * nowhere; configProviderClass at AgentConfiguration.java:73, read
	 * nowhere, and AgentContext.java:262-263 removes the DIS SDK's own
	 * config.provider.class.
	 */
	{ "agent", "maxSendingThreads", R_DEAD, "each flow's senders are "
	  "sendingThreadSize threads" },
	{ "agent", "maxSendingThreadsPerCore", R_DEAD, "it only sets the "
	  "default of maxSendingThreads, which is unused" },
	{ "flow", "waitOnFullRetryQueueMillis", R_DEAD, "nothing reads it" },
	{ "agent", "configProviderClass", R_DEAD, "nothing reads it" },
	/* AgentConfiguration.java:71: the DIS Agent's name of the DIS SDK's
	 * body.serialize.type, which it sets from it (AgentContext.java:
	 * 264-267) over the top-level keys it hands the SDK as they are
	 * (AgentContext.java:218-231). */
	{ "agent", "bodySerializeType", R_RENAME, "body.serialize.type" },
	/* DIS Agent keys without an equivalent (FileFlow.java:40-163,
	 * AgentConfiguration.java:39-73 and the keys read there). */
	{ "flow", "resultLogLevel", R_INSTEAD, "each reply is logged as "
	  "\"Put N records to [STREAM] spend Tms\" at INFO, at WARN when "
	  "records failed; logLevel says what is logged" },
	{ "flow", "minTimeBetweenFilePollsMillis", R_INSTEAD, "reading is "
	  "event-driven; directories are listed again every "
	  "rescanIntervalMillis" },
	{ "flow", "publishQueueCapacity", R_INSTEAD, "no queue: a flow has "
	  "maxInFlightRequests requests out and all flows maxMemoryBytes of "
	  "records, then reading pauses" },
	{ "flow", "waitOnFullPublishQueueMillis", R_INSTEAD, "no queue: "
	  "reading pauses while maxInFlightRequests or maxMemoryBytes is "
	  "reached" },
	{ "flow", "waitOnEmptyPublishQueueMillis", R_INSTEAD, "no queue: "
	  "batches go when full or maxBufferAgeMillis old" },
	{ "flow", "truncatedRecordTerminator", R_INSTEAD, "a line over the "
	  "record limit is cut there and the rest of it skipped, with a "
	  "WARN" },
	{ "agent", "httpClientDefaultMaxPerRoute", R_INSTEAD, "connections "
	  "are reused from one pool; each flow has up to maxInFlightRequests "
	  "requests out" },
	{ "agent", "httpClientDefaultMaxTotal", R_INSTEAD, "connections are "
	  "reused from one pool; each flow has up to maxInFlightRequests "
	  "requests out" },
	{ "agent", "sendingThreadsKeepAliveMillis", R_INSTEAD, "no sender "
	  "threads: one event loop" },
	{ "agent", "sendingThreadsMaxQueueSize", R_INSTEAD, "no sender "
	  "threads: one event loop" },
	{ "agent", "log.maxBackupIndex", R_INSTEAD, "the log goes to standard "
	  "error, which the journal keeps and rotates" },
	{ "agent", "log.maxFileSize", R_INSTEAD, "the log goes to standard "
	  "error, which the journal keeps and rotates" },
	{ "agent", "log.emitMetrics", R_INSTEAD, "metricsFile writes the "
	  "metrics for Prometheus" },
	{ "agent", "log.emitInternalMetrics", R_INSTEAD, "metricsFile writes "
	  "the metrics for Prometheus" },
	{ "agent", "auth.type", R_INSTEAD, "requests are signed with ak and sk "
	  "(or the ECS metadata's temporary keys), never an IAM token" },
	{ "agent", "auth.token", R_INSTEAD, "requests are signed with ak and "
	  "sk (or the ECS metadata's temporary keys), never an IAM token" },
	{ "agent", "exception.retriable.error.code", R_INSTEAD, "every "
	  "request-level error is retried, by its cause" },
	{ "agent", "checkpoints.connectionTimeoutSeconds", R_INSTEAD, "the "
	  "state file is a JSON file, no database" },
	{ "agent", "checkpoints.queryTimeoutSeconds", R_INSTEAD, "the state "
	  "file is a JSON file, no database" },
};

/* Values never shown in a comment or message. */
static const char *const secret_keys[] = {
	"sk", "dataPassword", "data.password", "PROXY_PASSWORD", "auth.token",
	"security.token", "encrypt.key", NULL,
};

/* --- values --------------------------------------------------------------- */

static bool
in_list(const char *s, const char *const *list)
{
	for (; *list != NULL; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

bool
imp_is_null(const yaml_node_t *n)
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
char *
imp_value_text(const yaml_node_t *n)
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
	if (imp_is_null(n))
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
char *
imp_shown(const char *key, const char *v)
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
void
imp_wrap(struct buf *b, const char *text)
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
void PRINTFLIKE(4, 5)
imp_note(struct imp *im, int line, size_t *count, const char *fmt, ...)
{
	va_list	 ap;
	char	 text[1024];

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	imp_wrap(&im->ini, text);
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
		s = imp_shown(key, v);
		imp_note(im, line, &im->nskipped, "PROXY_PROTOCOL = %s was "
		    "http in the DIS Agent (only HTTPS means https there): "
		    "written as http", s);
		free(s);
		v = "http";
	}
	s = imp_shown(key, v);
	k = imp_shown("", key);
	other = strcmp(sect, "agent") == 0 ? "flow" : "agent";
	if (conf_key_check(sect, key, v, why, sizeof(why)) == 0) {
		if (emitted(&im->ini, start, key))
			imp_note(im, line, &im->nskipped, "not carried over: "
			    "%s = %s (already set above)", key, s);
		else if (!ini_safe(key, v))
			imp_note(im, line, &im->nskipped, "not carried over: "
			    "%s = %s (cannot be written in agent.ini)", key, s);
		else
			buf_printf(&im->ini, "%s = %s\n", key, v);
	} else if (conf_key_known(sect, key))
		imp_note(im, line, &im->nskipped, "not carried over: %s", why);
	else if (conf_key_known(other, key))
		imp_note(im, line, &im->nskipped, "not carried over: %s = %s "
		    "(it belongs in %s)", k, s, strcmp(other, "agent") == 0 ?
		    "[agent]" : "each [flow:NAME]");
	else if (strcmp(sect, "agent") == 0)
		imp_note(im, line, &im->nskipped, "not carried over: %s = %s "
		    "(unknown to disagent, and not a key the DIS Agent 1.2.4 "
		    "reads, though it hands top-level keys to the DIS SDK)", k,
		    s);
	else
		imp_note(im, line, &im->nskipped, "not carried over: %s = %s "
		    "(unknown to disagent, and not a key the DIS Agent 1.2.4 "
		    "reads)", k, s);
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

	w = imp_shown(e->key, want);
	imp_note(im, e->line, &im->nskipped, "not carried over: %s = %s (not "
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
			imp_note(im, o.v[i].line, &im->nskipped, "%s",
			    o.v[i].text);
	ymlopts_free(&o);
}

/*
 * fileComparator orders the files of a listing by mtime (SourceFile.java:
 * 72-81; NEWEST_FIRST by default, FileFlow.java:373-374).  Whole files:
 * disagent sends them oldest first, which is what NEWEST_FIRST does (the
 * DIS Agent works through its newest-first list from the end).  Tailed
 * files: with NEWEST_FIRST the DIS Agent reads a rotated file to its end
 * before the newer one, as disagent does, which reads them together.
 */
static void
put_comparator(struct imp *im, const struct entry *e, const char *v,
    const char *s)
{
	if (strcasecmp(v, "NEWEST_FIRST") != 0)
		put_other(im, e, s, "NEWEST_FIRST");
	else if (im->whole)
		imp_note(im, e->line, NULL, "same in disagent: %s = %s (whole "
		    "files are sent oldest first)", e->key, s);
	else
		imp_note(im, e->line, NULL, "same in disagent: %s = %s (every "
		    "file, a rotated one to its end, is read in order)",
		    e->key, s);
}

/*
 * ignoreNotUpdatedFileSeconds does something in the DIS Agent only with
 * ignoreNotUpdatedFileEnabled: true and directoryRecursionEnabled: true
 * (SourceFile.java:132, in the walk of SourceFile.java:99-102 that only a
 * recursive flow makes; defaults false and -1, FileFlow.java:367-369): a
 * file not modified for that long is not tracked at all until it is
 * written again, and then read from its start.  disagent reads such a file
 * from its end when it first sees it, so only lines added later are sent.
 */
static void
put_not_updated(struct imp *im, const struct entry *e, const char *v,
    const char *s)
{
	if (!im->ignore_enabled)
		imp_note(im, e->line, &im->ndropped, "dropped: %s = %s (no "
		    "effect in the DIS Agent either: only with "
		    "ignoreNotUpdatedFileEnabled: true)", e->key, s);
	else if (!im->recursive)
		imp_note(im, e->line, &im->ndropped, "dropped: %s = %s (no "
		    "effect in the DIS Agent either: only in flows with "
		    "directoryRecursionEnabled: true)", e->key, s);
	else if (im->whole)
		imp_note(im, e->line, &im->nskipped, "not carried over: %s = %s "
		    "(disagent sends every whole file, however old)", e->key,
		    s);
	else if (v[0] == '-' || strcmp(v, "0") == 0)
		imp_note(im, e->line, &im->ndropped, "dropped: %s = %s (no "
		    "effect in the DIS Agent either: only above 0)", e->key, s);
	else {
		put_key(im, "flow", im->flow_start, e->key, v, e->line);
		imp_note(im, e->line, &im->ndiffer, "differs: %s = %s: a file "
		    "not modified for that long is read from its end when "
		    "disagent first sees it (lines added later are sent); the "
		    "DIS Agent skips it until it is written again, then sends "
		    "it from its start", e->key, s);
	}
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
		imp_note(im, e->line, &im->ndropped, "dropped: %s = %s (no "
		    "effect in the DIS Agent either: only flows with "
		    "isFileAppendable = false clean up files)", e->key, s);
	else if (policy && strcasecmp(v, "immediate") == 0 &&
	    strcmp(v, "immediate") != 0)
		imp_note(im, e->line, &im->nskipped, "not carried over: %s = "
		    "%s (the DIS Agent deletes only for immediate in lower "
		    "case; this works as never there, and here)", e->key, s);
	else if (im->whole && strcmp(e->key, "initialPosition") == 0 &&
	    strcasecmp(v, "END_OF_FILE") == 0)
		imp_note(im, e->line, &im->nskipped, "not carried over: %s = "
		    "%s (whole files are always sent from their start)", e->key,
		    s);
	else if (strcmp(e->key, "fileComparator") == 0)
		put_comparator(im, e, v, s);
	else if (strcmp(e->key, "ignoreNotUpdatedFileEnabled") == 0)
		imp_note(im, e->line, NULL, "same in disagent: %s = %s (it "
		    "only switches ignoreNotUpdatedFileSeconds on or off)",
		    e->key, s);
	else if (strcmp(e->key, "ignoreNotUpdatedFileSeconds") == 0)
		put_not_updated(im, e, v, s);
	else
		return false;
	return true;
}

/* One entry of section sect; start is where the section's text begins. */
void
imp_put_entry(struct imp *im, const char *sect, size_t start,
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

	if (e->val->type != YAML_SCALAR_NODE || imp_is_null(e->val)) {
		s = imp_shown("", e->key);
		if (e->val->type != YAML_SCALAR_NODE)
			imp_note(im, e->line, &im->nskipped, "not carried "
			    "over: %s (a list, not a single value)", s);
		else
			imp_note(im, e->line, NULL, "empty: %s (the default "
			    "applies)", s);
		free(s);
		return;
	}
	v = imp_value_text(e->val);
	s = imp_shown(e->key, v);
	r = rule_find(sect, e->key);
	if (strcmp(sect, "flow") == 0 && put_mode_key(im, e, v, s)) {
		/* noted there */
	} else if (strcmp(sect, "agent") == 0 && im->serialize_renamed &&
	    strcmp(e->key, "body.serialize.type") == 0)
		/* The DIS Agent sets the SDK's key from its own name over a
		 * body.serialize.type of its own (AgentContext.java:264). */
		imp_note(im, e->line, &im->nskipped, "not carried over: %s = "
		    "%s (bodySerializeType replaces it in the DIS Agent)",
		    e->key, s);
	else if (r != NULL && r->kind == R_DEAD)
		imp_note(im, e->line, &im->ndropped, "dropped: %s = %s (no "
		    "effect in the DIS Agent either%s%s)", e->key, s,
		    r->arg != NULL ? ": " : "", r->arg != NULL ? r->arg : "");
	else if (r != NULL && r->kind == R_INSTEAD)
		imp_note(im, e->line, &im->nskipped, "not carried over: %s = "
		    "%s (a DIS Agent key disagent has no equivalent for: %s)",
		    e->key, s, r->arg);
	else if (r != NULL && r->kind == R_SAME && strcasecmp(v, r->arg) == 0)
		imp_note(im, e->line, NULL, "same in disagent: %s = %s",
		    e->key, s);
	else if (r != NULL && r->kind == R_SAME)
		put_other(im, e, s, r->arg);
	else if (r != NULL && r->kind == R_SKIP)
		imp_note(im, e->line, &im->nskipped, "not carried over: %s = "
		    "%s (%s)", e->key, s, r->arg);
	else if (r != NULL && r->kind == R_RENAME)
		put_key(im, sect, start, r->arg, v, e->line);
	else
		put_key(im, sect, start, e->key, v, e->line);
	free(s);
	free(v);
}
