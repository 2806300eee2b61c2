/*
 * The registry's table: its entries keyed by (flow, dev, ino) in an
 * open-addressing hash table, each flow name kept once.  Internal to the
 * registry (registry.c and the state file reader and writer); others use
 * registry.h.
 */
#ifndef DISAGENT_REGTABLE_H
#define DISAGENT_REGTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "state/registry.h"

/* Fields are the table's; n is the entry count, the rest is private. */
struct reg_table {
	struct reg_entry **b;		/* NULL: an empty slot */
	size_t		  nb;		/* a power of two, grown at 3/4 load */
	size_t		  n;
	char		**flows;
	size_t		  nflows;
	struct reg_run	 *run;		/* owned: the header's, or NULL */
	struct reg_flowdesc *descs;	/* owned: the header's "flows" and
					   registry_describe_flow's */
	size_t		  ndescs;
};

/* An empty table.  A zeroed table needs only regtable_cleanup. */
void		 regtable_init(struct reg_table *);
/* Free every entry; the table is zeroed (init it to use it again). */
void		 regtable_cleanup(struct reg_table *);
void		 regtable_swap(struct reg_table *, struct reg_table *);

/* Borrowed entry for the key, or NULL. */
struct reg_entry *regtable_find(struct reg_table *, const char *flow,
		    uint64_t dev, uint64_t ino);

/*
 * A new entry for the key, which must be absent: flow points to the
 * table's copy of it, the other fields are zero.  Borrowed (valid until
 * removed or the table is cleaned up).
 */
struct reg_entry *regtable_add(struct reg_table *, const char *flow,
		    uint64_t dev, uint64_t ino);

/* Drop the entry for the key; false when there was none. */
bool		 regtable_remove(struct reg_table *, const char *flow,
		    uint64_t dev, uint64_t ino);

/* e's rare part, made when missing; reg_rare_trim frees it once it
 * holds nothing. */
struct reg_rare	*reg_rare_of(struct reg_entry *e);
void		 reg_rare_trim(struct reg_entry *e);
/* Free r and what it holds (NULL-safe); reg_spool_free a spool part. */
void		 reg_rare_free(struct reg_rare *r);
void		 reg_spool_free(struct reg_spool *sp);

/* The entries of flow from moved to flow to (an entry to has for the
 * same file wins); how many moved. */
size_t		 regtable_rename_flow(struct reg_table *, const char *from,
		    const char *to);
/* Set (copied) what flow reads; the description of flow, or NULL. */
void		 regtable_describe(struct reg_table *, const char *flow,
		    const char *stream, const char *pattern);
const struct reg_flowdesc *regtable_desc(const struct reg_table *,
		    const char *flow);

/* Drop the entries with updated < before; returns how many. */
size_t		 regtable_expire(struct reg_table *, int64_t before);

/*
 * A new array of the table's n entries (borrowed), ordered by flow, then
 * dev, then ino; free it.
 */
struct reg_entry **regtable_sorted(const struct reg_table *);

#endif
