/*
 * Unit tests for the partition reader both the restart's read
 * (agent/dedupe.c) and a settle (sink/settle.c) use (dis/partread.c), on a
 * real loop behind a fake transport (disapi_set_transport): each request
 * is captured and answered by the case from a timer, as http does.
 * Covered: where the cursor starts (after a sequence number, at a time, at
 * the first record), the read to the end and the polls there until a
 * GetRecords goes after the landing bound, a record written after the
 * bound, an expired cursor renewed after the last record read, a refusal
 * ending the read with its reason, and a stop from inside the record
 * callback.  The loop closes with nothing left open.
 */
#include "config.h"

#include <sys/stat.h>

#include <check.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "base/closer.h"
#include "base/util.h"
#include "conf/conf.h"
#include "dis/disapi.h"
#include "dis/http.h"
#include "dis/partread.h"
#include "wire/codec_read.h"
#include "testutil.h"

#define WATCHDOG_MS	15000
#define MAX_REQS	64

struct req {
	char		*url;
	http_done_cb	 cb;
	void		*arg;
	bool		 answered;
};

static struct {
	uv_loop_t	 loop;
	char		 dir[256];
	struct conf	*conf;
	struct disapi	*api;
	struct closer	 closer;
	bool		 freed;
	struct partread	 r;
	struct req	 reqs[MAX_REQS];
	size_t		 nreqs;
	char		 keys[512];	/* the records' keys, blank-separated */
	size_t		 nrecs;
	size_t		 stop_after;	/* records; 0: never stop */
	unsigned	 ends;
	char		 fail[512];	/* the end's reason ("" when none) */
	bool		 reached;
	size_t		 want;
	size_t		 answers;	/* delivered */
	bool		 waiting_answers;
} h;

/* --- the fake transport ------------------------------------------------- */

static int
fake_submit(void *ctx, const struct http_request *r, http_done_cb cb,
    void *arg)
{
	struct req	*q;

	(void)ctx;
	ck_assert_uint_lt(h.nreqs, MAX_REQS);
	q = &h.reqs[h.nreqs++];
	q->url = xstrdup(r->url);
	q->cb = cb;
	q->arg = arg;
	if (!h.waiting_answers)
		h.reached = h.nreqs >= h.want;
	return 0;
}

struct answer {
	uv_timer_t	 t;
	size_t		 req;
	long		 status;
	char		*body;
};

static void
answer_closed(uv_handle_t *t)
{
	struct answer	*a = container_of((uv_timer_t *)t, struct answer, t);

	free(a->body);
	free(a);
}

static void
on_answer(uv_timer_t *t)
{
	struct answer	*a = container_of(t, struct answer, t);
	struct http_response r;

	memset(&r, 0, sizeof(r));
	r.result = HTTP_OK;
	r.status = a->status;
	r.body = a->body;
	r.bodylen = strlen(a->body);
	h.reqs[a->req].cb(&r, h.reqs[a->req].arg);
	if (++h.answers >= h.want && h.waiting_answers)
		h.reached = true;
	uv_close((uv_handle_t *)t, answer_closed);
}

/* Answer request i, from a timer. */
static void
reply(size_t i, long status, const char *body)
{
	struct answer	*a;

	ck_assert_uint_lt(i, h.nreqs);
	ck_assert(!h.reqs[i].answered);
	h.reqs[i].answered = true;
	a = xcalloc(1, sizeof(*a));
	a->req = i;
	a->status = status;
	a->body = xstrdup(body);
	uv_timer_init(&h.loop, &a->t);
	uv_timer_start(&a->t, on_answer, 0, 0);
}

static void
wait_reqs(size_t n)
{
	h.want = n;
	h.reached = h.nreqs >= n;
	ck_assert_msg(tu_run_until(&h.loop, &h.reached, WATCHDOG_MS),
	    "waited for request %zu (%zu sent, %u ends)", n, h.nreqs, h.ends);
}

/* Until n answers reached the reader (what they made it send is sent:
 * it sends from inside the callback). */
static void
wait_answers(size_t n)
{
	h.want = n;
	h.waiting_answers = true;
	h.reached = h.answers >= n;
	ck_assert(tu_run_until(&h.loop, &h.reached, WATCHDOG_MS));
	h.waiting_answers = false;
}

/* Until the read ended (and the answers' timers ran). */
static void
wait_end(void)
{
	h.want = SIZE_MAX;
	h.reached = h.ends > 0;
	ck_assert_msg(tu_run_until(&h.loop, &h.reached, WATCHDOG_MS),
	    "waited for the end (%zu requests)", h.nreqs);
}

/* --- the reader's owner ------------------------------------------------- */

static void
on_record(void *arg, const struct codec_record *rec, struct buf *scratch)
{
	size_t	 used = strlen(h.keys);

	ck_assert_ptr_eq(arg, &h);
	ck_assert_ptr_nonnull(scratch);
	snprintf(h.keys + used, sizeof(h.keys) - used, "%s%s",
	    used > 0 ? " " : "", rec->key != NULL ? rec->key : "-");
	if (++h.nrecs == h.stop_after)
		partread_stop(&h.r);
}

static void
on_end(void *arg, const char *fail)
{
	ck_assert_ptr_eq(arg, &h);
	h.ends++;
	snprintf(h.fail, sizeof(h.fail), "%s", fail != NULL ? fail : "");
	h.reached = true;
}

static void
on_freed(struct closer *c)
{
	(void)c;
	h.freed = true;
}

static void
setup(void)
{
	char	 ini[PATH_MAX], err[512], *text;

	memset(&h, 0, sizeof(h));
	ck_assert_int_eq(uv_loop_init(&h.loop), 0);
	tu_tmpdir(h.dir, sizeof(h.dir), "check_partread");
	tu_path(ini, sizeof(ini), h.dir, "agent.ini");
	text = xasprintf("[agent]\nregion = cn-north-4\nprojectId = p1\n"
	    "ak = AK\nsk = SK\ncheckpointFile = %s/state\n"
	    "[flow:app]\nDISStream = s1\nfilePattern = %s/*.log\n", h.dir,
	    h.dir);
	tu_write_str(ini, text);
	free(text);
	ck_assert_int_eq(chmod(ini, 0600), 0);	/* it holds sk */
	ck_assert_msg(conf_load(ini, &h.conf, err, sizeof(err)) == 0, "%s",
	    err);
	h.api = disapi_new(NULL, h.conf);
	disapi_set_transport(h.api, fake_submit, NULL);
	closer_init(&h.closer, on_freed);
	rand_seed(20261207);
}

/* Partition 2 of s1, read after after (or from at_ms), landing bound
 * wait_ms from now, records past past_ms end it; started. */
static void
start(int64_t after, int64_t at_ms, int64_t past_ms, int64_t wait_ms)
{
	struct partread_opts o = { "stream-name", "s1", 2, after, at_ms,
	    past_ms, wall_ms() + wait_ms, 50 };

	partread_init(&h.r, &h.loop, h.api, &h.closer, &o,
	    &(struct partread_cbs){ on_record, on_end, &h });
	partread_start(&h.r);
}

static void
teardown(void)
{
	size_t	 i;
	struct http_response r = { .result = HTTP_ERR_CANCELLED,
	    .error = "cancelled" };

	partread_close(&h.r);
	/* As http_close does: what is on the wire ends, cancelled. */
	for (i = 0; i < h.nreqs; i++)
		if (!h.reqs[i].answered) {
			h.reqs[i].answered = true;
			h.reqs[i].cb(&r, h.reqs[i].arg);
		}
	partread_cleanup(&h.r);
	closer_release(&h.closer);
	ck_assert(tu_run_until(&h.loop, &h.freed, WATCHDOG_MS));
	disapi_free(h.api);
	conf_free(h.conf);
	tu_loop_close(&h.loop);
	for (i = 0; i < h.nreqs; i++)
		free(h.reqs[i].url);
	tu_rmtree(h.dir);
}

static const char *
url(size_t i)
{
	ck_assert_uint_lt(i, h.nreqs);
	return h.reqs[i].url;
}

/* Request i's URL has each of the NULL-ended list (the query is signed:
 * its parameters come sorted). */
static void
has(size_t i, ...)
{
	va_list		 ap;
	const char	*p;

	va_start(ap, i);
	while ((p = va_arg(ap, const char *)) != NULL)
		ck_assert_msg(strstr(url(i), p) != NULL, "request %zu: %s "
		    "without %s", i, url(i), p);
	va_end(ap);
}

#define RECS(r, next) "{\"records\":[" r "],\"next_partition_cursor\":" \
	next "}"
#define REC(seq, key, ts) "{\"sequence_number\":\"" #seq "\"," \
	"\"partition_key\":\"" key "\",\"data\":\"YTA=\",\"timestamp\":" #ts "}"

/* --- cases -------------------------------------------------------------- */

/*
 * After the floor to the end; there, asked again (a timer) from the last
 * reply's cursor until a GetRecords went out after the landing bound.
 */
START_TEST(reads_to_the_end_then_polls_until_the_bound)
{
	size_t	 i;

	start(5, -1, INT64_MAX, 300);
	wait_reqs(1);
	has(0, "cursors/?", "stream-name=s1", "partition-id=shardId-0000000002",
	    "cursor-type=AFTER_SEQUENCE_NUMBER", "starting-sequence-number=5",
	    NULL);
	reply(0, 200, "{\"partition_cursor\":\"c1\"}");
	wait_reqs(2);
	ck_assert_ptr_nonnull(strstr(url(1), "partition-cursor=c1"));
	reply(1, 200, RECS(REC(6, "k6", 1) "," REC(7, "k7", 2), "\"c2\""));
	wait_reqs(3);
	ck_assert_str_eq(h.keys, "k6 k7");
	ck_assert_ptr_nonnull(strstr(url(2), "partition-cursor=c2"));
	reply(2, 200, RECS("", "\"c3\""));
	for (i = 3; i < MAX_REQS - 1; i++) {
		wait_reqs(i + 1);	/* the next poll, or the end */
		if (h.ends > 0)
			break;
		ck_assert_ptr_nonnull(strstr(url(i), "partition-cursor=c3"));
		reply(i, 200, RECS("", "\"c3\""));
	}
	ck_assert_uint_ge(h.nreqs, 4);		/* polled, not over at once */
	ck_assert_uint_eq(h.ends, 1);
	ck_assert_str_eq(h.fail, "");
	ck_assert(partread_at_end(&h.r));
}
END_TEST

/* A record written after the bound: read far enough, over. */
START_TEST(a_record_past_the_bound_ends_the_read)
{
	start(5, -1, 1000, 60000);
	wait_reqs(1);
	reply(0, 200, "{\"partition_cursor\":\"c1\"}");
	wait_reqs(2);
	reply(1, 200, RECS(REC(6, "k6", 999) "," REC(7, "k7", 1001) ","
	    REC(8, "k8", 5), "\"c2\""));
	wait_end();
	ck_assert_str_eq(h.keys, "k6");
	ck_assert_str_eq(h.fail, "");
	ck_assert_uint_eq(h.nreqs, 2);
}
END_TEST

/* Without a floor: from a time (the crashed run's start). */
START_TEST(without_a_floor_from_a_time)
{
	start(-1, 12345, INT64_MAX, 0);
	wait_reqs(1);
	has(0, "cursor-type=AT_TIMESTAMP", "timestamp=12345", NULL);
}
END_TEST

/* Or from the partition's first record; a reply without a next cursor is
 * its end. */
START_TEST(without_a_floor_from_the_first_record)
{
	start(-1, -1, INT64_MAX, 0);
	wait_reqs(1);
	has(0, "cursor-type=AT_SEQUENCE_NUMBER", "starting-sequence-number=0",
	    NULL);
	reply(0, 200, "{\"partition_cursor\":\"c1\"}");
	wait_reqs(2);
	reply(1, 200, RECS(REC(0, "k0", 1), "null"));
	wait_end();
	ck_assert_str_eq(h.keys, "k0");
	ck_assert_str_eq(h.fail, "");
}
END_TEST

/* An expired cursor: a new one after the last record read, not the
 * floor, so nothing is handed out twice. */
START_TEST(an_expired_cursor_is_renewed_after_the_last_record)
{
	start(5, -1, INT64_MAX, 60000);
	wait_reqs(1);
	reply(0, 200, "{\"partition_cursor\":\"c1\"}");
	wait_reqs(2);
	reply(1, 200, RECS(REC(6, "k6", 1) "," REC(7, "k7", 2), "\"c2\""));
	wait_reqs(3);
	reply(2, 400, "{\"errorCode\":\"DIS.4217\",\"message\":\"expired\"}");
	wait_reqs(4);
	has(3, "cursors/", "cursor-type=AFTER_SEQUENCE_NUMBER",
	    "starting-sequence-number=7", NULL);
	ck_assert_uint_eq(h.ends, 0);
}
END_TEST

#define REFUSED	"GetCursor refused: HTTP 403 DIS.4116 denied ("

/* Throttling and an outage are waited out; a refusal ends the read with
 * its reason. */
START_TEST(a_refusal_ends_the_read_with_its_reason)
{
	start(5, -1, INT64_MAX, 60000);
	wait_reqs(1);
	reply(0, 503, "{}");
	wait_reqs(2);
	reply(1, 429, "{}");
	wait_reqs(3);
	reply(2, 403, "{\"errorCode\":\"DIS.4116\",\"message\":\"denied\"}");
	wait_end();
	ck_assert_uint_eq(h.ends, 1);
	ck_assert_msg(strncmp(h.fail, REFUSED, strlen(REFUSED)) == 0, "%s",
	    h.fail);
}
END_TEST

/* The owner stops the read from a record: no more records, no end, no
 * request. */
START_TEST(a_stop_from_a_record_stops_at_once)
{
	h.stop_after = 1;
	start(5, -1, INT64_MAX, 60000);
	wait_reqs(1);
	reply(0, 200, "{\"partition_cursor\":\"c1\"}");
	wait_reqs(2);
	reply(1, 200, RECS(REC(6, "k6", 1) "," REC(7, "k7", 2), "\"c2\""));
	wait_answers(2);
	ck_assert_str_eq(h.keys, "k6");
	ck_assert_uint_eq(h.nreqs, 2);
	ck_assert_uint_eq(h.ends, 0);
}
END_TEST

static Suite *
partread_suite(void)
{
	Suite	*s = suite_create("partread");
	TCase	*tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, reads_to_the_end_then_polls_until_the_bound);
	tcase_add_test(tc, a_record_past_the_bound_ends_the_read);
	tcase_add_test(tc, without_a_floor_from_a_time);
	tcase_add_test(tc, without_a_floor_from_the_first_record);
	tcase_add_test(tc, an_expired_cursor_is_renewed_after_the_last_record);
	tcase_add_test(tc, a_refusal_ends_the_read_with_its_reason);
	tcase_add_test(tc, a_stop_from_a_record_stops_at_once);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(partread_suite());
}
