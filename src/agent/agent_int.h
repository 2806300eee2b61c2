/*
 * Inside agent.c and the agent_*.c beside it: the agent (one per
 * process).  agent.c owns the struct: its lifecycle, the timers and
 * signals, the deferred state checks, the start; agent_clients.c the HTTP
 * and DIS clients and their keys; agent_save.c the state saves;
 * agent_stop.c the stop, the spool and the finish; agent_reload.c carries
 * a reload out.  Nothing else includes it.
 */
#ifndef DISAGENT_AGENT_INT_H
#define DISAGENT_AGENT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "agent/progress.h"
#include "base/closer.h"
#include "base/hash.h"
#include "base/util.h"

struct reg_run;

struct conf;
struct conf_flow;
struct disapi;
struct ecsmeta;
struct flow;
struct http;
struct httpd;
struct registry;

#define MAX_CONNECTIONS	16

enum agent_state {
	AGENT_RUNNING,
	AGENT_RELOADING,
	AGENT_STOPPING,
	AGENT_FINISHING,
};

struct agent {
	uv_loop_t	 loop;
	struct conf	**confp;	/* owned by the caller, replaced on HUP */
	const struct conf *conf;	/* *confp */
	const char	*conf_path;
	struct conf	**retired;	/* earlier confs that kept flows use */
	size_t		 nretired;
	struct mem_budget mem;
	struct http	*http;
	struct http	**old_http;	/* replaced by a reload, requests on
					   the wire: closed once they end */
	size_t		 nold_http;
	struct closer	 clients;	/* closing at the finish: the flows
					   go with the last */
	struct disapi	*api;		/* signs every DIS call; uses http */
	struct ecsmeta	*meta;		/* credentialSource = ecs-metadata */
	struct registry	*reg;
	struct flow	**flows;	/* running */
	size_t		 nflows;
	struct flow	**going;	/* a reload drains them: changed ones
					   (succ[i] is the successor) and
					   removed ones (succ[i] NULL) */
	const struct conf_flow **succ;
	size_t		 ngoing;
	enum agent_state state;
	bool		 once;
	int		 exit_code;
	uint64_t	 start_ms;
	int64_t		 started_wall;	/* wall_ms() of the start */
	uv_signal_t	 sig_term;
	uv_signal_t	 sig_int;
	uv_signal_t	 sig_hup;
	uv_timer_t	 save_timer;	/* the state, soon after a change */
	uint64_t	 save_cost_ms;	/* how long the last save took */
	uv_timer_t	 status_timer;
	uv_timer_t	 stop_timer;	/* shutdown or reload deadline */
	uv_timer_t	 ttl_timer;	/* checkpointTimeToLiveDays */
	uv_timer_t	 watchdog_timer;	/* sd_notify WATCHDOG=1 */
	uv_timer_t	 metrics_timer;	/* metricsFile */
	int		 metrics_err;	/* last write result, to log once */
	uv_idle_t	 check_idle;	/* deferred state checks */
	uv_idle_cb	 on_check;	/* ... what they are (agent.c) */
	struct progress	 progress;
	struct hash_key	 agent_key;	/* keyid.h: this agent's record ids */
	struct reg_run	*prev_run;	/* the state file's, once replaced */
	struct dedupe	*dedupe;	/* the restart's read, while the files
					   it holds wait for its end */
	int64_t		 land_by_ms;	/* what the state on disk covers */
	uint64_t	 saved_ms;	/* mono_ms() of the last save written */
	/* The timer's save on the thread pool (registry_save_start): what
	 * it covers, and when it began. */
	int64_t		 flight_land_by;
	uint64_t	 flight_t0;
	bool		 flight_new_floors; /* a stream's first floors */
	bool		 took_run;	/* prev_run is taken */
	bool		 saving;	/* in a save: no other, no timer */
	bool		 hup_queued;	/* a SIGHUP came while a reload
					   drained: one more reload after */
	uint64_t	 save_failed_ms; /* mono_ms() of the first failed save
					   since the last good one; 0: none */
	struct httpd	*httpd;		/* httpListen; NULL: none */
};

/* agent_core.c */
/* The one place the state changes (logged at debug level). */
void		 agent_set_state(struct agent *, enum agent_state);
/* Run the state checks at the next idle turn. */
void		 agent_check_soon(struct agent *);
/* Whether pred holds for every flow, running and going. */
bool		 agent_all(struct agent *, bool (*pred)(const struct flow *));
/* The requests in flight of every flow, running and going. */
size_t		 agent_inflight(struct agent *);
/* The progress line and the metrics file, once more at the finish. */
void		 agent_last_report(struct agent *);
/* A new flow of the current conf (not started), wired to the agent. */
struct flow	*agent_make_flow(struct agent *, const struct conf_flow *);
/* The agent key for a flow's record ids (dedupeOnRestart = auto), or NULL. */
const struct hash_key *agent_id_key(const struct agent *);
/* Rewrite metricsFile (if set) from every flow's numbers. */
void		 agent_write_metrics(struct agent *);
/* The progress line (statusIntervalMillis). */
void		 agent_report(struct agent *);

/* agent_clients.c */
/* The HTTP client and the DIS client on it, from the current conf. */
void		 agent_open_client(struct agent *);
/* The keys of credentialSource = ecs-metadata into the current client. */
void		 agent_attach_keys(struct agent *);
/* Close the clients a reload replaced that have no request left. */
void		 agent_close_idle_clients(struct agent *);

/* agent_save.c */
/* Save when the registry goes dirty, from now on. */
void		 agent_save_start(struct agent *);
/* Save the registry now (force: even when clean); 0 or -errno, logged. */
int		 agent_save_state(struct agent *, bool force);
/* The last save of a stop: forced, clean when nothing may have landed
 * unacknowledged; 0 or -errno, logged. */
int		 agent_save_stop(struct agent *);
/* A PutRecords of f is about to go out: save first unless the state on
 * disk covers its landing. */
void		 agent_lease(struct agent *, const struct flow *);

/* agent_reload.c */
/* A SIGHUP queued during a drain, applied now that the agent runs. */
void		 agent_reload_queued(struct agent *);
/* agent_http.c (httpd.h) */
/* The HTTP server of httpListen, if set: 0, or -1 when it cannot listen
 * (logged). */
int		 agent_http_start(struct agent *);
/* A reload: a new httpListen is listened on (or kept, logged, when it
 * cannot be), healthStallSeconds applied. */
void		 agent_http_reload(struct agent *);
/* Every flow's counters into snap, as the metrics file and /metrics show
 * them: returns snap->flows, new (free it). */
struct metrics_flow;
struct metrics_snapshot;
struct metrics_flow *agent_metrics_snapshot(struct agent *,
		    struct metrics_snapshot *snap);

/* agent_stop.c */
/* TERM or INT (why): stop reading, wait (up to the deadline) for quiet. */
void		 agent_stop(struct agent *, const char *why);
/* The shutdown or reload deadline passed. */
void		 agent_on_stop_timer(uv_timer_t *);
/* The deleted-but-open files of the cancelled flows v[0..n) spooled. */
void		 agent_spool_flows(struct agent *, struct flow **v, size_t n);
/* Remove the spool files the state does not name (at start). */
void		 agent_sweep_spool(struct agent *);
/* Cancel what is left, spool, save, and close every handle. */
void		 agent_finish(struct agent *);
/* The restart's read ends here, if it has not (the files it held stay
 * unread: a stop). */
void		 agent_end_read_back(struct agent *);

/* agent_reload.c */
/* SIGHUP: read the configuration again and carry the reload out. */
void		 agent_reload(struct agent *);
/* Nothing of the going flows is on the wire: hand over, spool, restart. */
void		 agent_reload_finish(struct agent *);

#endif
