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
 * reload replaced are closed once they have no request left
 * (agent_clients.c).
 *
 * Stopping and the finish are agent_stop.c's, the state saves
 * agent_save.c's, what all of them share (the state's setter, the walks
 * over the flows, the request for a check) agent_core.c's (agent_int.h
 * says what each offers).  Checks run only
 * after a flow's event (a request ended, --once drained), deferred to one
 * idle turn: a waiting agent sleeps.
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
#include "agent/renamed.h"
#include "base/hash.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/notify.h"
#include "conf/conf.h"
#include "dis/ecsmeta.h"
#include "records/keyid.h"
#include "state/registry.h"

static int	start_flows(struct agent *);

/* --- metrics, progress and expiry --------------------------------------- */

static void
on_metrics_timer(uv_timer_t *t)
{
	struct agent	*a = container_of(t, struct agent, metrics_timer);

	agent_write_metrics(a);
}

static void
on_status_timer(uv_timer_t *t)
{
	agent_report(container_of(t, struct agent, status_timer));
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

/* --- state checks, deferred out of flow callbacks ----------------------- */

static bool
all_going_quiet(struct agent *a)
{
	size_t	 i;

	for (i = 0; i < a->ngoing; i++)
		if (!flow_quiet(a->going[i]))
			return false;
	return true;
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
on_check_idle(uv_idle_t *h)
{
	struct agent	*a = container_of(h, struct agent, check_idle);
	size_t		 i;

	uv_idle_stop(h);
	if (a->state != AGENT_FINISHING)
		agent_close_idle_clients(a);
	switch (a->state) {
	case AGENT_STOPPING:
		if (agent_all(a, flow_quiet))
			agent_finish(a);
		return;
	case AGENT_RELOADING:
		if (all_going_quiet(a))
			agent_reload_finish(a);
		break;		/* the other flows run on */
	case AGENT_FINISHING:
		return;
	case AGENT_RUNNING:
		agent_reload_queued(a);
		if (a->state != AGENT_RUNNING)
			return;
		break;
	}
	/* A request ended somewhere: memory may be free for a flow the
	 * budget stopped. */
	for (i = 0; i < a->nflows; i++)
		flow_kick(a->flows[i]);
	if (a->once && (a->exit_code != 0 || agent_all(a, flow_drained))) {
		if (a->exit_code == 0)
			once_delivered(a);
		agent_finish(a);
	}
}

/* --- signals ------------------------------------------------------------ */

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
	agent_stop(a, signum == SIGTERM ? "SIGTERM" : "SIGINT");
}

/* --- start -------------------------------------------------------------- */

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
	a->on_check = on_check_idle;
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

void
agent_end_read_back(struct agent *a)
{
	registry_set_hold(a->reg, NULL, NULL);
	dedupe_free(a->dedupe);
	a->dedupe = NULL;
}

/* The restart's read is over: the flows read the files it held. */
static void
on_read_back(void *arg)
{
	struct agent	*a = arg;
	size_t		 i;

	agent_end_read_back(a);
	for (i = 0; i < a->nflows; i++)
		flow_release(a->flows[i]);
}

/*
 * After a crash, before any flow reads: which records of the crashed run
 * landed (dedupe.h).  The flows start once every partition was read to
 * its end; only the files whose records may still land wait for the read
 * to be over (--once waits for it all).  A signal meanwhile stops the
 * agent as usual.
 */
static void
read_back(struct agent *a)
{
	if (a->state == AGENT_FINISHING)
		return;
	a->dedupe = dedupe_start(&a->loop, a->api, a->conf, a->reg,
	    &a->agent_key, on_read_back, a);
	if (a->dedupe != NULL)
		registry_set_hold(a->reg, dedupe_holds, a->dedupe);
	while (a->dedupe != NULL && a->state != AGENT_FINISHING &&
	    (a->once ? !dedupe_done(a->dedupe) : !dedupe_ready(a->dedupe)))
		uv_run(&a->loop, UV_RUN_ONCE);
	if (a->dedupe != NULL && dedupe_done(a->dedupe))
		agent_end_read_back(a);
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
	a.started_wall = wall_ms();
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
	/* Before the flows, which find their entries by name. */
	renamed_at_start(a.reg, conf);
	if (agent_http_start(&a) != 0) {
		registry_free(a.reg);
		uv_loop_close(&a.loop);
		return 1;
	}
	agent_sweep_spool(&a);
	agent_open_client(&a);
	start_handles(&a);
	agent_save_start(&a);
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
