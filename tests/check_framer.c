/*
 * Unit tests for the record framer: every record checked exactly (data,
 * start and end offsets) for delimiters, CR stripping, empty and header
 * lines, runaway lines and multi-line records, with the bytes offered the
 * way the tailer offers them (windows from the read offset, partial lines
 * offered again), refusals at every record boundary, the bound on the
 * memory a file can make the framer hold, and conversion to UTF-8.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "base/util.h"
#include "records/framer.h"
#include "testutil.h"

#define MAXREC	512
#define BIG	(1u << 20)

/* The Java-style start of a log4j/logback line. */
#define DATE_RE	"^\\d{4}-\\d{2}-\\d{2}"

struct rec {
	char		*data;
	size_t		 len;
	uint64_t	 start;
	uint64_t	 end;
};

/* Collects records; can refuse one call, or every call after a taken one. */
struct col {
	struct rec	 r[MAXREC];
	size_t		 n;
	size_t		 calls;
	long		 refuse_at;	/* call index to refuse, -1: none */
	bool		 refuse_alt;
	bool		 last_refused;
	bool		 refused;	/* since the last drive() */
	size_t		 max_len;	/* longest record seen */
};

static void
col_init(struct col *c)
{
	memset(c, 0, sizeof(*c));
	c->refuse_at = -1;
}

static void
col_free(struct col *c)
{
	size_t	 i;

	for (i = 0; i < c->n; i++)
		free(c->r[i].data);
	c->n = 0;
}

static int
collect(void *arg, const char *data, size_t len, uint64_t start,
    uint64_t end)
{
	struct col	*c = arg;
	struct rec	*r;
	long		 k = (long)c->calls++;

	ck_assert_uint_lt(start, end);
	/* A refusal ends the call: the record is not offered again in it. */
	ck_assert_msg(!c->refused, "callback called after a refusal");
	if (k == c->refuse_at || (c->refuse_alt && !c->last_refused)) {
		c->refused = true;
		c->last_refused = true;
		return 1;
	}
	c->last_refused = false;
	ck_assert_uint_lt(c->n, MAXREC);
	r = &c->r[c->n++];
	r->data = xmalloc(len + 1);
	memcpy(r->data, data, len);
	r->data[len] = '\0';
	r->len = len;
	r->start = start;
	r->end = end;
	if (len > c->max_len)
		c->max_len = len;
	return 0;
}

static void
expect(const struct col *c, size_t i, const char *data, size_t len,
    uint64_t start, uint64_t end)
{
	ck_assert_msg(i < c->n, "record %zu missing (have %zu)", i, c->n);
	ck_assert_msg(c->r[i].len == len && memcmp(c->r[i].data, data,
	    len) == 0, "record %zu is \"%s\" (%zu bytes), want \"%s\"", i,
	    c->r[i].data, c->r[i].len, data);
	ck_assert_msg(c->r[i].start == start && c->r[i].end == end,
	    "record %zu covers [%ju, %ju), want [%ju, %ju)", i,
	    (uintmax_t)c->r[i].start, (uintmax_t)c->r[i].end,
	    (uintmax_t)start, (uintmax_t)end);
}

#define EXPECT(c, i, s, start, end) \
	expect((c), (i), (s), sizeof(s) - 1, (start), (end))

static void
same(const struct col *got, const struct col *want)
{
	size_t	 i;

	ck_assert_uint_eq(got->n, want->n);
	for (i = 0; i < want->n; i++)
		expect(got, i, want->r[i].data, want->r[i].len,
		    want->r[i].start, want->r[i].end);
}

static struct framer *
mk(const struct framer_opts *o)
{
	struct framer	*fr;
	char		 err[256] = "";
	int		 rc;

	rc = framer_new(o, &fr, err, sizeof(err));
	ck_assert_msg(rc == 0, "framer_new: %s", err);
	return fr;
}

static struct framer *
mk_default(void)
{
	struct framer_opts	 o = { .delim = '\n' };

	return mk(&o);
}

/*
 * Offer text[from..len) the way the tailer does: a window of at most win
 * bytes from the read offset, again and again.  Stops at a refusal or when
 * only a partial line is left.  Returns the read offset.  Also checks that
 * the framer and the state never hold more than max + 2 bytes.
 */
static size_t
drive(struct framer *fr, struct framer_state *st, const char *text,
    size_t len, size_t from, size_t win, size_t max, struct col *c)
{
	size_t	 off = from, n, used;

	ck_assert_uint_gt(win, max);
	c->refused = false;
	while (off < len) {
		n = MIN(win, len - off);
		used = framer_feed(fr, st, text + off, n, off, max, collect, c);
		ck_assert_uint_le(used, n);
		ck_assert_uint_le(framer_state_memory(st), max + 2);
		ck_assert_uint_le(framer_memory(fr), max + 2);
		off += used;
		if (c->refused || used == 0)
			break;
	}
	return off;
}

/* drive() to the end through refusals, then flush the pending record. */
static size_t
drive_all(struct framer *fr, struct framer_state *st, const char *text,
    size_t len, size_t win, size_t max, struct col *c)
{
	size_t	 off = 0;
	int	 tries = 0;

	do {
		off = drive(fr, st, text, len, off, win, max, c);
	} while (c->refused);
	while (framer_flush(fr, st, collect, c) != 0) {
		ck_assert_int_lt(++tries, 100);
		c->refused = false;
	}
	ck_assert(!framer_pending(st));
	return off;
}

/* Frame a string in one call with the default cap. */
static size_t
feed_str(struct framer *fr, struct framer_state *st, const char *s,
    struct col *c)
{
	return framer_feed(fr, st, s, strlen(s), 0, BIG, collect, c);
}

START_TEST(lf_lines_become_records_without_newline)
{
	struct framer		*fr = mk_default();
	struct framer_state	 st;
	struct col		 c;

	col_init(&c);
	framer_state_init(&st, fr, true);
	ck_assert_uint_eq(feed_str(fr, &st, "a\nbb\nccc\n", &c), 9);
	ck_assert_uint_eq(c.n, 3);
	EXPECT(&c, 0, "a", 0, 2);
	EXPECT(&c, 1, "bb", 2, 5);
	EXPECT(&c, 2, "ccc", 5, 9);
	ck_assert_uint_eq(st.truncated, 0);
	col_free(&c);
	framer_state_cleanup(&st);
	framer_free(fr);
}
END_TEST

START_TEST(partial_last_line_not_consumed_until_complete)
{
	struct framer		*fr = mk_default();
	struct framer_state	 st;
	struct col		 c;
	const char		*s = "a\nbc\n";
	size_t			 used;

	col_init(&c);
	framer_state_init(&st, fr, true);
	used = framer_feed(fr, &st, s, 4, 0, BIG, collect, &c);
	ck_assert_uint_eq(used, 2);
	ck_assert_uint_eq(c.n, 1);
	EXPECT(&c, 0, "a", 0, 2);
	/* The same bytes again, now with the newline. */
	used = framer_feed(fr, &st, s + 2, 3, 2, BIG, collect, &c);
	ck_assert_uint_eq(used, 3);
	ck_assert_uint_eq(c.n, 2);
	EXPECT(&c, 1, "bc", 2, 5);
	/* Nothing but a partial line: nothing consumed, no record. */
	used = framer_feed(fr, &st, "xyz", 3, 5, BIG, collect, &c);
	ck_assert_uint_eq(used, 0);
	ck_assert_uint_eq(c.n, 2);
	col_free(&c);
	framer_state_cleanup(&st);
	framer_free(fr);
}
END_TEST

START_TEST(crlf_kept_by_default)
{
	struct framer		*fr = mk_default();
	struct framer_state	 st;
	struct col		 c;

	col_init(&c);
	framer_state_init(&st, fr, true);
	ck_assert_uint_eq(feed_str(fr, &st, "a\r\nb\r\n", &c), 6);
	ck_assert_uint_eq(c.n, 2);
	EXPECT(&c, 0, "a\r", 0, 3);
	EXPECT(&c, 1, "b\r", 3, 6);
	col_free(&c);
	framer_state_cleanup(&st);
	framer_free(fr);
}
END_TEST

START_TEST(crlf_stripped_with_strip_cr_only_before_delimiter)
{
	struct framer_opts	 o = { .delim = '\n', .strip_cr = true };
	struct framer		*fr = mk(&o);
	struct framer_state	 st;
	struct col		 c;

	col_init(&c);
	framer_state_init(&st, fr, true);
	ck_assert_uint_eq(feed_str(fr, &st, "a\r\nb\rc\n\r\nd\n", &c), 11);
	ck_assert_uint_eq(c.n, 4);
	EXPECT(&c, 0, "a", 0, 3);
	EXPECT(&c, 1, "b\rc", 3, 7);
	EXPECT(&c, 2, "", 7, 9);
	EXPECT(&c, 3, "d", 9, 11);
	col_free(&c);
	framer_state_cleanup(&st);
	framer_free(fr);
}
END_TEST

START_TEST(keep_delim_leaves_delimiter_in_data)
{
	struct framer_opts	 o = { .delim = '\n', .keep_delim = true };
	struct framer		*fr = mk(&o);
	struct framer_state	 st;
	struct col		 c;

	col_init(&c);
	framer_state_init(&st, fr, true);
	ck_assert_uint_eq(feed_str(fr, &st, "a\n\nb\r\n", &c), 6);
	ck_assert_uint_eq(c.n, 3);
	EXPECT(&c, 0, "a\n", 0, 2);
	EXPECT(&c, 1, "\n", 2, 3);
	EXPECT(&c, 2, "b\r\n", 3, 6);
	col_free(&c);
	framer_state_cleanup(&st);
	framer_free(fr);
}
END_TEST

START_TEST(keep_delim_with_strip_cr_gives_lf)
{
	struct framer_opts	 o = { .delim = '\n', .keep_delim = true,
				    .strip_cr = true };
	struct framer		*fr = mk(&o);
	struct framer_state	 st;
	struct col		 c;

	col_init(&c);
	framer_state_init(&st, fr, true);
	ck_assert_uint_eq(feed_str(fr, &st, "ab\r\nc\n\r\n", &c), 8);
	ck_assert_uint_eq(c.n, 3);
	EXPECT(&c, 0, "ab\n", 0, 4);
	EXPECT(&c, 1, "c\n", 4, 6);
	EXPECT(&c, 2, "\n", 6, 8);
	col_free(&c);
	framer_state_cleanup(&st);
	framer_free(fr);
}
END_TEST

START_TEST(custom_delimiter_pipe_and_newline_is_data)
{
	struct framer_opts	 o = { .delim = '|', .strip_cr = true };
	struct framer		*fr = mk(&o);
	struct framer_state	 st;
	struct col		 c;

	col_init(&c);
	framer_state_init(&st, fr, true);
	/* strip_cr does nothing when the delimiter is not '\n'. */
	ck_assert_uint_eq(feed_str(fr, &st, "a\nb|c\r|d", &c), 7);
	ck_assert_uint_eq(c.n, 2);
	EXPECT(&c, 0, "a\nb", 0, 4);
	EXPECT(&c, 1, "c\r", 4, 7);
	col_free(&c);
	framer_state_cleanup(&st);
	framer_free(fr);
}
END_TEST

START_TEST(custom_delimiter_nul)
{
	struct framer_opts	 o = { .delim = '\0', .keep_delim = true };
	struct framer		*fr = mk(&o);
	struct framer_state	 st;
	struct col		 c;
	static const char	 s[] = "x\0y\nz\0\0w";

	col_init(&c);
	framer_state_init(&st, fr, true);
	ck_assert_uint_eq(framer_feed(fr, &st, s, sizeof(s) - 1, 100, BIG,
	    collect, &c), 7);
	ck_assert_uint_eq(c.n, 3);
	expect(&c, 0, "x\0", 2, 100, 102);
	expect(&c, 1, "y\nz\0", 4, 102, 106);
	expect(&c, 2, "\0", 1, 106, 107);
	col_free(&c);
	framer_state_cleanup(&st);
	framer_free(fr);
}
END_TEST

START_TEST(empty_lines_sent_by_default)
{
	struct framer		*fr = mk_default();
	struct framer_state	 st;
	struct col		 c;

	col_init(&c);
	framer_state_init(&st, fr, true);
	ck_assert_uint_eq(feed_str(fr, &st, "\na\n\n", &c), 4);
	ck_assert_uint_eq(c.n, 3);
	EXPECT(&c, 0, "", 0, 1);
	EXPECT(&c, 1, "a", 1, 3);
	EXPECT(&c, 2, "", 3, 4);
	/* One byte, and nothing at all. */
	ck_assert_uint_eq(framer_feed(fr, &st, "\n", 1, 4, BIG, collect, &c),
	    1);
	ck_assert_uint_eq(framer_feed(fr, &st, NULL, 0, 5, BIG, collect, &c),
	    0);
	ck_assert_uint_eq(c.n, 4);
	EXPECT(&c, 3, "", 4, 5);
	ck_assert_uint_eq(st.empty_skipped, 0);
	col_free(&c);
	framer_state_cleanup(&st);
	framer_free(fr);
}
END_TEST

START_TEST(skip_empty_consumes_but_does_not_send)
{
	struct framer_opts	 o = { .delim = '\n', .skip_empty = true,
				    .strip_cr = true };
	struct framer		*fr = mk(&o);
	struct framer_state	 st;
	struct col		 c;

	col_init(&c);
	framer_state_init(&st, fr, true);
	ck_assert_uint_eq(feed_str(fr, &st, "\na\n\n\r\nb\n\n", &c), 9);
	ck_assert_uint_eq(c.n, 2);
	EXPECT(&c, 0, "a", 1, 3);
	EXPECT(&c, 1, "b", 6, 8);
	ck_assert_uint_eq(st.empty_skipped, 4);
	col_free(&c);
	framer_state_cleanup(&st);
	framer_free(fr);
}
END_TEST

START_TEST(skip_header_lines_from_start_across_feeds)
{
	struct framer_opts	 o = { .delim = '\n', .skip_header = 2 };
	struct framer		*fr = mk(&o);
	struct framer_state	 st;
	struct col		 c;
	const char		*s = "h1\nh2\nd1\nd2\n";

	col_init(&c);
	framer_state_init(&st, fr, true);
	ck_assert_uint_eq(framer_feed(fr, &st, s, 4, 0, BIG, collect, &c), 3);
	ck_assert_uint_eq(c.n, 0);
	ck_assert_uint_eq(framer_feed(fr, &st, s + 3, 9, 3, BIG, collect, &c),
	    9);
	ck_assert_uint_eq(c.n, 2);
	EXPECT(&c, 0, "d1", 6, 9);
	EXPECT(&c, 1, "d2", 9, 12);
	ck_assert_uint_eq(st.header_skipped, 2);
	col_free(&c);
	framer_state_cleanup(&st);
	framer_free(fr);
}
END_TEST

START_TEST(skip_header_lines_not_when_resuming)
{
	struct framer_opts	 o = { .delim = '\n', .skip_header = 2 };
	struct framer		*fr = mk(&o);
	struct framer_state	 st;
	struct col		 c;

	col_init(&c);
	framer_state_init(&st, fr, false);
	ck_assert_uint_eq(feed_str(fr, &st, "d1\nd2\nd3\n", &c), 9);
	ck_assert_uint_eq(c.n, 3);
	EXPECT(&c, 0, "d1", 0, 3);
	EXPECT(&c, 2, "d3", 6, 9);
	ck_assert_uint_eq(st.header_skipped, 0);
	col_free(&c);
	framer_state_cleanup(&st);
	framer_free(fr);
}
END_TEST

/* "a\n", a line of 10 * max 'x', "\nnext\n". */
static char *
runaway_text(size_t max, size_t *len)
{
	size_t	 long_len = 10 * max;
	char	*s;

	*len = 2 + long_len + 6;
	s = xmalloc(*len + 1);
	memcpy(s, "a\n", 2);
	memset(s + 2, 'x', long_len);
	memcpy(s + 2 + long_len, "\nnext\n", 7);
	return s;
}

START_TEST(runaway_line_truncated_then_next_line_intact)
{
	struct framer		*fr = mk_default();
	struct framer_state	 st;
	struct col		 c;
	const size_t		 max = 64;
	size_t			 len, win, off;
	char			*s, want[64];

	s = runaway_text(max, &len);
	memset(want, 'x', max);
	/* Windows from just over a record to several records. */
	for (win = max + 1; win <= 4 * max; win += 13) {
		col_init(&c);
		framer_state_init(&st, fr, true);
		off = drive(fr, &st, s, len, 0, win, max, &c);
		ck_assert_uint_eq(off, len);
		ck_assert(!st.skipping);
		ck_assert_uint_eq(c.n, 3);
		EXPECT(&c, 0, "a", 0, 2);
		expect(&c, 1, want, max, 2, 2 + max);
		EXPECT(&c, 2, "next", len - 5, len);
		ck_assert_uint_eq(st.truncated, 1);
		ck_assert_uint_eq(framer_state_memory(&st), 0);
		ck_assert_uint_eq(framer_memory(fr), 0);
		col_free(&c);
		framer_state_cleanup(&st);
	}
	free(s);
	framer_free(fr);
}
END_TEST

START_TEST(runaway_line_then_feed_last_discards_its_end)
{
	struct framer		*fr = mk_default();
	struct framer_state	 st;
	struct col		 c;
	char			 s[200];

	col_init(&c);
	framer_state_init(&st, fr, true);
	memset(s, 'y', sizeof(s));
	ck_assert_uint_eq(framer_feed(fr, &st, s, 100, 0, 50, collect, &c),
	    100);
	ck_assert(st.skipping);
	ck_assert_int_eq(framer_feed_last(fr, &st, s + 100, 100, 100, 50,
	    collect, &c), 0);
	ck_assert(!st.skipping);
	ck_assert_uint_eq(c.n, 1);
	ck_assert_uint_eq(c.r[0].len, 50);
	ck_assert_uint_eq(c.r[0].end, 50);
	col_free(&c);
	framer_state_cleanup(&st);
	framer_free(fr);
}
END_TEST

START_TEST(line_of_exactly_max_record_is_not_truncated)
{
	struct framer		*fr = mk_default();
	struct framer_state	 st;
	struct col		 c;
	char			 s[33];

	col_init(&c);
	framer_state_init(&st, fr, true);
	memset(s, 'z', 32);
	s[32] = '\n';
	/* max bytes without a delimiter yet: it may still end in time. */
	ck_assert_uint_eq(framer_feed(fr, &st, s, 32, 0, 32, collect, &c), 0);
	ck_assert_uint_eq(c.n, 0);
	ck_assert(!st.skipping);
	ck_assert_uint_eq(framer_feed(fr, &st, s, 33, 0, 32, collect, &c), 33);
	ck_assert_uint_eq(c.n, 1);
	ck_assert_uint_eq(c.r[0].len, 32);
	ck_assert_uint_eq(c.r[0].end, 33);
	ck_assert_uint_eq(st.truncated, 0);
	col_free(&c);
	framer_state_cleanup(&st);
	framer_free(fr);
}
END_TEST

START_TEST(long_line_cut_the_same_when_its_delimiter_is_in_view)
{
	struct framer		*fr = mk_default();
	struct framer_state	 st;
	struct col		 c;
	char			 s[40], want[32];

	col_init(&c);
	framer_state_init(&st, fr, true);
	memset(s, 'z', 33);
	memcpy(s + 33, "\nb\n", 3);
	memset(want, 'z', 32);
	/* One byte over the cap, delimiter and next line in the same call:
	 * the record ends at the cap and the rest of the line is dropped,
	 * as when the bytes arrive one cap at a time. */
	ck_assert_uint_eq(framer_feed(fr, &st, s, 36, 0, 32, collect, &c), 36);
	ck_assert(!st.skipping);
	ck_assert_uint_eq(c.n, 2);
	expect(&c, 0, want, 32, 0, 32);
	EXPECT(&c, 1, "b", 34, 36);
	ck_assert_uint_eq(st.truncated, 1);
	col_free(&c);
	framer_state_cleanup(&st);
	framer_free(fr);
}
END_TEST

START_TEST(keep_delim_never_exceeds_max_record)
{
	struct framer_opts	 o = { .delim = '\n', .keep_delim = true };
	struct framer		*fr = mk(&o);
	struct framer_state	 st;
	struct col		 c;
	char			 s[34];

	col_init(&c);
	framer_state_init(&st, fr, true);
	memset(s, 'z', 32);
	memcpy(s + 32, "\n", 2);
	ck_assert_uint_eq(framer_feed(fr, &st, s, 33, 0, 32, collect, &c), 33);
	ck_assert_uint_eq(c.n, 1);
	ck_assert_uint_eq(c.r[0].len, 32);
	ck_assert_uint_eq(c.r[0].end, 33);
	ck_assert_uint_eq(st.truncated, 1);
	col_free(&c);
	framer_state_cleanup(&st);
	framer_free(fr);
}
END_TEST

static const char java_log[] =
    "2024-01-01 10:00:00 INFO start\n"
    "2024-01-01 10:00:01 ERROR boom\n"
    "java.lang.RuntimeException: x\n"
    "\tat a.b.C.d(C.java:10)\n"
    "\tat a.b.C.e(C.java:20)\n"
    "Caused by: java.io.IOException: y\n"
    "\t... 2 more\n"
    "2024-01-01 10:00:02 INFO done\n";

#define JAVA_L1	"2024-01-01 10:00:00 INFO start"
#define JAVA_L2	"2024-01-01 10:00:01 ERROR boom\n" \
    "java.lang.RuntimeException: x\n" \
    "\tat a.b.C.d(C.java:10)\n" \
    "\tat a.b.C.e(C.java:20)\n" \
    "Caused by: java.io.IOException: y\n" \
    "\t... 2 more"
#define JAVA_L3	"2024-01-01 10:00:02 INFO done"

START_TEST(multiline_java_stack_trace_joined)
{
	struct framer_opts	 o = { .delim = '\n', .multiline = DATE_RE };
	struct framer		*fr = mk(&o);
	struct framer_state	 st;
	struct col		 c;
	size_t			 len = sizeof(java_log) - 1;
	size_t			 l2 = sizeof(JAVA_L1);
	size_t			 l3 = l2 + sizeof(JAVA_L2);

	col_init(&c);
	framer_state_init(&st, fr, true);
	ck_assert_uint_eq(feed_str(fr, &st, java_log, &c), len);
	ck_assert_uint_eq(c.n, 2);
	EXPECT(&c, 0, JAVA_L1, 0, l2);
	EXPECT(&c, 1, JAVA_L2, l2, l3);
	ck_assert(framer_pending(&st));
	ck_assert_uint_eq(framer_pending_start(&st), l3);
	ck_assert_int_eq(framer_flush(fr, &st, collect, &c), 0);
	ck_assert(!framer_pending(&st));
	ck_assert_uint_eq(c.n, 3);
	EXPECT(&c, 2, JAVA_L3, l3, len);
	/* Nothing left: flushing again sends nothing. */
	ck_assert_int_eq(framer_flush(fr, &st, collect, &c), 0);
	ck_assert_uint_eq(c.n, 3);
	col_free(&c);
	framer_state_cleanup(&st);
	framer_free(fr);
}
END_TEST

START_TEST(multiline_keep_delim_and_crlf)
{
	struct framer_opts	 o = { .delim = '\n', .multiline = "^S",
				    .keep_delim = true, .strip_cr = true };
	struct framer		*fr = mk(&o);
	struct framer_state	 st;
	struct col		 c;

	col_init(&c);
	framer_state_init(&st, fr, true);
	ck_assert_uint_eq(feed_str(fr, &st, "S1\r\n a\r\n\r\nS2\r\n", &c), 14);
	ck_assert_int_eq(framer_flush(fr, &st, collect, &c), 0);
	ck_assert_uint_eq(c.n, 2);
	EXPECT(&c, 0, "S1\n a\n\n", 0, 10);
	EXPECT(&c, 1, "S2\n", 10, 14);
	col_free(&c);
	framer_state_cleanup(&st);
	framer_free(fr);
}
END_TEST

START_TEST(multiline_pattern_matches_anywhere_like_find)
{
	struct framer_opts	 o = { .delim = '\n', .multiline = "ERROR" };
	struct framer		*fr = mk(&o);
	struct framer_state	 st;
	struct col		 c;

	col_init(&c);
	framer_state_init(&st, fr, true);
	ck_assert_uint_eq(feed_str(fr, &st, "x ERROR 1\nmore\nt ERROR 2\n",
	    &c), 25);
	ck_assert_int_eq(framer_flush(fr, &st, collect, &c), 0);
	ck_assert_uint_eq(c.n, 2);
	EXPECT(&c, 0, "x ERROR 1\nmore", 0, 15);
	EXPECT(&c, 1, "t ERROR 2", 15, 25);
	col_free(&c);
	framer_state_cleanup(&st);
	framer_free(fr);
}
END_TEST

START_TEST(multiline_lines_before_first_start_are_own_records)
{
	struct framer_opts	 o = { .delim = '\n', .multiline = DATE_RE };
	struct framer		*fr = mk(&o);
	struct framer_state	 st;
	struct col		 c;

	col_init(&c);
	framer_state_init(&st, fr, true);
	ck_assert_uint_eq(feed_str(fr, &st,
	    "junk1\njunk2\n2024-01-01 a\ncont\n", &c), 30);
	ck_assert_uint_eq(c.n, 2);
	EXPECT(&c, 0, "junk1", 0, 6);
	EXPECT(&c, 1, "junk2", 6, 12);
	ck_assert_uint_eq(framer_pending_start(&st), 12);
	ck_assert_int_eq(framer_flush(fr, &st, collect, &c), 0);
	ck_assert_uint_eq(c.n, 3);
	EXPECT(&c, 2, "2024-01-01 a\ncont", 12, 30);
	/* After a flush, a continuation line is a record of its own. */
	ck_assert_uint_eq(framer_feed(fr, &st, "late\n", 5, 30, BIG, collect,
	    &c), 5);
	ck_assert_uint_eq(c.n, 4);
	EXPECT(&c, 3, "late", 30, 35);
	ck_assert(!framer_pending(&st));
	col_free(&c);
	framer_state_cleanup(&st);
	framer_free(fr);
}
END_TEST

START_TEST(multiline_flush_refused_keeps_pending)
{
	struct framer_opts	 o = { .delim = '\n', .multiline = "^S" };
	struct framer		*fr = mk(&o);
	struct framer_state	 st;
	struct col		 c;

	col_init(&c);
	framer_state_init(&st, fr, true);
	ck_assert_uint_eq(feed_str(fr, &st, "S1\nc\n", &c), 5);
	c.refuse_at = 0;
	ck_assert_int_ne(framer_flush(fr, &st, collect, &c), 0);
	ck_assert(framer_pending(&st));
	ck_assert_uint_eq(c.n, 0);
	c.refused = false;
	ck_assert_int_eq(framer_flush(fr, &st, collect, &c), 0);
	ck_assert_uint_eq(c.n, 1);
	EXPECT(&c, 0, "S1\nc", 0, 5);
	col_free(&c);
	framer_state_cleanup(&st);
	framer_free(fr);
}
END_TEST

START_TEST(multiline_refused_at_start_line_returns_before_it)
{
	struct framer_opts	 o = { .delim = '\n', .multiline = "^S" };
	struct framer		*fr = mk(&o);
	struct framer_state	 st;
	struct col		 c;
	const char		*s = "S1\nc1\nS2\nc2\n";

	col_init(&c);
	framer_state_init(&st, fr, true);
	c.refuse_at = 0;
	/* S1 and c1 are absorbed (consumed); sending them is refused. */
	ck_assert_uint_eq(framer_feed(fr, &st, s, 12, 0, BIG, collect, &c),
	    6);
	ck_assert_uint_eq(c.n, 0);
	ck_assert(framer_pending(&st));
	c.refused = false;
	ck_assert_uint_eq(framer_feed(fr, &st, s + 6, 6, 6, BIG, collect, &c),
	    6);
	ck_assert_int_eq(framer_flush(fr, &st, collect, &c), 0);
	ck_assert_uint_eq(c.n, 2);
	EXPECT(&c, 0, "S1\nc1", 0, 6);
	EXPECT(&c, 1, "S2\nc2", 6, 12);
	col_free(&c);
	framer_state_cleanup(&st);
	framer_free(fr);
}
END_TEST

START_TEST(multiline_pending_bounded_by_max_record)
{
	struct framer_opts	 o = { .delim = '\n', .multiline = "^S" };
	struct framer		*fr = mk(&o);
	struct framer_state	 st;
	struct col		 c;
	struct buf		 text;
	const size_t		 max = 32;
	size_t			 i;

	buf_init(&text);
	buf_addstr(&text, "S-start\n");
	for (i = 0; i < 100; i++)
		buf_addstr(&text, "\tcontinue\n");
	buf_addstr(&text, "S2\n");
	col_init(&c);
	framer_state_init(&st, fr, true);
	ck_assert_uint_eq(drive_all(fr, &st, text.data, text.len, 40, max, &c),
	    text.len);
	ck_assert_uint_eq(c.n, 2);
	EXPECT(&c, 0, "S-start\n\tcontinue\n\tcontinue\n\tcon", 0,
	    text.len - 3);
	EXPECT(&c, 1, "S2", text.len - 3, text.len);
	ck_assert_uint_eq(st.truncated, 1);
	col_free(&c);
	framer_state_cleanup(&st);
	buf_cleanup(&text);
	framer_free(fr);
}
END_TEST

START_TEST(multiline_runaway_start_line_bounded)
{
	struct framer_opts	 o = { .delim = '\n', .multiline = "^S" };
	struct framer		*fr = mk(&o);
	struct framer_state	 st;
	struct col		 c;
	struct buf		 text;
	const size_t		 max = 64;
	char			 want[64];

	buf_init(&text);
	buf_addc(&text, 'S');
	while (text.len < 10 * max)
		buf_addc(&text, 'x');
	buf_addstr(&text, "\ncont\nS2\n");
	memset(want, 'x', max);
	want[0] = 'S';
	col_init(&c);
	framer_state_init(&st, fr, true);
	ck_assert_uint_eq(drive_all(fr, &st, text.data, text.len, max + 1,
	    max, &c), text.len);
	ck_assert_uint_eq(c.n, 2);
	/* The head of the long line, then "cont" dropped: the record is
	 * full; it still covers cont's bytes. */
	expect(&c, 0, want, max, 0, text.len - 3);
	EXPECT(&c, 1, "S2", text.len - 3, text.len);
	ck_assert_uint_eq(st.truncated, 1);
	col_free(&c);
	framer_state_cleanup(&st);
	/* The next start line right after the long one. */
	text.len = 10 * max;
	buf_addstr(&text, "\nS2\n");
	col_init(&c);
	framer_state_init(&st, fr, true);
	ck_assert_uint_eq(drive_all(fr, &st, text.data, text.len, max + 1,
	    max, &c), text.len);
	ck_assert_uint_eq(c.n, 2);
	expect(&c, 0, want, max, 0, max);
	EXPECT(&c, 1, "S2", text.len - 3, text.len);
	ck_assert_uint_eq(st.truncated, 1);
	col_free(&c);
	framer_state_cleanup(&st);
	buf_cleanup(&text);
	framer_free(fr);
}
END_TEST

START_TEST(multiline_large_record_memory_released_once_sent)
{
	struct framer_opts	 o = { .delim = '\n', .multiline = "^S" };
	struct framer		*fr = mk(&o);
	struct framer_state	 st;
	struct col		 c;
	struct buf		 text;

	buf_init(&text);
	buf_addstr(&text, "S1\n");
	while (text.len < 200 * 1024)
		buf_addstr(&text, "\tat some.deep.Frame(Frame.java:1)\n");
	col_init(&c);
	framer_state_init(&st, fr, true);
	ck_assert_uint_eq(framer_feed(fr, &st, text.data, text.len, 0, BIG,
	    collect, &c), text.len);
	ck_assert_uint_ge(framer_state_memory(&st), text.len);
	ck_assert_int_eq(framer_flush(fr, &st, collect, &c), 0);
	ck_assert_uint_eq(c.n, 1);
	ck_assert_uint_eq(c.r[0].len, text.len - 1);
	ck_assert_uint_eq(framer_state_memory(&st), 0);
	col_free(&c);
	framer_state_cleanup(&st);
	buf_cleanup(&text);
	framer_free(fr);
}
END_TEST

/* A text mixing everything the framer distinguishes. */
static const char mixed[] =
    "header\n"
    "lead-in\n"
    "\n"
    "S 1\r\n"
    "\tat x\n"
    "S 2\n"
    "S 3 this line is rather long and will be cut at the cap 0123456789\n"
    "\tcont\n"
    "\n"
    "S 4\n"
    "tail\n";

/*
 * Frame text whole, then again refusing the k-th callback for every k, and
 * going on from where the framer stopped: the records must be the same.
 */
static void
refuse_everywhere(const struct framer_opts *o, size_t win, size_t max)
{
	struct framer		*fr = mk(o);
	struct framer_state	 st;
	struct col		 ref, c;
	size_t			 len = sizeof(mixed) - 1, k;
	uint64_t		 trunc;

	col_init(&ref);
	framer_state_init(&st, fr, true);
	ck_assert_uint_eq(drive_all(fr, &st, mixed, len, win, max, &ref), len);
	trunc = st.truncated;
	framer_state_cleanup(&st);
	ck_assert_uint_ge(ref.n, 5);
	for (k = 0; k <= ref.n; k++) {
		col_init(&c);
		c.refuse_at = (long)k;
		framer_state_init(&st, fr, true);
		ck_assert_uint_eq(drive_all(fr, &st, mixed, len, win, max, &c),
		    len);
		same(&c, &ref);
		framer_state_cleanup(&st);
		col_free(&c);
	}
	/* Every record refused once before it is taken. */
	col_init(&c);
	c.refuse_alt = true;
	framer_state_init(&st, fr, true);
	ck_assert_uint_eq(drive_all(fr, &st, mixed, len, win, max, &c), len);
	same(&c, &ref);
	ck_assert_uint_eq(c.calls, 2 * ref.n);
	ck_assert_uint_eq(st.truncated, trunc);
	framer_state_cleanup(&st);
	col_free(&c);
	col_free(&ref);
	framer_free(fr);
}

START_TEST(refusal_at_every_boundary_single_line)
{
	struct framer_opts	 o = { .delim = '\n', .skip_header = 1 };

	refuse_everywhere(&o, 1001, 1000);
	refuse_everywhere(&o, 41, 40);
	o.strip_cr = o.keep_delim = true;
	refuse_everywhere(&o, 41, 40);
}
END_TEST

START_TEST(refusal_at_every_boundary_multi_line)
{
	struct framer_opts	 o = { .delim = '\n', .skip_header = 1,
				    .multiline = "^S \\d" };

	refuse_everywhere(&o, 1001, 1000);
	refuse_everywhere(&o, 41, 40);
	o.skip_empty = o.keep_delim = true;
	refuse_everywhere(&o, 41, 40);
}
END_TEST

/* Records do not depend on how the bytes are cut into windows. */
START_TEST(records_independent_of_window_size)
{
	struct framer_opts	 o = { .delim = '\n', .skip_header = 1,
				    .multiline = "^S \\d", .strip_cr = true };
	struct framer		*fr;
	struct framer_state	 st;
	struct col		 ref, c;
	size_t			 len = sizeof(mixed) - 1, win;
	int			 ml;

	for (ml = 0; ml < 2; ml++) {
		if (ml == 0)
			o.multiline = NULL;
		fr = mk(&o);
		col_init(&ref);
		framer_state_init(&st, fr, true);
		(void)drive_all(fr, &st, mixed, len, len, 48, &ref);
		framer_state_cleanup(&st);
		for (win = 49; win < len; win++) {
			col_init(&c);
			framer_state_init(&st, fr, true);
			ck_assert_uint_eq(drive_all(fr, &st, mixed, len, win,
			    48, &c), len);
			same(&c, &ref);
			framer_state_cleanup(&st);
			col_free(&c);
		}
		col_free(&ref);
		framer_free(fr);
		o.multiline = "^S \\d";
	}
}
END_TEST

START_TEST(feed_last_sends_partial_line)
{
	struct framer		*fr = mk_default();
	struct framer_state	 st;
	struct col		 c;
	const char		*s = "a\nbc\r";

	col_init(&c);
	framer_state_init(&st, fr, true);
	ck_assert_uint_eq(framer_feed(fr, &st, s, 5, 0, BIG, collect, &c), 2);
	c.refuse_at = 1;
	ck_assert_int_ne(framer_feed_last(fr, &st, s + 2, 3, 2, BIG, collect,
	    &c), 0);
	ck_assert_uint_eq(c.n, 1);
	c.refused = false;
	ck_assert_int_eq(framer_feed_last(fr, &st, s + 2, 3, 2, BIG, collect,
	    &c), 0);
	ck_assert_uint_eq(c.n, 2);
	EXPECT(&c, 0, "a", 0, 2);
	EXPECT(&c, 1, "bc\r", 2, 5);
	col_free(&c);
	framer_state_cleanup(&st);
	framer_free(fr);
}
END_TEST

START_TEST(feed_last_keeps_cr_as_no_delimiter_follows)
{
	struct framer_opts	 o = { .delim = '\n', .strip_cr = true };
	struct framer		*fr = mk(&o);
	struct framer_state	 st;
	struct col		 c;

	col_init(&c);
	framer_state_init(&st, fr, true);
	ck_assert_int_eq(framer_feed_last(fr, &st, "x\r", 2, 7, BIG, collect,
	    &c), 0);
	ck_assert_uint_eq(c.n, 1);
	EXPECT(&c, 0, "x\r", 7, 9);
	col_free(&c);
	framer_state_cleanup(&st);
	framer_free(fr);
}
END_TEST

START_TEST(feed_last_joins_pending_multiline_record)
{
	struct framer_opts	 o = { .delim = '\n', .multiline = "^S",
				    .keep_delim = true };
	struct framer		*fr = mk(&o);
	struct framer_state	 st;
	struct col		 c;
	const char		*s = "S1\nc1\nc2";

	col_init(&c);
	framer_state_init(&st, fr, true);
	ck_assert_uint_eq(framer_feed(fr, &st, s, 8, 0, BIG, collect, &c), 6);
	ck_assert_int_eq(framer_feed_last(fr, &st, s + 6, 2, 6, BIG, collect,
	    &c), 0);
	ck_assert_uint_eq(c.n, 0);
	ck_assert_int_eq(framer_flush(fr, &st, collect, &c), 0);
	ck_assert_uint_eq(c.n, 1);
	/* No delimiter after the last line, so none is kept. */
	EXPECT(&c, 0, "S1\nc1\nc2", 0, 8);
	col_free(&c);
	framer_state_cleanup(&st);
	framer_free(fr);
}
END_TEST

START_TEST(encoding_gbk_converted_to_utf8)
{
	struct framer_opts	 o = { .delim = '\n', .encoding = "GBK" };
	struct framer		*fr = mk(&o);
	struct framer_state	 st;
	struct col		 c;

	col_init(&c);
	framer_state_init(&st, fr, true);
	ck_assert_uint_eq(feed_str(fr, &st,
	    "\xd6\xd0\xce\xc4\nok\n\x81 x\na\xd6\n", &c), 15);
	ck_assert_uint_eq(c.n, 4);
	EXPECT(&c, 0, "\xe4\xb8\xad\xe6\x96\x87", 0, 5);	/* 中文 */
	EXPECT(&c, 1, "ok", 5, 8);
	EXPECT(&c, 2, "\xef\xbf\xbd x", 8, 12);
	EXPECT(&c, 3, "a\xef\xbf\xbd", 12, 15);
	ck_assert_uint_eq(st.invalid, 2);
	ck_assert_uint_eq(st.truncated, 0);
	/* Scratch sized by the record, not by the cap. */
	ck_assert_uint_lt(framer_memory(fr), 1024);
	col_free(&c);
	framer_state_cleanup(&st);
	framer_free(fr);
}
END_TEST

START_TEST(encoding_output_capped_at_whole_characters)
{
	struct framer_opts	 o = { .delim = '\n', .encoding = "GBK" };
	struct framer		*fr = mk(&o);
	struct framer_state	 st;
	struct col		 c;

	col_init(&c);
	framer_state_init(&st, fr, true);
	/* 4 GBK bytes become 6 UTF-8 bytes; the cap of 5 keeps one. */
	ck_assert_uint_eq(framer_feed(fr, &st, "\xd6\xd0\xce\xc4\n", 5, 0, 5,
	    collect, &c), 5);
	ck_assert_uint_eq(c.n, 1);
	EXPECT(&c, 0, "\xe4\xb8\xad", 0, 5);
	ck_assert_uint_eq(st.truncated, 1);
	ck_assert_uint_le(framer_memory(fr), 6);
	col_free(&c);
	framer_state_cleanup(&st);
	framer_free(fr);
}
END_TEST

START_TEST(encoding_replacement_stops_at_the_cap)
{
	struct framer_opts	 o = { .delim = '\n', .encoding = "GBK" };
	struct framer		*fr = mk(&o);
	struct framer_state	 st;
	struct col		 c;

	col_init(&c);
	framer_state_init(&st, fr, true);
	/* Room for "ab" and one U+FFFD, not for the second. */
	ck_assert_uint_eq(framer_feed(fr, &st, "ab\xff\xff\n", 5, 0, 5,
	    collect, &c), 5);
	ck_assert_uint_eq(c.n, 1);
	EXPECT(&c, 0, "ab\xef\xbf\xbd", 0, 5);
	ck_assert_uint_eq(st.truncated, 1);
	ck_assert_uint_eq(st.invalid, 2);
	ck_assert_uint_le(framer_memory(fr), 6);
	col_free(&c);
	framer_state_cleanup(&st);
	framer_free(fr);
}
END_TEST

START_TEST(encoding_iso8859_1_multiline)
{
	struct framer_opts	 o = { .delim = '\n', .encoding = "ISO-8859-1",
				    .multiline = "^S" };
	struct framer		*fr = mk(&o);
	struct framer_state	 st;
	struct col		 c;

	col_init(&c);
	framer_state_init(&st, fr, true);
	ck_assert_uint_eq(feed_str(fr, &st, "caf\xe9\nS \xe0\n\xff\nS\n", &c),
	    13);
	ck_assert_int_eq(framer_flush(fr, &st, collect, &c), 0);
	ck_assert_uint_eq(c.n, 3);
	EXPECT(&c, 0, "caf\xc3\xa9", 0, 5);
	EXPECT(&c, 1, "S \xc3\xa0\n\xc3\xbf", 5, 11);
	EXPECT(&c, 2, "S", 11, 13);
	ck_assert_uint_eq(st.invalid, 0);
	col_free(&c);
	framer_state_cleanup(&st);
	framer_free(fr);
}
END_TEST

START_TEST(invalid_pattern_rejected_with_pcre2_message)
{
	struct framer_opts	 o = { .delim = '\n', .multiline = "^(\\d+" };
	struct framer		*fr = (struct framer *)(uintptr_t)1;
	char			 err[256] = "";

	ck_assert_int_eq(framer_new(&o, &fr, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(fr);
	ck_assert_msg(strstr(err, "missing closing parenthesis") != NULL &&
	    strstr(err, "offset 5") != NULL, "err: %s", err);
}
END_TEST

START_TEST(bad_encoding_and_delimiter_rejected)
{
	struct framer_opts	 o = { .delim = '\n',
				    .encoding = "NO-SUCH-ENCODING-X" };
	struct framer		*fr;
	char			 err[256] = "";

	ck_assert_int_eq(framer_new(&o, &fr, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(fr);
	ck_assert_ptr_nonnull(strstr(err, "NO-SUCH-ENCODING-X"));
	o.encoding = "utf-8";
	o.delim = 256;
	ck_assert_int_eq(framer_new(&o, &fr, NULL, 0), -EINVAL);
	o.delim = -1;
	ck_assert_int_eq(framer_new(&o, &fr, NULL, 0), -EINVAL);
	framer_free(NULL);
	framer_state_cleanup(NULL);
}
END_TEST

START_TEST(utf8_pattern_matches_characters)
{
	struct framer_opts	 o = { .delim = '\n', .multiline = "^.\\d$" };
	struct framer		*fr = mk(&o);
	struct framer_state	 st;
	struct col		 c;

	col_init(&c);
	framer_state_init(&st, fr, true);
	/* "中1" is one character and a digit; an invalid byte never
	 * matches '.', and the line is simply not a start line. */
	ck_assert_uint_eq(feed_str(fr, &st, "\xe4\xb8\xad" "1\n\xff" "2\n",
	    &c), 8);
	ck_assert_int_eq(framer_flush(fr, &st, collect, &c), 0);
	ck_assert_uint_eq(c.n, 1);
	EXPECT(&c, 0, "\xe4\xb8\xad" "1\n\xff" "2", 0, 8);
	col_free(&c);
	framer_state_cleanup(&st);
	framer_free(fr);
}
END_TEST

static Suite *
framer_suite(void)
{
	Suite	*s = suite_create("framer");
	TCase	*tc;

	tc = tcase_create("single");
	tcase_add_test(tc, lf_lines_become_records_without_newline);
	tcase_add_test(tc, partial_last_line_not_consumed_until_complete);
	tcase_add_test(tc, crlf_kept_by_default);
	tcase_add_test(tc, crlf_stripped_with_strip_cr_only_before_delimiter);
	tcase_add_test(tc, keep_delim_leaves_delimiter_in_data);
	tcase_add_test(tc, keep_delim_with_strip_cr_gives_lf);
	tcase_add_test(tc, custom_delimiter_pipe_and_newline_is_data);
	tcase_add_test(tc, custom_delimiter_nul);
	tcase_add_test(tc, empty_lines_sent_by_default);
	tcase_add_test(tc, skip_empty_consumes_but_does_not_send);
	tcase_add_test(tc, skip_header_lines_from_start_across_feeds);
	tcase_add_test(tc, skip_header_lines_not_when_resuming);
	tcase_add_test(tc, feed_last_sends_partial_line);
	tcase_add_test(tc, feed_last_keeps_cr_as_no_delimiter_follows);
	suite_add_tcase(s, tc);

	tc = tcase_create("cap");
	tcase_add_test(tc, runaway_line_truncated_then_next_line_intact);
	tcase_add_test(tc, runaway_line_then_feed_last_discards_its_end);
	tcase_add_test(tc, line_of_exactly_max_record_is_not_truncated);
	tcase_add_test(tc, keep_delim_never_exceeds_max_record);
	tcase_add_test(tc, long_line_cut_the_same_when_its_delimiter_is_in_view);
	suite_add_tcase(s, tc);

	tc = tcase_create("multiline");
	tcase_add_test(tc, multiline_java_stack_trace_joined);
	tcase_add_test(tc, multiline_keep_delim_and_crlf);
	tcase_add_test(tc, multiline_pattern_matches_anywhere_like_find);
	tcase_add_test(tc, multiline_lines_before_first_start_are_own_records);
	tcase_add_test(tc, multiline_flush_refused_keeps_pending);
	tcase_add_test(tc, multiline_refused_at_start_line_returns_before_it);
	tcase_add_test(tc, multiline_pending_bounded_by_max_record);
	tcase_add_test(tc, multiline_runaway_start_line_bounded);
	tcase_add_test(tc, multiline_large_record_memory_released_once_sent);
	tcase_add_test(tc, feed_last_joins_pending_multiline_record);
	tcase_add_test(tc, utf8_pattern_matches_characters);
	suite_add_tcase(s, tc);

	tc = tcase_create("refusal");
	tcase_add_test(tc, refusal_at_every_boundary_single_line);
	tcase_add_test(tc, refusal_at_every_boundary_multi_line);
	tcase_add_test(tc, records_independent_of_window_size);
	suite_add_tcase(s, tc);

	tc = tcase_create("encoding");
	tcase_add_test(tc, encoding_gbk_converted_to_utf8);
	tcase_add_test(tc, encoding_output_capped_at_whole_characters);
	tcase_add_test(tc, encoding_replacement_stops_at_the_cap);
	tcase_add_test(tc, encoding_iso8859_1_multiline);
	tcase_add_test(tc, invalid_pattern_rejected_with_pcre2_message);
	tcase_add_test(tc, bad_encoding_and_delimiter_rejected);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(framer_suite());
}
