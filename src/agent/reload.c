/*
 * The reload plan (reload.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "agent/reload.h"
#include "agent/renamed.h"
#include "base/log.h"
#include "conf/conf.h"

void
reload_plan_init(struct reload_plan *p, const struct conf *old,
    const struct conf *nc)
{
	memset(p, 0, sizeof(*p));
	p->old = old;
	p->nc = nc;
	p->agent = conf_agent_diff(old, nc, &p->agent_key);
	buf_init(&p->kept);
	buf_init(&p->changed);
	buf_init(&p->added);
	buf_init(&p->removed);
}

void
reload_plan_cleanup(struct reload_plan *p)
{
	buf_cleanup(&p->kept);
	buf_cleanup(&p->changed);
	buf_cleanup(&p->added);
	buf_cleanup(&p->removed);
	free(p->renamed);
}

bool
reload_new_client(const struct reload_plan *p)
{
	return (p->agent & CONF_DIFF_CLIENT) != 0;
}

static void
note(struct buf *b, const char *name, const char *why)
{
	if (b->len > 0)
		buf_add(b, ", ", 2);
	buf_printf(b, "%s", name);
	if (why != NULL)
		buf_printf(b, " (%s)", why);
}

/* Whether fc of nc succeeds a renamed flow. */
static bool
is_renamed(const struct reload_plan *p, const struct conf_flow *fc)
{
	size_t	 i;

	for (i = 0; i < p->nrenamed; i++)
		if (p->renamed[i] == fc)
			return true;
	return false;
}

/* The flow of nc that fc (of old, gone from nc by name) was renamed to:
 * new in nc, the same stream and pattern, not taken yet; or NULL. */
static const struct conf_flow *
renamed_to(struct reload_plan *p, const struct conf_flow *fc)
{
	const struct conf_flow *n, *o;
	size_t	 i;

	for (i = 0; i < p->nc->nflows; i++) {
		n = &p->nc->flows[i];
		o = conf_flow_named(p->old, n->name);
		if ((o != NULL && o->enable) || is_renamed(p, n) ||
		    !renamed_pair(fc, n))
			continue;
		p->renamed = xrealloc(p->renamed,
		    (p->nrenamed + 1) * sizeof(*p->renamed));
		p->renamed[p->nrenamed++] = n;
		return n;
	}
	return NULL;
}

enum reload_fate
reload_flow(struct reload_plan *p, const struct conf_flow *fc, bool ready,
    const struct conf_flow **succ)
{
	const char	*why;

	*succ = conf_flow_named(p->nc, fc->name);
	if (*succ == NULL)
		*succ = renamed_to(p, fc);
	if (*succ == NULL) {
		note(&p->removed, fc->name, NULL);
		return RELOAD_REMOVED;
	}
	if (strcmp((*succ)->name, fc->name) != 0) {
		note(&p->changed, fc->name, NULL);
		buf_printf(&p->changed, " (renamed to %s)", (*succ)->name);
		return RELOAD_CHANGED;
	}
	why = conf_flow_diff(fc, *succ);
	if (why == NULL && (p->agent & CONF_DIFF_FLOWS))
		why = p->agent_key;
	/* Waiting for a probe or a DescribeStream retry of the old client:
	 * start over on the new one now. */
	if (why == NULL && reload_new_client(p) && !ready)
		why = "waiting: starts over on the new HTTP client";
	if (why != NULL) {
		note(&p->changed, fc->name, why);
		return RELOAD_CHANGED;
	}
	note(&p->kept, fc->name, NULL);
	*succ = NULL;
	return RELOAD_KEPT;
}

bool
reload_added(struct reload_plan *p, const struct conf_flow *fc)
{
	size_t	 i;

	if (is_renamed(p, fc))
		return false;	/* a renamed flow's successor */
	for (i = 0; i < p->old->nflows; i++)
		if (p->old->flows[i].enable &&
		    strcmp(p->old->flows[i].name, fc->name) == 0)
			return false;
	note(&p->added, fc->name, NULL);
	return true;
}

void
reload_plan_log(const struct reload_plan *p)
{
	/* agent_key names a client key unless a key the flows read changed
	 * too (the costlier kind). */
	bool	 key = !(p->agent & CONF_DIFF_FLOWS);

	log_info("reload: kept [%s], changed [%s], added [%s], removed [%s]%s"
	    "%s%s", p->kept.len ? p->kept.data : "",
	    p->changed.len ? p->changed.data : "",
	    p->added.len ? p->added.data : "",
	    p->removed.len ? p->removed.data : "",
	    reload_new_client(p) ? "; a new HTTP client" : "",
	    reload_new_client(p) && key ? " for " : "",
	    reload_new_client(p) && key ? p->agent_key : "");
}
