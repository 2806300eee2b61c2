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

struct tailer *
tailer_open(const char *path, const struct stat *st, uint64_t offset)
{
	struct tailer	*t;
	int		 fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return NULL;
	t = xcalloc(1, sizeof(*t));
	t->path = xstrdup(path);
	t->fd = fd;
	t->dev = (uint64_t)st->st_dev;
	t->ino = (uint64_t)st->st_ino;
	t->size = (uint64_t)st->st_size;
	t->read_off = offset;
	t->fp_len = (uint32_t)MIN((uint64_t)TAILER_FP_MAX, t->size);
	if (tailer_fingerprint(fd, t->fp_len, &t->fp_crc) != 0) {
		t->fp_len = 0;
		t->fp_crc = (uint32_t)crc32(0L, Z_NULL, 0);
	}
	wm_init(&t->wm, offset);
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

int
tailer_fingerprint(int fd, uint32_t len, uint32_t *crc)
{
	unsigned char	 head[TAILER_FP_MAX];
	ssize_t		 n;

	if (len > sizeof(head))
		len = sizeof(head);
	n = len ? pread(fd, head, len, 0) : 0;
	if (n < 0 || (size_t)n != len)
		return -1;
	*crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), head, len);
	return 0;
}

void
tailer_refresh_fingerprint(struct tailer *t)
{
	uint32_t	 len, crc;

	if (t->fp_len >= TAILER_FP_MAX || t->size <= t->fp_len)
		return;
	len = (uint32_t)MIN((uint64_t)TAILER_FP_MAX, t->size);
	if (tailer_fingerprint(t->fd, len, &crc) == 0) {
		t->fp_len = len;
		t->fp_crc = crc;
	}
}

bool
tailer_poll(struct tailer *t, bool *truncated)
{
	struct stat	 st;

	*truncated = false;
	if (fstat(t->fd, &st) != 0)
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
