/*
 * The read-back client's stream and API (readback.h): the description,
 * first and at every rescan while following, picks the partitions asked
 * for and adds the new ones; readback_new, _start, _stop and _free.  The
 * partitions' state machine is readback.c's, whose top comment tells the
 * whole design.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/closer.h"
#include "base/log.h"
#include "readback/describe.h"
#include "readback/rbcall.h"
#include "readback/readback.h"
#include "readback/readback_int.h"

#define POLL_MS		1000	/* following, at the end of the data */
#define RESCAN_MS	10000	/* following: new or expired partitions */

/* The timers closed and no reply awaited: the memory goes. */
static void
freed(struct closer *c)
{
	struct readback	*rb = container_of(c, struct readback, closer);
	struct rb_part	*p;
	size_t		 i;

	while ((p = rb->parts) != NULL) {
		rb->parts = p->next;
		free(p->cursor);
		free(p);
	}
	for (i = 0; i < rb->nnames; i++)
		free(rb->names[i]);
	free(rb->names);
	free(rb->stream);
	free(rb->app);
	free(rb);
}

/* --- the stream --------------------------------------------------------- */

static const struct codec_partition *
find_part(const struct codec_stream *st, const char *id)
{
	size_t	 i;

	for (i = 0; i < st->nparts; i++)
		if (strcmp(st->parts[i].id, id) == 0)
			return &st->parts[i];
	return NULL;
}

static bool
have_part(const struct readback *rb, const char *id)
{
	const struct rb_part *p;

	for (p = rb->parts; p != NULL; p = p->next)
		if (strcmp(p->id, id) == 0)
			return true;
	return false;
}

/* The partitions to read at start: the ones asked for, or all readable. */
static int
pick_parts(struct readback *rb)
{
	const struct codec_partition *cp;
	struct rb_error	 e;
	size_t		 i;

	for (i = 0; i < rb->nnames; i++) {
		cp = find_part(rb->st, rb->names[i]);
		if (cp == NULL) {
			memset(&e, 0, sizeof(e));
			snprintf(e.message, sizeof(e.message), "stream %s has "
			    "no partition %s (it has %zu)", rb->stream,
			    rb->names[i], rb->st->nparts);
			rb_finish(rb, -ENOENT, &e);
			return -ENOENT;
		}
		if (!have_part(rb, cp->id))
			(void)rb_part_new(rb, cp, rb->o.start);
	}
	for (i = 0; rb->nnames == 0 && i < rb->st->nparts; i++)
		if (strcmp(rb->st->parts[i].status, "EXPIRED") != 0)
			(void)rb_part_new(rb, &rb->st->parts[i], rb->o.start);
	return 0;
}

/* Following: partitions that appeared since the last description. */
static void
add_new_parts(struct readback *rb)
{
	const struct codec_partition *cp;
	size_t		 i;

	for (i = 0; rb->nnames == 0 && i < rb->st->nparts; i++) {
		cp = &rb->st->parts[i];
		if (have_part(rb, cp->id) || strcmp(cp->status, "EXPIRED") == 0)
			continue;
		log_warn("stream %s: new partition %s", rb->stream, cp->id);
		(void)rb_part_new(rb, cp, RB_TRIM_HORIZON);
	}
	rb_start_next(rb);
}

/* The rescan timer (following): describe the stream again. */
static void
on_rb_timer(uv_timer_t *t)
{
	struct readback	*rb = container_of(t, struct readback, timer);

	if (!rb->stopped)
		describe_run(rb->desc);
}

/* The first description: pick the partitions and start reading. */
static void
first_described(struct readback *rb)
{
	int	 rc;

	if (rb->cb.described != NULL &&
	    (rc = rb->cb.described(rb->arg, rb->st)) != 0) {
		rb_finish(rb, rc, NULL);
		return;
	}
	if (rb->o.describe_only) {
		rb_finish(rb, 0, NULL);
		return;
	}
	if (pick_parts(rb) != 0)
		return;
	if (rb->parts == NULL && !rb->o.follow)
		rb_finish(rb, 0, NULL);
	else
		rb_start_next(rb);
}

static void
on_described(void *arg, int rc, const struct codec_stream *st,
    const struct rb_error *e)
{
	struct readback	*rb = arg;
	bool		 first = rb->st == NULL;

	if (rb->stopped)
		return;
	if (rc != 0 && first) {
		rb_finish(rb, rc, e);
		return;
	}
	if (rb->o.follow)
		uv_timer_start(&rb->timer, on_rb_timer, rb->o.rescan_ms, 0);
	if (rc != 0) {
		/* A rescan: the partitions known go on being read. */
		log_warn("%s; trying again later", e->message);
		return;
	}
	rb->st = st;
	rb->advanced = strcmp(st->info.type, "ADVANCED") == 0;
	if (first)
		first_described(rb);
	else
		add_new_parts(rb);
}

/* --- API ---------------------------------------------------------------- */

void
readback_partition_name(const char *in, char *out, size_t len)
{
	size_t	 n = strlen(in);

	if (n > 0 && n <= 10 && strspn(in, "0123456789") == n)
		snprintf(out, len, "shardId-%010lu", strtoul(in, NULL, 10));
	else
		snprintf(out, len, "%s", in);
}

struct readback *
readback_new(uv_loop_t *loop, struct disapi *api, const struct rb_opts *o,
    const struct rb_callbacks *cb, void *arg)
{
	struct readback	*rb;
	char		 id[64];
	size_t		 i;

	rb = xcalloc(1, sizeof(*rb));
	rb->loop = loop;
	rb->api = api;
	rb->o = *o;
	rb->stream = xstrdup(o->stream);
	rb->o.stream = rb->stream;
	rb->app = o->app != NULL ? xstrdup(o->app) : NULL;
	rb->o.app = rb->app;
	rb->o.partitions = NULL;
	if (rb->o.poll_ms == 0)
		rb->o.poll_ms = POLL_MS;
	if (rb->o.rescan_ms == 0)
		rb->o.rescan_ms = RESCAN_MS;
	rb->names = xcalloc(o->npartitions + 1, sizeof(*rb->names));
	for (i = 0; i < o->npartitions; i++) {
		readback_partition_name(o->partitions[i], id, sizeof(id));
		rb->names[rb->nnames++] = xstrdup(id);
	}
	rb->cb = *cb;
	rb->arg = arg;
	rb->desc = describe_new(loop, api, rb->stream, on_described, rb);
	rb->tail = &rb->parts;
	closer_init(&rb->closer, freed);
	uv_timer_init(loop, &rb->timer);
	return rb;
}

void
readback_start(struct readback *rb)
{
	describe_run(rb->desc);
}

void
readback_stop(struct readback *rb)
{
	struct rb_part	*p;

	rb->stopped = true;
	describe_stop(rb->desc);
	uv_timer_stop(&rb->timer);
	for (p = rb->parts; p != NULL; p = p->next)
		uv_timer_stop(&p->timer);
}

void
readback_free(struct readback *rb)
{
	struct rb_part	*p;

	if (rb == NULL)
		return;
	readback_stop(rb);
	describe_free(rb->desc);
	closer_close(&rb->closer, (uv_handle_t *)&rb->timer);
	for (p = rb->parts; p != NULL; p = p->next)
		closer_close(&rb->closer, (uv_handle_t *)&p->timer);
	closer_release(&rb->closer);
}
