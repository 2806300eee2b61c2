/*
 * Replies to PutRecords (sink_int.h): acknowledged records are done,
 * retriable ones resent after a backoff (riding in the flow's next request
 * when one leaves first: sink.c), those DIS rejects for good
 * dead-lettered (one WARN per reply with the count by code); request-level
 * failures retried by cause, throttling adapting the window (AIMD), and
 * errors only the operator can fix pausing the sink behind one probe.
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
#include "sink/sink_int.h"
#include "wire/codec.h"
#include "wire/retry.h"

#define SLOW_MIN_MS		1000
#define PACE_MAX_MS		2000
#define HALT_LOG_EVERY_MS	60000

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
new_round(struct sink *s, const struct batch *b)
{
	if (b->sent_seq <= s->decreased_seq)
		return false;
	s->decreased_seq = s->sent_seq;
	return true;
}

static void
throttled(struct sink *s, const struct batch *b)
{
	s->m->throttled++;
	if (!new_round(s, b))
		return;
	s->window = s->window / 2 < 1.0 ? 1.0 : s->window / 2;
	s->pace_ms = s->pace_ms ? MIN(s->pace_ms * 2, PACE_MAX_MS) : 50;
}

/* A few throttled records in a batch: one request fewer in flight, no
 * pacing (halving on every 5% of DIS.4303 would starve the flow). */
static void
throttled_lightly(struct sink *s, const struct batch *b)
{
	s->m->throttled++;
	if (!new_round(s, b))
		return;
	s->window = s->window - 1 < 1.0 ? 1.0 : s->window - 1;
}

static void
succeeded(struct sink *s)
{
	s->window += 1.0 / s->window;
	if (s->window > sink_max_window(s))
		s->window = sink_max_window(s);
	s->pace_ms /= 2;
	if (s->pace_ms < 10)
		s->pace_ms = 0;
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

void
sinkreply_halt(struct sink *s, long status, const char *code, const char *msg)
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
	sink_set_state(s, SINK_READY);
	if (probe != NULL && sink_unschedule(s, probe))
		sink_try_send(s, probe);
}

void
sinkreply_pause(struct sink *s, struct batch *b, uint64_t delay)
{
	sink_set_state(s, SINK_PAUSED);
	if (s->probe == NULL || s->probe == b) {
		s->probe = b;
		sink_schedule(s, b, delay);
	} else
		sink_enqueue(s, b);
}

/* Every record of b is done: hand it back delivered. */
static bool
finish_if_done(struct sink *s, struct batch *b)
{
	if (b->ndone < b->nrecs)
		return false;
	if (s->probe == b)
		s->probe = NULL;
	sink_hand_back(s, b, true);
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
		sink_schedule(s, b, 0);
		return;
	}
	snprintf(why, sizeof(why), "%s", code[0] ? code : "HTTP");
	if (b->nsent == 1 && dead_letter(s, b, b->sent_idx[0], why, msg) == 0) {
		memset(&t, 0, sizeof(t));
		tally(&t, why, b->sent_idx[0]);
		log_dead(s, b, &t);
		batch_mark_done(b, b->sent_idx[0]);
		b->limit = 0;
		if (!finish_if_done(s, b))
			sink_schedule(s, b, 0);
		return;
	}
	sink_schedule(s, b, sink_backoff(s, b));
}

/*
 * retry_classify, but temporary keys that DIS refused while new ones are
 * being fetched (disapi_renewing) are resent, not paused (dis-api.md 4:
 * "new token, REQ once, then HALT").
 */
enum retry_action
sinkreply_classify(struct sink *s, long status, const char *code)
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
		delay = sink_backoff(s, b);
		log_warn("PutRecords to [%s] failed: %s; retrying in %" PRIu64
		    " ms", s->fc->stream, r->error ? r->error : "error", delay);
		sink_schedule(s, b, delay);
		return;
	}
	(void)codec_parse_error(r->body, r->bodylen, code, sizeof(code), msg,
	    sizeof(msg));
	a = sinkreply_classify(s, r->status, code);
	if (a != RETRY_HALT && a != RETRY_HARD)
		metrics_set_error(s->m, code[0] ? code : "HTTP", msg,
		    wall_s());
	switch (a) {
	case RETRY_HALT:
	case RETRY_HARD:
		sinkreply_halt(s, r->status, code, msg);
		sinkreply_pause(s, b, a == RETRY_HARD ? HARD_RETRY_MS :
		    (uint64_t)s->conf->paused_retry_s * 1000);
		return;
	case RETRY_SPLIT:
		split(s, b, r->status, code, msg);
		return;
	case RETRY_SLOW:
		throttled(s, b);
		delay = MAX(sink_backoff(s, b), (uint64_t)SLOW_MIN_MS);
		break;
	default:
		delay = sink_backoff(s, b);
		break;
	}
	log_warn("PutRecords to [%s] failed: HTTP %ld %s %s; %s in %" PRIu64
	    " ms", s->fc->stream, r->status, code, msg, retry_action_name(a),
	    delay);
	sink_schedule(s, b, delay);
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
	const struct batch_rec *rec;
	struct dead_tally dead;
	size_t		 i;
	bool		 retry = false;

	memset(&dead, 0, sizeof(dead));
	for (i = 0; i < b->nsent; i++) {
		rec = &b->recs[b->sent_idx[i]];
		if (res[i].code[0] == '\0') {
			s->m->records_sent++;
			s->m->bytes_sent += rec->len;
			seqmark_ack(s->seq, res[i].partition, res[i].seq);
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
		batch_mark_done(b, b->sent_idx[i]);
	}
	log_dead(s, b, &dead);
	return retry;
}

/*
 * An attempt ended with a verdict on each of b's records: b no longer pins
 * the sequence numbers (seqmark.h), unless an earlier attempt left it
 * uncertain.
 */
static void
verdict(struct batch *b)
{
	if (b->uncertain)
		return;
	seqsnap_unpin(b->pin);
	b->pin = NULL;
}

/*
 * What the attempt says about where b's records are: an error DIS
 * answered (4xx) took nothing, a 200 is a verdict once its body parses
 * (records_replied); no reply (a timeout, a dropped connection, a cancel)
 * or a 5xx may have landed, and then b stays pinned and uncertain until it
 * is handed back.
 */
static void
landed(struct batch *b, const struct http_response *r)
{
	if (r->result != HTTP_OK || r->status >= 500)
		b->uncertain = true;
	else if (r->status != 200)
		verdict(b);
}

/*
 * A 200 whose body acknowledges no record: not a PutRecords reply (an HTML
 * page, truncated JSON) or one for another number of records.  Nothing of
 * it is believed; the whole request goes again.
 */
static void
unacknowledged(struct sink *s, struct batch *b, const struct http_response *r)
{
	char	 why[96];
	int	 k;

	s->m->requests_failed++;
	s->m->replies_unacknowledged++;
	s->m->records_retried += b->nsent;
	k = putbody_entries(s->body, r->body, r->bodylen);
	if (k >= 0)
		snprintf(why, sizeof(why), "the reply acknowledges %d of %zu "
		    "records", k, b->nsent);
	else
		snprintf(why, sizeof(why), "unparsable reply (%zu bytes)",
		    r->bodylen);
	metrics_set_error(s->m, "REPLY", why, wall_s());
	log_warn("PutRecords to [%s]: %s; resending all %zu", s->fc->stream,
	    why, b->nsent);
	sink_schedule(s, b, sink_backoff(s, b));
}

static void
records_replied(struct sink *s, struct batch *b, const struct http_response *r)
{
	struct codec_result *res;
	int		 nfail;
	size_t		 throttle = 0;
	bool		 retry;

	/* Not zeroed: every parser fills each entry it returns (and 500 of
	 * them are 100 KB a reply). */
	res = xmalloc((b->nsent ? b->nsent : 1) * sizeof(*res));
	nfail = putbody_parse(s->body, r->body, r->bodylen, res, b->nsent);
	if (nfail < 0) {
		b->uncertain = true;	/* DIS took the request */
		free(res);
		unacknowledged(s, b, r);
		return;
	}
	s->m->records_failed += (uint64_t)nfail;
	verdict(b);
	retry = apply_results(s, b, res, &throttle);
	log_put(s, b->nsent, (size_t)nfail, res, mono_ms() - b->sent_ms);
	free(res);
	/* AIMD by the share of records DIS throttled: most of them, halve
	 * and pace; some, one request fewer; a few, as a success. */
	if (throttle * 2 >= b->nsent && b->nsent > 0)
		throttled(s, b);
	else if (throttle * 10 >= b->nsent && throttle > 0)
		throttled_lightly(s, b);
	else
		succeeded(s);
	if (finish_if_done(s, b))
		return;
	if (!retry) {
		/* A split batch: the next part goes now. */
		b->attempt = 0;
		sink_try_send(s, b);
		return;
	}
	/* Records failed one by one: they go again after the backoff, in a
	 * request of their own only when nothing else of the flow waits to
	 * leave, else in the first request with room for them (sink.c:
	 * remnant_may_go, absorb_riders).  Meanwhile the batch takes no place
	 * in the window, so the flow's next batch can be that request. */
	b->remnant = true;
	sink_schedule(s, b, sink_backoff(s, b));
}

void
sinkreply_done(const struct http_response *r, void *arg)
{
	struct batch	*b = arg;
	struct sink	*s = b->sink;

	b->sending = false;
	s->inflight--;
	batch_drop_body(b);
	landed(b, r);
	if (r->result == HTTP_ERR_CANCELLED || s->state == SINK_CLOSING) {
		sink_hand_back(s, b, false);
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
		sink_release_waiting(s);
	} else
		request_failed(s, b, r);
	if (s->cbs.ended != NULL)
		s->cbs.ended(s->cbs.arg);
	sink_release_parked(s);
}

