/*
 * Unit tests for the verdict on a PutRecords reply (sinkreply.c), without a
 * loop or a sink: a reply (transport result, HTTP status, body) and the
 * request's entries go in, the verdict comes out.  Covered: a full
 * success; records failing one by one (throttled, server errors, refused
 * for good, retriableErrorCodes) and the window they ask for; every
 * request-level row of spec/dis-api.md section 4's table (throttling,
 * the IP blacklist, halts, splits and the lone refused record, 401/441
 * while keys are renewed, 5xx, no reply); and the 200s that acknowledge
 * nothing: a garbage body, a reply one record short, JSON to a protobuf
 * request.  And outage.c's decisions on how a run of failed requests is
 * told, on a made-up clock.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "conf/conf.h"
#include "dis/http.h"
#include "sink/outage.h"
#include "sink/putbody.h"
#include "sink/sinkreply.h"
#include "testutil.h"

#define PAUSED_MS	60000

static struct conf	 conf_json, conf_pb;
static char		 fmt_json[] = "json", fmt_pb[] = "protobuf";
static struct putbody	*json, *pb;
static struct sinkreply_opts opts;
static struct sinkreply_verdict v;
static size_t		 nsent;		/* of the request judged last */

static void
setup(void)
{
	memset(&conf_json, 0, sizeof(conf_json));
	conf_json.serialize_type = fmt_json;
	conf_pb = conf_json;
	conf_pb.serialize_type = fmt_pb;
	json = putbody_new(&conf_json);
	pb = putbody_new(&conf_pb);
	memset(&opts, 0, sizeof(opts));
	opts.body = json;
	opts.paused_ms = PAUSED_MS;
	memset(&v, 0, sizeof(v));
}

static void
teardown(void)
{
	sinkreply_verdict_cleanup(&v);
	putbody_free(json);
	putbody_free(pb);
}

/* A request of n entries, the batch's records first, first + 2, ... */
static struct putbody_req *
request(size_t n, size_t first)
{
	static size_t	 idx[16];
	static struct putbody_req req;
	size_t		 i;

	ck_assert_uint_le(n, ARRAY_SIZE(idx));
	for (i = 0; i < n; i++)
		idx[i] = first + 2 * i;
	putbody_req_init(&req);
	req.sent_idx = idx;
	req.nsent = n;
	return &req;
}

static void
judge(long status, const char *body, size_t n)
{
	struct http_response r;

	memset(&r, 0, sizeof(r));
	r.result = HTTP_OK;
	r.status = status;
	r.body = body;
	r.bodylen = body != NULL ? strlen(body) : 0;
	nsent = n;
	sinkreply_verdict_cleanup(&v);
	sinkreply_judge(&r, request(n, 3), &opts, &v);
}

static void
judge_put(const char *codes, size_t n)
{
	char	*body = tu_put_reply(codes, 1, 100);

	judge(200, body, n);
	free(body);
}

/* The verdict on each record, as "A R D ..." (acknowledged, resent, a dead
 * letter); static. */
static const char *
recs(void)
{
	static char	 out[64];
	size_t		 i, k = 0;

	ck_assert_int_eq(v.action, SINKREPLY_RECORDS);
	ck_assert_ptr_nonnull(v.rec);
	for (i = 0; i < nsent && k + 3 < sizeof(out); i++) {
		out[k++] = v.rec[i] == SINKREPLY_ACKED ? 'A' :
		    v.rec[i] == SINKREPLY_RESEND ? 'R' :
		    v.rec[i] == SINKREPLY_REFUSED ? 'D' : '?';
		out[k++] = ' ';
	}
	out[k ? k - 1 : 0] = '\0';
	return out;
}

/* --- 200: a verdict per record ------------------------------------------ */

START_TEST(a_full_success_acknowledges_every_record_and_grows_the_window)
{
	size_t	 i;

	judge_put("- - -", 3);
	ck_assert_str_eq(recs(), "A A A");
	ck_assert_int_eq(v.retry, RETRY_NONE);
	ck_assert_int_eq(v.aimd, SINKREPLY_AIMD_GROW);
	ck_assert(!v.uncertain);
	ck_assert_ptr_null(v.error);
	ck_assert_int_eq(v.status, 200);
	ck_assert_uint_eq(v.nfail, 0);
	ck_assert_uint_eq(v.throttled, 0);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(v.res[i].partition, 1);
	/* a partition's last only: the others are lower (codec.h) */
	ck_assert_int_eq(v.res[2].seq, 102);
}
END_TEST

/*
 * Records failing one by one: DIS.4303 and DIS.5xxx are resent (the
 * default retriableErrorCodes), the others refused for good; the window
 * follows the share of DIS.4303 (most: halve; a tenth or more: one
 * fewer; less: grow), and only DIS.4303 counts as throttling.
 */
START_TEST(records_failing_one_by_one_are_resent_or_refused)
{
	static const struct {
		const char	*codes;
		size_t		 n;
		const char	*recs;
		size_t		 nfail, throttled;
		enum sinkreply_aimd aimd;
	} cases[] = {
		{ "- DIS.4303 - DIS.5000", 4, "A R A R", 2, 1,
		    SINKREPLY_AIMD_LESS },
		{ "DIS.4303 DIS.4303 - -", 4, "R R A A", 2, 2,
		    SINKREPLY_AIMD_HALVE },
		{ "DIS.4303 DIS.4303 DIS.4303 -", 4, "R R R A", 3, 3,
		    SINKREPLY_AIMD_HALVE },
		{ "- - - - - - - - - - DIS.4303", 11, "A A A A A A A A A A R",
		    1, 1, SINKREPLY_AIMD_GROW },
		{ "DIS.5000 DIS.5999 -", 3, "R R A", 2, 0,
		    SINKREPLY_AIMD_GROW },
		{ "- DIS.4200 DIS.4206 -", 4, "A D D A", 2, 0,
		    SINKREPLY_AIMD_GROW },
		{ "DIS.4399 -", 2, "D A", 1, 0, SINKREPLY_AIMD_GROW },
	};
	size_t	 i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		judge_put(cases[i].codes, cases[i].n);
		ck_assert_msg(strcmp(recs(), cases[i].recs) == 0,
		    "%s: %s, not %s", cases[i].codes, recs(), cases[i].recs);
		ck_assert_uint_eq(v.nfail, cases[i].nfail);
		ck_assert_uint_eq(v.throttled, cases[i].throttled);
		ck_assert_msg(v.aimd == cases[i].aimd, "%s: aimd %d",
		    cases[i].codes, v.aimd);
		ck_assert(!v.uncertain);
		sinkreply_verdict_cleanup(&v);
	}
	judge_put("- DIS.4303", 2);
	ck_assert_str_eq(v.res[1].code, "DIS.4303");
	ck_assert_str_eq(v.res[1].message, "failed with DIS.4303");
}
END_TEST

/* records.retriable.error.code replaces the default list: what it names
 * is resent, anything else (DIS.4303 included) refused. */
START_TEST(retriable_codes_decide_what_is_resent)
{
	opts.retriable = "DIS.42";
	judge_put("DIS.4200 DIS.4303 DIS.5000 -", 4);
	ck_assert_str_eq(recs(), "R D D A");
	ck_assert_uint_eq(v.throttled, 0);	/* 4303 refused, not resent */
}
END_TEST

START_TEST(aimd_follows_the_share_throttled)
{
	ck_assert_int_eq(sinkreply_aimd(0, 0), SINKREPLY_AIMD_GROW);
	ck_assert_int_eq(sinkreply_aimd(0, 10), SINKREPLY_AIMD_GROW);
	ck_assert_int_eq(sinkreply_aimd(1, 11), SINKREPLY_AIMD_GROW);
	ck_assert_int_eq(sinkreply_aimd(1, 10), SINKREPLY_AIMD_LESS);
	ck_assert_int_eq(sinkreply_aimd(4, 10), SINKREPLY_AIMD_LESS);
	ck_assert_int_eq(sinkreply_aimd(5, 10), SINKREPLY_AIMD_HALVE);
	ck_assert_int_eq(sinkreply_aimd(1, 1), SINKREPLY_AIMD_HALVE);
}
END_TEST

/* --- 200s that acknowledge nothing -------------------------------------- */

START_TEST(a_garbage_body_acknowledges_nothing)
{
	judge(200, "<html><body>502 Bad Gateway</body></html>", 3);
	ck_assert_int_eq(v.action, SINKREPLY_UNACKED);
	ck_assert_int_eq(v.entries, -EBADMSG);
	ck_assert(v.uncertain);		/* DIS took the request */
	ck_assert_ptr_null(v.res);
	ck_assert_ptr_null(v.rec);
	ck_assert_int_eq(v.aimd, SINKREPLY_AIMD_KEEP);
	sinkreply_verdict_cleanup(&v);
	judge(200, NULL, 3);
	ck_assert_int_eq(v.action, SINKREPLY_UNACKED);
	ck_assert_int_eq(v.entries, -EBADMSG);
}
END_TEST

/* A reply for another number of records: none of it is believed. */
START_TEST(a_reply_one_record_short_acknowledges_nothing)
{
	judge_put("- -", 3);
	ck_assert_int_eq(v.action, SINKREPLY_UNACKED);
	ck_assert_int_eq(v.entries, 2);
	ck_assert(v.uncertain);
	ck_assert_ptr_null(v.res);
	sinkreply_verdict_cleanup(&v);
	judge_put("- - - -", 3);
	ck_assert_int_eq(v.action, SINKREPLY_UNACKED);
	ck_assert_int_eq(v.entries, 4);
}
END_TEST

/* The reply is read in the request's format: JSON to a protobuf request
 * is not a reply. */
START_TEST(a_reply_in_another_format_acknowledges_nothing)
{
	opts.body = pb;
	judge_put("- - -", 3);
	ck_assert_int_eq(v.action, SINKREPLY_UNACKED);
	ck_assert(v.uncertain);
}
END_TEST

/* --- body.serialize.type = auto: protobuf refused ---------------------- */

/* What counts as a refusal of protobuf, by status, code, message and
 * whether the endpoint ever acknowledged protobuf. */
START_TEST(protobuf_refusals_are_told_apart)
{
	static const struct {
		long		 status;
		const char	*code, *msg;
		bool		 taken, refused;
	} cases[] = {
		{ 415, "", "", true, true },
		{ 415, "APIGW.0201", "whatever", true, true },
		{ 400, "DIS.4200", "Invalid Protobuf body", true, true },
		{ 400, "", "unsupported Content-Type", true, true },
		{ 400, "", "bad media type", true, true },
		{ 400, "DIS.4200", "invalid JSON body", false, true },
		{ 400, "DIS.4300", "Invalid request", false, true },
		{ 400, "", "", false, true },
		/* once protobuf was taken: what the table says */
		{ 400, "DIS.4200", "invalid JSON body", true, false },
		{ 400, "", "", true, false },
		/* never a refusal */
		{ 400, "DIS.4303", "Exceeded traffic control limit", false,
		    false },
		{ 400, "DIS.4301", "stream not found", false, false },
		{ 200, "", "", false, false },
		{ 413, "", "", false, false },
		{ 500, "", "protobuf", false, false },
		{ 401, "", "", false, false },
	};
	size_t	 i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		ck_assert_msg(sinkreply_refuses_protobuf(cases[i].status,
		    cases[i].code, cases[i].msg, cases[i].taken) ==
		    cases[i].refused, "case %zu: %ld %s %s", i,
		    cases[i].status, cases[i].code, cases[i].msg);
}
END_TEST

/* auto: a refused protobuf request is resent as JSON; json and protobuf
 * follow the table (a 415 halts). */
START_TEST(auto_reformats_a_refused_request)
{
	static char	 fmt_auto[] = "auto";
	struct conf	 conf_auto = conf_json;
	struct putbody	*a;

	conf_auto.serialize_type = fmt_auto;
	a = putbody_new(&conf_auto);
	opts.body = a;
	judge(415, "{\"errorCode\":\"DIS.4200\"}", 3);
	ck_assert_int_eq(v.action, SINKREPLY_REFORMAT);
	ck_assert(!v.uncertain);
	sinkreply_verdict_cleanup(&v);
	judge(400, "{\"errorCode\":\"DIS.4200\",\"message\":\"bad\"}", 3);
	ck_assert_int_eq(v.action, SINKREPLY_REFORMAT);
	sinkreply_verdict_cleanup(&v);
	opts.protobuf_taken = true;
	judge(400, "{\"errorCode\":\"DIS.4200\",\"message\":\"bad\"}", 3);
	ck_assert_int_eq(v.action, SINKREPLY_SPLIT);
	sinkreply_verdict_cleanup(&v);
	/* Fallen back: a JSON request refused is not a protobuf refusal. */
	putbody_fall_back(a);
	judge(415, NULL, 3);
	ck_assert_int_eq(v.action, SINKREPLY_PAUSE);
	sinkreply_verdict_cleanup(&v);
	opts.body = pb;
	judge(415, NULL, 3);
	ck_assert_int_eq(v.action, SINKREPLY_PAUSE);
	putbody_free(a);
}
END_TEST

/* --- request-level errors (dis-api.md section 4) ------------------------ */

/*
 * Every row of the table for a request of four records: what becomes of
 * it, its class for the log, the window, the least delay or the pause,
 * and the code and message it reports (DIS's shape or the gateway's).
 */
START_TEST(request_errors_follow_the_table)
{
	static const struct {
		long		 status;
		const char	*body;
		enum sinkreply_action action;
		enum retry_action retry;
		enum sinkreply_aimd aimd;
		uint64_t	 min_delay_ms, pause_ms;
		const char	*code;
	} cases[] = {
		/* throttled request: at least 1 s, halve and pace */
		{ 400, "{\"errorCode\":\"DIS.4303\",\"message\":\"Exceeded\"}",
		    SINKREPLY_RETRY, RETRY_SLOW, SINKREPLY_AIMD_HALVE, 1000, 0,
		    "DIS.4303" },
		{ 400, "{\"errorCode\":\"DIS.4305\"}", SINKREPLY_RETRY,
		    RETRY_SLOW, SINKREPLY_AIMD_HALVE, 1000, 0, "DIS.4305" },
		{ 429, NULL, SINKREPLY_RETRY, RETRY_SLOW,
		    SINKREPLY_AIMD_HALVE, 1000, 0, "" },
		/* the client IP blacklisted: 30 minutes */
		{ 400, "{\"errorCode\":\"DIS.4309\"}", SINKREPLY_PAUSE,
		    RETRY_HARD, SINKREPLY_AIMD_KEEP, 0, 30 * 60 * 1000,
		    "DIS.4309" },
		{ 403, NULL, SINKREPLY_PAUSE, RETRY_HARD, SINKREPLY_AIMD_KEEP,
		    0, 30 * 60 * 1000, "" },
		/* only the operator can fix these: pausedRetrySeconds */
		{ 400, "{\"errorCode\":\"DIS.4301\",\"message\":\"Stream "
		    "does not exist\"}", SINKREPLY_PAUSE, RETRY_HALT,
		    SINKREPLY_AIMD_KEEP, 0, PAUSED_MS, "DIS.4301" },
		{ 400, "{\"errorCode\":\"DIS.4117\"}", SINKREPLY_PAUSE,
		    RETRY_HALT, SINKREPLY_AIMD_KEEP, 0, PAUSED_MS, "DIS.4117" },
		{ 400, "{\"errorCode\":\"DIS.4205\"}", SINKREPLY_PAUSE,
		    RETRY_HALT, SINKREPLY_AIMD_KEEP, 0, PAUSED_MS, "DIS.4205" },
		{ 400, "{\"errorCode\":\"DIS.4319\"}", SINKREPLY_PAUSE,
		    RETRY_HALT, SINKREPLY_AIMD_KEEP, 0, PAUSED_MS, "DIS.4319" },
		{ 400, "{\"errorCode\":\"DIS.4999\"}", SINKREPLY_PAUSE,
		    RETRY_HALT, SINKREPLY_AIMD_KEEP, 0, PAUSED_MS, "DIS.4999" },
		{ 401, NULL, SINKREPLY_PAUSE, RETRY_HALT, SINKREPLY_AIMD_KEEP,
		    0, PAUSED_MS, "" },
		{ 403, "{\"errorCode\":\"DIS.4116\"}", SINKREPLY_PAUSE,
		    RETRY_HALT, SINKREPLY_AIMD_KEEP, 0, PAUSED_MS, "DIS.4116" },
		{ 410, NULL, SINKREPLY_PAUSE, RETRY_HALT, SINKREPLY_AIMD_KEEP,
		    0, PAUSED_MS, "" },
		{ 441, "{\"error_code\":\"DIS.4103\",\"error_msg\":\"date\"}",
		    SINKREPLY_PAUSE, RETRY_HALT, SINKREPLY_AIMD_KEEP, 0,
		    PAUSED_MS, "DIS.4103" },
		/* too large or invalid: halve the requests */
		{ 400, "{\"errorCode\":\"DIS.4200\"}", SINKREPLY_SPLIT,
		    RETRY_SPLIT, SINKREPLY_AIMD_KEEP, 0, 0, "DIS.4200" },
		{ 400, "{\"errorCode\":\"DIS.4300\"}", SINKREPLY_SPLIT,
		    RETRY_SPLIT, SINKREPLY_AIMD_KEEP, 0, 0, "DIS.4300" },
		{ 413, "<html>Request Entity Too Large</html>",
		    SINKREPLY_SPLIT, RETRY_SPLIT, SINKREPLY_AIMD_KEEP, 0, 0,
		    "" },
		/* the gateway's shape: REQ, its code kept for the log */
		{ 500, "{\"error_code\":\"APIGW.0101\",\"error_msg\":\"x\"}",
		    SINKREPLY_RETRY, RETRY_REQUEST, SINKREPLY_AIMD_KEEP, 0, 0,
		    "APIGW.0101" },
		{ 503, "{\"errorCode\":\"DIS.5000\"}", SINKREPLY_RETRY,
		    RETRY_REQUEST, SINKREPLY_AIMD_KEEP, 0, 0, "DIS.5000" },
	};
	size_t	 i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		judge(cases[i].status, cases[i].body, 4);
		ck_assert_msg(v.action == cases[i].action, "row %zu (%ld %s): "
		    "action %d", i, cases[i].status, cases[i].code, v.action);
		ck_assert_msg(v.retry == cases[i].retry, "row %zu: retry %d",
		    i, v.retry);
		ck_assert_msg(v.aimd == cases[i].aimd, "row %zu: aimd %d", i,
		    v.aimd);
		ck_assert_uint_eq(v.min_delay_ms, cases[i].min_delay_ms);
		ck_assert_uint_eq(v.pause_ms, cases[i].pause_ms);
		ck_assert_str_eq(v.code, cases[i].code);
		ck_assert_int_eq(v.status, cases[i].status);
		ck_assert_ptr_null(v.error);
		ck_assert_ptr_null(v.res);
		/* a 4xx took nothing; a 5xx may have landed */
		ck_assert(v.uncertain == (cases[i].status >= 500));
		if (v.action == SINKREPLY_SPLIT)
			ck_assert_uint_eq(v.split_limit, 2);
		sinkreply_verdict_cleanup(&v);
	}
	judge(400, "{\"errorCode\":\"DIS.4301\",\"message\":\"Stream does "
	    "not exist\"}", 4);
	ck_assert_str_eq(v.msg, "Stream does not exist");
}
END_TEST

/* A split halves the records of the request it answers; a lone record
 * still refused is the one to dead-letter (the batch's index). */
START_TEST(a_split_halves_until_one_record_is_dead_lettered)
{
	judge(413, NULL, 5);
	ck_assert_int_eq(v.action, SINKREPLY_SPLIT);
	ck_assert_uint_eq(v.split_limit, 2);
	judge(413, NULL, 2);
	ck_assert_int_eq(v.action, SINKREPLY_SPLIT);
	ck_assert_uint_eq(v.split_limit, 1);
	judge(400, "{\"errorCode\":\"DIS.4200\",\"message\":\"too big\"}",
	    1);
	ck_assert_int_eq(v.action, SINKREPLY_DEAD);
	ck_assert_uint_eq(v.dead_idx, 3);	/* request(1, 3): record 3 */
	ck_assert_str_eq(v.code, "DIS.4200");
	ck_assert_str_eq(v.msg, "too big");
}
END_TEST

/* Keys DIS refused while new ones are fetched: resent, not paused
 * ("new token, REQ once, then HALT"); other halts stay halts. */
START_TEST(refused_keys_being_renewed_are_resent)
{
	opts.renewing = true;
	judge(401, NULL, 4);
	ck_assert_int_eq(v.action, SINKREPLY_RETRY);
	ck_assert_int_eq(v.retry, RETRY_REQUEST);
	ck_assert_uint_eq(v.min_delay_ms, 0);
	judge(441, "{\"error_code\":\"DIS.4113\"}", 4);
	ck_assert_int_eq(v.action, SINKREPLY_RETRY);
	judge(400, "{\"errorCode\":\"DIS.4301\"}", 4);
	ck_assert_int_eq(v.action, SINKREPLY_PAUSE);
	opts.renewing = false;
	judge(441, "{\"error_code\":\"DIS.4113\"}", 4);
	ck_assert_int_eq(v.action, SINKREPLY_PAUSE);
	ck_assert_int_eq(sinkreply_classify(401, "", true), RETRY_REQUEST);
	ck_assert_int_eq(sinkreply_classify(403, "DIS.4116", true),
	    RETRY_HALT);
}
END_TEST

/* No reply at all (a timeout, a reset): the whole request again, and it
 * may have landed. */
START_TEST(no_reply_is_retried_and_uncertain)
{
	struct http_response r;

	memset(&r, 0, sizeof(r));
	r.result = HTTP_ERR_TIMEOUT;
	r.error = "Operation timed out after 30000 milliseconds";
	sinkreply_judge(&r, request(4, 0), &opts, &v);
	ck_assert_int_eq(v.action, SINKREPLY_RETRY);
	ck_assert_int_eq(v.retry, RETRY_REQUEST);
	ck_assert_int_eq(v.aimd, SINKREPLY_AIMD_KEEP);
	ck_assert(v.uncertain);
	ck_assert_int_eq(v.status, 0);
	ck_assert_ptr_eq(v.error, r.error);
	ck_assert_uint_eq(v.min_delay_ms, 0);
	r.result = HTTP_ERR_NETWORK;
	r.error = NULL;
	sinkreply_judge(&r, request(4, 0), &opts, &v);
	ck_assert_str_eq(v.error, "error");
}
END_TEST

/* --- outage.c: failed requests told once, a minute later, at the end --- */

START_TEST(outage_says_first_then_a_minute_then_the_end)
{
	struct outage	 o;
	uint64_t	 n, failed, ms, t;

	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(outage_failed(&o, 1000, &n), OUTAGE_FIRST);
	ck_assert_uint_eq(n, 1);
	/* 47 more within the minute: quiet. */
	for (t = 1100; t < 1100 + 47 * 1000; t += 1000)
		ck_assert_int_eq(outage_failed(&o, t, &n), OUTAGE_QUIET);
	ck_assert_int_eq(outage_failed(&o, 60999, &n), OUTAGE_QUIET);
	/* A minute after the first line: the count since it. */
	ck_assert_int_eq(outage_failed(&o, 61000, &n), OUTAGE_SUMMARY);
	ck_assert_uint_eq(n, 49);
	ck_assert_uint_eq(outage_count(&o), 50);
	ck_assert_uint_eq(outage_ms(&o, 61000), 60000);
	ck_assert_int_eq(outage_failed(&o, 62000, &n), OUTAGE_QUIET);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(outage_failed(&o, 121000, &n), OUTAGE_SUMMARY);
	ck_assert_uint_eq(n, 2);
	/* A success ends it, once. */
	ck_assert(outage_ended(&o, 125500, &failed, &ms));
	ck_assert_uint_eq(failed, 52);
	ck_assert_uint_eq(ms, 124500);
	ck_assert(!outage_ended(&o, 126000, &failed, &ms));
	ck_assert_uint_eq(failed, 0);
	/* The next failure starts a new one, said in full. */
	ck_assert_int_eq(outage_failed(&o, 130000, &n), OUTAGE_FIRST);
	/* A clock at 0 starts one too. */
	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(outage_failed(&o, 0, &n), OUTAGE_FIRST);
	ck_assert_int_eq(outage_failed(&o, 1, &n), OUTAGE_QUIET);
}
END_TEST

static Suite *
sinkreply_suite(void)
{
	Suite	*s = suite_create("sinkreply");
	TCase	*tc = tcase_create("verdict");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc,
	    a_full_success_acknowledges_every_record_and_grows_the_window);
	tcase_add_test(tc, records_failing_one_by_one_are_resent_or_refused);
	tcase_add_test(tc, retriable_codes_decide_what_is_resent);
	tcase_add_test(tc, aimd_follows_the_share_throttled);
	tcase_add_test(tc, a_garbage_body_acknowledges_nothing);
	tcase_add_test(tc, a_reply_one_record_short_acknowledges_nothing);
	tcase_add_test(tc, a_reply_in_another_format_acknowledges_nothing);
	tcase_add_test(tc, protobuf_refusals_are_told_apart);
	tcase_add_test(tc, auto_reformats_a_refused_request);
	tcase_add_test(tc, request_errors_follow_the_table);
	tcase_add_test(tc, a_split_halves_until_one_record_is_dead_lettered);
	tcase_add_test(tc, refused_keys_being_renewed_are_resent);
	tcase_add_test(tc, no_reply_is_retried_and_uncertain);
	suite_add_tcase(s, tc);
	tc = tcase_create("outage");
	tcase_add_test(tc, outage_says_first_then_a_minute_then_the_end);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(sinkreply_suite());
}
