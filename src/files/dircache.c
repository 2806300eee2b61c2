/*
 * The listings of a walk's directories (dircache.h): an open-addressing
 * table by (device, inode), rebuilt without the directories a whole walk
 * did not reach.  A listing is one block: for each name its kind byte
 * (with the walk's verdict in its high bits, DIRCACHE_V_*), then the name
 * and its NUL.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/util.h"
#include "files/dircache.h"

struct dirlist {
	uint64_t	 dev, ino;
	struct timespec	 mtime, ctime;
	int64_t		 size;
	uint64_t	 read_ns;	/* when the read began */
	char		*names;		/* kind, name, NUL; ... */
	char		*path;		/* the directory's, at the read */
	size_t		 len, cap;
	bool		 good;		/* a whole read, kept */
	bool		 used;		/* slot taken */
	bool		 reached;	/* by the walk since the last sweep */
};

struct dircache {
	struct dirlist	*v;
	size_t		 cap, n;	/* cap: 0 or a power of 2 */
	struct dirlist	*rec;		/* the read under way, or NULL */
	size_t		 last;		/* its last name's offset, or SIZE_MAX */
};

static struct dirlist *
slot(struct dirlist *v, size_t cap, uint64_t dev, uint64_t ino)
{
	size_t	 i;

	for (i = hash_devino(dev, ino, cap); v[i].used;
	    i = (i + 1) & (cap - 1))
		if (v[i].dev == dev && v[i].ino == ino)
			break;
	return &v[i];
}

static struct dirlist *
find(struct dircache *c, const struct stat *st)
{
	struct dirlist	*l;

	if (c->cap == 0)
		return NULL;
	l = slot(c->v, c->cap, (uint64_t)st->st_dev, (uint64_t)st->st_ino);
	return l->used ? l : NULL;
}

/* Move the listings kept (all, or those reached) into a table of cap. */
static void
rehash(struct dircache *c, size_t cap, bool reached_only)
{
	struct dirlist	*old = c->v;
	size_t		 i, oldcap = c->cap;

	c->v = cap > 0 ? xcalloc(cap, sizeof(*c->v)) : NULL;
	c->cap = cap;
	c->n = 0;
	for (i = 0; i < oldcap; i++) {
		if (!old[i].used)
			continue;
		if (reached_only && !old[i].reached) {
			free(old[i].names);
			free(old[i].path);
			continue;
		}
		old[i].reached = false;
		*slot(c->v, c->cap, old[i].dev, old[i].ino) = old[i];
		c->n++;
	}
	free(old);
}

struct dircache *
dircache_new(void)
{
	return xcalloc(1, sizeof(struct dircache));
}

void
dircache_free(struct dircache *c)
{
	size_t	 i;

	if (c == NULL)
		return;
	for (i = 0; i < c->cap; i++) {
		free(c->v[i].names);
		free(c->v[i].path);
	}
	free(c->v);
	free(c);
}

static bool
same_time(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

static uint64_t
ns_of(const struct timespec *t)
{
	return t->tv_sec < 0 ? 0 :
	    (uint64_t)t->tv_sec * 1000000000ULL + (uint64_t)t->tv_nsec;
}

const struct dirlist *
dircache_get(struct dircache *c, const struct stat *st, uint64_t now_ns)
{
	struct dirlist	*l = find(c, st);
	uint64_t	 changed;

	if (l == NULL)
		return NULL;
	l->reached = true;
	if (!l->good || !same_time(&l->mtime, &st->st_mtim) ||
	    !same_time(&l->ctime, &st->st_ctim) ||
	    l->size != (int64_t)st->st_size)
		return NULL;
	changed = MAX(ns_of(&l->mtime), ns_of(&l->ctime));
	/* Changed too close to the read: maybe again in the same tick. */
	if (changed + DIRCACHE_MARGIN_NS > l->read_ns)
		return NULL;
	/* Too old, or the clock went back. */
	if (now_ns < l->read_ns || now_ns - l->read_ns > DIRCACHE_MAX_AGE_NS)
		return NULL;
	return l;
}

const char *
dirlist_path(const struct dirlist *l)
{
	return l->path != NULL ? l->path : "";
}

const char *
dirlist_next(const struct dirlist *l, size_t *off, enum dirkind *kind,
    int *verdict)
{
	const char	*name;
	unsigned char	 b;

	if (*off >= l->len)
		return NULL;
	b = (unsigned char)l->names[*off];
	*kind = (enum dirkind)(b & DIRCACHE_KIND_MASK);
	*verdict = !(b & DIRCACHE_V_KNOWN) ? -1 : (b & DIRCACHE_V_YES) != 0;
	name = l->names + *off + 1;
	*off += strlen(name) + 2;
	return name;
}

void
dircache_begin(struct dircache *c, const struct stat *st, uint64_t start_ns,
    const char *path)
{
	struct dirlist	*l;

	if ((l = find(c, st)) == NULL) {
		if ((c->n + 1) * 4 > c->cap * 3)
			rehash(c, c->cap > 0 ? c->cap * 2 : 16, false);
		l = slot(c->v, c->cap, (uint64_t)st->st_dev,
		    (uint64_t)st->st_ino);
		l->used = true;
		l->dev = (uint64_t)st->st_dev;
		l->ino = (uint64_t)st->st_ino;
		c->n++;
	}
	l->reached = true;
	l->good = false;
	l->len = 0;
	l->mtime = st->st_mtim;
	l->ctime = st->st_ctim;
	l->size = (int64_t)st->st_size;
	l->read_ns = start_ns;
	if (l->path == NULL || strcmp(l->path, path) != 0) {
		free(l->path);
		l->path = xstrdup(path);
	}
	c->rec = l;
	c->last = SIZE_MAX;
}

void
dircache_add(struct dircache *c, const char *name, enum dirkind kind)
{
	struct dirlist	*l = c->rec;
	size_t		 n = strlen(name) + 2;

	if (l == NULL)
		return;
	c->last = SIZE_MAX;
	if (l->len + n > DIRCACHE_MAX_NAMES) {
		free(l->names);		/* too many: read each time */
		l->names = NULL;
		l->len = l->cap = 0;
		c->rec = NULL;
		return;
	}
	if (l->len + n > l->cap) {
		l->cap = MAX(l->cap * 2, MAX(l->len + n, 256));
		l->names = xrealloc(l->names, l->cap);
	}
	l->names[l->len] = (char)kind;
	memcpy(l->names + l->len + 1, name, n - 1);
	c->last = l->len;
	l->len += n;
}

void
dircache_verdict(struct dircache *c, bool yes)
{
	struct dirlist	*l = c->rec;

	if (l == NULL || c->last == SIZE_MAX)
		return;
	l->names[c->last] = (char)((unsigned char)l->names[c->last] |
	    DIRCACHE_V_KNOWN | (yes ? DIRCACHE_V_YES : 0));
	c->last = SIZE_MAX;
}

void
dircache_end(struct dircache *c, bool ok)
{
	struct dirlist	*l = c->rec;

	c->rec = NULL;
	if (l == NULL)
		return;
	l->good = ok;
	/* Give back what a shrunk directory no longer needs. */
	if (l->cap > 2 * l->len + 256 && l->len == 0) {
		free(l->names);
		l->names = NULL;
		l->cap = 0;
	} else if (l->cap > 2 * l->len + 256) {
		l->names = xrealloc(l->names, l->len);
		l->cap = l->len;
	}
}

void
dircache_forget(struct dircache *c, const struct stat *st)
{
	struct dirlist	*l = find(c, st);

	if (l != NULL)
		l->good = false;
}

void
dircache_sweep(struct dircache *c)
{
	size_t	 i, reached = 0, cap;

	c->rec = NULL;
	for (i = 0; i < c->cap; i++)
		if (c->v[i].used && c->v[i].reached)
			reached++;
	for (cap = 16; reached * 4 > cap * 3; cap *= 2)
		continue;
	if (reached == 0)
		cap = 0;
	if (reached < c->n || cap < c->cap)
		rehash(c, cap, true);
	else
		for (i = 0; i < c->cap; i++)
			c->v[i].reached = false;
}

size_t
dircache_count(const struct dircache *c, size_t *bytes)
{
	size_t	 i;

	*bytes = 0;
	for (i = 0; i < c->cap; i++)
		if (c->v[i].used)
			*bytes += c->v[i].len;
	return c->n;
}
