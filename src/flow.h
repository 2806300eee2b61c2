/*
 * One [flow:NAME]: the watcher (uv_fs_event on the pattern's directory plus a
 * periodic rescan), the tailers of the files that match, the batch being
 * filled, and the sink that delivers batches.  Acknowledged batches advance
 * each file's commit watermark and the registry entry.
 */
#ifndef DISAGENT_FLOW_H
#define DISAGENT_FLOW_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "util.h"

struct conf;
struct conf_flow;
struct disapi;
struct registry;
struct flow;
struct metrics_flow;

enum flow_event {
	FLOW_PROGRESS,	/* a batch was acknowledged or data ran out */
	FLOW_HALTED,	/* delivery needs the operator (reason given) */
};

typedef void	(*flow_cb)(struct flow *, enum flow_event, const char *reason,
		    void *arg);

struct flow_stats {
	uint64_t	 records_parsed;
	uint64_t	 bytes_parsed;
	uint64_t	 records_sent;
	uint64_t	 bytes_sent;
	uint64_t	 records_failed;
	uint64_t	 records_retried;
	uint64_t	 records_dead;	/* dead-lettered */
	uint64_t	 throttled;
	bool		 paused;
	uint64_t	 files_tracked;
	uint64_t	 files_done;	/* closed after full delivery */
	uint64_t	 truncations;	/* files read again from 0 */
	uint64_t	 records_truncated;	/* cut to the record limit */
	uint64_t	 bytes_behind;	/* size - committed, over files */
};

struct flow	*flow_new(uv_loop_t *, const struct conf *,
		    const struct conf_flow *, struct disapi *,
		    struct registry *, struct mem_budget *, bool once,
		    flow_cb, void *arg);
/* First scan, watches, timers, stream check.  0 or a negative errno. */
int		 flow_start(struct flow *) WARN_UNUSED;
/* Stop reading; send what is batched. */
void		 flow_stop(struct flow *);
/* Nothing batched and nothing in flight. */
bool		 flow_idle(const struct flow *);
/* --once: every complete line up to the size seen at start is delivered. */
bool		 flow_drained(const struct flow *);
const char	*flow_name(const struct flow *);
void		 flow_stats(const struct flow *, struct flow_stats *);
/*
 * The flow's numbers for the metrics file into *out (overwritten; name and
 * stream borrowed from the flow's configuration).
 */
void		 flow_metrics(const struct flow *, struct metrics_flow *out);
/* Resume reading if it stopped for the memory budget. */
void		 flow_kick(struct flow *);
/* Refresh the registry entries of every tracked file (TTL). */
void		 flow_touch(struct flow *);
/* Stop the sink from retrying (before the http client is closed). */
void		 flow_cancel(struct flow *);
/* Free everything; handles close asynchronously. */
void		 flow_free(struct flow *);

#endif
