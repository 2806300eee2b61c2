/*
 * The read-back client (readback.h).  One state machine per partition:
 * GetCursor, then GetRecords with each reply's next cursor, one request in
 * flight and one timer per partition for waits (backoff, pacing, polls).
 * The stream is described first, page by page, and again every rescan
 * while following.
 *
 * Positions: a partition remembers the last sequence number it handed out;
 * a cursor that DIS no longer accepts (DIS.4217/4225/4226) is replaced by
 * one AFTER_SEQUENCE_NUMBER that number, and records at or before it are
 * never handed out twice.  LATEST starts from such a position too, taken
 * from the description ("[first : next]": the newest record is next - 1),
 * so that renewing its first cursor never skips what was written
 * meanwhile.  Without --follow a partition ends at the number its
 * description gave as next (see at_end()).  With an app, the position a
 * partition starts from is its committed checkpoint, looked up before
 * its first cursor; a checkpoint a trim left behind (DIS.4224) is one
 * WARN, and the partition goes on from the oldest record kept.
 *
 * Where a partition's next cursor starts is one state (enum from), each
 * entered in set_from():
 *
 *   START, LATEST --the app's checkpoint--> CKPT
 *   START, LATEST, CKPT --a record handed out--> LAST
 *   LATEST, OLDEST --a cursor--> LAST (a last number known) or START
 *   any --DIS.4224 for the cursor asked for--> OLDEST
 *
 * The memory goes once every timer is closed and no reply is awaited
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
#include "readback/describe.h"
#include "readback/rbcall.h"
#include "readback/readback.h"
#include "readback/readback_int.h"

#define MIB		(1024 * 1024)
#define EMPTY_WAIT_MS	200	/* an empty reply before the known end */
#define EMPTY_MAX	5	/* ... that many in a row end the partition */
#define RENEW_MAX	5	/* renewals in a row without a good reply */
#define WARN_EVERY	5	/* following: a warning per so many failures */
#define MIN_FETCH	(64 * 1024)

static const char *const pstate_names[] = { "idle", "active", "done" };

static const char *const from_names[] = {
	"start", "latest", "checkpoint", "last", "oldest",
};

static void	part_later(struct rb_part *, uint64_t);

/* A reply came back: false when the reader is stopped (and maybe freed). */
static bool
replied(struct readback *rb)
{
	return !closer_drop(&rb->closer) && !rb->stopped;
}

/* Stop everything and call done, once. */
void
rb_finish(struct readback *rb, int rc, const struct rb_error *e)
{
	struct rb_error	 none;

	if (rb->stopped)
		return;
	readback_stop(rb);
	if (e == NULL) {
		memset(&none, 0, sizeof(none));
		e = &none;
	}
	rb->cb.done(rb->arg, rc, e);
}

/* --- partitions --------------------------------------------------------- */

/* The one place a partition's state changes. */
static void
part_set_state(struct rb_part *p, enum pstate st)
{
	if (p->state == st)
		return;
	log_debug("stream %s partition %s: %s -> %s", p->rb->stream, p->id,
	    pstate_names[p->state], pstate_names[st]);
	p->state = st;
}

/* The one place where the next cursor starts changes. */
static void
set_from(struct rb_part *p, enum from from)
{
	if (p->from == from)
		return;
	log_debug("stream %s partition %s: next cursor from %s -> %s",
	    p->rb->stream, p->id, from_names[p->from], from_names[from]);
	p->from = from;
}

/*
 * Without --follow, after a reply of n records: is the partition read to
 * the end it had when described?  The end is "next" of "[first : next]",
 * the newest record being next - 1; should a DIS write the newest record
 * itself there instead, the rule still holds: a reply past next - 1 ends
 * it, and so does an empty one once next - 1 is read.  Without a known
 * end the first empty reply ends it, and a few in a row end it anyway.
 */
static bool
at_end(struct rb_part *p, size_t n)
{
	if (p->end < 0)
		return n == 0;
	if (n > 0)
		return p->last >= 0 && p->last >= p->end;
	return p->end <= p->first || (p->last >= 0 && p->last >= p->end - 1) ||
	    ++p->empty >= EMPTY_MAX;
}

void
rb_start_next(struct readback *rb)
{
	struct rb_part	*p;
	size_t		 max = rb->o.parallel ? rb->o.parallel : SIZE_MAX;

	for (p = rb->parts; p != NULL && rb->active < max; p = p->next)
		if (p->state == PS_IDLE) {
			part_set_state(p, PS_ACTIVE);
			rb->active++;
			part_later(p, 0);
		}
}

static void
part_done(struct rb_part *p)
{
	struct readback	*rb = p->rb;
	struct rb_part	*q;

	part_set_state(p, PS_DONE);
	rb->active--;
	rb_start_next(rb);
	for (q = rb->parts; q != NULL; q = q->next)
		if (q->state != PS_DONE)
			return;
	if (!rb->o.follow)
		rb_finish(rb, 0, NULL);
}

static bool
named(const struct readback *rb, const char *id)
{
	size_t	 i;

	for (i = 0; i < rb->nnames; i++)
		if (strcmp(rb->names[i], id) == 0)
			return true;
	return false;
}

/* DIS.4319 or DIS.4302 on a partition. */
static void
part_gone(struct rb_part *p, enum rb_act a, const struct rb_error *e)
{
	struct readback	*rb = p->rb;

	if (a == RB_NOPART && named(rb, p->id)) {
		rb_finish(rb, -ENOENT, e);
		return;
	}
	log_warn("stream %s: partition %s %s (%s); no more records from it",
	    rb->stream, p->id, a == RB_GONE ? "expired" : "does not exist",
	    e->code);
	part_done(p);
}

/* A failure of p's request: wait and try again, or give up. */
static void
part_failed(struct rb_part *p, enum rb_act a, const struct rb_error *e)
{
	uint64_t	 delay;

	if (a == RB_GONE || a == RB_NOPART) {
		part_gone(p, a, e);
		return;
	}
	if (!rb_backoff(a, p->rb->o.follow, &p->attempt, &p->throttles,
	    &delay)) {
		rb_finish(p->rb, -EIO, e);
		return;
	}
	if (a == RB_RETRY && p->attempt % WARN_EVERY == 0)
		log_warn("%s; still trying", e->message);
	part_later(p, delay);
}

static const char *
cursor_type(const struct rb_part *p)
{
	switch (p->from) {
	case FROM_OLDEST:
		return "TRIM_HORIZON";
	case FROM_LATEST:
		return "LATEST";
	case FROM_CKPT:
	case FROM_LAST:
		return "AFTER_SEQUENCE_NUMBER";
	case FROM_START:
		break;
	}
	switch (p->start) {
	case RB_LATEST:
		return "LATEST";
	case RB_AT_SEQUENCE:
		return "AT_SEQUENCE_NUMBER";
	case RB_AT_TIME:
		return "AT_TIMESTAMP";
	default:
		return "TRIM_HORIZON";
	}
}

/* Send p's request; failing to send is retried like a network error. */
static void
part_get(struct rb_part *p, const char *path, const char *query,
    http_done_cb cb)
{
	struct rb_error	 e;

	if (rb_get(p->rb->api, path, query, cb, p) == 0) {
		closer_hold(&p->rb->closer);
		return;
	}
	memset(&e, 0, sizeof(e));
	snprintf(e.message, sizeof(e.message), "GET %s of %s %s: cannot send",
	    path, p->rb->stream, p->id);
	part_failed(p, RB_RETRY, &e);
}

static void	on_cursor(const struct http_response *, void *);
static void	on_records(const struct http_response *, void *);
static void	on_checkpoint(const struct http_response *, void *);

static void
get_checkpoint(struct rb_part *p)
{
	struct readback	*rb = p->rb;
	struct buf	 q;

	buf_init(&q);
	buf_printf(&q, "app_name=%s&checkpoint_type=LAST_READ&stream_name=%s&"
	    "partition_id=%s", rb->app, rb->stream, p->id);
	part_get(p, "checkpoints/", q.data, on_checkpoint);
	buf_cleanup(&q);
}

static void
get_cursor(struct rb_part *p)
{
	struct readback	*rb = p->rb;
	const char	*type = cursor_type(p);
	struct buf	 q;

	buf_init(&q);
	buf_printf(&q, "stream-name=%s&partition-id=%s&cursor-type=%s",
	    rb->stream, p->id, type);
	if (strcmp(type, "AFTER_SEQUENCE_NUMBER") == 0)
		buf_printf(&q, "&starting-sequence-number=%" PRId64, p->last);
	else if (strcmp(type, "AT_SEQUENCE_NUMBER") == 0)
		buf_printf(&q, "&starting-sequence-number=%" PRId64,
		    rb->o.start_seq);
	else if (strcmp(type, "AT_TIMESTAMP") == 0)
		buf_printf(&q, "&timestamp=%" PRId64, rb->o.start_ms);
	part_get(p, "cursors/", q.data, on_cursor);
	buf_cleanup(&q);
}

static void
get_records(struct rb_part *p)
{
	struct buf	 q;

	buf_init(&q);
	buf_printf(&q, "partition-cursor=%s&max_fetch_bytes=%zu", p->cursor,
	    p->fetch);
	part_get(p, "records/", q.data, on_records);
	buf_cleanup(&q);
}

static void
on_part_timer(uv_timer_t *t)
{
	struct rb_part	*p = container_of(t, struct rb_part, timer);

	if (p->rb->stopped || p->state != PS_ACTIVE)
		return;
	if (!p->placed)
		get_checkpoint(p);
	else if (p->cursor == NULL)
		get_cursor(p);
	else
		get_records(p);
}

static void
part_later(struct rb_part *p, uint64_t ms)
{
	uv_timer_start(&p->timer, on_part_timer, ms, 0);
}

/*
 * --from N outside partition p's records: e, with what p holds and, when
 * every partition is read, that N applies to each (--partition picks).
 */
static void
sequence_out_of_range(struct rb_part *p, const struct rb_error *e)
{
	struct readback	*rb = p->rb;
	struct rb_error	 ee = *e;
	char		 held[96] = "";
	size_t		 n = strlen(ee.message);

	if (p->first >= 0 && p->end >= p->first)
		snprintf(held, sizeof(held), " holds sequence numbers %" PRId64
		    " to %" PRId64 ";", p->first, p->end - 1);
	snprintf(ee.message + n, sizeof(ee.message) - n, "; partition %s%s "
	    "--from %" PRId64 " %s", p->id, held, rb->o.start_seq,
	    rb->nnames == 0 ? "applies to every partition: read the ones "
	    "that hold it with --partition" : "is not in it");
	rb_finish(rb, -ERANGE, &ee);
}

/* DIS.4224 for the position asked for. */
static void
out_of_range(struct rb_part *p, const struct rb_error *e)
{
	struct readback	*rb = p->rb;

	if (p->from != FROM_OLDEST && p->last < 0 &&
	    p->start == RB_AT_SEQUENCE) {
		sequence_out_of_range(p, e);
		return;
	}
	if (p->from == FROM_OLDEST) {
		rb_finish(rb, -ERANGE, e);
		return;
	}
	if (p->from == FROM_CKPT)
		log_warn("stream %s partition %s: app %s's checkpoint %" PRId64
		    " is outside the records the partition holds (trimmed: "
		    "the records after it expired before they were read); "
		    "going on from the oldest record kept", rb->stream, p->id,
		    rb->app, p->last);
	else if (p->last >= 0)
		log_warn("stream %s partition %s: records after sequence "
		    "number %" PRId64 " expired before they were read; going "
		    "on from the oldest record kept", rb->stream, p->id,
		    p->last);
	set_from(p, FROM_OLDEST);
	part_later(p, 0);
}

static void
on_cursor(const struct http_response *r, void *arg)
{
	struct rb_part	*p = arg;
	struct rb_error	 e;
	char		 what[128];
	enum rb_act	 a;

	if (!replied(p->rb))
		return;
	snprintf(what, sizeof(what), "GetCursor %s %s", p->rb->stream, p->id);
	a = rb_classify(r, what, &e);
	if (a == RB_OK && codec_parse_cursor(r->body, r->bodylen,
	    &p->cursor) != 0)
		a = rb_unreadable(what, &e);
	if (a == RB_RANGE) {
		out_of_range(p, &e);
		return;
	}
	if (a != RB_OK) {
		part_failed(p, a == RB_RENEW ? RB_RETRY : a, &e);
		return;
	}
	if (p->from == FROM_OLDEST || p->from == FROM_LATEST)
		set_from(p, p->last >= 0 ? FROM_LAST : FROM_START);
	p->attempt = p->throttles = 0;
	get_records(p);
}

/* The app's checkpoint of p: where p starts. */
static void
on_checkpoint(const struct http_response *r, void *arg)
{
	struct rb_part	*p = arg;
	struct rb_error	 e;
	char		 what[160], *meta = NULL;
	int64_t		 seq;
	enum rb_act	 a;

	if (!replied(p->rb))
		return;
	snprintf(what, sizeof(what), "GetCheckpoint app %s stream %s "
	    "partition %s", p->rb->app, p->rb->stream, p->id);
	a = rb_classify(r, what, &e);
	if (a == RB_OK && codec_parse_checkpoint(r->body, r->bodylen, &seq,
	    &meta) != 0)
		a = rb_unreadable(what, &e);
	free(meta);
	if (a != RB_OK) {
		part_failed(p, a, &e);
		return;
	}
	p->placed = true;
	p->attempt = p->throttles = 0;
	if (seq >= 0) {
		/* After the checkpoint, whatever the start asked for. */
		p->last = seq;
		set_from(p, FROM_CKPT);
	}
	part_later(p, 0);
}

/* Hand out the records of a reply; false when a callback stopped us. */
static bool
hand_out(struct rb_part *p, const struct codec_records *recs, size_t *bytes,
    size_t *given)
{
	struct readback	*rb = p->rb;
	struct codec_record rec;
	size_t		 i, n = codec_records_count(recs);

	for (i = 0; i < n; i++) {
		codec_records_get(recs, i, &rec);
		/* After a renewal DIS may repeat what we had. */
		if (rec.seq <= p->last)
			continue;
		p->last = rec.seq;
		set_from(p, FROM_LAST);
		(*given)++;
		*bytes += rec.data64_len / 4 * 3;
		if (rb->cb.record(rb->arg, p->id, &rec) != 0) {
			rb_finish(rb, 0, NULL);
			return false;
		}
	}
	return true;
}

/* What follows a good reply of n records, bytes of them new. */
static void
after_records(struct rb_part *p, size_t n, size_t bytes)
{
	struct readback	*rb = p->rb;
	size_t		 rate;

	if (p->cursor == NULL) {
		log_warn("stream %s: partition %s is closed; no more records "
		    "from it", rb->stream, p->id);
		part_done(p);
	} else if (n == 0 && rb->o.follow)
		part_later(p, rb->o.poll_ms);
	else if (!rb->o.follow && at_end(p, n))
		part_done(p);
	else if (n == 0)
		part_later(p, EMPTY_WAIT_MS);
	else {
		/* Stay under the partition's read limit (2 MB/s COMMON,
		 * 10 MB/s ADVANCED) instead of running into DIS.4303. */
		rate = rb->advanced ? 10000000 : 2000000;
		part_later(p, (uint64_t)bytes * 1000 / rate);
	}
}

static void
got_records(struct rb_part *p, const struct codec_records *recs)
{
	const char	*next = codec_records_next(recs);
	size_t		 bytes = 0, given = 0;

	if (!hand_out(p, recs, &bytes, &given))
		return;
	free(p->cursor);
	p->cursor = next != NULL ? xstrdup(next) : NULL;
	p->attempt = p->throttles = p->renewals = 0;
	if (given > 0)
		p->empty = 0;
	after_records(p, codec_records_count(recs), bytes);
}

static void
on_records(const struct http_response *r, void *arg)
{
	struct rb_part	*p = arg;
	struct codec_records *recs = NULL;
	struct rb_error	 e;
	char		 what[128];
	enum rb_act	 a;

	if (!replied(p->rb))
		return;
	snprintf(what, sizeof(what), "GetRecords %s %s", p->rb->stream, p->id);
	a = rb_classify(r, what, &e);
	if (a == RB_OK && codec_parse_records(r->body, r->bodylen,
	    &recs) != 0)
		a = rb_unreadable(what, &e);
	if (a == RB_OK) {
		got_records(p, recs);
		codec_records_free(recs);
	} else if ((a == RB_RENEW || a == RB_RANGE) &&
	    ++p->renewals <= RENEW_MAX) {
		log_debug("%s; renewing the cursor", e.message);
		free(p->cursor);
		p->cursor = NULL;
		part_later(p, 0);
	} else if (a == RB_SMALLER && p->fetch / 2 >= MIN_FETCH) {
		p->fetch /= 2;
		part_later(p, 0);
	} else
		part_failed(p, a == RB_RENEW || a == RB_RANGE ? RB_FATAL :
		    a, &e);
}

struct rb_part *
rb_part_new(struct readback *rb, const struct codec_partition *cp,
    enum rb_start start)
{
	struct rb_part	*p;

	p = xcalloc(1, sizeof(*p));
	p->rb = rb;
	snprintf(p->id, sizeof(p->id), "%s", cp->id);
	p->start = start;
	p->last = -1;
	p->first = cp->seq_first;
	p->end = cp->seq_next;
	p->fetch = rb->advanced ? 5 * MIB : MIB;
	p->placed = rb->app == NULL;
	/* LATEST: DIS's own for the first cursor; should that one expire
	 * before a record comes, the renewal goes on after the newest record
	 * the description gave (next - 1), or from the oldest when there was
	 * none, and so skips nothing written meanwhile. */
	if (start == RB_LATEST && cp->seq_next >= 0) {
		p->start = RB_TRIM_HORIZON;
		p->from = FROM_LATEST;
		if (cp->seq_next > cp->seq_first)
			p->last = cp->seq_next - 1;
	}
	uv_timer_init(rb->loop, &p->timer);
	*rb->tail = p;
	rb->tail = &p->next;
	return p;
}
