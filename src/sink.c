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
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec.h"
#include "conf.h"
#include "deadletter.h"
#include "disapi.h"
#include "http.h"
#include "log.h"
#include "metrics.h"
#include "pbuf.h"
#include "retry.h"
#include "sink.h"
#include "tailer.h"

#define MIB			(1024 * 1024)
#define HARD_RETRY_MS		(30 * 60 * 1000)
#define SLOW_MIN_MS		1000
#define DESCRIBE_RETRY_MS	1000
#define PACE_MAX_MS		2000
#define HALT_LOG_EVERY_MS	60000

/* A PutRecords body format (body.serialize.type): its writer and parser. */
struct body_format {
	const char	*ctype;		/* Content-Type of PutRecords */
	size_t		 entry_overhead;	/* bytes around a record's data
					   and key, beyond the data's size */
	bool		 base64;	/* data sent as base64 text */
	void		(*begin)(struct buf *, const char *, const char *);
	void		(*add)(struct buf *, const void *, size_t,
			    const char *);
	void		(*end)(struct buf *);
	int		(*parse)(const char *, size_t, struct codec_result *,
			    size_t);
};

static const struct body_format json_format = {
	DISAPI_JSON, 40, true,
	codec_put_begin, codec_put_add, codec_put_end, codec_parse_put,
};
static const struct body_format protobuf_format = {
	PBUF_CONTENT_TYPE, PBUF_ENTRY_OVERHEAD, false,
	pbuf_put_begin, pbuf_put_add, pbuf_put_end, pbuf_parse_put,
};

struct sink {
	uv_loop_t	*loop;
	const struct conf *conf;
	const struct conf_flow *fc;
	struct mem_budget *mem;
	enum codec_zip	 zip;		/* body.compress.* */
	const struct body_format *fmt;	/* body.serialize.type */
	struct disapi	*api;
	char		*describe_path;	/* "streams/NAME/" */
	struct deadletter *dlq;		/* borrowed from the flow */
	bool		 ready;		/* stream described and RUNNING */
	bool		 closing;
	bool		 halted;	/* paused: only the probe is sent */
	struct batch	*probe;
	size_t		 record_cap;
	size_t		 request_cap;
	struct batch	*waiting;	/* not ready or paused, FIFO */
	size_t		 pending;	/* submitted and not done */
	double		 window;	/* AIMD: batches allowed out */
	uint64_t	 pace_ms;	/* gap between sends while throttled */
	uint64_t	 next_send_ms;
	unsigned	 describe_attempt;
	bool		 describing;
	uv_timer_t	*describe_timer;
	uint64_t	 last_halt_log_ms;
	struct sink_stats stats;
	struct metrics_flow m;		/* codes, statuses, latency, error */
	sink_done_cb	 done;
	sink_halt_cb	 halt;
	void		*arg;
};

static void	try_send(struct sink *, struct batch *);
static void	describe(struct sink *);

/* --- batches ------------------------------------------------------------ */

struct batch *
batch_new(uv_loop_t *loop, struct mem_budget *mem)
{
	struct batch	*b;

	b = xcalloc(1, sizeof(*b));
	buf_init(&b->data);
	buf_init(&b->keys);
	buf_init(&b->body);
	b->mem = mem;
	uv_timer_init(loop, &b->retry_timer);
	return b;
}

/* The body's memory is reserved with each record (batch_add), so the
 * budget holds before a request is built. */
static void
body_free(struct batch *b)
{
	buf_cleanup(&b->body);
}

/* Bytes of the JSON body one record takes: its base64 data, its key and
 * the {"data":"","partition_key":""}, around them.  The batch does not
 * know its format, so this bounds the protobuf entry too (raw data, and
 * fewer bytes around it), at the price of a larger share than it needs. */
static size_t
body_share(size_t len, size_t klen)
{
	return codec_base64_len(len) + klen + 40;
}
_Static_assert(PBUF_ENTRY_OVERHEAD <= 40,
    "body_share must bound a protobuf record too");

static void
batch_closed(uv_handle_t *h)
{
	struct batch	*b = container_of(h, struct batch, retry_timer);

	body_free(b);
	mem_release(b->mem, b->charged);
	buf_cleanup(&b->data);
	buf_cleanup(&b->keys);
	free(b->recs);
	free(b->segs);
	free(b->sent_idx);
	free(b);
}

void
batch_free(struct batch *b)
{
	if (b == NULL)
		return;
	uv_close((uv_handle_t *)&b->retry_timer, batch_closed);
}

void
batch_add(struct batch *b, const char *data, size_t len, const char *key,
    uint16_t seg, uint64_t file_off)
{
	struct batch_rec *r;
	size_t		 klen = strlen(key) + 1;

	if (b->nrecs == b->caprecs) {
		b->caprecs = b->caprecs ? b->caprecs * 2 : 64;
		b->recs = xrealloc(b->recs, b->caprecs * sizeof(*b->recs));
	}
	r = &b->recs[b->nrecs++];
	r->off = (uint32_t)b->data.len;
	r->len = (uint32_t)len;
	r->key = (uint32_t)b->keys.len;
	r->seg = seg;
	r->done = false;
	r->file_off = file_off;
	buf_add(&b->data, data, len);
	buf_add(&b->keys, key, klen);
	b->charged += len + klen + sizeof(*r) + body_share(len, klen);
	mem_charge(b->mem, len + klen + sizeof(*r) + body_share(len, klen));
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
    const struct conf_flow *fc, struct mem_budget *mem,
    struct deadletter *dlq, sink_done_cb done, sink_halt_cb halt, void *arg)
{
	struct sink	*s;

	s = xcalloc(1, sizeof(*s));
	s->loop = loop;
	s->api = api;
	s->conf = conf;
	s->fc = fc;
	s->mem = mem;
	s->done = done;
	s->halt = halt;
	s->arg = arg;
	s->dlq = dlq;
	s->describe_path = xasprintf("streams/%s/", fc->stream);
	s->describe_timer = xcalloc(1, sizeof(*s->describe_timer));
	uv_timer_init(loop, s->describe_timer);
	s->describe_timer->data = s;
	s->window = max_window(s);
	s->zip = conf->compress ? codec_zip_parse(conf->compress_type) :
	    CODEC_ZIP_NONE;
	s->fmt = strcmp(conf->serialize_type, "protobuf") == 0 ?
	    &protobuf_format : &json_format;
	set_caps(s, fc->stream_type);
	return s;
}

void
sink_start(struct sink *s)
{
	if (s->fc->stream_id[0] != '\0') {
		log_info("DISStream %s type is %s", s->fc->stream_id,
		    s->fc->stream_type);
		s->ready = true;
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
sink_window(const struct sink *s)
{
	return s->window < 1.0 ? 1 : (size_t)s->window;
}

bool
sink_paused(const struct sink *s)
{
	return s->halted;
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

const struct sink_stats *
sink_stats(const struct sink *s)
{
	return &s->stats;
}

const struct metrics_flow *
sink_metrics(const struct sink *s)
{
	return &s->m;
}

/* --- throttling (AIMD) -------------------------------------------------- */

static void
throttled(struct sink *s)
{
	s->stats.throttled++;
	s->window = s->window / 2 < 1.0 ? 1.0 : s->window / 2;
	s->pace_ms = s->pace_ms ? MIN(s->pace_ms * 2, PACE_MAX_MS) : 50;
}

/* A few throttled records in a batch: one request fewer in flight, no
 * pacing (halving on every 5% of DIS.4303 would starve the flow). */
static void
throttled_lightly(struct sink *s)
{
	s->stats.throttled++;
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

/* --- sending ----------------------------------------------------------- */

static void	on_put_done(const struct http_response *, void *);
static void	schedule(struct sink *, struct batch *, uint64_t);

/* The body of the records not yet done (at most b->limit of them). */
static void
build_body(struct sink *s, struct batch *b)
{
	const struct body_format *fmt = s->fmt;
	const struct batch_rec *r;
	size_t		 i;

	body_free(b);
	/* Exactly what was reserved, not a doubled capacity. */
	buf_alloc_exact(&b->body, (fmt->base64 ?
	    codec_base64_len(b->data.len) : b->data.len) + b->keys.len +
	    (b->nrecs - b->ndone) * fmt->entry_overhead + 128);
	fmt->begin(&b->body, s->fc->stream, s->fc->stream_id);
	b->sent_idx = xrealloc(b->sent_idx, b->nrecs * sizeof(*b->sent_idx));
	b->nsent = 0;
	for (i = 0; i < b->nrecs; i++) {
		r = &b->recs[i];
		if (r->done)
			continue;
		if (b->limit > 0 && b->nsent == b->limit)
			break;
		fmt->add(&b->body, b->data.data + r->off, r->len,
		    b->keys.data + r->key);
		b->sent_idx[b->nsent++] = i;
	}
	fmt->end(&b->body);
}

/*
 * body.compress.enabled: replace the body, JSON or protobuf, by its lz4
 * block or zstd frame (signed as sent) and fill the two headers DIS needs.
 */
static int
compress_body(struct sink *s, struct batch *b, struct sign_header *zhdr,
    char *zlen)
{
	struct buf	 z;
	int		 rc;

	if (s->zip == CODEC_ZIP_NONE)
		return 0;
	buf_init(&z);
	rc = codec_compress(s->zip, b->body.data, b->body.len, &z);
	if (rc != 0) {
		buf_cleanup(&z);
		return rc;
	}
	snprintf(zlen, 24, "%zu", b->body.len);
	buf_cleanup(&b->body);
	b->body = z;
	zhdr[0].name = "Content-Encoding";
	zhdr[0].value = codec_zip_name(s->zip);
	zhdr[1].name = s->zip == CODEC_ZIP_LZ4 ? "x-dis-lz4-content-length" :
	    "x-dis-zstd-content-length";
	zhdr[1].value = zlen;
	return 0;
}

static void
send_batch(struct sink *s, struct batch *b)
{
	struct disapi_call c;
	struct sign_header zhdr[2];
	char		 zlen[24];
	int		 rc;

	build_body(s, b);
	rc = compress_body(s, b, zhdr, zlen);
	b->sending = true;
	b->sent_ms = mono_ms();
	if (rc == 0) {
		memset(&c, 0, sizeof(c));
		c.method = "POST";
		c.path = "records/";
		c.ctype = s->fmt->ctype;
		c.body = b->body.data;
		c.bodylen = b->body.len;
		c.extra = zhdr;
		c.nextra = s->zip != CODEC_ZIP_NONE ? 2 : 0;
		rc = disapi_send(s->api, &c, on_put_done, b);
	}
	if (rc != 0) {
		b->sending = false;
		body_free(b);
		log_error("cannot send to [%s]: %s; retrying",
		    s->fc->stream, strerror(-rc));
		schedule(s, b, retry_backoff_ms(b->attempt++,
		    (uint64_t)s->fc->retry_initial_backoff_ms,
		    (uint64_t)s->fc->retry_max_backoff_ms, rand_unit()));
	}
}

static void
on_retry_timer(uv_timer_t *t)
{
	struct batch	*b = container_of(t, struct batch, retry_timer);

	try_send(b->sink, b);
}

static void
schedule(struct sink *s, struct batch *b, uint64_t delay_ms)
{
	(void)s;
	uv_timer_start(&b->retry_timer, on_retry_timer, delay_ms, 0);
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

/*
 * Send b now, later (pacing), or park it: before the stream is described,
 * and while paused, when another batch is the probe.
 */
static void
try_send(struct sink *s, struct batch *b)
{
	uint64_t	 now;

	if (s->closing)
		return;
	if (!s->ready || (s->halted && s->probe != NULL && s->probe != b)) {
		enqueue(s, b);
		return;
	}
	if (s->halted)
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

/* Send every parked batch (ready, or no longer paused). */
static void
release_waiting(struct sink *s)
{
	struct batch	*b;

	while ((b = s->waiting) != NULL && s->ready &&
	    (!s->halted || s->probe == NULL)) {
		s->waiting = b->next;
		b->next = NULL;
		try_send(s, b);
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
	struct tailer	*t = b->segs[r->seg].tailer;
	int		 rc;

	rc = deadletter_write(s->dlq, s->fc->name, t->path, r->file_off, code,
	    msg, b->data.data + r->off, r->len);
	if (rc != 0)
		return rc;
	log_warn("[%s] record of %s at offset %ju rejected by DIS (%s %s): "
	    "written to %s", s->fc->name, t->path, (uintmax_t)r->file_off,
	    code, msg, deadletter_path(s->dlq));
	s->stats.records_dead++;
	return 0;
}

/* --- replies ------------------------------------------------------------ */

static void
halt_log(struct sink *s, long status, const char *code, const char *msg)
{
	const char	*hint = "check the configuration";
	uint64_t	 now = mono_ms();
	char		 reason[512];

	if (status == 441 || status == 401)
		hint = "check ak/sk and the clock (X-Sdk-Date)";
	else if (status == 403 && code[0] == '\0')
		hint = "the gateway refuses this client (IP blacklisted?)";
	else if (status == 403)
		hint = "check the IAM permissions of the credentials for DIS";
	else if (strcmp(code, "DIS.4309") == 0)
		hint = "client IP blacklisted after too many failures; "
		    "backing off for 30 minutes";
	else if (strcmp(code, "DIS.4117") == 0)
		hint = "check projectId";
	else if (strcmp(code, "DIS.4301") == 0 || status == 410)
		hint = "check that DISStream exists in this region/project";
	snprintf(reason, sizeof(reason), "stream [%s]: HTTP %ld %s %s: %s",
	    s->fc->stream, status, code, msg, hint);
	metrics_set_error(&s->m, code[0] ? code : "HTTP", reason, wall_s());
	if (s->last_halt_log_ms == 0 ||
	    now - s->last_halt_log_ms >= HALT_LOG_EVERY_MS) {
		log_error("delivery paused for %s; data stays on disk and "
		    "is retried every %lld s", reason, s->conf->paused_retry_s);
		s->last_halt_log_ms = now;
	}
	if (s->halt != NULL)
		s->halt(reason, s->arg);
}

static void
pause_batch(struct sink *s, struct batch *b, uint64_t delay)
{
	s->halted = true;
	if (s->probe == NULL || s->probe == b) {
		s->probe = b;
		schedule(s, b, delay);
	} else
		enqueue(s, b);
}

static uint64_t
backoff(struct sink *s, struct batch *b)
{
	return retry_backoff_ms(b->attempt++,
	    (uint64_t)s->fc->retry_initial_backoff_ms,
	    (uint64_t)s->fc->retry_max_backoff_ms, rand_unit());
}

/* Halve the batch's requests; a lone record that is still refused is
 * dead-lettered (it can never be accepted). */
static void
split(struct sink *s, struct batch *b, long status, const char *code,
    const char *msg)
{
	char	 why[48];

	if (b->nsent > 1) {
		b->limit = b->nsent / 2;
		log_warn("PutRecords to [%s]: HTTP %ld %s: sending %zu records "
		    "per request", s->fc->stream, status, code, b->limit);
		schedule(s, b, 0);
		return;
	}
	snprintf(why, sizeof(why), "%s", code[0] ? code : "HTTP");
	if (b->nsent == 1 && dead_letter(s, b, b->sent_idx[0], why, msg) == 0) {
		b->recs[b->sent_idx[0]].done = true;
		b->ndone++;
		b->limit = 0;
		if (b->ndone == b->nrecs) {
			s->pending--;
			s->done(b, s->arg);
			return;
		}
		schedule(s, b, 0);
		return;
	}
	schedule(s, b, backoff(s, b));
}

static void
request_failed(struct sink *s, struct batch *b, const struct http_response *r)
{
	char		 code[32] = "", msg[160] = "";
	enum retry_action a;
	uint64_t	 delay;

	s->stats.requests_failed++;
	s->stats.records_retried += b->nsent;
	if (r->result != HTTP_OK) {
		metrics_set_error(&s->m, "NETWORK",
		    r->error ? r->error : "error", wall_s());
		delay = backoff(s, b);
		log_warn("PutRecords to [%s] failed: %s; retrying in %" PRIu64
		    " ms", s->fc->stream, r->error ? r->error : "error", delay);
		schedule(s, b, delay);
		return;
	}
	(void)codec_parse_error(r->body, r->bodylen, code, sizeof(code), msg,
	    sizeof(msg));
	a = retry_classify(r->status, code);
	if (a != RETRY_HALT && a != RETRY_HARD)
		metrics_set_error(&s->m, code[0] ? code : "HTTP", msg,
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
	size_t		 i;
	bool		 retry = false;

	for (i = 0; i < b->nsent; i++) {
		rec = &b->recs[b->sent_idx[i]];
		if (res[i].code[0] != '\0')
			metrics_count_failed(&s->m, res[i].code, 1);
		if (res[i].code[0] == '\0') {
			s->stats.records_sent++;
			s->stats.bytes_sent += rec->len;
		} else if (retry_record_retriable(res[i].code,
		    s->conf->retriable_codes) ||
		    dead_letter(s, b, b->sent_idx[i], res[i].code,
		    res[i].message) != 0) {
			if (strcmp(res[i].code, "DIS.4303") == 0)
				(*throttle)++;
			s->stats.records_retried++;
			retry = true;
			continue;
		}
		rec->done = true;
		b->ndone++;
	}
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
	nfail = s->fmt->parse(r->body, r->bodylen, res, b->nsent);
	if (nfail < 0) {
		free(res);
		s->stats.requests_failed++;
		log_warn("PutRecords to [%s]: unparsable reply (%zu bytes); "
		    "resending the request", s->fc->stream, r->bodylen);
		schedule(s, b, backoff(s, b));
		return;
	}
	s->stats.records_failed += (uint64_t)nfail;
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
	if (b->ndone == b->nrecs) {
		s->pending--;
		s->done(b, s->arg);
		return;
	}
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
	bool		 was_probe;

	b->sending = false;
	body_free(b);
	if (r->result == HTTP_ERR_CANCELLED || s->closing)
		return;
	s->stats.requests++;
	metrics_count_request(&s->m, r->result == HTTP_OK ? (int)r->status :
	    0);
	metrics_observe_latency(&s->m.latency, r->seconds);
	if (r->result == HTTP_OK && r->status == 200) {
		was_probe = s->probe == b;
		if (s->halted) {
			log_info("delivery to [%s] resumed", s->fc->stream);
			s->halted = false;
			s->last_halt_log_ms = 0;
		}
		if (was_probe)
			s->probe = NULL;
		records_replied(s, b, r);
		release_waiting(s);
	} else
		request_failed(s, b, r);
}

/* --- DescribeStream ----------------------------------------------------- */

static void
on_describe_timer(uv_timer_t *t)
{
	describe(t->data);
}

static void
describe_again(struct sink *s, uint64_t delay)
{
	uv_timer_start(s->describe_timer, on_describe_timer, delay, 0);
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
		describe_again(s, describe_backoff(s));
		return;
	}
	if (strcmp(si.status, "CREATING") == 0) {
		log_info("DISStream %s is CREATING; waiting", s->fc->stream);
		describe_again(s, DESCRIBE_RETRY_MS);
		return;
	}
	if (strcmp(si.status, "RUNNING") != 0 && si.status[0] != '\0') {
		halt_log(s, 200, "", si.status);
		describe_again(s, (uint64_t)s->conf->paused_retry_s * 1000);
		return;
	}
	if (s->halted)
		log_info("DISStream %s is available again", s->fc->stream);
	s->halted = false;
	s->last_halt_log_ms = 0;
	set_caps(s, si.type[0] ? si.type : s->fc->stream_type);
	log_info("DISStream %s type is %s", s->fc->stream,
	    si.type[0] ? si.type : s->fc->stream_type);
	s->ready = true;
	release_waiting(s);
}

static void
on_describe_done(const struct http_response *r, void *arg)
{
	struct sink	*s = arg;
	char		 code[32] = "", msg[160] = "";
	enum retry_action a;

	s->describing = false;
	if (r->result == HTTP_ERR_CANCELLED || s->closing)
		return;
	if (r->result == HTTP_OK && r->status == 200) {
		describe_replied(s, r);
		return;
	}
	if (r->result != HTTP_OK) {
		log_warn("DescribeStream [%s] failed: %s; retrying",
		    s->fc->stream, r->error ? r->error : "error");
		describe_again(s, describe_backoff(s));
		return;
	}
	(void)codec_parse_error(r->body, r->bodylen, code, sizeof(code), msg,
	    sizeof(msg));
	a = retry_classify(r->status, code);
	if (a == RETRY_HALT || a == RETRY_HARD) {
		s->halted = true;
		halt_log(s, r->status, code, msg);
		describe_again(s, a == RETRY_HARD ? HARD_RETRY_MS :
		    (uint64_t)s->conf->paused_retry_s * 1000);
		return;
	}
	log_warn("DescribeStream [%s] failed: HTTP %ld %s %s; retrying",
	    s->fc->stream, r->status, code, msg);
	describe_again(s, describe_backoff(s));
}

static void
describe(struct sink *s)
{
	struct disapi_call c;
	int		 rc;

	if (s->closing || s->describing)
		return;
	memset(&c, 0, sizeof(c));
	c.method = "GET";
	c.path = s->describe_path;
	rc = disapi_send(s->api, &c, on_describe_done, s);
	if (rc != 0) {
		log_error("DescribeStream [%s]: %s", s->fc->stream,
		    strerror(-rc));
		describe_again(s, (uint64_t)s->conf->paused_retry_s * 1000);
		return;
	}
	s->describing = true;
}

/* --- teardown ----------------------------------------------------------- */

struct batch *
sink_take_pending(struct sink *s)
{
	struct batch	*list = s->waiting;

	s->closing = true;
	s->waiting = NULL;
	uv_timer_stop(s->describe_timer);
	return list;
}

static void
free_timer(uv_handle_t *h)
{
	free(h);
}

void
sink_free(struct sink *s)
{
	if (s == NULL)
		return;
	s->closing = true;
	uv_close((uv_handle_t *)s->describe_timer, free_timer);
	free(s->describe_path);
	free(s);
}
