/*
 * A flow's insides (flow.h), shared by flow.c (the pump, the window, the
 * batch being filled, the lifecycle) and flow_restart.c (what a restart
 * and a transition ask of it) and nothing else.
 */
#ifndef DISAGENT_FLOW_INT_H
#define DISAGENT_FLOW_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "agent/flow.h"
#include "agent/pace.h"
#include "base/closer.h"
#include "base/hash.h"
#include "base/metrics.h"
#include "sink/batch.h"

/*
 * Where a flow is in its life, changed only in set_state():
 *
 *   RUNNING --(--once: all delivered, reported)--> DRAINED
 *      |                                              |
 *      +---- flow_stop --> STOPPING <-- flow_stop ----+
 *      +--- flow_cancel -> CANCELLED <- flow_cancel (any)
 *
 * STOPPING reads no more but still sends what is batched; CANCELLED does
 * nothing at all any more.  It never goes back.
 */
enum flow_state {
	FLOW_RUNNING,
	FLOW_DRAINED,
	FLOW_STOPPING,
	FLOW_CANCELLED,
};

/* Whether the pump may take records. */
enum window {
	WINDOW_OPEN,
	WINDOW_FULL,		/* the sink has its window of batches out */
	WINDOW_MEMORY,		/* all flows hold maxMemoryBytes */
	WINDOW_RATE,		/* held by its rate limit until a refill */
};

struct flow {
	uv_loop_t	*loop;
	const struct conf *conf;
	const struct conf_flow *fc;
	struct sink	*sink;
	struct source	*src;		/* its files, or the journal */
	struct chain	*chain;		/* what each record becomes; owns the
					   dead-letter file */
	bool		 chain_ok;	/* else err says why it did not
					   compile */
	struct hash_key	 agent_key;	/* records/keyid.h */
	bool		 skipped;	/* a record was skipped: a batch's range
					   may no longer be its file's newest */
	char		*stream_key;	/* "NAME" or "id:ID" */
	struct registry	*reg;
	char		 err[256];	/* why flow_start fails */
	struct batch	*cur;		/* being filled */
	struct batch_size last_size;	/* of the last one handed on */
	size_t		 pass_recs;	/* records the pump's pass took */
	struct pace	 pace;		/* of coalesced reads */
	struct mem_budget *mem;
	struct metrics_flow m;		/* the flow's counters */
	uint64_t	 held_ms;	/* when the limit last held it */
	enum window	 window;
	enum flow_state	 state;
	bool		 once;
	uv_timer_t	 age_timer;
	uv_timer_t	 pump_timer;
	uv_timer_t	 rate_timer;	/* the refill of a flow held by its
					   rate limit */
	struct closer	 closer;	/* the timers being closed */
	flow_cb		 cb;
	void		*arg;
};

#endif
