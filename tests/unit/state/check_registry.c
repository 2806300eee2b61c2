/*
 * Unit tests for the registry's entries: lookup and update semantics,
 * expiry, a renamed flow; and what a restart needs kept: acknowledged
 * spans, found records, the run.  Every test works in its own mkdtemp
 * dir (registry_fixture.h).
 */
#include "config.h"

#include <sys/resource.h>
#include <sys/stat.h>

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <zlib.h>

#include "base/log.h"
#include "base/util.h"
#include "state/registry.h"
#include "registry_fixture.h"
#include "testutil.h"

/* --- lookup, update, remove, expire ----------------------------------- */

START_TEST(set_then_find_returns_entry_and_marks_dirty)
{
	struct registry		*reg;
	struct reg_entry	*e;
	int64_t			 t0 = wall_s();

	reg = registry_new(spath);
	ck_assert(!registry_dirty(reg));
	ck_assert_ptr_null(registry_find(reg, "app", 1, 2));
	e = registry_set(reg, "app", 1, 2, 0xabcdef01, 64, "/a.log", 77);
	ck_assert(registry_dirty(reg));
	ck_assert_ptr_eq(registry_find(reg, "app", 1, 2), e);
	ck_assert_str_eq(e->flow, "app");
	ck_assert_str_eq(e->path, "/a.log");
	ck_assert_uint_eq(e->offset, 77);
	ck_assert_uint_eq(e->fp_crc, 0xabcdef01);
	ck_assert_uint_eq(e->fp_len, 64);
	ck_assert_int_ge(e->updated, t0);
	ck_assert_int_le(e->updated, wall_s());
	ck_assert_ptr_null(registry_find(reg, "app", 1, 3));
	ck_assert_ptr_null(registry_find(reg, "other", 1, 2));
	e = registry_set(reg, "app", 1, 2, 0x11, 128, "/b.log", 99);
	ck_assert_uint_eq(registry_count(reg), 1);
	ck_assert_str_eq(e->path, "/b.log");
	ck_assert_uint_eq(e->offset, 99);
	ck_assert_uint_eq(e->fp_len, 128);
	registry_free(reg);
}
END_TEST

START_TEST(set_with_unchanged_values_keeps_registry_clean)
{
	struct registry	*reg;
	int64_t		 t0;
	int		 tries;

	reg = registry_new(spath);
	/* Retry if the wall clock ticks in between ("updated" would move). */
	for (tries = 0; tries < 5; tries++) {
		t0 = wall_s();
		registry_set(reg, "app", 1, 2, 3, 4, "/p", 5);
		ck_assert_int_eq(registry_save(reg, false), 0);
		ck_assert(!registry_dirty(reg));
		registry_set(reg, "app", 1, 2, 3, 4, "/p", 5);
		if (wall_s() == t0)
			break;
	}
	ck_assert_int_lt(tries, 5);
	ck_assert(!registry_dirty(reg));
	registry_set(reg, "app", 1, 2, 3, 4, "/p", 6);
	ck_assert(registry_dirty(reg));
	registry_free(reg);
}
END_TEST

START_TEST(remove_drops_only_that_entry)
{
	struct registry	*reg;

	reg = registry_new(spath);
	fill_variant(reg, 1);
	ck_assert_int_eq(registry_save(reg, false), 0);
	registry_remove(reg, "app", 2049, 101);
	ck_assert(registry_dirty(reg));
	ck_assert_uint_eq(registry_count(reg), NVAR - 1);
	ck_assert_ptr_null(registry_find(reg, "app", 2049, 101));
	ck_assert_ptr_nonnull(registry_find(reg, "app", 2049, 100));
	ck_assert_ptr_nonnull(registry_find(reg, "app", 2049, 102));
	ck_assert_int_eq(registry_save(reg, false), 0);
	registry_remove(reg, "app", 2049, 101);		/* absent: no-op */
	registry_remove(reg, "nope", 2049, 100);
	ck_assert(!registry_dirty(reg));
	ck_assert_uint_eq(registry_count(reg), NVAR - 1);
	registry_free(reg);
}
END_TEST

START_TEST(expire_drops_entries_older_than_ttl)
{
	struct registry	*reg;

	reg = registry_new(spath);
	registry_set(reg, "app", 1, 1, 0, 0, "/1", 1)->updated = 100;
	registry_set(reg, "app", 1, 2, 0, 0, "/2", 2)->updated = 250;
	registry_set(reg, "app", 1, 3, 0, 0, "/3", 3)->updated = 300;
	ck_assert_int_eq(registry_save(reg, false), 0);
	registry_expire(reg, 400, 0);			/* disabled */
	registry_expire(reg, 400, 1000);		/* nothing that old */
	ck_assert_uint_eq(registry_count(reg), 3);
	ck_assert(!registry_dirty(reg));
	registry_expire(reg, 400, 150);			/* cut-off 250 */
	ck_assert_uint_eq(registry_count(reg), 2);
	ck_assert(registry_dirty(reg));
	ck_assert_ptr_null(registry_find(reg, "app", 1, 1));
	ck_assert_ptr_nonnull(registry_find(reg, "app", 1, 2));
	ck_assert_ptr_nonnull(registry_find(reg, "app", 1, 3));
	registry_free(reg);
}
END_TEST

/*
 * The table against a model: random sets, removals and expiries over 3,000
 * keys of two flows (the table grows to 4,096 slots and its entries come
 * and go by the hundred, so runs of full slots form, wrap past the end of
 * the array and are closed up by removals).  After each step the count
 * agrees, and every 97 steps (and at the end) every key is found exactly
 * when the model holds it, with its offset and time.
 */
#define MODEL_KEYS	3000

START_TEST(random_sets_removes_and_expiries_agree_with_a_model)
{
	struct registry		*reg;
	struct reg_entry	*e;
	static int64_t		 upd[MODEL_KEYS];	/* 0: absent */
	static uint64_t		 off[MODEL_KEYS];
	uint32_t		 seed = 12345;
	size_t			 n = 0, k, step, i;
	int64_t			 clock = 1000, ttl;
	const char		*flow;

	memset(upd, 0, sizeof(upd));
	reg = registry_new(spath);
	for (step = 0; step < 40000; step++) {
		seed = seed * 1103515245u + 12345u;
		k = (seed >> 8) % MODEL_KEYS;
		flow = k % 2 ? "app" : "web";
		switch ((seed >> 4) % 16) {
		case 0:		/* now and then, an expiry of about half */
			ttl = (clock - 1000) / 2;	/* 0 would disable it */
			if ((seed >> 20) % 64 != 0 || ttl == 0)
				break;
			registry_expire(reg, clock, ttl);
			for (i = 0; i < MODEL_KEYS; i++)
				if (upd[i] != 0 && upd[i] < clock - ttl) {
					upd[i] = 0;
					n--;
				}
			break;
		case 1: case 2: case 3: case 4: case 5:
			registry_remove(reg, flow, 7, k);
			if (upd[k] != 0) {
				upd[k] = 0;
				n--;
			}
			break;
		default:
			e = registry_set(reg, flow, 7, k, 0, 0, "/p", step);
			e->updated = ++clock;
			if (upd[k] == 0)
				n++;
			upd[k] = clock;
			off[k] = step;
			break;
		}
		ck_assert_uint_eq(registry_count(reg), n);
		if (step % 97 != 0 && step < 39990)
			continue;
		for (i = 0; i < MODEL_KEYS; i++) {
			e = registry_find(reg, i % 2 ? "app" : "web", 7, i);
			if (upd[i] == 0) {
				ck_assert_ptr_null(e);
				continue;
			}
			ck_assert_ptr_nonnull(e);
			ck_assert_uint_eq(e->offset, off[i]);
			ck_assert_int_eq(e->updated, upd[i]);
			/* the other flow's key is another entry */
			ck_assert_ptr_null(registry_find(reg,
			    i % 2 ? "web" : "app", 7, i));
		}
	}
	registry_free(reg);
}
END_TEST

START_TEST(flows_sharing_dev_ino_keep_separate_entries)
{
	struct registry		*reg, *r2;
	int			 r;

	reg = registry_new(spath);
	registry_set(reg, "a", 5, 6, 0x1, 10, "/shared.log", 100);
	registry_set(reg, "b", 5, 6, 0x1, 10, "/shared.log", 200);
	ck_assert_uint_eq(registry_count(reg), 2);
	ck_assert_uint_eq(registry_find(reg, "a", 5, 6)->offset, 100);
	ck_assert_uint_eq(registry_find(reg, "b", 5, 6)->offset, 200);
	ck_assert_int_eq(registry_save(reg, false), 0);
	r2 = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(registry_count(r2), 2);
	ck_assert_uint_eq(registry_find(r2, "a", 5, 6)->offset, 100);
	ck_assert_uint_eq(registry_find(r2, "b", 5, 6)->offset, 200);
	registry_free(r2);
	registry_remove(reg, "a", 5, 6);
	ck_assert_uint_eq(registry_find(reg, "b", 5, 6)->offset, 200);
	registry_free(reg);
}
END_TEST

/* A renamed flow (issue 36): every entry of the old name moves to the new
 * one, an entry the new one has for the same file wins, the other flows
 * stay; the flows' descriptions survive a save, only for names with
 * entries. */
START_TEST(rename_flow_moves_entries_and_descriptions_survive)
{
	struct registry		*reg, *r2;
	const struct reg_flowdesc *d;
	const char		**names;
	size_t			 n, i;
	int			 r;

	reg = registry_new(spath);
	for (i = 0; i < 100; i++)
		registry_set(reg, "app", 1, i, 0x1, 10, "/a.log", i);
	registry_set(reg, "web", 1, 7, 0x1, 10, "/a.log", 1000);
	registry_set(reg, "other", 1, 3, 0x1, 10, "/o.log", 5);
	registry_describe_flow(reg, "app", "s1", "/w/*.log");
	registry_describe_flow(reg, "gone", "s9", "/g/*.log");
	ck_assert_int_eq(registry_save(reg, false), 0);
	ck_assert_uint_eq(registry_rename_flow(reg, "app", "web"), 99);
	ck_assert(registry_dirty(reg));
	ck_assert_uint_eq(registry_count(reg), 101);
	ck_assert_uint_eq(registry_flow_count(reg, "app"), 0);
	ck_assert_uint_eq(registry_flow_count(reg, "web"), 100);
	ck_assert_uint_eq(registry_find(reg, "web", 1, 7)->offset, 1000);
	ck_assert_uint_eq(registry_find(reg, "web", 1, 42)->offset, 42);
	ck_assert_uint_eq(registry_find(reg, "other", 1, 3)->offset, 5);
	ck_assert_ptr_null(registry_find(reg, "app", 1, 42));
	names = registry_flow_names(reg, &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(names[0], "other");
	ck_assert_str_eq(names[1], "web");
	free(names);
	registry_describe_flow(reg, "web", "s1", "/w/*.log");
	ck_assert_int_eq(registry_save(reg, false), 0);
	r2 = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(registry_flow_count(r2, "web"), 100);
	d = registry_flow_desc(r2, "web");
	ck_assert_ptr_nonnull(d);
	ck_assert_str_eq(d->stream, "s1");
	ck_assert_str_eq(d->pattern, "/w/*.log");
	/* No entries: not saved. */
	ck_assert_ptr_null(registry_flow_desc(r2, "app"));
	ck_assert_ptr_null(registry_flow_desc(r2, "gone"));
	ck_assert_ptr_null(registry_flow_desc(r2, "other"));
	registry_free(r2);
	registry_free(reg);
}
END_TEST

/* --- what a restart needs: spans, found records, the run -------------- */

static struct reg_run *
make_run(bool clean)
{
	struct reg_run	*run = xcalloc(1, sizeof(*run));

	run->clean = clean;
	run->saved_ms = 1700000000123LL;
	run->land_by_ms = 1700000070123LL;
	run->started_ms = 1699999990123LL;
	run->streams = xcalloc(2, sizeof(*run->streams));
	run->nstreams = 2;
	run->streams[0].name = xstrdup("s1");
	reg_stream_put(&run->streams[0], 1, 40);
	reg_stream_put(&run->streams[0], 0, 12);
	reg_stream_put(&run->streams[0], 0, 30);	/* keeps the least */
	run->streams[1].name = xstrdup("id:abcDEF");
	reg_stream_put(&run->streams[1], 3, -1);
	return run;
}

START_TEST(acked_spans_and_run_round_trip)
{
	struct reg_span		 sp[3] = { { 100, 200 }, { 300, 400 },
				    { 500, 501 } };
	struct registry		*reg, *r2;
	struct reg_entry	*e;
	const struct reg_run	*run;
	const struct reg_stream	*st;
	char			*text;
	int			 r;

	reg = registry_new(spath);
	e = registry_set(reg, "app", 1, 2, 0xabc, 512, "/l/a.log", 50);
	registry_set_acked(reg, e, sp, 3);
	registry_set_run(reg, make_run(true));
	ck_assert_int_eq(registry_save(reg, true), 0);
	text = tu_slurp(spath, NULL);
	ck_assert_ptr_nonnull(strstr(text, "\"acked\":[[100,200],[300,400],"
	    "[500,501]]"));
	ck_assert_ptr_nonnull(strstr(text, "\"run\":{\"clean\":true,"));
	free(text);
	r2 = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	e = registry_find(r2, "app", 1, 2);
	ck_assert_uint_eq(reg_nacked(e), 3);
	ck_assert_uint_eq(reg_acked(e)[1].start, 300);
	ck_assert_uint_eq(reg_acked(e)[2].end, 501);
	run = registry_run(r2);
	ck_assert_ptr_nonnull(run);
	ck_assert(run->clean);
	ck_assert_int_eq(run->saved_ms, 1700000000123LL);
	ck_assert_int_eq(run->land_by_ms, 1700000070123LL);
	ck_assert_int_eq(run->started_ms, 1699999990123LL);
	st = reg_run_stream(run, "s1");
	ck_assert_ptr_nonnull(st);
	ck_assert_int_eq(reg_stream_get(st, 0), 12);
	ck_assert_int_eq(reg_stream_get(st, 1), 40);
	ck_assert_int_eq(reg_stream_get(st, 2), REG_SEQ_NONE);
	st = reg_run_stream(run, "id:abcDEF");
	ck_assert_int_eq(reg_stream_get(st, 3), -1);
	ck_assert_ptr_null(reg_run_stream(run, "s2"));
	ck_assert(!registry_dirty(r2));
	registry_free(r2);
	registry_free(reg);
}
END_TEST

/* Files written before the fields existed have none; files of a clean
 * stop and of a crash tell themselves apart. */
START_TEST(files_without_the_new_fields_load_without_them)
{
	struct registry		*reg;
	struct reg_entry	*e;
	int			 r;

	write_v2_from_array(spath, "[" GOOD_ENTRY "]");
	reg = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	e = registry_find(reg, "app", 1, 2);
	ck_assert_uint_eq(reg_nacked(e), 0);
	ck_assert_ptr_null(registry_run(reg));
	registry_set_run(reg, make_run(false));
	ck_assert_int_eq(registry_save(reg, true), 0);
	registry_free(reg);
	reg = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	ck_assert(!registry_run(reg)->clean);
	registry_free(reg);
}
END_TEST

/* Spans past the offset only, merged by the caller, trimmed as the
 * offset moves, gone when the file is read again from before it. */
START_TEST(acked_spans_follow_the_committed_offset)
{
	struct reg_span		 sp[3] = { { 10, 40 }, { 60, 80 },
				    { 90, 95 } };
	struct registry		*reg;
	struct reg_entry	*e;

	reg = registry_new(spath);
	e = registry_set(reg, "app", 1, 2, 0, 0, "/x", 20);
	ck_assert_int_eq(registry_save(reg, true), 0);
	registry_set_acked(reg, e, sp, 3);
	ck_assert(registry_dirty(reg));
	ck_assert_uint_eq(reg_nacked(e), 3);
	ck_assert_int_eq(registry_save(reg, true), 0);
	registry_set_acked(reg, e, sp, 3);
	ck_assert(!registry_dirty(reg));
	e = registry_set(reg, "app", 1, 2, 0, 0, "/x", 80);
	ck_assert_uint_eq(reg_nacked(e), 1);
	ck_assert_uint_eq(reg_acked(e)[0].start, 90);
	e = registry_set(reg, "app", 1, 2, 0, 0, "/x", 0);
	ck_assert_uint_eq(reg_nacked(e), 0);
	registry_set_acked(reg, e, sp, 3);
	registry_set_acked(reg, e, sp + 1, 1);
	ck_assert_uint_eq(reg_nacked(e), 1);
	ck_assert_uint_eq(reg_acked(e)[0].start, 60);
	registry_set_acked(reg, e, NULL, 0);
	ck_assert_uint_eq(reg_nacked(e), 0);
	registry_free(reg);
}
END_TEST

START_TEST(found_records_are_kept_in_order_and_taken_once)
{
	struct registry		*reg;
	struct reg_entry	*e;
	struct reg_found	*f;
	size_t			 n, i;

	reg = registry_new(spath);
	e = registry_set(reg, "app", 1, 2, 0, 0, "/x", 0);
	for (i = 0; i < 20; i++)
		registry_add_found(e, (i * 7919) % 20 * 10, i, (uint32_t)i);
	f = registry_take_found(e, &n);
	ck_assert_uint_eq(n, 20);
	for (i = 0; i < n; i++)
		ck_assert_uint_eq(f[i].off, i * 10);
	free(f);
	ck_assert_ptr_null(registry_take_found(e, &n));
	ck_assert_uint_eq(n, 0);
	registry_free(reg);
}
END_TEST

/* A bad "acked" or "run" is a bad file: the .bak is used. */
static const char *const bad_new_fields[] = {
	"\"acked\":5",
	"\"acked\":[[5,6]]",		/* ends before the offset (7) */
	"\"acked\":[[8,8]]",
	"\"acked\":[[9,20],[10,30]]",	/* overlapping */
	"\"acked\":[[9,\"20\"]]",
	"\"acked\":[[9]]",
};

START_TEST(v2_bad_acked_falls_back_to_bak)
{
	char	*line;

	save_variant_as(sbak, 2);
	line = xasprintf("{\"flow\":\"app\",\"dev\":1,\"ino\":2,"
	    "\"fingerprint\":\"crc32:0a1b2c3d:512\",\"path\":\"/x\","
	    "\"offset\":7,\"updated\":9,%s}\n", bad_new_fields[_i]);
	write_v2(spath, line, strlen(line), 1);
	free(line);
	assert_falls_back_to_bak();
}
END_TEST

START_TEST(v2_bad_run_falls_back_to_bak)
{
	static const char *const runs[] = {
		"5", "{}", "{\"clean\":1,\"saved_ms\":1,\"land_by_ms\":2,"
		"\"seq\":{}}", "{\"clean\":true,\"saved_ms\":1,"
		"\"land_by_ms\":2,\"seq\":{\"s1\":{\"x\":3}}}",
		"{\"clean\":true,\"saved_ms\":1,\"land_by_ms\":2,"
		"\"seq\":{\"s1\":{\"0\":-5}}}",
		"{\"clean\":true,\"saved_ms\":1,\"land_by_ms\":2,"
		"\"started_ms\":\"x\",\"seq\":{}}",
	};
	const char	*body = GOOD_ENTRY "\n";
	struct buf	 text;
	uLong		 crc = crc32(crc32(0L, Z_NULL, 0), (const Bytef *)body,
			    (uInt)strlen(body));
	size_t		 i;

	for (i = 0; i < ARRAY_SIZE(runs); i++) {
		save_variant_as(sbak, 2);
		buf_init(&text);
		buf_printf(&text, "{\"version\":2,\"crc32\":\"%08lx\","
		    "\"entries\":1,\"run\":%s}\n%s", (unsigned long)crc,
		    runs[i], body);
		tu_write(spath, text.data, text.len);
		buf_cleanup(&text);
		assert_falls_back_to_bak();
		count_prefixed("state.json.corrupt-", true);
		unlink(sbak);
	}
}
END_TEST

static Suite *
registry_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("registry");
	tc = tcase_create("core");
	tcase_add_checked_fixture(tc, registry_fixture_setup,
	    registry_fixture_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, set_then_find_returns_entry_and_marks_dirty);
	tcase_add_test(tc, set_with_unchanged_values_keeps_registry_clean);
	tcase_add_test(tc, remove_drops_only_that_entry);
	tcase_add_test(tc, expire_drops_entries_older_than_ttl);
	tcase_add_test(tc,
	    random_sets_removes_and_expiries_agree_with_a_model);
	tcase_add_test(tc, flows_sharing_dev_ino_keep_separate_entries);
	tcase_add_test(tc, rename_flow_moves_entries_and_descriptions_survive);
	tcase_add_test(tc, acked_spans_and_run_round_trip);
	tcase_add_test(tc, files_without_the_new_fields_load_without_them);
	tcase_add_test(tc, acked_spans_follow_the_committed_offset);
	tcase_add_test(tc, found_records_are_kept_in_order_and_taken_once);
	tcase_add_loop_test(tc,
	    v2_bad_acked_falls_back_to_bak, 0,
	    (int)ARRAY_SIZE(bad_new_fields));
	tcase_add_test(tc, v2_bad_run_falls_back_to_bak);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(registry_suite());
}
