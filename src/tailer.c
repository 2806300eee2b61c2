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
	free(t->path);
	free(t);
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

size_t
tailer_frame(const char *p, size_t n, uint64_t base, tailer_record_cb cb,
    void *arg, struct tailer *t)
{
	const char	*nl;
	size_t		 start = 0;

	while (start < n) {
		nl = memchr(p + start, '\n', n - start);
		if (nl == NULL)
			break;
		if (cb(arg, t, p + start, (size_t)(nl - (p + start)),
		    base + start, base + (uint64_t)(nl - p) + 1) != 0)
			break;
		start = (size_t)(nl - p) + 1;
	}
	return start;
}

/* Discard a runaway line's tail up to and including its newline. */
static long
skip_runaway(struct tailer *t, const char *p, size_t n)
{
	const char	*nl;

	nl = memchr(p, '\n', n);
	if (nl == NULL) {
		t->read_off += n;
		return (long)n;
	}
	t->skipping = false;
	t->read_off += (uint64_t)(nl - p) + 1;
	return (long)(nl - p) + 1;
}

long
tailer_read(struct tailer *t, struct buf *scratch, size_t max,
    size_t max_record, tailer_record_cb cb, void *arg)
{
	ssize_t		 n;
	size_t		 want, used;

	want = max;
	if (want < max_record + 1)
		want = max_record + 1;
	if (t->size > t->read_off && t->size - t->read_off < want)
		want = (size_t)(t->size - t->read_off);
	if (t->target > 0 && t->target > t->read_off &&
	    t->target - t->read_off < want)
		want = (size_t)(t->target - t->read_off);
	if (want == 0)
		return 0;
	buf_reset(scratch);
	buf_reserve(scratch, want);
	n = pread(t->fd, scratch->data, want, (off_t)t->read_off);
	if (n < 0)
		return -errno;
	if (n == 0)
		return 0;
	if (t->skipping)
		return skip_runaway(t, scratch->data, (size_t)n);
	used = tailer_frame(scratch->data, (size_t)n, t->read_off, cb, arg, t);
	if (used == 0 && (size_t)n > max_record) {
		/* No newline within a whole record: ship its head, skip the
		 * rest of the line (lessons R10). */
		if (cb(arg, t, scratch->data, max_record, t->read_off,
		    t->read_off + max_record) != 0)
			return 0;
		log_warn("%s: line longer than %zu bytes at offset %ju "
		    "truncated", t->path, max_record, (uintmax_t)t->read_off);
		t->read_off += max_record;
		t->skipping = true;
		return (long)max_record;
	}
	t->read_off += used;
	return (long)used;
}
