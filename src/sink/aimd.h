/*
 * The window of PutRecords requests one sink has in flight (aimd.c),
 * private to sink/: additive increase, multiplicative decrease by what the
 * replies say of throttling (sinkreply_aimd), and the pacing gap between
 * sends while DIS throttles.  Arithmetic only: the sink counts and sends.
 */
#ifndef DISAGENT_AIMD_H
#define DISAGENT_AIMD_H

#include <stddef.h>
#include <stdint.h>

#include "sink/sinkreply.h"

/* Embedded in struct sink. */
struct aimd {
	double		 window;	/* batches allowed out */
	double		 max;		/* its ceiling */
	uint64_t	 pace_ms;	/* gap between sends while throttled */
	uint64_t	 decreased_seq;	/* the sends counted at the last
					   decrease */
};

/* A full window of max (maxInFlightRequests, or 1 when ordered). */
void		 aimd_init(struct aimd *, double max);
/*
 * A reply says a: sent_seq is the count of sends at its request, sends
 * the count now.  A decrease comes once per round trip only.
 */
void		 aimd_adapt(struct aimd *, enum sinkreply_aimd a,
		    uint64_t sent_seq, uint64_t sends);
/* The batches that may be out now (at least 1). */
size_t		 aimd_window(const struct aimd *);

#endif
