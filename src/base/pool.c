/*
 * Fixed-size object pools: slabs of SLAB bytes at SLAB-aligned addresses
 * (so an object's slab is its address masked), each with a free list of
 * returned objects and a bump index into the part never handed out.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/log.h"
#include "base/pool.h"
#include "base/util.h"

#if defined(__SANITIZE_ADDRESS__)
#define POOL_PLAIN	1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define POOL_PLAIN	1
#endif
#endif

#define SLAB	((size_t)64 * 1024)

struct pool_free {
	struct pool_free *next;
};

struct pool_slab {
	struct pool_slab *next, *prev;	/* in the pool's partial list */
	struct pool_free *free;		/* objects given back */
	uint32_t	  used;		/* objects handed out */
	uint32_t	  bump;		/* objects ever handed out */
	uint32_t	  cap;		/* objects it holds */
	int		  listed;	/* on the partial list */
};

/* Objects start after the header, 16-byte aligned. */
#define FIRST	((sizeof(struct pool_slab) + 15) & ~(size_t)15)

#ifndef POOL_PLAIN
static size_t
obj_size(const struct pool *p)
{
	size_t	 n = p->size < sizeof(struct pool_free) ?
	    sizeof(struct pool_free) : p->size;

	return (n + 7) & ~(size_t)7;
}

static void
unlist(struct pool *p, struct pool_slab *s)
{
	if (s->prev != NULL)
		s->prev->next = s->next;
	else
		p->partial = s->next;
	if (s->next != NULL)
		s->next->prev = s->prev;
	s->next = s->prev = NULL;
	s->listed = 0;
}

static void
list(struct pool *p, struct pool_slab *s)
{
	s->prev = NULL;
	s->next = p->partial;
	if (p->partial != NULL)
		p->partial->prev = s;
	p->partial = s;
	s->listed = 1;
}

/* A new slab: map twice its size and trim to an aligned SLAB. */
static struct pool_slab *
slab_new(struct pool *p)
{
	struct pool_slab *s;
	uintptr_t	  a, b;
	char		 *m;

	m = mmap(NULL, 2 * SLAB, PROT_READ | PROT_WRITE, MAP_PRIVATE |
	    MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		fatalx("pool: cannot map a slab: %s", strerror(errno));
	a = ((uintptr_t)m + SLAB - 1) & ~(uintptr_t)(SLAB - 1);
	b = a + SLAB;
	if (a > (uintptr_t)m)
		(void)munmap(m, a - (uintptr_t)m);
	if (b < (uintptr_t)m + 2 * SLAB)
		(void)munmap((void *)b, (uintptr_t)m + 2 * SLAB - b);
	s = (struct pool_slab *)a;
	s->cap = (uint32_t)((SLAB - FIRST) / obj_size(p));
	p->slabs++;
	list(p, s);
	return s;
}
#endif

void *
pool_alloc(struct pool *p)
{
#ifdef POOL_PLAIN
	return xcalloc(1, p->size);
#else
	struct pool_slab *s = p->partial;
	struct pool_free *f;
	void		 *o;

	if (s == NULL)
		s = slab_new(p);
	if ((f = s->free) != NULL) {
		s->free = f->next;
		o = f;
	} else
		o = (char *)s + FIRST + (size_t)s->bump++ * obj_size(p);
	if (++s->used == s->cap)
		unlist(p, s);
	memset(o, 0, p->size);
	return o;
#endif
}

void
pool_free(struct pool *p, void *o)
{
#ifdef POOL_PLAIN
	(void)p;
	free(o);
#else
	struct pool_slab *s;
	struct pool_free *f = o;

	if (o == NULL)
		return;
	s = (struct pool_slab *)((uintptr_t)o & ~(uintptr_t)(SLAB - 1));
	f->next = s->free;
	s->free = f;
	s->used--;
	if (!s->listed)
		list(p, s);
	/* Keep one slab with room; give back the others once empty. */
	if (s->used == 0 && (s->prev != NULL || s->next != NULL)) {
		unlist(p, s);
		p->slabs--;
		(void)munmap(s, SLAB);
	}
#endif
}
