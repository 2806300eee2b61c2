/*
 * What a reload does with each flow, from the old and the new
 * configuration (conf_diff.c), and the one line that says so.  A flow
 * whose keys did not change is kept running untouched: its files, batches,
 * requests on the wire and backoff.  One whose keys changed is drained and
 * hands its open files to its successor; a removed one is drained and
 * spools its deleted-but-open files; an added one starts.  A change of the
 * endpoint, the keys, the proxy or the CA gives the agent a new HTTP
 * client and keeps the flows, except those that wait (paused, or still
 * describing their stream), which start over on it at once.
 */
#ifndef DISAGENT_RELOAD_H
#define DISAGENT_RELOAD_H

#include <stdbool.h>

#include "base/util.h"

struct conf;
struct conf_flow;

enum reload_fate {
	RELOAD_KEPT,
	RELOAD_CHANGED,		/* drained, then its successor */
	RELOAD_REMOVED,		/* drained, then gone */
};

/* The [agent] side of a reload from old to nc. */
struct reload_plan {
	const struct conf *old, *nc;	/* borrowed */
	unsigned	 agent;		/* CONF_DIFF_* */
	const char	*agent_key;	/* the first key of the costliest */
	struct buf	 kept, changed, added, removed;	/* names, ", " */
	const struct conf_flow **renamed;	/* nc's flows that succeed a
						   renamed one */
	size_t		 nrenamed;
};

void		 reload_plan_init(struct reload_plan *, const struct conf *old,
		    const struct conf *nc);
void		 reload_plan_cleanup(struct reload_plan *);
/* Whether the HTTP client is replaced. */
bool		 reload_new_client(const struct reload_plan *);
/*
 * The fate of the running flow fc (of old); ready: its sink sends (not
 * paused, not describing).  *succ: its successor in nc when changed.
 * Noted for the log line.
 */
enum reload_fate reload_flow(struct reload_plan *, const struct conf_flow *fc,
		    bool ready, const struct conf_flow **succ);
/* Whether nc's flow fc is new (no running flow of its name); noted. */
bool		 reload_added(struct reload_plan *, const struct conf_flow *fc);
/* "reload: kept [a], changed [b (maxBufferAgeMillis)], added [], removed
 * []; a new HTTP client (sk)" at INFO. */
void		 reload_plan_log(const struct reload_plan *);

#endif
