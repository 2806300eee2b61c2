/*
 * File tailing: identity, fingerprint, bounded reads and line framing.
 * The read offset only ever lands just after a '\n', so a partial last line
 * is re-read (not buffered) until its newline arrives; nothing about a file
 * lives only in memory.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "log.h"
#include "tailer.h"

static uint64_t	next_id;

static void
fingerprint_now(struct tailer *t)
{
	t->fp_len = (uint32_t)MIN((uint64_t)t->fp_max, t->size);
	if (tailer_fingerprint(t->fd, t->fp_len, &t->fp_crc) != 0) {
		t->fp_len = 0;
		t->fp_crc = (uint32_t)crc32(0L, Z_NULL, 0);
	}
}

struct tailer *
tailer_new_parked(const char *path, const struct stat *st, uint64_t offset,
    uint32_t fp_max)
{
	struct tailer	*t;

	t = xcalloc(1, sizeof(*t));
	t->id = ++next_id;
	t->path = xstrdup(path);
	t->fd = -1;
	t->dev = (uint64_t)st->st_dev;
	t->ino = (uint64_t)st->st_ino;
	t->size = (uint64_t)st->st_size;
	t->read_off = offset;
	t->fp_max = fp_max;
	t->fp_crc = (uint32_t)crc32(0L, Z_NULL, 0);
	wm_init(&t->wm, offset);
	return t;
}

struct tailer *
tailer_open(const char *path, const struct stat *st, uint64_t offset,
    uint32_t fp_max)
{
	struct tailer	*t;
	int		 fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	t = tailer_new_parked(path, st, offset, fp_max);
	t->fd = fd;
	fingerprint_now(t);
	return t;
}

void
tailer_free(struct tailer *t)
{
	if (t == NULL)
		return;
	if (t->fd >= 0)
		close(t->fd);
	wm_cleanup(&t->wm);
	framer_state_cleanup(&t->fs);
	free(t->path);
	free(t);
}

void
tailer_trim(struct tailer *t)
{
	/* wm_cleanup frees the ring and keeps the committed offset and the
	 * next range id: the watermark stays usable, and grows a ring
	 * again with its next range. */
	if (wm_pending(&t->wm) == 0)
		wm_cleanup(&t->wm);
}

void
tailer_park(struct tailer *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
}

int
tailer_reopen(struct tailer *t)
{
	struct stat	 st;
	uint32_t	 crc;
	int		 fd;

	fd = open(t->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0 || (uint64_t)st.st_dev != t->dev ||
	    (uint64_t)st.st_ino != t->ino)
		goto stale;
	if (t->fp_len > 0 && (tailer_fingerprint(fd, t->fp_len, &crc) != 0 ||
	    crc != t->fp_crc))
		goto stale;
	t->fd = fd;
	t->size = (uint64_t)st.st_size;
	if (t->fp_len == 0)
		fingerprint_now(t);
	return 0;
stale:
	close(fd);
	return -ESTALE;
}

int
tailer_fingerprint(int fd, uint32_t len, uint32_t *crc)
{
	unsigned char	 chunk[4096];
	uLong		 c = crc32(0L, Z_NULL, 0);
	uint32_t	 done = 0, want;
	ssize_t		 n;

	while (done < len) {
		want = MIN(len - done, (uint32_t)sizeof(chunk));
		n = pread(fd, chunk, want, (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		c = crc32(c, chunk, (uInt)n);
		done += (uint32_t)n;
	}
	*crc = (uint32_t)c;
	return 0;
}

void
tailer_refresh_fingerprint(struct tailer *t)
{
	uint32_t	 len, crc;

	if (t->fd < 0 || t->fp_len >= t->fp_max || t->size <= t->fp_len)
		return;
	len = (uint32_t)MIN((uint64_t)t->fp_max, t->size);
	if (tailer_fingerprint(t->fd, len, &crc) == 0) {
		t->fp_len = len;
		t->fp_crc = crc;
	}
}

bool
tailer_head_changed(struct tailer *t)
{
	uint32_t	 crc;

	if (t->fd < 0 || t->fp_len == 0)
		return false;
	if (tailer_fingerprint(t->fd, t->fp_len, &crc) != 0)
		return true;	/* shorter than its old head */
	return crc != t->fp_crc;
}

bool
tailer_poll(struct tailer *t, bool *truncated)
{
	struct stat	 st;

	*truncated = false;
	if (t->fd < 0 || fstat(t->fd, &st) != 0)
		return false;
	t->size = (uint64_t)st.st_size;
	if (t->size < t->read_off) {
		*truncated = true;
		return false;
	}
	return t->size > t->read_off;
}

/* The most bytes one read may need: at least one record and its delimiter,
 * not past the size last seen nor the --once target. */
static size_t
want_bytes(const struct tailer *t, size_t max, size_t max_record)
{
	size_t	 want = MAX(max, max_record + 1);

	if (t->size > t->read_off && t->size - t->read_off < want)
		want = (size_t)(t->size - t->read_off);
	if (t->target > 0 && t->target > t->read_off &&
	    t->target - t->read_off < want)
		want = (size_t)(t->target - t->read_off);
	return t->size > t->read_off ? want : 0;
}

void
readbuf_forget(struct readbuf *rb)
{
	rb->owner = 0;
	buf_reset(&rb->b);
}

/* pread len bytes of t at off into dst; bytes read or -errno. */
static ssize_t
read_at(struct tailer *t, char *dst, size_t len, uint64_t off)
{
	ssize_t	 n;

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

	if (rb->owner == t->id && rb->off <= t->read_off && t->read_off < end) {
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
	rb->b.len = (size_t)n;
	if ((size_t)n == chunk && chunk < want && delim >= 0 &&
	    memchr(rb->b.data, delim, (size_t)n) == NULL) {
		/* A line longer than a chunk: read the rest of a record. */
		buf_reserve_exact(&rb->b, want - chunk);
		more = read_at(t, rb->b.data + n, want - chunk,
		    t->read_off + (uint64_t)n);
		if (more < 0)
			return more;
		rb->b.len += (size_t)more;
	}
	rb->b.data[rb->b.len] = '\0';
	rb->owner = t->id;
	rb->off = t->read_off;
	*p = rb->b.data;
	return (ssize_t)rb->b.len;
}

long
tailer_read(struct tailer *t, struct framer *fr, struct readbuf *rb,
    size_t max, size_t max_record, framer_cb cb, void *arg)
{
	const char	*p;
	ssize_t		 n;
	size_t		 used, want;
	uint64_t	 cut = t->fs.truncated;

	want = want_bytes(t, max, max_record);
	if (want == 0 || t->fd < 0)
		return 0;
	n = window(t, rb, max, want, framer_delim(fr), &p);
	if (n <= 0)
		return (long)n;
	used = framer_feed(fr, &t->fs, p, (size_t)n, t->read_off,
	    max_record, cb, arg);
	if (t->fs.truncated != cut)
		log_warn("%s: record longer than %zu bytes near offset %ju "
		    "truncated", t->path, max_record, (uintmax_t)t->read_off);
	t->read_off += used;
	return (long)used;
}

int
tailer_read_last(struct tailer *t, struct framer *fr, struct readbuf *rb,
    size_t max_record, framer_cb cb, void *arg)
{
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
	rc = framer_feed_last(fr, &t->fs, p, (size_t)n, t->read_off,
	    max_record, cb, arg);
	if (rc == 0)
		t->read_off += (uint64_t)n;
	return rc;
}
