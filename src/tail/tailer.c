/*
 * File tailing: identity, fingerprint, offsets and line framing state
 * (the reads themselves: tailread.c).
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
#include "tail/tailer_int.h"
#include "tail/watermark.h"
#include "tail/zsource.h"
#include "state/registry.h"

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
	    !r->framing && r->nheld == 0) {
		free(r->held);
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
 * nearly every file that has none.  tailer_fs_put keeps a state that is no longer
 * idle and lets go of one that is.
 */
struct framer_state *
tailer_fs_get(struct tailer *t, struct framer_state *tmp)
{
	if (t->rare != NULL && t->rare->framing)
		return &t->rare->fs;
	memset(tmp, 0, sizeof(*tmp));
	return tmp;
}

void
tailer_fs_put(struct tailer *t, struct framer_state *st,
    struct framer_state *tmp)
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
	tailer_fs_put(t, &tmp, &tmp);
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
		free(t->rare->held);
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
	struct framer_state tmp, *fs = tailer_fs_get(t, &tmp);

	framer_state_skip_line(fs);
	tailer_fs_put(t, fs, &tmp);
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
	t->rare->nheld = 0;	/* the old content's */
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

/* Forget the held records the committed offset passed. */
static void
held_prune(struct tailer *t)
{
	struct tailer_rare *r = t->rare;
	uint32_t	 i, m = 0;

	if (r == NULL || r->nheld == 0)
		return;
	for (i = 0; i < r->nheld; i++)
		if (r->held[i].end > t->wm.committed)
			r->held[m++] = r->held[i];
	r->nheld = m;
	if (m == 0) {
		free(r->held);
		r->held = NULL;
		r->capheld = 0;
		rare_drop_if_empty(t);
	}
}

bool
tailer_ack(struct tailer *t, uint64_t id)
{
	bool	 moved = wm_ack(&t->wm, id);

	if (moved)
		held_prune(t);
	return moved;
}

void
tailer_note_held(struct tailer *t, uint64_t id, uint64_t start,
    uint64_t end)
{
	struct tailer_rare *r;

	if (end <= t->wm.committed)
		return;
	r = rare(t);
	if (r->nheld > 0 && r->held[r->nheld - 1].range == id &&
	    r->held[r->nheld - 1].end == start) {
		r->held[r->nheld - 1].end = end;	/* the next line */
		return;
	}
	if (r->nheld == TAILER_MAX_HELD) {
		held_prune(t);
		if ((r = t->rare) == NULL)
			r = rare(t);
		if (r->nheld == TAILER_MAX_HELD)
			return;
	}
	if (r->nheld == r->capheld) {
		r->capheld = r->capheld ? 2 * r->capheld : 4;
		r->held = xrealloc(r->held, r->capheld * sizeof(*r->held));
	}
	r->held[r->nheld++] = (struct tailer_held){ .range = id,
	    .start = start, .end = end };
}

size_t
tailer_nheld(const struct tailer *t)
{
	return t->rare != NULL ? t->rare->nheld : 0;
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
	    (r->plan != NULL ? skipplan_memory(r->plan) : 0) +
	    r->capheld * sizeof(*r->held));
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
	const struct tailer_held *h;
	size_t		 n = wm_spans(&t->wm, out, max);
	uint32_t	 i;

	for (i = 0; i < tailer_nheld(t) && n < max; i++) {
		h = &t->rare->held[i];
		if (h->end > t->wm.committed && (h->range ==
		    TAILER_HELD_DONE || wm_acked(&t->wm, h->range)))
			out[n++] = (struct reg_span){ .start = h->start,
			    .end = h->end };
	}
	return n;
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
