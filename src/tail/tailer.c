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

#include "base/crc32.h"
#include "base/log.h"
#include "base/pool.h"
#include "tail/linkrule.h"
#include "tail/skipplan.h"
#include "tail/tailer.h"
#include "tail/watermark.h"
#include "tail/zsource.h"

/*
 * What few files need, out of line: a restarted file's epoch, a compressed
 * file's decompressor, a restart's skip plan, and the framing state while
 * it is not idle (a header to skip, a multi-line record pending, the tail
 * of a cut line being discarded).
 */
struct tailer_rare {
	uint64_t	 epoch;		/* restarts from 0 so far */
	struct zsource	*z;		/* a compressed file: read through it */
	struct skipplan	*plan;		/* what a restart skips, or NULL */
	bool		 framing;	/* fs is in use (else idle) */
	struct framer_state fs;		/* records across reads */
};

/* One per tracked file, idle ones included: keep it small. */
struct tailer {
	uint64_t	 id;		/* unique in the process */
	char		*path;		/* last path it was seen at */
	uint64_t	 dev;
	uint64_t	 ino;
	uint64_t	 read_off;	/* next byte to frame */
	uint64_t	 size;		/* size at the last fstat */
	uint64_t	 target;	/* --once: stop at this size (or MAX) */
	uint64_t	 active_ms;	/* last time it had bytes to read */
	struct watermark wm;		/* committed = wm.committed */
	struct tailer_rare *rare;	/* NULL for nearly every file */
	int		 fd;		/* -1: parked (closed, see maxOpenFiles) */
	uint32_t	 fp_crc;	/* crc32 of the first fp_len bytes */
	uint32_t	 fp_max : 31;	/* headerBytesLength */
	bool		 stalled : 1;	/* nothing to frame until it grows */
	uint32_t	 fp_len;
};

/* The epoch of a tailer without a rare part, and the idle framing state. */
#define EPOCH(t)	((t)->rare != NULL ? (t)->rare->epoch : 0)
#define ZSRC(t)		((t)->rare != NULL ? (t)->rare->z : NULL)
#define PLAN(t)		((t)->rare != NULL ? (t)->rare->plan : NULL)

static struct tailer_rare *
rare(struct tailer *t)
{
	if (t->rare == NULL)
		t->rare = xcalloc(1, sizeof(*t->rare));
	return t->rare;
}

/* Free the rare part once it holds nothing. */
static void
rare_drop_if_empty(struct tailer *t)
{
	struct tailer_rare *r = t->rare;

	if (r != NULL && r->epoch == 0 && r->z == NULL && r->plan == NULL &&
	    !r->framing) {
		free(r);
		t->rare = NULL;
	}
}

/* Whether st carries nothing across reads (its counters aside). */
static bool
framing_idle(const struct framer_state *st)
{
	return st->pending == NULL && !st->has_pending && !st->skipping &&
	    st->header_left == 0;
}

/*
 * The framing state to feed: the rare part's, or *tmp, idle, for the
 * nearly every file that has none.  fs_put keeps a state that is no longer
 * idle and lets go of one that is.
 */
static struct framer_state *
fs_get(struct tailer *t, struct framer_state *tmp)
{
	if (t->rare != NULL && t->rare->framing)
		return &t->rare->fs;
	memset(tmp, 0, sizeof(*tmp));
	return tmp;
}

static void
fs_put(struct tailer *t, struct framer_state *st, struct framer_state *tmp)
{
	if (st == tmp) {
		if (framing_idle(tmp))
			return;
		rare(t)->fs = *tmp;
		t->rare->framing = true;
	} else if (framing_idle(st)) {
		t->rare->framing = false;
		rare_drop_if_empty(t);
	}
}

/* A fresh framing state (at the start of the file: from_start). */
static void
fs_reset(struct tailer *t, const struct framer *fr, bool from_start)
{
	struct framer_state tmp;

	if (t->rare != NULL && t->rare->framing) {
		framer_state_cleanup(&t->rare->fs);
		t->rare->framing = false;
	}
	framer_state_init(&tmp, fr, from_start);
	fs_put(t, &tmp, &tmp);
	rare_drop_if_empty(t);
}

static uint64_t	next_id;
static struct pool tailers = POOL_INITIALIZER(struct tailer);

static void
fingerprint_now(struct tailer *t)
{
	t->fp_len = (uint32_t)MIN((uint64_t)t->fp_max, t->size);
	if (tailer_fingerprint(t->fd, t->fp_len, &t->fp_crc) != 0) {
		t->fp_len = 0;
		t->fp_crc = CRC32_INIT;
	}
}

struct tailer *
tailer_new_parked(const char *path, const struct stat *st, uint64_t offset,
    uint32_t fp_max, const struct framer *fr)
{
	struct tailer	*t;

	t = pool_alloc(&tailers);
	t->id = ++next_id;
	t->path = rstr_new(path);
	t->fd = -1;
	t->dev = (uint64_t)st->st_dev;
	t->ino = (uint64_t)st->st_ino;
	t->size = (uint64_t)st->st_size;
	t->read_off = offset;
	t->fp_max = fp_max;
	t->fp_crc = CRC32_INIT;
	t->active_ms = mono_ms();
	t->target = UINT64_MAX;
	wm_init(&t->wm, offset);
	fs_reset(t, fr, offset == 0);
	return t;
}

struct tailer *
tailer_open_fd(int fd, const char *path, const struct stat *st,
    uint64_t offset, uint32_t fp_max, const struct framer *fr)
{
	struct tailer	*t;

	t = tailer_new_parked(path, st, offset, fp_max, fr);
	t->fd = fd;
	fingerprint_now(t);
	return t;
}

struct tailer *
tailer_open(const char *path, const struct stat *st, uint64_t offset,
    uint32_t fp_max, const struct framer *fr)
{
	int		 fd;

	fd = linkrule_open(path, st);
	if (fd < 0)
		return NULL;
	return tailer_open_fd(fd, path, st, offset, fp_max, fr);
}

int
tailer_take_fd(struct tailer *t)
{
	int	 fd = t->fd;

	if (ZSRC(t) != NULL)
		return -1;	/* its reads go through the decompressor */
	t->fd = -1;
	return fd;
}

/* crc32 of the first len decompressed bytes of z's file; 0 or -1. */
static int
zhead_crc(int fd, enum zkind kind, uint32_t len, uint32_t *crc)
{
	char	*head;
	ssize_t	 n;

	head = xmalloc(len ? len : 1);
	n = zsource_head(fd, kind, head, len);
	if (n == (ssize_t)len)
		*crc = crc32_of(head, len);
	free(head);
	return n == (ssize_t)len ? 0 : -1;
}

struct tailer *
tailer_open_compressed(const char *path, const struct stat *st,
    uint64_t offset, uint32_t fp_max, const struct framer *fr)
{
	struct tailer	*t;
	struct zsource	*z;
	enum zkind	 kind;
	uint64_t	 size;
	int		 fd, rc;

	fd = linkrule_open(path, st);
	if (fd < 0)
		return NULL;
	kind = zsource_kind(fd);
	z = kind == ZKIND_NONE ? NULL : zsource_new(fd, kind, SIZE_MAX);
	rc = z == NULL ? -EPROTONOSUPPORT : zsource_size(z, &size);
	if (rc != 0) {
		zsource_free(z);
		close(fd);
		errno = -rc;
		return NULL;
	}
	t = tailer_new_parked(path, st, offset, fp_max, fr);
	t->fd = fd;
	rare(t)->z = z;
	t->size = size;
	t->fp_len = (uint32_t)MIN((uint64_t)fp_max, size);
	if (zhead_crc(fd, kind, t->fp_len, &t->fp_crc) != 0)
		t->fp_len = 0;
	return t;
}

int
tailer_head_crc(const char *path, uint32_t len, uint32_t *crc)
{
	enum zkind	 kind;
	int		 fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -1;
	kind = zsource_name_compressed(path) ? zsource_kind(fd) : ZKIND_NONE;
	rc = kind == ZKIND_NONE ? tailer_fingerprint(fd, len, crc) :
	    zhead_crc(fd, kind, len, crc);
	close(fd);
	return rc;
}

bool
tailer_compressed(const struct tailer *t)
{
	return ZSRC(t) != NULL;
}

void
tailer_free(struct tailer *t)
{
	if (t == NULL)
		return;
	if (t->rare != NULL) {
		zsource_free(t->rare->z);
		skipplan_free(t->rare->plan);
		if (t->rare->framing)
			framer_state_cleanup(&t->rare->fs);
		free(t->rare);
	}
	if (t->fd >= 0)
		close(t->fd);
	wm_cleanup(&t->wm);
	rstr_free(t->path);
	pool_free(&tailers, t);
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
	if (ZSRC(t) != NULL)
		return;		/* reopening would decompress it again */
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
	t->stalled = false;
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
	return tailer_fingerprint_at(fd, 0, len, crc);
}

int
tailer_fingerprint_at(int fd, uint64_t off, uint32_t len, uint32_t *crc)
{
	unsigned char	 chunk[4096];
	uint32_t	 c = CRC32_INIT;
	uint32_t	 done = 0, want;
	ssize_t		 n;

	while (done < len) {
		want = MIN(len - done, (uint32_t)sizeof(chunk));
		n = pread(fd, chunk, want, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		c = crc32_update(c, chunk, (size_t)n);
		done += (uint32_t)n;
	}
	*crc = c;
	return 0;
}

void
tailer_refresh_fingerprint(struct tailer *t)
{
	uint32_t	 len, crc;

	if (t->fd < 0 || ZSRC(t) != NULL || t->fp_len >= t->fp_max ||
	    t->size <= t->fp_len)
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

	if (t->fd < 0 || t->fp_len == 0 || ZSRC(t) != NULL)
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
	if (ZSRC(t) != NULL)	/* its size is the decompressed one */
		return t->size > t->read_off;
	if (t->fd < 0 || fstat(t->fd, &st) != 0)
		return false;
	if ((uint64_t)st.st_size != t->size) {
		t->stalled = false;
		t->active_ms = mono_ms();
	}
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
	uint64_t	 cut;
	bool		 skipping, skips;

	memset(out, 0, sizeof(*out));
	want = want_bytes(t, max, max_record);
	if (want == 0 || t->fd < 0)
		return 0;
	n = window(t, rb, max, want, framer_delim(fr), &p);
	if (n <= 0)
		return (long)n;
	fs = fs_get(t, &tmp);
	cut = fs->truncated;
	skipping = fs->skipping;
	used = framer_feed(fr, fs, p, (size_t)n, t->read_off, max_record,
	    cb, arg);
	out->truncated = fs->truncated - cut;
	skips = fs->skipping;
	fs_put(t, fs, &tmp);
	if (out->truncated > 0)
		log_warn("%s: record longer than %zu bytes near offset %ju "
		    "truncated", t->path, max_record, (uintmax_t)t->read_off);
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
	fs = fs_get(t, &tmp);
	rc = framer_feed_last(fr, fs, p, (size_t)n, t->read_off,
	    max_record, cb, arg);
	fs_put(t, fs, &tmp);
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
		fs_put(t, &t->rare->fs, NULL);
		return rc;
	}
	return 0;
}

/* --- small accessors ---------------------------------------------------- */

uint64_t
tailer_id(const struct tailer *t)
{
	return t->id;
}

const char *
tailer_path(const struct tailer *t)
{
	return t->path;
}

void
tailer_rename(struct tailer *t, const char *path)
{
	char	*old = t->path;

	if (strcmp(old, path) == 0)
		return;
	t->path = rstr_new(path);
	rstr_free(old);
}

uint64_t
tailer_dev(const struct tailer *t)
{
	return t->dev;
}

uint64_t
tailer_ino(const struct tailer *t)
{
	return t->ino;
}

bool
tailer_is(const struct tailer *t, uint64_t dev, uint64_t ino)
{
	return t->dev == dev && t->ino == ino;
}

void
tailer_head(const struct tailer *t, uint32_t *crc, uint32_t *len)
{
	*crc = t->fp_crc;
	*len = t->fp_len;
}

int
tailer_fd(const struct tailer *t)
{
	return t->fd;
}

bool
tailer_is_open(const struct tailer *t)
{
	return t->fd >= 0;
}

int
tailer_byte_before(const struct tailer *t, uint64_t offset)
{
	unsigned char	 c;

	if (offset == 0 || t->fd < 0)
		return -1;
	if (ZSRC(t) != NULL)
		return zsource_pread(t->rare->z, &c, 1, offset - 1) == 1 ?
		    c : -1;
	if (pread(t->fd, &c, 1, (off_t)offset - 1) != 1)
		return -1;
	return c;
}

void
tailer_skip_line(struct tailer *t)
{
	struct framer_state tmp, *fs = fs_get(t, &tmp);

	framer_state_skip_line(fs);
	fs_put(t, fs, &tmp);
}

uint64_t
tailer_size(const struct tailer *t)
{
	return t->size;
}

void
tailer_set_size(struct tailer *t, uint64_t size)
{
	t->size = size;
}

uint64_t
tailer_read_off(const struct tailer *t)
{
	return t->read_off;
}

uint64_t
tailer_committed(const struct tailer *t)
{
	return t->wm.committed;
}

void
tailer_set_target(struct tailer *t, uint64_t size)
{
	t->target = size;
}

bool
tailer_readable(const struct tailer *t)
{
	uint64_t	 end = t->size;

	if (t->target < end)
		end = t->target;
	return end > t->read_off;
}

bool
tailer_stalled(const struct tailer *t)
{
	return t->stalled;
}

void
tailer_stall(struct tailer *t)
{
	t->stalled = true;
}

uint64_t
tailer_active_ms(const struct tailer *t)
{
	return t->active_ms;
}

void
tailer_restart(struct tailer *t, const struct framer *fr)
{
	rare(t)->epoch++;
	t->read_off = 0;
	t->stalled = false;
	fs_reset(t, fr, true);
	wm_reset(&t->wm, 0);
	t->fp_len = 0;
	tailer_refresh_fingerprint(t);
	/* What was delivered was the old content's. */
	skipplan_free(t->rare->plan);
	t->rare->plan = NULL;
}

uint64_t
tailer_push(struct tailer *t, uint64_t end)
{
	return wm_push(&t->wm, end);
}

void
tailer_extend(struct tailer *t, uint64_t id, uint64_t end)
{
	wm_extend(&t->wm, id, end);
}

bool
tailer_ack(struct tailer *t, uint64_t id)
{
	return wm_ack(&t->wm, id);
}

bool
tailer_skip_to(struct tailer *t, uint64_t end)
{
	return wm_skip_to(&t->wm, end);
}

size_t
tailer_memory(const struct tailer *t)
{
	const struct tailer_rare *r = t->rare;

	return wm_memory(&t->wm) + (r == NULL ? 0 : sizeof(*r) +
	    (r->framing ? framer_state_memory(&r->fs) : 0) +
	    (r->plan != NULL ? skipplan_memory(r->plan) : 0));
}

uint64_t
tailer_last_range(const struct tailer *t)
{
	return wm_last_id(&t->wm);
}

bool
tailer_done_to(struct tailer *t, uint64_t end)
{
	return wm_done_to(&t->wm, end);
}

size_t
tailer_spans(const struct tailer *t, struct reg_span *out, size_t max)
{
	return wm_spans(&t->wm, out, max);
}

void
tailer_set_plan(struct tailer *t, struct skipplan *p)
{
	if (p == NULL && PLAN(t) == NULL)
		return;
	skipplan_free(rare(t)->plan);
	t->rare->plan = p;
}

struct skipplan *
tailer_plan(const struct tailer *t)
{
	return PLAN(t);
}

struct skipplan *
tailer_take_plan(struct tailer *t)
{
	struct skipplan	*p = PLAN(t);

	if (p != NULL) {
		t->rare->plan = NULL;
		rare_drop_if_empty(t);
	}
	return p;
}

void
tailer_plan_passed(struct tailer *t, uint64_t off)
{
	if (PLAN(t) != NULL && skipplan_done(t->rare->plan, off)) {
		skipplan_free(t->rare->plan);
		t->rare->plan = NULL;
		rare_drop_if_empty(t);
	}
}

size_t
tailer_pending(const struct tailer *t)
{
	return wm_pending(&t->wm);
}
