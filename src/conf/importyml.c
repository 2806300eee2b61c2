/*
 * agent.yml (the DIS Agent's configuration) -> agent.ini.  libyaml's
 * document API loads the whole file (it is small); the top-level mapping
 * gives [agent], each element of its "flows" list a [flow:NAME].  Nested
 * mappings are flattened to dotted keys ("body: {compress: ...}" is the same
 * as "body.compress..."), which is how the DIS Agent names them anyway.
 *
 * Each key goes through importyml_put.c: its rules table, then conf's key
 * table.  What does not come across is a comment saying why, and a
 * "FILE:LINE:" note on err, so the operator sees it.  The output is built in memory and written
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

#include "base/log.h"
#include "base/util.h"
#include "conf/conf.h"
#include "conf/importyml.h"
#include "conf/importyml_int.h"

#define MAX_DEPTH	8	/* nested mappings under one key */
#define MAX_KEYS	1000	/* keys of one section, flattened */
#define MAX_TOTAL_KEYS	20000	/* keys of all sections */
#define FLOW_NAME_MAX	64
#define NAME_CHARS	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" \
			"0123456789_.-"

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

static int
add_entry(struct imp *im, struct section *s, const char *key,
    yaml_node_t *val, int line)
{
	char	*k;
	size_t	 i;

	for (i = 0; i < s->n; i++) {
		if (strcmp(s->v[i].key, key) != 0)
			continue;
		k = imp_shown("", key);
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
	const struct entry *cp = entry_find(s, "checkpointFile");
	size_t	 i, start;

	if (cp != NULL && cp->val->type == YAML_SCALAR_NODE)
		im->checkpoint = imp_value_text(cp->val);

	buf_addstr(&im->ini, "[agent]\n");
	start = im->ini.len;
	im->serialize_renamed = entry_find(s, "bodySerializeType") != NULL;
	for (i = 0; i < s->n; i++)
		imp_put_entry(im, "agent", start, &s->v[i]);
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

/* Whether the boolean key of s is set, and to want ("true", "false"). */
static bool
flow_bool(const struct section *s, const char *key, const char *want)
{
	const struct entry	*e = entry_find(s, key);
	char			*v;
	bool			 yes;

	v = e != NULL && e->val->type == YAML_SCALAR_NODE ?
	    imp_value_text(e->val) : NULL;
	yes = v != NULL && strcmp(v, want) == 0;
	free(v);
	return yes;
}

/*
 * The DIS Agent followed every symbolic link; disagent's default
 * (followSymlinks = owner) follows only a link owned by root or by the
 * owner of what it leads to.  The safe default is kept, with a comment in
 * each flow and one line on err: a link it refuses is named by a WARN, and
 * always is one line away (ChangeLog, 2026-12-07).
 */
static void
put_links(struct imp *im, int line)
{
	static const char why[] = "the DIS Agent followed every symbolic "
	    "link; disagent follows a link only when root or the owner of "
	    "what it leads to owns it, and skips any other with a WARN "
	    "naming it (followSymlinks = owner). followSymlinks = always "
	    "follows every link, as the DIS Agent did";

	imp_note(im, line, NULL, "differs: %s", why);
	buf_addstr(&im->ini, ";followSymlinks = always\n");
	if (im->links_noted)
		return;
	im->links_noted = true;
	buf_printf(&im->notes, "%s:%d: differs: %s\n", im->path, line, why);
}

static void
put_flow(struct imp *im, const struct section *s, int line)
{
	const char	*stream, *obs;
	char		*name, *shown_obs;
	size_t		 i, start;

	stream = stream_of(s, "DISStream");
	if (stream == NULL)
		stream = stream_of(s, "streamId");
	if (stream == NULL) {
		obs = stream_of(s, "OBSStream");
		buf_addc(&im->ini, '\n');
		if (obs == NULL) {
			imp_note(im, line, &im->nskipped, "not carried over: "
			    "the flow at line %d (it has no DISStream)", line);
			return;
		}
		shown_obs = imp_shown("OBSStream", obs);
		imp_note(im, line, &im->nskipped, "not carried over: the flow "
		    "at line %d with OBSStream = %s (uploading files to OBS is "
		    "not supported)", line, shown_obs);
		free(shown_obs);
		return;
	}
	name = flow_name(im, stream);
	im->whole = flow_bool(s, "isFileAppendable", "false");
	im->ignore_enabled = flow_bool(s, "ignoreNotUpdatedFileEnabled",
	    "true");
	im->recursive = flow_bool(s, "directoryRecursionEnabled", "true");
	buf_printf(&im->ini, "\n[flow:%s]\n", name);
	start = im->flow_start = im->ini.len;
	for (i = 0; i < s->n; i++)
		imp_put_entry(im, "flow", start, &s->v[i]);
	put_links(im, line);
}

static int
put_flows(struct imp *im, yaml_node_t *flows)
{
	yaml_node_item_t	*it;
	yaml_node_t		*f;
	struct section		 s = { NULL, 0 };
	int			 line, rc = 0;

	if (flows == NULL || imp_is_null(flows)) {
		imp_note(im, 0, NULL, "the file has no flows: add a "
		    "[flow:NAME] section");
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
	imp_wrap(&b, im->path);
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

char *
importyml_checkpoint_path(const char *yml_path, const char *checkpoint,
    const char **how)
{
	char	*abs, *slash, *home = NULL, *path;
	size_t	 n;

	*how = "";
	if (checkpoint != NULL && checkpoint[0] == '/')
		return xstrdup(checkpoint);
	abs = realpath(yml_path, NULL);
	if (abs == NULL)
		abs = xstrdup(yml_path);
	/* .../conf/agent.yml: the start script runs the agent in "...". */
	slash = strrchr(abs, '/');
	if (slash != NULL) {
		*slash = '\0';
		n = strlen(abs);
		if (n >= 5 && strcmp(abs + n - 5, "/conf") == 0)
			home = xstrndup(abs, n - 5);
	}
	path = xasprintf("%s/%s", home != NULL ? home : "DIS-AGENT-DIR",
	    checkpoint != NULL ? checkpoint : "conf/dis-agent_since.db");
	if (home == NULL)
		*how = checkpoint != NULL ? " (DIS-AGENT-DIR: the directory "
		    "the DIS Agent runs in)" : " (DIS-AGENT-DIR: the directory "
		    "the DIS Agent runs in; dis-agent is its -n name, NAME_since"
		    ".db for another, since.db from older releases)";
	else if (checkpoint == NULL)
		*how = " (for the -n name dis-agent: NAME_since.db for "
		    "another, since.db from older releases)";
	free(home);
	free(abs);
	return path;
}

/* What to run next, on err: the DIS Agent's positions into the state. */
static void
put_next_step(const struct imp *im)
{
	const char	*how;
	char		*db;

	db = importyml_checkpoint_path(im->path, im->checkpoint, &how);
	fprintf(im->err, "%s: next, with the DIS Agent stopped and before "
	    "disagent first starts, carry its positions over (no line lost "
	    "or sent twice): disagent import-state -c %s %s%s\n", im->path,
	    SYSCONFDIR_AGENT_INI, db, how);
	free(db);
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
		if (im.nskipped + im.ndropped + im.ndiffer > 0)
			fprintf(err, "%s: %zu key%s not carried over, %zu "
			    "dropped%s; each is a comment in the output\n",
			    yml_path, im.nskipped, im.nskipped == 1 ? "" : "s",
			    im.ndropped, im.ndiffer > 0 ?
			    ", and keys carried with another meaning" : "");
		put_next_step(&im);
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
	free(im.checkpoint);
	return rc == 0 ? 0 : 1;
}
