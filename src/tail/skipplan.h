/*
 * What a restart knows was delivered past a file's committed offset, so
 * that reading the file again sends none of it: the acknowledged spans the
 * state file kept (a clean stop, or the last save before a crash), and the
 * records the restart's read found in the stream (agent/dedupe.c: after a
 * crash).  Owned by the file's tailer while it reads over them; the flow
 * asks for each record it frames.
 *
 * A record is skipped only when it lies wholly inside a span (its bytes
 * were acknowledged: the same framing gives the same record, and another
 * framing still delivered these bytes), or when it starts where a found
 * record starts and its data, as it would be sent, hashes and measures as
 * the found one did.  Anything else is sent.
 */
#ifndef DISAGENT_SKIPPLAN_H
#define DISAGENT_SKIPPLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct reg_found;
struct reg_span;
struct skipplan;

/*
 * A plan from spans (copied) and found (steals; sorted by offset), for a
 * file read on from offset: what ends at or before it is dropped.  NULL
 * when nothing is left.
 */
struct skipplan	*skipplan_new(const struct reg_span *spans, size_t nspans,
		    struct reg_found *found, size_t nfound, uint64_t offset);
void		 skipplan_free(struct skipplan *);

/*
 * The record [start, end) lies inside an acknowledged span.  Records come
 * in file order: what ends at or before start is forgotten.
 */
bool		 skipplan_acked(struct skipplan *, uint64_t start, uint64_t end);
/*
 * The record starting at start, whose data as sent is data[len], is one
 * the restart found in the stream (then it is forgotten: one skip each).
 */
bool		 skipplan_found(struct skipplan *, uint64_t start,
		    const void *data, size_t len);
/*
 * The same for a record that may come before others that start earlier
 * (a container record held back, records/framer_ctr.c: its end in the
 * commit watermark is from, before its start): only what ends (spans) or
 * starts (found) before from is forgotten, and a span skips it only when
 * it starts past from (a span over from may take its bytes along without
 * it having been delivered).  skipplan_acked and skipplan_found are these
 * with from = start.
 */
bool		 skipplan_acked_from(struct skipplan *, uint64_t from,
		    uint64_t start, uint64_t end);
bool		 skipplan_found_from(struct skipplan *, uint64_t from,
		    uint64_t start, const void *data, size_t len);

/* Nothing is left to skip at or after off. */
bool		 skipplan_done(const struct skipplan *, uint64_t off);
/* Found records are left (the restart's knowledge is not used up). */
bool		 skipplan_found_left(const struct skipplan *);
/*
 * The spans still ahead of off (ending after it) into out[0..max-1];
 * returns how many.
 */
size_t		 skipplan_spans(const struct skipplan *, uint64_t off,
		    struct reg_span *out, size_t max);
/* Heap bytes it holds. */
size_t		 skipplan_memory(const struct skipplan *);

/*
 * Add the n spans (sorted) to p, merged with its own, for a file read on
 * from offset (a batch cancelled undelivered, a tailer handed over): p, or
 * a new plan when p is NULL (steals p; NULL when nothing is left).
 */
struct skipplan	*skipplan_add(struct skipplan *p, const struct reg_span *,
		    size_t n, uint64_t offset);

#endif
