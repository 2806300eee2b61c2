/*
 * Agent lifecycle.  Shutdown order (style.md): stop reading, flush batches,
 * wait for in-flight requests up to shutdownTimeoutMillis, save the state,
 * cancel what is left (its offsets do not move), close the http client, free
 * the flows, and run the loop until every handle is closed.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "agent.h"
#include "conf.h"
#include "disapi.h"
#include "flow.h"
#include "http.h"
#include "log.h"
#include "metrics.h"
#include "notify.h"
#include "registry.h"

#define MAX_CONNECTIONS	16

struct agent {
	uv_loop_t	 loop;
	struct conf	**confp;	/* owned by the caller, replaced on HUP */
	const struct conf *conf;	/* *confp */
	const char	*conf_path;
	struct conf	*next_conf;	/* being switched to */
	struct mem_budget mem;
	struct http	*http;
	struct disapi	*api;		/* signs every DIS call; uses http */
	struct registry	*reg;
	struct flow	**flows;
	size_t		 nflows;
	bool		 once;
	bool		 stopping;
	bool		 finishing;
	bool		 reloading;
	int		 exit_code;
	uint64_t	 start_ms;
	uv_signal_t	 sig_term;
	uv_signal_t	 sig_int;
	uv_signal_t	 sig_hup;
	uv_timer_t	 ckpt_timer;
	uv_timer_t	 status_timer;
	uv_timer_t	 stop_timer;	/* shutdown or reload deadline */
	uv_timer_t	 ttl_timer;	/* checkpointTimeToLiveDays */
	uv_timer_t	 watchdog_timer;	/* sd_notify WATCHDOG=1 */
	uv_timer_t	 metrics_timer;	/* metricsFile */
	int		 metrics_err;	/* last write result, to log once */
	uv_idle_t	 check_idle;	/* deferred state checks */
	/* Failed records by code at the last progress line. */
	struct metrics_code_count last_failed[4 * METRICS_NCODES];
	size_t		 nlast_failed;
};

static void	finish(struct agent *);

/* The HTTP client and the DIS client on it, from the current conf.  Each
 * TLS connection costs ~150 KiB; DIS accepts only so much per partition
 * anyway.  Requests beyond MAX_CONNECTIONS wait in curl's queue. */
static void
open_client(struct agent *a)
{
	a->api = disapi_open(&a->loop, a->conf, MAX_CONNECTIONS, &a->http);
}
static void	finish_reload(struct agent *);
static int	start_flows(struct agent *);

static void
save_state(struct agent *a, bool force)
{
	if (registry_save(a->reg, force) != 0)
		log_error("state not saved; will retry");
}

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
	mf = xcalloc(a->nflows, sizeof(*mf));
	for (i = 0; i < a->nflows; i++)
		flow_metrics(a->flows[i], &mf[i]);
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

	if (!a->reloading)
		write_metrics(a);
}

static void
on_ckpt_timer(uv_timer_t *t)
{
	save_state(container_of(t, struct agent, ckpt_timer), false);
}

static uint64_t *
code_slot(struct metrics_code_count *v, size_t *n, size_t max,
    const char *code)
{
	size_t	 i;

	for (i = 0; i < *n; i++)
		if (strcmp(v[i].code, code) == 0)
			return &v[i].count;
	if (*n == max)
		return NULL;
	snprintf(v[*n].code, sizeof(v[*n].code), "%s", code);
	v[*n].count = 0;
	return &v[(*n)++].count;
}

/* "DIS.4303 12, DIS.5000 3": records failed by code since the last line. */
static void
report_failures(struct agent *a)
{
	struct metrics_code_count cur[4 * METRICS_NCODES];
	struct metrics_flow m;
	struct buf	 line;
	size_t		 ncur = 0, i, j;
	uint64_t	*slot, before;

	for (i = 0; i < a->nflows; i++) {
		flow_metrics(a->flows[i], &m);
		for (j = 0; j < m.nfailed; j++) {
			slot = code_slot(cur, &ncur, ARRAY_SIZE(cur),
			    m.failed[j].code);
			if (slot != NULL)
				*slot += m.failed[j].count;
		}
	}
	buf_init(&line);
	for (i = 0; i < ncur; i++) {
		slot = code_slot(a->last_failed, &a->nlast_failed,
		    ARRAY_SIZE(a->last_failed), cur[i].code);
		before = slot != NULL && *slot <= cur[i].count ? *slot : 0;
		if (cur[i].count > before)
			buf_printf(&line, "%s%s %" PRIu64, line.len ? ", " : "",
			    cur[i].code, cur[i].count - before);
		if (slot != NULL)
			*slot = cur[i].count;
	}
	if (line.len > 0)
		log_info("Agent: failed records since the last report: %s",
		    line.data);
	buf_cleanup(&line);
}

static void
report(struct agent *a)
{
	struct flow_stats fs, sum;
	size_t		 i;

	memset(&sum, 0, sizeof(sum));
	for (i = 0; i < a->nflows; i++) {
		flow_stats(a->flows[i], &fs);
		sum.records_parsed += fs.records_parsed;
		sum.bytes_parsed += fs.bytes_parsed;
		sum.records_sent += fs.records_sent;
		sum.records_failed += fs.records_failed;
		sum.records_dead += fs.records_dead;
		sum.records_truncated += fs.records_truncated;
		sum.paused += fs.paused;
		sum.files_tracked += fs.files_tracked;
		sum.files_done += fs.files_done;
		sum.bytes_behind += fs.bytes_behind;
	}
	log_info("Agent: Progress: [%" PRIu64 " records (%" PRIu64
	    " bytes) / %" PRIu64 " files] parsed, and [%" PRIu64
	    " records / %" PRIu64 " files] sent successfully to destinations."
	    " Uptime: %" PRIu64 "ms", sum.records_parsed, sum.bytes_parsed,
	    sum.files_tracked + sum.files_done, sum.records_sent,
	    sum.files_done, mono_ms() - a->start_ms);
	log_info("Agent: Tailing is %.2f MB (%" PRIu64 " bytes) behind.",
	    (double)sum.bytes_behind / (1024.0 * 1024.0), sum.bytes_behind);
	(void)notify_status("%" PRIu64 " records sent, %.2f MB behind, "
	    "%" PRIu64 " files, %d paused flows", sum.records_sent,
	    (double)sum.bytes_behind / (1024.0 * 1024.0), sum.files_tracked,
	    (int)sum.paused);
	report_failures(a);
	if (sum.records_failed > 0 || sum.records_dead > 0 || sum.paused ||
	    sum.records_truncated > 0)
		log_info("Agent: %" PRIu64 " records failed and were retried, "
		    "%" PRIu64 " dead-lettered, %" PRIu64 " truncated to the "
		    "record limit; %d flow%s paused", sum.records_failed,
		    sum.records_dead, sum.records_truncated, (int)sum.paused,
		    sum.paused == 1 ? "" : "s");
}

static void
on_status_timer(uv_timer_t *t)
{
	report(container_of(t, struct agent, status_timer));
}

/* --- state checks, deferred out of flow callbacks ----------------------- */

static bool
all(struct agent *a, bool (*pred)(const struct flow *))
{
	size_t	 i;

	for (i = 0; i < a->nflows; i++)
		if (!pred(a->flows[i]))
			return false;
	return true;
}

static void
on_check_idle(uv_idle_t *h)
{
	struct agent	*a = container_of(h, struct agent, check_idle);
	size_t		 i;

	uv_idle_stop(h);
	if (a->finishing)
		return;
	if (a->stopping) {
		if (all(a, flow_idle))
			finish(a);
		return;
	}
	if (a->reloading) {
		if (a->http != NULL && all(a, flow_idle))
			finish_reload(a);
		return;
	}
	for (i = 0; i < a->nflows; i++)
		flow_kick(a->flows[i]);
	if (a->exit_code != 0 && a->once) {
		finish(a);
		return;
	}
	if (a->once && !a->stopping && all(a, flow_drained)) {
		log_info("--once: everything up to the end of each file is "
		    "delivered");
		finish(a);
	}
}

static void
check_soon(struct agent *a)
{
	if (!a->finishing)
		uv_idle_start(&a->check_idle, on_check_idle);
}

static void
on_flow_event(struct flow *f, enum flow_event ev, const char *reason,
    void *arg)
{
	struct agent	*a = arg;

	if (ev == FLOW_HALTED && a->once && a->exit_code == 0) {
		log_error("--once: cannot deliver flow [%s]: %s",
		    flow_name(f), reason);
		a->exit_code = 1;
	}
	check_soon(a);
}

/* --- stopping ----------------------------------------------------------- */

static void
on_stop_timer(uv_timer_t *t)
{
	struct agent	*a = container_of(t, struct agent, stop_timer);

	if (a->reloading && !a->stopping) {
		log_warn("reload: in-flight requests did not finish within "
		    "%lld ms; their records will be sent again",
		    a->conf->shutdown_timeout_ms);
		finish_reload(a);
		return;
	}
	log_warn("shutdown: in-flight requests did not finish within %lld "
	    "ms; their records will be sent again at the next start",
	    a->conf->shutdown_timeout_ms);
	finish(a);
}

static void
stop(struct agent *a, const char *why)
{
	size_t	 i;

	if (a->stopping)
		return;
	a->stopping = true;
	(void)notify_stopping();
	log_info("%s: stopping; sending what is batched", why);
	for (i = 0; i < a->nflows; i++)
		flow_stop(a->flows[i]);
	uv_timer_start(&a->stop_timer, on_stop_timer,
	    (uint64_t)a->conf->shutdown_timeout_ms, 0);
	check_soon(a);
}

/* --- reload (SIGHUP) ----------------------------------------------------- */

/*
 * Read the configuration again; if it is valid, drain the flows like a
 * shutdown would, then rebuild them (and the http client) from the new one.
 * Offsets live in the registry, which stays: changed and re-added flows
 * resume where they were.  An invalid file changes nothing.
 */
static void
reload(struct agent *a)
{
	struct conf	*nc;
	char		 err[1024];
	size_t		 i;

	if (a->stopping || a->reloading || a->once)
		return;
	if (conf_load(a->conf_path, &nc, err, sizeof(err)) != 0) {
		log_error("SIGHUP: %s; keeping the running configuration", err);
		return;
	}
	log_info("SIGHUP: reloading %s", a->conf_path);
	(void)notify_reloading();
	a->reloading = true;
	a->next_conf = nc;
	for (i = 0; i < a->nflows; i++)
		flow_stop(a->flows[i]);
	uv_timer_start(&a->stop_timer, on_stop_timer,
	    (uint64_t)a->conf->shutdown_timeout_ms, 0);
	check_soon(a);
}

static void
reload_http_closed(void *arg)
{
	struct agent	*a = arg;
	size_t		 i;

	for (i = 0; i < a->nflows; i++)
		flow_free(a->flows[i]);
	a->nflows = 0;
	free(a->flows);
	a->flows = NULL;
	disapi_free(a->api);
	a->api = NULL;
	if (a->finishing)	/* a stop signal came during the reload */
		return;
	conf_free(*a->confp);
	*a->confp = a->next_conf;
	a->conf = a->next_conf;
	a->next_conf = NULL;
	a->mem.limit = (size_t)a->conf->max_memory_bytes;
	open_client(a);
	a->reloading = false;
	if (start_flows(a) != 0) {
		a->exit_code = 1;
		finish(a);
		return;
	}
	log_info("configuration reloaded: %zu flow%s", a->nflows,
	    a->nflows == 1 ? "" : "s");
	(void)notify_ready();
}

static void
finish_reload(struct agent *a)
{
	size_t	 i;

	uv_timer_stop(&a->stop_timer);
	save_state(a, true);
	for (i = 0; i < a->nflows; i++)
		flow_cancel(a->flows[i]);
	http_close(a->http, reload_http_closed, a);
	a->http = NULL;
}

static void
on_ttl_timer(uv_timer_t *t)
{
	struct agent	*a = container_of(t, struct agent, ttl_timer);
	size_t		 i;

	if (a->conf->checkpoint_ttl_days <= 0 || a->reloading)
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
		reload(a);
		return;
	}
	if (a->stopping) {
		log_warn("second signal: exiting now; in-flight records will "
		    "be sent again at the next start");
		save_state(a, true);
		exit(0);
	}
	stop(a, signum == SIGTERM ? "SIGTERM" : "SIGINT");
}

static void
http_closed(void *arg)
{
	struct agent	*a = arg;
	size_t		 i;

	a->http = NULL;
	for (i = 0; i < a->nflows; i++)
		flow_free(a->flows[i]);
	a->nflows = 0;
	disapi_free(a->api);
	a->api = NULL;
}

/* Save, cancel what is left, and close every handle. */
static void
finish(struct agent *a)
{
	size_t	 i;

	if (a->finishing)
		return;
	a->finishing = true;
	if (a->once && a->exit_code == 0 && !all(a, flow_drained)) {
		log_error("--once: stopped before everything was delivered; "
		    "the next run continues from the saved offsets");
		a->exit_code = 1;
	}
	save_state(a, true);
	report(a);
	write_metrics(a);
	for (i = 0; i < a->nflows; i++)
		flow_cancel(a->flows[i]);
	uv_close((uv_handle_t *)&a->metrics_timer, NULL);
	uv_close((uv_handle_t *)&a->ckpt_timer, NULL);
	uv_close((uv_handle_t *)&a->status_timer, NULL);
	uv_close((uv_handle_t *)&a->stop_timer, NULL);
	uv_close((uv_handle_t *)&a->ttl_timer, NULL);
	uv_close((uv_handle_t *)&a->watchdog_timer, NULL);
	uv_close((uv_handle_t *)&a->check_idle, NULL);
	uv_close((uv_handle_t *)&a->sig_term, NULL);
	uv_close((uv_handle_t *)&a->sig_int, NULL);
	uv_close((uv_handle_t *)&a->sig_hup, NULL);
	/* During a reload the old client is already closing; its close
	 * callback frees the flows and sees finishing. */
	if (a->http != NULL)
		http_close(a->http, http_closed, a);
}

/* --- start -------------------------------------------------------------- */

/* WATCHDOG=1 from the loop itself: a stuck loop gets restarted. */
static void
on_watchdog_timer(uv_timer_t *t)
{
	(void)t;
	(void)notify_watchdog();
}

static int
start_handles(struct agent *a)
{
	uint64_t	 wd_ms = notify_watchdog_usec() / 2000;

	uv_timer_init(&a->loop, &a->ckpt_timer);
	uv_timer_init(&a->loop, &a->status_timer);
	uv_timer_init(&a->loop, &a->stop_timer);
	uv_timer_init(&a->loop, &a->ttl_timer);
	uv_timer_init(&a->loop, &a->watchdog_timer);
	uv_timer_init(&a->loop, &a->metrics_timer);
	if (a->conf->metrics_file[0] != '\0')
		uv_timer_start(&a->metrics_timer, on_metrics_timer,
		    (uint64_t)a->conf->metrics_interval_ms,
		    (uint64_t)a->conf->metrics_interval_ms);
	if (wd_ms > 0)
		uv_timer_start(&a->watchdog_timer, on_watchdog_timer, wd_ms,
		    wd_ms);
	uv_idle_init(&a->loop, &a->check_idle);
	uv_signal_init(&a->loop, &a->sig_term);
	uv_signal_init(&a->loop, &a->sig_int);
	uv_signal_init(&a->loop, &a->sig_hup);
	a->sig_term.data = a->sig_int.data = a->sig_hup.data = a;
	uv_signal_start(&a->sig_term, on_signal, SIGTERM);
	uv_signal_start(&a->sig_int, on_signal, SIGINT);
	uv_signal_start(&a->sig_hup, on_signal, SIGHUP);
	uv_timer_start(&a->ckpt_timer, on_ckpt_timer,
	    (uint64_t)a->conf->checkpoint_interval_ms,
	    (uint64_t)a->conf->checkpoint_interval_ms);
	uv_timer_start(&a->ttl_timer, on_ttl_timer, 60 * 1000, 3600 * 1000);
	uv_timer_start(&a->status_timer, on_status_timer,
	    (uint64_t)a->conf->status_period_s * 1000,
	    (uint64_t)a->conf->status_period_s * 1000);
	return 0;
}

static int
start_flows(struct agent *a)
{
	const struct conf *c = a->conf;
	size_t		 i;
	int		 rc;

	a->flows = xcalloc(c->nflows, sizeof(*a->flows));
	for (i = 0; i < c->nflows; i++) {
		if (!c->flows[i].enable)
			continue;
		a->flows[a->nflows] = flow_new(&a->loop, c, &c->flows[i],
		    a->api, a->reg, &a->mem, a->once, on_flow_event, a);
		rc = flow_start(a->flows[a->nflows++]);
		if (rc != 0)
			return rc;
	}
	return 0;
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
	a.mem.limit = (size_t)conf->max_memory_bytes;
	a.once = once;
	a.start_ms = mono_ms();
	if (uv_loop_init(&a.loop) != 0)
		fatalx("uv_loop_init failed");
	a.reg = registry_new(conf->checkpoint_file);
	if (registry_load(a.reg) != 0) {
		log_error("state file %s and its backup are unreadable; "
		    "refusing to start from zero or from the end.  Move it "
		    "aside to start over.", conf->checkpoint_file);
		registry_free(a.reg);
		uv_loop_close(&a.loop);
		return 1;
	}
	open_client(&a);
	(void)start_handles(&a);
	rc = start_flows(&a);
	if (rc != 0) {
		a.exit_code = 1;
		finish(&a);
	} else {
		log_info("Startup completed in %" PRIu64 " ms.",
		    mono_ms() - a.start_ms);
		(void)notify_ready();
	}
	uv_run(&a.loop, UV_RUN_DEFAULT);
	if (uv_loop_close(&a.loop) != 0)
		log_warn("event loop closed with handles still open");
	registry_free(a.reg);
	free(a.flows);
	conf_free(a.next_conf);
	log_info("peak memory held in records: %zu bytes (budget %zu)",
	    a.mem.peak, a.mem.limit);
	return a.exit_code;
}
