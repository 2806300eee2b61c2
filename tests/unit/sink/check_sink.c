/*
 * Unit tests for the sink (sink.c) on a real loop behind a fake transport
 * (disapi_set_transport): every request the sink sends is captured (method,
 * URL, signed headers, body) and answered by the case, from a uv timer as
 * http does, never inside the submit.  Covered: the AIMD window and pacing
 * under throttling, 413 splits and the dead letter of a lone refused
 * record, per-record failures resent alone or riding in the next request
 * with room, the paused state behind one
 * probe per pausedRetrySeconds, DescribeStream retried after network errors
 * and while the stream is CREATING, and sink_cancel handing every batch
 * back undelivered.  Request bodies are decoded (JSON, base64) so a case
 * asserts exactly which records went out.
 *
 * Cases wait for conditions (a request sent, a batch handed back) with a
 * watchdog.  The only times asserted are lower bounds the design promises
 * (the probe waits pausedRetrySeconds, paced sends are the pace apart): a
 * loaded machine can only make them longer.
 */
#include "config.h"

#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/evp.h>
#include <uv.h>

#include "base/log.h"
#include "base/metrics.h"
#include "base/util.h"
#include "conf/conf.h"
#include "dis/disapi.h"
#include "dis/http.h"
#include "records/deadletter.h"
#include "sink/batch.h"
#include "sink/sink.h"
#include "testutil.h"

#define WATCHDOG_MS	15000
#define MAX_REQS	64
#define MAX_DONE	64
#define FILE_NAME	"/logs/app.log"
#define REC_BYTES	3	/* each record's share of the file offsets */

/* One request the sink sent through the fake transport. */
struct req {
	char		*method;
	char		*url;
	char		*headers;	/* "Name: value\n" each */
	char		*body;
	size_t		 bodylen;
	http_done_cb	 cb;
	void		*arg;
	uint64_t	 at_ms;		/* mono_ms() when submitted */
	uint64_t	 queued_ms;	/* when the case answered it */
	uint64_t	 answered_ms;	/* just before its done callback */
	size_t		 nreqs_after;	/* requests sent when it returned */
	bool		 answered;
};

/* A scripted answer waiting for the timer. */
struct answer {
	size_t		 req;
	struct http_response r;
	char		*body;
	char		*error;
	struct answer	*next;
};

/* One batch handed back. */
struct done {
	char		 tag[16];	/* its first record */
	bool		 delivered;
	size_t		 nrecs;
	size_t		 nsegs;		/* its ranges, those it took included */
	size_t		 nacked;	/* spans kept of batches it took */
	uint64_t	 acked_start;	/* the first of them */
	uint64_t	 acked_end;
};

enum wait_for { W_REQS, W_DONE, W_ANSWERED, W_SETTLED };

static struct {
	uv_loop_t	 loop;
	char		 dir[256];
	char		 dead_path[PATH_MAX];
	struct conf	*conf;
	struct conf_flow *fc;
	struct disapi	*api;
	struct deadletter *dlq;
	struct metrics_flow m;
	struct sink	*sink;
	struct req	 reqs[MAX_REQS];
	size_t		 nreqs;
	uv_timer_t	 answer_timer;
	struct answer	*answers;	/* FIFO */
	struct done	 done[MAX_DONE];
	size_t		 ndone;
	unsigned	 ended;
	unsigned	 halts;
	char		 halt_reason[512];
	enum wait_for	 wait;
	size_t		 want;
	bool		 reached;
} h;

/* --- waiting ------------------------------------------------------------ */

static bool
reached(void)
{
	switch (h.wait) {
	case W_REQS:
		return h.nreqs >= h.want;
	case W_DONE:
		return h.ndone >= h.want;
	case W_ANSWERED:
		return h.answers == NULL;
	case W_SETTLED:
		return h.answers == NULL && (h.sink == NULL ||
		    sink_pending(h.sink) == 0);
	}
	return false;
}

/* Called wherever the condition may have changed. */
static void
update(void)
{
	h.reached = reached();
}

static void
wait_until(enum wait_for w, size_t want, const char *what)
{
	h.wait = w;
	h.want = want;
	update();
	ck_assert_msg(tu_run_until(&h.loop, &h.reached, WATCHDOG_MS),
	    "waited %d ms for %s (%zu requests, %zu batches back)",
	    WATCHDOG_MS, what, h.nreqs, h.ndone);
}

static void
wait_reqs(size_t n)
{
	wait_until(W_REQS, n, "requests");
}

static void
wait_done(size_t n)
{
	wait_until(W_DONE, n, "batches handed back");
}

/* Until every queued answer reached the sink. */
static void
wait_answered(void)
{
	wait_until(W_ANSWERED, 0, "answers delivered");
}

/* --- the fake transport ------------------------------------------------- */

static int
fake_submit(void *ctx, const struct http_request *r, http_done_cb cb,
    void *arg)
{
	struct req	*q;
	struct buf	 hd;
	size_t		 i;

	(void)ctx;
	ck_assert_uint_lt(h.nreqs, MAX_REQS);
	q = &h.reqs[h.nreqs++];
	q->method = xstrdup(r->method);
	q->url = xstrdup(r->url);
	buf_init(&hd);
	buf_addstr(&hd, "");
	for (i = 0; i < r->nheaders; i++)
		buf_printf(&hd, "%s\n", r->headers[i]);
	q->headers = hd.data;
	q->body = xmalloc(r->bodylen + 1);
	memcpy(q->body, r->body != NULL ? r->body : "", r->bodylen);
	q->body[r->bodylen] = '\0';
	q->bodylen = r->bodylen;
	q->cb = cb;
	q->arg = arg;
	q->at_ms = mono_ms();
	update();
	return 0;
}

static void
on_answer_timer(uv_timer_t *t)
{
	struct answer	*a, *list = h.answers;
	struct req	*q;

	(void)t;
	h.answers = NULL;	/* a callback may queue more */
	while ((a = list) != NULL) {
		list = a->next;
		q = &h.reqs[a->req];
		q->answered = true;
		q->answered_ms = mono_ms();
		a->r.body = a->body;
		a->r.bodylen = a->body != NULL ? strlen(a->body) : 0;
		a->r.error = a->error;
		q->cb(&a->r, q->arg);
		q->nreqs_after = h.nreqs;
		free(a->body);
		free(a->error);
		free(a);
	}
	update();
}

static void
queue(size_t i, enum http_result result, long status, const char *body,
    const char *error)
{
	struct answer	*a, **pp;

	ck_assert_uint_lt(i, h.nreqs);
	ck_assert_msg(!h.reqs[i].answered, "request %zu answered twice", i);
	for (a = h.answers; a != NULL; a = a->next)
		ck_assert_msg(a->req != i, "request %zu answered twice", i);
	h.reqs[i].queued_ms = mono_ms();
	a = xcalloc(1, sizeof(*a));
	a->req = i;
	a->r.result = result;
	a->r.status = status;
	a->r.seconds = 0.01;
	a->body = body != NULL ? xstrdup(body) : NULL;
	a->error = error != NULL ? xstrdup(error) : NULL;
	for (pp = &h.answers; *pp != NULL; pp = &(*pp)->next)
		;
	*pp = a;
	uv_timer_start(&h.answer_timer, on_answer_timer, 0, 0);
	update();
}

/* Answer request i with an HTTP status and body. */
static void
reply(size_t i, long status, const char *body)
{
	queue(i, HTTP_OK, status, body, NULL);
}

/* Answer request i with a transport error. */
static void
reply_err(size_t i, enum http_result result, const char *error)
{
	queue(i, result, 0, NULL, error);
}

static void
reply_put(size_t i, const char *codes)
{
	char	*body = tu_put_reply(codes, 0, 0);

	reply(i, 200, body);
	free(body);
}

/* --- what was sent ------------------------------------------------------ */

static size_t
unbase64(const char *in, char *out, size_t cap)
{
	size_t	 len = strlen(in), pad = 0;
	int	 n;

	ck_assert_uint_le(len / 4 * 3, cap);
	n = EVP_DecodeBlock((unsigned char *)out, (const unsigned char *)in,
	    (int)len);
	ck_assert_int_ge(n, 0);
	if (len > 0 && in[len - 1] == '=')
		pad++;
	if (len > 1 && in[len - 2] == '=')
		pad++;
	return (size_t)n - pad;
}

/*
 * Field field of each record of PutRecords request i, separated by blanks
 * ("a0 a1"), base64-decoded when it is "data"; static, valid until the
 * next call.
 */
static const char *
field_of(size_t i, const char *field)
{
	static char	 out[4096];
	json_error_t	 err;
	json_t		*root, *recs, *r;
	const char	*v;
	char		 raw[256];
	size_t		 k, n, used = 0;

	ck_assert_uint_lt(i, h.nreqs);
	ck_assert_str_eq(h.reqs[i].method, "POST");
	root = json_loadb(h.reqs[i].body, h.reqs[i].bodylen, 0, &err);
	ck_assert_msg(root != NULL, "request %zu: %s", i, err.text);
	recs = json_object_get(root, "records");
	ck_assert(json_is_array(recs));
	out[0] = '\0';
	json_array_foreach(recs, k, r) {
		v = json_string_value(json_object_get(r, field));
		ck_assert_msg(v != NULL, "request %zu record %zu: no %s", i,
		    k, field);
		if (strcmp(field, "data") == 0) {
			n = unbase64(v, raw, sizeof(raw) - 1);
			v = raw;
		} else
			n = strlen(v);
		used += (size_t)snprintf(out + used, sizeof(out) - used,
		    "%s%.*s", k ? " " : "", (int)n, v);
		ck_assert_uint_lt(used, sizeof(out));
	}
	json_decref(root);
	return out;
}

/* The records of request i, decoded ("a0 a1"). */
static const char *
records_of(size_t i)
{
	return field_of(i, "data");
}

/* The partition keys of request i's records. */
static const char *
keys_of(size_t i)
{
	return field_of(i, "partition_key");
}

/* The batches handed back, as "tag:delivered|undelivered ...". */
static const char *
done_list(void)
{
	static char	 out[1024];
	size_t		 i, used = 0;

	out[0] = '\0';
	for (i = 0; i < h.ndone; i++)
		used += (size_t)snprintf(out + used, sizeof(out) - used,
		    "%s%s:%s", i ? " " : "", h.done[i].tag,
		    h.done[i].delivered ? "delivered" : "undelivered");
	return out;
}

static uint64_t
failed_count(const char *code)
{
	size_t	 i;

	for (i = 0; i < h.m.nfailed; i++)
		if (strcmp(h.m.failed[i].code, code) == 0)
			return h.m.failed[i].count;
	return 0;
}

/* --- the sink and its batches ------------------------------------------- */

static void
on_done(struct batch *b, bool delivered, void *arg)
{
	struct done	*d;

	(void)arg;
	ck_assert_uint_lt(h.ndone, MAX_DONE);
	d = &h.done[h.ndone++];
	snprintf(d->tag, sizeof(d->tag), "%.*s", (int)b->recs[0].len,
	    b->data.data + b->recs[0].off);
	d->delivered = delivered;
	d->nrecs = b->nrecs;
	d->nsegs = b->nsegs;
	d->nacked = b->nacked;
	if (b->nacked > 0) {
		d->acked_start = b->acked[0].start;
		d->acked_end = b->acked[0].end;
	}
	batch_free(b);
	update();
}

static void
on_ended(void *arg)
{
	(void)arg;
	h.ended++;
	update();
}

static void
on_halt(const char *reason, void *arg)
{
	(void)arg;
	h.halts++;
	snprintf(h.halt_reason, sizeof(h.halt_reason), "%s", reason);
}

/* Records "<tag>0" .. "<tag><n-1>" of FILE_NAME, REC_BYTES apart; record
 * i's key is its text and i % 4 '+' ("a0", "a1+", "a2++", ...: keys of
 * unlike lengths, see keys_of). */
static struct batch *
mk_batch(const char *tag, size_t n)
{
	struct batch	*b = batch_new(NULL, NULL);
	char		 rec[16], key[24];
	uint16_t	 seg;
	size_t		 i;

	seg = batch_add_seg(b, 1, FILE_NAME, 7);
	for (i = 0; i < n; i++) {
		snprintf(rec, sizeof(rec), "%s%zu", tag, i);
		snprintf(key, sizeof(key), "%s%.*s", rec, (int)(i % 4), "+++");
		batch_add(b, rec, strlen(rec), key, strlen(key), seg,
		    i * REC_BYTES, (i + 1) * REC_BYTES);
	}
	return b;
}

static void
submit(const char *tag, size_t n)
{
	sink_submit(h.sink, mk_batch(tag, n));
}

static void
setup(void)
{
	memset(&h, 0, sizeof(h));
	ck_assert_int_eq(uv_loop_init(&h.loop), 0);
	uv_timer_init(&h.loop, &h.answer_timer);
	tu_tmpdir(h.dir, sizeof(h.dir), "check_sink");
	tu_path(h.dead_path, sizeof(h.dead_path), h.dir, "dead.jsonl");
	rand_seed(20261201);
}

/* "KEY = VALUE\n" unless extra sets KEY itself. */
static const char *
unless_set(const char *extra, const char *key, const char *line)
{
	return strstr(extra, key) != NULL ? "" : line;
}

/*
 * The sink of one flow (maxInFlightRequests = 4, retries after 1..10 ms
 * unless extra sets them, pausedRetrySeconds = 1) with the extra flow
 * lines; started.  With "streamId = ..." it is READY at once, else it
 * describes the stream.
 */
static void
start(const char *extra)
{
	struct sink_cbs	 cbs = { on_done, on_ended, on_halt, NULL, NULL,
	    false };
	char		 ini[PATH_MAX], err[512], *text;

	tu_path(ini, sizeof(ini), h.dir, "agent.ini");
	/* The responder speaks JSON (the sink's logic is the same in
	 * protobuf: check_sinkreply, e2e ship_protobuf). */
	text = xasprintf("[agent]\nregion = cn-north-4\nprojectId = p1\n"
	    "body.serialize.type = json\n"
	    "ak = AK\nsk = SK\ncheckpointFile = %s/state\n"
	    "deadLetterFile = %s\npausedRetrySeconds = 1\n"
	    "[flow:app]\nDISStream = s1\nfilePattern = %s/*.log\n"
	    "%s%s%s%s", h.dir, h.dead_path, h.dir,
	    unless_set(extra, "maxInFlightRequests", "maxInFlightRequests = 4\n"),
	    unless_set(extra, "retryInitialBackoffMillis",
	    "retryInitialBackoffMillis = 1\n"),
	    unless_set(extra, "retryMaxBackoffMillis",
	    "retryMaxBackoffMillis = 10\n"), extra);
	tu_write_str(ini, text);
	free(text);
	ck_assert_msg(conf_load(ini, &h.conf, err, sizeof(err)) == 0, "%s",
	    err);
	h.fc = &h.conf->flows[0];
	h.m.name = h.fc->name;
	h.m.stream = h.fc->stream;
	h.api = disapi_new(NULL, h.conf);
	disapi_set_transport(h.api, fake_submit, NULL);
	{
		char *p = conf_deadletter_path(h.conf);

		h.dlq = deadletter_new(p);
		free(p);
	}
	h.sink = sink_new(&h.loop, h.api, h.conf, h.fc, h.dlq, &h.m, &cbs);
	sink_start(h.sink);
}

static void
teardown(void)
{
	size_t	 i;

	if (h.sink != NULL) {
		/* As the agent stops: cancel, and the transport ends what
		 * is still on the wire (http_close does). */
		sink_cancel(h.sink);
		wait_answered();
		for (i = 0; i < h.nreqs; i++)
			if (!h.reqs[i].answered)
				reply_err(i, HTTP_ERR_CANCELLED, "cancelled");
		wait_until(W_SETTLED, 0, "every batch handed back");
		sink_free(h.sink);
	}
	disapi_free(h.api);
	deadletter_free(h.dlq);
	conf_free(h.conf);
	uv_close((uv_handle_t *)&h.answer_timer, NULL);
	tu_loop_close(&h.loop);
	for (i = 0; i < h.nreqs; i++) {
		free(h.reqs[i].method);
		free(h.reqs[i].url);
		free(h.reqs[i].headers);
		free(h.reqs[i].body);
	}
	tu_rmtree(h.dir);
}

/* --- AIMD and pacing ---------------------------------------------------- */

START_TEST(window_halves_when_most_records_are_throttled_then_grows_back)
{
	char	 seq[128], tag[8];
	size_t	 used = 0, k, n;

	start("streamId = sid1\n");
	ck_assert_int_eq(sink_state(h.sink), SINK_READY);
	ck_assert_uint_eq(sink_window(h.sink), 4);
	submit("a", 4);
	ck_assert_uint_eq(h.nreqs, 1);
	ck_assert_str_eq(records_of(0), "a0 a1 a2 a3");
	reply_put(0, "- DIS.4303 DIS.4303 DIS.4303");
	wait_reqs(2);
	ck_assert_uint_eq(sink_window(h.sink), 2);
	ck_assert_uint_eq(h.m.throttled, 1);
	ck_assert_str_eq(records_of(1), "a1 a2 a3");
	reply_put(1, "- - -");
	wait_done(1);
	/* +1/window per success: 2.5 2.9 3.24 3.55 3.84 4 (the cap)... */
	used += (size_t)snprintf(seq, sizeof(seq), "%zu",
	    sink_window(h.sink));
	for (k = 0; k < 12; k++) {
		snprintf(tag, sizeof(tag), "%c", (char)('b' + k));
		n = h.nreqs;
		submit(tag, 1);
		wait_reqs(n + 1);
		reply_put(n, "-");
		wait_done(h.ndone + 1);
		used += (size_t)snprintf(seq + used, sizeof(seq) - used, " %zu",
		    sink_window(h.sink));
	}
	ck_assert_str_eq(seq, "2 2 3 3 3 4 4 4 4 4 4 4 4");
	ck_assert_uint_eq(h.m.throttled, 1);
	ck_assert_uint_eq(h.m.records_sent, 16);
	ck_assert_uint_eq(h.m.records_retried, 3);
	ck_assert_uint_eq(failed_count("DIS.4303"), 3);
}
END_TEST

START_TEST(throttled_sends_are_paced)
{
	const char	*first;

	start("streamId = sid1\n");
	/* Not throttled: back-to-back batches go at once. */
	submit("a", 2);
	submit("b", 2);
	ck_assert_uint_eq(h.nreqs, 2);
	reply_put(0, "DIS.4303 DIS.4303");
	reply_put(1, "DIS.4303 DIS.4303");
	wait_answered();
	/* Both left before the first decrease: one round, halved once, a
	 * pace of 50 ms. */
	ck_assert_uint_eq(sink_window(h.sink), 2);
	ck_assert_uint_eq(h.m.throttled, 2);
	/* The retries ride in one request, the later one's records after
	 * those of the batch it took. */
	wait_reqs(3);
	first = records_of(2);
	ck_assert_msg(strcmp(first, "b0 b1 a0 a1") == 0 ||
	    strcmp(first, "a0 a1 b0 b1") == 0, "%s", first);
	ck_assert_uint_eq(sink_pending(h.sink), 1);
	/* Sent after that decrease: a new round, halved again, 100 ms. */
	reply_put(2, "DIS.4303 DIS.4303 DIS.4303 DIS.4303");
	wait_reqs(4);
	ck_assert_uint_eq(sink_window(h.sink), 1);
	/* Paces run on uv timers from the loop's cached time, which may lag
	 * mono_ms() by a millisecond or two: the slack below is that. */
	ck_assert_uint_ge(h.reqs[3].at_ms + 2 - h.reqs[2].at_ms, 50);
	submit("c", 1);
	wait_reqs(5);
	ck_assert_uint_ge(h.reqs[4].at_ms + 2 - h.reqs[3].at_ms, 100);
	ck_assert_str_eq(records_of(4), "c0");
	reply_put(3, "- - - -");
	reply_put(4, "-");
	wait_done(2);
	ck_assert_uint_eq(h.m.records_sent, 5);
	ck_assert_uint_eq(h.m.throttled, 3);
}
END_TEST

/* --- splits and dead letters -------------------------------------------- */

START_TEST(entity_too_large_halves_the_requests)
{
	start("streamId = sid1\n");
	submit("a", 4);
	reply(0, 413, "");
	wait_reqs(2);
	ck_assert_str_eq(records_of(1), "a0 a1");
	reply_put(1, "- -");
	/* The other half goes as soon as the first is acknowledged. */
	wait_reqs(3);
	ck_assert_str_eq(records_of(2), "a2 a3");
	ck_assert_uint_eq(h.ndone, 0);
	reply_put(2, "- -");
	wait_done(1);
	ck_assert_str_eq(done_list(), "a0:delivered");
	ck_assert_uint_eq(h.m.records_sent, 4);
	ck_assert_uint_eq(h.m.records_dead_lettered, 0);
	ck_assert_uint_eq(h.nreqs, 3);
}
END_TEST

#define TOO_LARGE \
	"{\"error_code\":\"DIS.4224\",\"error_msg\":" \
	"\"Request Entity Too Large\"}"

/* The dead-letter file's only line, parsed (new). */
static json_t *
dead_letter_line(void)
{
	json_error_t	 err;
	json_t		*j;
	char		*text, *nl;

	text = tu_slurp(h.dead_path, NULL);
	nl = strchr(text, '\n');
	ck_assert_ptr_nonnull(nl);
	ck_assert_str_eq(nl + 1, "");
	j = json_loads(text, 0, &err);
	ck_assert_msg(j != NULL, "%s: %s", text, err.text);
	free(text);
	return j;
}

static const char *
jstr(json_t *j, const char *key)
{
	const char	*v = json_string_value(json_object_get(j, key));

	ck_assert_msg(v != NULL, "no string %s", key);
	return v;
}

START_TEST(lone_record_still_too_large_is_dead_lettered)
{
	json_t	*j;
	char	 data[8];

	start("streamId = sid1\n");
	submit("a", 2);
	reply(0, 413, TOO_LARGE);
	wait_reqs(2);
	ck_assert_str_eq(records_of(1), "a0");
	reply_put(1, "-");
	wait_reqs(3);
	ck_assert_str_eq(records_of(2), "a1");
	reply(2, 413, TOO_LARGE);
	/* Alone and still refused: it can never be accepted. */
	wait_done(1);
	ck_assert_uint_eq(h.m.records_dead_lettered, 1);
	j = dead_letter_line();
	ck_assert_str_eq(jstr(j, "flow"), "app");
	ck_assert_str_eq(jstr(j, "file"), FILE_NAME);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "offset")),
	    REC_BYTES);
	ck_assert_str_eq(jstr(j, "code"), "DIS.4224");
	ck_assert_str_eq(jstr(j, "message"), "Request Entity Too Large");
	ck_assert_uint_eq(unbase64(jstr(j, "data"), data, sizeof(data)), 2);
	ck_assert_mem_eq(data, "a1", 2);
	json_decref(j);
	/* Delivered: the dead-lettered record is done too. */
	ck_assert_str_eq(done_list(), "a0:delivered");
	ck_assert_uint_eq(h.m.records_sent, 1);
	ck_assert_uint_eq(h.nreqs, 3);
}
END_TEST

START_TEST(failed_records_are_resent_alone)
{
	json_t	*j;

	start("streamId = sid1\n");
	submit("a", 5);
	reply_put(0, "- DIS.4303 - DIS.5000 DIS.4200");
	wait_reqs(2);
	/* Retriable codes resent, the others' acknowledgement kept, the
	 * invalid record dead-lettered. */
	ck_assert_str_eq(records_of(1), "a1 a3");
	ck_assert_uint_eq(sink_window(h.sink), 3);	/* 1 of 5 throttled */
	j = dead_letter_line();
	ck_assert_str_eq(jstr(j, "code"), "DIS.4200");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "offset")),
	    4 * REC_BYTES);
	json_decref(j);
	reply_put(1, "- DIS.5000");
	wait_reqs(3);
	ck_assert_str_eq(records_of(2), "a3");
	reply_put(2, "-");
	wait_done(1);
	ck_assert_str_eq(done_list(), "a0:delivered");
	ck_assert_uint_eq(h.nreqs, 3);
	ck_assert_uint_eq(h.m.records_sent, 4);
	ck_assert_uint_eq(h.m.records_retried, 3);
	ck_assert_uint_eq(h.m.records_failed, 4);
	ck_assert_uint_eq(h.m.records_dead_lettered, 1);
	ck_assert_uint_eq(failed_count("DIS.4303"), 1);
	ck_assert_uint_eq(failed_count("DIS.5000"), 2);
	ck_assert_uint_eq(failed_count("DIS.4200"), 1);
}
END_TEST

/*
 * Records a reply failed one by one ride in the next request that has
 * room, instead of waiting for their own small one; the batch that takes
 * them acknowledges their ranges, and the remnant is never handed back on
 * its own.  A remnant holds no place in the window.
 */
/*
 * A batch's key lengths come from where the next key starts while the keys
 * lie in the order of the records; a batch that absorbed another's records
 * in front of its own has them out of order, and every length must still
 * be its key's.
 */
START_TEST(key_lengths_hold_after_an_absorb)
{
	struct batch	*a = mk_batch("a", 4), *b = mk_batch("b", 3);
	size_t		 i;

	for (i = 0; i < a->nrecs; i++)
		ck_assert_uint_eq(batch_key_len(a, i),
		    strlen(a->keys.data + a->recs[i].key));
	batch_mark_done(a, 0);
	batch_mark_done(a, 2);
	batch_absorb(b, a);
	ck_assert_uint_eq(b->nrecs, 5);
	for (i = 0; i < b->nrecs; i++)
		ck_assert_msg(batch_key_len(b, i) ==
		    strlen(b->keys.data + b->recs[i].key), "record %zu", i);
	ck_assert_str_eq(b->keys.data + b->recs[1].key, "a3+++");
	batch_free(a);
	batch_free(b);
}
END_TEST

START_TEST(failed_records_ride_in_the_next_request)
{
	size_t	 bytes;

	start("streamId = sid1\nmaxInFlightRequests = 1\n"
	    "retryInitialBackoffMillis = 60000\n"
	    "retryMaxBackoffMillis = 60000\n");
	submit("a", 4);
	ck_assert_uint_eq(h.nreqs, 1);
	ck_assert_uint_eq(sink_riders(h.sink, &bytes), 0);
	ck_assert(!sink_has_room(h.sink));
	reply_put(0, "- DIS.4303 - DIS.5000");
	wait_answered();
	ck_assert_uint_eq(sink_pending(h.sink), 1);
	ck_assert_uint_eq(sink_riders(h.sink, &bytes), 2);
	ck_assert_uint_eq(bytes, 4);
	ck_assert(sink_has_room(h.sink));
	submit("b", 3);
	ck_assert_uint_eq(h.nreqs, 2);
	ck_assert_str_eq(records_of(1), "a1 a3 b0 b1 b2");
	/* Each with its own key, though a's now lie after b's. */
	ck_assert_str_eq(keys_of(0), "a0 a1+ a2++ a3+++");
	ck_assert_str_eq(keys_of(1), "a1+ a3+++ b0 b1+ b2++");
	ck_assert_uint_eq(sink_pending(h.sink), 1);
	ck_assert_uint_eq(sink_riders(h.sink, &bytes), 0);
	reply_put(1, "- - - - -");
	wait_done(1);
	ck_assert_str_eq(done_list(), "a1:delivered");
	ck_assert_uint_eq(h.done[0].nrecs, 5);
	ck_assert_uint_eq(h.done[0].nsegs, 2);	/* a's range and b's */
	ck_assert_uint_eq(sink_pending(h.sink), 0);
	ck_assert_uint_eq(h.nreqs, 2);
	ck_assert_uint_eq(h.m.records_sent, 7);
	ck_assert_uint_eq(h.m.records_retried, 2);
}
END_TEST

static void
on_floor(int32_t part, int64_t last, void *arg)
{
	int64_t	*v = arg;

	if (part == 0)
		*v = last;
}

/* The floor of partition 0 as the sink gives it now (-3: none). */
static int64_t
floor0(void)
{
	int64_t	 v = -3;

	sink_floors(h.sink, on_floor, &v);
	return v;
}

static void
count_batch(const struct batch *b, void *arg)
{
	(void)b;
	(*(size_t *)arg)++;
}

/*
 * A remnant riding in another request keeps what it knew: its earlier
 * attempt (a 5xx) may have landed, so the request it rides in stays
 * pinned below it (the floor a restart reads from) and uncertain; the
 * records it had acknowledged stay known (spans of the taker) when that
 * request is cancelled; it leaves the sink's list of batches.
 */
START_TEST(a_rider_keeps_its_pin_acks_and_uncertainty)
{
	size_t	 n = 0;

	/* Keys without record ids: the 503 is not settled by reading the
	 * stream (settle.h), the batch goes again as it was. */
	start("streamId = sid1\nmaxInFlightRequests = 1\n"
	    "partitionKeyOption = RANDOM_DOUBLE\n"
	    "retryInitialBackoffMillis = 200\nretryMaxBackoffMillis = 200\n");
	submit("z", 1);
	reply_put(0, "-");			/* partition 0 at 0 */
	wait_done(1);
	ck_assert_int_eq(floor0(), 0);
	submit("a", 4);
	reply(1, 503, "{\"errorCode\":\"DIS.5000\"}");
	wait_reqs(3);				/* a again, pinned at 0 */
	ck_assert_str_eq(records_of(2), "a0 a1 a2 a3");
	reply_put(2, "- DIS.4303 - DIS.5000");	/* acknowledged up to 2 */
	wait_answered();
	submit("b", 3);
	ck_assert_str_eq(records_of(3), "a1 a3 b0 b1 b2");
	sink_each(h.sink, count_batch, &n);
	ck_assert_uint_eq(n, 1);		/* the remnant left the list */
	ck_assert_int_eq(floor0(), 0);		/* not b's own pin, 2 */
	/* b, the one batch held, is uncertain: a's 503 is b's now (b's
	 * own request has not ended). */
	ck_assert(sink_uncertain(h.sink));
	sink_cancel(h.sink);
	reply_err(3, HTTP_ERR_CANCELLED, "cancelled");
	wait_done(2);
	ck_assert_str_eq(done_list(), "z0:delivered a1:undelivered");
	ck_assert_uint_eq(h.done[1].nacked, 2);	/* a0 and a2 */
	ck_assert_uint_eq(h.done[1].acked_start, 0);
	ck_assert_uint_eq(h.done[1].acked_end, REC_BYTES);
}
END_TEST

/*
 * A request that timed out is settled by reading the stream (settle.h):
 * partition 0 is read after the sequence number acknowledged before the
 * request went out, polled at its end until 1.5 s after the timeout; the
 * two records found there count as delivered, and only the third is sent
 * again.
 */
START_TEST(timed_out_request_settled_by_reading)
{
	const char *found = "{\"records\":["
	    "{\"sequence_number\":\"1\",\"partition_key\":\"a0\","
	    "\"data\":\"YTA=\"},"
	    "{\"sequence_number\":\"2\",\"partition_key\":\"other\","
	    "\"data\":\"YTE=\"},"
	    "{\"sequence_number\":\"3\",\"partition_key\":\"a2++\","
	    "\"data\":\"YTI=\"}],\"next_partition_cursor\":\"c2\"}";
	const char *none = "{\"records\":[],\"next_partition_cursor\":\"c3\"}";
	size_t	 i;

	start("streamId = sid1\nmaxInFlightRequests = 1\n");
	submit("z", 1);
	reply_put(0, "-");			/* partition 0 at 0 */
	wait_done(1);
	submit("a", 3);
	reply_err(1, HTTP_ERR_TIMEOUT, "timed out");
	wait_reqs(3);
	ck_assert_str_eq(h.reqs[2].method, "GET");
	ck_assert_ptr_nonnull(strstr(h.reqs[2].url, "cursors/"));
	ck_assert_ptr_nonnull(strstr(h.reqs[2].url,
	    "starting-sequence-number=0"));
	ck_assert_ptr_nonnull(strstr(h.reqs[2].url, "AFTER_SEQUENCE_NUMBER"));
	reply(2, 200, "{\"partition_cursor\":\"c1\"}");
	wait_reqs(4);
	ck_assert_ptr_nonnull(strstr(h.reqs[3].url, "partition-cursor=c1"));
	reply(3, 200, found);
	/* At the end: asked again (a timer) until the bound is past. */
	for (i = 4; i < MAX_REQS - 1; i++) {
		wait_reqs(i + 1);
		if (strcmp(h.reqs[i].method, "POST") == 0)
			break;
		reply(i, 200, none);
	}
	ck_assert_uint_lt(i, MAX_REQS - 1);
	ck_assert_uint_ge(i, 6);		/* polled, not done at once */
	ck_assert_str_eq(records_of(i), "a1");
	reply_put(i, "-");
	wait_done(2);
	ck_assert_str_eq(done_list(), "z0:delivered a0:delivered");
	ck_assert_uint_eq(h.m.records_sent, 4);
	ck_assert(!sink_uncertain(h.sink));
}
END_TEST

/* A remnant that does not fit the next request keeps its backoff and goes
 * on its own: maxBufferSizeRecords holds for every request. */
START_TEST(failed_records_that_do_not_fit_wait_for_their_backoff)
{
	start("streamId = sid1\nmaxBufferSizeRecords = 4\n"
	    "retryInitialBackoffMillis = 200\nretryMaxBackoffMillis = 200\n");
	submit("a", 4);
	reply_put(0, "- DIS.4303 - -");
	wait_answered();
	submit("b", 4);
	ck_assert_uint_eq(h.nreqs, 2);
	ck_assert_str_eq(records_of(1), "b0 b1 b2 b3");
	wait_reqs(3);
	ck_assert_str_eq(records_of(2), "a1");
	reply_put(1, "- - - -");
	reply_put(2, "-");
	wait_done(2);
	ck_assert_uint_eq(h.m.records_sent, 8);
}
END_TEST

static uint64_t
requests_with(int status)
{
	size_t	 i;

	for (i = 0; i < h.m.nrequests; i++)
		if (h.m.requests[i].status == status)
			return h.m.requests[i].count;
	return 0;
}

/* A 200 whose body is not a PutRecords reply: the whole request again. */
START_TEST(unparsable_reply_resends_the_request)
{
	start("streamId = sid1\n");
	submit("a", 3);
	reply(0, 200, "{");
	wait_reqs(2);
	ck_assert_str_eq(records_of(1), "a0 a1 a2");
	ck_assert_str_eq(h.m.last_error_code, "REPLY");
	ck_assert_str_eq(h.m.last_error_message, "unparsable reply (1 bytes)");
	ck_assert_uint_eq(h.m.requests_failed, 1);
	ck_assert_uint_eq(h.m.replies_unacknowledged, 1);
	ck_assert_uint_eq(h.m.records_retried, 3);
	ck_assert_uint_eq(h.ndone, 0);		/* nothing handed back */
	ck_assert_uint_eq(h.m.records_sent, 0);
	reply_put(1, "- - -");
	wait_done(1);
	ck_assert_str_eq(done_list(), "a0:delivered");
	ck_assert_uint_eq(h.m.records_sent, 3);
}
END_TEST

/*
 * 200s that acknowledge nothing: an HTML page, and a well-formed reply one
 * record short, which says how many it acknowledges.  Each is counted and
 * the request sent again whole.
 */
START_TEST(replies_acknowledging_nothing_are_counted_and_resent)
{
	start("streamId = sid1\n");
	submit("a", 3);
	reply(0, 200, "<html><body>502 Bad Gateway</body></html>");
	wait_reqs(2);
	ck_assert_str_eq(records_of(1), "a0 a1 a2");
	ck_assert_str_eq(h.m.last_error_message,
	    "unparsable reply (41 bytes)");
	reply_put(1, "- -");
	wait_reqs(3);
	ck_assert_str_eq(records_of(2), "a0 a1 a2");
	ck_assert_str_eq(h.m.last_error_code, "REPLY");
	ck_assert_str_eq(h.m.last_error_message,
	    "the reply acknowledges 2 of 3 records");
	ck_assert_uint_eq(h.m.replies_unacknowledged, 2);
	ck_assert_uint_eq(h.m.records_retried, 6);
	ck_assert_uint_eq(h.m.records_sent, 0);
	ck_assert_uint_eq(requests_with(200), 2);
	reply_put(2, "- - -");
	wait_done(1);
	ck_assert_str_eq(done_list(), "a0:delivered");
	ck_assert_uint_eq(h.m.records_sent, 3);
	ck_assert_uint_eq(h.m.replies_unacknowledged, 2);
}
END_TEST

/* --- paused ------------------------------------------------------------- */

#define BAD_SIGNATURE \
	"{\"errorCode\":\"DIS.4106\",\"message\":\"signature mismatch\"}"

START_TEST(paused_sink_probes_once_per_paused_retry_seconds)
{
	start("streamId = sid1\n");
	submit("a", 1);
	reply(0, 441, BAD_SIGNATURE);
	wait_answered();
	ck_assert_int_eq(sink_state(h.sink), SINK_PAUSED);
	ck_assert_uint_eq(h.halts, 1);
	ck_assert_ptr_nonnull(strstr(h.halt_reason, "HTTP 441 DIS.4106"));
	ck_assert_str_eq(h.m.last_error_code, "DIS.4106");
	/* Others wait behind the probe. */
	submit("b", 1);
	submit("c", 1);
	ck_assert_uint_eq(h.nreqs, 1);
	wait_reqs(2);
	ck_assert_str_eq(records_of(1), "a0");
	ck_assert_uint_ge(h.reqs[1].at_ms + 2 - h.reqs[0].answered_ms, 1000);
	reply(1, 441, BAD_SIGNATURE);
	wait_reqs(3);
	ck_assert_str_eq(records_of(2), "a0");
	ck_assert_uint_ge(h.reqs[2].at_ms + 2 - h.reqs[1].answered_ms, 1000);
	ck_assert_uint_eq(h.nreqs, 3);
	ck_assert_uint_eq(h.halts, 2);
	/* The probe succeeds: resumed, the waiting batches go at once. */
	reply_put(2, "-");
	wait_answered();
	ck_assert_int_eq(sink_state(h.sink), SINK_READY);
	ck_assert_uint_eq(h.nreqs, 5);
	ck_assert_str_eq(records_of(3), "b0");
	ck_assert_str_eq(records_of(4), "c0");
	reply_put(3, "-");
	reply_put(4, "-");
	wait_done(3);
	ck_assert_str_eq(done_list(), "a0:delivered b0:delivered c0:delivered");
}
END_TEST

/* --- DescribeStream ----------------------------------------------------- */

START_TEST(describe_retries_network_errors)
{
	start("");
	ck_assert_int_eq(sink_state(h.sink), SINK_DESCRIBING);
	ck_assert_uint_eq(h.nreqs, 1);
	ck_assert_str_eq(h.reqs[0].method, "GET");
	ck_assert_str_eq(h.reqs[0].url,
	    "https://dis.cn-north-4.myhuaweicloud.com/v2/p1/streams/s1/");
	ck_assert_ptr_nonnull(strstr(h.reqs[0].headers, "X-Project-Id: p1\n"));
	ck_assert_ptr_nonnull(strstr(h.reqs[0].headers,
	    "Authorization: SDK-HMAC-SHA256 "));
	ck_assert_uint_eq(h.reqs[0].bodylen, 0);
	submit("a", 1);
	ck_assert_uint_eq(h.nreqs, 1);	/* waits for the stream */
	reply_err(0, HTTP_ERR_CONNECT, "Could not connect to server");
	wait_answered();
	/* Retried later (backoff), not from inside the failure. */
	ck_assert_uint_eq(h.reqs[0].nreqs_after, 1);
	ck_assert_str_eq(h.m.last_error_code, "NETWORK");
	ck_assert_str_eq(h.m.last_error_message, "Could not connect to server");
	ck_assert_int_eq(sink_state(h.sink), SINK_DESCRIBING);
	wait_reqs(2);
	ck_assert_str_eq(h.reqs[1].method, "GET");
	reply_err(1, HTTP_ERR_TIMEOUT, "Connection timed out");
	wait_answered();
	ck_assert_uint_eq(h.reqs[1].nreqs_after, 2);
	ck_assert_str_eq(h.m.last_error_message, "Connection timed out");
	wait_reqs(3);
	ck_assert_str_eq(h.reqs[2].method, "GET");
	ck_assert_uint_eq(sink_request_cap(h.sink), 1024 * 1024);
	reply(2, 200, "{\"stream_id\":\"sid1\",\"status\":\"RUNNING\","
	    "\"stream_type\":\"ADVANCED\",\"writable_partition_count\":1}");
	wait_answered();
	ck_assert_int_eq(sink_state(h.sink), SINK_READY);
	/* ADVANCED: 5 MiB, within maxBufferSizeBytes (4 MiB). */
	ck_assert_uint_eq(sink_request_cap(h.sink), 4194304);
	ck_assert_uint_eq(h.nreqs, 4);
	ck_assert_str_eq(records_of(3), "a0");
	reply_put(3, "-");
	wait_done(1);
	ck_assert_str_eq(done_list(), "a0:delivered");
}
END_TEST

/* A DescribeStream refused (signature, permission) counts in requests. */
START_TEST(describe_refused_is_counted_by_status)
{
	start("");
	reply(0, 441, BAD_SIGNATURE);
	wait_answered();
	ck_assert_int_eq(sink_state(h.sink), SINK_PAUSED);
	ck_assert_uint_eq(requests_with(441), 1);
	ck_assert_uint_eq(h.m.nrequests, 1);
	wait_reqs(2);
	reply_err(1, HTTP_ERR_CONNECT, "Could not connect to server");
	wait_answered();
	ck_assert_uint_eq(requests_with(0), 1);
}
END_TEST

START_TEST(creating_stream_is_waited_for)
{
	start("");
	submit("a", 1);
	reply(0, 200, "{\"status\":\"CREATING\",\"stream_type\":\"COMMON\"}");
	wait_answered();
	ck_assert_int_eq(sink_state(h.sink), SINK_DESCRIBING);
	ck_assert_uint_eq(h.halts, 0);
	wait_reqs(2);
	ck_assert_str_eq(h.reqs[1].method, "GET");
	/* A uv timer from the loop's time, which is not older than the
	 * answer was queued (give or take the 1 ms of a coarse clock). */
	ck_assert_uint_ge(h.reqs[1].at_ms + 2 - h.reqs[0].queued_ms, 1000);
	ck_assert_uint_eq(h.nreqs, 2);
	reply(1, 200, "{\"status\":\"RUNNING\",\"stream_type\":\"COMMON\"}");
	wait_reqs(3);
	ck_assert_str_eq(records_of(2), "a0");
	reply_put(2, "-");
	wait_done(1);
}
END_TEST

/* --- cancel ------------------------------------------------------------- */

START_TEST(cancel_hands_back_queued_now_and_in_flight_when_they_end)
{
	start("streamId = sid1\n");
	submit("a", 1);
	submit("b", 1);
	submit("c", 1);
	ck_assert_uint_eq(h.nreqs, 3);
	/* b waits for a slow retry (throttled request: at least 1 s). */
	reply(1, 429, "{\"errorCode\":\"DIS.4303\",\"message\":\"throttled\"}");
	wait_answered();
	ck_assert_uint_eq(sink_pending(h.sink), 3);
	sink_cancel(h.sink);
	ck_assert_int_eq(sink_state(h.sink), SINK_CLOSING);
	ck_assert_str_eq(done_list(), "b0:undelivered");
	ck_assert_uint_eq(sink_pending(h.sink), 2);
	/* On the wire: back when the request ends, whatever it says. */
	reply_put(0, "-");
	reply_err(2, HTTP_ERR_CANCELLED, "cancelled");
	wait_done(3);
	ck_assert_str_eq(done_list(),
	    "b0:undelivered a0:undelivered c0:undelivered");
	ck_assert_uint_eq(sink_pending(h.sink), 0);
	ck_assert_uint_eq(h.m.records_sent, 0);
	ck_assert_uint_eq(h.nreqs, 3);
}
END_TEST

START_TEST(cancel_hands_back_waiting_batches)
{
	start("");
	submit("a", 1);
	submit("b", 1);
	ck_assert_uint_eq(h.nreqs, 1);	/* DescribeStream in flight */
	sink_cancel(h.sink);
	ck_assert_str_eq(done_list(), "a0:undelivered b0:undelivered");
	reply(0, 200, "{\"status\":\"RUNNING\",\"stream_type\":\"COMMON\"}");
	wait_answered();
	ck_assert_int_eq(sink_state(h.sink), SINK_CLOSING);
	ck_assert_uint_eq(h.nreqs, 1);
}
END_TEST

START_TEST(cancel_while_paused_hands_back_probe_and_waiting)
{
	start("streamId = sid1\n");
	submit("a", 1);
	reply(0, 441, BAD_SIGNATURE);
	wait_answered();
	submit("b", 1);
	ck_assert_uint_eq(h.nreqs, 1);
	sink_cancel(h.sink);
	ck_assert_str_eq(done_list(), "b0:undelivered a0:undelivered");
	ck_assert_uint_eq(sink_pending(h.sink), 0);
	ck_assert_uint_eq(h.nreqs, 1);
}
END_TEST

static Suite *
sink_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("sink");
	tc = tcase_create("dis");
	tcase_add_checked_fixture(tc, setup, teardown);
	/* Our watchdog, not Check's timer, should catch a hang. */
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc,
	    window_halves_when_most_records_are_throttled_then_grows_back);
	tcase_add_test(tc, throttled_sends_are_paced);
	tcase_add_test(tc, entity_too_large_halves_the_requests);
	tcase_add_test(tc, lone_record_still_too_large_is_dead_lettered);
	tcase_add_test(tc, failed_records_are_resent_alone);
	tcase_add_test(tc, timed_out_request_settled_by_reading);
	tcase_add_test(tc, key_lengths_hold_after_an_absorb);
	tcase_add_test(tc, failed_records_ride_in_the_next_request);
	tcase_add_test(tc, a_rider_keeps_its_pin_acks_and_uncertainty);
	tcase_add_test(tc,
	    failed_records_that_do_not_fit_wait_for_their_backoff);
	tcase_add_test(tc, unparsable_reply_resends_the_request);
	tcase_add_test(tc,
	    replies_acknowledging_nothing_are_counted_and_resent);
	tcase_add_test(tc, paused_sink_probes_once_per_paused_retry_seconds);
	tcase_add_test(tc, describe_retries_network_errors);
	tcase_add_test(tc, describe_refused_is_counted_by_status);
	tcase_add_test(tc, creating_stream_is_waited_for);
	tcase_add_test(tc,
	    cancel_hands_back_queued_now_and_in_flight_when_they_end);
	tcase_add_test(tc, cancel_hands_back_waiting_batches);
	tcase_add_test(tc, cancel_while_paused_hands_back_probe_and_waiting);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	log_setup(LOG_LVL_INFO, false);
	return tu_run(sink_suite());
}
