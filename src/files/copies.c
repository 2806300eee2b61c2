/*
 * copytruncate copies (copies.h).
 */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/crc32.h"
#include "base/log.h"
#include "base/util.h"
#include "files/copies.h"

#define COPY_MIN_HEAD	64	/* heads shorter than this prove nothing */
#define COPY_WAIT_MS	3000

static bool
head_is(const unsigned char *head, size_t n, uint32_t len, uint32_t crc)
{
	return len >= COPY_MIN_HEAD && len <= n &&
	    crc32_of(head, len) == crc;
}

/* Whether to hold a possible copy back for now (COPY_WAIT_MS at most). */
static bool
defer(struct copies_wait *w, const struct stat *st)
{
	uint64_t	 now = mono_ms();
	size_t		 i, free_slot = ARRAY_SIZE(w->slot);

	for (i = 0; i < ARRAY_SIZE(w->slot); i++) {
		if (w->slot[i].dev == (uint64_t)st->st_dev &&
		    w->slot[i].ino == (uint64_t)st->st_ino)
			return now - w->slot[i].since_ms < COPY_WAIT_MS;
		if (free_slot == ARRAY_SIZE(w->slot) &&
		    (w->slot[i].since_ms == 0 ||
		    now - w->slot[i].since_ms > 10 * COPY_WAIT_MS))
			free_slot = i;
	}
	if (free_slot == ARRAY_SIZE(w->slot))
		return false;
	w->slot[free_slot].dev = (uint64_t)st->st_dev;
	w->slot[free_slot].ino = (uint64_t)st->st_ino;
	w->slot[free_slot].since_ms = now;
	return true;
}

enum copies_verdict
copies_check(struct copies_wait *w, const char *path, const struct stat *st,
    size_t header_bytes, copies_next_fn next, void *it, uint64_t *offset)
{
	struct copy_candidate c;
	enum copies_verdict v = COPIES_NONE;
	unsigned char	*head;
	ssize_t		 n;
	int		 fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return COPIES_NONE;
	head = xmalloc(header_bytes);
	n = pread(fd, head, header_bytes, 0);
	close(fd);
	while (n > 0 && next(it, &c)) {
		if (c.dev == (uint64_t)st->st_dev &&
		    c.ino == (uint64_t)st->st_ino)
			continue;
		if (head_is(head, (size_t)n, c.prev_len, c.prev_crc)) {
			*offset = MIN(c.prev_end, (uint64_t)st->st_size);
			log_info("%s is a copy of %s taken before its truncation "
			    "(copytruncate); reading it from offset %ju", path,
			    c.path, (uintmax_t)*offset);
			v = COPIES_COPY;
			break;
		}
		if (!c.gone && head_is(head, (size_t)n, c.len, c.crc))
			v = COPIES_WAIT;
	}
	free(head);
	if (v == COPIES_WAIT && !defer(w, st))
		v = COPIES_NONE;
	return v;
}
