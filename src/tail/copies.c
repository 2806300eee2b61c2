/*
 * copytruncate copies (copies.h).
 */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/crc32.h"
#include "base/log.h"
#include "base/util.h"
#include "tail/copies.h"

#define COPY_MIN_HEAD	64	/* heads shorter than this prove nothing */
#define COPY_WAIT_MS	3000	/* held this long after its last change */
#define COPY_HOLD_MS	(10 * COPY_WAIT_MS)	/* and never longer */

/* Why a new file is held back, if it is. */
enum hold_why {
	HOLD_NOT,
	HOLD_LIVE,	/* its head is a live file's: its truncation comes */
	HOLD_SHORT,	/* its bytes so far start a live file's head */
	HOLD_COPY,	/* a copy shorter than what was read of its original */
};

/* What the bytes of a new file say. */
struct judgement {
	enum hold_why	 why;
	bool		 copy;
	uint64_t	 offset;	/* a copy's start */
	uint64_t	 end;		/* what was read of its original */
	uint64_t	 n;		/* head bytes it has */
	const char	*of;		/* the file it may copy (borrowed) */
};

static bool
head_is(const unsigned char *head, size_t n, uint32_t len, uint32_t crc)
{
	return len >= COPY_MIN_HEAD && len <= n &&
	    crc32_of(head, len) == crc;
}

static bool
same_file(uint64_t dev, uint64_t ino, const struct stat *st)
{
	return dev == (uint64_t)st->st_dev && ino == (uint64_t)st->st_ino;
}

/*
 * Whether the n bytes of head are the first n of the file at fd (borrowed;
 * -1: opened at path).  buf has room for n bytes.
 */
static bool
starts(const unsigned char *head, size_t n, int fd, const char *path,
    unsigned char *buf)
{
	ssize_t	 got;
	int	 own = -1;

	if (n == 0)
		return true;
	if (fd < 0) {
		own = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (own < 0)
			return false;
		fd = own;
	}
	got = pread(fd, buf, n, 0);
	if (own >= 0)
		close(own);
	return got == (ssize_t)n && memcmp(buf, head, n) == 0;
}

/* The head is the start of a held file's (a copy of what it copies). */
static const char *
starts_held(const struct copies_wait *w, const struct stat *st,
    const unsigned char *head, size_t n, unsigned char *buf)
{
	size_t	 i;

	for (i = 0; w != NULL && i < ARRAY_SIZE(w->slot); i++)
		if (w->slot[i].used &&
		    !same_file(w->slot[i].dev, w->slot[i].ino, st) &&
		    w->slot[i].size > n &&
		    starts(head, n, w->slot[i].fd, NULL, buf))
			return w->slot[i].path;
	return NULL;
}

/* One candidate against the head: a copy of it, or a reason to wait. */
static void
judge_one(const struct copy_candidate *c, const struct stat *st,
    const unsigned char *head, size_t n, unsigned char *buf,
    struct judgement *j)
{
	uint64_t	 size = (uint64_t)st->st_size;

	if (head_is(head, n, c->prev_len, c->prev_crc)) {
		j->copy = true;
		j->of = c->path;
		j->offset = j->end = c->prev_end;
		/* Still being written, maybe: what it has yet to get was
		 * read from the original, so it is not read before then. */
		j->why = size < c->prev_end ? HOLD_COPY : HOLD_NOT;
		return;
	}
	if (j->why != HOLD_NOT || c->gone)
		return;
	if (head_is(head, n, c->len, c->crc))
		j->why = HOLD_LIVE;
	else if (n < c->len && c->len >= COPY_MIN_HEAD && !c->compressed &&
	    starts(head, n, c->fd, c->path, buf))
		j->why = HOLD_SHORT;	/* the copy is being written */
	if (j->why != HOLD_NOT)
		j->of = c->path;
}

/*
 * Read the first header_bytes of fd (the new file st at path) and judge
 * them against the candidates and the files w holds (NULL: none).  The
 * cheap checksum comparisons come first; a short file's bytes are compared
 * with a file's only until one reason to wait is found.
 */
static void
judge(const struct copies_wait *w, int fd, const char *path,
    const struct stat *st, size_t header_bytes, copies_next_fn next, void *it,
    struct judgement *j)
{
	struct copy_candidate c;
	unsigned char	*head, *buf;
	const char	*held;
	ssize_t		 n;

	memset(j, 0, sizeof(*j));
	head = xmalloc(header_bytes);
	buf = xmalloc(header_bytes);
	n = pread(fd, head, header_bytes, 0);
	if (n < 0)
		goto out;
	j->n = (uint64_t)n;
	/* Not a copy of itself, nor of the file its path held before (a
	 * create rotation's new file, found before the old one's rename). */
	while (!j->copy && next(it, &c))
		if (!same_file(c.dev, c.ino, st) && strcmp(c.path, path) != 0)
			judge_one(&c, st, head, (size_t)n, buf, j);
	held = NULL;
	if (!j->copy && j->why == HOLD_NOT && (size_t)n < header_bytes)
		held = starts_held(w, st, head, (size_t)n, buf);
	if (held != NULL) {
		j->why = HOLD_SHORT;
		j->of = held;
	}
	if (j->copy)
		j->offset = MIN(j->offset, (uint64_t)st->st_size);
out:
	free(buf);
	free(head);
}

/* --- held files --------------------------------------------------------- */

static struct copies_held *
slot_of(struct copies_wait *w, const struct stat *st)
{
	size_t	 i;

	for (i = 0; i < ARRAY_SIZE(w->slot); i++)
		if (w->slot[i].used &&
		    same_file(w->slot[i].dev, w->slot[i].ino, st))
			return &w->slot[i];
	return NULL;
}

static void
slot_free(struct copies_wait *w, struct copies_held *s)
{
	w->full_said = false;
	if (s->fd >= 0)
		close(s->fd);
	free(s->path);
	memset(s, 0, sizeof(*s));
}

static void
log_hold(const char *path, const struct judgement *j)
{
	switch (j->why) {
	case HOLD_LIVE:
		log_info("%s: its head is that of %s: a copy taken before "
		    "its truncation (copytruncate)? holding it back until "
		    "then", path, j->of);
		break;
	case HOLD_SHORT:
		if (j->n == 0)
			log_info("%s is empty so far: a copy of %s still being "
			    "written (copytruncate)? holding it back until it "
			    "can be told", path, j->of);
		else
			log_info("%s: its %ju bytes so far are the start of "
			    "%s: a copy still being written (copytruncate)? "
			    "holding it back until it can be told", path,
			    (uintmax_t)j->n, j->of);
		break;
	case HOLD_COPY:
		log_info("%s: its head is the one %s had before its "
		    "truncation, but it is shorter than what was read of "
		    "that (%ju bytes): holding it back while it may still be "
		    "written", path, j->of, (uintmax_t)j->end);
		break;
	case HOLD_NOT:
		break;
	}
}

/* A free slot taking the new file (fd stolen), or NULL. */
static struct copies_held *
slot_new(struct copies_wait *w, int fd, const struct stat *st,
    const struct judgement *j, uint64_t now)
{
	struct copies_held *s;
	size_t		 i;

	for (i = 0; i < ARRAY_SIZE(w->slot); i++) {
		s = &w->slot[i];
		if (s->used)
			continue;
		s->used = true;
		s->dev = (uint64_t)st->st_dev;
		s->ino = (uint64_t)st->st_ino;
		s->fd = fd;
		s->size = (uint64_t)st->st_size;
		s->since_ms = s->changed_ms = now;
		s->why = (int)j->why;
		return s;
	}
	return NULL;
}

/*
 * Hold the new file (fd, stolen when a slot takes it) for the reason in j:
 * true while it waits, false when it is to be decided now (unchanged for
 * COPY_WAIT_MS, held for COPY_HOLD_MS, or no slot free).  *sp is its slot.
 */
static bool
hold(struct copies_wait *w, struct copies_held **sp, int fd,
    const char *path, const struct stat *st, const struct judgement *j)
{
	struct copies_held *s = *sp;
	uint64_t	 now = mono_ms(), size = (uint64_t)st->st_size;

	if (s == NULL) {
		s = *sp = slot_new(w, fd, st, j, now);
		if (s == NULL) {
			if (!w->full_said)
				log_info("%s: more than %zu new files may be "
				    "copies; reading it and the next ones as "
				    "new files until one is told", path,
				    ARRAY_SIZE(w->slot));
			w->full_said = true;
			return false;
		}
		log_hold(path, j);
	} else if (s->size != size || s->why != (int)j->why) {
		/* A copy seen before the truncation and after it, still
		 * short, gets its 3 s again: it may be written still. */
		if (s->why != (int)j->why)
			log_hold(path, j);
		s->size = size;
		s->why = (int)j->why;
		s->changed_ms = now;
	}
	if (s->path == NULL || strcmp(s->path, path) != 0) {
		free(s->path);
		s->path = xstrdup(path);
	}
	s->seen = true;
	return now - s->changed_ms < COPY_WAIT_MS &&
	    now - s->since_ms < COPY_HOLD_MS;
}

/* A descriptor on path that is st's file, or -1. */
static int
open_same(const char *path, const struct stat *st)
{
	struct stat	 now;
	int		 fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0 && (fstat(fd, &now) != 0 ||
	    !same_file((uint64_t)now.st_dev, (uint64_t)now.st_ino, st))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* A held file that is not a copy is read as a new one. */
static void
log_release(const char *path, const struct copies_held *s,
    const struct judgement *j)
{
	uint64_t	 ms = mono_ms() - s->since_ms;

	if (j->why == HOLD_NOT)
		log_info("%s: held back %ju ms as a possible copy, it is none; "
		    "reading it as a new file", path, (uintmax_t)ms);
	else
		log_info("%s: still like %s after %ju ms, not a copy of it; "
		    "reading it as a new file", path, j->of, (uintmax_t)ms);
}

static void
log_copy(const char *path, const struct judgement *j)
{
	log_info("%s is a copy of %s taken before its truncation "
	    "(copytruncate); reading it from offset %ju", path, j->of,
	    (uintmax_t)j->offset);
}

enum copies_verdict
copies_check(struct copies_wait *w, const char *path, const struct stat *st,
    size_t header_bytes, copies_next_fn next, void *it, uint64_t *offset)
{
	struct copies_held *s = slot_of(w, st);
	struct judgement j;
	int		 fd;

	fd = s != NULL ? s->fd : open_same(path, st);
	if (fd < 0)
		return COPIES_NONE;
	judge(w, fd, path, st, header_bytes, next, it, &j);
	if (j.why != HOLD_NOT && hold(w, &s, fd, path, st, &j))
		return COPIES_WAIT;
	if (!j.copy && s != NULL)
		log_release(path, s, &j);
	if (s != NULL)
		slot_free(w, s);
	else
		close(fd);
	if (!j.copy)
		return COPIES_NONE;
	log_copy(path, &j);
	*offset = j.offset;
	return COPIES_COPY;
}

uint64_t
copies_start_now(int fd, const char *path, const struct stat *st,
    size_t header_bytes, copies_next_fn next, void *it)
{
	struct judgement j;

	judge(NULL, fd, path, st, header_bytes, next, it, &j);
	if (!j.copy)
		return 0;
	log_copy(path, &j);
	return j.offset;
}

void
copies_scan_begin(struct copies_wait *w)
{
	size_t	 i;

	for (i = 0; i < ARRAY_SIZE(w->slot); i++)
		w->slot[i].seen = false;
}

bool
copies_vanished(struct copies_wait *w, int *fd, char **path)
{
	struct copies_held *s;
	size_t		 i;

	for (i = 0; i < ARRAY_SIZE(w->slot); i++) {
		s = &w->slot[i];
		if (!s->used || s->seen)
			continue;
		*fd = s->fd;
		*path = s->path;
		s->fd = -1;
		s->path = NULL;
		slot_free(w, s);
		return true;
	}
	return false;
}

uint64_t
copies_due_ms(const struct copies_wait *w)
{
	const struct copies_held *s;
	uint64_t	 now = mono_ms(), due = UINT64_MAX, at;
	size_t		 i;

	for (i = 0; i < ARRAY_SIZE(w->slot); i++) {
		s = &w->slot[i];
		if (!s->used)
			continue;
		at = MIN(s->changed_ms + COPY_WAIT_MS,
		    s->since_ms + COPY_HOLD_MS);
		/* A millisecond late, so that the look finds it due. */
		due = MIN(due, at > now ? at - now + 1 : 1);
	}
	return due;
}

void
copies_cleanup(struct copies_wait *w)
{
	size_t	 i;

	for (i = 0; i < ARRAY_SIZE(w->slot); i++)
		if (w->slot[i].used)
			slot_free(w, &w->slot[i]);
}
