/*
 * Stopping and the finish (agent_int.h).  Stopping stops reading, flushes
 * the batches, and waits up to shutdownTimeoutMillis for the requests on
 * the wire -- not for batches held back by a backoff or a pause, whose
 * offsets have not moved.  Then it cancels what is left (its offsets do
 * not move), spools the unread rest of the files deleted while open,
 * saves the state, closes the http clients, frees the flows once the last
 * client closed, and runs the loop until every handle is closed.  The
 * spool is also written for the flows a reload cancels, and swept at
 * start of the files the state does not name.
 */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "agent/agent_int.h"
#include "agent/flow.h"
#include "agent/httpd.h"
#include "base/closer.h"
#include "base/log.h"
#include "base/notify.h"
#include "conf/conf.h"
#include "dis/disapi.h"
#include "dis/ecsmeta.h"
#include "dis/http.h"
#include "files/spool.h"
#include "state/registry.h"

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
	n = agent_inflight(a);
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

void
agent_stop(struct agent *a, const char *why)
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

/* --- the spool ---------------------------------------------------------- */

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

/* Spool files the state does not name are left over: remove them. */
void
agent_sweep_spool(struct agent *a)
{
	struct spool	*sp = spool_open(a);

	spool_sweep(sp, a->reg);
	spool_free(sp);
}

/* --- the finish --------------------------------------------------------- */

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

/* The requests of the flows that may have landed unacknowledged. */
static size_t
in_doubt(struct agent *a)
{
	size_t	 i, n = 0;

	for (i = 0; i < a->nflows; i++)
		n += flow_uncertain(a->flows[i]);
	for (i = 0; i < a->ngoing; i++)
		n += flow_uncertain(a->going[i]);
	return n;
}

/*
 * Say how the stop left the state: a next start resends nothing, or reads
 * back first.  rc: the stop's save; a failed one leaves the last save that
 * succeeded on disk, which is never a clean stop.
 */
static void
log_clean(struct agent *a, int rc, size_t doubt)
{
	const struct reg_run *run = registry_run(a->reg);

	if (rc != 0)
		log_error("stop: the state could not be saved to %s (%s): it "
		    "keeps its last save, which is not a clean stop; the next "
		    "start reads back what was sent since (dedupeOnRestart = "
		    "%s)", a->conf->checkpoint_file, strerror(-rc),
		    a->conf->dedupe_on_restart);
	else if (run != NULL && run->clean)
		log_info("state saved as a clean stop: the next start sends "
		    "nothing twice");
	else if (doubt > 0)
		log_warn("state saved, not as a clean stop: %zu request%s "
		    "ended without a verdict (a timeout, a dropped "
		    "connection) or %s still on the wire, and may have "
		    "landed: the next start reads back which (dedupeOnRestart "
		    "= %s)", doubt, doubt == 1 ? "" : "s",
		    doubt == 1 ? "was" : "were", a->conf->dedupe_on_restart);
	else
		log_info("state saved, not as a clean stop: records the restart "
		    "read found are not read past yet; the next start reads "
		    "them back first (dedupeOnRestart = %s)",
		    a->conf->dedupe_on_restart);
}

/* Cancel what is left, spool, save, and close every handle. */
void
agent_finish(struct agent *a)
{
	size_t	 i, doubt;
	int	 rc;

	if (a->state == AGENT_FINISHING)
		return;
	agent_set_state(a, AGENT_FINISHING);
	if (a->once && a->exit_code == 0 && !agent_all(a, flow_drained)) {
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
	doubt = in_doubt(a);
	rc = agent_save_stop(a);
	if (rc != 0 && a->once) {
		log_error("--once: the state could not be saved to %s; the "
		    "next run sends again what this one delivered",
		    a->conf->checkpoint_file);
		a->exit_code = 1;
	}
	log_clean(a, rc, doubt);
	agent_end_read_back(a);
	agent_last_report(a);
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
	httpd_close(a->httpd);
	a->httpd = NULL;
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
