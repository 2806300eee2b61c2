/*
 * One entry of the state file (statefile.c tells the format): written as
 * a JSON object and read back into the table, its fields checked one by
 * one.  The version 2 file around the entries is statefile.c's.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/crc32.h"
#include "base/log.h"
#include "base/util.h"
#include "state/regtable.h"
#include "state/statefile.h"
#include "state/statefile_int.h"

/*
 * jansson refuses strings that are not UTF-8.  Paths are arbitrary bytes,
 * so such a string is stored with its non-ASCII bytes replaced by '?':
 * lossy, but the path is informational and the file stays loadable.
 */
json_t *
statefile_json_text(const char *s)
{
	json_t	*j;
	char	*copy, *p;

	j = json_string(s);
	if (j != NULL)
		return j;
	copy = xstrdup(s);
	for (p = copy; *p != '\0'; p++)
		if ((unsigned char)*p >= 0x80)
			*p = '?';
	j = json_string(copy);
	free(copy);
	if (j == NULL)
		fatalx("json_text: cannot encode string");
	return j;
}

static json_t *
spans_json(const struct reg_entry *e)
{
	json_t		*a, *p;
	uint32_t	 i;

	a = json_array();
	for (i = 0; i < reg_nacked(e); i++) {
		p = json_array();
		json_array_append_new(p,
		    json_integer((json_int_t)reg_acked(e)[i].start));
		json_array_append_new(p,
		    json_integer((json_int_t)reg_acked(e)[i].end));
		json_array_append_new(a, p);
	}
	return a;
}

static json_t *
spool_json(const struct reg_spool *sp)
{
	json_t	*o = json_object();

	json_object_set_new(o, "file", statefile_json_text(sp->file));
	json_object_set_new(o, "dev", json_integer((json_int_t)sp->dev));
	json_object_set_new(o, "ino", json_integer((json_int_t)sp->ino));
	return o;
}

json_t *
statefile_entry_json(const struct reg_entry *e)
{
	json_t	*o, *c;
	char	 fp[32];

	snprintf(fp, sizeof(fp), "crc32:%08" PRIx32 ":%" PRIu32, e->fp_crc,
	    e->fp_len);
	o = json_object();
	json_object_set_new(o, "flow", statefile_json_text(e->flow));
	json_object_set_new(o, "dev", json_integer((json_int_t)e->dev));
	json_object_set_new(o, "ino", json_integer((json_int_t)e->ino));
	json_object_set_new(o, "fingerprint", json_string(fp));
	json_object_set_new(o, "path", statefile_json_text(e->path));
	json_object_set_new(o, "offset", json_integer((json_int_t)e->offset));
	/* What a file gone while the agent was stopped had not delivered;
	 * entries made before sizes were kept have none. */
	if (e->size != 0)
		json_object_set_new(o, "size",
		    json_integer((json_int_t)e->size));
	json_object_set_new(o, "updated", json_integer(e->updated));
	if (reg_nacked(e) > 0)
		json_object_set_new(o, "acked", spans_json(e));
	if (reg_done(e) != NULL) {
		snprintf(fp, sizeof(fp), "crc32:%08" PRIx32 ":%" PRIu32,
		    reg_done(e)->tail_crc, reg_done(e)->tail_len);
		c = json_object();
		json_object_set_new(c, "mtime_ns",
		    json_integer((json_int_t)reg_done(e)->mtime_ns));
		json_object_set_new(c, "tail", json_string(fp));
		json_object_set_new(o, "complete", c);
	}
	if (reg_cursor(e) != NULL)
		json_object_set_new(o, "cursor", statefile_json_text(reg_cursor(e)));
	if (reg_spool(e) != NULL)
		json_object_set_new(o, "spool", spool_json(reg_spool(e)));
	return o;
}

/* A partition number as the header writes it: decimal, no sign. */
int32_t
statefile_part_number(const char *s)
{
	int64_t	 v = 0;
	size_t	 i, n = strlen(s);

	if (n == 0 || n > 9)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return (int32_t)v;
}

static bool
parse_hex(const char *s, size_t n, uint32_t *out)
{
	uint32_t	 v = 0;
	size_t		 i;
	int		 d;

	for (i = 0; i < n; i++) {
		if (s[i] >= '0' && s[i] <= '9')
			d = s[i] - '0';
		else if (s[i] >= 'a' && s[i] <= 'f')
			d = s[i] - 'a' + 10;
		else
			return false;
		v = v << 4 | (uint32_t)d;
	}
	*out = v;
	return true;
}

bool
statefile_hex32(const char *s, uint32_t *out)
{
	return s != NULL && strlen(s) == 8 && parse_hex(s, 8, out);
}

/* "crc32:<8 lowercase hex>:<decimal length>" */
static bool
parse_fingerprint(const char *s, uint32_t *crc, uint32_t *len)
{
	uint64_t	 v = 0;
	const char	*p;

	if (strncmp(s, "crc32:", 6) != 0 || strlen(s) < 16 || s[14] != ':')
		return false;
	if (!parse_hex(s + 6, 8, crc))
		return false;
	for (p = s + 15; *p != '\0'; p++) {
		if (*p < '0' || *p > '9' || p - s > 25)
			return false;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (p == s + 15 || v > UINT32_MAX)
		return false;
	*len = (uint32_t)v;
	return true;
}

const char *
statefile_get_str(json_t *o, const char *key)
{
	json_t	*j = json_object_get(o, key);

	return json_is_string(j) ? json_string_value(j) : NULL;
}

bool
statefile_get_int(json_t *o, const char *key, json_int_t *out)
{
	json_t	*j = json_object_get(o, key);

	if (!json_is_integer(j))
		return false;
	*out = json_integer_value(j);
	return true;
}

/*
 * The optional "complete" object of entry o into *d; *complete tells
 * whether there was one.  False when it is bad.
 */
static bool
parse_complete(json_t *o, struct reg_done *d, bool *complete)
{
	json_t		*c = json_object_get(o, "complete");
	const char	*tail;
	json_int_t	 mtime;

	*complete = false;
	if (c == NULL)
		return true;
	tail = statefile_get_str(c, "tail");
	if (!json_is_object(c) || !statefile_get_int(c, "mtime_ns", &mtime) ||
	    tail == NULL || !parse_fingerprint(tail, &d->tail_crc,
	    &d->tail_len))
		return false;
	d->mtime_ns = (int64_t)mtime;
	*complete = true;
	return true;
}

/*
 * The optional "acked" array of entry o (offset off) into *spans (new) and
 * *n: pairs [start, end], start < end, sorted, disjoint, each ending after
 * off.  False when it is bad.
 */
static bool
parse_acked(json_t *o, json_int_t off, struct reg_span **spans, size_t *n)
{
	json_t		*a = json_object_get(o, "acked"), *p;
	json_int_t	 lo, hi, prev = off;
	size_t		 i;

	*spans = NULL;
	*n = 0;
	if (a == NULL)
		return true;
	if (!json_is_array(a) || json_array_size(a) > REG_MAX_SPANS)
		return false;
	if (json_array_size(a) > 0)
		*spans = xcalloc(json_array_size(a), sizeof(**spans));
	for (i = 0; i < json_array_size(a); i++) {
		p = json_array_get(a, i);
		if (!json_is_array(p) || json_array_size(p) != 2 ||
		    !json_is_integer(json_array_get(p, 0)) ||
		    !json_is_integer(json_array_get(p, 1)))
			goto bad;
		lo = json_integer_value(json_array_get(p, 0));
		hi = json_integer_value(json_array_get(p, 1));
		if (lo >= hi || hi <= off || (i > 0 && lo < prev))
			goto bad;
		prev = hi;
		(*spans)[i].start = (uint64_t)lo;
		(*spans)[i].end = (uint64_t)hi;
	}
	*n = i;
	return true;
bad:
	free(*spans);
	*spans = NULL;
	return false;
}

/*
 * The optional "spool" object of entry o: a new reg_spool into *out, or
 * NULL when there is none.  False when it is bad.
 */
static bool
parse_spool(json_t *o, struct reg_spool **out)
{
	json_t		*j = json_object_get(o, "spool");
	const char	*file;
	json_int_t	 dev, ino;

	*out = NULL;
	if (j == NULL)
		return true;
	file = statefile_get_str(j, "file");
	if (!json_is_object(j) || file == NULL || *file != '/' ||
	    !statefile_get_int(j, "dev", &dev) || !statefile_get_int(j, "ino", &ino))
		return false;
	*out = xcalloc(1, sizeof(**out));
	(*out)->file = xstrdup(file);
	(*out)->dev = (uint64_t)dev;
	(*out)->ino = (uint64_t)ino;
	return true;
}

const char *
statefile_entry(json_t *o, struct reg_table *t)
{
	struct reg_done	 done = { 0 };
	struct reg_spool *spool;
	struct reg_entry *e;
	struct reg_rare	*r;
	bool		 complete;
	const char	*flow, *path, *fp, *cursor;
	json_int_t	 dev, ino, off, upd, size = 0;
	uint32_t	 fcrc, flen;
	struct reg_span	*spans;
	size_t		 nspans;

	flow = statefile_get_str(o, "flow");
	path = statefile_get_str(o, "path");
	fp = statefile_get_str(o, "fingerprint");
	if (!json_is_object(o) || flow == NULL || *flow == '\0' ||
	    path == NULL || fp == NULL || !statefile_get_int(o, "dev", &dev) ||
	    !statefile_get_int(o, "ino", &ino) || !statefile_get_int(o, "offset", &off) ||
	    !statefile_get_int(o, "updated", &upd))
		return "missing field or wrong type";
	if (!parse_fingerprint(fp, &fcrc, &flen))
		return "bad fingerprint";
	if (json_object_get(o, "size") != NULL &&
	    (!statefile_get_int(o, "size", &size) || size < off))
		return "bad size";
	if (!parse_complete(o, &done, &complete))
		return "bad complete";
	cursor = statefile_get_str(o, "cursor");
	if (json_object_get(o, "cursor") != NULL &&
	    (cursor == NULL || *cursor == '\0'))
		return "bad cursor";
	if (!parse_spool(o, &spool))
		return "bad spool";
	if (regtable_find(t, flow, (uint64_t)dev, (uint64_t)ino) != NULL) {
		reg_spool_free(spool);
		return "duplicate entry";
	}
	if (!parse_acked(o, off, &spans, &nspans)) {
		reg_spool_free(spool);
		return "bad acked";
	}
	e = regtable_add(t, flow, (uint64_t)dev, (uint64_t)ino);
	e->path = rstr_new(path);
	e->fp_crc = fcrc;
	e->fp_len = flen;
	e->offset = (uint64_t)off;
	e->size = (uint64_t)size;
	e->updated = upd;
	if (complete || nspans > 0 || cursor != NULL || spool != NULL) {
		r = reg_rare_of(e);
		if (complete) {
			r->done = xmalloc(sizeof(*r->done));
			*r->done = done;
		}
		r->acked = spans;
		r->nacked = (uint32_t)nspans;
		if (cursor != NULL)
			r->cursor = xstrdup(cursor);
		r->spool = spool;
	}
	return NULL;
}
