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
 * Batches the sink owns are on the wire, in the timed queue (a retry, the
 * pacing gap or the paused probe, all on one timer), or waiting (before the
 * stream is described, or behind the probe while paused).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/metrics.h"
#include "conf/conf.h"
#include "dis/disapi.h"
#include "dis/http.h"
#include "records/deadletter.h"
#include "sink/batch.h"
#include "sink/putbody.h"
#include "sink/seqmark.h"
#include "sink/sink.h"
#include "wire/codec.h"
#include "wire/codec_read.h"
#include "wire/retry.h"

#include "sink/sink_int.h"

#define DESCRIBE_RETRY_MS	1000

static void	describe(struct sink *);

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

/* --- setup -------------------------------------------------------------- */

static void
set_caps(struct sink *s, const char *type)
{
	s->request_cap = codec_request_cap(type,
	    (size_t)s->fc->max_buffer_bytes);
}

double
sink_max_window(const struct sink *s)
{
	return s->fc->ordered ? 1.0 : (double)s->fc->max_in_flight;
}

struct sink *
sink_new(uv_loop_t *loop, struct disapi *api, const struct conf *conf,
    const struct conf_flow *fc, struct deadletter *dlq,
    struct metrics_flow *m, const struct sink_cbs *cbs)
{
	struct sink	*s;

	s = xcalloc(1, sizeof(*s));
	s->loop = loop;
	s->api = api;
	s->conf = conf;
	s->fc = fc;
	s->dlq = dlq;
	s->m = m;
	s->cbs = *cbs;
	s->state = SINK_DESCRIBING;
	s->body = putbody_new(conf);
	s->describe_path = xasprintf("streams/%s/", fc->stream);
	uv_timer_init(loop, &s->timer);
	uv_timer_init(loop, &s->describe_timer);
	s->open_handles = 2;
	s->window = sink_max_window(s);
	s->seq = seqmark_new();
	set_caps(s, fc->stream_type);
	return s;
}

void
sink_start(struct sink *s)
{
	if (s->fc->stream_id[0] != '\0') {
		log_info("DISStream %s type is %s", s->fc->stream_id,
		    s->fc->stream_type);
		s->described = true;
		sink_set_state(s, SINK_READY);
		return;
	}
	describe(s);
}

size_t
sink_pending(const struct sink *s)
{
	return s->pending;
}

size_t
sink_inflight(const struct sink *s)
{
	/* A DescribeStream on the wire too: its reply reaches the sink, so
	 * a reload frees a drained flow only once it ended. */
	return s->inflight + (s->describing ? 1 : 0);
}

size_t
sink_window(const struct sink *s)
{
	return s->window < 1.0 ? 1 : (size_t)s->window;
}

enum sink_state
sink_state(const struct sink *s)
{
	return s->state;
}

size_t
sink_request_cap(const struct sink *s)
{
	return s->request_cap;
}

size_t
sink_record_cap(const struct sink *s)
{
	return s->request_cap;
}

/* --- the queues --------------------------------------------------------- */

/* b leaves the list of the batches the sink holds. */
static void
unlink_all(struct sink *s, struct batch *b)
{
	if (b->all_prev != NULL)
		b->all_prev->all_next = b->all_next;
	else
		s->all = b->all_next;
	if (b->all_next != NULL)
		b->all_next->all_prev = b->all_prev;
	b->all_next = b->all_prev = NULL;
}

void
sink_hand_back(struct sink *s, struct batch *b, bool delivered)
{
	s->pending--;
	unlink_all(s, b);
	seqsnap_unpin(b->pin);
	b->pin = NULL;
	s->cbs.done(b, delivered, s->cbs.arg);
}

void
sink_enqueue(struct sink *s, struct batch *b)
{
	struct batch	**pp;

	b->next = NULL;
	for (pp = &s->waiting; *pp != NULL; pp = &(*pp)->next)
		;
	*pp = b;
}

static void	on_timer(uv_timer_t *);

/* The due time of a parked remnant: after every other, never a timer. */
#define PARKED	UINT64_MAX

static void
arm_timer(struct sink *s)
{
	uint64_t	 now = mono_ms();

	if (s->timed == NULL || s->timed->due_ms == PARKED) {
		uv_timer_stop(&s->timer);
		return;
	}
	uv_timer_start(&s->timer, on_timer,
	    s->timed->due_ms > now ? s->timed->due_ms - now : 0, 0);
}

/* Into the timed queue, in due order. */
static void
insert_timed(struct sink *s, struct batch *b)
{
	struct batch	**pp;

	for (pp = &s->timed; *pp != NULL && (*pp)->due_ms <= b->due_ms;
	    pp = &(*pp)->next)
		;
	b->next = *pp;
	*pp = b;
	if (s->timed == b)
		arm_timer(s);
}

/* Send b after delay_ms (a retry, the pacing gap, the probe). */
void
sink_schedule(struct sink *s, struct batch *b, uint64_t delay_ms)
{
	b->due_ms = mono_ms() + delay_ms;
	insert_timed(s, b);
}

/*
 * Whether t, in the timed queue, may ride in another batch's request: it
 * waits to resend records that failed one by one (not a whole request
 * that failed: that one is retried as it was), it was not split by a 413,
 * and it leaves room for the segments of the batch that takes it.  Not
 * with ordered = true: there a remnant keeps its place in the window and
 * goes before anything newer, so records reach the stream in file order.
 */
static bool
rider(const struct sink *s, const struct batch *t)
{
	return s->state == SINK_READY && !s->fc->ordered && t->remnant &&
	    t->limit == 0 && t->nsegs < BATCH_MAX_SEGS;
}

/*
 * Whether a riding remnant whose backoff is over may have a request of its
 * own now: only in a place of the window, and when no other batch of the
 * flow waits to leave (for the pacing gap, or a retry), with which it would
 * rather ride.  Otherwise it is parked, and goes when a request ends and
 * it may (sink_release_parked), unless a request takes it first.
 */
static bool
remnant_may_go(const struct sink *s)
{
	const struct batch *t;

	if (s->inflight >= sink_window(s))
		return false;
	for (t = s->timed; t != NULL; t = t->next)
		if (!t->remnant)
			return false;
	return true;
}

static void
on_timer(uv_timer_t *t)
{
	struct sink	*s = container_of(t, struct sink, timer);
	struct batch	*due = NULL, **tail = &due, *b;
	uint64_t	 now = mono_ms();

	/* Take every due batch first: try_send may schedule one again. */
	while ((b = s->timed) != NULL && b->due_ms <= now) {
		s->timed = b->next;
		b->next = NULL;
		*tail = b;
		tail = &b->next;
	}
	arm_timer(s);
	while ((b = due) != NULL) {
		due = b->next;
		b->next = NULL;
		if (rider(s, b) && !remnant_may_go(s)) {
			b->due_ms = PARKED;
			insert_timed(s, b);
		} else
			sink_try_send(s, b);
	}
}

void
sink_release_parked(struct sink *s)
{
	struct batch	**pp, *b;

	if (s->state != SINK_READY || !remnant_may_go(s))
		return;
	for (pp = &s->timed; (b = *pp) != NULL; pp = &b->next)
		if (b->due_ms == PARKED) {
			*pp = b->next;
			b->next = NULL;
			arm_timer(s);
			/* The others that fit ride with it. */
			sink_try_send(s, b);
			return;
		}
}

/* Send every parked batch (ready, or no longer paused). */
void
sink_release_waiting(struct sink *s)
{
	struct batch	*b;

	while ((b = s->waiting) != NULL && s->state == SINK_READY) {
		s->waiting = b->next;
		b->next = NULL;
		sink_try_send(s, b);
	}
}

/* Take b out of the timed queue; whether it was there. */
bool
sink_unschedule(struct sink *s, struct batch *b)
{
	struct batch	**pp;

	for (pp = &s->timed; *pp != NULL; pp = &(*pp)->next)
		if (*pp == b) {
			*pp = b->next;
			b->next = NULL;
			arm_timer(s);
			return true;
		}
	return false;
}

uint64_t
sink_backoff(struct sink *s, struct batch *b)
{
	return retry_backoff_ms(b->attempt++,
	    (uint64_t)s->fc->retry_initial_backoff_ms,
	    (uint64_t)s->fc->retry_max_backoff_ms, rand_unit());
}

/* --- remnants riding with other requests ------------------------------- */


size_t
sink_riders(const struct sink *s, size_t *bytes)
{
	const struct batch *t;
	size_t		 n = 0, tb;

	*bytes = 0;
	for (t = s->timed; t != NULL; t = t->next)
		if (rider(s, t)) {
			n += batch_undone(t, &tb);
			*bytes += tb;
		}
	return n;
}

bool
sink_has_room(const struct sink *s)
{
	const struct batch *t;
	size_t		 riders = 0;

	for (t = s->timed; t != NULL; t = t->next)
		riders += rider(s, t);
	return s->pending - riders < sink_window(s);
}

/*
 * t, absorbed into b, leaves the sink's list; what it pinned and its
 * uncertainty are b's now.  b may hold a pin of its own (an earlier
 * attempt of b's without a verdict), from before t's or after: b keeps
 * the least of both, so the floors stay below every record of either
 * that may have landed.
 */
static void
forget(struct sink *s, struct batch *t, struct batch *b)
{
	unlink_all(s, t);
	b->pin = seqsnap_join(b->pin, t->pin);
	t->pin = NULL;
	b->uncertain = b->uncertain || t->uncertain;
}

/*
 * Before b's request is built: the remnants that fit take their place in
 * it, oldest first (the timed queue is in due order), within
 * maxBufferSizeRecords, the request cap and BATCH_MAX_SEGS.  Each is merged
 * into b (batch_absorb: b's delivery acknowledges its ranges too) and
 * freed, so one full request goes instead of b and a small request per
 * remnant.  Without this, per-record throttling shrinks every retry (500,
 * then 100, 20, 4, 1 records) while the remnants hold the window's places.
 */
static void
absorb_riders(struct sink *s, struct batch *b)
{
	struct batch	**pp, *t;
	size_t		 n, bytes, tn, tbytes, taken = 0, nb = 0;

	n = batch_undone(b, &bytes);
	for (pp = &s->timed; (t = *pp) != NULL;) {
		if (t == b || !rider(s, t)) {
			pp = &t->next;
			continue;
		}
		tn = batch_undone(t, &tbytes);
		if (n + tn > (size_t)s->fc->max_buffer_records ||
		    bytes + tbytes > s->request_cap ||
		    b->nsegs + t->nsegs > BATCH_MAX_SEGS) {
			pp = &t->next;
			continue;
		}
		*pp = t->next;
		t->next = NULL;
		batch_absorb(b, t);
		forget(s, t, b);
		batch_free(t);		/* its records and ranges are b's */
		s->pending--;
		n += tn;
		bytes += tbytes;
		taken += tn;
		nb++;
	}
	if (nb == 0)
		return;
	arm_timer(s);
	log_debug("[%s] %zu records of %zu earlier batch%s ride in the next "
	    "request (%zu records)", s->fc->name, taken, nb,
	    nb == 1 ? "" : "es", n);
}

/* --- sending ------------------------------------------------------------ */

static void
send_batch(struct sink *s, struct batch *b)
{
	struct putbody_headers zh;
	struct disapi_call c;
	int		 rc;

	if (b->limit == 0)
		absorb_riders(s, b);
	rc = putbody_build(s->body, b, s->fc->stream, s->fc->stream_id, &zh);
	if (rc == 0 && s->cbs.sending != NULL)
		s->cbs.sending(s->cbs.arg);
	if (rc == 0) {
		memset(&c, 0, sizeof(c));
		c.method = "POST";
		c.path = "records/";
		c.ctype = putbody_ctype(s->body);
		c.body = b->body.data;
		c.bodylen = b->body.len;
		c.extra = zh.h;
		c.nextra = zh.n;
		rc = disapi_send(s->api, &c, sinkreply_done, b);
	}
	if (rc == -EKEYEXPIRED) {
		/* No valid keys (yet): paused, nothing sent, retried soon. */
		batch_drop_body(b);
		sinkreply_halt(s, 0, "CREDENTIALS", disapi_key_error(s->api));
		sinkreply_pause(s, b, MIN(sink_backoff(s, b),
		    (uint64_t)s->conf->paused_retry_s * 1000));
		return;
	}
	if (rc != 0) {
		batch_drop_body(b);
		log_error("cannot send to [%s]: %s; retrying",
		    s->fc->stream, strerror(-rc));
		metrics_set_error(s->m, "SEND", strerror(-rc), wall_s());
		sink_schedule(s, b, sink_backoff(s, b));
		return;
	}
	b->sending = true;
	b->sent_ms = mono_ms();
	b->sent_seq = ++s->sent_seq;
	s->inflight++;
	/* Its records land after every one acknowledged so far. */
	if (b->pin == NULL)
		b->pin = seqmark_pin(s->seq);
}

/*
 * Send b now, later (pacing), or park it: before the stream is described,
 * and while paused, when another batch is the probe.
 */
void
sink_try_send(struct sink *s, struct batch *b)
{
	uint64_t	 now;

	if (s->state == SINK_DESCRIBING || (s->state == SINK_PAUSED &&
	    (!s->described || (s->probe != NULL && s->probe != b)))) {
		sink_enqueue(s, b);
		return;
	}
	if (s->state == SINK_PAUSED)
		s->probe = b;
	now = mono_ms();
	if (s->next_send_ms > now) {
		sink_schedule(s, b, s->next_send_ms - now);
		return;
	}
	s->next_send_ms = now + s->pace_ms;
	send_batch(s, b);
}

void
sink_submit(struct sink *s, struct batch *b)
{
	b->sink = s;
	b->next = NULL;
	b->all_prev = NULL;
	b->all_next = s->all;
	if (s->all != NULL)
		s->all->all_prev = b;
	s->all = b;
	s->pending++;
	sink_try_send(s, b);
}

/* --- DescribeStream ----------------------------------------------------- */

static void
on_describe_timer(uv_timer_t *t)
{
	describe(container_of(t, struct sink, describe_timer));
}

static void
describe_again(struct sink *s, uint64_t delay)
{
	uv_timer_start(&s->describe_timer, on_describe_timer, delay, 0);
}

static uint64_t
describe_backoff(struct sink *s)
{
	return retry_backoff_ms(s->describe_attempt++, DESCRIBE_RETRY_MS,
	    30000, rand_unit());
}

/*
 * Each partition's newest record before anything of this run can land in
 * it (the sink waits for the stream to be described before it sends).
 */
static void
seed_partitions(struct sink *s, const struct http_response *r)
{
	struct codec_stream st;
	int32_t		 part;
	size_t		 i;

	memset(&st, 0, sizeof(st));
	if (codec_parse_stream(r->body, r->bodylen, &st) == 0)
		for (i = 0; i < st.nparts; i++) {
			part = codec_partition_index(st.parts[i].id,
			    strlen(st.parts[i].id));
			if (st.parts[i].seq_next >= 0)
				seqmark_seed(s->seq, part,
				    st.parts[i].seq_next - 1);
		}
	codec_stream_cleanup(&st);
}

static void
describe_replied(struct sink *s, const struct http_response *r)
{
	struct stream_info si;

	if (codec_parse_describe(r->body, r->bodylen, &si) != 0) {
		log_warn("DescribeStream [%s]: unparsable reply; retrying",
		    s->fc->stream);
		metrics_set_error(s->m, "REPLY",
		    "unparsable DescribeStream reply", wall_s());
		describe_again(s, describe_backoff(s));
		return;
	}
	if (strcmp(si.status, "CREATING") == 0) {
		log_info("DISStream %s is CREATING; waiting", s->fc->stream);
		describe_again(s, DESCRIBE_RETRY_MS);
		return;
	}
	if (strcmp(si.status, "RUNNING") != 0 && si.status[0] != '\0') {
		sink_set_state(s, SINK_PAUSED);
		sinkreply_halt(s, 200, "", si.status);
		describe_again(s, (uint64_t)s->conf->paused_retry_s * 1000);
		return;
	}
	seed_partitions(s, r);
	if (s->state == SINK_PAUSED)
		log_info("DISStream %s is available again", s->fc->stream);
	set_caps(s, si.type[0] ? si.type : s->fc->stream_type);
	log_info("DISStream %s type is %s", s->fc->stream,
	    si.type[0] ? si.type : s->fc->stream_type);
	s->described = true;
	s->last_halt_log_ms = 0;
	sink_set_state(s, SINK_READY);
	sink_release_waiting(s);
}

static void
describe_failed(struct sink *s, const struct http_response *r)
{
	char		 code[32] = "", msg[160] = "";
	enum retry_action a;

	if (r->result != HTTP_OK) {
		/* DNS, connect, TLS: the most common misconfiguration. */
		metrics_set_error(s->m, "NETWORK",
		    r->error ? r->error : "error", wall_s());
		log_warn("DescribeStream [%s] failed: %s; retrying",
		    s->fc->stream, r->error ? r->error : "error");
		describe_again(s, describe_backoff(s));
		return;
	}
	(void)codec_parse_error(r->body, r->bodylen, code, sizeof(code), msg,
	    sizeof(msg));
	a = sinkreply_classify(s, r->status, code);
	if (a == RETRY_HALT || a == RETRY_HARD) {
		sink_set_state(s, SINK_PAUSED);
		sinkreply_halt(s, r->status, code, msg);
		describe_again(s, a == RETRY_HARD ? HARD_RETRY_MS :
		    (uint64_t)s->conf->paused_retry_s * 1000);
		return;
	}
	metrics_set_error(s->m, code[0] ? code : "HTTP", msg, wall_s());
	log_warn("DescribeStream [%s] failed: HTTP %ld %s %s; retrying",
	    s->fc->stream, r->status, code, msg);
	describe_again(s, describe_backoff(s));
}

static void
on_describe_done(const struct http_response *r, void *arg)
{
	struct sink	*s = arg;

	s->describing = false;
	if (r->result == HTTP_ERR_CANCELLED || s->state == SINK_CLOSING)
		return;
	metrics_count_request(s->m, r->result == HTTP_OK ? (int)r->status :
	    0);
	if (r->result == HTTP_OK && r->status == 200)
		describe_replied(s, r);
	else
		describe_failed(s, r);
	if (s->cbs.ended != NULL)
		s->cbs.ended(s->cbs.arg);
}

static void
describe(struct sink *s)
{
	struct disapi_call c;
	int		 rc;

	if (s->state == SINK_CLOSING || s->describing)
		return;
	memset(&c, 0, sizeof(c));
	c.method = "GET";
	c.path = s->describe_path;
	rc = disapi_send(s->api, &c, on_describe_done, s);
	if (rc == -EKEYEXPIRED) {
		sink_set_state(s, SINK_PAUSED);
		sinkreply_halt(s, 0, "CREDENTIALS", disapi_key_error(s->api));
		describe_again(s, describe_backoff(s));
		return;
	}
	if (rc != 0) {
		log_error("DescribeStream [%s]: %s", s->fc->stream,
		    strerror(-rc));
		metrics_set_error(s->m, "SEND", strerror(-rc), wall_s());
		describe_again(s, (uint64_t)s->conf->paused_retry_s * 1000);
		return;
	}
	s->describing = true;
}

/* --- teardown ----------------------------------------------------------- */

static void
give_back_list(struct sink *s, struct batch *list)
{
	struct batch	*b;

	while ((b = list) != NULL) {
		list = b->next;
		b->next = NULL;
		sink_hand_back(s, b, false);
	}
}

void
sink_cancel(struct sink *s)
{
	struct batch	*w = s->waiting, *t = s->timed;

	sink_set_state(s, SINK_CLOSING);
	uv_timer_stop(&s->timer);
	uv_timer_stop(&s->describe_timer);
	s->waiting = s->timed = s->probe = NULL;
	give_back_list(s, w);
	give_back_list(s, t);
}

static void
sink_closed(uv_handle_t *h)
{
	struct sink	*s = h->data;

	if (--s->open_handles > 0)
		return;
	free(s);
}

void
sink_seed(struct sink *s, int32_t part, int64_t last)
{
	seqmark_seed(s->seq, part, last);
}

void
sink_floors(const struct sink *s, void (*cb)(int32_t, int64_t, void *),
    void *arg)
{
	struct seqsnap	**pins;
	struct batch	*b;
	size_t		 n = 0;

	pins = xcalloc(s->pending + 1, sizeof(*pins));
	for (b = s->all; b != NULL; b = b->all_next)
		if (n < s->pending)
			pins[n++] = b->pin;
	seqmark_floors(s->seq, pins, n, cb, arg);
	free(pins);
}

void
sink_each(const struct sink *s, void (*fn)(const struct batch *, void *),
    void *arg)
{
	const struct batch *b;

	for (b = s->all; b != NULL; b = b->all_next)
		fn(b, arg);
}

bool
sink_uncertain(const struct sink *s)
{
	const struct batch *b;

	for (b = s->all; b != NULL; b = b->all_next)
		if (b->uncertain && b->ndone < b->nrecs)
			return true;
	return false;
}

void
sink_free(struct sink *s)
{
	if (s == NULL)
		return;
	sink_cancel(s);
	seqmark_free(s->seq);
	s->seq = NULL;
	putbody_free(s->body);
	free(s->describe_path);
	s->timer.data = s;
	s->describe_timer.data = s;
	uv_close((uv_handle_t *)&s->timer, sink_closed);
	uv_close((uv_handle_t *)&s->describe_timer, sink_closed);
}
