/*
 * The sink's inside, shared by sink.c (state, queues, sending,
 * DescribeStream, teardown) and sinkreply.c (PutRecords replies, AIMD,
 * dead letters, pauses).  Nothing else includes it.
 */
#ifndef DISAGENT_SINK_INT_H
#define DISAGENT_SINK_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "dis/http.h"
#include "sink/sink.h"
#include "wire/retry.h"

#define HARD_RETRY_MS		(30 * 60 * 1000)	/* IP blacklisted */

struct sink {
	uv_loop_t	*loop;
	struct disapi	*api;
	const struct conf *conf;
	const struct conf_flow *fc;
	struct putbody	*body;		/* body.serialize.type, compress */
	struct deadletter *dlq;
	struct metrics_flow *m;		/* the flow's counters */
	struct sink_cbs	 cbs;
	enum sink_state	 state;
	bool		 described;	/* the stream's type is known */
	bool		 describing;	/* a DescribeStream is in flight */
	char		*describe_path;	/* "streams/NAME/" */
	size_t		 request_cap;
	struct batch	*waiting;	/* FIFO: not ready, or behind the probe */
	struct batch	*timed;		/* by due_ms: retries, pacing, probe */
	struct batch	*probe;		/* PAUSED: the batch that probes */
	size_t		 pending;	/* owned: submitted, not handed back */
	size_t		 inflight;	/* on the wire */
	double		 window;	/* AIMD: batches allowed out */
	uint64_t	 pace_ms;	/* gap between sends while throttled */
	uint64_t	 sent_seq;	/* requests sent so far */
	uint64_t	 decreased_seq;	/* sent_seq at AIMD's last decrease */
	uint64_t	 next_send_ms;
	unsigned	 describe_attempt;
	struct batch	*all;		/* every batch held (all_next) */
	struct seqmark	*seq;		/* sequence numbers seen, pins */
	uv_timer_t	 timer;		/* the head of timed */
	uv_timer_t	 describe_timer;
	int		 open_handles;
	uint64_t	 last_halt_log_ms;
};

/* sink.c */
void		 sink_set_state(struct sink *, enum sink_state);
/* Hand b back to the flow (delivered or not). */
void		 sink_hand_back(struct sink *, struct batch *, bool delivered);
/* Park b until the stream is ready or the pause ends. */
void		 sink_enqueue(struct sink *, struct batch *);
/* Send b after delay_ms (a retry, the pacing gap, the probe). */
void		 sink_schedule(struct sink *, struct batch *, uint64_t delay_ms);
/* Take b out of the timed queue; whether it was there. */
bool		 sink_unschedule(struct sink *, struct batch *);
/* Send b now, later (pacing), or park it. */
void		 sink_try_send(struct sink *, struct batch *);
/* Send every parked batch (ready, or no longer paused). */
void		 sink_release_waiting(struct sink *);
/*
 * A request ended: a remnant whose backoff is over and that was parked
 * (it had no place, or another batch was about to leave) goes now if it
 * may, the other remnants that fit riding with it.  Called after the
 * flow was told (its next batch, if any, goes first and takes them).
 */
void		 sink_release_parked(struct sink *);
/* The window's ceiling: maxInFlightRequests, or 1 when ordered. */
double		 sink_max_window(const struct sink *);
/* The next retry delay of b (full jitter, its attempts counted). */
uint64_t	 sink_backoff(struct sink *, struct batch *);

/* sinkreply.c */
/* http_done_cb of a PutRecords request; arg is the batch. */
void		 sinkreply_done(const struct http_response *, void *arg);
/* Delivery needs the operator: last error, ERROR once a minute, halt cb. */
void		 sinkreply_halt(struct sink *, long status, const char *code,
		    const char *msg);
/* PAUSED: b probes after delay, or waits behind the probe. */
void		 sinkreply_pause(struct sink *, struct batch *, uint64_t delay);
/* retry_classify, keys being renewed taken into account. */
enum retry_action sinkreply_classify(struct sink *, long status,
		    const char *code);

#endif
