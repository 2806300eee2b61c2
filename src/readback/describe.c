/*
 * DescribeStream over every page (describe.h).  Pages are collected into
 * one struct codec_stream, which replaces the previous description only
 * once the last page is in.  States, each entered in set_state():
 *
 *   IDLE --describe_run--> PAGING --a page failed--> WAITING --timer--> PAGING
 *   PAGING --the last page, or the failure given up on--> IDLE
 *   any --describe_stop--> STOPPED
 *
 * The memory goes once the timer is closed and no reply is awaited
 * (base/closer.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/closer.h"
#include "base/log.h"
#include "readback/describe.h"
#include "readback/rbcall.h"

#define PAGE_PARTITIONS	100
#define MAX_PARTITIONS	100000	/* paging ends here, whatever DIS says */

enum dstate {
	D_IDLE,		/* no run, or the last one ended */
	D_PAGING,	/* a page asked for */
	D_WAITING,	/* a page failed: the timer asks again */
	D_STOPPED,	/* describe_stop: no request, no callback */
};

static const char *const dstate_names[] = {
	"idle", "paging", "waiting", "stopped",
};

struct describe {
	struct disapi	*api;
	char		*stream;
	char		*path;		/* "streams/NAME/" */
	struct codec_stream st;		/* the last whole description */
	struct codec_stream page;	/* the pages of this run */
	uv_timer_t	 timer;		/* retries */
	unsigned	 attempt;
	unsigned	 throttles;
	enum dstate	 state;
	struct closer	 closer;	/* the timer, the reply awaited */
	describe_cb	 cb;
	void		*arg;
};

static void	page(struct describe *);

/* The one place the state changes. */
static void
set_state(struct describe *d, enum dstate st)
{
	if (d->state == st)
		return;
	log_debug("describe %s: %s -> %s", d->stream, dstate_names[d->state],
	    dstate_names[st]);
	d->state = st;
}

static void
freed(struct closer *c)
{
	struct describe	*d = container_of(c, struct describe, closer);

	codec_stream_cleanup(&d->st);
	codec_stream_cleanup(&d->page);
	free(d->stream);
	free(d->path);
	free(d);
}

static void
on_timer(uv_timer_t *t)
{
	struct describe	*d = container_of(t, struct describe, timer);

	if (d->state == D_WAITING)
		page(d);
}

/* A page failed: again later, or the run ends with the error. */
static void
failed(struct describe *d, enum rb_act a, const struct rb_error *e)
{
	uint64_t	 delay;

	if (rb_backoff(a, false, &d->attempt, &d->throttles, &delay)) {
		set_state(d, D_WAITING);
		uv_timer_start(&d->timer, on_timer, delay, 0);
		return;
	}
	codec_stream_cleanup(&d->page);
	set_state(d, D_IDLE);
	d->attempt = d->throttles = 0;
	d->cb(d->arg, -EIO, NULL, e);
}

static void
on_page(const struct http_response *r, void *arg)
{
	struct describe	*d = arg;
	struct rb_error	 e;
	char		 what[96];
	size_t		 before = d->page.nparts;
	enum rb_act	 a;

	if (closer_drop(&d->closer) || d->state != D_PAGING)
		return;
	snprintf(what, sizeof(what), "DescribeStream %s", d->stream);
	a = rb_classify(r, what, &e);
	if (a == RB_OK && codec_parse_stream(r->body, r->bodylen,
	    &d->page) != 0)
		a = rb_unreadable(what, &e);
	if (a != RB_OK) {
		failed(d, a, &e);
		return;
	}
	d->attempt = d->throttles = 0;
	/* A page that adds no partition ends the paging, whatever it says. */
	if (d->page.has_more && d->page.nparts > before &&
	    d->page.nparts < MAX_PARTITIONS) {
		page(d);
		return;
	}
	codec_stream_cleanup(&d->st);
	d->st = d->page;
	memset(&d->page, 0, sizeof(d->page));
	set_state(d, D_IDLE);
	d->cb(d->arg, 0, &d->st, NULL);
}

static void
page(struct describe *d)
{
	struct rb_error	 e;
	struct buf	 q;

	set_state(d, D_PAGING);
	buf_init(&q);
	buf_printf(&q, "limit_partitions=%d", PAGE_PARTITIONS);
	if (d->page.nparts > 0)
		buf_printf(&q, "&start_partitionId=%s",
		    d->page.parts[d->page.nparts - 1].id);
	if (rb_get(d->api, d->path, q.data, on_page, d) == 0)
		closer_hold(&d->closer);
	else {
		memset(&e, 0, sizeof(e));
		snprintf(e.message, sizeof(e.message), "DescribeStream %s: "
		    "cannot send", d->stream);
		failed(d, RB_RETRY, &e);
	}
	buf_cleanup(&q);
}

struct describe *
describe_new(uv_loop_t *loop, struct disapi *api, const char *stream,
    describe_cb cb, void *arg)
{
	struct describe	*d;

	d = xcalloc(1, sizeof(*d));
	d->api = api;
	d->stream = xstrdup(stream);
	d->path = xasprintf("streams/%s/", stream);
	d->cb = cb;
	d->arg = arg;
	closer_init(&d->closer, freed);
	uv_timer_init(loop, &d->timer);
	return d;
}

void
describe_run(struct describe *d)
{
	if (d->state == D_IDLE)
		page(d);
}

void
describe_stop(struct describe *d)
{
	set_state(d, D_STOPPED);
	uv_timer_stop(&d->timer);
}

void
describe_free(struct describe *d)
{
	if (d == NULL)
		return;
	describe_stop(d);
	closer_close(&d->closer, (uv_handle_t *)&d->timer);
	closer_release(&d->closer);
}
