/*
 * The DIS sink of one flow.  Each batch is sent as PutRecords; the reply is
 * matched to the request by position (lessons R13): acknowledged records are
 * marked done and never resent, records failing with a retriable code are
 * resent alone after backoff, and records DIS rejects as invalid go to the
 * dead-letter file.  Request-level failures are retried by cause
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

#include "batch.h"
#include "codec.h"
#include "conf.h"
#include "deadletter.h"
#include "disapi.h"
#include "http.h"
#include "log.h"
#include "metrics.h"
#include "putbody.h"
#include "retry.h"
#include "sink.h"

#define MIB			(1024 * 1024)
#define HARD_RETRY_MS		(30 * 60 * 1000)
#define SLOW_MIN_MS		1000
#define DESCRIBE_RETRY_MS	1000
#define PACE_MAX_MS		2000
#define HALT_LOG_EVERY_MS	60000

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
	size_t		 record_cap;
	size_t		 request_cap;
	struct batch	*waiting;	/* FIFO: not ready, or behind the probe */
	struct batch	*timed;		/* by due_ms: retries, pacing, probe */
	struct batch	*probe;		/* PAUSED: the batch that probes */
	size_t		 pending;	/* owned: submitted, not handed back */
	size_t		 inflight;	/* on the wire */
	double		 window;	/* AIMD: batches allowed out */
	uint64_t	 pace_ms;	/* gap between sends while throttled */
	uint64_t	 next_send_ms;
	unsigned	 describe_attempt;
	uv_timer_t	 timer;		/* the head of timed */
	uv_timer_t	 describe_timer;
	int		 open_handles;
	uint64_t	 last_halt_log_ms;
};

static void	try_send(struct sink *, struct batch *);
static void	describe(struct sink *);

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

/* Raw bytes one request of fc may carry to a stream of type. */
static size_t
request_cap_for(const struct conf_flow *fc, const char *type)
{
	size_t	 cap = strcmp(type, "ADVANCED") == 0 ? 5 * MIB : MIB;

	return MIN(cap, (size_t)fc->max_buffer_bytes);
}

size_t
sink_record_cap_for(const struct conf_flow *fc, const char *type)
{
	size_t	 cap = strcmp(type, "ADVANCED") == 0 ? 5 * MIB : MIB;

	return MIN(cap, request_cap_for(fc, type));
}

static void
set_caps(struct sink *s, const char *type)
{
	s->request_cap = request_cap_for(s->fc, type);
	s->record_cap = sink_record_cap_for(s->fc, type);
}

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
	return s->inflight;
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
	return s->record_cap;
}

/* --- throttling (AIMD) -------------------------------------------------- */

static void
throttled(struct sink *s)
{
	s->m->throttled++;
	s->window = s->window / 2 < 1.0 ? 1.0 : s->window / 2;
	s->pace_ms = s->pace_ms ? MIN(s->pace_ms * 2, PACE_MAX_MS) : 50;
}

/* A few throttled records in a batch: one request fewer in flight, no
 * pacing (halving on every 5% of DIS.4303 would starve the flow). */
static void
throttled_lightly(struct sink *s)
{
	s->m->throttled++;
	s->window = s->window - 1 < 1.0 ? 1.0 : s->window - 1;
}

static void
succeeded(struct sink *s)
{
	s->window += 1.0 / s->window;
	if (s->window > max_window(s))
		s->window = max_window(s);
	s->pace_ms /= 2;
	if (s->pace_ms < 10)
		s->pace_ms = 0;
}

/* --- the queues --------------------------------------------------------- */

static void
hand_back(struct sink *s, struct batch *b, bool delivered)
{
	s->pending--;
	s->cbs.done(b, delivered, s->cbs.arg);
}

static void
enqueue(struct sink *s, struct batch *b)
{
	struct batch	**pp;

	b->next = NULL;
	for (pp = &s->waiting; *pp != NULL; pp = &(*pp)->next)
		;
	*pp = b;
}

static void	on_timer(uv_timer_t *);

static void
arm_timer(struct sink *s)
{
	uint64_t	 now = mono_ms();

	if (s->timed == NULL) {
		uv_timer_stop(&s->timer);
		return;
	}
	uv_timer_start(&s->timer, on_timer,
	    s->timed->due_ms > now ? s->timed->due_ms - now : 0, 0);
}

/* Send b after delay_ms (a retry, the pacing gap, the probe). */
static void
schedule(struct sink *s, struct batch *b, uint64_t delay_ms)
{
	struct batch	**pp;

	b->due_ms = mono_ms() + delay_ms;
	for (pp = &s->timed; *pp != NULL && (*pp)->due_ms <= b->due_ms;
	    pp = &(*pp)->next)
		;
	b->next = *pp;
	*pp = b;
	if (s->timed == b)
		arm_timer(s);
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
		try_send(s, b);
	}
}

/* Send every parked batch (ready, or no longer paused). */
static void
release_waiting(struct sink *s)
{
	struct batch	*b;

	while ((b = s->waiting) != NULL && s->state == SINK_READY) {
		s->waiting = b->next;
		b->next = NULL;
		try_send(s, b);
	}
}

/* --- sending ------------------------------------------------------------ */

static void	on_put_done(const struct http_response *, void *);
static void	halt_log(struct sink *, long, const char *, const char *);
static void	pause_batch(struct sink *, struct batch *, uint64_t);

static uint64_t
backoff(struct sink *s, struct batch *b)
{
	return retry_backoff_ms(b->attempt++,
	    (uint64_t)s->fc->retry_initial_backoff_ms,
	    (uint64_t)s->fc->retry_max_backoff_ms, rand_unit());
}

static void
send_batch(struct sink *s, struct batch *b)
{
	struct putbody_headers zh;
	struct disapi_call c;
	int		 rc;

	rc = putbody_build(s->body, b, s->fc->stream, s->fc->stream_id, &zh);
	if (rc == 0) {
		memset(&c, 0, sizeof(c));
		c.method = "POST";
		c.path = "records/";
		c.ctype = putbody_ctype(s->body);
		c.body = b->body.data;
		c.bodylen = b->body.len;
		c.extra = zh.h;
		c.nextra = zh.n;
		rc = disapi_send(s->api, &c, on_put_done, b);
	}
	if (rc == -EKEYEXPIRED) {
		/* No valid keys (yet): paused, nothing sent, retried soon. */
		batch_drop_body(b);
		halt_log(s, 0, "CREDENTIALS", disapi_key_error(s->api));
		pause_batch(s, b, MIN(backoff(s, b),
		    (uint64_t)s->conf->paused_retry_s * 1000));
		return;
	}
	if (rc != 0) {
		batch_drop_body(b);
		log_error("cannot send to [%s]: %s; retrying",
		    s->fc->stream, strerror(-rc));
		metrics_set_error(s->m, "SEND", strerror(-rc), wall_s());
		schedule(s, b, backoff(s, b));
		return;
	}
	b->sending = true;
	b->sent_ms = mono_ms();
	s->inflight++;
}

/*
 * Send b now, later (pacing), or park it: before the stream is described,
 * and while paused, when another batch is the probe.
 */
static void
try_send(struct sink *s, struct batch *b)
{
	uint64_t	 now;

	if (s->state == SINK_DESCRIBING || (s->state == SINK_PAUSED &&
	    (!s->described || (s->probe != NULL && s->probe != b)))) {
		enqueue(s, b);
		return;
	}
	if (s->state == SINK_PAUSED)
		s->probe = b;
	now = mono_ms();
	if (s->next_send_ms > now) {
		schedule(s, b, s->next_send_ms - now);
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
	s->pending++;
	try_send(s, b);
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

/* --- replies ------------------------------------------------------------ */

static void
halt_log(struct sink *s, long status, const char *code, const char *msg)
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
	if (s->last_halt_log_ms == 0 ||
	    now - s->last_halt_log_ms >= HALT_LOG_EVERY_MS) {
		log_error("delivery paused for %s; data stays on disk and "
		    "is retried every %lld s", reason, s->conf->paused_retry_s);
		s->last_halt_log_ms = now;
	}
	if (s->cbs.halt != NULL)
		s->cbs.halt(reason, s->cbs.arg);
}

/* Take b out of the timed queue; whether it was there. */
static bool
unschedule(struct sink *s, struct batch *b)
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

/* Delivery works again: the probe waiting for its slow retry goes now. */
static void
resume(struct sink *s, const char *what)
{
	struct batch	*probe = s->probe;

	if (s->state != SINK_PAUSED)
		return;
	log_info("%s [%s] resumed", what, s->fc->stream);
	s->last_halt_log_ms = 0;
	s->probe = NULL;
	set_state(s, SINK_READY);
	if (probe != NULL && unschedule(s, probe))
		try_send(s, probe);
}

static void
pause_batch(struct sink *s, struct batch *b, uint64_t delay)
{
	set_state(s, SINK_PAUSED);
	if (s->probe == NULL || s->probe == b) {
		s->probe = b;
		schedule(s, b, delay);
	} else
		enqueue(s, b);
}

/* Every record of b is done: hand it back delivered. */
static bool
finish_if_done(struct sink *s, struct batch *b)
{
	if (b->ndone < b->nrecs)
		return false;
	if (s->probe == b)
		s->probe = NULL;
	hand_back(s, b, true);
	return true;
}

/* Halve the batch's requests; a lone record that is still refused is
 * dead-lettered (it can never be accepted). */
static void
split(struct sink *s, struct batch *b, long status, const char *code,
    const char *msg)
{
	struct dead_tally t;
	char		 why[48];

	if (b->nsent > 1) {
		b->limit = b->nsent / 2;
		log_warn("PutRecords to [%s]: HTTP %ld %s: sending %zu records "
		    "per request", s->fc->stream, status, code, b->limit);
		schedule(s, b, 0);
		return;
	}
	snprintf(why, sizeof(why), "%s", code[0] ? code : "HTTP");
	if (b->nsent == 1 && dead_letter(s, b, b->sent_idx[0], why, msg) == 0) {
		memset(&t, 0, sizeof(t));
		tally(&t, why, b->sent_idx[0]);
		log_dead(s, b, &t);
		b->recs[b->sent_idx[0]].done = true;
		b->ndone++;
		b->limit = 0;
		if (!finish_if_done(s, b))
			schedule(s, b, 0);
		return;
	}
	schedule(s, b, backoff(s, b));
}

/*
 * retry_classify, but temporary keys that DIS refused while new ones are
 * being fetched (disapi_renewing) are resent, not paused (dis-api.md 4:
 * "new token, REQ once, then HALT").
 */
static enum retry_action
classify(struct sink *s, long status, const char *code)
{
	enum retry_action a = retry_classify(status, code);

	if (a == RETRY_HALT && (status == 401 || status == 441) &&
	    disapi_renewing(s->api))
		return RETRY_REQUEST;
	return a;
}

static void
request_failed(struct sink *s, struct batch *b, const struct http_response *r)
{
	char		 code[32] = "", msg[160] = "";
	enum retry_action a;
	uint64_t	 delay;

	s->m->requests_failed++;
	s->m->records_retried += b->nsent;
	if (r->result != HTTP_OK) {
		metrics_set_error(s->m, "NETWORK",
		    r->error ? r->error : "error", wall_s());
		delay = backoff(s, b);
		log_warn("PutRecords to [%s] failed: %s; retrying in %" PRIu64
		    " ms", s->fc->stream, r->error ? r->error : "error", delay);
		schedule(s, b, delay);
		return;
	}
	(void)codec_parse_error(r->body, r->bodylen, code, sizeof(code), msg,
	    sizeof(msg));
	a = classify(s, r->status, code);
	if (a != RETRY_HALT && a != RETRY_HARD)
		metrics_set_error(s->m, code[0] ? code : "HTTP", msg,
		    wall_s());
	switch (a) {
	case RETRY_HALT:
	case RETRY_HARD:
		halt_log(s, r->status, code, msg);
		pause_batch(s, b, a == RETRY_HARD ? HARD_RETRY_MS :
		    (uint64_t)s->conf->paused_retry_s * 1000);
		return;
	case RETRY_SPLIT:
		split(s, b, r->status, code, msg);
		return;
	case RETRY_SLOW:
		throttled(s);
		delay = MAX(backoff(s, b), (uint64_t)SLOW_MIN_MS);
		break;
	default:
		delay = backoff(s, b);
		break;
	}
	log_warn("PutRecords to [%s] failed: HTTP %ld %s %s; %s in %" PRIu64
	    " ms", s->fc->stream, r->status, code, msg, retry_action_name(a),
	    delay);
	schedule(s, b, delay);
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

/* Mark what the reply acknowledged; dead-letter what DIS will never take.
 * Returns whether any record must be retried. */
static bool
apply_results(struct sink *s, struct batch *b, const struct codec_result *res,
    size_t *throttle)
{
	struct batch_rec *rec;
	struct dead_tally dead;
	size_t		 i;
	bool		 retry = false;

	memset(&dead, 0, sizeof(dead));
	for (i = 0; i < b->nsent; i++) {
		rec = &b->recs[b->sent_idx[i]];
		if (res[i].code[0] == '\0') {
			s->m->records_sent++;
			s->m->bytes_sent += rec->len;
		} else if (metrics_count_failed(s->m, res[i].code, 1),
		    retry_record_retriable(res[i].code,
		    s->conf->retriable_codes) ||
		    dead_letter(s, b, b->sent_idx[i], res[i].code,
		    res[i].message) != 0) {
			if (strcmp(res[i].code, "DIS.4303") == 0)
				(*throttle)++;
			s->m->records_retried++;
			retry = true;
			continue;
		} else
			tally(&dead, res[i].code, b->sent_idx[i]);
		rec->done = true;
		b->ndone++;
	}
	log_dead(s, b, &dead);
	return retry;
}

static void
records_replied(struct sink *s, struct batch *b, const struct http_response *r)
{
	struct codec_result *res;
	int		 nfail;
	size_t		 throttle = 0;
	bool		 retry;

	res = xcalloc(b->nsent ? b->nsent : 1, sizeof(*res));
	nfail = putbody_parse(s->body, r->body, r->bodylen, res, b->nsent);
	if (nfail < 0) {
		free(res);
		s->m->requests_failed++;
		metrics_set_error(s->m, "REPLY", "unparsable PutRecords reply",
		    wall_s());
		log_warn("PutRecords to [%s]: unparsable reply (%zu bytes); "
		    "resending the request", s->fc->stream, r->bodylen);
		schedule(s, b, backoff(s, b));
		return;
	}
	s->m->records_failed += (uint64_t)nfail;
	retry = apply_results(s, b, res, &throttle);
	log_put(s, b->nsent, (size_t)nfail, res, mono_ms() - b->sent_ms);
	free(res);
	/* AIMD by the share of records DIS throttled: most of them, halve
	 * and pace; some, one request fewer; a few, as a success. */
	if (throttle * 2 >= b->nsent && b->nsent > 0)
		throttled(s);
	else if (throttle * 10 >= b->nsent && throttle > 0)
		throttled_lightly(s);
	else
		succeeded(s);
	if (finish_if_done(s, b))
		return;
	if (!retry) {
		/* A split batch: the next part goes now. */
		b->attempt = 0;
		try_send(s, b);
		return;
	}
	schedule(s, b, backoff(s, b));
}

static void
on_put_done(const struct http_response *r, void *arg)
{
	struct batch	*b = arg;
	struct sink	*s = b->sink;

	b->sending = false;
	s->inflight--;
	batch_drop_body(b);
	if (r->result == HTTP_ERR_CANCELLED || s->state == SINK_CLOSING) {
		hand_back(s, b, false);
		return;
	}
	metrics_count_request(s->m, r->result == HTTP_OK ? (int)r->status :
	    0);
	metrics_observe_latency(&s->m->latency, r->seconds);
	if (r->result == HTTP_OK && r->status == 200) {
		if (s->probe == b)
			s->probe = NULL;
		if (s->described)
			resume(s, "delivery to");
		records_replied(s, b, r);
		release_waiting(s);
	} else
		request_failed(s, b, r);
	if (s->cbs.ended != NULL)
		s->cbs.ended(s->cbs.arg);
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
		halt_log(s, 200, "", si.status);
		describe_again(s, (uint64_t)s->conf->paused_retry_s * 1000);
		return;
	}
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
	a = classify(s, r->status, code);
	if (a == RETRY_HALT || a == RETRY_HARD) {
		set_state(s, SINK_PAUSED);
		halt_log(s, r->status, code, msg);
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
		halt_log(s, 0, "CREDENTIALS", disapi_key_error(s->api));
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
		hand_back(s, b, false);
	}
}

void
sink_cancel(struct sink *s)
{
	struct batch	*w = s->waiting, *t = s->timed;

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
sink_free(struct sink *s)
{
	if (s == NULL)
		return;
	sink_cancel(s);
	putbody_free(s->body);
	free(s->describe_path);
	s->timer.data = s;
	s->describe_timer.data = s;
	uv_close((uv_handle_t *)&s->timer, sink_closed);
	uv_close((uv_handle_t *)&s->describe_timer, sink_closed);
}
