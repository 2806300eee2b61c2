/*
 * Reading version 1 of the state file, the JSON document releases before
 * issue 11 wrote, so an upgrade resumes every file (the next save writes
 * version 2):
 *
 *   {"version": 1, "crc32": "0a1b2c3d", "files": [
 *   {"flow":"app","dev":2049,"ino":131074,...},
 *   {"flow":"app","dev":2049,"ino":131075,...}
 *   ]}
 *
 * The crc32 covers the compact serialisation of "files" ("[" e1 "," e2 ...
 * "]").  Those releases wrote one entry a line, as above, so that layout
 * is read a line at a time, one entry's tree at a time: a tree of the
 * whole document costs several times the file's size (15 MB for 10,000
 * entries), at start, when everything else is being set up too.  Any other
 * layout (a file edited by hand) is read as one document, and so is a file
 * the line reader refuses, so that the verdict on a file and the reason
 * logged are always the whole document's.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "base/crc32.h"
#include "base/util.h"
#include "state/regtable.h"
#include "state/statefile.h"

#define V1_HEAD		"{\"version\": 1, \"crc32\": \""
#define V1_FILES	"\", \"files\": [\n"
#define V1_END		"]}\n"

/* What the elements of "files" read so far add up to. */
struct v1 {
	struct reg_table *t;
	uint32_t	  crc;
	size_t		  n;
};

static int
crc_cb(const char *p, size_t n, void *arg)
{
	uint32_t *crc = arg;

	*crc = crc32_update(*crc, p, n);
	return 0;
}

static void
v1_init(struct v1 *s, struct reg_table *t)
{
	s->t = t;
	s->crc = crc32_of("[", 1);
	s->n = 0;
}

/* One element of "files": its compact text into the crc, it into t. */
static const char *
v1_entry(struct v1 *s, json_t *o)
{
	if (s->n++ > 0)
		s->crc = crc32_update(s->crc, ",", 1);
	json_dump_callback(o, crc_cb, &s->crc, JSON_COMPACT);
	return statefile_entry(o, s->t);
}

static bool
v1_crc_ok(struct v1 *s, uint32_t stored)
{
	s->crc = crc32_update(s->crc, "]", 1);
	return (uint32_t)s->crc == stored;
}

/* One "{...}," or "{...}" line (n bytes, no '\n'); false when it is not. */
static bool
by_lines_entry(struct v1 *s, const char *p, size_t n, bool *last)
{
	json_t	*o;
	bool	 ok;

	*last = n == 0 || p[n - 1] != ',';
	o = json_loadb(p, *last ? n : n - 1, JSON_REJECT_DUPLICATES, NULL);
	ok = o != NULL && v1_entry(s, o) == NULL;
	json_decref(o);
	return ok;
}

/* The file as the writer laid it out, into t; false when it is not. */
static bool
by_lines(const char *text, size_t len, struct reg_table *t)
{
	const char	*p = text, *end = text + len, *nl;
	struct v1	 s;
	uint32_t	 stored;
	char		 hex[9];
	bool		 last = false;

	if (len < strlen(V1_HEAD) + 8 + strlen(V1_FILES) ||
	    memcmp(p, V1_HEAD, strlen(V1_HEAD)) != 0)
		return false;
	p += strlen(V1_HEAD);
	memcpy(hex, p, 8);
	hex[8] = '\0';
	p += 8;
	if (!statefile_hex32(hex, &stored) ||
	    memcmp(p, V1_FILES, strlen(V1_FILES)) != 0)
		return false;
	p += strlen(V1_FILES);
	v1_init(&s, t);
	while (!last) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL || !by_lines_entry(&s, p, (size_t)(nl - p),
		    &last))
			return false;
		p = nl + 1;
	}
	if ((size_t)(end - p) != strlen(V1_END) ||
	    memcmp(p, V1_END, strlen(V1_END)) != 0)
		return false;
	return v1_crc_ok(&s, stored);
}

static int
bad(char *why, size_t whylen, const char *what)
{
	snprintf(why, whylen, "%s", what);
	return -EBADMSG;
}

/* The document root (borrowed) into t. */
static int
whole_root(json_t *root, struct reg_table *t, char *why, size_t whylen)
{
	json_t		*version, *files, *o;
	struct v1	 s;
	const char	*reason;
	uint32_t	 stored;
	size_t		 i;

	if (!json_is_object(root))
		return bad(why, whylen, "not a JSON object");
	version = json_object_get(root, "version");
	if (!json_is_integer(version))
		return bad(why, whylen, "no version");
	if (json_integer_value(version) != 1) {
		snprintf(why, whylen, "unsupported version %"
		    JSON_INTEGER_FORMAT, json_integer_value(version));
		return -EBADMSG;
	}
	files = json_object_get(root, "files");
	if (!statefile_hex32(json_string_value(json_object_get(root,
	    "crc32")), &stored) || !json_is_array(files))
		return bad(why, whylen, "missing or malformed crc32 or files");
	v1_init(&s, t);
	json_array_foreach(files, i, o) {
		reason = v1_entry(&s, o);
		if (reason != NULL) {
			snprintf(why, whylen, "files[%zu]: %s", i, reason);
			return -EBADMSG;
		}
	}
	if (!v1_crc_ok(&s, stored)) {
		snprintf(why, whylen, "crc32 mismatch (stored %08" PRIx32
		    ", computed %08lx)", stored, (unsigned long)s.crc);
		return -EBADMSG;
	}
	return 0;
}

static int
whole(const char *text, size_t len, struct reg_table *t, char *why,
    size_t whylen)
{
	json_error_t	 jerr;
	json_t		*root;
	int		 r;

	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL) {
		snprintf(why, whylen, "at byte %d: %s", jerr.position,
		    jerr.text);
		return -EBADMSG;
	}
	r = whole_root(root, t, why, whylen);
	json_decref(root);
	return r;
}

int
statefile_v1_parse(const char *text, size_t len, struct reg_table *t,
    char *why, size_t whylen)
{
	if (by_lines(text, len, t))
		return 0;
	regtable_cleanup(t);
	regtable_init(t);
	return whole(text, len, t, why, whylen);
}
