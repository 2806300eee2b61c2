/*
 * One [flow:NAME]: its files (files.h), the pump that reads them into
 * batches, and the sink that delivers the batches.  Acknowledged batches
 * advance each file's commit watermark and its registry entry.  The flow
 * owns its counters (struct metrics_flow), which files, pump and sink count
 * into.
 */
#ifndef DISAGENT_FLOW_H
#define DISAGENT_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "agent/source.h"
#include "agent/source_files.h"
#include "base/util.h"

struct conf;
struct conf_flow;
struct disapi;
struct files_handover;
struct spool;
struct registry;
struct flow;
struct metrics_flow;

enum flow_event {
	/*
	 * Something the agent's checks depend on may have changed: a
	 * request ended (memory may be free, the flow may be quiet), or
	 * (--once) everything was delivered.  Only on such events, never
	 * from polling, so a waiting agent sleeps.
	 */
	FLOW_SETTLED,
	FLOW_HALTED,	/* delivery needs the operator (reason given) */
	/*
	 * A PutRecords is about to go out: the state file must bound when
	 * it can land (agent_save.c, the lease).  Synchronous, from inside the
	 * flow's own calls: the receiver saves, and calls no flow function
	 * but flow_publish and flow_floors.
	 */
	FLOW_SENDING,
};

typedef void	(*flow_cb)(struct flow *, enum flow_event, const char *reason,
		    void *arg);

struct flow	*flow_new(uv_loop_t *, const struct conf *,
		    const struct conf_flow *, struct disapi *,
		    struct registry *, struct mem_budget *, bool once,
		    flow_cb, void *arg);
/* First scan, watches, timers, stream check.  0 or a negative errno. */
int		 flow_start(struct flow *) WARN_UNUSED;
/* Stop reading; send what is batched. */
void		 flow_stop(struct flow *);
/*
 * Nothing on the wire and no request being settled by reading: what a
 * stop or a reload waits for.  Batches held back (backoff, a paused flow,
 * pacing) are not waited for: their offsets have not moved, so they are
 * sent again after the restart.
 */
bool		 flow_quiet(const struct flow *);
/* Requests on the wire. */
size_t		 flow_inflight(const struct flow *);
/* --once: every complete line up to the size seen at start is delivered. */
bool		 flow_drained(const struct flow *);
const char	*flow_name(const struct flow *);
/* The flow's counters, gauges updated (borrowed until the next call). */
const struct metrics_flow *flow_metrics(struct flow *);
/* Call fn for every file the flow reads (source.h). */
void		 flow_each_file(const struct flow *, source_file_fn, void *);
/* The flow's summed "Put N records" line, if requests were summed. */
void		 flow_log_puts(struct flow *);
/* Resume reading if it stopped for the memory budget and memory is free. */
void		 flow_kick(struct flow *);
/* Refresh the registry entries of every tracked file (TTL). */
void		 flow_touch(struct flow *);
/*
 * A save of the registry succeeded (whole files delivered before it may
 * now be cleaned up); nothing once the flow is stopping.
 */
void		 flow_saved(struct flow *);
/* Stop everything (before the http client is closed): the sink hands its
 * batches back undelivered. */
void		 flow_cancel(struct flow *);
/* Free everything; handles close asynchronously. */
void		 flow_free(struct flow *);

/* --- what a restart needs ---------------------------------------------- */

struct hash_key;

/*
 * The agent's key for the record ids (keyid.h); without it (NULL), the
 * keys carry no id.  Set before flow_start, or again at a reload that
 * keeps the flow (dedupeOnRestart changed): records framed from then on
 * follow it.
 */
void		 flow_set_agent_key(struct flow *, const struct hash_key *);
/* The stream as the state file names it: "NAME", or "id:ID". */
const char	*flow_stream_key(const struct flow *);
/* Before a save: the files' registry entries get what is delivered past
 * their committed offsets (files_publish). */
void		 flow_publish(struct flow *);
/* The sequence-number floors of its stream (sink_floors). */
void		 flow_floors(const struct flow *,
		    void (*cb)(int32_t part, int64_t last, void *), void *arg);
/* The requests on the wire and the batches left uncertain, whose records
 * may have landed unacknowledged: a stop now is not clean.  0: none. */
size_t		 flow_uncertain(const struct flow *);
/* Records the restart's read found are not all read past yet. */
bool		 flow_restart_pending(struct flow *);
/* The restart's read is over: the files it held are read (files.h). */
void		 flow_release(struct flow *);
/* --- transitions (reload, stop) ------------------------------------------ */

/* The configuration it was made from (borrowed: the agent keeps it), and
 * its section there. */
const struct conf *flow_conf(const struct flow *);
const struct conf_flow *flow_fc(const struct flow *);
/* Its sink is sending (not describing the stream, not paused). */
bool		 flow_ready(const struct flow *);
/*
 * A reload changed the flow: after flow_cancel, its open files with their
 * committed offsets, for its successor (new; files.h).
 */
struct files_handover *flow_hand_over(struct flow *);
/* Between flow_new and flow_start: read on the files its predecessor
 * handed over (steals h). */
void		 flow_adopt(struct flow *, struct files_handover *h);
/*
 * A stop, or a reload that removed the flow: after flow_cancel, the unread
 * rest of its files deleted while open goes into the spool.
 */
void		 flow_spool(struct flow *, struct spool *);

#endif
