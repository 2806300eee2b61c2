/*
 * A multiset of records by 64-bit hash, for `disagent verify`: how many
 * times each record of the files is expected, how many times the stream
 * has it, and, on a second pass over the files, which occurrence of a
 * record is the one missing.  16 bytes per distinct record (at most 3/4
 * full), never the records themselves, so that a file of millions of lines
 * is checked in a few tens of MB.  Two different records share a hash
 * with a probability of about n^2 / 2^65 (1e-8 for a million).
 */
#ifndef DISAGENT_RECSET_H
#define DISAGENT_RECSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct recset;

struct recset_counts {
	uint64_t	 expected;	/* records added */
	uint64_t	 found;		/* of those, seen in the stream */
	uint64_t	 missing;	/* expected - found */
	uint64_t	 extra;		/* copies seen beyond the expected */
};

/* A set with room for n records (it grows if more come); new. */
struct recset	*recset_new(uint64_t n);
void		 recset_free(struct recset *);

/* The hash of a record's bytes (seeded with its length). */
uint64_t	 recset_hash(const void *, size_t);

/* One more occurrence of h is expected. */
void		 recset_add(struct recset *, uint64_t h);

/*
 * The stream has a record of hash h: counted, and true, when h is
 * expected at all; false for a record that is not from these files.
 */
bool		 recset_seen(struct recset *, uint64_t h);

/*
 * Second pass, in the order the records were added: true when this
 * occurrence of h is among those the stream has (the first ones), false
 * when it is missing.  Call recset_counts() before the first claim.
 */
bool		 recset_claim(struct recset *, uint64_t h);

void		 recset_counts(const struct recset *, struct recset_counts *);

/* Bytes the table takes. */
size_t		 recset_memory(const struct recset *);

#endif
