/*
 * The DIS sink of one flow.  Each batch is sent as PutRecords; the reply is
 * matched to the request by position (lessons R13): acknowledged records are
 * marked done and never resent, records failing with a retriable code are
 * resent after a backoff, and records DIS rejects as invalid go to the
 * dead-letter file.  A batch waiting to resend such records (a remnant)
 * rides in the next request of the flow that has room for it, so that
 * throttling does not turn into a stream of small requests; the flow
 * leaves that room (sink_riders) and may submit while remnants wait
 * (sink_has_room).  Request-level failures are retried by cause
 * (dis-api.md section 4): transient ones with full-jitter backoff forever,
 * throttling more slowly and with fewer requests in flight (AIMD), and
 * credential, permission and stream errors pause the flow behind one slow
 * probe.  Nothing is ever dropped here.
 *
 * What a reply says is sinkreply.c's verdict (pure); this file alone acts
 * on it: retries on the timer, requeues, the pause and its probe, the
 * window (aimd.c's arithmetic), hand-backs, the request's metrics and
 * logs.  The records of a 200 it has sinkrecs.c settle (acknowledged,
 * dead-lettered, kept), which calls nothing back.
 *
 * Batches the sink owns are on the wire, in the timed queue (a retry, the
 * pacing gap or the paused probe, all on one timer), or waiting (before the
 * stream is described, or behind the probe while paused): sinkq.c, which
 * holds the sink's half of each batch (struct sink_batch; batch.h holds the
 * records, the flow's half).  DescribeStream is sinkdesc.c's, which reports
 * what it finds through callbacks, to sinklife.c, which makes, starts and
 * frees the sink.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "base/closer.h"
#include "base/log.h"
#include "base/metrics.h"
#include "conf/conf.h"
#include "dis/disapi.h"
#include "dis/http.h"
#include "sink/aimd.h"
#include "sink/batch.h"
#include "sink/outage.h"
#include "sink/putbody.h"
#include "sink/seqmark.h"
#include "sink/sink.h"
#include "sink/sinkdesc.h"
#include "sink/sink_int.h"
#include "sink/sinkq.h"
#include "sink/sinkrecs.h"
#include "sink/sinkreply.h"
#include "records/partkey.h"
#include "wire/codec.h"
#include "wire/retry.h"

#define HALT_LOG_EVERY_MS	60000


static void	try_send(struct sink *, struct sink_batch *);

static const char *const state_names[] = {
	"describing", "ready", "paused", "closing",
};

/* The one place the state changes. */
void
sink_set_state(struct sink *s, enum sink_state st)
{
	if (s->state == st)
		return;
	log_debug("[%s] sink %s -> %s", s->fc->name, state_names[s->state],
	    state_names[st]);
	s->state = st;
}

/* --- the queues (sinkq.c) --------------------------------------------- */

/* Hand the batch back to the flow (delivered or not). */
void
sink_hand_back(struct sink *s, struct sink_batch *sb, bool delivered)
{
	if (!delivered)
		sinkdoubt_keep(s, sb);
	s->cbs.done(sinkq_take(&s->q, sb), delivered, s->cbs.arg);
}

static void	on_timer(uv_timer_t *);

static void
arm_timer(struct sink *s)
{
	const struct sink_batch *head = sinkq_head(&s->q);
	uint64_t	 now = mono_ms();

	if (head == NULL || head->due_ms == SINKQ_PARKED) {
		uv_timer_stop(&s->timer);
		return;
	}
	uv_timer_start(&s->timer, on_timer,
	    head->due_ms > now ? head->due_ms - now : 0, 0);
}

/* Into the timed queue, in due order. */
static void
insert_timed(struct sink *s, struct sink_batch *sb)
{
	if (sinkq_insert(&s->q, sb))
		arm_timer(s);
}

void
sink_schedule(struct sink *s, struct sink_batch *sb, uint64_t delay_ms)
{
	sb->due_ms = mono_ms() + delay_ms;
	insert_timed(s, sb);
}

/* Take sb out of the timed queue; whether it was there. */
static bool
unschedule(struct sink *s, struct sink_batch *sb)
{
	if (!sinkq_remove(&s->q, sb))
		return false;
	arm_timer(s);
	return true;
}

/*
 * Whether remnants may ride in other batches' requests (sinkq_rider).
 * Not with ordered = true: there a remnant keeps its place in the window
 * and goes before anything newer, so records reach the stream in file
 * order.
 */
static bool
riding(const struct sink *s)
{
	return s->state == SINK_READY && !s->fc->ordered;
}

/*
 * Whether a riding remnant whose backoff is over may have a request of its
 * own now: only in a place of the window, and when no other batch of the
 * flow waits to leave (for the pacing gap, or a retry), with which it would
 * rather ride.  Otherwise it is parked, and goes when a request ends and
 * it may (release_parked), unless a request takes it first.
 */
static bool
remnant_may_go(const struct sink *s)
{
	return s->inflight < sink_window(s) && sinkq_only_remnants(&s->q);
}

static void
on_timer(uv_timer_t *t)
{
	struct sink	*s = container_of(t, struct sink, timer);
	struct sink_batch *due, *sb;

	/* Take every due batch first: try_send may schedule one again. */
	due = sinkq_take_due(&s->q, mono_ms());
	arm_timer(s);
	while ((sb = due) != NULL) {
		due = sb->next;
		sb->next = NULL;
		if (riding(s) && sinkq_rider(sb) && !remnant_may_go(s)) {
			sb->due_ms = SINKQ_PARKED;
			insert_timed(s, sb);
		} else
			try_send(s, sb);
	}
}

/*
 * A request ended: a remnant whose backoff is over and that was parked
 * (it had no place, or another batch was about to leave) goes now if it
 * may, the other remnants that fit riding with it.  Called after the
 * flow was told (its next batch, if any, goes first and takes them).
 */
static void
release_parked(struct sink *s)
{
	struct sink_batch *sb;

	if (s->state != SINK_READY || !remnant_may_go(s))
		return;
	if ((sb = sinkq_take_parked(&s->q)) == NULL)
		return;
	arm_timer(s);
	try_send(s, sb);	/* the others that fit ride with it */
}

/* Send every parked batch (ready, or no longer paused). */
void
sink_release_waiting(struct sink *s)
{
	struct sink_batch *sb;

	while (s->state == SINK_READY &&
	    (sb = sinkq_pop_waiting(&s->q)) != NULL)
		try_send(s, sb);
}

/* The next retry delay of sb (full jitter, its attempts counted). */
static uint64_t
backoff(struct sink *s, struct sink_batch *sb)
{
	return retry_backoff_ms(sb->attempt++,
	    (uint64_t)s->fc->retry_initial_backoff_ms,
	    (uint64_t)s->fc->retry_max_backoff_ms, rand_unit());
}

/* --- remnants riding with other requests ------------------------------- */

/* Called for every record the flow batches: nothing timed, no call. */
size_t
sink_riders(const struct sink *s, size_t *bytes)
{
	size_t	 nb;

	if (s->q.timed == NULL) {
		*bytes = 0;
		return 0;
	}
	return sinkq_riders(&s->q, riding(s), &nb, bytes);
}

bool
sink_has_room(const struct sink *s)
{
	size_t	 nb = 0, bytes;

	if (s->q.timed != NULL)
		(void)sinkq_riders(&s->q, riding(s), &nb, &bytes);
	return s->q.pending - nb < sink_window(s);
}

/*
 * Before sb's request is built: the remnants that fit take their place in
 * it (sinkq_absorb_riders), within maxBufferSizeRecords, the request cap
 * and BATCH_MAX_SEGS, so one full request goes instead of sb and a small
 * request per remnant.  Without this, per-record throttling shrinks every
 * retry (500, then 100, 20, 4, 1 records) while the remnants hold the
 * window's places.
 */
static void
absorb_riders(struct sink *s, struct sink_batch *sb)
{
	size_t		 n, taken, nb;

	if (!riding(s))
		return;
	nb = sinkq_absorb_riders(&s->q, sb, (size_t)s->fc->max_buffer_records,
	    s->request_cap, &taken, &n);
	if (nb == 0)
		return;
	arm_timer(s);
	log_debug("[%s] %zu records of %zu earlier batch%s ride in the next "
	    "request (%zu records)", s->fc->name, taken, nb,
	    nb == 1 ? "" : "es", n);
}

/* --- halts and pauses --------------------------------------------------- */

/* Delivery needs the operator: last error, ERROR once a minute, halt cb. */
void
sink_halt(struct sink *s, long status, const char *code, const char *msg)
{
	uint64_t	 now = mono_ms();
	char		 reason[512];

	if (status == 0)	/* not a reply: msg says it all */
		snprintf(reason, sizeof(reason), "stream [%s]: %s",
		    s->fc->stream, msg);
	else if (status == 407 && s->conf->proxy_host[0] != '\0')
		snprintf(reason, sizeof(reason), "stream [%s]: HTTP 407 from "
		    "the proxy %s:%lld: %s", s->fc->stream,
		    s->conf->proxy_host, s->conf->proxy_port,
		    retry_halt_hint(status, code));
	else
		snprintf(reason, sizeof(reason), "stream [%s]: HTTP %ld %s "
		    "%s: %s", s->fc->stream, status, code, msg,
		    retry_halt_hint(status, code));
	metrics_set_error(s->m, code[0] ? code : "HTTP", reason, wall_s());
	if (s->cbs.once)
		log_error("delivery stopped for %s; data stays on disk for "
		    "the next run", reason);
	else if (s->last_halt_log_ms == 0 ||
	    now - s->last_halt_log_ms >= HALT_LOG_EVERY_MS) {
		log_error("delivery paused for %s; data stays on disk and "
		    "is retried every %lld s", reason, s->conf->paused_retry_s);
		s->last_halt_log_ms = now;
	}
	if (s->cbs.halt != NULL)
		s->cbs.halt(reason, s->cbs.arg);
}

/* PAUSED: sb probes after delay, or waits behind the probe. */
static void
pause_behind_probe(struct sink *s, struct sink_batch *sb, uint64_t delay)
{
	sink_set_state(s, SINK_PAUSED);
	if (s->probe == NULL || s->probe == sb) {
		s->probe = sb;
		sink_schedule(s, sb, delay);
	} else
		sinkq_enqueue(&s->q, sb);
}

/* Delivery works again: the probe waiting for its slow retry goes now. */
static void
resume(struct sink *s, const char *what)
{
	struct sink_batch *probe = s->probe;

	if (s->state != SINK_PAUSED)
		return;
	log_info("%s [%s] resumed", what, s->fc->stream);
	s->last_halt_log_ms = 0;
	s->probe = NULL;
	sink_set_state(s, SINK_READY);
	if (probe != NULL && unschedule(s, probe))
		try_send(s, probe);
}

/* --- throttling (aimd.c) ---------------------------------------------- */

/* What the verdict says of the throttling; a decrease is counted. */
static void
adapt(struct sink *s, const struct sink_batch *sb, enum sinkreply_aimd a)
{
	if (a == SINKREPLY_AIMD_HALVE || a == SINKREPLY_AIMD_LESS)
		s->m->throttled++;
	aimd_adapt(&s->aimd, a, sb->sent_seq, s->sent_seq);
}

/* --- replies: the verdict applied --------------------------------------- */

bool
sink_finish_if_done(struct sink *s, struct sink_batch *sb)
{
	if (sb->b->ndone < sb->b->nrecs)
		return false;
	if (s->probe == sb)
		s->probe = NULL;
	sink_hand_back(s, sb, true);
	return true;
}

/*
 * What the attempt says about where sb's records are: with a verdict on
 * each of them (an error DIS answered took none, a 200 that parses says
 * which it took), sb no longer pins the sequence numbers (seqmark.h),
 * unless an earlier attempt left it uncertain; without one (no reply, a
 * 5xx, a 200 that does not parse) they may have landed, and sb stays
 * pinned and uncertain until it is handed back.
 */
static void
landed(struct sink_batch *sb, const struct sinkreply_verdict *v)
{
	if (v->uncertain)
		sb->uncertain = true;
	if (sb->uncertain)
		return;
	seqsnap_unpin(sb->pin);
	sb->pin = NULL;
}

/* SPLIT: the next requests carry at most v->split_limit records. */
static void
split(struct sink *s, struct sink_batch *sb, const struct sinkreply_verdict *v)
{
	sb->limit = v->split_limit;
	log_warn("PutRecords to [%s]: HTTP %ld %s: sending %zu records per "
	    "request", s->fc->stream, v->status, v->code, sb->limit);
	sink_schedule(s, sb, 0);
}

/* DEAD: the lone record refused is a dead letter, and the rest of a split
 * batch goes now; one that cannot be written is retried. */
static void
dead_one(struct sink *s, struct sink_batch *sb,
    const struct sinkreply_verdict *v)
{
	if (sb->req.nsent == 1 && sinkrecs_dead_one(&s->recs, sb->b,
	    v->dead_idx, v->code[0] ? v->code : "HTTP", v->msg) == 0) {
		sb->limit = 0;
		if (!sink_finish_if_done(s, sb))
			sink_schedule(s, sb, 0);
		return;
	}
	sink_schedule(s, sb, backoff(s, sb));
}

/* No reply, or an error reply: the whole request is judged. */
/*
 * body.serialize.type = auto and the endpoint refused protobuf: it took
 * none of the request's records, so the same records go again now, as
 * JSON, as every request of the run from now on.
 */
static void
reformat(struct sink *s, struct sink_batch *sb,
    const struct sinkreply_verdict *v)
{
	char	 why[256];

	snprintf(why, sizeof(why), "HTTP %ld%s%s%s%s", v->status,
	    v->code[0] ? " " : "", v->code, v->msg[0] ? " " : "", v->msg);
	disapi_protobuf_refused(s->api, why);
	putbody_fall_back(s->body);
	try_send(s, sb);
}

static void
request_failed(struct sink *s, struct sink_batch *sb,
    const struct sinkreply_verdict *v)
{
	uint64_t	 delay;
	char		 why[384], then[96];

	landed(sb, v);
	s->m->requests_failed++;
	s->m->records_retried += sb->req.nsent;
	if (v->error != NULL) {
		metrics_set_error(s->m, "NETWORK", v->error, wall_s());
		delay = backoff(s, sb);
		snprintf(then, sizeof(then), "retrying in %" PRIu64 " ms",
		    delay);
		outage_tell_failed(&s->outage, mono_ms(), s->what, v->error,
		    then);
		sinkdoubt_retry(s, sb, delay);
		return;
	}
	if (v->action == SINKREPLY_REFORMAT) {
		reformat(s, sb, v);
		return;
	}
	if (v->action != SINKREPLY_PAUSE)
		metrics_set_error(s->m, v->code[0] ? v->code : "HTTP", v->msg,
		    wall_s());
	switch (v->action) {
	case SINKREPLY_PAUSE:
		sink_halt(s, v->status, v->code, v->msg);
		pause_behind_probe(s, sb, v->pause_ms);
		return;
	case SINKREPLY_SPLIT:
		split(s, sb, v);
		return;
	case SINKREPLY_DEAD:
		dead_one(s, sb, v);
		return;
	default:
		break;
	}
	adapt(s, sb, v->aimd);
	delay = MAX(backoff(s, sb), v->min_delay_ms);
	snprintf(why, sizeof(why), "HTTP %ld %s %s", v->status, v->code,
	    v->msg);
	snprintf(then, sizeof(then), "%s in %" PRIu64 " ms",
	    retry_action_name(v->retry), delay);
	outage_tell_failed(&s->outage, mono_ms(), s->what, why, then);
	sinkdoubt_retry(s, sb, delay);
}

/*
 * A 200 whose body acknowledges no record: not a PutRecords reply (an HTML
 * page, truncated JSON) or one for another number of records.  Nothing of
 * it is believed; the whole request goes again.
 */
static void
unacknowledged(struct sink *s, struct sink_batch *sb,
    const struct http_response *r, const struct sinkreply_verdict *v)
{
	char	 why[96];

	s->m->requests_failed++;
	s->m->replies_unacknowledged++;
	s->m->records_retried += sb->req.nsent;
	if (v->entries >= 0)
		snprintf(why, sizeof(why), "the reply acknowledges %d of %zu "
		    "records", v->entries, sb->req.nsent);
	else
		snprintf(why, sizeof(why), "unparsable reply (%zu bytes)",
		    r->bodylen);
	metrics_set_error(s->m, "REPLY", why, wall_s());
	log_warn("PutRecords to [%s]: %s; resending all %zu", s->fc->stream,
	    why, sb->req.nsent);
	sinkdoubt_retry(s, sb, backoff(s, sb));
}

static void
records_replied(struct sink *s, struct sink_batch *sb,
    const struct http_response *r, const struct sinkreply_verdict *v)
{
	size_t		 throttled = 0;
	bool		 retry;

	landed(sb, v);
	if (v->action == SINKREPLY_UNACKED) {
		unacknowledged(s, sb, r, v);
		return;
	}
	s->m->records_failed += v->nfail;
	retry = sinkrecs_settle(&s->recs, sb->b, &sb->req, v, sb->sent_ms,
	    &throttled);
	adapt(s, sb, throttled == 0 ? v->aimd :
	    sinkreply_aimd(v->throttled + throttled, sb->req.nsent));
	if (sink_finish_if_done(s, sb))
		return;
	if (!retry) {
		/* A split batch: the next part goes now. */
		sb->attempt = 0;
		try_send(s, sb);
		return;
	}
	/* Records failed one by one: they go again after the backoff, in a
	 * request of their own only when nothing else of the flow waits to
	 * leave, else in the first request with room for them (remnant_may_go,
	 * absorb_riders).  Meanwhile the batch takes no place in the window,
	 * so the flow's next batch can be that request. */
	sb->remnant = true;
	sink_schedule(s, sb, backoff(s, sb));
}

/* http_done_cb of a PutRecords request; arg is the sink_batch. */
static void
on_put_done(const struct http_response *r, void *arg)
{
	struct sink_batch *sb = arg;
	struct sink	*s = sb->sink;
	struct sinkreply_opts o;
	struct sinkreply_verdict v;

	s->inflight--;
	putbody_req_drop_body(&sb->req);
	if (r->result == HTTP_ERR_CANCELLED || s->state == SINK_CLOSING) {
		sb->uncertain = true;	/* it was on the wire */
		sink_hand_back(s, sb, false);
		return;
	}
	metrics_count_request(s->m, r->result == HTTP_OK ? (int)r->status :
	    0);
	metrics_observe_latency(&s->m->latency, r->seconds);
	o.body = s->body;
	o.retriable = s->conf->retriable_codes;
	o.paused_ms = (uint64_t)s->conf->paused_retry_s * 1000;
	o.renewing = disapi_renewing(s->api);
	(void)disapi_protobuf_ok(s->api, &o.protobuf_taken);
	sinkreply_judge(r, &sb->req, &o, &v);
	if (v.action == SINKREPLY_RECORDS && !o.protobuf_taken &&
	    putbody_req_protobuf(s->body, &sb->req))
		disapi_protobuf_taken(s->api);
	if (v.action == SINKREPLY_RECORDS)
		outage_tell_ended(&s->outage, mono_ms(), s->what);
	if (v.action == SINKREPLY_RECORDS || v.action == SINKREPLY_UNACKED) {
		if (s->probe == sb)
			s->probe = NULL;
		if (s->described)
			resume(s, "delivery to");
		records_replied(s, sb, r, &v);
		sink_release_waiting(s);
	} else
		request_failed(s, sb, &v);
	sinkreply_verdict_cleanup(&v);
	if (s->cbs.ended != NULL)
		s->cbs.ended(s->cbs.arg);
	release_parked(s);
}

/* --- sending ------------------------------------------------------------ */

static void
send_batch(struct sink *s, struct sink_batch *sb)
{
	struct putbody_headers zh;
	struct disapi_call c;
	int		 rc;

	if (sb->limit == 0)
		absorb_riders(s, sb);
	if (!disapi_protobuf_ok(s->api, NULL))
		putbody_fall_back(s->body);	/* auto, refused by now */
	rc = putbody_build(s->body, sb->b, sb->limit, s->fc->stream,
	    s->fc->stream_id, &sb->req, &zh);
	if (rc == 0 && s->cbs.sending != NULL)
		s->cbs.sending(s->cbs.arg);
	if (rc == 0) {
		memset(&c, 0, sizeof(c));
		c.method = "POST";
		c.path = "records/";
		c.ctype = putbody_ctype(s->body, &sb->req);
		c.body = sb->req.body.data;
		c.bodylen = sb->req.body.len;
		c.extra = zh.h;
		c.nextra = zh.n;
		rc = disapi_send(s->api, &c, on_put_done, sb);
	}
	if (rc == -EKEYEXPIRED) {
		/* No valid keys (yet): paused, nothing sent, retried soon. */
		putbody_req_drop_body(&sb->req);
		sink_halt(s, 0, "CREDENTIALS", disapi_key_error(s->api));
		pause_behind_probe(s, sb, MIN(backoff(s, sb),
		    (uint64_t)s->conf->paused_retry_s * 1000));
		return;
	}
	if (rc != 0) {
		putbody_req_drop_body(&sb->req);
		log_error("cannot send to [%s]: %s; retrying",
		    s->fc->stream, strerror(-rc));
		metrics_set_error(s->m, "SEND", strerror(-rc), wall_s());
		sink_schedule(s, sb, backoff(s, sb));
		return;
	}
	sb->sent_ms = mono_ms();
	sb->sent_seq = ++s->sent_seq;
	s->inflight++;
	/* Its records land after every one acknowledged so far. */
	if (sb->pin == NULL)
		sb->pin = seqmark_pin(s->seq);
}

/*
 * Send sb now, later (pacing), or park it: before the stream is described,
 * and while paused, when another batch is the probe.
 */
static void
try_send(struct sink *s, struct sink_batch *sb)
{
	uint64_t	 now;

	if (s->state == SINK_DESCRIBING || (s->state == SINK_PAUSED &&
	    (!s->described || (s->probe != NULL && s->probe != sb)))) {
		sinkq_enqueue(&s->q, sb);
		return;
	}
	if (s->state == SINK_PAUSED)
		s->probe = sb;
	now = mono_ms();
	if (s->next_send_ms > now) {
		sink_schedule(s, sb, s->next_send_ms - now);
		return;
	}
	s->next_send_ms = now + s->aimd.pace_ms;
	send_batch(s, sb);
}

void
sink_submit(struct sink *s, struct batch *b)
{
	try_send(s, sinkq_add(&s->q, s, b));
}
