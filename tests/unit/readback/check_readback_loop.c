/*
 * Loop-level tests of the read-back client (readback.c) and of
 * DescribeStream's paging (describe.c): a real libuv loop behind a fake
 * transport (disapi_set_transport), every request captured and answered
 * by the case from a timer, as http does, never inside the submit.
 * Covered: the pages of a description and where each starts; an
 * authentication error ending a description or a read at once, with
 * DIS's code and what to check; server errors retried, then given up
 * on; GetCursor and GetRecords in order, each reply's next cursor used;
 * expired cursors (DIS.4225, 4226) renewed after the last record handed
 * out, with DIS's repeats not handed out twice; a trimmed partition
 * (DIS.4224) going on from the oldest record kept, or ending the read
 * when the position asked for is gone; LATEST and an app's checkpoint as
 * the first position and what a renewal after them asks for; a freed
 * reader or describer ignoring the replies still owed.
 *
 * Every case counts its callbacks exactly, and the teardown answers the
 * requests still owed as http_close() does (cancelled), then checks that
 * the loop closes with nothing left open.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <uv.h>

#include "base/log.h"
#include "base/util.h"
#include "conf/conf.h"
#include "dis/disapi.h"
#include "dis/http.h"
#include "readback/describe.h"
#include "readback/readback.h"
#include "testutil.h"

#define WATCHDOG_MS	15000
#define MAX_REQS	48
#define MAX_RECS	32
#define P0		"shardId-0000000000"
#define P1		"shardId-0000000001"

struct req {
	char		*method;
	char		*url;
	http_done_cb	 cb;
	void		*arg;
	bool		 answered;
};

/* One answer on its way to request i. */
struct answer {
	uv_timer_t	 t;
	size_t		 i;
	enum http_result result;
	long		 status;
	char		*body;
};

enum wait_for { W_REQS, W_RECORDS, W_DONE, W_DESCRIBED };

static struct {
	uv_loop_t	 loop;
	char		 dir[256];
	struct conf	*conf;
	struct disapi	*api;
	struct readback	*rb;
	struct describe	*desc;
	struct req	 reqs[MAX_REQS];
	size_t		 nreqs;
	enum wait_for	 wait;
	size_t		 want;
	bool		 reached;
	/* What the callbacks got. */
	char		 recs[MAX_RECS][48];	/* "partition seq data" */
	size_t		 nrecs;
	unsigned	 described;
	unsigned	 done;
	int		 rc;
	struct rb_error	 err;
	const struct codec_stream *st;
	size_t		 nparts;
} h;

/* --- waiting ------------------------------------------------------------ */

static bool
reached(void)
{
	switch (h.wait) {
	case W_REQS:
		return h.nreqs >= h.want;
	case W_RECORDS:
		return h.nrecs >= h.want;
	case W_DONE:
		return h.done >= h.want;
	case W_DESCRIBED:
		return h.described >= h.want;
	}
	return false;
}

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
	    "waited for %s (%zu requests, %zu records, %u done)", what,
	    h.nreqs, h.nrecs, h.done);
}

/* Until n requests were sent in all. */
static void
wait_reqs(size_t n)
{
	wait_until(W_REQS, n, "requests");
}

/* Run the loop until nothing is due now: no request, no callback is on
 * its way unless a timer sends it. */
static void
settle(void)
{
	int	 i;

	for (i = 0; i < 4; i++)
		(void)uv_run(&h.loop, UV_RUN_NOWAIT);
}

/* --- the fake transport ------------------------------------------------- */

static int
fake_submit(void *ctx, const struct http_request *r, http_done_cb cb,
    void *arg)
{
	struct req	*q;

	(void)ctx;
	ck_assert_uint_lt(h.nreqs, MAX_REQS);
	q = &h.reqs[h.nreqs++];
	q->method = xstrdup(r->method);
	q->url = xstrdup(r->url);
	q->cb = cb;
	q->arg = arg;
	update();
	return 0;
}

static void
answer_closed(uv_handle_t *t)
{
	struct answer	*a = container_of((uv_timer_t *)(void *)t,
	    struct answer, t);

	free(a->body);
	free(a);
}

static void
on_answer(uv_timer_t *t)
{
	struct answer	*a = container_of(t, struct answer, t);
	struct http_response r;
	struct req	*q = &h.reqs[a->i];

	memset(&r, 0, sizeof(r));
	r.result = a->result;
	r.status = a->status;
	r.body = a->body;
	r.bodylen = a->body != NULL ? strlen(a->body) : 0;
	r.error = a->result == HTTP_OK ? NULL : "cancelled";
	q->answered = true;
	q->cb(&r, q->arg);
	uv_close((uv_handle_t *)t, answer_closed);
	update();
}

static void
answer(size_t i, enum http_result result, long status, const char *body)
{
	struct answer	*a;

	ck_assert_uint_lt(i, h.nreqs);
	ck_assert_msg(!h.reqs[i].answered, "request %zu answered twice", i);
	a = xcalloc(1, sizeof(*a));
	a->i = i;
	a->result = result;
	a->status = status;
	a->body = body != NULL ? xstrdup(body) : NULL;
	uv_timer_init(&h.loop, &a->t);
	uv_timer_start(&a->t, on_answer, 0, 0);
}

/* Answer request i (from a timer, never inside the submit). */
static void
reply(size_t i, long status, const char *body)
{
	answer(i, HTTP_OK, status, body);
}

static void
dis_error(size_t i, long status, const char *code)
{
	char	*b = xasprintf("{\"error_code\":\"%s\",\"error_msg\":"
	    "\"says DIS\"}", code);

	reply(i, status, b);
	free(b);
}

/* Request i is a GET whose URL holds part (the query as disapi sorts it). */
static void
assert_get(size_t i, const char *part)
{
	ck_assert_uint_lt(i, h.nreqs);
	ck_assert_str_eq(h.reqs[i].method, "GET");
	ck_assert_msg(strstr(h.reqs[i].url, part) != NULL,
	    "request %zu: %s, want %s", i, h.reqs[i].url, part);
}

/* Request i asks for a cursor of partition p of type (and its query). */
static void
assert_cursor(size_t i, const char *p, const char *type_and_more)
{
	char	*want = xasprintf("/cursors/?cursor-type=%s", type_and_more);

	assert_get(i, want);
	free(want);
	want = xasprintf("partition-id=%s&", p);
	assert_get(i, want);
	free(want);
}

/* --- bodies ------------------------------------------------------------- */

/* A DescribeStream page: partitions "id:first:next" separated by blanks. */
static char *
stream_page(const char *parts, bool more)
{
	struct buf	 b;
	char		 id[40];
	long		 first, next;
	int		 n, k = 0;

	buf_init(&b);
	buf_addstr(&b, "{\"status\":\"RUNNING\",\"stream_type\":\"COMMON\","
	    "\"partitions\":[");
	while (sscanf(parts, "%39[^:]:%ld:%ld%n", id, &first, &next,
	    &n) == 3) {
		buf_printf(&b, "%s{\"status\":\"ACTIVE\",\"partition_id\":"
		    "\"%s\",\"sequence_number_range\":\"[%ld : %ld]\"}",
		    k++ ? "," : "", id, first, next);
		parts += n;
		while (*parts == ' ')
			parts++;
	}
	buf_printf(&b, "],\"has_more_partitions\":%s}", more ? "true" :
	    "false");
	return b.data;
}

static void
reply_page(size_t i, const char *parts, bool more)
{
	char	*b = stream_page(parts, more);

	reply(i, 200, b);
	free(b);
}

/*
 * A GetRecords reply: records "seq" each, data "r<seq>", and next as the
 * next cursor (NULL: the partition is closed).
 */
static void
reply_records(size_t i, const char *seqs, const char *next)
{
	struct buf	 b, data;
	char		 raw[24];
	long		 seq;
	int		 n, k = 0;

	buf_init(&b);
	buf_init(&data);
	buf_addstr(&b, "{\"records\":[");
	while (sscanf(seqs, "%ld%n", &seq, &n) == 1) {
		snprintf(raw, sizeof(raw), "r%ld", seq);
		buf_reset(&data);
		codec_base64(raw, strlen(raw), &data);
		buf_printf(&b, "%s{\"sequence_number\":\"%ld\",\"data\":"
		    "\"%s\"}", k++ ? "," : "", seq, data.data);
		seqs += n;
	}
	buf_addstr(&b, "]");
	if (next != NULL)
		buf_printf(&b, ",\"next_partition_cursor\":\"%s\"", next);
	buf_addstr(&b, "}");
	reply(i, 200, b.data);
	buf_cleanup(&b);
	buf_cleanup(&data);
}

static void
reply_cursor(size_t i, const char *cursor)
{
	char	*b = xasprintf("{\"partition_cursor\":\"%s\"}", cursor);

	reply(i, 200, b);
	free(b);
}

/* --- the reader's callbacks --------------------------------------------- */

static int
on_described(void *arg, const struct codec_stream *st)
{
	(void)arg;
	h.described++;
	h.nparts = st->nparts;
	update();
	return 0;
}

static int
on_record(void *arg, const char *partition, const struct codec_record *r)
{
	struct buf	 data;

	(void)arg;
	ck_assert_uint_lt(h.nrecs, MAX_RECS);
	buf_init(&data);
	ck_assert_int_eq(codec_base64_decode(r->data64, r->data64_len,
	    &data), 0);
	snprintf(h.recs[h.nrecs++], sizeof(h.recs[0]), "%s %lld %s",
	    partition + strlen("shardId-000000000"), (long long)r->seq,
	    data.data != NULL ? data.data : "");
	buf_cleanup(&data);
	update();
	return 0;
}

static void
on_done(void *arg, int rc, const struct rb_error *e)
{
	(void)arg;
	h.done++;
	h.rc = rc;
	h.err = *e;
	update();
}

static const struct rb_callbacks callbacks = {
	on_described, on_record, on_done,
};

/* The records handed out, "0 5 r5,1 2 r2" (partition's last digit). */
static const char *
records(void)
{
	static char	 out[MAX_RECS * 48];
	size_t		 i, used = 0;

	out[0] = '\0';
	for (i = 0; i < h.nrecs; i++)
		used += (size_t)snprintf(out + used, sizeof(out) - used,
		    "%s%s", i ? "," : "", h.recs[i]);
	return out;
}

/* A reader of stream s1 with opts o (stream and callbacks filled in). */
static void
start_reader(struct rb_opts *o)
{
	o->stream = "s1";
	h.rb = readback_new(&h.loop, h.api, o, &callbacks, NULL);
	readback_start(h.rb);
}

/* A reader from TRIM_HORIZON of one partition p0 "first:next". */
static void
start_one(const char *range)
{
	struct rb_opts	 o;
	char		 parts[64];
	size_t		 first = h.nreqs;

	memset(&o, 0, sizeof(o));
	start_reader(&o);
	wait_reqs(first + 1);
	snprintf(parts, sizeof(parts), P0 ":%s", range);
	reply_page(first, parts, false);
}

/* --- fixture ------------------------------------------------------------ */

static void
setup(void)
{
	char	 ini[PATH_MAX], err[512], *text;

	memset(&h, 0, sizeof(h));
	ck_assert_int_eq(uv_loop_init(&h.loop), 0);
	tu_tmpdir(h.dir, sizeof(h.dir), "check_readback_loop");
	tu_path(ini, sizeof(ini), h.dir, "agent.ini");
	text = xasprintf("[agent]\nregion = cn-north-4\nprojectId = p1\n"
	    "ak = AK\nsk = SK\ncheckpointFile = %s/state\n"
	    "[flow:app]\nDISStream = s1\nfilePattern = %s/*.log\n", h.dir,
	    h.dir);
	tu_write_str(ini, text);
	ck_assert_int_eq(chmod(ini, 0600), 0);	/* it holds sk */
	free(text);
	ck_assert_msg(conf_load(ini, &h.conf, err, sizeof(err)) == 0, "%s",
	    err);
	h.api = disapi_new(NULL, h.conf);
	disapi_set_transport(h.api, fake_submit, NULL);
}

static void
teardown(void)
{
	size_t	 i;

	readback_free(h.rb);
	describe_free(h.desc);
	/* The replies still owed come back cancelled, as http_close does. */
	for (i = 0; i < h.nreqs; i++)
		if (!h.reqs[i].answered)
			answer(i, HTTP_ERR_CANCELLED, 0, NULL);
	tu_loop_close(&h.loop);
	disapi_free(h.api);
	conf_free(h.conf);
	for (i = 0; i < h.nreqs; i++) {
		free(h.reqs[i].method);
		free(h.reqs[i].url);
	}
	tu_rmtree(h.dir);
}

/* --- DescribeStream ------------------------------------------------------ */

static void
on_describe(void *arg, int rc, const struct codec_stream *st,
    const struct rb_error *e)
{
	(void)arg;
	h.described++;
	h.rc = rc;
	h.st = st;
	h.nparts = st != NULL ? st->nparts : 0;
	if (e != NULL)
		h.err = *e;
	update();
}

static void
start_describe(void)
{
	h.desc = describe_new(&h.loop, h.api, "s1", on_describe, NULL);
	describe_run(h.desc);
}

START_TEST(describe_pages_each_after_the_last_partition)
{
	start_describe();
	wait_reqs(1);
	assert_get(0, "/v2/p1/streams/s1/?limit_partitions=100");
	ck_assert_ptr_null(strstr(h.reqs[0].url, "start_partitionId"));
	/* A run under way goes on instead of starting another. */
	describe_run(h.desc);
	settle();
	ck_assert_uint_eq(h.nreqs, 1);
	reply_page(0, P0 ":0:5 " P1 ":0:0", true);
	wait_reqs(2);
	assert_get(1, "limit_partitions=100&start_partitionId=" P1);
	reply_page(1, "shardId-0000000002:3:9", true);
	wait_reqs(3);
	assert_get(2, "start_partitionId=shardId-0000000002");
	ck_assert_uint_eq(h.described, 0);
	reply_page(2, "shardId-0000000003:0:1", false);
	wait_until(W_DESCRIBED, 1, "the description");
	settle();
	ck_assert_uint_eq(h.described, 1);
	ck_assert_int_eq(h.rc, 0);
	ck_assert_uint_eq(h.nparts, 4);
	ck_assert_str_eq(h.st->parts[3].id, "shardId-0000000003");
	ck_assert_int_eq(h.st->parts[2].seq_next, 9);
	ck_assert_uint_eq(h.nreqs, 3);
	/* A second run starts from the first page again and replaces it. */
	describe_run(h.desc);
	wait_reqs(4);
	ck_assert_ptr_null(strstr(h.reqs[3].url, "start_partitionId"));
	reply_page(3, P0 ":0:7", false);
	wait_until(W_DESCRIBED, 2, "the second description");
	ck_assert_uint_eq(h.nparts, 1);
	ck_assert_int_eq(h.st->parts[0].seq_next, 7);
}
END_TEST

/* has_more_partitions with nothing new: the paging ends there. */
START_TEST(describe_page_adding_nothing_ends_the_paging)
{
	start_describe();
	wait_reqs(1);
	reply_page(0, P0 ":0:5", true);
	wait_reqs(2);
	reply_page(1, "", true);
	wait_until(W_DESCRIBED, 1, "the description");
	settle();
	ck_assert_uint_eq(h.nreqs, 2);
	ck_assert_int_eq(h.rc, 0);
	ck_assert_uint_eq(h.nparts, 1);
}
END_TEST

/* Bad keys are not retried: one request, the code and what to check. */
START_TEST(describe_auth_error_ends_the_run_at_once)
{
	static const struct {
		long		 status;
		const char	*code;
	} t[] = {
		{ 401, "APIGW.0301" }, { 403, "DIS.4116" }, { 441, "DIS.4113" },
	};
	size_t	 i;

	start_describe();
	for (i = 0; i < ARRAY_SIZE(t); i++) {
		if (i > 0)
			describe_run(h.desc);
		wait_reqs(i + 1);
		dis_error(i, t[i].status, t[i].code);
		wait_until(W_DESCRIBED, i + 1, "the failed description");
		settle();
		ck_assert_uint_eq(h.nreqs, i + 1);
		ck_assert_uint_eq(h.described, i + 1);
		ck_assert_int_eq(h.rc, -EIO);
		ck_assert_ptr_null(h.st);
		ck_assert_int_eq(h.err.status, t[i].status);
		ck_assert_str_eq(h.err.code, t[i].code);
		ck_assert_msg(strstr(h.err.message, "DescribeStream s1") !=
		    NULL && strstr(h.err.message, t[i].code) != NULL &&
		    strstr(h.err.message, "says DIS; ") != NULL, "%s",
		    h.err.message);
	}
}
END_TEST

/* A 500 and a network error are retried; a page after them goes on. */
START_TEST(describe_retries_server_and_network_errors)
{
	start_describe();
	wait_reqs(1);
	reply_page(0, P0 ":0:5", true);
	wait_reqs(2);
	dis_error(1, 500, "DIS.5000");
	wait_reqs(3);
	answer(2, HTTP_ERR_NETWORK, 0, NULL);
	wait_reqs(4);
	/* The retry asks for the same page. */
	assert_get(3, "start_partitionId=" P0);
	reply_page(3, P1 ":0:0", false);
	wait_until(W_DESCRIBED, 1, "the description");
	ck_assert_int_eq(h.rc, 0);
	ck_assert_uint_eq(h.nparts, 2);
	ck_assert_uint_eq(h.nreqs, 4);
}
END_TEST

START_TEST(describe_gives_up_after_five_failures_in_a_row)
{
	size_t	 i;

	start_describe();
	for (i = 0; i < 5; i++) {
		wait_reqs(i + 1);
		dis_error(i, 503, "DIS.5030");
	}
	wait_until(W_DESCRIBED, 1, "the failed description");
	settle();
	ck_assert_uint_eq(h.nreqs, 5);
	ck_assert_int_eq(h.rc, -EIO);
	ck_assert_str_eq(h.err.code, "DIS.5030");
}
END_TEST

/* Freed with a page on the wire: its reply, when it comes, is ignored,
 * and the memory goes then (valgrind, ASan). */
START_TEST(describe_freed_with_a_page_on_the_wire)
{
	start_describe();
	wait_reqs(1);
	describe_free(h.desc);
	h.desc = NULL;
	settle();
	reply_page(0, P0 ":0:5", false);
	settle();
	ck_assert(h.reqs[0].answered);
	ck_assert_uint_eq(h.described, 0);
	ck_assert_uint_eq(h.nreqs, 1);
}
END_TEST

/* --- reading ------------------------------------------------------------- */

START_TEST(read_cursor_then_records_by_next_cursor_to_the_end)
{
	start_one("0:4");
	wait_reqs(2);
	ck_assert_uint_eq(h.described, 1);
	assert_cursor(1, P0, "TRIM_HORIZON&");
	assert_get(1, "&stream-name=s1");
	reply_cursor(1, "c1");
	wait_reqs(3);
	assert_get(2, "/records/?max_fetch_bytes=1048576&partition-cursor=c1");
	reply_records(2, "0 1", "c2");
	wait_reqs(4);
	assert_get(3, "partition-cursor=c2");
	reply_records(3, "2 3", "c3");
	/* 3 is next - 1 of [0 : 4]: an empty reply then ends it. */
	wait_reqs(5);
	assert_get(4, "partition-cursor=c3");
	ck_assert_uint_eq(h.done, 0);
	reply_records(4, "", "c4");
	wait_until(W_DONE, 1, "the end");
	settle();
	ck_assert_int_eq(h.rc, 0);
	ck_assert_str_eq(records(), "0 0 r0,0 1 r1,0 2 r2,0 3 r3");
	ck_assert_uint_eq(h.nreqs, 5);
	ck_assert_uint_eq(h.done, 1);
	ck_assert_uint_eq(h.described, 1);
}
END_TEST

/* DIS.4225, 4226 (and 4217): a new cursor after the last record handed
 * out; what DIS gives again is not handed out twice. */
START_TEST(read_expired_cursor_renewed_after_the_last)
{
	static const char *const codes[] = { "DIS.4225", "DIS.4226",
	    "DIS.4217" };
	const char	*code = codes[_i];

	start_one("0:4");
	wait_reqs(2);
	reply_cursor(1, "c1");
	wait_reqs(3);
	reply_records(2, "0 1", "c2");
	wait_reqs(4);
	dis_error(3, 400, code);
	wait_reqs(5);
	assert_cursor(4, P0, "AFTER_SEQUENCE_NUMBER&");
	assert_get(4, "&starting-sequence-number=1&");
	reply_cursor(4, "c9");
	wait_reqs(6);
	assert_get(5, "partition-cursor=c9");
	reply_records(5, "1 2 3", "c10");
	wait_reqs(7);
	reply_records(6, "", "c11");
	wait_until(W_DONE, 1, "the end");
	ck_assert_int_eq(h.rc, 0);
	ck_assert_str_eq(records(), "0 0 r0,0 1 r1,0 2 r2,0 3 r3");
	ck_assert_uint_eq(h.nreqs, 7);
}
END_TEST

/* An expired first cursor, before any record: renewed from the start
 * position again (TRIM_HORIZON here). */
START_TEST(read_expired_first_cursor_asks_the_start_again)
{
	start_one("0:2");
	wait_reqs(2);
	reply_cursor(1, "c1");
	wait_reqs(3);
	dis_error(2, 400, "DIS.4226");
	wait_reqs(4);
	assert_cursor(3, P0, "TRIM_HORIZON&");
	ck_assert_ptr_null(strstr(h.reqs[3].url, "starting-sequence-number"));
}
END_TEST

/*
 * The records after the last one handed out expired (DIS.4224 for the
 * renewed cursor): one WARN, and the partition goes on from the oldest
 * record kept.
 */
START_TEST(read_trimmed_partition_goes_on_from_the_oldest)
{
	start_one("0:9");
	wait_reqs(2);
	reply_cursor(1, "c1");
	wait_reqs(3);
	reply_records(2, "0 1", "c2");
	wait_reqs(4);
	dis_error(3, 400, "DIS.4225");
	wait_reqs(5);
	assert_cursor(4, P0, "AFTER_SEQUENCE_NUMBER&");
	dis_error(4, 400, "DIS.4224");
	wait_reqs(6);
	assert_cursor(5, P0, "TRIM_HORIZON&");
	reply_cursor(5, "c5");
	wait_reqs(7);
	assert_get(6, "partition-cursor=c5");
	reply_records(6, "6 7 8", "c6");
	wait_until(W_RECORDS, 5, "the records after the trim");
	ck_assert_str_eq(records(), "0 0 r0,0 1 r1,0 6 r6,0 7 r7,0 8 r8");
	ck_assert_uint_eq(h.done, 0);
	/* And a renewal after that is after the last one again. */
	wait_reqs(8);
	dis_error(7, 400, "DIS.4225");
	wait_reqs(9);
	assert_get(8, "cursor-type=AFTER_SEQUENCE_NUMBER&");
	assert_get(8, "&starting-sequence-number=8&");
}
END_TEST

/* DIS.4224 to GetRecords: the cursor is renewed, as for an expired one. */
START_TEST(read_out_of_range_records_renew_the_cursor)
{
	start_one("0:9");
	wait_reqs(2);
	reply_cursor(1, "c1");
	wait_reqs(3);
	reply_records(2, "4", "c2");
	wait_reqs(4);
	dis_error(3, 400, "DIS.4224");
	wait_reqs(5);
	assert_cursor(4, P0, "AFTER_SEQUENCE_NUMBER&");
	assert_get(4, "&starting-sequence-number=4&");
	ck_assert_uint_eq(h.done, 0);
}
END_TEST

/* The position asked for is gone: the read ends with -ERANGE. */
START_TEST(read_trimmed_start_position_ends_the_read)
{
	struct rb_opts	 o;

	memset(&o, 0, sizeof(o));
	o.start = RB_AT_SEQUENCE;
	o.start_seq = 3;
	start_reader(&o);
	wait_reqs(1);
	reply_page(0, P0 ":5:9", false);
	wait_reqs(2);
	assert_cursor(1, P0, "AT_SEQUENCE_NUMBER&");
	assert_get(1, "&starting-sequence-number=3&");
	dis_error(1, 400, "DIS.4224");
	wait_until(W_DONE, 1, "the end");
	settle();
	ck_assert_int_eq(h.rc, -ERANGE);
	ck_assert_str_eq(h.err.code, "DIS.4224");
	ck_assert_uint_eq(h.nreqs, 2);
	ck_assert_uint_eq(h.nrecs, 0);
}
END_TEST

/* TRIM_HORIZON itself out of range: nothing older to fall back on. */
START_TEST(read_trimmed_oldest_ends_the_read)
{
	start_one("0:9");
	wait_reqs(2);
	reply_cursor(1, "c1");
	wait_reqs(3);
	reply_records(2, "0", "c2");
	wait_reqs(4);
	dis_error(3, 400, "DIS.4225");
	wait_reqs(5);
	dis_error(4, 400, "DIS.4224");
	wait_reqs(6);
	assert_cursor(5, P0, "TRIM_HORIZON&");
	dis_error(5, 400, "DIS.4224");
	wait_until(W_DONE, 1, "the end");
	settle();
	ck_assert_int_eq(h.rc, -ERANGE);
	ck_assert_uint_eq(h.nreqs, 6);
	ck_assert_str_eq(records(), "0 0 r0");
}
END_TEST

/*
 * LATEST from a description of [10 : 20]: DIS's LATEST first; should that
 * cursor expire before a record comes, the renewal goes on after 19, the
 * newest record described, so nothing written meanwhile is skipped.
 */
START_TEST(read_latest_renewed_after_the_newest_described)
{
	struct rb_opts	 o;

	memset(&o, 0, sizeof(o));
	o.start = RB_LATEST;
	o.follow = true;
	o.poll_ms = 10;
	o.rescan_ms = 600000;
	start_reader(&o);
	wait_reqs(1);
	reply_page(0, P0 ":10:20", false);
	wait_reqs(2);
	assert_cursor(1, P0, "LATEST&");
	reply_cursor(1, "c1");
	wait_reqs(3);
	dis_error(2, 400, "DIS.4225");
	wait_reqs(4);
	assert_cursor(3, P0, "AFTER_SEQUENCE_NUMBER&");
	assert_get(3, "&starting-sequence-number=19&");
	reply_cursor(3, "c2");
	wait_reqs(5);
	reply_records(4, "20", "c3");
	wait_until(W_RECORDS, 1, "the record");
	ck_assert_str_eq(records(), "0 20 r20");
	ck_assert_uint_eq(h.done, 0);
}
END_TEST

/*
 * With an app, its checkpoint first; the cursor is after it.  A trim
 * that passed the checkpoint: from the oldest record kept.
 */
START_TEST(read_app_checkpoint_then_after_it)
{
	struct rb_opts	 o;

	memset(&o, 0, sizeof(o));
	o.app = "a1";
	start_reader(&o);
	wait_reqs(1);
	reply_page(0, P0 ":0:9", false);
	wait_reqs(2);
	assert_get(1, "/checkpoints/?app_name=a1&checkpoint_type=LAST_READ&"
	    "partition_id=" P0 "&stream_name=s1");
	reply(1, 200, "{\"sequence_number\":\"5\",\"metadata\":\"\"}");
	wait_reqs(3);
	assert_cursor(2, P0, "AFTER_SEQUENCE_NUMBER&");
	assert_get(2, "&starting-sequence-number=5&");
	dis_error(2, 400, "DIS.4224");
	wait_reqs(4);
	assert_cursor(3, P0, "TRIM_HORIZON&");
	reply_cursor(3, "c1");
	wait_reqs(5);
	reply_records(4, "7 8", "c2");
	wait_reqs(6);
	reply_records(5, "", "c3");
	wait_until(W_DONE, 1, "the end");
	ck_assert_int_eq(h.rc, 0);
	ck_assert_str_eq(records(), "0 7 r7,0 8 r8");
}
END_TEST

/* Two partitions, one after the other (parallel 1), each to its end. */
START_TEST(read_partitions_one_after_the_other)
{
	struct rb_opts	 o;

	memset(&o, 0, sizeof(o));
	o.parallel = 1;
	start_reader(&o);
	wait_reqs(1);
	reply_page(0, P0 ":0:1 " P1 ":0:1", false);
	wait_reqs(2);
	assert_cursor(1, P0, "TRIM_HORIZON&");
	settle();
	ck_assert_uint_eq(h.nreqs, 2);
	reply_cursor(1, "a1");
	wait_reqs(3);
	reply_records(2, "0", "a2");
	wait_reqs(4);
	reply_records(3, "", "a3");
	wait_reqs(5);
	assert_cursor(4, P1, "TRIM_HORIZON&");
	reply_cursor(4, "b1");
	wait_reqs(6);
	reply_records(5, "0", NULL);
	wait_until(W_DONE, 1, "the end");
	settle();
	ck_assert_int_eq(h.rc, 0);
	ck_assert_str_eq(records(), "0 0 r0,1 0 r0");
	ck_assert_uint_eq(h.nreqs, 6);
}
END_TEST

/* A partition that expired (DIS.4319) is dropped; the others go on. */
START_TEST(read_expired_partition_dropped_named_one_fatal)
{
	struct rb_opts	 o;
	const char	*only[] = { "1" };

	start_one("0:3");
	wait_reqs(2);
	dis_error(1, 400, "DIS.4319");
	wait_until(W_DONE, 1, "the end");
	ck_assert_int_eq(h.rc, 0);
	ck_assert_uint_eq(h.nreqs, 2);
	readback_free(h.rb);
	/* A partition named on the command line that DIS does not know. */
	memset(&o, 0, sizeof(o));
	o.partitions = only;
	o.npartitions = 1;
	start_reader(&o);
	wait_reqs(3);
	reply_page(2, P0 ":0:3 " P1 ":0:3", false);
	wait_reqs(4);
	assert_cursor(3, P1, "TRIM_HORIZON&");
	dis_error(3, 400, "DIS.4302");
	wait_until(W_DONE, 2, "the second end");
	settle();
	ck_assert_int_eq(h.rc, -ENOENT);
	ck_assert_str_eq(h.err.code, "DIS.4302");
	ck_assert_uint_eq(h.nreqs, 4);
}
END_TEST

/* An auth error on the description or a read ends it, not retried. */
START_TEST(read_auth_errors_end_the_read)
{
	struct rb_opts	 o;

	memset(&o, 0, sizeof(o));
	start_reader(&o);
	wait_reqs(1);
	dis_error(0, 401, "APIGW.0301");
	wait_until(W_DONE, 1, "the end");
	settle();
	ck_assert_int_eq(h.rc, -EIO);
	ck_assert_str_eq(h.err.code, "APIGW.0301");
	ck_assert_uint_eq(h.described, 0);
	ck_assert_uint_eq(h.nreqs, 1);
	readback_free(h.rb);
	start_one("0:3");
	wait_reqs(3);
	dis_error(2, 403, "DIS.4116");
	wait_until(W_DONE, 2, "the second end");
	settle();
	ck_assert_int_eq(h.rc, -EIO);
	ck_assert_str_eq(h.err.code, "DIS.4116");
	ck_assert_uint_eq(h.nreqs, 3);
	ck_assert_uint_eq(h.nrecs, 0);
}
END_TEST

/*
 * Freed with two requests on the wire and the timers armed: no callback
 * after the free, the replies still owed are swallowed, and the memory
 * goes with the last of them (valgrind, ASan).
 */
START_TEST(read_freed_with_requests_on_the_wire)
{
	struct rb_opts	 o;

	memset(&o, 0, sizeof(o));
	start_reader(&o);
	wait_reqs(1);
	reply_page(0, P0 ":0:3 " P1 ":0:3", false);
	wait_reqs(3);
	readback_free(h.rb);
	h.rb = NULL;
	settle();
	reply_cursor(1, "c1");
	settle();
	ck_assert(h.reqs[1].answered);
	ck_assert(!h.reqs[2].answered);
	reply_cursor(2, "c2");
	settle();
	ck_assert_uint_eq(h.nreqs, 3);
	ck_assert_uint_eq(h.done, 0);
	ck_assert_uint_eq(h.nrecs, 0);
}
END_TEST

static Suite *
readback_loop_suite(void)
{
	Suite	*s = suite_create("readback_loop");
	TCase	*tc;

	tc = tcase_create("describe");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, describe_pages_each_after_the_last_partition);
	tcase_add_test(tc, describe_page_adding_nothing_ends_the_paging);
	tcase_add_test(tc, describe_auth_error_ends_the_run_at_once);
	tcase_add_test(tc, describe_retries_server_and_network_errors);
	tcase_add_test(tc, describe_gives_up_after_five_failures_in_a_row);
	tcase_add_test(tc, describe_freed_with_a_page_on_the_wire);
	suite_add_tcase(s, tc);

	tc = tcase_create("read");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, read_cursor_then_records_by_next_cursor_to_the_end);
	tcase_add_loop_test(tc, read_expired_cursor_renewed_after_the_last, 0,
	    3);
	tcase_add_test(tc, read_expired_first_cursor_asks_the_start_again);
	tcase_add_test(tc, read_trimmed_partition_goes_on_from_the_oldest);
	tcase_add_test(tc, read_out_of_range_records_renew_the_cursor);
	tcase_add_test(tc, read_trimmed_start_position_ends_the_read);
	tcase_add_test(tc, read_trimmed_oldest_ends_the_read);
	tcase_add_test(tc, read_latest_renewed_after_the_newest_described);
	tcase_add_test(tc, read_app_checkpoint_then_after_it);
	tcase_add_test(tc, read_partitions_one_after_the_other);
	tcase_add_test(tc, read_expired_partition_dropped_named_one_fatal);
	tcase_add_test(tc, read_auth_errors_end_the_read);
	tcase_add_test(tc, read_freed_with_requests_on_the_wire);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	log_setup(LOG_LVL_INFO, false);
	return tu_run(readback_loop_suite());
}
