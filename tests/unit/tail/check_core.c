/*
 * Unit tests of the pure cores: the commit watermark (lessons R2), the retry
 * policy and the error table of spec section 4, and line framing in the
 * tailer (partial lines, runaway lines) against real temp files.
 */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/escape.h"
#include "base/log.h"
#include "base/pattern.h"
#include "base/pool.h"
#include "base/util.h"
#include "tail/tailer.h"
#include "files/watcher.h"
#include "tail/watermark.h"
#include "state/registry.h"
#include "wire/retry.h"
#include "testutil.h"

/* --- watermark ---------------------------------------------------------- */

START_TEST(watermark_out_of_order_acks_wait_for_the_gap)
{
	struct watermark w;
	uint64_t	 a, b, c;

	wm_init(&w, 100);
	a = wm_push(&w, 200);
	b = wm_push(&w, 300);
	c = wm_push(&w, 400);
	/* Batches acknowledged 3, 1, 2 (R2): end-of-1, then end-of-3. */
	ck_assert(!wm_ack(&w, c));
	ck_assert_uint_eq(w.committed, 100);
	ck_assert(wm_ack(&w, a));
	ck_assert_uint_eq(w.committed, 200);
	ck_assert(wm_ack(&w, b));
	ck_assert_uint_eq(w.committed, 400);
	ck_assert_uint_eq(wm_pending(&w), 0);
	wm_cleanup(&w);
}
END_TEST

START_TEST(watermark_ignores_unknown_and_repeated_acks)
{
	struct watermark w;
	uint64_t	 a;

	wm_init(&w, 0);
	a = wm_push(&w, 10);
	ck_assert(!wm_ack(&w, a + 5));
	ck_assert(wm_ack(&w, a));
	ck_assert(!wm_ack(&w, a));
	ck_assert_uint_eq(w.committed, 10);
	wm_cleanup(&w);
}
END_TEST

START_TEST(watermark_grows_and_wraps)
{
	struct watermark w;
	uint64_t	 ids[1000];
	int		 i, round;

	wm_init(&w, 0);
	for (round = 0; round < 3; round++) {
		for (i = 0; i < 1000; i++)
			ids[i] = wm_push(&w, (uint64_t)(round * 1000 + i + 1));
		/* Acknowledge backwards: nothing moves until the first. */
		for (i = 999; i > 0; i--)
			ck_assert(!wm_ack(&w, ids[i]));
		ck_assert(wm_ack(&w, ids[0]));
		ck_assert_uint_eq(w.committed, (uint64_t)(round + 1) * 1000);
	}
	ck_assert_uint_eq(wm_pending(&w), 0);
	wm_cleanup(&w);
}
END_TEST

START_TEST(watermark_reset_forgets_in_flight_ranges)
{
	struct watermark w;
	uint64_t	 a;

	wm_init(&w, 50);
	a = wm_push(&w, 80);
	wm_reset(&w, 0);
	ck_assert_uint_eq(wm_pending(&w), 0);
	ck_assert(!wm_ack(&w, a));
	ck_assert_uint_eq(w.committed, 0);
	wm_cleanup(&w);
}
END_TEST

START_TEST(watermark_skip_extends_the_newest_range_or_commits)
{
	struct watermark w;
	uint64_t	 a;

	wm_init(&w, 10);
	ck_assert(wm_skip_to(&w, 50));		/* nothing pending: commit */
	ck_assert_uint_eq(w.committed, 50);
	ck_assert(!wm_skip_to(&w, 40));		/* never backwards */
	a = wm_push(&w, 80);
	ck_assert(!wm_skip_to(&w, 120));	/* the range now ends at 120 */
	ck_assert(wm_ack(&w, a));
	ck_assert_uint_eq(w.committed, 120);
	wm_cleanup(&w);
}
END_TEST

/* --- retry -------------------------------------------------------------- */

START_TEST(backoff_is_full_jitter_within_the_cap)
{
	unsigned	 n;

	ck_assert_uint_eq(retry_backoff_ms(0, 100, 10000, 0.0), 0);
	ck_assert_uint_le(retry_backoff_ms(0, 100, 10000, 0.999999), 100);
	ck_assert_uint_ge(retry_backoff_ms(0, 100, 10000, 0.999999), 99);
	ck_assert_uint_ge(retry_backoff_ms(3, 100, 10000, 0.999999), 799);
	ck_assert_uint_le(retry_backoff_ms(3, 100, 10000, 0.999999), 800);
	for (n = 0; n < 200; n++) {
		ck_assert_uint_le(retry_backoff_ms(n, 100, 10000, 0.9999), 10000);
		ck_assert_uint_ge(retry_backoff_ms(n, 100, 10000, 0.9999),
		    n >= 7 ? 9999 : 0);
	}
}
END_TEST

START_TEST(classify_every_row_of_the_error_table)
{
	static const struct {
		long		 status;
		const char	*code;
		enum retry_action want;
	} rows[] = {
		{ 0, "", RETRY_REQUEST },		/* network, timeout */
		{ 200, "", RETRY_NONE },
		{ 400, "DIS.4303", RETRY_SLOW },
		{ 400, "DIS.4305", RETRY_SLOW },
		{ 400, "DIS.4309", RETRY_HARD },
		{ 400, "DIS.4117", RETRY_HALT },
		{ 400, "DIS.4301", RETRY_HALT },
		{ 400, "DIS.4205", RETRY_HALT },
		{ 400, "DIS.4201", RETRY_HALT },
		{ 400, "DIS.4302", RETRY_HALT },
		{ 400, "DIS.4319", RETRY_HALT },
		{ 400, "DIS.4200", RETRY_SPLIT },
		{ 400, "DIS.4300", RETRY_SPLIT },
		{ 400, "DIS.9999", RETRY_HALT },
		{ 401, "", RETRY_HALT },
		{ 403, "DIS.4116", RETRY_HALT },
		{ 403, "", RETRY_HARD },
		{ 410, "", RETRY_HALT },
		{ 413, "", RETRY_SPLIT },
		{ 429, "", RETRY_SLOW },
		{ 441, "DIS.4106", RETRY_HALT },
		{ 441, "DIS.4113", RETRY_HALT },
		{ 500, "DIS.5000", RETRY_REQUEST },
		{ 502, "", RETRY_REQUEST },
		{ 503, "", RETRY_REQUEST },
	};
	size_t	 i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		ck_assert_msg(retry_classify(rows[i].status, rows[i].code) ==
		    rows[i].want, "row %zu: %ld %s", i, rows[i].status,
		    rows[i].code);
}
END_TEST

/* The hint of a paused flow names what the code names. */
START_TEST(halt_hints_name_what_the_code_names)
{
	ck_assert_ptr_nonnull(strstr(retry_halt_hint(441, "DIS.4111"),
	    "check region"));
	ck_assert_ptr_null(strstr(retry_halt_hint(441, "DIS.4111"), "clock"));
	ck_assert_str_eq(retry_halt_hint(441, "DIS.4103"),
	    "check the clock (X-Sdk-Date)");
	ck_assert_str_eq(retry_halt_hint(441, "DIS.4105"),
	    "check the clock (X-Sdk-Date)");
	ck_assert_ptr_nonnull(strstr(retry_halt_hint(441, "DIS.4107"),
	    "check ak"));
	ck_assert_str_eq(retry_halt_hint(441, "DIS.4110"),
	    "check ak/sk and the clock (X-Sdk-Date)");
	ck_assert_str_eq(retry_halt_hint(401, ""),
	    "check ak/sk and the clock (X-Sdk-Date)");
	ck_assert_str_eq(retry_halt_hint(400, "DIS.4117"), "check projectId");
	ck_assert_str_eq(retry_halt_hint(441, NULL),
	    "check ak/sk and the clock (X-Sdk-Date)");
}
END_TEST

START_TEST(record_codes_match_by_substring_like_the_sdk)
{
	ck_assert(retry_record_retriable("DIS.4303", NULL));
	ck_assert(retry_record_retriable("DIS.5000", NULL));
	ck_assert(retry_record_retriable("DIS.5250", NULL));
	ck_assert(!retry_record_retriable("DIS.4200", NULL));
	ck_assert(!retry_record_retriable("", "DIS.4303"));
	ck_assert(retry_record_retriable("DIS.4200", " DIS.42 , X"));
	ck_assert(!retry_record_retriable("DIS.4303", "DIS.5"));
}
END_TEST

/* --- tailer reads through the framer ---------------------------------- */

struct got {
	char		 text[4096];
	size_t		 n;
};

static int
collect(void *arg, const char *data, size_t len, uint64_t start,
    uint64_t end)
{
	struct got	*g = arg;

	ck_assert_uint_ge(end, start + len);
	strncat(g->text, data, len);
	strcat(g->text, "|");
	g->n++;
	return 0;
}

/* A framer for plain lines, shared by the tailer tests. */
static struct framer *
line_framer(void)
{
	struct framer_opts fo = { .delim = '\n' };
	struct framer	*fr;
	char		 err[128];

	ck_assert_int_eq(framer_new(&fo, &fr, err, sizeof(err)), 0);
	return fr;
}

static struct tailer *
open_temp(const char *content, char *path, const struct framer *fr)
{
	struct stat	 st;
	int		 fd;

	strcpy(path, "/tmp/check_core.XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, content, strlen(content)),
	    (ssize_t)strlen(content));
	close(fd);
	ck_assert_int_eq(stat(path, &st), 0);
	return tailer_open(path, &st, 0, 512, fr);
}

START_TEST(read_truncates_a_runaway_line_and_skips_its_tail)
{
	char		 path[64], content[200];
	struct tailer	*t;
	struct readbuf	 rb = { .owner = 0 };
	struct got	 g = { .n = 0 };
	struct tailer_read r;
	struct framer	*fr = line_framer();
	uint64_t	 truncated = 0;
	long		 n;
	int		 i;
	bool		 trunc;

	/* 40-byte line with a 16-byte record cap, then a normal line. */
	memset(content, 'A', 40);
	strcpy(content + 40, "\nnext\n");
	t = open_temp(content, path, fr);
	ck_assert_ptr_nonnull(t);
	buf_init(&rb.b);
	ck_assert_uint_eq(tailer_memory(t), 0);	/* nothing out of line */
	ck_assert(tailer_poll(t, &trunc));
	/* 8-byte reads: the second cuts the line.  Its tail is being
	 * discarded, state that few files need and that lives out of line
	 * while it lasts. */
	for (i = 0; i < 2; i++) {
		ck_assert_int_gt(tailer_read(t, fr, &rb, 8, 16, collect, &g,
		    &r), 0);
		truncated += r.truncated;
	}
	ck_assert_uint_gt(tailer_memory(t), 0);
	while ((n = tailer_read(t, fr, &rb, 8, 16, collect, &g, &r)) > 0)
		truncated += r.truncated;
	ck_assert_int_eq(n, 0);
	ck_assert_str_eq(g.text, "AAAAAAAAAAAAAAAA|next|");
	ck_assert_uint_eq(tailer_read_off(t), 46);
	ck_assert_uint_eq(truncated, 1);
	ck_assert_uint_eq(tailer_memory(t), 0);	/* and gone again */
	buf_cleanup(&rb.b);
	tailer_free(t);
	framer_free(fr);
	unlink(path);
}
END_TEST

START_TEST(fingerprint_detects_a_different_head)
{
	char		 path[64], path2[64];
	struct framer	*fr = line_framer();
	struct tailer	*t;
	uint32_t	 crc, fcrc, flen;
	int		 fd;

	t = open_temp("hello world\n", path, fr);
	tailer_head(t, &fcrc, &flen);
	ck_assert_uint_eq(flen, 12);
	fd = open(path, O_RDONLY);
	ck_assert_int_eq(tailer_fingerprint(fd, flen, &crc), 0);
	ck_assert_uint_eq(crc, fcrc);
	close(fd);
	tailer_free(t);
	t = open_temp("jello world\n", path2, fr);
	tailer_head(t, &fcrc, &flen);
	ck_assert_uint_ne(fcrc, crc);
	tailer_free(t);
	framer_free(fr);
	unlink(path);
	unlink(path2);
}
END_TEST

/* Records of a file read through tailer_read(); the window checked on the
 * way.  Counts records and checks each against the line it should be. */
struct lines {
	size_t		 n;
	size_t		 long_at;	/* index of the long line */
	size_t		 long_len;
	size_t		 max_cap;	/* largest window seen */
	struct readbuf	*rb;
};

static int
check_line(void *arg, const char *data, size_t len, uint64_t start,
    uint64_t end)
{
	struct lines	*l = arg;
	char		 want[32];

	ck_assert_uint_eq(end, start + len + 1);
	if (l->n == l->long_at) {
		ck_assert_uint_eq(len, l->long_len);
		ck_assert(data[0] == 'L' && data[len - 1] == 'L');
	} else {
		snprintf(want, sizeof(want), "line %06zu", l->n);
		ck_assert_uint_eq(len, strlen(want));
		ck_assert(memcmp(data, want, len) == 0);
	}
	l->max_cap = MAX(l->max_cap, l->rb->b.cap);
	l->n++;
	return 0;
}

/* A file of n "line NNNNNN" lines, line long_at replaced by long_len 'L's. */
static struct tailer *
open_lines(size_t n, size_t long_at, size_t long_len, char *path,
    const struct framer *fr)
{
	struct stat	 st;
	FILE		*f;
	size_t		 i, k;
	int		 fd;

	strcpy(path, "/tmp/check_core.XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	for (i = 0; i < n; i++) {
		if (i != long_at) {
			fprintf(f, "line %06zu\n", i);
			continue;
		}
		for (k = 0; k < long_len; k++)
			fputc('L', f);
		fputc('\n', f);
	}
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	return tailer_open(path, &st, 0, 512, fr);
}

/* Read all of t with reads of max bytes and a record cap of max_record;
 * the records cut to the cap. */
static uint64_t
read_all(struct tailer *t, struct framer *fr, struct lines *l, size_t max,
    size_t max_record)
{
	struct tailer_read r;
	uint64_t	 truncated = 0;
	bool		 trunc;
	long		 n;

	buf_init(&l->rb->b);
	ck_assert(tailer_poll(t, &trunc));
	while ((n = tailer_read(t, fr, l->rb, max, max_record, check_line,
	    l, &r)) > 0)
		truncated += r.truncated;
	ck_assert_int_eq(n, 0);
	ck_assert_uint_eq(tailer_read_off(t), tailer_size(t));
	buf_cleanup(&l->rb->b);
	return truncated;
}

/*
 * Short lines are read max bytes at a time: the window is the read size,
 * not the record cap (a 1 MiB window per flow for 100-byte lines, before).
 */
START_TEST(read_window_is_the_read_size_for_short_lines)
{
	struct readbuf	 rb = { .owner = 0 };
	struct lines	 l = { .long_at = SIZE_MAX, .rb = &rb };
	struct framer	*fr = line_framer();
	struct tailer	*t;
	char		 path[64];

	t = open_lines(5000, SIZE_MAX, 0, path, fr);	/* 60,000 bytes */
	read_all(t, fr, &l, 1024, 65536);
	ck_assert_uint_eq(l.n, 5000);
	ck_assert_uint_le(l.max_cap, 1024 + 1);
	tailer_free(t);
	framer_free(fr);
	unlink(path);
}
END_TEST

/* A line longer than a read but within the cap still arrives whole: the
 * window grows for it (the framer needs a record's worth of bytes). */
START_TEST(read_window_grows_for_a_line_longer_than_a_read)
{
	struct readbuf	 rb = { .owner = 0 };
	struct lines	 l = { .long_at = 2000, .long_len = 40000,
			    .rb = &rb };
	struct framer	*fr = line_framer();
	struct tailer	*t;
	char		 path[64];

	t = open_lines(5000, 2000, 40000, path, fr);
	ck_assert_uint_eq(read_all(t, fr, &l, 1024, 65536), 0);
	ck_assert_uint_eq(l.n, 5000);
	ck_assert_uint_gt(l.max_cap, 40000);
	ck_assert_uint_le(l.max_cap, 65536 + 2);
	tailer_free(t);
	framer_free(fr);
	unlink(path);
}
END_TEST

/* A settled file keeps no ring of ranges, and its watermark goes on from
 * where it was (ids and committed offset). */
START_TEST(trim_frees_the_ring_of_a_settled_file)
{
	struct framer	*fr = line_framer();
	struct tailer	*t;
	char		 path[64];
	uint64_t	 a, b, c;
	size_t		 bare;

	t = open_temp("one\ntwo\nthree\n", path, fr);
	bare = tailer_memory(t);
	a = tailer_push(t, 4);
	b = tailer_push(t, 8);
	tailer_trim(t);			/* ranges pending: kept */
	ck_assert_uint_gt(tailer_memory(t), bare);
	ck_assert(tailer_ack(t, a));
	ck_assert(tailer_ack(t, b));
	tailer_trim(t);
	ck_assert_uint_eq(tailer_memory(t), bare);	/* the ring is gone */
	ck_assert_uint_eq(tailer_committed(t), 8);
	ck_assert(!tailer_ack(t, b));	/* an old id stays unknown */
	c = tailer_push(t, 14);
	ck_assert_uint_gt(c, b);
	ck_assert(tailer_ack(t, c));
	ck_assert_uint_eq(tailer_committed(t), 14);
	tailer_free(t);
	framer_free(fr);
	unlink(path);
}
END_TEST

/* A registry entry set from a tailer holds the tailer's path itself, and
 * keeps its text when the tailer moves on to another path. */
START_TEST(registry_entry_shares_its_tailer_path)
{
	struct framer	*fr = line_framer();
	struct registry	*reg;
	struct reg_entry *e;
	struct tailer	*t;
	char		 path[64], state[64];
	char		*p;

	strcpy(state, "/tmp/check_core_state.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(state));
	strcat(state, "/state.json");
	reg = registry_new(state);
	ck_assert_ptr_nonnull(reg);
	t = open_temp("one\n", path, fr);
	e = registry_set_shared(reg, "f", tailer_dev(t), tailer_ino(t), 0, 0,
	    tailer_path(t), 4);
	ck_assert_ptr_eq(e->path, tailer_path(t));
	/* The same text from elsewhere changes nothing. */
	p = xstrdup(path);
	e = registry_set(reg, "f", tailer_dev(t), tailer_ino(t), 0, 0, p, 4);
	ck_assert_ptr_eq(e->path, tailer_path(t));
	free(p);
	tailer_rename(t, "/elsewhere.log");
	ck_assert_str_eq(tailer_path(t), "/elsewhere.log");
	ck_assert_str_eq(e->path, path);
	e = registry_set_shared(reg, "f", tailer_dev(t), tailer_ino(t), 0, 0,
	    tailer_path(t), 4);
	ck_assert_ptr_eq(e->path, tailer_path(t));
	tailer_free(t);
	ck_assert_str_eq(e->path, "/elsewhere.log");	/* still held */
	registry_free(reg);
	framer_free(fr);
	unlink(path);
	*strrchr(state, '/') = '\0';
	rmdir(state);
}
END_TEST

/* --- pools and shared texts -------------------------------------------- */

struct obj112 {
	uint64_t	 w[14];
};

START_TEST(pool_objects_are_distinct_zeroed_and_given_back)
{
	struct pool	 p = POOL_INITIALIZER(struct obj112);
	struct obj112	*o[3000];
	size_t		 i, j;

	for (i = 0; i < 3000; i++) {
		o[i] = pool_alloc(&p);
		for (j = 0; j < 14; j++)
			ck_assert_uint_eq(o[i]->w[j], 0);
		for (j = 0; j < 14; j++)
			o[i]->w[j] = i;
	}
	for (i = 0; i < 3000; i++)	/* none overlaps another */
		for (j = 0; j < 14; j++)
			ck_assert_uint_eq(o[i]->w[j], i);
	/* 3000 x 112 bytes need six 64 KiB slabs (none in a build with
	 * AddressSanitizer, where a pool is calloc and free). */
	ck_assert(p.slabs == 0 || p.slabs >= 6);
	for (i = 0; i < 3000; i += 2)
		pool_free(&p, o[i]);
	for (i = 0; i < 3000; i += 2) {	/* reused, and zeroed again */
		o[i] = pool_alloc(&p);
		ck_assert_uint_eq(o[i]->w[13], 0);
	}
	for (i = 0; i < 3000; i++)
		pool_free(&p, o[i]);
	ck_assert_uint_le(p.slabs, 1);	/* the empty slabs went back */
	pool_free(&p, NULL);
}
END_TEST

struct keyed {
	uint64_t	 key;
};

static uint64_t
keyed_key(const void *v)
{
	return ((const struct keyed *)v)->key;
}

/* Values that carry their key: found, replaced and removed by it, through
 * growth and the backward shifts of deletion. */
START_TEST(keymap_finds_values_by_the_key_they_carry)
{
	static struct keyed v[5000], w;
	struct keymap	 m;
	size_t		 i;

	keymap_init(&m, keyed_key);
	ck_assert_ptr_null(keymap_get(&m, 7));
	for (i = 0; i < 5000; i++) {
		v[i].key = i * 7919 + 1;
		keymap_put(&m, &v[i]);
	}
	ck_assert_uint_eq(m.n, 5000);
	ck_assert_uint_le(m.cap, 8192);	/* one word a slot, 3/4 load */
	w.key = v[10].key;
	keymap_put(&m, &w);		/* same key: replaced */
	ck_assert_uint_eq(m.n, 5000);
	ck_assert_ptr_eq(keymap_get(&m, v[10].key), &w);
	for (i = 0; i < 5000; i += 3)
		keymap_del(&m, v[i].key);
	keymap_del(&m, 2);		/* absent: nothing */
	for (i = 0; i < 5000; i++) {
		if (i % 3 == 0)
			ck_assert_ptr_null(keymap_get(&m, v[i].key));
		else
			ck_assert_ptr_eq(keymap_get(&m, v[i].key),
			    i == 10 ? &w : &v[i]);
	}
	keymap_cleanup(&m);
	ck_assert_ptr_null(keymap_get(&m, v[1].key));
}
END_TEST

START_TEST(shared_text_lives_while_held)
{
	char	*a = rstr_new("/var/log/app.log");
	char	*b = rstr_hold(a);

	ck_assert_ptr_eq(a, b);
	rstr_free(a);
	ck_assert_str_eq(b, "/var/log/app.log");	/* one hold left */
	rstr_free(b);
	rstr_free(NULL);
}
END_TEST

/*
 * Texts of every length up to past the pooled ones (256 bytes with the
 * count and the NUL): each freed into the class it came from, so that
 * texts made again are distinct and keep their bytes.
 */
START_TEST(shared_texts_of_every_length_keep_their_bytes)
{
	enum { N = 300, K = 3 };
	static char	 want[N + 1];
	char		*t[N][K];
	size_t		 n, k, m, j;

	memset(want, 'x', N);
	for (m = 0; m < 2; m++) {
		for (n = 0; n < N; n++)
			for (k = 0; k < K; k++) {
				want[n] = '\0';
				t[n][k] = rstr_new(want);
				want[n] = 'x';
			}
		for (n = 0; n < N; n++)
			for (k = 0; k < K; k++) {
				ck_assert_uint_eq(strlen(t[n][k]), n);
				for (j = 0; j < n; j++)
					ck_assert_int_eq(t[n][k][j], 'x');
				if (n > 0)
					ck_assert_ptr_ne(t[n][k], t[n - 1][k]);
			}
		/* Every other one goes, then the rest: mixed frees. */
		for (n = 0; n < N; n += 2)
			for (k = 0; k < K; k++)
				rstr_free(t[n][k]);
		for (n = 1; n < N; n += 2)
			for (k = 0; k < K; k++)
				rstr_free(t[n][k]);
	}
}
END_TEST

/* --- watcher patterns -------------------------------------------------- */

START_TEST(pattern_globs_in_any_component)
{
	ck_assert(pattern_match("/var/log/app/*.log", "/var/log/app/a.log"));
	ck_assert(!pattern_match("/var/log/app/*.log", "/var/log/app/x/a.log"));
	ck_assert(!pattern_match("/var/log/app/*.log", "/var/log/app/.a.log"));
	ck_assert(pattern_match("/var/log/*/app-*.log",
	    "/var/log/web1/app-2.log"));
	ck_assert(!pattern_match("/var/log/*/app-*.log",
	    "/var/log/web1/db-2.log"));
	ck_assert(!pattern_match("/var/log/*/app-*.log", "/var/log/app-1.log"));
	ck_assert(pattern_dir_may_match("/var/log/*/app-*.log", "/var/log/w"));
	ck_assert(!pattern_dir_may_match("/var/log/*/app-*.log",
	    "/var/log/w/deeper"));
	ck_assert(!pattern_dir_may_match("/var/log/app/*.log", "/var/log/x"));
}
END_TEST

START_TEST(pattern_double_star_matches_any_depth)
{
	const char	*p = "/srv/**/logs/*.log";

	ck_assert(pattern_match(p, "/srv/logs/a.log"));
	ck_assert(pattern_match(p, "/srv/a/b/c/logs/a.log"));
	ck_assert(!pattern_match(p, "/srv/a/b/c/a.log"));
	ck_assert(!pattern_match(p, "/srv/.hidden/logs/a.log"));
	ck_assert(pattern_dir_may_match(p, "/srv/a/b"));
	ck_assert(pattern_dir_may_match(p, "/srv/a/logs"));
	ck_assert(!pattern_dir_may_match(p, "/srv/.git"));
	ck_assert(!pattern_dir_may_match(p, "/other"));
	ck_assert(pattern_match("/srv/**/*.log", "/srv/x.log"));
	ck_assert(pattern_match("/srv/**/*.log", "/srv/a/b/x.log"));
}
END_TEST

START_TEST(skipped_names_unless_the_pattern_names_them)
{
	ck_assert(pattern_skipped_name("*", ".hidden", ".COMPLETED"));
	ck_assert(!pattern_skipped_name(".*", ".hidden", ".COMPLETED"));
	ck_assert(pattern_skipped_name("app.log*", "app.log.1.gz", NULL));
	ck_assert(!pattern_skipped_name("*.gz", "app.log.1.gz", NULL));
	ck_assert(pattern_skipped_name("*", "a.tar", NULL));
	ck_assert(pattern_skipped_name("*", "x.zip", NULL));
	ck_assert(pattern_skipped_name("*", "x.bz2", NULL));
	ck_assert(pattern_skipped_name("*", "x.log.COMPLETED", ".COMPLETED"));
	ck_assert(!pattern_skipped_name("*.COMPLETED", "x.log.COMPLETED",
	    ".COMPLETED"));
	ck_assert(!pattern_skipped_name("*.log", "x.log", ".COMPLETED"));
}
END_TEST

START_TEST(exclude_by_name_or_full_path)
{
	ck_assert(pattern_excluded("*.tmp, debug-*", "/v/debug-1.log"));
	ck_assert(pattern_excluded("*.tmp, debug-*", "/v/a.tmp"));
	ck_assert(!pattern_excluded("*.tmp, debug-*", "/v/a.log"));
	ck_assert(pattern_excluded("/v/old/*", "/v/old/a.log"));
	ck_assert(!pattern_excluded("/v/old/*", "/v/new/a.log"));
	ck_assert(!pattern_excluded("", "/v/a.log"));
}
END_TEST


/* --- escape (escape.h) and the log writer --------------------------------- */

static char *
escaped(const char *s, size_t n, unsigned flags)
{
	struct buf	 b;

	buf_init(&b);
	esc_buf(&b, s, n, flags);
	buf_addc(&b, '\0');
	return b.data;
}

START_TEST(escape_controls_keep_utf8)
{
	char	*e;

	/* A forged journald line, a terminal title and colour, DEL. */
	e = escaped("y\n<3>[x] \x1b]0;PWNED\x07\x1b[2J\x7f\r\t", 26, 0);
	ck_assert_str_eq(e, "y\\n<3>[x] \\x1b]0;PWNED\\x07\\x1b[2J\\x7f\\r\\t");
	free(e);
	/* Chinese and e-acute pass; a C1 CSI (U+009B), a lone byte, an
	 * overlong slash and a cut sequence do not. */
	e = escaped("\xe6\x97\xa5\xe5\xbf\x97 \xc3\xa9 \xc2\x9b \xff \xc0\xaf "
	    "\xe6\x97", 20, 0);
	ck_assert_str_eq(e, "\xe6\x97\xa5\xe5\xbf\x97 \xc3\xa9 \\xc2\\x9b "
	    "\\xff \\xc0\\xaf \\xe6\\x97");
	free(e);
	/* A backslash stays; a NUL inside the bytes is escaped. */
	e = escaped("a\\b\0c", 5, 0);
	ck_assert_str_eq(e, "a\\b\\x00c");
	free(e);
	ck_assert(!esc_needed("plain \xe6\x97\xa5", 9, 0));
	ck_assert(esc_needed("a\nb", 3, 0));
	ck_assert(!esc_needed("a\nb\tc", 5, ESC_KEEP_LINES));
}
END_TEST

START_TEST(escape_keep_lines_for_a_terminal)
{
	char	*e;

	e = escaped("line 1\n\tline 2\r\x1b[2J", 19, ESC_KEEP_LINES);
	ck_assert_str_eq(e, "line 1\n\tline 2\\r\\x1b[2J");
	free(e);
}
END_TEST

START_TEST(escape_cut_between_escapes)
{
	char	 d[8], *e;

	/* "ab\x1b": "ab" fits, "\x1b" (4) does not with the NUL in 6. */
	ck_assert_uint_eq(esc_cpy(d, 6, "ab\x1bzz", 5, 0), 2);
	ck_assert_str_eq(d, "ab");
	ck_assert_uint_eq(esc_cpy(d, 7, "ab\x1bzz", 5, 0), 6);
	ck_assert_str_eq(d, "ab\\x1b");
	/* A UTF-8 character is not cut either. */
	ck_assert_uint_eq(esc_cpy(d, 4, "a\xe6\x97\xa5", 4, 0), 1);
	e = esc_new("\x1b");
	ck_assert_str_eq(e, "\\x1b");
	free(e);
	ck_assert_str_eq(ESC("x\ny"), "x\\ny");
}
END_TEST

/* Whatever a message holds, the log writes one line: no newline but the
 * last, no control character, under journald's "<N>" prefix too. */
START_TEST(log_line_never_breaks)
{
	char	 dir[256], path[320], *text;
	size_t	 len, i, nl = 0;
	int	 fd, saved;

	tu_tmpdir(dir, sizeof(dir), "log");
	tu_path(path, sizeof(path), dir, "stderr");
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	saved = dup(STDERR_FILENO);
	ck_assert_int_ge(dup2(fd, STDERR_FILENO), 0);
	log_setup(LOG_LVL_INFO, true);
	log_warn("tracking %s", "y\n<3>[sink_halt] forged \x1b[31m\xe6\x97\xa5");
	log_setup(LOG_LVL_INFO, false);
	log_warn("tracking %s", "y\r\n<3>x");
	ck_assert_int_ge(dup2(saved, STDERR_FILENO), 0);
	close(saved);
	close(fd);
	text = tu_slurp(path, &len);
	for (i = 0; i < len; i++) {
		nl += text[i] == '\n';
		ck_assert((unsigned char)text[i] >= 0x20 || text[i] == '\n');
	}
	ck_assert_uint_eq(nl, 2);
	ck_assert_ptr_nonnull(strstr(text, "<4>[log_line_never_breaks_fn] "
	    "tracking y\\n<3>[sink_halt] forged \\x1b[31m\xe6\x97\xa5\n"));
	ck_assert_ptr_nonnull(strstr(text, "tracking y\\r\\n<3>x\n"));
	free(text);
	tu_rmtree(dir);
}
END_TEST

static Suite *
core_suite(void)
{
	Suite	*s = suite_create("core");
	TCase	*tc;

	tc = tcase_create("watermark");
	tcase_add_test(tc, watermark_out_of_order_acks_wait_for_the_gap);
	tcase_add_test(tc, watermark_ignores_unknown_and_repeated_acks);
	tcase_add_test(tc, watermark_grows_and_wraps);
	tcase_add_test(tc, watermark_reset_forgets_in_flight_ranges);
	tcase_add_test(tc, watermark_skip_extends_the_newest_range_or_commits);
	suite_add_tcase(s, tc);
	tc = tcase_create("retry");
	tcase_add_test(tc, backoff_is_full_jitter_within_the_cap);
	tcase_add_test(tc, classify_every_row_of_the_error_table);
	tcase_add_test(tc, halt_hints_name_what_the_code_names);
	tcase_add_test(tc, record_codes_match_by_substring_like_the_sdk);
	suite_add_tcase(s, tc);
	tc = tcase_create("tailer");
	tcase_add_test(tc, read_truncates_a_runaway_line_and_skips_its_tail);
	tcase_add_test(tc, fingerprint_detects_a_different_head);
	tcase_add_test(tc, read_window_is_the_read_size_for_short_lines);
	tcase_add_test(tc, read_window_grows_for_a_line_longer_than_a_read);
	tcase_add_test(tc, trim_frees_the_ring_of_a_settled_file);
	tcase_add_test(tc, registry_entry_shares_its_tailer_path);
	suite_add_tcase(s, tc);
	tc = tcase_create("pool");
	tcase_add_test(tc, pool_objects_are_distinct_zeroed_and_given_back);
	tcase_add_test(tc, shared_text_lives_while_held);
	tcase_add_test(tc, shared_texts_of_every_length_keep_their_bytes);
	tcase_add_test(tc, keymap_finds_values_by_the_key_they_carry);
	suite_add_tcase(s, tc);
	tc = tcase_create("watcher");
	tcase_add_test(tc, pattern_globs_in_any_component);
	tcase_add_test(tc, pattern_double_star_matches_any_depth);
	tcase_add_test(tc, skipped_names_unless_the_pattern_names_them);
	tcase_add_test(tc, exclude_by_name_or_full_path);
	suite_add_tcase(s, tc);
	tc = tcase_create("escape");
	tcase_add_test(tc, escape_controls_keep_utf8);
	tcase_add_test(tc, escape_keep_lines_for_a_terminal);
	tcase_add_test(tc, escape_cut_between_escapes);
	tcase_add_test(tc, log_line_never_breaks);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(core_suite());
}
