/*
 * Pools of fixed-size objects that live by the thousand: one per tracked
 * file (tailers, registry nodes, the tracked records; paths, by size
 * class).  malloc gives each a header and rounds it up to 16 bytes, 16 to
 * 24 bytes a file; a pool carves them from 64 KiB slabs aligned to their
 * size, so an object costs its size, and a slab whose objects are all
 * free goes back to the system.
 * Slab memory is touched only as objects are first handed out.
 *
 * One thread (the loop's).  Built with AddressSanitizer, a pool is plain
 * calloc and free, so that the sanitizer still sees each object.
 */
#ifndef DISAGENT_POOL_H
#define DISAGENT_POOL_H

#include <stddef.h>

struct pool_slab;

struct pool {
	size_t		  size;		/* of one object */
	struct pool_slab *partial;	/* slabs with a free object */
	size_t		  slabs;	/* slabs mapped */
};

#define POOL_INITIALIZER(type)	{ sizeof(type), NULL, 0 }

/* A zeroed object (ends the process when out of memory, as xcalloc). */
void	*pool_alloc(struct pool *);
/* NULL-safe. */
void	 pool_free(struct pool *, void *);

#endif
