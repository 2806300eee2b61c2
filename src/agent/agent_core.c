/*
 * What every part of the agent shares (agent_int.h): the state's one
 * setter, the walks over the flows, the request for a state check (run
 * by agent.c's idle callback, a->on_check), the flows made and wired to
 * the agent, and the progress line and metrics file.  Below agent.c,
 * agent_reload.c and agent_stop.c, which all call here and which nothing
 * here calls.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "agent/agent.h"
#include "agent/agent_int.h"
#include "agent/flow.h"
#include "agent/progress.h"
#include "base/log.h"
#include "base/metrics.h"
#include "conf/conf.h"

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

/* Rewrite metricsFile (if set) from every flow's numbers. */
void
agent_write_metrics(struct agent *a)
{
	struct metrics_snapshot	 snap;
	struct metrics_flow	*mf;
	int			 r;

	if (a->conf->metrics_file[0] == '\0')
		return;
	mf = agent_metrics_snapshot(a, &snap);
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

/* The progress line (statusIntervalMillis). */
void
agent_report(struct agent *a)
{
	const struct metrics_flow **m;
	size_t		 i;

	m = xcalloc(a->nflows ? a->nflows : 1, sizeof(*m));
	for (i = 0; i < a->nflows; i++) {
		flow_log_puts(a->flows[i]);
		m[i] = flow_metrics(a->flows[i]);
	}
	progress_report(&a->progress, m, a->nflows, mono_ms() - a->start_ms);
	free(m);
}

/* The progress line and the metrics file, once more at the finish. */
void
agent_last_report(struct agent *a)
{
	agent_report(a);
	agent_write_metrics(a);
}

/* Whether pred holds for every flow, running and going. */
bool
agent_all(struct agent *a, bool (*pred)(const struct flow *))
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

size_t
agent_inflight(struct agent *a)
{
	size_t	 i, n = 0;

	for (i = 0; i < a->nflows; i++)
		n += flow_inflight(a->flows[i]);
	for (i = 0; i < a->ngoing; i++)
		n += flow_inflight(a->going[i]);
	return n;
}

void
agent_check_soon(struct agent *a)
{
	if (a->state != AGENT_FINISHING)
		uv_idle_start(&a->check_idle, a->on_check);
}

static void
on_flow_event(struct flow *f, enum flow_event ev, const char *reason,
    void *arg)
{
	struct agent	*a = arg;

	if (ev == FLOW_SENDING) {
		agent_lease(a, f);
		return;
	}
	if (ev == FLOW_HALTED && a->once && a->exit_code == 0) {
		log_error("--once: cannot deliver flow [%s]: %s",
		    flow_name(f), reason);
		a->exit_code = 1;
	}
	agent_check_soon(a);
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
