/*
 * Loop-level tests of a flow (agent/flow.c): the real libuv loop, real
 * files in a temp directory, the real files/, records/ and sink/ layers,
 * and a fake transport (disapi_set_transport) in place of HTTP, as
 * check_sink has: every request the sink sends is captured and answered by
 * the case from a uv timer, never inside the submit.  Covered: a flow
 * reads its file and hands the records to the sink; an offset is
 * committed only once the request carrying it is acknowledged (an error
 * reply moves nothing); a stop sends what is batched and leaves nothing
 * open; a file deleted while open is read to its end through its
 * descriptor and closed once committed; a reload's handover, where the
 * successor reads on from the committed offset on the descriptor it
 * adopts, sending nothing twice; a whole file (isFileAppendable = false)
 * sent once quiet, its tailer dropped once delivered and the file cleaned
 * up once a save has its mark.
 *
 * Every case ends with the flow freed and tu_loop_close(), which fails
 * the case when a handle is left open or uv_loop_close() is not 0.  Cases
 * wait for conditions (requests sent, an offset committed) under a
 * watchdog, never for time.
 */
#include "config.h"

#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/evp.h>
#include <uv.h>

#include "agent/flow.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/util.h"
#include "conf/conf.h"
#include "dis/disapi.h"
#include "dis/http.h"
#include "files/files.h"
#include "state/registry.h"
#include "testutil.h"

#define WATCHDOG_MS	15000
#define MAX_REQS	64

/* One request the sink sent through the fake transport. */
struct req {
	char		*body;
	size_t		 bodylen;
	http_done_cb	 cb;
	void		*arg;
	bool		 answered;
};

/* A scripted answer waiting for the timer. */
struct answer {
	size_t		 req;
	struct http_response r;
	char		*body;
	struct answer	*next;
};

enum wait_for {
	W_REQS, W_OFFSET, W_ANSWERED, W_QUIET, W_READ, W_UNTRACKED, W_CLEANED,
};

static struct {
	uv_loop_t	 loop;
	char		 dir[256];
	char		 logs[PATH_MAX];
	char		 log[PATH_MAX];	/* logs/app.log */
	struct conf	*conf;
	struct disapi	*api;
	struct registry	*reg;
	struct mem_budget mem;
	struct flow	*flow;
	struct req	 reqs[MAX_REQS];
	size_t		 nreqs;
	uv_timer_t	 answer_timer;
	struct answer	*answers;	/* FIFO */
	unsigned	 settled;	/* FLOW_SETTLED events */
	unsigned	 halts;
	struct stat	 st;		/* of app.log when it was written */
	enum wait_for	 wait;
	uint64_t	 want;
	bool		 reached;
} h;

/* --- waiting ------------------------------------------------------------ */

/* The committed offset of app.log, UINT64_MAX when it has no entry. */
static uint64_t
committed(void)
{
	struct reg_entry *e;

	e = registry_find(h.reg, "app", (uint64_t)h.st.st_dev,
	    (uint64_t)h.st.st_ino);
	return e != NULL ? e->offset : UINT64_MAX;
}

static bool
reached(void)
{
	switch (h.wait) {
	case W_REQS:
		return h.nreqs >= h.want;
	case W_OFFSET:
		return committed() == h.want;
	case W_ANSWERED:
		return h.answers == NULL;
	case W_QUIET:
		return h.answers == NULL && flow_quiet(h.flow);
	case W_READ:
		return flow_metrics(h.flow)->records_read >= h.want;
	case W_UNTRACKED:
		return flow_metrics(h.flow)->files_tracked == 0;
	case W_CLEANED:
		return access(h.log, F_OK) != 0;
	}
	return false;
}

/* Called wherever the condition may have changed. */
static void
update(void)
{
	h.reached = reached();
}

/* A timer that re-evaluates conditions no callback reports (the files a
 * rescan drops): every few ms while a case waits for one. */
static uv_timer_t	 poll_timer;

static void
on_poll(uv_timer_t *t)
{
	(void)t;
	update();
}

static void
wait_until(enum wait_for w, uint64_t want, const char *what)
{
	h.wait = w;
	h.want = want;
	update();
	if (w == W_UNTRACKED || w == W_OFFSET || w == W_READ ||
	    w == W_CLEANED)
		uv_timer_start(&poll_timer, on_poll, 5, 5);
	ck_assert_msg(tu_run_until(&h.loop, &h.reached, WATCHDOG_MS),
	    "waited %d ms for %s (%zu requests, committed %ju)", WATCHDOG_MS,
	    what, h.nreqs, (uintmax_t)committed());
	uv_timer_stop(&poll_timer);
}

static void
wait_reqs(size_t n)
{
	wait_until(W_REQS, n, "requests");
}

static void
wait_offset(uint64_t off)
{
	wait_until(W_OFFSET, off, "the committed offset");
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
	q->body = xmalloc(r->bodylen + 1);
	memcpy(q->body, r->body != NULL ? r->body : "", r->bodylen);
	q->body[r->bodylen] = '\0';
	q->bodylen = r->bodylen;
	q->cb = cb;
	q->arg = arg;
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
		a->r.body = a->body;
		a->r.bodylen = a->body != NULL ? strlen(a->body) : 0;
		q->cb(&a->r, q->arg);
		free(a->body);
		free(a);
	}
	update();
}

static void
queue(size_t i, enum http_result result, long status, const char *body)
{
	struct answer	*a, **pp;

	ck_assert_uint_lt(i, h.nreqs);
	ck_assert_msg(!h.reqs[i].answered, "request %zu answered twice", i);
	a = xcalloc(1, sizeof(*a));
	a->req = i;
	a->r.result = result;
	a->r.status = status;
	a->r.seconds = 0.01;
	a->r.error = result != HTTP_OK ? "cancelled" : NULL;
	a->body = body != NULL ? xstrdup(body) : NULL;
	for (pp = &h.answers; *pp != NULL; pp = &(*pp)->next)
		;
	*pp = a;
	uv_timer_start(&h.answer_timer, on_answer_timer, 0, 0);
	update();
}

/* Every record of request i acknowledged. */
static void
reply_ok(size_t i)
{
	json_error_t	 err;
	json_t		*root;
	struct buf	 b;
	size_t		 k, n;

	root = json_loadb(h.reqs[i].body, h.reqs[i].bodylen, 0, &err);
	ck_assert_msg(root != NULL, "request %zu: %s", i, err.text);
	n = json_array_size(json_object_get(root, "records"));
	json_decref(root);
	buf_init(&b);
	buf_addstr(&b, "{\"records\":[");
	for (k = 0; k < n; k++)
		buf_printf(&b, "%s{\"partition_id\":\"shardId-0000000000\","
		    "\"sequence_number\":\"%zu\"}", k ? "," : "", k);
	buf_addstr(&b, "],\"failed_record_count\":0}");
	queue(i, HTTP_OK, 200, b.data);
	buf_cleanup(&b);
}

/* Request i refused by the endpoint as a whole (retried later). */
static void
reply_500(size_t i)
{
	queue(i, HTTP_OK, 500, "{\"errorCode\":\"DIS.5000\","
	    "\"message\":\"internal error\"}");
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
 * The records of request i, decoded, separated by blanks ("a b");
 * static, valid until the next call.
 */
static const char *
records_of(size_t i)
{
	static char	 out[4096];
	json_error_t	 err;
	json_t		*root, *r;
	const char	*data;
	char		 raw[256];
	size_t		 k, n, used = 0;

	ck_assert_uint_lt(i, h.nreqs);
	root = json_loadb(h.reqs[i].body, h.reqs[i].bodylen, 0, &err);
	ck_assert_msg(root != NULL, "request %zu: %s", i, err.text);
	out[0] = '\0';
	json_array_foreach(json_object_get(root, "records"), k, r) {
		data = json_string_value(json_object_get(r, "data"));
		ck_assert_ptr_nonnull(data);
		n = unbase64(data, raw, sizeof(raw) - 1);
		used += (size_t)snprintf(out + used, sizeof(out) - used,
		    "%s%.*s", k ? " " : "", (int)n, raw);
		ck_assert_uint_lt(used, sizeof(out));
	}
	json_decref(root);
	return out;
}

/* --- the flow ----------------------------------------------------------- */

static void
on_flow_event(struct flow *f, enum flow_event ev, const char *reason,
    void *arg)
{
	(void)f;
	(void)reason;
	(void)arg;
	if (ev == FLOW_SETTLED)
		h.settled++;
	else if (ev == FLOW_HALTED)
		h.halts++;
	update();
}

/* logs/app.log holds text; its identity is noted for committed(). */
static void
write_log(const char *text)
{
	tu_write_str(h.log, text);
	ck_assert_int_eq(stat(h.log, &h.st), 0);
}

/* text appended to logs/app.log, as a logger writes. */
static void
append_log(const char *text)
{
	FILE	*fp = fopen(h.log, "a");

	ck_assert_ptr_nonnull(fp);
	ck_assert_int_ge(fputs(text, fp), 0);
	ck_assert_int_eq(fclose(fp), 0);
}

static void
setup(void)
{
	memset(&h, 0, sizeof(h));
	ck_assert_int_eq(uv_loop_init(&h.loop), 0);
	uv_timer_init(&h.loop, &h.answer_timer);
	uv_timer_init(&h.loop, &poll_timer);
	tu_tmpdir(h.dir, sizeof(h.dir), "check_flow");
	tu_path(h.logs, sizeof(h.logs), h.dir, "logs");
	ck_assert_int_eq(mkdir(h.logs, 0755), 0);
	tu_path(h.log, sizeof(h.log), h.logs, "app.log");
	rand_seed(20261201);
}

/*
 * The conf of one flow over the .log files of logs/, READY at once (streamId), one
 * request at a time, max records a request, retried after 1..10 ms, with
 * the extra flow lines; h.api with the fake transport, h.reg.
 */
static void
configure(int max, const char *extra)
{
	char	 ini[PATH_MAX], state[PATH_MAX], err[512], *text;

	tu_path(ini, sizeof(ini), h.dir, "agent.ini");
	tu_path(state, sizeof(state), h.dir, "state.json");
	/* The responder speaks JSON. */
	text = xasprintf("[agent]\nregion = cn-north-4\nprojectId = p1\n"
	    "body.serialize.type = json\n"
	    "ak = AK\nsk = SK\ncheckpointFile = %s\n"
	    "deadLetterFile = %s/dead.jsonl\nspoolDirectory = %s/spool\n"
	    "[flow:app]\nDISStream = s1\nstreamId = sid1\n"
	    "filePattern = %s/*.log\nmaxInFlightRequests = 1\n"
	    "maxBufferSizeRecords = %d\n%s"
	    "retryInitialBackoffMillis = 1\nretryMaxBackoffMillis = 10\n"
	    "rescanIntervalMillis = 100\n%s", state, h.dir, h.dir, h.logs,
	    max, strstr(extra, "maxBufferAgeMillis") != NULL ? "" :
	    "maxBufferAgeMillis = 100\n", extra);
	tu_write_str(ini, text);
	free(text);
	ck_assert_int_eq(chmod(ini, 0600), 0);	/* it holds sk */
	ck_assert_msg(conf_load(ini, &h.conf, err, sizeof(err)) == 0, "%s",
	    err);
	h.api = disapi_new(NULL, h.conf);
	disapi_set_transport(h.api, fake_submit, NULL);
	h.reg = registry_new(state);
	mem_set_limit(&h.mem, (size_t)h.conf->max_memory_bytes);
}

static struct flow *
new_flow(void)
{
	return flow_new(&h.loop, h.conf, &h.conf->flows[0], h.api, h.reg,
	    &h.mem, false, on_flow_event, NULL);
}

/* configure() and a started flow. */
static void
start(int max, const char *extra)
{
	configure(max, extra);
	h.flow = new_flow();
	ck_assert_int_eq(flow_start(h.flow), 0);
}

/*
 * As the agent stops a flow: stop, wait for what is on the wire (every
 * request answered by then), cancel, free.
 */
static void
stop_flow(void)
{
	flow_stop(h.flow);
	wait_until(W_QUIET, 0, "the flow quiet");
	flow_cancel(h.flow);
	flow_free(h.flow);
	h.flow = NULL;
}

/* Cancel with requests unanswered: the transport ends them, as
 * http_close does, then the flow goes. */
static void
cancel_flow(struct flow *f)
{
	size_t	 i;

	flow_cancel(f);
	for (i = 0; i < h.nreqs; i++)
		if (!h.reqs[i].answered)
			queue(i, HTTP_ERR_CANCELLED, 0, NULL);
	wait_until(W_ANSWERED, 0, "the cancelled requests ended");
	flow_free(f);
}

static void
teardown(void)
{
	size_t	 i;

	if (h.flow != NULL)
		cancel_flow(h.flow);
	disapi_free(h.api);
	registry_free(h.reg);
	conf_free(h.conf);
	uv_close((uv_handle_t *)&h.answer_timer, NULL);
	uv_close((uv_handle_t *)&poll_timer, NULL);
	tu_loop_close(&h.loop);
	for (i = 0; i < h.nreqs; i++)
		free(h.reqs[i].body);
	tu_rmtree(h.dir);
}

/* --- cases -------------------------------------------------------------- */

START_TEST(reads_its_file_and_hands_the_records_to_the_sink)
{
	write_log("a1\na2\na3\na4\na5\n");
	start(3, "");
	wait_reqs(1);
	ck_assert_str_eq(records_of(0), "a1 a2 a3");
	reply_ok(0);
	/* The window opens: the rest goes once its batch is old enough. */
	wait_reqs(2);
	ck_assert_str_eq(records_of(1), "a4 a5");
	reply_ok(1);
	wait_offset(15);
	ck_assert_uint_eq(flow_metrics(h.flow)->records_read, 5);
	ck_assert_uint_eq(flow_metrics(h.flow)->bytes_read, 10); /* no \n */
	/* Growth is read too; a partial line waits for its delimiter. */
	append_log("a6\na7\na8\npart");
	wait_reqs(3);
	ck_assert_str_eq(records_of(2), "a6 a7 a8");
	reply_ok(2);
	wait_offset(24);
	stop_flow();
	ck_assert_uint_eq(h.nreqs, 3);
	ck_assert_uint_eq(h.halts, 0);
}
END_TEST

/*
 * Reads come in passes (readCoalesceMillis reads a window's lines at
 * once): a batch that one more pass like the last would overflow goes
 * out at the end of its pass, not a pass later, when its oldest record
 * would have waited two windows.  Here passes of 4 records, batches of
 * 10, an age timer a minute away: the second pass sends 8.
 */
START_TEST(a_batch_the_next_pass_would_overflow_goes_at_once)
{
	write_log("");
	start(10, "maxBufferAgeMillis = 60000\n");
	append_log("b1\nb2\nb3\nb4\n");
	wait_until(W_READ, 4, "the first pass read");
	ck_assert_uint_eq(h.nreqs, 0);
	append_log("b5\nb6\nb7\nb8\n");
	wait_reqs(1);
	ck_assert_str_eq(records_of(0), "b1 b2 b3 b4 b5 b6 b7 b8");
	reply_ok(0);
	wait_offset(24);
	stop_flow();
	ck_assert_uint_eq(h.nreqs, 1);
}
END_TEST

START_TEST(commits_only_what_is_acknowledged)
{
	write_log("b1\nb2\nb3\nb4\n");
	start(2, "");
	wait_reqs(1);
	ck_assert_str_eq(records_of(0), "b1 b2");
	/* Read and on the wire: tracked, but nothing committed. */
	ck_assert_uint_eq(committed(), 0);
	reply_500(0);
	wait_reqs(2);	/* the same batch again, after its backoff */
	ck_assert_str_eq(records_of(1), "b1 b2");
	ck_assert_uint_eq(committed(), 0);
	reply_ok(1);
	wait_offset(6);
	wait_reqs(3);
	ck_assert_str_eq(records_of(2), "b3 b4");
	ck_assert_uint_eq(committed(), 6);
	reply_ok(2);
	wait_offset(12);
	stop_flow();
	ck_assert_uint_eq(h.nreqs, 3);
}
END_TEST

START_TEST(stop_sends_what_is_batched_and_leaves_nothing_open)
{
	/* Two records, a batch of ten: only its age or a stop sends it. */
	write_log("c1\nc2\n");
	start(10, "maxBufferAgeMillis = 900000\n");
	wait_until(W_READ, 2, "both records read");
	ck_assert_uint_eq(h.nreqs, 0);
	flow_stop(h.flow);
	wait_reqs(1);
	ck_assert_str_eq(records_of(0), "c1 c2");
	ck_assert(!flow_quiet(h.flow));
	reply_ok(0);
	wait_until(W_QUIET, 0, "the flow quiet");
	ck_assert_uint_eq(committed(), 6);
	/* Stopped: what is written now is not read. */
	append_log("c3\n");
	flow_cancel(h.flow);
	flow_free(h.flow);
	h.flow = NULL;
	ck_assert_uint_eq(h.nreqs, 1);
	/* teardown: tu_loop_close fails on any handle left open */
}
END_TEST

START_TEST(cancel_with_requests_on_the_wire_commits_nothing)
{
	write_log("d1\nd2\n");
	start(2, "");
	wait_reqs(1);
	cancel_flow(h.flow);
	h.flow = NULL;
	ck_assert_uint_eq(committed(), 0);
}
END_TEST

START_TEST(a_file_deleted_while_open_is_read_to_its_end)
{
	write_log("e1\ne2\ne3\ne4\ne5\ne6\n");
	start(2, "");
	wait_reqs(1);
	ck_assert_str_eq(records_of(0), "e1 e2");
	ck_assert_int_eq(unlink(h.log), 0);
	reply_ok(0);
	wait_reqs(2);
	ck_assert_str_eq(records_of(1), "e3 e4");
	reply_ok(1);
	wait_reqs(3);
	ck_assert_str_eq(records_of(2), "e5 e6");
	reply_ok(2);
	wait_offset(18);
	/* Committed and quiet between two rescans: closed. */
	wait_until(W_UNTRACKED, 0, "the deleted file closed");
	stop_flow();
	ck_assert_uint_eq(h.nreqs, 3);
}
END_TEST

START_TEST(reload_handover_reads_on_from_the_committed_offset)
{
	struct files_handover *ho;
	struct flow	*next;

	write_log("f1\nf2\nf3\nf4\nf5\nf6\n");
	start(2, "");
	wait_reqs(1);
	ck_assert_str_eq(records_of(0), "f1 f2");
	ck_assert_int_eq(unlink(h.log), 0);	/* only its descriptor has it */
	/* The reload: the old flow stops reading and drains... */
	flow_stop(h.flow);
	reply_ok(0);
	/* (the batch it had filled goes out as it drains) */
	wait_reqs(2);
	ck_assert_str_eq(records_of(1), "f3 f4");
	reply_ok(1);
	wait_until(W_QUIET, 0, "the old flow quiet");
	ck_assert_uint_eq(committed(), 12);
	/* ...then hands its descriptors to its successor. */
	flow_cancel(h.flow);
	ho = flow_hand_over(h.flow);
	ck_assert_ptr_nonnull(ho);
	ck_assert_uint_eq(files_handover_count(ho), 1);
	next = new_flow();
	flow_adopt(next, ho);
	flow_free(h.flow);
	h.flow = next;
	ck_assert_int_eq(flow_start(h.flow), 0);
	wait_reqs(3);
	ck_assert_str_eq(records_of(2), "f5 f6");
	reply_ok(2);
	wait_offset(18);
	stop_flow();
	ck_assert_uint_eq(h.nreqs, 3);
}
END_TEST

START_TEST(a_whole_file_is_sent_once_quiet_then_dropped_and_cleaned_up)
{
	char	 done[PATH_MAX], *text;

	write_log("w1\nw2\nw3");
	start(10, "isFileAppendable = false\nmaxFileCheckingMillis = 100\n");
	wait_reqs(1);
	/* Whole: its last record goes without a delimiter. */
	ck_assert_str_eq(records_of(0), "w1 w2 w3");
	ck_assert_uint_eq(flow_metrics(h.flow)->files_tracked, 1);
	ck_assert_uint_eq(flow_metrics(h.flow)->whole_in_progress, 1);
	reply_ok(0);
	/* Delivered: wholefile has files.c drop its tailer. */
	wait_until(W_UNTRACKED, 0, "the delivered file's tailer dropped");
	ck_assert_uint_eq(flow_metrics(h.flow)->files_done, 1);
	ck_assert_uint_eq(committed(), 8);
	/* Cleaned up (renamed with fileSuffix) only once a save has it. */
	ck_assert_int_eq(access(h.log, F_OK), 0);
	ck_assert_int_eq(registry_save(h.reg, true), 0);
	flow_saved(h.flow);
	wait_until(W_CLEANED, 0, "the delivered file cleaned up");
	tu_path(done, sizeof(done), h.logs, "app.log.COMPLETED");
	text = tu_slurp(done, NULL);
	ck_assert_str_eq(text, "w1\nw2\nw3");
	free(text);
	stop_flow();
	ck_assert_uint_eq(h.nreqs, 1);
}
END_TEST

static Suite *
flow_suite(void)
{
	Suite	*s = suite_create("flow");
	TCase	*tc = tcase_create("loop");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, reads_its_file_and_hands_the_records_to_the_sink);
	tcase_add_test(tc, a_batch_the_next_pass_would_overflow_goes_at_once);
	tcase_add_test(tc, commits_only_what_is_acknowledged);
	tcase_add_test(tc, stop_sends_what_is_batched_and_leaves_nothing_open);
	tcase_add_test(tc, cancel_with_requests_on_the_wire_commits_nothing);
	tcase_add_test(tc, a_file_deleted_while_open_is_read_to_its_end);
	tcase_add_test(tc, reload_handover_reads_on_from_the_committed_offset);
	tcase_add_test(tc,
	    a_whole_file_is_sent_once_quiet_then_dropped_and_cleaned_up);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	log_setup(LOG_LVL_WARN, false);
	return tu_run(flow_suite());
}
