/*
 * The sink's own state (struct sink), shared by sink.c (sending, the
 * verdicts applied, the queues) and sinkdoubt.c (requests whose outcome is
 * unknown: settled by reading the stream, the pins of those handed back,
 * the floors) only.
 */
#ifndef DISAGENT_SINK_INT_H
#define DISAGENT_SINK_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "base/closer.h"
#include "sink/aimd.h"
#include "sink/outage.h"
#include "sink/sink.h"
#include "sink/sinkq.h"
#include "sink/sinkrecs.h"

struct sink {
	uv_loop_t	*loop;
	struct disapi	*api;
	const struct conf *conf;
	const struct conf_flow *fc;
	struct putbody	*body;		/* body.serialize.type, compress */
	struct metrics_flow *m;		/* the flow's counters */
	struct sinkrecs	 recs;		/* where records' outcomes go */
	struct sink_cbs	 cbs;
	enum sink_state	 state;
	bool		 described;	/* the stream's type is known */
	struct sinkdesc	*desc;		/* DescribeStream */
	size_t		 request_cap;
	struct sinkq	 q;		/* the batches held */
	struct sink_batch *probe;	/* PAUSED: the batch that probes */
	size_t		 inflight;	/* on the wire */
	struct aimd	 aimd;		/* the window allowed out, the pacing */
	uint64_t	 sent_seq;	/* requests sent so far */
	uint64_t	 next_send_ms;
	struct seqmark	*seq;		/* sequence numbers seen, pins */
	struct seqsnap	*doubt;		/* the pins of batches handed back
					   that may have landed: kept for
					   the floors of the saves to come */
	size_t		 ndoubt;	/* how many such batches */
	bool		 ids;		/* its partition keys carry record
					   ids: a request in doubt is
					   settled by reading (settle.h) */
	uint64_t	 last_settle_log_ms;
	uv_timer_t	 timer;		/* the head of the timed queue */
	struct closer	 closer;	/* freed once the timer is closed */
	uint64_t	 last_halt_log_ms;
	struct outage	 outage;	/* failed requests in a row (outage.h) */
	char		 what[320];	/* "PutRecords to [STREAM]" */
};

/* sink.c */
/* sb leaves the sink: its flow's done callback, delivered or not. */
void		 sink_hand_back(struct sink *, struct sink_batch *sb,
		    bool delivered);
/* Send sb after delay_ms (a retry, the pacing gap, the probe). */
void		 sink_schedule(struct sink *, struct sink_batch *sb,
		    uint64_t delay_ms);
/* Every record of sb is done: hand it back delivered (true). */
bool		 sink_finish_if_done(struct sink *, struct sink_batch *sb);

/* sinkdoubt.c */
/*
 * sb's attempt ended without a verdict: settle it by reading the stream
 * (when its keys carry ids), then send what did not land after delay_ms;
 * else just sink_schedule it.
 */
void		 sinkdoubt_retry(struct sink *, struct sink_batch *sb,
		    uint64_t delay_ms);
/* sb goes back undelivered: keep its pin and count it when it may have
 * landed (a settle under way is stopped). */
void		 sinkdoubt_keep(struct sink *, struct sink_batch *sb);
/* The batches being settled go back undelivered (the sink closes). */
void		 sinkdoubt_cancel(struct sink *);

#endif
