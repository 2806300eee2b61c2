/*
 * What the agent's HTTP server (httpd.h) shows, made on the loop
 * (agent_int.h): /healthz's verdict, /metrics through the renderer the
 * metrics file uses, and /status as JSON from the running flows (per
 * flow, per file: path, delivered offset, size, bytes behind).  The
 * server is started before the flows, so a long restart read is seen as
 * alive, and follows httpListen at a reload.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "agent/agent_int.h"
#include "agent/flow.h"
#include "agent/httpd.h"
#include "base/escape.h"
#include "base/log.h"
#include "base/metrics.h"
#include "conf/conf.h"

struct metrics_flow *
agent_metrics_snapshot(struct agent *a, struct metrics_snapshot *snap)
{
	struct metrics_flow	*mf;
	size_t			 i;

	mf = xcalloc(a->nflows ? a->nflows : 1, sizeof(*mf));
	for (i = 0; i < a->nflows; i++)
		mf[i] = *flow_metrics(a->flows[i]);
	memset(snap, 0, sizeof(*snap));
	snap->flows = mf;
	snap->nflows = a->nflows;
	snap->memory_in_use = a->mem.used;
	snap->memory_limit = a->mem.limit;
	snap->uptime_s = (double)(mono_ms() - a->start_ms) / 1000.0;
	snap->version = PACKAGE_VERSION;
	return mf;
}

/* --- /healthz ----------------------------------------------------------- */

/* The loop answers (or this would not run): healthy unless the state has
 * not been saved for healthStallSeconds. */
static int
health(struct agent *a, struct buf *out)
{
	uint64_t	 failing;

	failing = a->save_failed_ms == 0 ? 0 : mono_ms() - a->save_failed_ms;
	if (failing >= (uint64_t)a->conf->health_stall_s * 1000) {
		buf_printf(out, "the state has not been saved to %s for "
		    "%" PRIu64 " s (healthStallSeconds = %lld): the log says "
		    "why\n", a->conf->checkpoint_file, failing / 1000,
		    a->conf->health_stall_s);
		return 503;
	}
	buf_addstr(out, "ok\n");
	return 200;
}

/* --- /status ------------------------------------------------------------ */

/* Text from outside as a JSON string: as it is when it is UTF-8 (jansson
 * escapes what JSON must), else escaped (escape.h).  New. */
static json_t *
text(const char *s)
{
	json_t	*j;
	char	*e;

	j = json_string(s != NULL ? s : "");
	if (j != NULL)
		return j;
	e = esc_new(s);
	j = json_string(e);
	free(e);
	return j;
}

static void
add_file(const char *path, uint64_t committed, uint64_t size, void *arg)
{
	json_t	*files = arg, *f;

	f = json_pack("{s:o, s:I, s:I, s:I}", "path", text(path),
	    "offset", (json_int_t)committed, "size", (json_int_t)size,
	    "bytes_behind", (json_int_t)(size > committed ?
	    size - committed : 0));
	if (f != NULL)
		json_array_append_new(files, f);
}

static json_t *
last_error(const struct metrics_flow *m)
{
	if (m->last_error_code[0] == '\0')
		return json_null();
	return json_pack("{s:o, s:o, s:I}", "code", text(m->last_error_code),
	    "message", text(m->last_error_message),
	    "time", (json_int_t)m->last_error_time);
}

static json_t *
flow_json(struct flow *fl)
{
	const struct metrics_flow *m = flow_metrics(fl);
	json_t		*files = json_array();

	flow_each_file(fl, add_file, files);
	return json_pack("{s:o, s:o, s:I, s:I, s:I, s:I, s:b, s:o, s:o}",
	    "name", text(m->name), "stream", text(m->stream),
	    "bytes_behind", (json_int_t)m->bytes_behind,
	    "files_tracked", (json_int_t)m->files_tracked,
	    "files_unreadable", (json_int_t)m->files_unreadable,
	    "records_sent", (json_int_t)m->records_sent,
	    "paused", (int)m->paused, "last_error", last_error(m),
	    "files", files);
}

static const char *const state_words[] = {
	"running", "reloading", "stopping", "finishing",
};

static int
status(struct agent *a, struct buf *out)
{
	json_t	*root, *flows = json_array();
	char	*s;
	size_t	 i;

	for (i = 0; i < a->nflows; i++)
		json_array_append_new(flows, flow_json(a->flows[i]));
	root = json_pack("{s:s, s:s, s:I, s:o}", "version", PACKAGE_VERSION,
	    "state", state_words[a->state],
	    "uptime_seconds", (json_int_t)((mono_ms() - a->start_ms) / 1000),
	    "flows", flows);
	s = root != NULL ? json_dumps(root, JSON_INDENT(2)) : NULL;
	json_decref(root);
	if (s == NULL) {
		buf_addstr(out, "cannot make the status\n");
		return 500;
	}
	buf_addstr(out, s);
	buf_addc(out, '\n');
	free(s);
	return 200;
}

/* --- the server --------------------------------------------------------- */

static int
page(enum httpd_page p, struct buf *out, void *arg)
{
	struct agent		*a = arg;
	struct metrics_snapshot	 snap;
	struct metrics_flow	*mf;

	switch (p) {
	case HTTPD_HEALTH:
		return health(a, out);
	case HTTPD_METRICS:
		mf = agent_metrics_snapshot(a, &snap);
		metrics_render(&snap, out);
		free(mf);
		return 200;
	case HTTPD_STATUS:
		return status(a, out);
	}
	return 500;
}

/* A server on addr with the current conf's stall: NULL and *err. */
static struct httpd *
listen_on(struct agent *a, const char *addr, int *err)
{
	return httpd_new(&a->loop, addr, (int)a->conf->health_stall_s, page,
	    a, err);
}

int
agent_http_start(struct agent *a)
{
	const struct conf *c = a->conf;
	int		 err;

	if (c->http_listen[0] == '\0')
		return 0;
	a->httpd = listen_on(a, c->http_listen, &err);
	if (a->httpd == NULL) {
		log_error("httpListen = %s: cannot listen: %s; refusing to "
		    "start", c->http_listen, strerror(-err));
		return -1;
	}
	log_info("serving /healthz, /metrics and /status on http://%s",
	    c->http_listen);
	return 0;
}

/*
 * A new address that overlaps the old one (the same port on 0.0.0.0
 * instead of 127.0.0.1, say) can be bound only once the old server lets
 * go of it: try that, and take the old one back if the new one still
 * cannot listen.  Returns the new server or NULL (a->httpd is then the
 * old one again, or NULL).
 */
static struct httpd *
move_over(struct agent *a, int *err)
{
	struct httpd	*h;
	char		*old;
	int		 e2;

	old = xstrdup(httpd_addr(a->httpd));
	httpd_close(a->httpd);
	a->httpd = NULL;
	h = listen_on(a, a->conf->http_listen, err);
	if (h == NULL) {
		a->httpd = listen_on(a, old, &e2);
		if (a->httpd == NULL)
			log_error("reload: httpListen = %s: cannot listen "
			    "again: %s", old, strerror(-e2));
	}
	free(old);
	return h;
}

void
agent_http_reload(struct agent *a)
{
	const char	*addr = a->conf->http_listen;
	struct httpd	*h = NULL;
	int		 err;

	if (a->httpd != NULL && strcmp(httpd_addr(a->httpd), addr) == 0) {
		httpd_set_stall(a->httpd, (int)a->conf->health_stall_s);
		return;
	}
	if (addr[0] == '\0')
		log_info("reload: httpListen is off: the HTTP server stops");
	else {
		h = listen_on(a, addr, &err);
		if (h == NULL && err == -EADDRINUSE && a->httpd != NULL)
			h = move_over(a, &err);
		if (h == NULL) {
			log_error("reload: httpListen = %s: cannot listen: "
			    "%s; %s", addr, strerror(-err), a->httpd != NULL ?
			    "still serving on the old address" :
			    "no HTTP server");
			if (a->httpd != NULL)
				httpd_set_stall(a->httpd,
				    (int)a->conf->health_stall_s);
			return;
		}
		log_info("reload: serving /healthz, /metrics and /status on "
		    "http://%s", addr);
	}
	httpd_close(a->httpd);
	a->httpd = h;
}
