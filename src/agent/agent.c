/*
 * Agent lifecycle.  States, each entered in agent_set_state():
 *
 *   RUNNING --HUP--> RELOADING --changed flows quiet--> RUNNING
 *   RUNNING, RELOADING --TERM/INT, --once done--> STOPPING
 *   STOPPING --quiet or deadline--> FINISHING --handles closed--> (exit)
 *
 * A reload keeps every flow whose keys did not change running untouched
 * and drains the changed and removed ones (agent_reload.c, which says
 * how); RELOADING is RUNNING for the other flows.  The HTTP clients a
 * reload replaced are closed here once they have no request left.
 *
 * Stopping stops reading, flushes the batches, and waits up to
 * shutdownTimeoutMillis for the requests on the wire -- not for batches
 * held back by a backoff or a pause, whose offsets have not moved.  Then it
 * cancels what is left (its offsets do not move), spools the unread rest of
 * the files deleted while open, saves the state, closes the http clients,
 * frees the flows, and runs the loop until every handle is closed.  Checks
 * run only after a flow's event (a request ended, --once drained),
 * deferred to one idle turn: a waiting agent sleeps.
 *
 * Every save also writes what a restart needs not to send anything twice:
 * per file the bytes acknowledged past its committed offset (the flows
 * publish them into the registry first; a batch cancelled undelivered
 * leaves its acknowledged records in its files' skip plans), and in the
 * header how the run stands (struct reg_run): the sequence-number floors
 * of each stream, the time until which a request it sent may still land
 * (the lease: a PutRecords goes out only while the state on disk covers
 * it, else a save comes first), and, only in the last save of a stop that
 * left nothing on the wire or in doubt, the clean mark that tells the next
 * start it need not read anything back.  A start without the mark, after
 * a crash, reads the streams back first (dedupe.c).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uv.h>

#include "agent/agent.h"
#include "agent/agent_int.h"
#include "agent/dedupe.h"
#include "agent/flow.h"
#include "agent/progress.h"
#include "base/hash.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/notify.h"
#include "conf/conf.h"
#include "dis/disapi.h"
#include "dis/ecsmeta.h"
#include "dis/http.h"
#include "records/keyid.h"
#include "files/spool.h"
#include "state/registry.h"

/* A save covers the requests of the next LEASE_MS (and their timeout). */
#define LEASE_MS	10000
#define LEASE_SLACK_MS	1000

static int	start_flows(struct agent *);

static const char *const state_names[] = {
	"running", "reloading", "stopping", "finishing",
};

/* The one place the state changes. */
void
agent_set_state(struct agent *a, enum agent_state st)
{
	if (a->state == st)
		return;
	log_debug("agent %s -> %s", state_names[a->state], state_names[st]);
	a->state = st;
}

/* --- temporary keys (credentialSource = ecs-metadata) -------------------- */

static void
use_keys(struct agent *a, const struct ecsmeta_keys *k)
{
	disapi_set_keys(a->api, k->ak, k->sk, k->token);
	disapi_set_expiry(a->api, k->deadline);
	disapi_set_key_error(a->api, NULL);
}

/* New keys from the metadata service, or why there are none. */
static void
on_meta_keys(const struct ecsmeta_keys *k, const char *why, void *arg)
{
	struct agent	*a = arg;

	if (a->api == NULL)
		return;		/* between clients during a reload */
	if (k != NULL)
		use_keys(a, k);
	else
		disapi_set_key_error(a->api, why);
}

static bool
on_auth_failure(void *arg)
{
	struct agent	*a = arg;

	return a->meta != NULL && ecsmeta_auth_failed(a->meta);
}

/* Start, keep or stop the metadata client for the current conf. */
void
agent_attach_keys(struct agent *a)
{
	const struct conf *c = a->conf;
	bool		 ecs = strcmp(c->credential_source, "ecs-metadata") == 0;

	if (a->meta != NULL && (!ecs ||
	    strcmp(ecsmeta_endpoint(a->meta), c->ecs_endpoint) != 0)) {
		ecsmeta_close(a->meta);
		a->meta = NULL;
	}
	if (!ecs)
		return;
	if (a->meta == NULL) {
		a->meta = ecsmeta_new(&a->loop, c->ecs_endpoint, on_meta_keys,
		    a);
		ecsmeta_start(a->meta);
	} else if (ecsmeta_keys(a->meta) != NULL)
		use_keys(a, ecsmeta_keys(a->meta));
	disapi_on_auth_failure(a->api, on_auth_failure, a);
}

/* The HTTP client and the DIS client on it, from the current conf.  Each
 * TLS connection costs ~150 KiB; DIS accepts only so much per partition
 * anyway.  Requests beyond MAX_CONNECTIONS wait in curl's queue. */
static void
open_client(struct agent *a)
{
	a->api = disapi_open(&a->loop, a->conf, MAX_CONNECTIONS, &a->http);
	agent_attach_keys(a);
}

#define SAVE_RETRY_MS	1000

static void	on_save_timer(uv_timer_t *);

static int	save_state_as(struct agent *, bool, bool);

/* --- what a restart needs ---------------------------------------------- */

struct floors {
	struct reg_stream *st;
};

static void
add_floor(int32_t part, int64_t last, void *arg)
{
	struct floors	*fl = arg;

	reg_stream_put(fl->st, part, last);
}

/*
 * The state file's floors of the run before, for the partitions of st
 * this run knows nothing of, or all of them while records that run's
 * restart read found are not read past yet (a crash now must find them
 * again).
 */
static void
keep_prev(struct agent *a, struct reg_stream *st, bool pending)
{
	const struct reg_stream *ps;
	size_t		 i;

	ps = reg_run_stream(a->prev_run, st->name);
	for (i = 0; ps != NULL && i < ps->n; i++)
		if (pending || reg_stream_get(st, ps->seq[i].part) ==
		    REG_SEQ_NONE)
			reg_stream_put(st, ps->seq[i].part, ps->seq[i].last);
}

/*
 * Before a save: every flow publishes what is delivered past its files'
 * offsets, and the header gets the run's state.  clean: the last save of
 * a stop, which is clean only if nothing may have landed unacknowledged.
 */
static void
prepare_save(struct agent *a, bool clean)
{
	struct reg_run	*run;
	struct floors	 fl;
	struct flow	*f;
	size_t		 i;
	bool		 pending;

	if (!a->took_run) {
		a->prev_run = registry_take_run(a->reg);
		a->took_run = true;
	}
	run = xcalloc(1, sizeof(*run));
	run->saved_ms = wall_ms();
	run->land_by_ms = run->saved_ms + LEASE_MS +
	    a->conf->socket_timeout_s * 1000;
	run->clean = clean;
	for (i = 0; i < a->nflows + a->ngoing; i++) {
		f = i < a->nflows ? a->flows[i] : a->going[i - a->nflows];
		flow_publish(f);
		fl.st = reg_run_add_stream(run, flow_stream_key(f));
		flow_floors(f, add_floor, &fl);
		pending = flow_restart_pending(f);
		keep_prev(a, fl.st, pending);
		if (flow_uncertain(f) || pending)
			run->clean = false;
	}
	/* No flow yet (the restart's read is under way): the floors stay as
	 * they were, for the next start. */
	for (i = 0; a->nflows + a->ngoing == 0 && a->prev_run != NULL &&
	    i < a->prev_run->nstreams; i++) {
		fl.st = reg_run_add_stream(run, a->prev_run->streams[i].name);
		keep_prev(a, fl.st, true);
	}
	registry_set_run(a->reg, run);
}

/*
 * A PutRecords of f is about to go out: if the state on disk does not
 * cover its landing (LEASE_MS after the last save, plus its timeout) or
 * has no floors of its stream yet, save now, so that a restart after a
 * crash reads back far enough.  Only the
 * registry is written: no flow is told (this runs inside a flow's call).
 */
static void
count_floor(int32_t part, int64_t last, void *arg)
{
	(void)part;
	(void)last;
	++*(size_t *)arg;
}

/* Whether the state on disk has floors for f's stream, or f has none to
 * give (a streamId flow before its first acknowledgement). */
static bool
floors_saved(struct agent *a, const struct flow *f)
{
	const struct reg_stream *st;
	size_t		 n = 0;

	st = reg_run_stream(registry_run(a->reg), flow_stream_key(f));
	if (st != NULL && st->n > 0)
		return true;
	flow_floors(f, count_floor, &n);
	return n == 0;
}

static void
lease(struct agent *a, const struct flow *f)
{
	int64_t	 now = wall_ms();
	uint64_t t0 = mono_ms();
	bool	 covered, known;

	if (a->state == AGENT_FINISHING || a->saving)
		return;
	/* The stream's floors must be on disk before its first request:
	 * a save made before its stream was described had none. */
	covered = now + a->conf->socket_timeout_s * 1000 + LEASE_SLACK_MS <=
	    a->land_by_ms && floors_saved(a, f);
	/* A new file's records can be found only through its entry; a save
	 * for it waits as long as the save timer would (a state of many
	 * files is slow to write), and what goes meanwhile is resent after
	 * a crash. */
	known = !registry_unsaved_entries(a->reg) || t0 - a->saved_ms <
	    MAX((uint64_t)a->conf->checkpoint_interval_ms,
	    20 * a->save_cost_ms);
	if (covered && known)
		return;
	a->saving = true;
	prepare_save(a, false);
	if (registry_save(a->reg, true) == 0) {
		a->land_by_ms = registry_run(a->reg)->land_by_ms;
		a->saved_ms = t0;
	}
	a->save_cost_ms = mono_ms() - t0;
	a->saving = false;
}

int
agent_save_state(struct agent *a, bool force)
{
	return save_state_as(a, force, false);
}

static int
save_state_as(struct agent *a, bool force, bool clean)
{
	uint64_t	 t0 = mono_ms();
	size_t		 i;
	int		 rc;
	bool		 writes;

	a->saving = true;
	prepare_save(a, clean);
	writes = force || registry_dirty(a->reg);
	rc = registry_save(a->reg, force);
	a->saving = false;
	if (rc == 0 && writes) {
		a->land_by_ms = registry_run(a->reg)->land_by_ms;
		a->saved_ms = t0;
	}
	a->save_cost_ms = mono_ms() - t0;
	if (rc != 0) {
		log_error("state not saved; will retry");
		if (a->state != AGENT_FINISHING)
			uv_timer_start(&a->save_timer, on_save_timer,
			    SAVE_RETRY_MS, 0);
		return rc;
	}
	/* Whole files whose complete mark is now on disk can go, spool files
	 * whose entry is gone from it (only while running: the flows of a
	 * stop are on their way out, as those a reload drains). */
	if (a->state == AGENT_RUNNING || a->state == AGENT_RELOADING) {
		for (i = 0; i < a->nflows; i++)
			flow_saved(a->flows[i]);
		agent_check_soon(a);		/* --once: cleanups may settle it */
	}
	return rc;
}

static void
on_save_timer(uv_timer_t *t)
{
	(void)agent_save_state(container_of(t, struct agent, save_timer), false);
}

/*
 * The registry went dirty (an acknowledgement moved an offset): save within
 * checkpointIntervalMillis, together with what else is acknowledged
 * meanwhile, and never spend more than about 5% of the time saving (a
 * state of many thousand files takes a while to write).
 */
static void
on_registry_dirty(void *arg)
{
	struct agent	*a = arg;
	uint64_t	 delay;

	if (a->state == AGENT_FINISHING || a->saving ||
	    uv_is_active((uv_handle_t *)&a->save_timer))
		return;
	delay = MAX((uint64_t)a->conf->checkpoint_interval_ms,
	    20 * a->save_cost_ms);
	uv_timer_start(&a->save_timer, on_save_timer, delay, 0);
}

/* --- metrics and progress ----------------------------------------------- */

/* Rewrite metricsFile (if set) from every flow's numbers. */
static void
write_metrics(struct agent *a)
{
	struct metrics_snapshot	 snap;
	struct metrics_flow	*mf;
	size_t			 i;
	int			 r;

	if (a->conf->metrics_file[0] == '\0')
		return;
	mf = xcalloc(a->nflows ? a->nflows : 1, sizeof(*mf));
	for (i = 0; i < a->nflows; i++)
		mf[i] = *flow_metrics(a->flows[i]);
	memset(&snap, 0, sizeof(snap));
	snap.flows = mf;
	snap.nflows = a->nflows;
	snap.memory_in_use = a->mem.used;
	snap.memory_limit = a->mem.limit;
	snap.uptime_s = (double)(mono_ms() - a->start_ms) / 1000.0;
	snap.version = PACKAGE_VERSION;
	r = metrics_write_file(a->conf->metrics_file, &snap);
	free(mf);
	/* Once per change, not every interval. */
	if (r != 0 && r != a->metrics_err)
		log_error("cannot write metrics file %s: %s",
		    a->conf->metrics_file, strerror(-r));
	else if (r == 0 && a->metrics_err != 0)
		log_info("metrics file %s is written again",
		    a->conf->metrics_file);
	a->metrics_err = r;
}

static void
on_metrics_timer(uv_timer_t *t)
{
	struct agent	*a = container_of(t, struct agent, metrics_timer);

	write_metrics(a);
}

static void
report(struct agent *a)
{
	const struct metrics_flow **m;
	size_t		 i;

	m = xcalloc(a->nflows ? a->nflows : 1, sizeof(*m));
	for (i = 0; i < a->nflows; i++)
		m[i] = flow_metrics(a->flows[i]);
	progress_report(&a->progress, m, a->nflows, mono_ms() - a->start_ms);
	free(m);
}

static void
on_status_timer(uv_timer_t *t)
{
	report(container_of(t, struct agent, status_timer));
}

/* --- state checks, deferred out of flow callbacks ----------------------- */

/* Whether pred holds for every flow, running and going. */
static bool
all(struct agent *a, bool (*pred)(const struct flow *))
{
	size_t	 i;

	for (i = 0; i < a->nflows; i++)
		if (!pred(a->flows[i]))
			return false;
	for (i = 0; i < a->ngoing; i++)
		if (!pred(a->going[i]))
			return false;
	return true;
}

static bool
all_going_quiet(struct agent *a)
{
	size_t	 i;

	for (i = 0; i < a->ngoing; i++)
		if (!flow_quiet(a->going[i]))
			return false;
	return true;
}

static size_t
inflight(struct agent *a)
{
	size_t	 i, n = 0;

	for (i = 0; i < a->nflows; i++)
		n += flow_inflight(a->flows[i]);
	for (i = 0; i < a->ngoing; i++)
		n += flow_inflight(a->going[i]);
	return n;
}

/*
 * --once is done: say so, and what stays in the files -- a last line
 * without its delimiter waits for it (the bytes behind once every record
 * is acknowledged), as do lines written since the run began.
 */
static void
once_delivered(struct agent *a)
{
	uint64_t	 left = 0;
	size_t		 i;

	for (i = 0; i < a->nflows; i++)
		left += flow_metrics(a->flows[i])->bytes_behind;
	if (left == 0)
		log_info("--once: everything up to the end of each file is "
		    "delivered");
	else
		log_info("--once: every complete record is delivered; %" PRIu64
		    " bytes wait in the files (a last line without its "
		    "delimiter, or lines written since the run began) for a "
		    "later run", left);
}

static void
on_old_http_closed(void *arg)
{
	(void)arg;
}

/* A client a reload replaced goes once its last request ended. */
static void
close_idle_clients(struct agent *a)
{
	size_t	 i, kept = 0;

	for (i = 0; i < a->nold_http; i++) {
		if (http_inflight(a->old_http[i]) > 0) {
			a->old_http[kept++] = a->old_http[i];
			continue;
		}
		log_debug("reload: the replaced HTTP client has no request "
		    "left; closing it");
		http_close(a->old_http[i], on_old_http_closed, a);
	}
	a->nold_http = kept;
}

static void
on_check_idle(uv_idle_t *h)
{
	struct agent	*a = container_of(h, struct agent, check_idle);
	size_t		 i;

	uv_idle_stop(h);
	if (a->state != AGENT_FINISHING)
		close_idle_clients(a);
	switch (a->state) {
	case AGENT_STOPPING:
		if (all(a, flow_quiet))
			agent_finish(a);
		return;
	case AGENT_RELOADING:
		if (all_going_quiet(a))
			agent_reload_finish(a);
		break;		/* the other flows run on */
	case AGENT_FINISHING:
		return;
	case AGENT_RUNNING:
		break;
	}
	/* A request ended somewhere: memory may be free for a flow the
	 * budget stopped. */
	for (i = 0; i < a->nflows; i++)
		flow_kick(a->flows[i]);
	if (a->once && (a->exit_code != 0 || all(a, flow_drained))) {
		if (a->exit_code == 0)
			once_delivered(a);
		agent_finish(a);
	}
}

void
agent_check_soon(struct agent *a)
{
	if (a->state != AGENT_FINISHING)
		uv_idle_start(&a->check_idle, on_check_idle);
}

static void
on_flow_event(struct flow *f, enum flow_event ev, const char *reason,
    void *arg)
{
	struct agent	*a = arg;

	if (ev == FLOW_SENDING) {
		lease(a, f);
		return;
	}
	if (ev == FLOW_HALTED && a->once && a->exit_code == 0) {
		log_error("--once: cannot deliver flow [%s]: %s",
		    flow_name(f), reason);
		a->exit_code = 1;
	}
	agent_check_soon(a);
}

/* --- stopping ----------------------------------------------------------- */

void
agent_on_stop_timer(uv_timer_t *t)
{
	struct agent	*a = container_of(t, struct agent, stop_timer);
	size_t		 i, n = 0;

	if (a->state == AGENT_RELOADING) {
		/* Cancelled, they might have landed and be sent again by
		 * the successor: wait (each ends within socketTimeOut). */
		for (i = 0; i < a->ngoing; i++)
			n += flow_inflight(a->going[i]);
		log_warn("reload: %zu request%s in flight of the changed or "
		    "removed flows did not finish within %lld ms; waiting for "
		    "them (at most socketTimeOutSeconds, %lld s)", n,
		    n == 1 ? "" : "s", a->conf->shutdown_timeout_ms,
		    a->conf->socket_timeout_s);
		return;
	}
	n = inflight(a);
	log_warn("shutdown: %zu request%s in flight did not finish within "
	    "%lld ms; the next start reads back which of their records "
	    "landed (dedupeOnRestart = %s) and sends the rest again", n,
	    n == 1 ? "" : "s", a->conf->shutdown_timeout_ms,
	    a->conf->dedupe_on_restart);
	agent_finish(a);
}

/* Stop reading everywhere and wait (up to the deadline) for quiet. */
static void
drain(struct agent *a)
{
	size_t	 i;

	for (i = 0; i < a->nflows; i++)
		flow_stop(a->flows[i]);
	uv_timer_start(&a->stop_timer, agent_on_stop_timer,
	    (uint64_t)a->conf->shutdown_timeout_ms, 0);
	agent_check_soon(a);
}

static void
stop(struct agent *a, const char *why)
{
	if (a->state == AGENT_STOPPING || a->state == AGENT_FINISHING)
		return;
	(void)notify_stopping();
	log_info("%s: stopping; sending what is batched", why);
	/* A reload under way is abandoned: its changed and removed flows
	 * stop with the others (their successors never start). */
	agent_set_state(a, AGENT_STOPPING);
	drain(a);
}

/* --- the spool ----------------------------------------------------------- */

static struct spool *
spool_open(struct agent *a)
{
	struct spool	*sp;
	char		*dir = conf_spool_dir(a->conf);

	sp = spool_new(dir, (uint64_t)a->conf->spool_max_bytes);
	free(dir);
	return sp;
}

/* The deleted-but-open files of the flows in v (cancelled) into the spool,
 * its directory synced: the state saved next names them. */
void
agent_spool_flows(struct agent *a, struct flow **v, size_t n)
{
	struct spool	*sp;
	size_t		 i;
	int		 rc;

	if (n == 0)
		return;
	sp = spool_open(a);
	for (i = 0; i < n; i++)
		flow_spool(v[i], sp);
	rc = spool_sync(sp);
	if (rc != 0)
		log_error("spool: cannot sync directory %s: %s", spool_dir(sp),
		    strerror(-rc));
	spool_free(sp);
}

static void
on_ttl_timer(uv_timer_t *t)
{
	struct agent	*a = container_of(t, struct agent, ttl_timer);
	size_t		 i;

	if (a->conf->checkpoint_ttl_days <= 0 || a->state != AGENT_RUNNING)
		return;
	/* Files still tracked are alive, however quiet. */
	for (i = 0; i < a->nflows; i++)
		flow_touch(a->flows[i]);
	registry_expire(a->reg, wall_s(),
	    (int64_t)a->conf->checkpoint_ttl_days * 86400);
}

static void
on_signal(uv_signal_t *h, int signum)
{
	struct agent	*a = h->data;

	if (signum == SIGHUP) {
		agent_reload(a);
		return;
	}
	if (a->state == AGENT_STOPPING || a->state == AGENT_FINISHING) {
		log_warn("second signal: exiting now; the next start reads "
		    "back which records in flight landed (dedupeOnRestart = "
		    "%s) and sends the rest again",
		    a->conf->dedupe_on_restart);
		(void)agent_save_state(a, true);
		exit(0);
	}
	stop(a, signum == SIGTERM ? "SIGTERM" : "SIGINT");
}

static void
free_flows(struct agent *a)
{
	size_t	 i;

	for (i = 0; i < a->nflows; i++)
		flow_free(a->flows[i]);
	for (i = 0; i < a->ngoing; i++)
		flow_free(a->going[i]);
	a->nflows = a->ngoing = 0;
	free(a->flows);
	free(a->going);
	free(a->succ);
	a->flows = a->going = NULL;
	a->succ = NULL;
	disapi_free(a->api);
	a->api = NULL;
}

/* The last client closed: nothing can call into a flow any more. */
static void
clients_closed(struct closer *c)
{
	struct agent	*a = container_of(c, struct agent, clients);

	a->http = NULL;
	free_flows(a);
}

static void
http_closed(void *arg)
{
	struct agent	*a = arg;

	(void)closer_drop(&a->clients);
}

/* Say how the stop left the state: a next start resends nothing, or reads
 * back first. */
static void
log_clean(struct agent *a)
{
	const struct reg_run *run = registry_run(a->reg);

	if (run != NULL && run->clean)
		log_info("state saved as a clean stop: the next start sends "
		    "nothing twice");
	else
		log_info("state saved; records on the wire or without a reply "
		    "may have landed: the next start reads them back first "
		    "(dedupeOnRestart = %s)", a->conf->dedupe_on_restart);
}

/* Cancel what is left, spool, save, and close every handle. */
void
agent_finish(struct agent *a)
{
	size_t	 i;

	if (a->state == AGENT_FINISHING)
		return;
	agent_set_state(a, AGENT_FINISHING);
	if (a->once && a->exit_code == 0 && !all(a, flow_drained)) {
		log_error("--once: stopped before everything was delivered; "
		    "the next run continues from the saved offsets");
		a->exit_code = 1;
	}
	/* Cancelled first: nothing moves an offset while the deleted files
	 * are spooled from their committed offsets. */
	for (i = 0; i < a->nflows; i++)
		flow_cancel(a->flows[i]);
	for (i = 0; i < a->ngoing; i++)
		flow_cancel(a->going[i]);
	agent_spool_flows(a, a->flows, a->nflows);
	agent_spool_flows(a, a->going, a->ngoing);
	if (save_state_as(a, true, true) != 0 && a->once) {
		log_error("--once: the state could not be saved to %s; the "
		    "next run sends again what this one delivered",
		    a->conf->checkpoint_file);
		a->exit_code = 1;
	}
	log_clean(a);
	report(a);
	write_metrics(a);
	uv_close((uv_handle_t *)&a->metrics_timer, NULL);
	uv_close((uv_handle_t *)&a->save_timer, NULL);
	uv_close((uv_handle_t *)&a->status_timer, NULL);
	uv_close((uv_handle_t *)&a->stop_timer, NULL);
	uv_close((uv_handle_t *)&a->ttl_timer, NULL);
	uv_close((uv_handle_t *)&a->watchdog_timer, NULL);
	uv_close((uv_handle_t *)&a->check_idle, NULL);
	uv_close((uv_handle_t *)&a->sig_term, NULL);
	uv_close((uv_handle_t *)&a->sig_int, NULL);
	uv_close((uv_handle_t *)&a->sig_hup, NULL);
	ecsmeta_close(a->meta);
	a->meta = NULL;
	/* The flows go once every client closed: their requests' callbacks
	 * (cancelled) reach the sinks until then. */
	closer_init(&a->clients, clients_closed);
	for (i = 0; i < a->nold_http; i++) {
		closer_hold(&a->clients);
		http_close(a->old_http[i], http_closed, a);
	}
	a->nold_http = 0;
	closer_hold(&a->clients);
	http_close(a->http, http_closed, a);
	closer_release(&a->clients);
}

/* --- start -------------------------------------------------------------- */

/* Spool files the state does not name are left over: remove them. */
static void
sweep_spool(struct agent *a)
{
	struct spool	*sp = spool_open(a);

	spool_sweep(sp, a->reg);
	spool_free(sp);
}

/* WATCHDOG=1 from the loop itself: a stuck loop gets restarted. */
static void
on_watchdog_timer(uv_timer_t *t)
{
	(void)t;
	(void)notify_watchdog();
}

static void
start_timer(uv_timer_t *t, uv_timer_cb cb, uint64_t first, uint64_t every)
{
	if (every > 0)
		uv_timer_start(t, cb, first, every);
}

static void
start_handles(struct agent *a)
{
	const struct conf *c = a->conf;
	uint64_t	 wd_ms = notify_watchdog_usec() / 2000;

	uv_timer_init(&a->loop, &a->save_timer);
	uv_timer_init(&a->loop, &a->status_timer);
	uv_timer_init(&a->loop, &a->stop_timer);
	uv_timer_init(&a->loop, &a->ttl_timer);
	uv_timer_init(&a->loop, &a->watchdog_timer);
	uv_timer_init(&a->loop, &a->metrics_timer);
	if (c->metrics_file[0] != '\0')
		start_timer(&a->metrics_timer, on_metrics_timer,
		    (uint64_t)c->metrics_interval_ms,
		    (uint64_t)c->metrics_interval_ms);
	start_timer(&a->watchdog_timer, on_watchdog_timer, wd_ms, wd_ms);
	uv_idle_init(&a->loop, &a->check_idle);
	uv_signal_init(&a->loop, &a->sig_term);
	uv_signal_init(&a->loop, &a->sig_int);
	uv_signal_init(&a->loop, &a->sig_hup);
	a->sig_term.data = a->sig_int.data = a->sig_hup.data = a;
	uv_signal_start(&a->sig_term, on_signal, SIGTERM);
	uv_signal_start(&a->sig_int, on_signal, SIGINT);
	uv_signal_start(&a->sig_hup, on_signal, SIGHUP);
	/* Right after the first scan (the loop's first turn), then hourly:
	 * not a minute in, when an idle agent should be asleep. */
	start_timer(&a->ttl_timer, on_ttl_timer, 0, 3600 * 1000);
	start_timer(&a->status_timer, on_status_timer,
	    (uint64_t)c->status_period_s * 1000,
	    (uint64_t)c->status_period_s * 1000);
}

struct flow *
agent_make_flow(struct agent *a, const struct conf_flow *fc)
{
	struct flow	*f;

	f = flow_new(&a->loop, a->conf, fc, a->api, a->reg, &a->mem,
	    a->once, on_flow_event, a);
	if (agent_id_key(a) != NULL)
		flow_set_agent_key(f, agent_id_key(a));
	return f;
}

const struct hash_key *
agent_id_key(const struct agent *a)
{
	return strcmp(a->conf->dedupe_on_restart, "auto") == 0 ?
	    &a->agent_key : NULL;
}

static int
start_flows(struct agent *a)
{
	const struct conf *c = a->conf;
	size_t		 i;
	int		 rc;

	a->flows = xcalloc(c->nflows ? c->nflows : 1, sizeof(*a->flows));
	for (i = 0; i < c->nflows; i++) {
		if (!c->flows[i].enable)
			continue;
		a->flows[a->nflows] = agent_make_flow(a, &c->flows[i]);
		rc = flow_start(a->flows[a->nflows++]);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* This agent's key for record ids: the host and the state file. */
static void
agent_key(struct agent *a)
{
	char	 mid[128] = "", host[256] = "";
	FILE	*fp;

	fp = fopen("/etc/machine-id", "r");
	if (fp != NULL) {
		if (fgets(mid, sizeof(mid), fp) == NULL)
			mid[0] = '\0';
		mid[strcspn(mid, "\n")] = '\0';
		fclose(fp);
	}
	if (gethostname(host, sizeof(host) - 1) != 0)
		host[0] = '\0';
	keyid_agent(mid, host, a->conf->checkpoint_file, &a->agent_key);
}

/*
 * After a crash, before any flow reads: which records of the crashed run
 * landed (dedupe.h).  A signal meanwhile stops the agent as usual.
 */
static void
read_back(struct agent *a)
{
	struct dedupe	*d;

	if (a->state == AGENT_FINISHING)
		return;
	d = dedupe_start(&a->loop, a->api, a->conf, a->reg, &a->agent_key);
	while (!dedupe_done(d) && a->state != AGENT_FINISHING)
		uv_run(&a->loop, UV_RUN_ONCE);
	dedupe_free(d);
}

/*
 * One process owns a state file: a second agent (or import-state) would
 * overwrite the first one's offsets with its own.  0, or -1 when another
 * holds it (logged).  A lock file that cannot be made is only a warning:
 * the saves will say what is wrong with the directory.
 */
static int
take_lock(struct registry *reg, const char *path)
{
	char		*lock;
	long		 pid;
	int		 r;

	r = registry_lock(reg, &pid);
	if (r == 0)
		return 0;
	lock = registry_lock_path(path);
	if (r == -EWOULDBLOCK) {
		if (pid > 0)
			log_error("state file %s is in use by another process "
			    "(pid %ld holds %s): refusing to start", path, pid,
			    lock);
		else
			log_error("state file %s is in use by another process "
			    "(%s is locked): refusing to start", path, lock);
	} else
		log_warn("cannot lock the state file: %s: %s; starting "
		    "without the lock", lock, strerror(-r));
	free(lock);
	return r == -EWOULDBLOCK ? -1 : 0;
}

int
agent_run(struct conf **confp, const char *path, bool once)
{
	struct agent	 a;
	const struct conf *conf = *confp;
	int		 rc;

	memset(&a, 0, sizeof(a));
	a.confp = confp;
	a.conf = conf;
	a.conf_path = path;
	mem_set_limit(&a.mem, (size_t)conf->max_memory_bytes);
	a.once = once;
	a.state = AGENT_RUNNING;
	a.start_ms = mono_ms();
	if (uv_loop_init(&a.loop) != 0)
		fatalx("uv_loop_init failed");
	a.reg = registry_new(conf->checkpoint_file);
	if (take_lock(a.reg, conf->checkpoint_file) != 0) {
		registry_free(a.reg);
		uv_loop_close(&a.loop);
		return 1;
	}
	if (registry_load(a.reg) != 0) {
		log_error("state file %s and its backup are unreadable; "
		    "refusing to start from zero or from the end.  Move it "
		    "aside to start over.", conf->checkpoint_file);
		registry_free(a.reg);
		uv_loop_close(&a.loop);
		return 1;
	}
	sweep_spool(&a);
	open_client(&a);
	start_handles(&a);
	registry_on_dirty(a.reg, on_registry_dirty, &a);
	if (registry_dirty(a.reg))	/* loaded from the .bak */
		on_registry_dirty(&a);
	/* Temporary keys: the first answer of the metadata service (a few
	 * ms; its timeout at worst) before any flow asks DIS anything. */
	while (a.meta != NULL && !ecsmeta_answered(a.meta) &&
	    a.state != AGENT_FINISHING)
		uv_run(&a.loop, UV_RUN_ONCE);
	agent_key(&a);
	read_back(&a);
	/* (A signal while waiting has started agent_finish() already.) */
	rc = a.state == AGENT_FINISHING ? 0 : start_flows(&a);
	if (rc != 0) {
		a.exit_code = 1;
		agent_finish(&a);
	} else if (a.state != AGENT_FINISHING) {
		log_info("Startup completed in %" PRIu64 " ms.",
		    mono_ms() - a.start_ms);
		(void)notify_ready();
		agent_check_soon(&a);		/* --once with nothing to send */
	}
	uv_run(&a.loop, UV_RUN_DEFAULT);
	if (uv_loop_close(&a.loop) != 0)
		log_warn("event loop closed with handles still open");
	registry_free(a.reg);
	reg_run_free(a.prev_run);
	free(a.flows);
	free(a.old_http);
	while (a.nretired > 0)
		conf_free(a.retired[--a.nretired]);
	free(a.retired);
	log_info("peak memory held in records: %zu bytes (budget %zu)",
	    a.mem.peak, a.mem.limit);
	return a.exit_code;
}
