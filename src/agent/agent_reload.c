/*
 * A reload (SIGHUP) carried out (agent_int.h; the lifecycle is drawn at
 * the top of agent.c).  The plan (reload.h) keeps every flow whose keys
 * did not change running untouched; the changed and removed ones stop
 * reading and send what is batched, and once nothing of theirs is on the
 * wire (they wait for it, past shutdownTimeoutMillis if need be: nothing
 * is cancelled, so nothing is sent twice) a changed flow hands its open
 * files to its successor and a removed one spools its deleted-but-open
 * files.  A new endpoint, keys, proxy or CA is a new HTTP client for every
 * flow; the requests on the old one finish there, and agent_clients.c
 * closes it once it has none.  The earlier configurations stay while a
 * kept flow uses them.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "agent/agent_int.h"
#include "agent/flow.h"
#include "agent/reload.h"
#include "agent/renamed.h"
#include "base/log.h"
#include "base/notify.h"
#include "conf/conf.h"
#include "dis/disapi.h"

static void
add_flow(struct flow ***v, size_t *n, struct flow *f)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = f;
}

/* Free the earlier confs that no flow uses any more. */
static void
release_confs(struct agent *a)
{
	size_t	 i, j, kept = 0;
	bool	 used;

	for (i = 0; i < a->nretired; i++) {
		used = false;
		for (j = 0; j < a->nflows && !used; j++)
			used = flow_conf(a->flows[j]) == a->retired[i];
		for (j = 0; j < a->ngoing && !used; j++)
			used = flow_conf(a->going[j]) == a->retired[i];
		if (used)
			a->retired[kept++] = a->retired[i];
		else
			conf_free(a->retired[i]);
	}
	a->nretired = kept;
}

/* nc is the configuration from now on; the old one stays while a flow
 * built from it runs. */
static void
switch_conf(struct agent *a, struct conf *nc)
{
	a->retired = xrealloc(a->retired,
	    (a->nretired + 1) * sizeof(*a->retired));
	a->retired[a->nretired++] = *a->confp;
	*a->confp = nc;
	a->conf = nc;
	mem_set_limit(&a->mem, (size_t)nc->max_memory_bytes);
	if (strcmp(a->retired[a->nretired - 1]->checkpoint_file,
	    nc->checkpoint_file) != 0)
		log_warn("reload: checkpointFile changes at the next start; "
		    "offsets are saved to %s until then",
		    a->retired[a->nretired - 1]->checkpoint_file);
}

/* Every flow on the new conf's client: a new one for a new endpoint, keys,
 * proxy or CA, whose predecessor closes once its requests ended. */
static void
switch_client(struct agent *a, bool fresh)
{
	struct http	*h = a->http, *old;

	if (fresh)
		h = disapi_http_new(&a->loop, a->conf, MAX_CONNECTIONS);
	old = disapi_rebind(a->api, h, a->conf);
	a->http = h;
	if (old != h) {
		a->old_http = xrealloc(a->old_http,
		    (a->nold_http + 1) * sizeof(*a->old_http));
		a->old_http[a->nold_http++] = old;
	}
	agent_attach_keys(a);
}

/* The reload is complete. */
static void
reload_done(struct agent *a)
{
	agent_set_state(a, AGENT_RUNNING);
	release_confs(a);
	log_info("configuration reloaded: %zu flow%s", a->nflows,
	    a->nflows == 1 ? "" : "s");
	(void)notify_ready();
	agent_check_soon(a);
}

/* Start flows v[0..n) (made, not started), added to the running ones;
 * one that cannot start stops the agent, as at the first start. */
static void
start_new(struct agent *a, struct flow **v, size_t n)
{
	size_t	 i;
	int	 rc = 0;

	for (i = 0; i < n; i++) {
		add_flow(&a->flows, &a->nflows, v[i]);
		if (rc == 0)
			rc = flow_start(v[i]);
	}
	if (rc != 0) {
		a->exit_code = 1;
		agent_finish(a);
	}
}

/*
 * Decide every flow's fate (reload.h): the kept ones stay, the changed and
 * removed ones stop reading and go to a->going; the added ones are made.
 * One line says which.  The added flows into *added (not started).
 */
static void
plan_flows(struct agent *a, struct reload_plan *p, struct flow ***added,
    size_t *nadded)
{
	struct flow	**live = NULL, *f;
	const struct conf_flow *succ;
	size_t		 i, n = 0;

	for (i = 0; i < a->nflows; i++) {
		f = a->flows[i];
		if (reload_flow(p, flow_fc(f), flow_ready(f), &succ) ==
		    RELOAD_KEPT) {
			/* dedupeOnRestart, for the records read from now. */
			flow_set_agent_key(f, agent_id_key(a));
			add_flow(&live, &n, f);
			continue;
		}
		flow_stop(f);
		add_flow(&a->going, &a->ngoing, f);
		a->succ = xrealloc(a->succ, a->ngoing * sizeof(*a->succ));
		a->succ[a->ngoing - 1] = succ;
	}
	free(a->flows);
	a->flows = live;
	a->nflows = n;
	for (i = 0; i < a->conf->nflows; i++)
		if (a->conf->flows[i].enable &&
		    reload_added(p, &a->conf->flows[i]))
			add_flow(added, nadded, agent_make_flow(a,
			    &a->conf->flows[i]));
	reload_plan_log(p);
}

/*
 * Read the configuration again; if it is valid, keep what did not change
 * and drain what did (see the top of this file).  Offsets live in the
 * registry, which stays.  An invalid file changes nothing.
 */
void
agent_reload(struct agent *a)
{
	struct reload_plan p;
	struct flow	**added = NULL;
	struct conf	*nc;
	size_t		 nadded = 0;
	char		 err[1024];

	if (a->once || a->state == AGENT_STOPPING ||
	    a->state == AGENT_FINISHING)
		return;
	if (a->state == AGENT_RELOADING) {
		/* systemctl reload said it worked: the signal is not
		 * dropped.  Several during one drain are one reload, of
		 * the file as it is once the drain is over. */
		if (!a->hup_queued)
			log_info("SIGHUP: the last reload is still draining "
			    "its changed flows; %s is read again once it is "
			    "done", a->conf_path);
		a->hup_queued = true;
		return;
	}
	if (conf_load_opts(a->conf_path, CONF_TLS_WARNS, &nc, err,
	    sizeof(err)) != 0) {
		log_error("SIGHUP: %s; keeping the running configuration", err);
		return;
	}
	log_info("SIGHUP: reloading %s", a->conf_path);
	(void)notify_reloading();
	reload_plan_init(&p, a->conf, nc);
	switch_conf(a, nc);
	renamed_describe(a->reg, nc);
	agent_http_reload(a);
	switch_client(a, reload_new_client(&p));
	plan_flows(a, &p, &added, &nadded);
	reload_plan_cleanup(&p);
	start_new(a, added, nadded);
	free(added);
	if (a->state == AGENT_FINISHING)
		return;
	if (a->ngoing == 0) {
		reload_done(a);
		return;
	}
	agent_set_state(a, AGENT_RELOADING);
	uv_timer_start(&a->stop_timer, agent_on_stop_timer,
	    (uint64_t)a->conf->shutdown_timeout_ms, 0);
	agent_check_soon(a);
}

void
agent_reload_queued(struct agent *a)
{
	if (!a->hup_queued || a->state != AGENT_RUNNING)
		return;
	a->hup_queued = false;
	log_info("SIGHUP: applying the reload queued during the drain");
	agent_reload(a);
}

/*
 * Nothing of the going flows is on the wire: each changed one hands its
 * open files to its successor, each removed one spools its deleted-but-open
 * files; they go, and the successors start.
 */
void
agent_reload_finish(struct agent *a)
{
	struct flow	**next = NULL, **removed = NULL;
	size_t		 i, nnext = 0, nremoved = 0;

	uv_timer_stop(&a->stop_timer);
	for (i = 0; i < a->ngoing; i++) {
		flow_cancel(a->going[i]);
		/* A successor that sends whole files takes no open file:
		 * what only a descriptor holds goes to the spool, as for a
		 * removed flow. */
		if (a->succ[i] == NULL || !a->succ[i]->file_appendable)
			add_flow(&removed, &nremoved, a->going[i]);
	}
	agent_spool_flows(a, removed, nremoved);
	for (i = 0; i < a->ngoing; i++) {
		if (a->succ[i] == NULL)
			continue;
		/* Its commits so far are under the old name. */
		if (strcmp(flow_name(a->going[i]), a->succ[i]->name) != 0)
			renamed_carry(a->reg, flow_name(a->going[i]),
			    a->succ[i]);
		add_flow(&next, &nnext, agent_make_flow(a, a->succ[i]));
		flow_adopt(next[nnext - 1], flow_hand_over(a->going[i]));
	}
	(void)agent_save_state(a, true);
	for (i = 0; i < a->ngoing; i++)
		flow_free(a->going[i]);
	free(a->going);
	free(a->succ);
	free(removed);
	a->going = NULL;
	a->succ = NULL;
	a->ngoing = 0;
	agent_set_state(a, AGENT_RUNNING);
	start_new(a, next, nnext);
	free(next);
	if (a->state != AGENT_FINISHING)
		reload_done(a);
}
