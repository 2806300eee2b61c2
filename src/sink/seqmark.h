/*
 * Where a restart after a crash must start reading each partition of a
 * stream to find every record this agent may have sent and not saved as
 * delivered: the last sequence number it saw acknowledged there *before*
 * the oldest request that may still land.
 *
 * DIS numbers the records of a partition in the order they land, and a
 * request lands after it is sent, so every record of a request lands
 * after every record acknowledged before that request was sent.  A sink
 * therefore keeps, per partition, the highest sequence number acknowledged
 * so far, and each batch on the wire (or whose last attempt ended without
 * a verdict: a timeout, a dropped connection, a 5xx) pins a copy of them
 * as they were when it was sent.  The floor of a partition is the least
 * of the pinned copies, or the current value when nothing is pinned:
 * everything not yet acknowledged lands after it.  Copies are shared and
 * copied on write, so a pin costs a reference, not an array.
 *
 * Partitions are numbers (shardId-0000000003 is 3), at most SEQMARK_MAX.
 */
#ifndef DISAGENT_SEQMARK_H
#define DISAGENT_SEQMARK_H

#include <stddef.h>
#include <stdint.h>

#define SEQMARK_MAX	4096	/* partitions followed; DIS allows fewer */
#define SEQMARK_NONE	(-2)	/* nothing known of a partition */

struct seqmark;
struct seqsnap;

struct seqmark	*seqmark_new(void);
void		 seqmark_free(struct seqmark *);

/*
 * What is known from elsewhere: the state file, or DescribeStream (last =
 * the partition's newest record, -1 for an empty partition).  Raises the
 * value of part to last.
 */
void		 seqmark_seed(struct seqmark *, int32_t part, int64_t last);
/* A record of part was acknowledged as seq. */
void		 seqmark_ack(struct seqmark *, int32_t part, int64_t seq);

/* A pin on the values as they are now (a new reference). */
struct seqsnap	*seqmark_pin(struct seqmark *);
/* Drop a pin (NULL-safe). */
void		 seqsnap_unpin(struct seqsnap *);
/*
 * One pin for what a and b pinned (the records of two requests now in
 * one): per partition the least value either knows.  Consumes both
 * references (either may be NULL) and returns a new one.
 */
struct seqsnap	*seqsnap_join(struct seqsnap *a, struct seqsnap *b);

/*
 * The floor of every partition known (SEQMARK_NONE never): the least of
 * the values in pins[0..npins-1] (NULL entries skipped) and the current
 * one, through cb(part, last, arg), in order of part.
 */
void		 seqmark_floors(const struct seqmark *,
		    struct seqsnap *const *pins, size_t npins,
		    void (*cb)(int32_t part, int64_t last, void *), void *arg);

#endif
