/*
 * The DIS sink of one flow.  Each batch is sent as PutRecords; the reply is
 * matched to the request by position (lessons R13): acknowledged records are
 * marked done and never resent, failed ones are resent after backoff, and a
 * request that failed as a whole is resent whole.  Credential, permission and
 * stream errors pause delivery and alert; they never drop data.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "conf.h"
#include "http.h"
#include "log.h"
#include "retry.h"
#include "signer.h"
#include "sink.h"

#define MIB			(1024 * 1024)
#define PAUSED_RETRY_MS		(60 * 1000)
#define HARD_RETRY_MS		(30 * 60 * 1000)
#define DESCRIBE_RETRY_MS	1000
#define REC_RETRY_INITIAL_MS	100
#define REC_RETRY_MAX_MS	10000

struct sink {
	uv_loop_t	*loop;
	struct http	*http;
	const struct conf *conf;
	const struct conf_flow *fc;
	char		*host;		/* Host header, signed as sent */
	char		*put_path;
	char		*put_url;
	char		*describe_path;
	char		*describe_url;
	bool		 ready;		/* stream described and RUNNING */
	bool		 closing;
	size_t		 record_cap;
	size_t		 request_cap;
	struct batch	*waiting;	/* submitted before ready, FIFO */
	size_t		 pending;	/* submitted and not done */
	unsigned	 describe_attempt;
	bool		 describing;
	uv_timer_t	*describe_timer;
	struct buf	 err_last;	/* last request-level error, for logs */
	uint64_t	 last_halt_log_ms;
	struct sink_stats stats;
	sink_done_cb	 done;
	sink_halt_cb	 halt;
	void		*arg;
};

static void	send_batch(struct sink *, struct batch *);
static void	describe(struct sink *);

/* --- batches ------------------------------------------------------------ */

struct batch *
batch_new(uv_loop_t *loop)
{
	struct batch	*b;

	b = xcalloc(1, sizeof(*b));
	buf_init(&b->data);
	buf_init(&b->keys);
	buf_init(&b->body);
	uv_timer_init(loop, &b->retry_timer);
	return b;
}

static void
batch_closed(uv_handle_t *h)
{
	struct batch	*b = container_of(h, struct batch, retry_timer);

	buf_cleanup(&b->data);
	buf_cleanup(&b->keys);
	buf_cleanup(&b->body);
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
batch_add(struct batch *b, const char *data, size_t len, const char *key)
{
	struct batch_rec *r;

	if (b->nrecs == b->caprecs) {
		b->caprecs = b->caprecs ? b->caprecs * 2 : 64;
		b->recs = xrealloc(b->recs, b->caprecs * sizeof(*b->recs));
	}
	r = &b->recs[b->nrecs++];
	r->off = (uint32_t)b->data.len;
	r->len = (uint32_t)len;
	r->key = (uint32_t)b->keys.len;
	r->done = false;
	buf_add(&b->data, data, len);
	buf_add(&b->keys, key, strlen(key) + 1);
}

size_t
batch_bytes(const struct batch *b)
{
	return b->data.cap + b->keys.cap + b->body.cap +
	    b->caprecs * sizeof(*b->recs);
}

/* --- setup -------------------------------------------------------------- */

/* "https://h:443/x" -> "h" ; "https://h:8443" -> "h:8443" */
static char *
host_of(const char *endpoint)
{
	const char	*p, *end;
	char		*h;
	size_t		 n;
	bool		 tls;

	tls = strncmp(endpoint, "https://", 8) == 0;
	p = strstr(endpoint, "://");
	p = p ? p + 3 : endpoint;
	end = strchr(p, '/');
	n = end ? (size_t)(end - p) : strlen(p);
	h = xstrndup(p, n);
	n = strlen(h);
	if (tls && n > 4 && strcmp(h + n - 4, ":443") == 0)
		h[n - 4] = '\0';
	else if (!tls && n > 3 && strcmp(h + n - 3, ":80") == 0)
		h[n - 3] = '\0';
	return h;
}

static void
set_caps(struct sink *s, const char *type)
{
	bool	 adv = strcmp(type, "ADVANCED") == 0;

	s->record_cap = adv ? 5 * MIB : MIB;
	s->request_cap = adv ? 5 * MIB : MIB;
	if ((size_t)s->fc->max_buffer_bytes < s->request_cap)
		s->request_cap = (size_t)s->fc->max_buffer_bytes;
	if (s->record_cap > s->request_cap)
		s->record_cap = s->request_cap;
}

struct sink *
sink_new(uv_loop_t *loop, struct http *http, const struct conf *conf,
    const struct conf_flow *fc, sink_done_cb done, sink_halt_cb halt,
    void *arg)
{
	struct sink	*s;
	const char	*ep = conf->endpoint;
	size_t		 n = strlen(ep);

	while (n > 0 && ep[n - 1] == '/')
		n--;
	s = xcalloc(1, sizeof(*s));
	s->loop = loop;
	s->http = http;
	s->conf = conf;
	s->fc = fc;
	s->done = done;
	s->halt = halt;
	s->arg = arg;
	s->host = host_of(ep);
	s->put_path = xasprintf("/v2/%s/records/", conf->project_id);
	s->put_url = xasprintf("%.*s%s", (int)n, ep, s->put_path);
	s->describe_path = xasprintf("/v2/%s/streams/%s/", conf->project_id,
	    fc->stream);
	s->describe_url = xasprintf("%.*s%s", (int)n, ep, s->describe_path);
	s->describe_timer = xcalloc(1, sizeof(*s->describe_timer));
	uv_timer_init(loop, s->describe_timer);
	s->describe_timer->data = s;
	buf_init(&s->err_last);
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

/* --- signing and sending ------------------------------------------------ */

struct sent_headers {
	char	*lines[6];
	size_t	 n;
};

static void
sent_headers_free(struct sent_headers *h)
{
	size_t	 i;

	for (i = 0; i < h->n; i++)
		free(h->lines[i]);
	h->n = 0;
}

/* Sign method+path over body and fill the header lines to send. */
static int
sign_headers(struct sink *s, const char *method, const char *path,
    const void *body, size_t len, struct sent_headers *out)
{
	const char	*ctype = "application/json; charset=utf-8";
	char		 date[17];
	struct buf	 auth;
	struct sign_header hdrs[4];
	struct sign_request req;
	struct sign_key	 key;
	int		 rc;

	signer_date(wall_s(), date);
	hdrs[0].name = "Content-Type";
	hdrs[0].value = ctype;
	hdrs[1].name = "Host";
	hdrs[1].value = s->host;
	hdrs[2].name = "X-Project-Id";
	hdrs[2].value = s->conf->project_id;
	hdrs[3].name = "X-Sdk-Date";
	hdrs[3].value = date;
	memset(&req, 0, sizeof(req));
	req.method = method;
	req.path = path;
	req.headers = hdrs;
	req.nheaders = ARRAY_SIZE(hdrs);
	req.body = body;
	req.bodylen = len;
	key.ak = s->conf->ak;
	key.sk = s->conf->sk;
	key.region = s->conf->region;
	key.service = "dis";
	buf_init(&auth);
	rc = signer_authorization(SIGN_DIS, &key, date, &req, &auth);
	if (rc != 0) {
		buf_cleanup(&auth);
		return rc;
	}
	out->n = 0;
	out->lines[out->n++] = xasprintf("Content-Type: %s", ctype);
	out->lines[out->n++] = xasprintf("Host: %s", s->host);
	out->lines[out->n++] = xasprintf("X-Project-Id: %s",
	    s->conf->project_id);
	out->lines[out->n++] = xasprintf("X-Sdk-Date: %s", date);
	out->lines[out->n++] = xasprintf("Authorization: %s", auth.data);
	buf_cleanup(&auth);
	return 0;
}

static int
submit(struct sink *s, const char *method, const char *url, const char *path,
    const void *body, size_t len, http_done_cb cb, void *arg)
{
	struct sent_headers h;
	struct http_request req;
	int		 rc;

	rc = sign_headers(s, method, path, body, len, &h);
	if (rc != 0)
		return rc;
	memset(&req, 0, sizeof(req));
	req.method = method;
	req.url = url;
	req.headers = (const char *const *)h.lines;
	req.nheaders = h.n;
	req.body = body;
	req.bodylen = len;
	req.connect_timeout_ms = s->conf->connect_timeout_s * 1000;
	req.timeout_ms = s->conf->socket_timeout_s * 1000;
	req.max_response = 4 * MIB;
	rc = http_submit(s->http, &req, cb, arg);
	sent_headers_free(&h);
	return rc;
}

static void	on_put_done(const struct http_response *, void *);
static void	schedule(struct sink *, struct batch *, uint64_t);

static void
build_body(struct sink *s, struct batch *b)
{
	const struct batch_rec *r;
	size_t		 i;

	buf_reset(&b->body);
	buf_reserve(&b->body, codec_base64_len(b->data.len) +
	    (b->nrecs - b->ndone) * 48 + 128);
	codec_put_begin(&b->body, s->fc->stream, s->fc->stream_id);
	b->sent_idx = xrealloc(b->sent_idx, b->nrecs * sizeof(*b->sent_idx));
	b->nsent = 0;
	for (i = 0; i < b->nrecs; i++) {
		r = &b->recs[i];
		if (r->done)
			continue;
		codec_put_add(&b->body, b->data.data + r->off, r->len,
		    b->keys.data + r->key);
		b->sent_idx[b->nsent++] = i;
	}
	codec_put_end(&b->body);
}

static void
send_batch(struct sink *s, struct batch *b)
{
	int	 rc;

	build_body(s, b);
	b->sending = true;
	b->sent_ms = mono_ms();
	rc = submit(s, "POST", s->put_url, s->put_path, b->body.data,
	    b->body.len, on_put_done, b);
	if (rc != 0) {
		b->sending = false;
		buf_cleanup(&b->body);
		log_error("cannot send to [%s]: %s; retrying",
		    s->fc->stream, strerror(-rc));
		schedule(s, b, retry_backoff_ms(b->attempt++, 250, 30000,
		    rand_unit()));
	}
}

static void
on_retry_timer(uv_timer_t *t)
{
	struct batch	*b = container_of(t, struct batch, retry_timer);
	struct sink	*s = b->sink;

	if (s->closing)
		return;
	send_batch(s, b);
}

static void
schedule(struct sink *s, struct batch *b, uint64_t delay_ms)
{
	uv_timer_start(&b->retry_timer, on_retry_timer, delay_ms, 0);
}

void
sink_submit(struct sink *s, struct batch *b)
{
	struct batch	**pp;

	b->sink = s;
	b->next = NULL;
	s->pending++;
	if (s->ready) {
		send_batch(s, b);
		return;
	}
	for (pp = &s->waiting; *pp != NULL; pp = &(*pp)->next)
		;
	*pp = b;
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
	else if (status == 403)
		hint = "check the IAM permissions of the credentials for DIS";
	else if (strcmp(code, "DIS.4117") == 0)
		hint = "check projectId";
	else if (strcmp(code, "DIS.4301") == 0 || status == 410)
		hint = "check that DISStream exists in this region/project";
	snprintf(reason, sizeof(reason), "stream [%s]: HTTP %ld %s %s: %s",
	    s->fc->stream, status, code, msg, hint);
	if (s->last_halt_log_ms == 0 || now - s->last_halt_log_ms >= 60000) {
		log_error("delivery paused for %s; data stays on disk and "
		    "is retried", reason);
		s->last_halt_log_ms = now;
	}
	if (s->halt != NULL)
		s->halt(reason, s->arg);
}

/* Delay before the next try after a request-level failure. */
static uint64_t
request_delay(struct sink *s, struct batch *b, enum retry_action a)
{
	uint64_t	 d;

	switch (a) {
	case RETRY_HALT:
		return PAUSED_RETRY_MS;
	case RETRY_HARD:
		return HARD_RETRY_MS;
	case RETRY_SLOW:
		d = retry_backoff_ms(b->attempt++, 1000, 30000, rand_unit());
		return MAX(d, 1000);
	default:
		return retry_backoff_ms(b->attempt++, 250, 30000,
		    rand_unit());
	}
}

static void
request_failed(struct sink *s, struct batch *b, const struct http_response *r)
{
	char		 code[32] = "", msg[160] = "";
	enum retry_action a;
	uint64_t	 delay;

	s->stats.requests_failed++;
	if (r->result != HTTP_OK) {
		a = RETRY_REQUEST;
		delay = request_delay(s, b, a);
		log_warn("PutRecords to [%s] failed: %s; retrying in %" PRIu64
		    " ms", s->fc->stream, r->error ? r->error : "error",
		    delay);
	} else {
		(void)codec_parse_error(r->body, r->bodylen, code,
		    sizeof(code), msg, sizeof(msg));
		a = retry_classify(r->status, code);
		delay = request_delay(s, b, a);
		if (a == RETRY_HALT || a == RETRY_HARD)
			halt_log(s, r->status, code, msg);
		else
			log_warn("PutRecords to [%s] failed: HTTP %ld %s %s; "
			    "%s in %" PRIu64 " ms", s->fc->stream, r->status,
			    code, msg, retry_action_name(a), delay);
	}
	schedule(s, b, delay);
}

static void
log_put(struct sink *s, struct batch *b, size_t n, size_t nfail,
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

static void
batch_complete(struct sink *s, struct batch *b)
{
	s->pending--;
	s->done(b, s->arg);
}

static void
records_replied(struct sink *s, struct batch *b, const struct http_response *r)
{
	struct codec_result *res;
	size_t		 i;
	int		 nfail;
	struct batch_rec *rec;

	res = xcalloc(b->nsent ? b->nsent : 1, sizeof(*res));
	nfail = codec_parse_put(r->body, r->bodylen, res, b->nsent);
	if (nfail < 0) {
		free(res);
		s->stats.requests_failed++;
		log_warn("PutRecords to [%s]: unparsable reply (%zu bytes); "
		    "resending the request", s->fc->stream, r->bodylen);
		schedule(s, b, request_delay(s, b, RETRY_REQUEST));
		return;
	}
	for (i = 0; i < b->nsent; i++) {
		if (res[i].code[0] != '\0')
			continue;
		rec = &b->recs[b->sent_idx[i]];
		rec->done = true;
		b->ndone++;
		s->stats.records_sent++;
		s->stats.bytes_sent += rec->len;
	}
	s->stats.records_failed += (uint64_t)nfail;
	log_put(s, b, b->nsent, (size_t)nfail, res, mono_ms() - b->sent_ms);
	free(res);
	if (b->ndone == b->nrecs) {
		batch_complete(s, b);
		return;
	}
	/* Only the failed records go again (R13), after backoff. */
	schedule(s, b, retry_backoff_ms(b->attempt++,
	    (uint64_t)s->fc->retry_initial_backoff_ms,
	    (uint64_t)s->fc->retry_max_backoff_ms, rand_unit()));
}

static void
on_put_done(const struct http_response *r, void *arg)
{
	struct batch	*b = arg;
	struct sink	*s = b->sink;

	b->sending = false;
	if (r->result == HTTP_ERR_CANCELLED || s->closing) {
		buf_cleanup(&b->body);
		return;
	}
	s->stats.requests++;
	if (r->result == HTTP_OK && r->status == 200)
		records_replied(s, b, r);
	else
		request_failed(s, b, r);
	/* The body is rebuilt for a retry: hold no memory while waiting. */
	buf_cleanup(&b->body);
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

static void
became_ready(struct sink *s)
{
	struct batch	*b;

	s->ready = true;
	while ((b = s->waiting) != NULL) {
		s->waiting = b->next;
		b->next = NULL;
		send_batch(s, b);
	}
}

static void
describe_replied(struct sink *s, const struct http_response *r)
{
	struct stream_info si;

	if (codec_parse_describe(r->body, r->bodylen, &si) != 0) {
		log_warn("DescribeStream [%s]: unparsable reply; retrying",
		    s->fc->stream);
		describe_again(s, retry_backoff_ms(s->describe_attempt++,
		    DESCRIBE_RETRY_MS, 30000, rand_unit()));
		return;
	}
	if (strcmp(si.status, "CREATING") == 0) {
		log_info("DISStream %s is CREATING; waiting", s->fc->stream);
		describe_again(s, DESCRIBE_RETRY_MS);
		return;
	}
	if (strcmp(si.status, "RUNNING") != 0 && si.status[0] != '\0') {
		halt_log(s, 200, "", si.status);
		describe_again(s, PAUSED_RETRY_MS);
		return;
	}
	set_caps(s, si.type[0] ? si.type : s->fc->stream_type);
	log_info("DISStream %s type is %s", s->fc->stream,
	    si.type[0] ? si.type : s->fc->stream_type);
	became_ready(s);
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
		describe_again(s, retry_backoff_ms(s->describe_attempt++,
		    DESCRIBE_RETRY_MS, 30000, rand_unit()));
		return;
	}
	(void)codec_parse_error(r->body, r->bodylen, code, sizeof(code), msg,
	    sizeof(msg));
	a = retry_classify(r->status, code);
	if (a == RETRY_HALT || a == RETRY_HARD) {
		halt_log(s, r->status, code, msg);
		describe_again(s, a == RETRY_HARD ? HARD_RETRY_MS :
		    PAUSED_RETRY_MS);
		return;
	}
	log_warn("DescribeStream [%s] failed: HTTP %ld %s %s; retrying",
	    s->fc->stream, r->status, code, msg);
	describe_again(s, retry_backoff_ms(s->describe_attempt++,
	    DESCRIBE_RETRY_MS, 30000, rand_unit()));
}

static void
describe(struct sink *s)
{
	int	 rc;

	if (s->closing || s->describing)
		return;
	rc = submit(s, "GET", s->describe_url, s->describe_path, NULL, 0,
	    on_describe_done, s);
	if (rc != 0) {
		log_error("DescribeStream [%s]: %s", s->fc->stream,
		    strerror(-rc));
		describe_again(s, PAUSED_RETRY_MS);
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
	buf_cleanup(&s->err_last);
	free(s->host);
	free(s->put_path);
	free(s->put_url);
	free(s->describe_path);
	free(s->describe_url);
	free(s);
}
