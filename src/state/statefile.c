/*
 * The state file, version 2: JSON Lines.  The first line is a header,
 *
 *   {"version":2,"crc32":"0a1b2c3d","entries":2}
 *   {"flow":"app","dev":2049,"ino":131074,"fingerprint":"crc32:...:512",...}
 *   {"flow":"app","dev":2049,"ino":131075,...}
 *
 * and every other line one entry, compact, ended by '\n'.  An entry of a
 * whole file that is delivered and waits for its cleanup also has
 * "complete":{"mtime_ns":N,"tail":"crc32:...:512"}; the entry of a spool
 * file (the unread rest of a file deleted while open, copied at a stop)
 * has "spool":{"file":"/var/lib/disagent/spool/...","dev":N,"ino":N}, the
 * spool file's path and the original's identity.  An entry may also have
 * "acked":[[START,END],...], the acknowledged bytes past the offset
 * (sorted, disjoint, each ending after it), and the header
 * "run":{"clean":B,"saved_ms":N,"land_by_ms":N,"started_ms":N,
 * "seq":{"STREAM":{"P":N}}}, how the run that wrote the file ended, since
 * when its requests went out (optional) and, per stream and partition, the
 * last sequence number it saw acknowledged before the records the entries
 * do not account for (registry.h, struct reg_run).  A file without these
 * optional fields (all files written before they existed) loads as
 * before, and releases before them ignore "acked" and "run" (unknown keys,
 * and the header outside the crc32).  The entry of a journal
 * flow (source = journal) has dev and ino 0, the path "journal:" and the
 * directory or "system", and "cursor":"s=...", the sd-journal cursor of
 * its last committed entry: a release that does not know the field loads
 * it as the entry of a file no scan finds.
 * The header may also have "flows":{"NAME":{"stream":S,"pattern":P}},
 * what each flow with entries read, so that a flow renamed with the same
 * stream and pattern carries its positions on (outside the crc32 too; a
 * damaged one is ignored: it can only cost a resend).
 * The crc32 covers every byte after the header line and the header counts
 * the entries, so a torn write (a prefix of the file), a flipped byte or a
 * lost line is caught before any entry is believed.  Each line is parsed
 * by jansson on its own and its tree freed once its entry is in the table:
 * loading holds the file, the table and one entry's tree, whatever the
 * number of entries.
 * Unsigned 64-bit fields are stored as their two's complement int64 so a
 * value above INT64_MAX (possible for an inode number) survives.  The
 * first line tells the versions apart; version 1 is read by
 * statefile_v1.c, one entry both ways by stateentry.c; in state/,
 * jansson is used only in these three.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "base/atomicfile.h"
#include "base/crc32.h"
#include "base/log.h"
#include "base/util.h"
#include "state/regtable.h"
#include "state/statefile.h"
#include "state/statefile_int.h"

#define STATE_MAX_BYTES	(64u * 1024 * 1024)	/* cap on what load reads */
/* Cap on a line: far above any entry the agent writes (a flow name of at
 * most 49 bytes and a path it could open, escaped), and it bounds the
 * tree one line can build. */
#define ENTRY_MAX_BYTES	(1024u * 1024)
#define V2_HEAD		"{\"version\":2,\"crc32\":\""

/* --- version 2 --------------------------------------------------------- */

static int
buf_cb(const char *p, size_t n, void *arg)
{
	buf_add(arg, p, n);
	return 0;
}

static json_t *
run_json(const struct reg_run *run)
{
	json_t	*o, *seq, *st;
	size_t	 i, j;
	char	 part[16];

	o = json_object();
	json_object_set_new(o, "clean", json_boolean(run->clean));
	json_object_set_new(o, "saved_ms", json_integer(run->saved_ms));
	json_object_set_new(o, "land_by_ms", json_integer(run->land_by_ms));
	if (run->started_ms > 0)
		json_object_set_new(o, "started_ms",
		    json_integer(run->started_ms));
	seq = json_object();
	for (i = 0; i < run->nstreams; i++) {
		st = json_object();
		for (j = 0; j < run->streams[i].n; j++) {
			snprintf(part, sizeof(part), "%" PRId32,
			    run->streams[i].seq[j].part);
			json_object_set_new(st, part,
			    json_integer(run->streams[i].seq[j].last));
		}
		json_object_set_new(seq, run->streams[i].name, st);
	}
	json_object_set_new(o, "seq", seq);
	return o;
}

/* ,"run":{...} of run (NULL: nothing) appended to the header line. */
static void
run_header(const struct reg_run *run, struct buf *line)
{
	json_t	*o;
	size_t	 len = line->len;

	if (run == NULL)
		return;
	o = run_json(run);
	buf_addstr(line, ",\"run\":");
	json_dump_callback(o, buf_cb, line, JSON_COMPACT);
	json_decref(o);
	if (line->len + 2 > ENTRY_MAX_BYTES) {
		/* Far more partitions than DIS has: without it a crash
		 * resends what was in flight, as before. */
		log_warn("state file: the run information does not fit the "
		    "header line; left out");
		buf_setlen(line, len);
	}
}

/* ,"flows":{...} appended to the header line: the descriptions of the
 * flows that have entries (v, sorted by flow). */
static void
flows_header(const struct reg_table *t, struct reg_entry **v,
    struct buf *line)
{
	const struct reg_flowdesc *d;
	json_t	*o = NULL, *f;
	size_t	 i, len = line->len;

	for (i = 0; i < t->n; i++) {
		if (i > 0 && v[i]->flow == v[i - 1]->flow)
			continue;	/* (names are the table's, shared) */
		d = regtable_desc(t, v[i]->flow);
		if (d == NULL)
			continue;
		if (o == NULL)
			o = json_object();
		f = json_object();
		json_object_set_new(f, "stream", statefile_json_text(d->stream));
		json_object_set_new(f, "pattern", statefile_json_text(d->pattern));
		json_object_set_new(o, d->name, f);
	}
	if (o == NULL)
		return;
	buf_addstr(line, ",\"flows\":");
	json_dump_callback(o, buf_cb, line, JSON_COMPACT);
	json_decref(o);
	if (line->len + 2 > ENTRY_MAX_BYTES)
		buf_setlen(line, len);	/* only renames need it */
}

/* The header's optional "flows" into t; what is malformed is left out. */
static void
parse_flows(json_t *h, struct reg_table *t)
{
	json_t		*o = json_object_get(h, "flows"), *v;
	const char	*k, *stream, *pattern;

	if (!json_is_object(o))
		return;
	json_object_foreach(o, k, v) {
		stream = statefile_get_str(v, "stream");
		pattern = statefile_get_str(v, "pattern");
		if (stream != NULL && pattern != NULL)
			regtable_describe(t, k, stream, pattern);
	}
}

int
statefile_write(struct atomicfile *af, const struct reg_table *t)
{
	struct reg_entry	**v;
	struct buf		  line;
	json_t			 *o;
	uint32_t		  crc = CRC32_INIT;
	char			  head[96], hex[9];
	size_t			  i;
	int			  r;

	v = regtable_sorted(t);
	buf_init(&line);
	/* The crc is known at the end: written over the zeros then. */
	snprintf(head, sizeof(head), V2_HEAD "00000000\",\"entries\":%zu",
	    t->n);
	buf_addstr(&line, head);
	run_header(t->run, &line);
	flows_header(t, v, &line);
	buf_addstr(&line, "}\n");
	r = atomicfile_write(af, line.data, line.len);
	for (i = 0; r == 0 && i < t->n; i++) {
		buf_reset(&line);
		o = statefile_entry_json(v[i]);
		json_dump_callback(o, buf_cb, &line, JSON_COMPACT);
		json_decref(o);
		buf_addc(&line, '\n');
		if (line.len > ENTRY_MAX_BYTES)
			r = atomicfile_fail(af, "encode an entry for",
			    -EMSGSIZE);
		crc = crc32_update(crc, line.data, line.len);
		if (r == 0)
			r = atomicfile_write(af, line.data, line.len);
	}
	if (r == 0) {
		snprintf(hex, sizeof(hex), "%08lx", (unsigned long)crc);
		r = atomicfile_pwrite(af, strlen(V2_HEAD), hex, 8);
	}
	buf_cleanup(&line);
	free(v);
	return r;
}

/* One stream of the header's "seq" into st; false when it is bad. */
static bool
parse_stream(const char *name, json_t *o, struct reg_stream *st)
{
	const char	*k;
	json_t		*v;
	int32_t		 part;

	if (!json_is_object(o) || *name == '\0')
		return false;
	st->name = xstrdup(name);
	json_object_foreach(o, k, v) {
		part = statefile_part_number(k);
		if (part < 0 || !json_is_integer(v) ||
		    json_integer_value(v) < -1)
			return false;
		reg_stream_put(st, part, (int64_t)json_integer_value(v));
	}
	return true;
}

/*
 * The header's optional "run" into *out (new; NULL when absent).  False
 * when it is there but malformed.
 */
static bool
parse_run(json_t *h, struct reg_run **out)
{
	json_t		*o = json_object_get(h, "run"), *seq, *v;
	json_t		*clean;
	struct reg_run	*run;
	const char	*k;
	json_int_t	 saved, land, started = 0;

	*out = NULL;
	if (o == NULL)
		return true;
	clean = json_object_get(o, "clean");
	seq = json_object_get(o, "seq");
	if (!json_is_object(o) || !json_is_boolean(clean) ||
	    !statefile_get_int(o, "saved_ms", &saved) ||
	    !statefile_get_int(o, "land_by_ms", &land) || !json_is_object(seq) ||
	    (json_object_get(o, "started_ms") != NULL &&
	    !statefile_get_int(o, "started_ms", &started)))
		return false;
	run = xcalloc(1, sizeof(*run));
	run->clean = json_is_true(clean);
	run->saved_ms = (int64_t)saved;
	run->land_by_ms = (int64_t)land;
	run->started_ms = (int64_t)started;
	run->streams = xcalloc(json_object_size(seq) + 1,
	    sizeof(*run->streams));
	json_object_foreach(seq, k, v) {
		if (!parse_stream(k, v, &run->streams[run->nstreams++])) {
			reg_run_free(run);
			return false;
		}
	}
	*out = run;
	return true;
}

/* The crc32 and entry count the header h (a parsed first line) holds. */
static bool
v2_header(json_t *h, uint32_t *crc, json_int_t *count)
{
	return statefile_hex32(statefile_get_str(h, "crc32"), crc) &&
	    statefile_get_int(h, "entries", count) && *count >= 0;
}

/* One entry line (without its '\n') into t; NULL or why not. */
static const char *
v2_line(const char *p, size_t n, struct reg_table *t, char *err,
    size_t errlen)
{
	json_error_t	 jerr;
	json_t		*o;
	const char	*why;

	if (n > ENTRY_MAX_BYTES) {
		snprintf(err, errlen, "longer than %u bytes", ENTRY_MAX_BYTES);
		return err;
	}
	o = json_loadb(p, n, JSON_REJECT_DUPLICATES, &jerr);
	if (o == NULL) {
		snprintf(err, errlen, "%s", jerr.text);
		return err;
	}
	why = statefile_entry(o, t);
	json_decref(o);
	return why;
}

/*
 * The lines after the header (body, n bytes) into t, checked against the
 * header h first.  0 or -EBADMSG with why filled in.
 */
static int
parse_v2(json_t *h, const char *body, size_t n, struct reg_table *t,
    char *why, size_t whylen)
{
	const char	*p = body, *end = body + n, *nl, *bad;
	json_int_t	 want;
	uint32_t	 stored;
	uint32_t	 crc;
	size_t		 line, count = 0;
	char		 err[160];

	if (!v2_header(h, &stored, &want)) {
		snprintf(why, whylen, "malformed header line");
		return -EBADMSG;
	}
	crc = crc32_of(body, n);
	if (crc != stored) {
		snprintf(why, whylen, "crc32 mismatch (stored %08" PRIx32
		    ", computed %08lx)", stored, (unsigned long)crc);
		return -EBADMSG;
	}
	for (line = 2; p < end; line++, count++) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			bad = "no end of line";
		else
			bad = v2_line(p, (size_t)(nl - p), t, err, sizeof(err));
		if (bad != NULL) {
			snprintf(why, whylen, "line %zu: %s", line, bad);
			return -EBADMSG;
		}
		p = nl + 1;
	}
	if ((uint64_t)want != count) {
		snprintf(why, whylen, "%zu entries, the header says %"
		    JSON_INTEGER_FORMAT, count, want);
		return -EBADMSG;
	}
	if (!parse_run(h, &t->run)) {
		snprintf(why, whylen, "malformed run in the header line");
		return -EBADMSG;
	}
	parse_flows(h, t);
	return 0;
}

/* --- reading ----------------------------------------------------------- */

/*
 * The version the first line (n bytes) declares: 2 for a version 2 header
 * (its parsed object into *h, new), else the integer "version" of a JSON
 * object on that line, else 1 (a version 1 document spans lines).
 */
static json_int_t
first_line_version(const char *text, size_t n, json_t **h)
{
	json_int_t	 v = 1;

	*h = NULL;
	if (n <= ENTRY_MAX_BYTES)
		*h = json_loadb(text, n, JSON_REJECT_DUPLICATES, NULL);
	if (!statefile_get_int(*h, "version", &v))
		v = 1;
	return v;
}

static int
parse_state(const char *text, size_t len, struct reg_table *t,
    int *version, char *why, size_t whylen)
{
	const char	*nl;
	json_t		*h;
	json_int_t	 v;
	size_t		 n;
	int		 r;

	if (len == 0) {
		snprintf(why, whylen, "empty file");
		return -EBADMSG;
	}
	nl = memchr(text, '\n', len);
	n = nl != NULL ? (size_t)(nl - text) : len;
	v = first_line_version(text, n, &h);
	if (v == 2 && nl != NULL)
		r = parse_v2(h, nl + 1, len - n - 1, t, why, whylen);
	else if (v == 2) {
		snprintf(why, whylen, "no end of line after the header");
		r = -EBADMSG;
	} else if (v == 1)
		r = statefile_v1_parse(text, len, t, why, whylen);
	else {
		snprintf(why, whylen, "unsupported version %"
		    JSON_INTEGER_FORMAT, v);
		r = -EBADMSG;
	}
	json_decref(h);
	if (r == 0)
		*version = (int)v;
	return r;
}

/* Whole file into out; 0 or a negative errno (-EFBIG past the cap). */
static int
read_file(const char *path, struct buf *out)
{
	struct stat	 st;
	char		 chunk[65536];
	ssize_t		 n;
	int		 fd, r = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return -errno;
	/* Room for the file as it is now, not the next power of two. */
	if (fstat(fd, &st) == 0 && st.st_size > 0 &&
	    (uint64_t)st.st_size <= STATE_MAX_BYTES)
		buf_reserve_exact(out, (size_t)st.st_size);
	for (;;) {
		n = read(fd, chunk, sizeof(chunk));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n == 0 ? 0 : -errno;
			break;
		}
		if (out->len + (size_t)n > STATE_MAX_BYTES) {
			r = -EFBIG;
			break;
		}
		buf_add(out, chunk, (size_t)n);
	}
	close(fd);
	return r;
}

int
statefile_read(const char *path, struct reg_table *t, int *version)
{
	struct buf	 b;
	char		 why[256];
	int		 r;

	regtable_cleanup(t);
	regtable_init(t);
	*version = 0;
	buf_init(&b);
	r = read_file(path, &b);
	if (r == -EFBIG) {
		snprintf(why, sizeof(why), "larger than %u bytes",
		    STATE_MAX_BYTES);
		r = -EBADMSG;
	} else if (r == 0)
		r = parse_state(b.data, b.len, t, version, why, sizeof(why));
	else if (r != -ENOENT)
		log_error("cannot read state file %s: %s", path, strerror(-r));
	if (r == -EBADMSG) {
		log_error("state file %s is corrupt: %s", path, why);
		regtable_cleanup(t);
		regtable_init(t);
	}
	buf_cleanup(&b);
	return r;
}
