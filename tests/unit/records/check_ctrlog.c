/*
 * Unit tests for container log files: the CRI and Docker line decoders
 * (records/ctrlog.c), the framer's container step (records/framer_ctr.c:
 * partial lines joined per stream, exact offsets, a record held back
 * before the other stream's partial lines, malformed lines shipped as
 * they are) and what a path says of its container (conf/ctrconf.c).
 * Lines are in the runtimes' real formats.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "base/util.h"
#include "conf/conf.h"
#include "conf/ctrconf.h"
#include "records/ctrlog.h"
#include "records/framer.h"
#include "records/keyid.h"
#include "state/registry.h"
#include "tail/skipplan.h"
#include "tail/tailer.h"
#include "testutil.h"

#define T	"2026-12-07T10:00:00.123456789Z"

/* --- the decoders ------------------------------------------------------- */

START_TEST(cri_full_and_partial)
{
	struct ctrlog_line c;
	struct buf	 s;
	const char	*f = T " stdout F hello world";
	const char	*p = T " stderr P part: one ";
	const char	*e = T " stdout F";

	buf_init(&s);
	ck_assert_int_eq(ctrlog_decode(CTRLOG_CRI, f, strlen(f), &s, &c), 0);
	ck_assert_str_eq(c.time, T);
	ck_assert_int_eq(c.stream, CTRLOG_STDOUT);
	ck_assert(!c.partial);
	ck_assert_uint_eq(c.len, 11);
	ck_assert(memcmp(c.text, "hello world", 11) == 0);
	ck_assert_int_eq(ctrlog_decode(CTRLOG_AUTO, p, strlen(p), &s, &c), 0);
	ck_assert_int_eq(c.stream, CTRLOG_STDERR);
	ck_assert(c.partial);
	ck_assert_uint_eq(c.len, 10);	/* its blanks are the text's */
	ck_assert_int_eq(ctrlog_decode(CTRLOG_CRI, e, strlen(e), &s, &c), 0);
	ck_assert_uint_eq(c.len, 0);
	buf_cleanup(&s);
}
END_TEST

START_TEST(cri_malformed)
{
	static const char *const bad[] = {
		"plain text from somewhere",
		T " stdin F x",
		T " stdout X x",
		T " stdout FF x",
		T,
		"",
	};
	struct ctrlog_line c;
	struct buf	 s;
	size_t		 i;

	buf_init(&s);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(ctrlog_decode(CTRLOG_CRI, bad[i], strlen(bad[i]),
		    &s, &c) == -EINVAL, "%s", bad[i]);
	buf_cleanup(&s);
}
END_TEST

START_TEST(docker_lines)
{
	struct ctrlog_line c;
	struct buf	 s;
	const char	*f = "{\"log\":\"a \\\"q\\\" \\u00e9\\n\",\"stream\":"
			    "\"stderr\",\"time\":\"2026-12-07T10:00:00.1Z\"}";
	const char	*p = "{\"log\":\"16k of it\",\"stream\":\"stdout\","
			    "\"time\":\"2026-12-07T10:00:00.2Z\"}";
	const char	*bad = "{\"log\":\"x\\n\",\"stream\":\"stdout\"}";

	buf_init(&s);
	ck_assert_int_eq(ctrlog_decode(CTRLOG_AUTO, f, strlen(f), &s, &c), 0);
	ck_assert_int_eq(c.stream, CTRLOG_STDERR);
	ck_assert(!c.partial);
	ck_assert_uint_eq(c.len, strlen("a \"q\" \xc3\xa9"));
	ck_assert(memcmp(c.text, "a \"q\" \xc3\xa9", c.len) == 0);
	ck_assert_str_eq(c.time, "2026-12-07T10:00:00.1Z");
	ck_assert_int_eq(ctrlog_decode(CTRLOG_DOCKER, p, strlen(p), &s, &c),
	    0);
	ck_assert(c.partial);
	ck_assert_int_eq(ctrlog_decode(CTRLOG_DOCKER, bad, strlen(bad), &s,
	    &c), -EINVAL);
	ck_assert_int_eq(ctrlog_decode(CTRLOG_DOCKER, "{\"log\":", 7, &s, &c),
	    -EINVAL);
	buf_cleanup(&s);
}
END_TEST

START_TEST(json_string_escapes)
{
	struct buf	 b;

	buf_init(&b);
	ctrlog_json_string(&b, "a\"b\\c\n\t\x01\xff\xc3\xa9", 11);
	ck_assert_str_eq(b.data, "\"a\\\"b\\\\c\\n\\t\\u0001\\ufffd\xc3\xa9\"");
	buf_reset(&b);
	ctrlog_json_record(&b, T, CTRLOG_STDERR, "x", 1);
	ck_assert_str_eq(b.data, "{\"time\":\"" T "\",\"stream\":\"stderr\","
	    "\"log\":\"x\"}");
	buf_cleanup(&b);
}
END_TEST

/* --- the framer's container step ---------------------------------------- */

struct rec {
	char		 data[512];
	uint64_t	 start;
	uint64_t	 end;
	bool		 raw;
	bool		 held;		/* framer_record_held: its own bytes */
	uint64_t	 own_start;
	uint64_t	 own_end;
};

struct col {
	struct framer	*fr;
	struct rec	 r[32];
	size_t		 n;
	long		 refuse;	/* refuse this many calls first */
};

static int
collect(void *arg, const char *data, size_t len, uint64_t start,
    uint64_t end)
{
	struct col	*c = arg;
	struct rec	*r = &c->r[c->n];

	ck_assert_uint_le(start, end);
	if (c->refuse > 0) {
		c->refuse--;
		return 1;
	}
	ck_assert_uint_lt(len, sizeof(r->data));
	memcpy(r->data, data, len);
	r->data[len] = '\0';
	r->start = start;
	r->end = end;
	r->raw = framer_record_raw(c->fr);
	r->held = framer_record_held(c->fr, &r->own_start, &r->own_end);
	c->n++;
	return 0;
}

static struct framer *
ctr_framer_preset(int rec, unsigned streams, const char *preset)
{
	struct framer_opts o;
	struct framer	*fr;
	char		 err[128];

	memset(&o, 0, sizeof(o));
	o.preset = preset;
	o.delim = '\n';
	o.container = CTRLOG_AUTO;
	o.streams = streams;
	o.ctr_record = rec;
	ck_assert_int_eq(framer_new(&o, &fr, err, sizeof(err)), 0);
	return fr;
}

static struct framer *
ctr_framer(int rec, unsigned streams)
{
	return ctr_framer_preset(rec, streams, NULL);
}

/* A long line cut by the runtime: P, P, F joined, offsets exact. */
START_TEST(partials_joined)
{
	const char	*in = T " stdout P aaa\n" T " stdout P bbb\n"
			    T " stdout F ccc\n" T " stdout F next\n";
	struct framer_state st;
	struct col	 c = { 0 };
	size_t		 n = strlen(in), l1 = strlen(T " stdout P aaa\n");

	c.fr = ctr_framer(CTRLOG_MESSAGE, 0);
	framer_state_init(&st, c.fr, true);
	/* The partials alone: consumed, nothing sent, pending from 0. */
	ck_assert_uint_eq(framer_feed(c.fr, &st, in, 2 * l1, 0, 1000, collect,
	    &c), 2 * l1);
	ck_assert_uint_eq(c.n, 0);
	ck_assert(framer_pending(&st));
	ck_assert_uint_eq(framer_pending_start(&st), 0);
	ck_assert_uint_eq(framer_feed(c.fr, &st, in + 2 * l1, n - 2 * l1,
	    2 * l1, 1000, collect, &c), n - 2 * l1);
	ck_assert_uint_eq(c.n, 2);
	ck_assert_str_eq(c.r[0].data, "aaabbbccc");
	ck_assert_uint_eq(c.r[0].start, 0);
	ck_assert_uint_eq(c.r[0].end, 3 * l1);
	ck_assert_str_eq(c.r[1].data, "next");
	ck_assert_uint_eq(c.r[1].start, 3 * l1);
	ck_assert_uint_eq(st.joined, 1);
	ck_assert(!framer_pending(&st));
	framer_state_cleanup(&st);
	framer_free(c.fr);
}
END_TEST

/*
 * stdout's partial line waits while a whole stderr line comes: the stderr
 * record must not end past the partial's start, or its acknowledgement
 * would commit past it and a restart would lose it.
 */
START_TEST(interleaved_streams_hold_back)
{
	const char	*a = T " stdout P first half ";
	const char	*b = T " stderr F an error";
	const char	*d = T " stdout F second half";
	char		 in[512];
	struct framer_state st;
	struct col	 c = { 0 };
	size_t		 la = strlen(a) + 1, lb = strlen(b) + 1;
	size_t		 n;

	n = (size_t)snprintf(in, sizeof(in), "%s\n%s\n%s\n", a, b, d);
	c.fr = ctr_framer(CTRLOG_MESSAGE, 0);
	framer_state_init(&st, c.fr, true);
	ck_assert_uint_eq(framer_feed(c.fr, &st, in, n, 100, 1000, collect,
	    &c), n);
	ck_assert_uint_eq(c.n, 2);
	ck_assert_str_eq(c.r[0].data, "an error");
	ck_assert_uint_eq(c.r[0].end, 100);	/* held at the partial */
	ck_assert_uint_eq(c.r[0].start, 100);
	/* ... and says where its own bytes are, its identity */
	ck_assert(c.r[0].held);
	ck_assert_uint_eq(c.r[0].own_start, 100 + la);
	ck_assert_uint_eq(c.r[0].own_end, 100 + la + lb);
	ck_assert_str_eq(c.r[1].data, "first half second half");
	ck_assert_uint_eq(c.r[1].start, 100);
	ck_assert_uint_eq(c.r[1].end, 100 + n);
	ck_assert_uint_gt(c.r[1].end, la + lb);
	ck_assert(!c.r[1].held);
	framer_state_cleanup(&st);
	framer_free(c.fr);
}
END_TEST

/*
 * A held record whose lines have another stream's line between them (its
 * bytes are not its own alone) has no identity past the held end: a span
 * of it would say the line between was delivered.  Whole lines of its
 * own that follow one another keep theirs.
 */
START_TEST(held_record_with_a_gap_has_no_own_bytes)
{
	const char	*in =
	    T " stdout P o1 \n"		/* stdout waits from 0 */
	    T " stderr P e1 \n"
	    T " stdout P o2 \n"
	    T " stderr F e2\n"		/* e1 e2: stdout's o2 between */
	    T " stderr P e3 \n"
	    T " stderr F e4\n"		/* e3 e4: contiguous */
	    T " stdout F o3\n";
	const char	*l1 = T " stdout P o1 \n";
	struct framer_state st;
	struct col	 c = { 0 };
	size_t		 n = strlen(in), ll = strlen(l1);

	c.fr = ctr_framer(CTRLOG_MESSAGE, 0);
	framer_state_init(&st, c.fr, true);
	ck_assert_uint_eq(framer_feed(c.fr, &st, in, n, 0, 1000, collect, &c),
	    n);
	ck_assert_uint_eq(c.n, 3);
	ck_assert_str_eq(c.r[0].data, "e1 e2");
	ck_assert_uint_eq(c.r[0].end, 0);
	ck_assert(!c.r[0].held);
	ck_assert_str_eq(c.r[1].data, "e3 e4");
	ck_assert_uint_eq(c.r[1].end, 0);
	ck_assert(c.r[1].held);
	ck_assert_uint_eq(c.r[1].own_start, 4 * ll - 1);
	ck_assert_uint_eq(c.r[1].own_end, 6 * ll - 2);
	ck_assert_str_eq(c.r[2].data, "o1 o2 o3");
	ck_assert(!c.r[2].held);
	framer_state_cleanup(&st);
	framer_free(c.fr);
}
END_TEST

/* A refused joined record is offered again whole, once. */
START_TEST(joined_refused_then_taken)
{
	const char	*in = T " stdout P 12\n" T " stdout F 34\n";
	struct framer_state st;
	struct col	 c = { 0 };
	size_t		 n = strlen(in), l1 = strlen(T " stdout P 12\n");

	c.fr = ctr_framer(CTRLOG_MESSAGE, 0);
	c.refuse = 1;
	framer_state_init(&st, c.fr, true);
	ck_assert_uint_eq(framer_feed(c.fr, &st, in, n, 0, 1000, collect, &c),
	    l1);
	ck_assert_uint_eq(c.n, 0);
	ck_assert_uint_eq(framer_feed(c.fr, &st, in + l1, n - l1, l1, 1000,
	    collect, &c), n - l1);
	ck_assert_uint_eq(c.n, 1);
	ck_assert_str_eq(c.r[0].data, "1234");
	ck_assert_uint_eq(c.r[0].start, 0);
	framer_state_cleanup(&st);
	framer_free(c.fr);
}
END_TEST

START_TEST(json_records_and_malformed)
{
	const char	*in = T " stderr F boom\n" "not a container line\n"
			    "{\"log\":\"d1\",\"stream\":\"stdout\",\"time\":"
			    "\"t1\"}\n{\"log\":\"d2\\n\",\"stream\":\"stdout\","
			    "\"time\":\"t2\"}\n";
	struct framer_state st;
	struct col	 c = { 0 };

	c.fr = ctr_framer(CTRLOG_JSON, 0);
	ck_assert(framer_container_json(c.fr));
	framer_state_init(&st, c.fr, true);
	ck_assert_uint_eq(framer_feed(c.fr, &st, in, strlen(in), 0, 1 << 16,
	    collect, &c), strlen(in));
	ck_assert_uint_eq(c.n, 3);
	ck_assert_str_eq(c.r[0].data, "{\"time\":\"" T "\",\"stream\":"
	    "\"stderr\",\"log\":\"boom\"}");
	ck_assert(!c.r[0].raw);
	ck_assert_str_eq(c.r[1].data, "not a container line");
	ck_assert(c.r[1].raw);
	ck_assert_str_eq(c.r[2].data, "{\"time\":\"t1\",\"stream\":\"stdout\","
	    "\"log\":\"d1d2\"}");
	ck_assert_uint_eq(st.malformed, 1);
	ck_assert_uint_eq(st.joined, 1);
	framer_state_cleanup(&st);
	framer_free(c.fr);
}
END_TEST

START_TEST(streams_selected_and_flush)
{
	const char	*in = T " stderr F e\n" T " stdout F o\n" T
			    " stdout P tail without end\n";
	struct framer_state st;
	struct col	 c = { 0 };

	c.fr = ctr_framer(CTRLOG_MESSAGE, 1u << CTRLOG_STDOUT);
	framer_state_init(&st, c.fr, true);
	ck_assert_uint_eq(framer_feed(c.fr, &st, in, strlen(in), 0, 1000,
	    collect, &c), strlen(in));
	ck_assert_uint_eq(c.n, 1);
	ck_assert_str_eq(c.r[0].data, "o");
	ck_assert(framer_pending(&st));
	/* The quiet flush: the partial as it is, ending past its line. */
	ck_assert_int_eq(framer_flush(c.fr, &st, collect, &c), 0);
	ck_assert_uint_eq(c.n, 2);
	ck_assert_str_eq(c.r[1].data, "tail without end");
	ck_assert_uint_eq(c.r[1].end, strlen(in));
	ck_assert(!framer_pending(&st));
	framer_state_cleanup(&st);
	framer_free(c.fr);
}
END_TEST

/* Joined text past the record limit is cut and counted, not buffered. */
START_TEST(joined_capped)
{
	char		 in[4096];
	struct framer_state st;
	struct col	 c = { 0 };
	size_t		 n = 0;
	int		 i;

	for (i = 0; i < 10; i++)
		n += (size_t)snprintf(in + n, sizeof(in) - n, "%s stdout %c "
		    "0123456789\n", T, i == 9 ? 'F' : 'P');
	c.fr = ctr_framer(CTRLOG_MESSAGE, 0);
	framer_state_init(&st, c.fr, true);
	/* Each line fits the limit (60); their 100 bytes of text do not. */
	ck_assert_uint_eq(framer_feed(c.fr, &st, in, n, 0, 60, collect, &c),
	    n);
	ck_assert_uint_eq(c.n, 1);
	ck_assert_uint_eq(strlen(c.r[0].data), 60);
	ck_assert_uint_eq(st.truncated, 1);
	ck_assert_uint_le(framer_state_memory(&st), 4096);
	framer_state_cleanup(&st);
	framer_free(c.fr);
}
END_TEST

/*
 * multiLinePreset = java per stream: stdout's trace, one of its lines cut
 * into partials, stays whole while stderr lines come between its lines;
 * stderr's records are held before the trace's start until it is sent.
 * A trace at the end waits for quiet (framer_flush).
 */
START_TEST(preset_per_stream)
{
	const char	*in =
	    T " stdout F java.lang.IllegalStateException: order 42\n"
	    T " stderr F warn one\n"
	    T " stdout P \tat com.example.Order.tot\n"
	    T " stdout F al(Order.java:88)\n"
	    T " stderr F warn two\n"
	    T " stdout F \tat java.base/java.lang.Thread.run(Thread.java:833)\n"
	    T " stdout F 2026-12-07 10:00:01 INFO next\n";
	struct framer_state st;
	struct col	 c = { 0 };
	size_t		 n = strlen(in);

	c.fr = ctr_framer_preset(CTRLOG_MESSAGE, 0, "java");
	framer_state_init(&st, c.fr, true);
	ck_assert_uint_eq(framer_feed(c.fr, &st, in, n, 0, 4096, collect, &c),
	    n);
	ck_assert_uint_eq(c.n, 4);
	ck_assert_str_eq(c.r[0].data, "warn one");
	ck_assert_uint_eq(c.r[0].end, 0);
	ck_assert_str_eq(c.r[1].data, "warn two");
	ck_assert_uint_eq(c.r[1].end, 0);
	ck_assert_str_eq(c.r[2].data, "java.lang.IllegalStateException: "
	    "order 42\n\tat com.example.Order.total(Order.java:88)\n\tat "
	    "java.base/java.lang.Thread.run(Thread.java:833)");
	ck_assert_uint_eq(c.r[2].start, 0);
	/* The INFO line closes the trace and is a record of its own. */
	ck_assert_str_eq(c.r[3].data, "2026-12-07 10:00:01 INFO next");
	ck_assert_uint_eq(c.r[3].end, n);
	ck_assert(!framer_pending(&st));
	in = T " stderr F java.io.UncheckedIOException: disk gone\n"
	    T " stderr F \tat com.example.Store.write(Store.java:10)\n";
	ck_assert_uint_eq(framer_feed(c.fr, &st, in, strlen(in), n, 4096,
	    collect, &c), strlen(in));
	ck_assert_uint_eq(c.n, 4);
	ck_assert(framer_pending(&st));
	ck_assert_int_eq(framer_flush(c.fr, &st, collect, &c), 0);
	ck_assert_uint_eq(c.n, 5);
	ck_assert_str_eq(c.r[4].data, "java.io.UncheckedIOException: disk "
	    "gone\n\tat com.example.Store.write(Store.java:10)");
	ck_assert_uint_eq(c.r[4].start, n);
	ck_assert_uint_eq(c.r[4].end, n + strlen(in));
	framer_state_cleanup(&st);
	framer_free(c.fr);
}
END_TEST

/*
 * After a crash, the stdout record that joined the partials landed (its
 * span [100, 300) acknowledged) and the stderr record held back before
 * them did not: the restart reads it again as the empty record [100, 100)
 * (its lines have a gap) or with its own bytes [150, 200) held at 100,
 * which lie inside the span and must still be sent.
 */
START_TEST(held_record_not_skipped_by_span)
{
	struct reg_span	 sp = { 100, 300 };
	struct skipplan	*p = skipplan_new(&sp, 1, NULL, 0, 100);

	ck_assert_ptr_nonnull(p);
	ck_assert(!skipplan_acked(p, 100, 100));
	/* Nor with its own bytes [150, 200): the span is the joined
	 * record's, which takes them along. */
	ck_assert(!skipplan_acked_from(p, 100, 150, 200));
	ck_assert(skipplan_acked(p, 100, 300));
	skipplan_free(p);
}
END_TEST

/*
 * A held record has its own bytes [150, 200) past the committed offset
 * 100 where stdout's partials start: a clean stop saved them as a span,
 * and the restart's read found the record by its own offset.  Skipped by
 * either, it forgets nothing the record after it (stdout's, starting at
 * 100) still needs.
 */
START_TEST(held_record_skipped_by_its_own_bytes)
{
	struct reg_span	 sp = { 150, 200 };
	struct reg_found *f = calloc(2, sizeof(*f));
	struct skipplan	*p;

	ck_assert_ptr_nonnull(f);
	f[0] = (struct reg_found){ 100, keyid_data("o1 o2", 5), 5 };
	f[1] = (struct reg_found){ 150, keyid_data("err", 3), 3 };
	p = skipplan_new(&sp, 1, f, 2, 100);
	ck_assert_ptr_nonnull(p);
	ck_assert(skipplan_acked_from(p, 100, 150, 200));
	ck_assert(!skipplan_acked_from(p, 100, 100, 300));
	ck_assert(skipplan_found_from(p, 100, 150, "err", 3));
	ck_assert(!skipplan_found_from(p, 100, 150, "err", 3));	/* once */
	ck_assert(skipplan_found_from(p, 300, 100, "o1 o2", 5));
	ck_assert(!skipplan_found_left(p));
	skipplan_free(p);
}
END_TEST

/*
 * The tailer keeps a held record's own bytes among its spans once the
 * range it went in is acknowledged (before: nothing is known delivered),
 * and one skipped as delivered at once; until the committed offset
 * passes them.
 */
START_TEST(tailer_keeps_held_bytes_once_acknowledged)
{
	struct framer	*fr = ctr_framer(CTRLOG_MESSAGE, 0);
	struct reg_span	 s[4];
	struct stat	 st;
	struct tailer	*t;
	uint64_t	 a, b;

	memset(&st, 0, sizeof(st));
	t = tailer_new_parked("/nonexistent/0.log", &st, 100, 0, fr);
	a = tailer_push(t, 100);		/* held at 100 */
	tailer_note_held(t, a, 150, 200);
	tailer_note_held(t, a, 200, 230);	/* the next line: one span */
	ck_assert_uint_eq(tailer_nheld(t), 1);
	ck_assert_uint_eq(tailer_spans(t, s, 4), 0);
	tailer_note_held(t, TAILER_HELD_DONE, 300, 340);
	ck_assert_uint_eq(tailer_spans(t, s, 4), 1);
	ck_assert_uint_eq(s[0].start, 300);
	(void)tailer_ack(t, a);
	ck_assert_uint_eq(tailer_committed(t), 100);
	ck_assert_uint_eq(tailer_spans(t, s, 4), 2);
	ck_assert_uint_eq(s[0].start, 150);
	ck_assert_uint_eq(s[0].end, 230);
	b = tailer_push(t, 320);		/* the partials' record */
	ck_assert(tailer_ack(t, b));
	ck_assert_uint_eq(tailer_committed(t), 320);
	ck_assert_uint_eq(tailer_nheld(t), 1);
	ck_assert_uint_eq(tailer_spans(t, s, 4), 1);
	ck_assert_uint_eq(s[0].start, 300);
	tailer_free(t);
	framer_free(fr);
}
END_TEST

/* --- paths and metadata --------------------------------------------------- */

START_TEST(kubelet_paths)
{
	struct ctrconf_meta m;
	struct conf_flow fc;
	struct buf	 b;

	ck_assert(ctrconf_meta_of("/var/log/pods", "/var/log/pods/"
	    "prod_web-7d4b9_0f1e2d3c-aaaa-bbbb/nginx/0.log", &m));
	ck_assert(!m.docker);
	ck_assert_str_eq(m.ns, "prod");
	ck_assert_str_eq(m.pod, "web-7d4b9");
	ck_assert_str_eq(m.uid, "0f1e2d3c-aaaa-bbbb");
	ck_assert_str_eq(m.ctr, "nginx");
	ck_assert(ctrconf_meta_of("/var/log/pods/", "/var/log/pods/"
	    "a_b_c/d/12.log.20261207-100000.gz", &m));
	ck_assert(!ctrconf_meta_of("/var/log/pods", "/var/log/pods/"
	    "ab_c/d/0.log", &m));
	ck_assert(!ctrconf_meta_of("/var/log/pods", "/var/log/pods/"
	    "a_b_c/d/app.log", &m));
	memset(&fc, 0, sizeof(fc));
	fc.ctr_dir = (char *)"/var/log/pods";
	fc.ctr_match = (char *)"prod/*/*, dev/web-*/nginx";
	fc.ctr_exclude = (char *)"*/*/istio-proxy";
	ck_assert(ctrconf_picks(&fc, "/var/log/pods/prod_p_u/c/0.log"));
	ck_assert(!ctrconf_picks(&fc, "/var/log/pods/prod_p_u/c/0.log.1"));
	ck_assert(!ctrconf_picks(&fc,
	    "/var/log/pods/prod_p_u/istio-proxy/0.log"));
	ck_assert(ctrconf_picks(&fc, "/var/log/pods/dev_web-1_u/nginx/3.log"));
	ck_assert(!ctrconf_picks(&fc, "/var/log/pods/dev_api_u/nginx/3.log"));
	buf_init(&b);
	ck_assert(ctrconf_meta_of("/p", "/p/ns_po\x1b[31m_u/c/0.log", &m));
	ctrconf_meta_json(&m, &b);
	ck_assert_str_eq(b.data, ",\"kubernetes\":{\"namespace_name\":\"ns\","
	    "\"pod_name\":\"po\\u001b[31m\",\"pod_id\":\"u\","
	    "\"container_name\":\"c\"}");
	buf_cleanup(&b);
	ck_assert_ptr_null(ctrconf_check_globs("a/b/c, */*/*"));
	ck_assert_ptr_nonnull(ctrconf_check_globs("a/b"));
	ck_assert_ptr_nonnull(ctrconf_check_globs("a/b/c/d"));
}
END_TEST

START_TEST(docker_paths)
{
	char		 dir[] = "/tmp/ctrlogXXXXXX", *sub, *cfg;
	struct ctrconf_meta m;
	struct buf	 b;
	FILE		*fp;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	sub = xasprintf("%s/abc123", dir);
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	cfg = xasprintf("%s/config.v2.json", sub);
	fp = fopen(cfg, "w");
	ck_assert_ptr_nonnull(fp);
	fputs("{\"ID\":\"abc123\",\"Name\":\"/web\\n1\",\"Config\":"
	    "{\"Image\":\"nginx:1.27\"}}", fp);
	fclose(fp);
	free(sub);
	sub = xasprintf("%s/abc123/abc123-json.log", dir);
	ck_assert(ctrconf_meta_of(dir, sub, &m));
	ck_assert(m.docker);
	ck_assert_str_eq(m.ns, "docker");
	ck_assert_str_eq(m.ctr, "web\n1");
	ck_assert_str_eq(m.pod, "web\n1");
	ck_assert_str_eq(m.image, "nginx:1.27");
	buf_init(&b);
	ctrconf_meta_json(&m, &b);
	ck_assert_str_eq(b.data, ",\"docker\":{\"container_id\":\"abc123\","
	    "\"container_name\":\"web\\n1\",\"image\":\"nginx:1.27\"}");
	buf_cleanup(&b);
	free(sub);
	sub = xasprintf("%s/abc123/other-json.log", dir);
	ck_assert(!ctrconf_meta_of(dir, sub, &m));
	free(sub);
	ck_assert_int_eq(unlink(cfg), 0);
	free(cfg);
	sub = xasprintf("%s/abc123", dir);
	ck_assert_int_eq(rmdir(sub), 0);
	free(sub);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

static Suite *
ctrlog_suite(void)
{
	Suite	*s = suite_create("ctrlog");
	TCase	*tc;

	tc = tcase_create("decode");
	tcase_add_test(tc, cri_full_and_partial);
	tcase_add_test(tc, cri_malformed);
	tcase_add_test(tc, docker_lines);
	tcase_add_test(tc, json_string_escapes);
	suite_add_tcase(s, tc);
	tc = tcase_create("framer");
	tcase_add_test(tc, partials_joined);
	tcase_add_test(tc, interleaved_streams_hold_back);
	tcase_add_test(tc, joined_refused_then_taken);
	tcase_add_test(tc, json_records_and_malformed);
	tcase_add_test(tc, streams_selected_and_flush);
	tcase_add_test(tc, joined_capped);
	tcase_add_test(tc, held_record_not_skipped_by_span);
	tcase_add_test(tc, held_record_with_a_gap_has_no_own_bytes);
	tcase_add_test(tc, held_record_skipped_by_its_own_bytes);
	tcase_add_test(tc, tailer_keeps_held_bytes_once_acknowledged);
	tcase_add_test(tc, preset_per_stream);
	suite_add_tcase(s, tc);
	tc = tcase_create("paths");
	tcase_add_test(tc, kubelet_paths);
	tcase_add_test(tc, docker_paths);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(ctrlog_suite());
}
