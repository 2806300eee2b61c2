/*
 * Successors of files gone with bytes not delivered (successor.h).
 */
#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/crc32.h"
#include "base/util.h"
#include "files/successor.h"
#include "tail/zsource.h"

#define MIN_HEAD	64

struct cand {
	char		*path;
	struct stat	 st;
	unsigned char	*head;		/* decompressed, NULL until needed */
	ssize_t		 nhead;		/* < 0: unreadable */
	bool		 taken;
	struct cand	*next;
};

struct devino {
	uint64_t	 dev, ino;
};

struct successors {
	size_t		 header_bytes;
	struct cand	*cands;
	struct devino	*seen;
	size_t		 nseen, capseen;
	bool		 sorted;
};

struct successors *
successors_new(size_t header_bytes)
{
	struct successors *s;

	s = xcalloc(1, sizeof(*s));
	s->header_bytes = header_bytes;
	return s;
}

void
successors_reset(struct successors *s)
{
	struct cand	*c;

	while ((c = s->cands) != NULL) {
		s->cands = c->next;
		free(c->path);
		free(c->head);
		free(c);
	}
	free(s->seen);
	s->seen = NULL;
	s->nseen = s->capseen = 0;
	s->sorted = false;
}

void
successors_free(struct successors *s)
{
	if (s == NULL)
		return;
	successors_reset(s);
	free(s);
}

void
successors_seen(struct successors *s, uint64_t dev, uint64_t ino)
{
	if (s->nseen == s->capseen) {
		s->capseen = s->capseen ? 2 * s->capseen : 64;
		s->seen = xrealloc(s->seen, s->capseen * sizeof(*s->seen));
	}
	s->seen[s->nseen].dev = dev;
	s->seen[s->nseen++].ino = ino;
	s->sorted = false;
}

static int
devino_cmp(const void *a, const void *b)
{
	const struct devino *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

bool
successors_was_seen(struct successors *s, uint64_t dev, uint64_t ino)
{
	struct devino	 k = { dev, ino };

	if (s->nseen == 0)
		return false;	/* qsort and bsearch want an array */
	if (!s->sorted) {
		qsort(s->seen, s->nseen, sizeof(*s->seen), devino_cmp);
		s->sorted = true;
	}
	return bsearch(&k, s->seen, s->nseen, sizeof(*s->seen),
	    devino_cmp) != NULL;
}

void
successors_add(struct successors *s, const char *path, const struct stat *st)
{
	struct cand	*c;

	c = xcalloc(1, sizeof(*c));
	c->path = xstrdup(path);
	c->st = *st;
	c->next = s->cands;
	s->cands = c;
}

/* The candidate's decompressed head, read once. */
static void
load_head(struct successors *s, struct cand *c)
{
	enum zkind	 kind;
	int		 fd;

	c->nhead = -1;
	fd = open(c->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return;
	kind = zsource_kind(fd);
	if (kind != ZKIND_NONE) {
		c->head = xmalloc(s->header_bytes);
		c->nhead = zsource_head(fd, kind, c->head, s->header_bytes);
	}
	close(fd);
}

const char *
successors_find(struct successors *s, uint32_t crc, uint32_t len,
    struct stat *st)
{
	struct cand	*c;

	if (len < MIN_HEAD || len > s->header_bytes)
		return NULL;
	for (c = s->cands; c != NULL; c = c->next) {
		if (c->taken)
			continue;
		if (c->head == NULL && c->nhead == 0)
			load_head(s, c);
		if (c->nhead < (ssize_t)len || crc32_of(c->head, len) != crc)
			continue;
		c->taken = true;
		*st = c->st;
		return c->path;
	}
	return NULL;
}
