/*
 * An app's checkpoints on one stream (ckpt.h).  The calls wait in one
 * queue, in order: the app first (nothing passes it until it is known),
 * then reads and commits, at most PARALLEL in flight and one per
 * partition.  A failure the retry policy cures (network, 5xx, throttling)
 * puts the call back with a due time; one timer wakes the queue for the
 * earliest.  A commit carries the newest sequence number asked for when
 * it is sent; one asked for while it is on the wire goes after it.  The
 * memory goes once the timer is closed and no reply is awaited
 * (base/closer.h).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/closer.h"
#include "base/log.h"
#include "readback/ckpt.h"
#include "readback/rbcall.h"
#include "wire/codec_read.h"

#define PARALLEL	4

enum op_kind { OP_APP, OP_GET, OP_COMMIT };

struct op {
	struct ckpt	*ck;
	enum op_kind	 kind;
	char		 part[40];
	int64_t		 seq;		/* commit: the number it sends */
	int64_t		 later;		/* commit: asked for meanwhile; -1 */
	bool		 create;	/* app: create it on DIS.4332 */
	bool		 creating;	/* app: CreateApp is the call */
	bool		 inflight;
	uint64_t	 due;		/* mono_ms() it may go at */
	unsigned	 attempt;
	unsigned	 throttles;
	struct buf	 body;
	ckpt_app_cb	 app_cb;
	ckpt_get_cb	 get_cb;
	void		*arg;
	struct op	*next;
};

struct ckpt {
	uv_loop_t	*loop;
	struct disapi	*api;
	char		*app;
	char		*stream;
	char		*metadata;
	char		*app_path;	/* "apps/NAME/" */
	bool		 forever;
	uv_timer_t	 timer;
	struct op	*ops;
	size_t		 inflight;
	struct closer	 closer;	/* the timer, the replies awaited */
	unsigned	 failed;
	ckpt_drain_cb	 drain_cb;
	void		*drain_arg;
	bool		 stopped;
};

static void	dispatch(struct ckpt *);

static void
op_free(struct op *op)
{
	buf_cleanup(&op->body);
	free(op);
}

static void
freed(struct closer *c)
{
	struct ckpt	*ck = container_of(c, struct ckpt, closer);
	struct op	*op;

	while ((op = ck->ops) != NULL) {
		ck->ops = op->next;
		op_free(op);
	}
	free(ck->app);
	free(ck->stream);
	free(ck->metadata);
	free(ck->app_path);
	free(ck);
}

static struct op *
op_add(struct ckpt *ck, enum op_kind kind, const char *part)
{
	struct op	*op, **pp;

	op = xcalloc(1, sizeof(*op));
	op->ck = ck;
	op->kind = kind;
	op->later = -1;
	snprintf(op->part, sizeof(op->part), "%s", part != NULL ? part : "");
	buf_init(&op->body);
	for (pp = &ck->ops; *pp != NULL; pp = &(*pp)->next)
		;
	*pp = op;
	return op;
}

static void
op_remove(struct op *op)
{
	struct op	**pp;

	for (pp = &op->ck->ops; *pp != NULL; pp = &(*pp)->next)
		if (*pp == op) {
			*pp = op->next;
			break;
		}
	op_free(op);
}

/* What the call is, for messages. */
static void
op_what(const struct op *op, char *out, size_t len)
{
	const struct ckpt *ck = op->ck;

	switch (op->kind) {
	case OP_APP:
		snprintf(out, len, "%s app %s", op->creating ? "CreateApp" :
		    "DescribeApp", ck->app);
		break;
	case OP_GET:
		snprintf(out, len, "GetCheckpoint app %s stream %s partition "
		    "%s", ck->app, ck->stream, op->part);
		break;
	case OP_COMMIT:
		snprintf(out, len, "CommitCheckpoint app %s stream %s "
		    "partition %s sequence number %" PRId64, ck->app,
		    ck->stream, op->part, op->seq);
		break;
	}
}

/* --- replies -------------------------------------------------------------- */

/* Try op again after a (retryable) failure; false when it is given up. */
static bool
again(struct op *op, enum rb_act a)
{
	uint64_t	 delay;
	bool		 forever = op->ck->forever && op->kind != OP_COMMIT;

	if (!rb_backoff(a, forever, &op->attempt, &op->throttles, &delay))
		return false;
	op->due = mono_ms() + delay;
	return true;
}

static void
app_replied(struct op *op, enum rb_act a, const struct rb_error *e)
{
	ckpt_app_cb	 cb = op->app_cb;
	void		*arg = op->arg;
	bool		 created = op->creating;
	int		 rc = -EIO;

	if (a != RB_OK && !op->creating && op->create &&
	    strcmp(e->code, "DIS.4332") == 0) {
		op->creating = true;
		op->attempt = op->throttles = 0;
		op->due = 0;
		return;
	}
	if (a == RB_OK)
		rc = 0;
	else if (op->creating && strcmp(e->code, "DIS.4330") == 0) {
		rc = 0;		/* made meanwhile by another reader */
		created = false;
	} else if (strcmp(e->code, "DIS.4332") == 0)
		rc = -ENOENT;
	else if (again(op, a))
		return;
	op_remove(op);
	cb(arg, rc, rc == 0 && created, e);
}

static void
get_replied(struct op *op, enum rb_act a, const struct http_response *r,
    struct rb_error *e)
{
	ckpt_get_cb	 cb = op->get_cb;
	void		*arg = op->arg;
	int64_t		 seq = -1;
	char		*meta = NULL, what[160];

	if (a == RB_OK && codec_parse_checkpoint(r->body, r->bodylen, &seq,
	    &meta) != 0) {
		op_what(op, what, sizeof(what));
		a = rb_unreadable(what, e);
	}
	free(meta);
	if (a != RB_OK && again(op, a))
		return;
	op_remove(op);
	cb(arg, a == RB_OK ? 0 : -EIO, seq, e);
}

static void
commit_replied(struct op *op, enum rb_act a, const struct rb_error *e)
{
	struct ckpt	*ck = op->ck;

	if (a != RB_OK && a != RB_FATAL && again(op, a))
		return;
	if (a != RB_OK) {
		/* A trim past it (DIS.4224), the app deleted (DIS.4332), or
		 * the retries ran out; a newer commit may still go. */
		log_warn("%s; the records after the previous checkpoint may be "
		    "read again by the next run", e->message);
		ck->failed++;
	}
	if (op->later > op->seq) {
		op->seq = op->later;
		op->later = -1;
		op->attempt = op->throttles = 0;
		op->due = 0;
		return;
	}
	op_remove(op);
}

/* What the reply (or failure) a to op's call means; r NULL: not sent. */
static void
complete(struct op *op, enum rb_act a, const struct http_response *r,
    struct rb_error *e)
{
	if (op->kind == OP_APP)
		app_replied(op, a, e);
	else if (op->kind == OP_GET)
		get_replied(op, a, r, e);
	else
		commit_replied(op, a, e);
}

static void
on_reply(const struct http_response *r, void *arg)
{
	struct op	*op = arg;
	struct ckpt	*ck = op->ck;
	struct rb_error	 e;
	char		 what[160];
	enum rb_act	 a;

	ck->inflight--;
	op->inflight = false;
	if (closer_drop(&ck->closer) || ck->stopped)
		return;
	op_what(op, what, sizeof(what));
	a = rb_classify(r, what, &e);
	complete(op, a, r, &e);
	if (!ck->stopped)
		dispatch(ck);
}

/* --- sending -------------------------------------------------------------- */

static int
op_send(struct op *op)
{
	struct ckpt	*ck = op->ck;
	struct buf	 q;
	int		 rc;

	buf_reset(&op->body);
	switch (op->kind) {
	case OP_APP:
		if (!op->creating)
			return rb_get(ck->api, ck->app_path, NULL, on_reply, op);
		codec_app_body(&op->body, ck->app);
		return rb_call(ck->api, "POST", "apps/", NULL, op->body.data,
		    on_reply, op);
	case OP_GET:
		buf_init(&q);
		buf_printf(&q, "app_name=%s&checkpoint_type=LAST_READ&"
		    "stream_name=%s&partition_id=%s", ck->app, ck->stream,
		    op->part);
		rc = rb_get(ck->api, "checkpoints/", q.data, on_reply, op);
		buf_cleanup(&q);
		return rc;
	case OP_COMMIT:
		codec_checkpoint_body(&op->body, ck->app, ck->stream, op->part,
		    op->seq, ck->metadata);
		return rb_call(ck->api, "POST", "checkpoints/", NULL,
		    op->body.data, on_reply, op);
	}
	return -EINVAL;
}

/* Whether another call of partition is on the wire. */
static bool
part_busy(const struct ckpt *ck, const struct op *op)
{
	const struct op	*o;

	for (o = ck->ops; o != NULL; o = o->next)
		if (o != op && o->inflight && strcmp(o->part, op->part) == 0)
			return true;
	return false;
}

static void
on_timer(uv_timer_t *t)
{
	struct ckpt	*ck = container_of(t, struct ckpt, timer);
	ckpt_drain_cb	 cb;
	unsigned	 failed;

	if (ck->stopped)
		return;
	if (ck->ops == NULL && ck->drain_cb != NULL) {
		cb = ck->drain_cb;
		ck->drain_cb = NULL;
		failed = ck->failed;
		ck->failed = 0;
		cb(ck->drain_arg, failed);
		return;
	}
	dispatch(ck);
}

/* The first call that may go now, or NULL; *next: the earliest due. */
static struct op *
startable(struct ckpt *ck, uint64_t now, uint64_t *next)
{
	struct op	*op;

	for (op = ck->ops; op != NULL; op = op->next) {
		if (!op->inflight && op->due > now)
			*next = MIN(*next, op->due);
		else if (!op->inflight && ck->inflight < PARALLEL &&
		    !part_busy(ck, op))
			return op;
		/* Nothing passes the app until it is known. */
		if (op->kind == OP_APP)
			break;
	}
	return NULL;
}

static void
dispatch(struct ckpt *ck)
{
	struct rb_error	 e;
	struct op	*op;
	uint64_t	 now = mono_ms(), next = UINT64_MAX;

	while (!ck->stopped && (op = startable(ck, now, &next)) != NULL) {
		if (op_send(op) == 0) {
			op->inflight = true;
			ck->inflight++;
			closer_hold(&ck->closer);
			continue;
		}
		/* Not sent: as a network error (retried, or given up). */
		memset(&e, 0, sizeof(e));
		op_what(op, e.message, sizeof(e.message));
		strncat(e.message, ": cannot send", sizeof(e.message) -
		    strlen(e.message) - 1);
		complete(op, RB_RETRY, NULL, &e);
	}
	if (ck->stopped)
		return;
	if (ck->ops == NULL && ck->drain_cb != NULL)
		uv_timer_start(&ck->timer, on_timer, 0, 0);
	else if (next != UINT64_MAX)
		uv_timer_start(&ck->timer, on_timer, next - MIN(next, now), 0);
}

/* --- API ------------------------------------------------------------------ */

struct ckpt *
ckpt_new(uv_loop_t *loop, struct disapi *api, const char *app,
    const char *stream, const char *metadata, bool forever)
{
	struct ckpt	*ck;

	ck = xcalloc(1, sizeof(*ck));
	ck->loop = loop;
	ck->api = api;
	ck->app = xstrdup(app);
	ck->stream = xstrdup(stream);
	ck->metadata = metadata != NULL ? xstrdup(metadata) : NULL;
	ck->app_path = xasprintf("apps/%s/", app);
	ck->forever = forever;
	closer_init(&ck->closer, freed);
	uv_timer_init(loop, &ck->timer);
	return ck;
}

void
ckpt_app(struct ckpt *ck, bool create, ckpt_app_cb cb, void *arg)
{
	struct op	*op;

	op = op_add(ck, OP_APP, NULL);
	op->create = create;
	op->app_cb = cb;
	op->arg = arg;
	dispatch(ck);
}

void
ckpt_get(struct ckpt *ck, const char *partition, ckpt_get_cb cb, void *arg)
{
	struct op	*op;

	op = op_add(ck, OP_GET, partition);
	op->get_cb = cb;
	op->arg = arg;
	dispatch(ck);
}

void
ckpt_commit(struct ckpt *ck, const char *partition, int64_t seq)
{
	struct op	*op;

	for (op = ck->ops; op != NULL; op = op->next)
		if (op->kind == OP_COMMIT && strcmp(op->part, partition) == 0)
			break;
	if (op == NULL) {
		op = op_add(ck, OP_COMMIT, partition);
		op->seq = seq;
	} else if (op->inflight)
		op->later = MAX(op->later, seq);
	else
		op->seq = MAX(op->seq, seq);
	dispatch(ck);
}

bool
ckpt_busy(const struct ckpt *ck)
{
	return ck->ops != NULL;
}

void
ckpt_drain(struct ckpt *ck, ckpt_drain_cb cb, void *arg)
{
	ck->drain_cb = cb;
	ck->drain_arg = arg;
	dispatch(ck);
}

void
ckpt_stop(struct ckpt *ck)
{
	ck->stopped = true;
	uv_timer_stop(&ck->timer);
}

void
ckpt_free(struct ckpt *ck)
{
	if (ck == NULL)
		return;
	ckpt_stop(ck);
	closer_close(&ck->closer, (uv_handle_t *)&ck->timer);
	closer_release(&ck->closer);
}
