/*
 * A flow's rate limits, maxBytesPerSecond (of record data, as sent) and
 * maxRecordsPerSecond: a token bucket each, holding at most a second's
 * worth and full at the start.  A record is admitted while every bucket
 * has tokens left, and then pays its cost, which may take a bucket below
 * zero: a record larger than a second's worth still goes, and the next
 * waits until it is paid for, so the rate over time stays at the limit.
 * When a record is not admitted, the caller is told how long to wait:
 * until the buckets hold 50 ms worth again, so a flow held by its limit
 * wakes at most twenty times a second whatever the limit.
 *
 * Pure: the caller passes the time (monotonic milliseconds), owns the
 * timer that wakes it and keeps the records waiting where they are (the
 * files, the journal): nothing is dropped.
 */
#ifndef DISAGENT_RATELIMIT_H
#define DISAGENT_RATELIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { RATE_BYTES, RATE_RECORDS, RATE_NBUCKETS };

/* Fields are the bucket's own; embed it and use the functions. */
struct ratelimit {
	double		 rate[RATE_NBUCKETS];	/* per second; 0: no limit */
	double		 tokens[RATE_NBUCKETS];
	uint64_t	 last_ms;		/* when tokens were counted */
};

/* Limits of 0 are none; the buckets start full at now_ms. */
void	ratelimit_init(struct ratelimit *, uint64_t bytes_per_s,
	    uint64_t records_per_s, uint64_t now_ms);
/* Whether any limit is set. */
bool	ratelimit_on(const struct ratelimit *);
/*
 * Whether a record may be taken at now_ms.  false: *wait_ms is how long
 * to wait before asking again (>= 1).
 */
bool	ratelimit_admit(struct ratelimit *, uint64_t now_ms,
	    uint64_t *wait_ms);
/* A record of len bytes was taken: it pays one record and len bytes. */
void	ratelimit_take(struct ratelimit *, size_t len);

#endif
