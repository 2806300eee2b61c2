/*
 * DIS semantics for one flow's stream: DescribeStream at start, PutRecords of
 * batches (body built by codec/pbuf, signed and sent by disapi), the reply
 * classified per record and per request (retry), and retries scheduled with
 * backoff.  A batch is handed back through the done callback only when every
 * one of its records is acknowledged (or dead-lettered), or when the sink is
 * cancelled; nothing is ever dropped here.
 *
 * States: DESCRIBING (the stream is checked; batches wait) -> READY
 * (sending) <-> PAUSED (an error only the operator can fix: one probe every
 * pausedRetrySeconds, the rest wait) ; any -> CLOSING (sink_cancel).
 */
#ifndef DISAGENT_SINK_H
#define DISAGENT_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "base/util.h"

struct batch;
struct conf;
struct conf_flow;
struct deadletter;
struct disapi;
struct metrics_flow;
struct sink;

enum sink_state {
	SINK_DESCRIBING,
	SINK_READY,
	SINK_PAUSED,
	SINK_CLOSING,
};

struct sink_cbs {
	/*
	 * The batch is handed back: every record acknowledged or
	 * dead-lettered (delivered), or the sink was cancelled (not
	 * delivered: its offsets must not move).  The receiver owns it.
	 */
	void	(*done)(struct batch *, bool delivered, void *arg);
	/*
	 * A request ended (whatever its outcome), so the window or the
	 * number of requests in flight may have changed.  Never called from
	 * inside sink_submit.
	 */
	void	(*ended)(void *arg);
	/* Delivery is impossible without the operator (credentials,
	 * stream...): reason for the log and --once. */
	void	(*halt)(const char *reason, void *arg);
	void	*arg;
	/*
	 * A PutRecords is about to be sent (the state file's bound on when
	 * a request of this run may land must cover it); NULL: none.
	 * Called from inside sink_submit too: it must not call back in.
	 */
	void	(*sending)(void *arg);
	/* --once: a halt ends the run, so the log does not promise the
	 * slow retries of a daemon. */
	bool	 once;
};

/*
 * A sink for fc's stream.  api, dlq and m (the flow's counters) are
 * borrowed and outlive the sink; cbs is copied.
 */
struct sink	*sink_new(uv_loop_t *, struct disapi *, const struct conf *,
		    const struct conf_flow *, struct deadletter *dlq,
		    struct metrics_flow *m, const struct sink_cbs *);
/* Start: describe the stream (unless streamId is set). */
void		 sink_start(struct sink *);
/* Queue a batch; the sink owns it until its done callback. */
void		 sink_submit(struct sink *, struct batch *);
/* Batches submitted and not yet handed back. */
size_t		 sink_pending(const struct sink *);
/* Requests on the wire now (PutRecords and DescribeStream). */
size_t		 sink_inflight(const struct sink *);
/*
 * Batches the flow may have out at once now: maxInFlightRequests (1 when
 * ordered), lowered while DIS throttles and raised again as requests succeed
 * (AIMD).
 */
size_t		 sink_window(const struct sink *);
/*
 * Whether the flow may submit a batch now: fewer batches than the window
 * are out, not counting the remnants (batches waiting to resend records
 * that failed one by one), which ride in the next request with room.
 */
bool		 sink_has_room(const struct sink *);
/*
 * The records (and their data bytes, into *bytes) of the remnants that
 * may ride in the next request: the flow leaves that much room in the
 * batch it fills, so the request is full, not the batch and a small one.
 */
size_t		 sink_riders(const struct sink *, size_t *bytes);
enum sink_state	 sink_state(const struct sink *);
/* Raw record bytes one request may carry (1 MiB COMMON, 5 MiB ADVANCED). */
size_t		 sink_request_cap(const struct sink *);
/* Largest record (raw bytes). */
size_t		 sink_record_cap(const struct sink *);
/*
 * Stop for good (CLOSING): no more sends or retries; every batch not on the
 * wire is handed back now (not delivered), each one on the wire when its
 * request ends (http_close cancels them).
 */
void		 sink_cancel(struct sink *);
/* Free it; sink_cancel first, and every batch must have been handed back. */
void		 sink_free(struct sink *);

/* --- what a restart needs (seqmark.h) --------------------------------- */

/* The last sequence number of part known from elsewhere (state, describe). */
void		 sink_seed(struct sink *, int32_t part, int64_t last);
/*
 * The floors of the partitions (seqmark_floors over the batches it holds),
 * through cb(part, last, arg).
 */
void		 sink_floors(const struct sink *,
		    void (*cb)(int32_t part, int64_t last, void *), void *arg);
/* Call fn for every batch it holds (borrowed for the call). */
void		 sink_each(const struct sink *,
		    void (*fn)(const struct batch *, void *), void *arg);
/*
 * The PutRecords on the wire, and the batches with records not
 * acknowledged that may have landed all the same (an attempt ended without
 * a verdict, or a request cancelled on the wire): those it holds, and
 * those it handed back so (its stop, a reload), whose pins it keeps for
 * sink_floors.  A DescribeStream on the wire carries no record and does
 * not count.  0: none.
 */
size_t		 sink_uncertain(const struct sink *);
/* The batches whose request in doubt is being settled by reading the
 * stream (settle.h): not on the wire, but not to be cancelled lightly. */
size_t		 sink_settling(const struct sink *);
/* The answered requests whose INFO lines were summed (more than a few a
 * second), as one line; the progress report calls it. */
void		 sink_log_puts(struct sink *);

#endif
