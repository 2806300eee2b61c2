/*
 * A tailer's reads (tailer.h): bounded reads into the flow's read window,
 * framed from read_off; the last line without its delimiter and a pending
 * multi-line record given up to quiet.  The read offset only ever lands
 * just after a delimiter, so a partial last line is re-read (not
 * buffered) until its newline arrives.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/escape.h"
#include "base/log.h"
#include "base/util.h"
#include "tail/tailer.h"
#include "tail/tailer_int.h"
#include "tail/watermark.h"
#include "tail/zsource.h"

/* The most bytes one read may need: at least one record and its delimiter,
 * not past the size last seen nor the --once target. */
static size_t
want_bytes(const struct tailer *t, size_t max, size_t max_record)
{
	size_t	 want = MAX(max, max_record + 1);

	if (t->size > t->read_off && t->size - t->read_off < want)
		want = (size_t)(t->size - t->read_off);
	if (t->target > t->read_off && t->target - t->read_off < want)
		want = (size_t)(t->target - t->read_off);
	return t->size > t->read_off ? want : 0;
}

void
readbuf_init(struct readbuf *rb)
{
	memset(rb, 0, sizeof(*rb));
	buf_init(&rb->b);
}

void
readbuf_cleanup(struct readbuf *rb)
{
	buf_cleanup(&rb->b);
}

void
readbuf_forget(struct readbuf *rb)
{
	rb->owner = 0;
	rb->epoch = 0;
	buf_reset(&rb->b);
}

/* pread len bytes of t at off into dst; bytes read or -errno. */
static ssize_t
read_at(struct tailer *t, char *dst, size_t len, uint64_t off)
{
	ssize_t	 n;

	if (ZSRC(t) != NULL)
		return zsource_pread(t->rare->z, dst, len, off);
	do
		n = pread(t->fd, dst, len, (off_t)off);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

/*
 * Bytes of t from read_off, when the file has them: from the window if it
 * holds a whole record (or the rest of the file), else read.  A read takes
 * chunk bytes, and only when they hold no delimiter grows to want (one
 * record and its delimiter), so the window is as large as the longest line
 * needs, not as the record limit.  Returns the number available at *p (at
 * most want), or -errno.
 */
static ssize_t
window(struct tailer *t, struct readbuf *rb, size_t chunk, size_t want,
    int delim, const char **p)
{
	uint64_t	 end = rb->off + rb->b.len, have;
	ssize_t		 n, more;

	if (rb->owner == t->id && rb->epoch == EPOCH(t) &&
	    rb->off <= t->read_off && t->read_off < end) {
		have = end - t->read_off;
		/* Enough for a full record, the rest of the file, or at
		 * least one whole record: frame from the window; read
		 * again only for what it cannot hold. */
		if (have >= want || end >= t->size || (delim >= 0 &&
		    memchr(rb->b.data + (t->read_off - rb->off), delim,
		    (size_t)have) != NULL)) {
			*p = rb->b.data + (t->read_off - rb->off);
			return (ssize_t)MIN(have, (uint64_t)want);
		}
	}
	rb->owner = 0;
	buf_reset(&rb->b);
	chunk = MIN(chunk, want);
	buf_reserve_exact(&rb->b, chunk);
	n = read_at(t, rb->b.data, chunk, t->read_off);
	if (n < 0)
		return n;
	buf_added(&rb->b, (size_t)n);
	if ((size_t)n == chunk && chunk < want && delim >= 0 &&
	    memchr(rb->b.data, delim, (size_t)n) == NULL) {
		/* A line longer than a chunk: read the rest of a record. */
		buf_reserve_exact(&rb->b, want - chunk);
		more = read_at(t, rb->b.data + n, want - chunk,
		    t->read_off + (uint64_t)n);
		if (more < 0)
			return more;
		buf_added(&rb->b, (size_t)more);
	}
	rb->owner = t->id;
	rb->epoch = EPOCH(t);
	rb->off = t->read_off;
	*p = rb->b.data;
	return (ssize_t)rb->b.len;
}

long
tailer_read(struct tailer *t, struct framer *fr, struct readbuf *rb,
    size_t max, size_t max_record, framer_cb cb, void *arg,
    struct tailer_read *out)
{
	struct framer_state tmp, *fs;
	const char	*p;
	ssize_t		 n;
	size_t		 used, want;
	uint64_t	 cut, bad, joined;
	char		*esc;
	bool		 skipping, skips;

	memset(out, 0, sizeof(*out));
	want = want_bytes(t, max, max_record);
	if (want == 0 || t->fd < 0)
		return 0;
	n = window(t, rb, max, want, framer_delim(fr), &p);
	if (n <= 0)
		return (long)n;
	fs = tailer_fs_get(t, &tmp);
	cut = fs->truncated;
	bad = fs->malformed;
	joined = fs->joined;
	skipping = fs->skipping;
	used = framer_feed(fr, fs, p, (size_t)n, t->read_off, max_record,
	    cb, arg);
	out->truncated = fs->truncated - cut;
	out->malformed = fs->malformed - bad;
	out->joined = fs->joined - joined;
	skips = fs->skipping;
	tailer_fs_put(t, fs, &tmp);
	if (out->truncated > 0)
		log_warn("%s: record longer than %zu bytes near offset %ju "
		    "truncated", t->path, max_record, (uintmax_t)t->read_off);
	if (out->malformed > 0 && !t->warned_bad) {
		/* Once a file: a runtime that writes another format writes
		 * it on every line. */
		t->warned_bad = true;
		esc = esc_new(t->path);
		log_warn("%s: a line near offset %ju is in no container log "
		    "format: sent as it is (so are the next such lines of "
		    "this file, counted)", esc, (uintmax_t)t->read_off);
		free(esc);
	}
	t->read_off += used;
	if (used > 0)
		t->active_ms = mono_ms();
	/* The tail of a cut line is done once its delimiter is read:
	 * commit past it, so a restart does not start inside the line. */
	if ((skipping || out->truncated > 0) && !skips)
		out->committed = wm_skip_to(&t->wm, t->read_off);
	return (long)used;
}

static int
read_last(struct tailer *t, struct framer *fr, struct readbuf *rb,
    size_t max_record, framer_cb cb, void *arg)
{
	struct framer_state tmp, *fs;
	const char	*p;
	ssize_t		 n;
	size_t		 want;
	int		 rc;

	want = want_bytes(t, max_record, max_record);
	if (want == 0 || t->fd < 0)
		return 0;
	want = MIN(want, max_record);
	n = window(t, rb, want, want, -1, &p);
	if (n <= 0)
		return (int)n;
	fs = tailer_fs_get(t, &tmp);
	rc = framer_feed_last(fr, fs, p, (size_t)n, t->read_off,
	    max_record, cb, arg);
	tailer_fs_put(t, fs, &tmp);
	if (rc == 0)
		t->read_off += (uint64_t)n;
	return rc;
}

/*
 * Whole lines wait past read_off: a pending multi-line record may go on in
 * them, so it is not quiet, however long the flow holds the file back (its
 * requests in flight, lessons R3) before reading on.
 */
static bool
more_to_read(const struct tailer *t)
{
	return tailer_readable(t) && !t->stalled;
}

/* A multi-line record waits for its end (or for quiet). */
static bool
pending(const struct tailer *t)
{
	return t->rare != NULL && t->rare->framing &&
	    framer_pending(&t->rare->fs);
}

bool
tailer_waits_for_quiet(const struct tailer *t, bool miss_last)
{
	return t->fd >= 0 && !more_to_read(t) && (pending(t) ||
	    (miss_last && t->stalled && t->read_off < t->size));
}

int
tailer_flush_quiet(struct tailer *t, struct framer *fr, struct readbuf *rb,
    size_t max_record, uint64_t now, const struct tailer_quiet *q,
    framer_cb cb, void *arg)
{
	uint64_t	 quiet = now - t->active_ms;
	int		 rc;

	if (q->miss_last && t->stalled && t->read_off < t->size &&
	    (now == 0 || quiet >= q->last_ms)) {
		rc = read_last(t, fr, rb, max_record, cb, arg);
		if (rc != 0)
			return rc;
	}
	if (pending(t) && !more_to_read(t) &&
	    (now == 0 || quiet >= q->flush_ms)) {
		rc = framer_flush(fr, &t->rare->fs, cb, arg);
		tailer_fs_put(t, &t->rare->fs, NULL);
		return rc;
	}
	return 0;
}
