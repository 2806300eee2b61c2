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
 * on it: the queues and the timer, the window, the pause, the dead letters
 * and the records' acknowledgements, the metrics and the logs.
 *
 * Batches the sink owns are on the wire, in the timed queue (a retry, the
 * pacing gap or the paused probe, all on one timer), or waiting (before the
 * stream is described, or behind the probe while paused).  Each has a
 * struct sink_batch, the sink's half of it (batch.h holds the records,
 * the flow's half), from sink_submit until it is handed back.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

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
#include "sink/sinkreply.h"
#include "wire/codec.h"
#include "wire/codec_read.h"
#include "wire/retry.h"

#define DESCRIBE_RETRY_MS	1000
#define PACE_MAX_MS		2000
#define HALT_LOG_EVERY_MS	60000

/*
 * The sink's half of a batch it owns: what it knows of the batch's
 * attempts, from sink_submit until the batch is handed back or absorbed
 * by another (then freed).  Private to this file: the flow sees only the
 * records (struct batch).
 */
struct sink_batch {
	struct batch	*b;		/* the records (the flow's) */
	struct sink	*sink;		/* the owner */
	struct putbody_req req;		/* the request built last */
	unsigned	 attempt;
	uint64_t	 sent_ms;
	uint64_t	 sent_seq;	/* the sink's count of sends, at this one */
	uint64_t	 due_ms;	/* when a scheduled send is due */
	size_t		 limit;		/* records per request after a split */
	bool		 remnant;	/* waits to resend records a reply
					   failed one by one: may ride in
					   another batch's request */
	bool		 uncertain;	/* an attempt ended without a verdict:
					   it may have landed */
	struct seqsnap	*pin;		/* seqmark.h: since it was sent */
	struct sink_batch *next;	/* the queues */
	struct sink_batch *all_next;	/* every batch the sink holds */
	struct sink_batch *all_prev;
};

struct sink {
	uv_loop_t	*loop;
	struct disapi	*api;
	const struct conf *conf;
	const struct conf_flow *fc;
	struct putbody	*body;		/* body.serialize.type, compress */
	struct deadletter *dlq;
	struct metrics_flow *m;		/* the flow's counters */
	struct sink_cbs	 cbs;
	enum sink_state	 state;
	bool		 described;	/* the stream's type is known */
	bool		 describing;	/* a DescribeStream is in flight */
	char		*describe_path;	/* "streams/NAME/" */
	size_t		 request_cap;
	struct sink_batch *waiting;	/* FIFO: not ready, or behind the
					   probe */
	struct sink_batch *timed;	/* by due_ms: retries, pacing, probe */
	struct sink_batch *probe;	/* PAUSED: the batch that probes */
	size_t		 pending;	/* owned: submitted, not handed back */
	size_t		 inflight;	/* on the wire */
	double		 window;	/* AIMD: batches allowed out */
	uint64_t	 pace_ms;	/* gap between sends while throttled */
	uint64_t	 sent_seq;	/* requests sent so far */
	uint64_t	 decreased_seq;	/* sent_seq at AIMD's last decrease */
	uint64_t	 next_send_ms;
	unsigned	 describe_attempt;
	struct sink_batch *all;		/* every batch held (all_next) */
	struct seqmark	*seq;		/* sequence numbers seen, pins */
	uv_timer_t	 timer;		/* the head of timed */
	uv_timer_t	 describe_timer;
	int		 open_handles;
	uint64_t	 last_halt_log_ms;
};

static void	describe(struct sink *);
static void	try_send(struct sink *, struct sink_batch *);

static const char *const state_names[] = {
	"describing", "ready", "paused", "closing",
};

/* The one place the state changes. */
static void
set_state(struct sink *s, enum sink_state st)
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

/* The window's ceiling: maxInFlightRequests, or 1 when ordered. */
static double
max_window(const struct sink *s)
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
	s->window = max_window(s);
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
		set_state(s, SINK_READY);
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

/* sb leaves the list of the batches the sink holds. */
static void
unlink_all(struct sink *s, struct sink_batch *sb)
{
	if (sb->all_prev != NULL)
		sb->all_prev->all_next = sb->all_next;
	else
		s->all = sb->all_next;
	if (sb->all_next != NULL)
		sb->all_next->all_prev = sb->all_prev;
	sb->all_next = sb->all_prev = NULL;
}

/* The sink's half of a batch it no longer holds. */
static void
sink_batch_free(struct sink_batch *sb)
{
	seqsnap_unpin(sb->pin);
	putbody_req_cleanup(&sb->req);
	free(sb);
}

/* Hand the batch back to the flow (delivered or not). */
static void
hand_back(struct sink *s, struct sink_batch *sb, bool delivered)
{
	struct batch	*b = sb->b;

	s->pending--;
	unlink_all(s, sb);
	sink_batch_free(sb);
	s->cbs.done(b, delivered, s->cbs.arg);
}

/* Park sb until the stream is ready or the pause ends. */
static void
enqueue(struct sink *s, struct sink_batch *sb)
{
	struct sink_batch **pp;

	sb->next = NULL;
	for (pp = &s->waiting; *pp != NULL; pp = &(*pp)->next)
		;
	*pp = sb;
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
insert_timed(struct sink *s, struct sink_batch *sb)
{
	struct sink_batch **pp;

	for (pp = &s->timed; *pp != NULL && (*pp)->due_ms <= sb->due_ms;
	    pp = &(*pp)->next)
		;
	sb->next = *pp;
	*pp = sb;
	if (s->timed == sb)
		arm_timer(s);
}

/* Send sb after delay_ms (a retry, the pacing gap, the probe). */
static void
schedule(struct sink *s, struct sink_batch *sb, uint64_t delay_ms)
{
	sb->due_ms = mono_ms() + delay_ms;
	insert_timed(s, sb);
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
rider(const struct sink *s, const struct sink_batch *t)
{
	return s->state == SINK_READY && !s->fc->ordered && t->remnant &&
	    t->limit == 0 && t->b->nsegs < BATCH_MAX_SEGS;
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
	const struct sink_batch *t;

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
	struct sink_batch *due = NULL, **tail = &due, *sb;
	uint64_t	 now = mono_ms();

	/* Take every due batch first: try_send may schedule one again. */
	while ((sb = s->timed) != NULL && sb->due_ms <= now) {
		s->timed = sb->next;
		sb->next = NULL;
		*tail = sb;
		tail = &sb->next;
	}
	arm_timer(s);
	while ((sb = due) != NULL) {
		due = sb->next;
		sb->next = NULL;
		if (rider(s, sb) && !remnant_may_go(s)) {
			sb->due_ms = PARKED;
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
	struct sink_batch **pp, *sb;

	if (s->state != SINK_READY || !remnant_may_go(s))
		return;
	for (pp = &s->timed; (sb = *pp) != NULL; pp = &sb->next)
		if (sb->due_ms == PARKED) {
			*pp = sb->next;
			sb->next = NULL;
			arm_timer(s);
			/* The others that fit ride with it. */
			try_send(s, sb);
			return;
		}
}

/* Send every parked batch (ready, or no longer paused). */
static void
release_waiting(struct sink *s)
{
	struct sink_batch *sb;

	while ((sb = s->waiting) != NULL && s->state == SINK_READY) {
		s->waiting = sb->next;
		sb->next = NULL;
		try_send(s, sb);
	}
}

/* Take sb out of the timed queue; whether it was there. */
static bool
unschedule(struct sink *s, struct sink_batch *sb)
{
	struct sink_batch **pp;

	for (pp = &s->timed; *pp != NULL; pp = &(*pp)->next)
		if (*pp == sb) {
			*pp = sb->next;
			sb->next = NULL;
			arm_timer(s);
			return true;
		}
	return false;
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

size_t
sink_riders(const struct sink *s, size_t *bytes)
{
	const struct sink_batch *t;
	size_t		 n = 0, tb;

	*bytes = 0;
	for (t = s->timed; t != NULL; t = t->next)
		if (rider(s, t)) {
			n += batch_undone(t->b, &tb);
			*bytes += tb;
		}
	return n;
}

bool
sink_has_room(const struct sink *s)
{
	const struct sink_batch *t;
	size_t		 riders = 0;

	for (t = s->timed; t != NULL; t = t->next)
		riders += rider(s, t);
	return s->pending - riders < sink_window(s);
}

/*
 * t, absorbed into sb, leaves the sink's list; what it pinned and its
 * uncertainty are sb's now, and t is freed, the batch with it (its
 * records and ranges are sb's).  sb may hold a pin of its own (an earlier
 * attempt of sb's without a verdict), from before t's or after: sb keeps
 * the least of both, so the floors stay below every record of either that
 * may have landed.
 */
static void
absorb(struct sink *s, struct sink_batch *sb, struct sink_batch *t)
{
	batch_absorb(sb->b, t->b);
	unlink_all(s, t);
	sb->pin = seqsnap_join(sb->pin, t->pin);
	t->pin = NULL;
	sb->uncertain = sb->uncertain || t->uncertain;
	batch_free(t->b);
	sink_batch_free(t);
	s->pending--;
}

/*
 * Before sb's request is built: the remnants that fit take their place in
 * it, oldest first (the timed queue is in due order), within
 * maxBufferSizeRecords, the request cap and BATCH_MAX_SEGS.  Each is merged
 * into sb (batch_absorb: sb's delivery acknowledges its ranges too) and
 * freed, so one full request goes instead of sb and a small request per
 * remnant.  Without this, per-record throttling shrinks every retry (500,
 * then 100, 20, 4, 1 records) while the remnants hold the window's places.
 */
static void
absorb_riders(struct sink *s, struct sink_batch *sb)
{
	struct sink_batch **pp, *t;
	size_t		 n, bytes, tn, tbytes, taken = 0, nb = 0;

	n = batch_undone(sb->b, &bytes);
	for (pp = &s->timed; (t = *pp) != NULL;) {
		if (t == sb || !rider(s, t)) {
			pp = &t->next;
			continue;
		}
		tn = batch_undone(t->b, &tbytes);
		if (n + tn > (size_t)s->fc->max_buffer_records ||
		    bytes + tbytes > s->request_cap ||
		    sb->b->nsegs + t->b->nsegs > BATCH_MAX_SEGS) {
			pp = &t->next;
			continue;
		}
		*pp = t->next;
		t->next = NULL;
		absorb(s, sb, t);
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

/* --- halts and pauses --------------------------------------------------- */

/* Delivery needs the operator: last error, ERROR once a minute, halt cb. */
static void
halt(struct sink *s, long status, const char *code, const char *msg)
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
	set_state(s, SINK_PAUSED);
	if (s->probe == NULL || s->probe == sb) {
		s->probe = sb;
		schedule(s, sb, delay);
	} else
		enqueue(s, sb);
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
	set_state(s, SINK_READY);
	if (probe != NULL && unschedule(s, probe))
		try_send(s, probe);
}

/* --- throttling (AIMD) -------------------------------------------------- */

/*
 * Decrease once per round trip: the replies to requests that left before
 * the last decrease tell of the same congestion, not a new one (as TCP
 * halves once per window).  Without this, a window of full requests that
 * came back throttled together halved the window and doubled the pacing
 * once each (4 requests: a sixteenth, 400 ms), and a stream at its write
 * limit idled for seconds while the pacing came down again.
 */
static bool
new_round(struct sink *s, const struct sink_batch *sb)
{
	if (sb->sent_seq <= s->decreased_seq)
		return false;
	s->decreased_seq = s->sent_seq;
	return true;
}

/* What the verdict says of the throttling (sinkreply_aimd): halve the
 * window and pace; one request fewer, no pacing (halving on every 5% of
 * DIS.4303 would starve the flow); or grow back. */
static void
adapt(struct sink *s, const struct sink_batch *sb, enum sinkreply_aimd a)
{
	switch (a) {
	case SINKREPLY_AIMD_HALVE:
		s->m->throttled++;
		if (!new_round(s, sb))
			return;
		s->window = s->window / 2 < 1.0 ? 1.0 : s->window / 2;
		s->pace_ms = s->pace_ms ? MIN(s->pace_ms * 2, PACE_MAX_MS) :
		    50;
		return;
	case SINKREPLY_AIMD_LESS:
		s->m->throttled++;
		if (!new_round(s, sb))
			return;
		s->window = s->window - 1 < 1.0 ? 1.0 : s->window - 1;
		return;
	case SINKREPLY_AIMD_GROW:
		s->window += 1.0 / s->window;
		if (s->window > max_window(s))
			s->window = max_window(s);
		s->pace_ms /= 2;
		if (s->pace_ms < 10)
			s->pace_ms = 0;
		return;
	case SINKREPLY_AIMD_KEEP:
		return;
	}
}

/* --- dead letters ------------------------------------------------------- */

/*
 * Append record i to the dead-letter file and sync it; only then may the
 * record count as done.  Returns 0 or a negative errno (the record is then
 * kept and retried).
 */
static int
dead_letter(struct sink *s, struct batch *b, size_t i, const char *code,
    const char *msg)
{
	struct batch_rec *r = &b->recs[i];
	int		 rc;

	rc = deadletter_write(s->dlq, s->fc->name, b->segs[r->seg].name,
	    r->file_off, code, msg, b->data.data + r->off, r->len);
	if (rc == 0)
		s->m->records_dead_lettered++;
	return rc;
}

/* Dead letters of one reply, for one WARN with the count by code. */
struct dead_tally {
	struct metrics_code_count codes[4];
	size_t		 ncodes;
	size_t		 n;
	size_t		 first;		/* record index of the first */
};

static void
tally(struct dead_tally *t, const char *code, size_t i)
{
	size_t	 j;

	if (t->n++ == 0)
		t->first = i;
	for (j = 0; j < t->ncodes; j++)
		if (strcmp(t->codes[j].code, code) == 0)
			break;
	if (j == t->ncodes) {
		if (t->ncodes == ARRAY_SIZE(t->codes))
			return;		/* the total still counts it */
		snprintf(t->codes[j].code, sizeof(t->codes[j].code), "%s",
		    code);
		t->codes[j].count = 0;
		t->ncodes++;
	}
	t->codes[j].count++;
}

static void
log_dead(struct sink *s, const struct batch *b, const struct dead_tally *t)
{
	const struct batch_rec *r;
	struct buf	 codes;
	size_t		 j;

	if (t->n == 0)
		return;
	buf_init(&codes);
	for (j = 0; j < t->ncodes; j++)
		buf_printf(&codes, "%s%s %" PRIu64, j ? ", " : "",
		    t->codes[j].code, t->codes[j].count);
	r = &b->recs[t->first];
	log_warn("[%s] %zu record%s rejected by DIS for good (%s; the first "
	    "from %s at offset %ju): written to %s", s->fc->name, t->n,
	    t->n == 1 ? "" : "s", codes.data, b->segs[r->seg].name,
	    (uintmax_t)r->file_off, deadletter_path(s->dlq));
	buf_cleanup(&codes);
}

/* --- replies: the verdict applied --------------------------------------- */

/* Every record of sb is done: hand it back delivered. */
static bool
finish_if_done(struct sink *s, struct sink_batch *sb)
{
	if (sb->b->ndone < sb->b->nrecs)
		return false;
	if (s->probe == sb)
		s->probe = NULL;
	hand_back(s, sb, true);
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
	schedule(s, sb, 0);
}

/* DEAD: the lone record refused is a dead letter, and the rest of a split
 * batch goes now; one that cannot be written is retried. */
static void
dead_one(struct sink *s, struct sink_batch *sb,
    const struct sinkreply_verdict *v)
{
	struct dead_tally t;
	const char	*why = v->code[0] ? v->code : "HTTP";

	if (sb->req.nsent == 1 &&
	    dead_letter(s, sb->b, v->dead_idx, why, v->msg) == 0) {
		memset(&t, 0, sizeof(t));
		tally(&t, why, v->dead_idx);
		log_dead(s, sb->b, &t);
		batch_mark_done(sb->b, v->dead_idx);
		sb->limit = 0;
		if (!finish_if_done(s, sb))
			schedule(s, sb, 0);
		return;
	}
	schedule(s, sb, backoff(s, sb));
}

/* No reply, or an error reply: the whole request is judged. */
static void
request_failed(struct sink *s, struct sink_batch *sb,
    const struct sinkreply_verdict *v)
{
	uint64_t	 delay;

	landed(sb, v);
	s->m->requests_failed++;
	s->m->records_retried += sb->req.nsent;
	if (v->error != NULL) {
		metrics_set_error(s->m, "NETWORK", v->error, wall_s());
		delay = backoff(s, sb);
		log_warn("PutRecords to [%s] failed: %s; retrying in %" PRIu64
		    " ms", s->fc->stream, v->error, delay);
		schedule(s, sb, delay);
		return;
	}
	if (v->action != SINKREPLY_PAUSE)
		metrics_set_error(s->m, v->code[0] ? v->code : "HTTP", v->msg,
		    wall_s());
	switch (v->action) {
	case SINKREPLY_PAUSE:
		halt(s, v->status, v->code, v->msg);
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
	log_warn("PutRecords to [%s] failed: HTTP %ld %s %s; %s in %" PRIu64
	    " ms", s->fc->stream, v->status, v->code, v->msg,
	    retry_action_name(v->retry), delay);
	schedule(s, sb, delay);
}

static void
log_put(struct sink *s, size_t n, size_t nfail,
    const struct codec_result *res, uint64_t ms)
{
	size_t	 i;

	if (nfail == 0) {
		log_info("Put %zu records to [%s] spend %" PRIu64 "ms",
		    n, s->fc->stream, ms);
		return;
	}
	for (i = 0; i < n && res[i].code[0] == '\0'; i++)
		;
	log_warn("Put %zu records to [%s] spend %" PRIu64 "ms, "
	    "currentFailedCount %zu, failure info [%s %s]", n,
	    s->fc->stream, ms, nfail, i < n ? res[i].code : "",
	    i < n ? res[i].message : "");
}

/*
 * Mark what the reply acknowledged; dead-letter what DIS will never take.
 * Returns whether any record must be retried; *throttled counts the
 * DIS.4303 among the dead letters that could not be written (and so are
 * retried too).
 */
static bool
apply_results(struct sink *s, struct sink_batch *sb,
    const struct sinkreply_verdict *v, size_t *throttled)
{
	const struct codec_result *e;
	struct batch	*b = sb->b;
	struct dead_tally dead;
	size_t		 i, k;
	bool		 retry = false;

	memset(&dead, 0, sizeof(dead));
	for (i = 0; i < sb->req.nsent; i++) {
		k = sb->req.sent_idx[i];
		e = &v->res[i];
		if (v->rec[i] == SINKREPLY_ACKED) {
			s->m->records_sent++;
			s->m->bytes_sent += b->recs[k].len;
			seqmark_ack(s->seq, e->partition, e->seq);
			batch_mark_done(b, k);
			continue;
		}
		metrics_count_failed(s->m, e->code, 1);
		if (v->rec[i] == SINKREPLY_REFUSED &&
		    dead_letter(s, b, k, e->code, e->message) == 0) {
			tally(&dead, e->code, k);
			batch_mark_done(b, k);
			continue;
		}
		if (v->rec[i] == SINKREPLY_REFUSED &&
		    strcmp(e->code, "DIS.4303") == 0)
			(*throttled)++;
		s->m->records_retried++;
		retry = true;
	}
	log_dead(s, b, &dead);
	return retry;
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
	schedule(s, sb, backoff(s, sb));
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
	retry = apply_results(s, sb, v, &throttled);
	log_put(s, sb->req.nsent, v->nfail, v->res, mono_ms() - sb->sent_ms);
	adapt(s, sb, throttled == 0 ? v->aimd :
	    sinkreply_aimd(v->throttled + throttled, sb->req.nsent));
	if (finish_if_done(s, sb))
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
	schedule(s, sb, backoff(s, sb));
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
		hand_back(s, sb, false);
		return;
	}
	metrics_count_request(s->m, r->result == HTTP_OK ? (int)r->status :
	    0);
	metrics_observe_latency(&s->m->latency, r->seconds);
	o.body = s->body;
	o.retriable = s->conf->retriable_codes;
	o.paused_ms = (uint64_t)s->conf->paused_retry_s * 1000;
	o.renewing = disapi_renewing(s->api);
	sinkreply_judge(r, &sb->req, &o, &v);
	if (v.action == SINKREPLY_RECORDS || v.action == SINKREPLY_UNACKED) {
		if (s->probe == sb)
			s->probe = NULL;
		if (s->described)
			resume(s, "delivery to");
		records_replied(s, sb, r, &v);
		release_waiting(s);
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
	rc = putbody_build(s->body, sb->b, sb->limit, s->fc->stream,
	    s->fc->stream_id, &sb->req, &zh);
	if (rc == 0 && s->cbs.sending != NULL)
		s->cbs.sending(s->cbs.arg);
	if (rc == 0) {
		memset(&c, 0, sizeof(c));
		c.method = "POST";
		c.path = "records/";
		c.ctype = putbody_ctype(s->body);
		c.body = sb->req.body.data;
		c.bodylen = sb->req.body.len;
		c.extra = zh.h;
		c.nextra = zh.n;
		rc = disapi_send(s->api, &c, on_put_done, sb);
	}
	if (rc == -EKEYEXPIRED) {
		/* No valid keys (yet): paused, nothing sent, retried soon. */
		putbody_req_drop_body(&sb->req);
		halt(s, 0, "CREDENTIALS", disapi_key_error(s->api));
		pause_behind_probe(s, sb, MIN(backoff(s, sb),
		    (uint64_t)s->conf->paused_retry_s * 1000));
		return;
	}
	if (rc != 0) {
		putbody_req_drop_body(&sb->req);
		log_error("cannot send to [%s]: %s; retrying",
		    s->fc->stream, strerror(-rc));
		metrics_set_error(s->m, "SEND", strerror(-rc), wall_s());
		schedule(s, sb, backoff(s, sb));
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
		enqueue(s, sb);
		return;
	}
	if (s->state == SINK_PAUSED)
		s->probe = sb;
	now = mono_ms();
	if (s->next_send_ms > now) {
		schedule(s, sb, s->next_send_ms - now);
		return;
	}
	s->next_send_ms = now + s->pace_ms;
	send_batch(s, sb);
}

void
sink_submit(struct sink *s, struct batch *b)
{
	struct sink_batch *sb;

	sb = xcalloc(1, sizeof(*sb));
	sb->b = b;
	sb->sink = s;
	putbody_req_init(&sb->req);
	sb->all_next = s->all;
	if (s->all != NULL)
		s->all->all_prev = sb;
	s->all = sb;
	s->pending++;
	try_send(s, sb);
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
		set_state(s, SINK_PAUSED);
		halt(s, 200, "", si.status);
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
	set_state(s, SINK_READY);
	release_waiting(s);
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
	a = sinkreply_classify(r->status, code, disapi_renewing(s->api));
	if (a == RETRY_HALT || a == RETRY_HARD) {
		set_state(s, SINK_PAUSED);
		halt(s, r->status, code, msg);
		describe_again(s, a == RETRY_HARD ? SINKREPLY_HARD_MS :
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
		set_state(s, SINK_PAUSED);
		halt(s, 0, "CREDENTIALS", disapi_key_error(s->api));
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
give_back_list(struct sink *s, struct sink_batch *list)
{
	struct sink_batch *sb;

	while ((sb = list) != NULL) {
		list = sb->next;
		sb->next = NULL;
		hand_back(s, sb, false);
	}
}

void
sink_cancel(struct sink *s)
{
	struct sink_batch *w = s->waiting, *t = s->timed;

	set_state(s, SINK_CLOSING);
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
	struct sink_batch *sb;
	size_t		 n = 0;

	pins = xcalloc(s->pending + 1, sizeof(*pins));
	for (sb = s->all; sb != NULL; sb = sb->all_next)
		if (n < s->pending)
			pins[n++] = sb->pin;
	seqmark_floors(s->seq, pins, n, cb, arg);
	free(pins);
}

void
sink_each(const struct sink *s, void (*fn)(const struct batch *, void *),
    void *arg)
{
	const struct sink_batch *sb;

	for (sb = s->all; sb != NULL; sb = sb->all_next)
		fn(sb->b, arg);
}

bool
sink_uncertain(const struct sink *s)
{
	const struct sink_batch *sb;

	for (sb = s->all; sb != NULL; sb = sb->all_next)
		if (sb->uncertain && sb->b->ndone < sb->b->nrecs)
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
