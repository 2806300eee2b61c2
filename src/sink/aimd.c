/*
 * AIMD for the requests in flight (aimd.h).
 */
#include "config.h"

#include <stdbool.h>

#include "base/util.h"
#include "sink/aimd.h"

#define PACE_MAX_MS	2000

void
aimd_init(struct aimd *a, double max)
{
	a->window = max;
	a->max = max;
	a->pace_ms = 0;
	a->decreased_seq = 0;
}

size_t
aimd_window(const struct aimd *a)
{
	return a->window < 1.0 ? 1 : (size_t)a->window;
}

/*
 * Decrease once per round trip: the replies to requests that left before
 * the last decrease tell of the same congestion, not a new one (as TCP
 * halves once per window).  Without this, a window of full requests that
 * came back throttled together halved the window and doubled the pacing
 * once each (4 requests: a sixteenth, 400 ms), and a stream at its write
 * limit idled for seconds while the pacing came down again.
 */
static bool
new_round(struct aimd *a, uint64_t sent_seq, uint64_t sends)
{
	if (sent_seq <= a->decreased_seq)
		return false;
	a->decreased_seq = sends;
	return true;
}

void
aimd_adapt(struct aimd *a, enum sinkreply_aimd what, uint64_t sent_seq,
    uint64_t sends)
{
	switch (what) {
	case SINKREPLY_AIMD_HALVE:
		/* Most of a request throttled: halve, and pace. */
		if (!new_round(a, sent_seq, sends))
			return;
		a->window = a->window / 2 < 1.0 ? 1.0 : a->window / 2;
		a->pace_ms = a->pace_ms ? MIN(a->pace_ms * 2, PACE_MAX_MS) :
		    50;
		return;
	case SINKREPLY_AIMD_LESS:
		/* A few throttled records: one request fewer in flight, no
		 * pacing (halving on every 5% of DIS.4303 would starve the
		 * flow). */
		if (!new_round(a, sent_seq, sends))
			return;
		a->window = a->window - 1 < 1.0 ? 1.0 : a->window - 1;
		return;
	case SINKREPLY_AIMD_GROW:
		a->window += 1.0 / a->window;
		if (a->window > a->max)
			a->window = a->max;
		a->pace_ms /= 2;
		if (a->pace_ms < 10)
			a->pace_ms = 0;
		return;
	case SINKREPLY_AIMD_KEEP:
		return;
	}
}
