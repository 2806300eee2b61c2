/*
 * The batches one sink holds (sinkq.c), private to sink/: the sink's half
 * of each (struct sink_batch) and the lists they are on.  Every batch held
 * is on the list of all of them, and while it is not on the wire on one
 * queue: waiting (a FIFO: the stream is not ready, or the batch waits
 * behind the paused probe) or timed (in due order: a retry, the pacing
 * gap, the probe; parked remnants last).  Data structure only: sink.c
 * runs the timer, sends and decides; nothing here calls back.
 */
#ifndef DISAGENT_SINKQ_H
#define DISAGENT_SINKQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sink/putbody.h"

struct batch;
struct seqsnap;
struct settle;
struct sink;

/* The due time of a parked remnant: after every other, never a timer. */
#define SINKQ_PARKED	UINT64_MAX

/*
 * The sink's half of a batch it owns: what it knows of the batch's
 * attempts, from sinkq_add until the batch is taken back (sinkq_take) or
 * absorbed by another (sinkq_absorb_riders).  The flow sees only the
 * records (struct batch).  The links are sinkq.c's, and so is merging an
 * absorbed batch's pin and uncertainty; sink.c writes the rest.
 */
struct sink_batch {
	struct batch	*b;		/* the records (the flow's) */
	struct sink	*sink;		/* the owner */
	struct putbody_req req;		/* the request built last */
	unsigned	 attempt;
	uint64_t	 sent_ms;
	uint64_t	 sent_seq;	/* the sink's count of sends, at this one */
	uint64_t	 due_ms;	/* when a scheduled send is due */
	size_t		 limit;		/* records per request after a split */
	bool		 remnant;	/* waits to resend records a reply
					   failed one by one: may ride in
					   another batch's request */
	bool		 uncertain;	/* an attempt ended without a verdict:
					   it may have landed */
	struct seqsnap	*pin;		/* seqmark.h: since it was sent */
	struct settle	*settle;	/* settle.h: being read back (on no
					   queue, not on the wire) */
	uint64_t	 settle_delay;	/* then sent again after this */
	struct sink_batch *next;	/* waiting or timed */
	struct sink_batch *all_next;	/* every batch held */
	struct sink_batch *all_prev;
};

/* Embedded in struct sink; zeroed is empty. */
struct sinkq {
	struct sink_batch *waiting;	/* FIFO */
	struct sink_batch *timed;	/* by due_ms */
	struct sink_batch *all;		/* every batch held (all_next) */
	size_t		 pending;	/* batches held */
};

/* A new sink_batch for b (owned by the sink from now on), on the list of
 * all; on no queue. */
struct sink_batch *sinkq_add(struct sinkq *, struct sink *, struct batch *b);
/* sb leaves the sink: freed, its pin dropped; its batch, returned, is the
 * caller's again.  sb must be on no queue. */
struct batch	*sinkq_take(struct sinkq *, struct sink_batch *sb);

/* At the end of the waiting FIFO. */
void		 sinkq_enqueue(struct sinkq *, struct sink_batch *);
/* Empty the waiting FIFO: its batches, linked by next. */
struct sink_batch *sinkq_take_waiting(struct sinkq *);
/* The first waiting batch, out of the FIFO, or NULL. */
struct sink_batch *sinkq_pop_waiting(struct sinkq *);

/* Into the timed queue by sb->due_ms; whether sb is its head now. */
bool		 sinkq_insert(struct sinkq *, struct sink_batch *sb);
/* sb out of the timed queue; whether it was there. */
bool		 sinkq_remove(struct sinkq *, struct sink_batch *sb);
/* Every timed batch due at now, out of the queue, linked by next. */
struct sink_batch *sinkq_take_due(struct sinkq *, uint64_t now);
/* Empty the timed queue: its batches, linked by next. */
struct sink_batch *sinkq_take_timed(struct sinkq *);
/* The first parked remnant (SINKQ_PARKED), out of the queue, or NULL. */
struct sink_batch *sinkq_take_parked(struct sinkq *);
/* The head of the timed queue, or NULL. */
const struct sink_batch *sinkq_head(const struct sinkq *);
/* Whether every timed batch is a remnant. */
bool		 sinkq_only_remnants(const struct sinkq *);

/*
 * Whether t, timed, may ride in another batch's request when riding is
 * allowed at all (the sink is ready, and records need not keep file
 * order): it waits to resend records that failed one by one (not a whole
 * request that failed: that one is retried as it was), it was not split
 * by a 413, and it leaves room for the segments of the batch that takes
 * it.
 */
bool		 sinkq_rider(const struct sink_batch *t);
/* The timed riders (none unless riding): how many, and their records
 * not done (and their data bytes, into *bytes). */
size_t		 sinkq_riders(const struct sinkq *, bool riding,
		    size_t *nbatches, size_t *bytes);

/*
 * Before sb's request is built: the riders that fit take their place in
 * it, oldest first, while sb's records not done stay within max_records
 * and max_bytes and its segments within BATCH_MAX_SEGS.  Each is merged
 * into sb (batch_absorb), its pin joined to sb's and its uncertainty
 * kept, and freed with its batch.  Returns the batches taken; their
 * records into *taken, sb's records then into *n.
 */
size_t		 sinkq_absorb_riders(struct sinkq *, struct sink_batch *sb,
		    size_t max_records, size_t max_bytes, size_t *taken,
		    size_t *n);

#endif
