/*
 * DIS semantics for one flow's stream: DescribeStream at start, PutRecords of
 * batches (body built by codec, signed by signer, sent by http), the reply
 * classified per record and per request (retry), and retries scheduled with
 * backoff.  A batch is handed back through the done callback only when every
 * one of its records is acknowledged; nothing is ever dropped here.
 */
#ifndef DISAGENT_SINK_H
#define DISAGENT_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "util.h"

struct conf;
struct conf_flow;
struct deadletter;
struct disapi;
struct tailer;
struct sink;

struct batch_rec {
	uint32_t	 off;		/* into batch data */
	uint32_t	 len;
	uint32_t	 key;		/* into batch keys (NUL-terminated) */
	uint16_t	 seg;		/* its file: index into segs */
	bool		 done;		/* acknowledged or dead-lettered */
	uint64_t	 file_off;	/* offset of its first byte in the file */
};

/* One range of one file inside a batch, for the commit watermark. */
struct batch_seg {
	struct tailer	*tailer;	/* borrowed; outlives the batch */
	uint64_t	 wm_id;
};

/* A batch of records, filled by flow and sent by sink.  Private fields
 * follow the public ones. */
struct batch {
	struct buf	 data;		/* record bytes, back to back */
	struct buf	 keys;		/* partition keys */
	struct batch_rec *recs;
	size_t		 nrecs;
	size_t		 caprecs;
	size_t		 ndone;
	struct batch_seg *segs;
	size_t		 nsegs;
	size_t		 capsegs;
	uint64_t	 created_ms;
	struct mem_budget *mem;		/* charged for data, keys, body */
	size_t		 charged;
	/* sink's */
	struct sink	*sink;
	unsigned	 attempt;
	bool		 sending;	/* a request is in flight */
	uint64_t	 sent_ms;
	struct buf	 body;		/* body of the request in flight */
	size_t		*sent_idx;	/* record index of each body entry */
	size_t		 nsent;
	size_t		 limit;		/* records per request after a split */
	uv_timer_t	 retry_timer;	/* private */
	struct batch	*next;		/* sink queue */
	struct batch	*flow_next;	/* flow's outstanding list */
	struct batch	*flow_prev;
};

/* A new batch charging its memory to mem (may be NULL). */
struct batch	*batch_new(uv_loop_t *, struct mem_budget *mem);
/* Close the batch's timer and free it from the close callback. */
void		 batch_free(struct batch *);
/* Add a record of file segment seg starting at file_off. */
void		 batch_add(struct batch *, const char *data, size_t len,
		    const char *key, uint16_t seg, uint64_t file_off);

/* The sink calls done(batch, arg) when every record is acknowledged. */
typedef void	(*sink_done_cb)(struct batch *, void *arg);
/* Delivery is impossible without the operator (credentials, stream...). */
typedef void	(*sink_halt_cb)(const char *reason, void *arg);

/* dlq is borrowed: it outlives the sink. */
struct sink	*sink_new(uv_loop_t *, struct disapi *, const struct conf *,
		    const struct conf_flow *, struct mem_budget *,
		    struct deadletter *dlq, sink_done_cb, sink_halt_cb,
		    void *arg);
/* Start: describe the stream (unless streamId is set). */
void		 sink_start(struct sink *);
/* Queue a batch; steals it until done. */
void		 sink_submit(struct sink *, struct batch *);
/* Batches submitted and not yet done. */
size_t		 sink_pending(const struct sink *);
/*
 * Batches the flow may have out at once now: maxInFlightRequests (1 when
 * ordered), lowered while DIS throttles and raised again as requests succeed
 * (AIMD).
 */
size_t		 sink_window(const struct sink *);
/* Delivery paused by an error only the operator can fix. */
bool		 sink_paused(const struct sink *);
/* Raw record bytes one request may carry (1 MiB COMMON, 5 MiB ADVANCED). */
size_t		 sink_request_cap(const struct sink *);
/* Largest record (raw bytes). */
size_t		 sink_record_cap(const struct sink *);
/*
 * The largest record fc sends to a stream of type ("COMMON", "ADVANCED"):
 * what sink_record_cap() is once the stream is described.
 */
size_t		 sink_record_cap_for(const struct conf_flow *fc,
		    const char *type);
/* Cancel retries; hand back the batches not yet done (for freeing). */
struct batch	*sink_take_pending(struct sink *);
void		 sink_free(struct sink *);

/* Counters for the progress lines. */
struct sink_stats {
	uint64_t	 records_sent;
	uint64_t	 bytes_sent;
	uint64_t	 records_failed;
	uint64_t	 requests;
	uint64_t	 requests_failed;
	uint64_t	 records_retried;
	uint64_t	 records_dead;		/* written to the dead-letter file */
	uint64_t	 throttled;		/* throttling events */
};
const struct sink_stats *sink_stats(const struct sink *);
/* Failures by code, requests by status, latency and the last error. */
struct metrics_flow;
const struct metrics_flow *sink_metrics(const struct sink *);

#endif
