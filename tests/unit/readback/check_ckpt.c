/*
 * Unit tests for an app's checkpoints (readback/ckpt.c) on a real loop
 * behind a fake transport (disapi_set_transport): each request is
 * captured and answered by the case from a timer, as http does.  Covered:
 * nothing passes the app until DescribeApp answered; DIS.4332 creates it
 * (CreateApp's body) or, without create, is -ENOENT; a read gives the
 * checkpoint or -1; commits of one partition coalesce while queued and a
 * later one follows the one on the wire; at most four calls are in
 * flight; a 500 is retried, DIS.4224 is given up and counted at the drain.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "base/util.h"
#include "conf/conf.h"
#include "dis/disapi.h"
#include "dis/http.h"
#include "readback/ckpt.h"
#include "testutil.h"

#define WATCHDOG_MS	15000
#define MAX_REQS	32

struct req {
	char		*method;
	char		*url;
	char		*body;
	http_done_cb	 cb;
	void		*arg;
	bool		 answered;
};

static struct {
	uv_loop_t	 loop;
	char		 dir[256];
	struct conf	*conf;
	struct disapi	*api;
	struct ckpt	*ck;
	struct req	 reqs[MAX_REQS];
	size_t		 nreqs;
	size_t		 want;
	bool		 reached;
	/* What the callbacks got. */
	int		 app_rc;
	bool		 created;
	unsigned	 apps;
	int		 get_rc;
	int64_t		 get_seq;
	unsigned	 gets;
	unsigned	 drained;
	unsigned	 failed;
} h;

/* One answer on its way: status and body for request i. */
struct answer {
	uv_timer_t	 t;
	size_t		 i;
	long		 status;
	char		*body;
};

static void
update(void)
{
	h.reached = h.nreqs >= h.want;
}

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
	q->body = xstrndup(r->body != NULL ? r->body : "", r->bodylen);
	q->cb = cb;
	q->arg = arg;
	update();
	return 0;
}

/* Until n requests were sent in all. */
static void
wait_reqs(size_t n)
{
	h.want = n;
	update();
	ck_assert_msg(tu_run_until(&h.loop, &h.reached, WATCHDOG_MS),
	    "waited for %zu requests, %zu sent", n, h.nreqs);
}

/* Run the loop until *flag (a count) reaches n. */
static void
wait_count(const unsigned *flag, unsigned n, const char *what)
{
	uint64_t	 end = mono_ms() + WATCHDOG_MS;

	while (*flag < n) {
		ck_assert_msg(mono_ms() < end, "waited for %s", what);
		uv_run(&h.loop, UV_RUN_ONCE);
	}
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
	r.result = HTTP_OK;
	r.status = a->status;
	r.body = a->body;
	r.bodylen = a->body != NULL ? strlen(a->body) : 0;
	q->answered = true;
	q->cb(&r, q->arg);
	uv_close((uv_handle_t *)t, answer_closed);
}

/* Answer request i (from a timer, never inside the submit). */
static void
reply(size_t i, long status, const char *body)
{
	struct answer	*a;

	ck_assert_uint_lt(i, h.nreqs);
	ck_assert(!h.reqs[i].answered);
	a = xcalloc(1, sizeof(*a));
	a->i = i;
	a->status = status;
	a->body = body != NULL ? xstrdup(body) : NULL;
	uv_timer_init(&h.loop, &a->t);
	uv_timer_start(&a->t, on_answer, 0, 0);
}

static void
dis_error(size_t i, long status, const char *code)
{
	char	*b = xasprintf("{\"error_code\":\"%s\",\"error_msg\":\"x\"}",
	    code);

	reply(i, status, b);
	free(b);
}

/* Request i is METHOD on a URL containing part. */
static void
assert_req(size_t i, const char *method, const char *part)
{
	ck_assert_uint_lt(i, h.nreqs);
	ck_assert_str_eq(h.reqs[i].method, method);
	ck_assert_msg(strstr(h.reqs[i].url, part) != NULL, "request %zu: %s",
	    i, h.reqs[i].url);
}

static void
on_app(void *arg, int rc, bool created, const struct rb_error *e)
{
	(void)arg;
	(void)e;
	h.app_rc = rc;
	h.created = created;
	h.apps++;
}

static void
on_get(void *arg, int rc, int64_t seq, const struct rb_error *e)
{
	(void)arg;
	(void)e;
	h.get_rc = rc;
	h.get_seq = seq;
	h.gets++;
}

static void
on_drain(void *arg, unsigned failed)
{
	(void)arg;
	h.failed = failed;
	h.drained++;
}

static void
setup(void)
{
	char	 ini[PATH_MAX], err[512], *text;

	memset(&h, 0, sizeof(h));
	ck_assert_int_eq(uv_loop_init(&h.loop), 0);
	tu_tmpdir(h.dir, sizeof(h.dir), "check_ckpt");
	tu_path(ini, sizeof(ini), h.dir, "agent.ini");
	text = xasprintf("[agent]\nregion = cn-north-4\nprojectId = p1\n"
	    "ak = AK\nsk = SK\ncheckpointFile = %s/state\n"
	    "[flow:app]\nDISStream = s1\nfilePattern = %s/*.log\n", h.dir,
	    h.dir);
	tu_write_str(ini, text);
	free(text);
	ck_assert_msg(conf_load(ini, &h.conf, err, sizeof(err)) == 0, "%s",
	    err);
	h.api = disapi_new(NULL, h.conf);
	disapi_set_transport(h.api, fake_submit, NULL);
	h.ck = ckpt_new(&h.loop, h.api, "a1", "s1", "meta", false);
}

static void
teardown(void)
{
	size_t	 i;

	ckpt_free(h.ck);
	/* The replies still owed come back cancelled, as http_close does. */
	for (i = 0; i < h.nreqs; i++)
		if (!h.reqs[i].answered)
			reply(i, 0, NULL);
	tu_loop_close(&h.loop);
	disapi_free(h.api);
	conf_free(h.conf);
	for (i = 0; i < h.nreqs; i++) {
		free(h.reqs[i].method);
		free(h.reqs[i].url);
		free(h.reqs[i].body);
	}
	tu_rmtree(h.dir);
}

/* The app is known; n requests so far. */
static void
app_known(void)
{
	ckpt_app(h.ck, true, on_app, NULL);
	wait_reqs(1);
	reply(0, 200, "{\"app_name\":\"a1\"}");
	wait_count(&h.apps, 1, "the app");
	ck_assert_int_eq(h.app_rc, 0);
	ck_assert(!h.created);
}

START_TEST(app_first_created_on_4332_then_reads)
{
	ckpt_app(h.ck, true, on_app, NULL);
	ckpt_get(h.ck, "shardId-0000000000", on_get, NULL);
	wait_reqs(1);
	assert_req(0, "GET", "/v2/p1/apps/a1/");
	/* Nothing passes the app. */
	uv_run(&h.loop, UV_RUN_NOWAIT);
	ck_assert_uint_eq(h.nreqs, 1);
	dis_error(0, 400, "DIS.4332");
	wait_reqs(2);
	assert_req(1, "POST", "/v2/p1/apps/");
	ck_assert_str_eq(h.reqs[1].body, "{\"app_name\":\"a1\"}");
	reply(1, 201, NULL);
	wait_reqs(3);
	ck_assert_uint_eq(h.apps, 1);
	ck_assert_int_eq(h.app_rc, 0);
	ck_assert(h.created);
	/* (disapi sends the query sorted, as it signs it) */
	assert_req(2, "GET", "checkpoints/?app_name=a1&checkpoint_type="
	    "LAST_READ&partition_id=shardId-0000000000&stream_name=s1");
	reply(2, 200, "{\"sequence_number\":\"-1\",\"metadata\":\"\"}");
	wait_count(&h.gets, 1, "the checkpoint");
	ck_assert_int_eq(h.get_rc, 0);
	ck_assert_int_eq(h.get_seq, -1);
}
END_TEST

START_TEST(no_such_app_without_create)
{
	ckpt_app(h.ck, false, on_app, NULL);
	wait_reqs(1);
	dis_error(0, 400, "DIS.4332");
	wait_count(&h.apps, 1, "the app");
	ck_assert_int_eq(h.app_rc, -ENOENT);
	uv_run(&h.loop, UV_RUN_NOWAIT);
	ck_assert_uint_eq(h.nreqs, 1);
}
END_TEST

START_TEST(commits_coalesce_and_follow_the_one_on_the_wire)
{
	/* Queued behind the app: 7 replaces 5 before anything is sent. */
	ckpt_app(h.ck, true, on_app, NULL);
	ckpt_commit(h.ck, "shardId-0000000000", 5);
	ckpt_commit(h.ck, "shardId-0000000000", 7);
	ckpt_commit(h.ck, "shardId-0000000001", 3);
	wait_reqs(1);
	reply(0, 200, "{\"app_name\":\"a1\"}");
	wait_reqs(3);
	assert_req(1, "POST", "/v2/p1/checkpoints/");
	ck_assert_str_eq(h.reqs[1].body, "{\"app_name\":\"a1\","
	    "\"checkpoint_type\":\"LAST_READ\",\"stream_name\":\"s1\","
	    "\"partition_id\":\"shardId-0000000000\",\"sequence_number\":"
	    "\"7\",\"metadata\":\"meta\"}");
	ck_assert_ptr_nonnull(strstr(h.reqs[2].body,
	    "\"partition_id\":\"shardId-0000000001\",\"sequence_number\":"
	    "\"3\""));
	/* Asked for while 7 is on the wire: after it, 9 and not 8. */
	ckpt_commit(h.ck, "shardId-0000000000", 8);
	ckpt_commit(h.ck, "shardId-0000000000", 9);
	uv_run(&h.loop, UV_RUN_NOWAIT);
	ck_assert_uint_eq(h.nreqs, 3);
	ckpt_drain(h.ck, on_drain, NULL);
	reply(1, 201, NULL);
	wait_reqs(4);
	ck_assert_ptr_nonnull(strstr(h.reqs[3].body,
	    "\"partition_id\":\"shardId-0000000000\",\"sequence_number\":"
	    "\"9\""));
	ck_assert(ckpt_busy(h.ck));
	reply(2, 201, NULL);
	reply(3, 201, NULL);
	wait_count(&h.drained, 1, "the drain");
	ck_assert_uint_eq(h.failed, 0);
	ck_assert(!ckpt_busy(h.ck));
	ck_assert_uint_eq(h.nreqs, 4);
}
END_TEST

START_TEST(at_most_four_in_flight)
{
	char	 p[40];
	int	 i;

	app_known();
	for (i = 0; i < 6; i++) {
		snprintf(p, sizeof(p), "shardId-%010d", i);
		ckpt_get(h.ck, p, on_get, NULL);
	}
	wait_reqs(5);
	uv_run(&h.loop, UV_RUN_NOWAIT);
	ck_assert_uint_eq(h.nreqs, 5);		/* the app and four */
	reply(1, 200, "{\"sequence_number\":\"12\"}");
	wait_reqs(6);
	ck_assert_uint_eq(h.gets, 1);
	ck_assert_int_eq(h.get_seq, 12);
	assert_req(5, "GET", "partition_id=shardId-0000000004");
}
END_TEST

START_TEST(a_500_is_retried_a_4224_given_up)
{
	app_known();
	ckpt_commit(h.ck, "shardId-0000000000", 5);
	wait_reqs(2);
	dis_error(1, 500, "DIS.5000");
	wait_reqs(3);
	ck_assert_str_eq(h.reqs[2].body, h.reqs[1].body);
	ckpt_drain(h.ck, on_drain, NULL);
	dis_error(2, 400, "DIS.4224");
	wait_count(&h.drained, 1, "the drain");
	ck_assert_uint_eq(h.failed, 1);
	ck_assert_uint_eq(h.nreqs, 3);
	/* The count is per drain. */
	ckpt_drain(h.ck, on_drain, NULL);
	wait_count(&h.drained, 2, "the second drain");
	ck_assert_uint_eq(h.failed, 0);
}
END_TEST

static Suite *
ckpt_suite(void)
{
	Suite	*s = suite_create("ckpt");
	TCase	*tc = tcase_create("calls");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, app_first_created_on_4332_then_reads);
	tcase_add_test(tc, no_such_app_without_create);
	tcase_add_test(tc, commits_coalesce_and_follow_the_one_on_the_wire);
	tcase_add_test(tc, at_most_four_in_flight);
	tcase_add_test(tc, a_500_is_retried_a_4224_given_up);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(ckpt_suite());
}
