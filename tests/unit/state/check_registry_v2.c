/*
 * Unit tests for the registry's version 2 state file (JSON Lines)
 * written by hand: the header, its checksum and count, a huge, blank or
 * missing line.  Every test works in its own mkdtemp dir
 * (registry_fixture.h).
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

/* --- version 2 (JSON Lines) ------------------------------------------ */

START_TEST(v2_file_written_by_hand_with_valid_crc_is_accepted)
{
	struct registry		*reg;
	struct reg_entry	*e;
	int			 r;

	/* Control for the tests below: the helper makes good files. */
	write_v2_from_array(spath, "[" GOOD_ENTRY "]");
	reg = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(registry_count(reg), 1);
	e = registry_find(reg, "app", 1, 2);
	ck_assert_ptr_nonnull(e);
	ck_assert_str_eq(e->path, "/x");
	ck_assert_uint_eq(e->fp_crc, 0x0a1b2c3d);
	ck_assert_uint_eq(e->offset, 7);
	ck_assert_int_eq(e->updated, 9);
	/* No "complete" (every file written before it existed): none. */
	ck_assert(reg_done(e) == NULL);
	ck_assert(!registry_dirty(reg));
	registry_free(reg);
}
END_TEST

START_TEST(complete_mark_is_durable_only_after_a_save_and_survives_load)
{
	struct registry		*reg;
	struct reg_entry	*e;
	int			 r;

	reg = registry_new(spath);
	e = registry_set(reg, "app", 1, 2, 0x11, 16, "/w.csv", 300);
	ck_assert_int_eq(registry_save(reg, false), 0);
	registry_set_complete(reg, e, true, 1234567890123456789LL,
	    0xdeadbeef, 16);
	ck_assert(registry_dirty(reg));
	/* Marked in memory only: a crash now must not find it complete. */
	ck_assert(!registry_durable(reg, e));
	ck_assert_int_eq(registry_save(reg, false), 0);
	ck_assert(registry_durable(reg, e));
	registry_free(reg);

	reg = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	e = registry_find(reg, "app", 1, 2);
	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_nonnull(reg_done(e));
	ck_assert_int_eq(reg_done(e)->mtime_ns, 1234567890123456789LL);
	ck_assert_uint_eq(reg_done(e)->tail_crc, 0xdeadbeef);
	ck_assert_uint_eq(reg_done(e)->tail_len, 16);
	ck_assert_uint_eq(e->offset, 300);
	ck_assert(registry_durable(reg, e));	/* read from the file */
	/* Cleared (the file changed after delivery): gone at the next load. */
	registry_set_complete(reg, e, false, 0, 0, 0);
	ck_assert(registry_dirty(reg));
	ck_assert_ptr_null(e->rare);	/* nothing rare left: freed */
	ck_assert_int_eq(registry_save(reg, false), 0);
	registry_free(reg);
	reg = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	e = registry_find(reg, "app", 1, 2);
	ck_assert_ptr_nonnull(e);
	ck_assert(reg_done(e) == NULL);
	ck_assert_uint_eq(e->offset, 300);
	registry_free(reg);
}
END_TEST

START_TEST(failed_save_leaves_the_complete_mark_not_durable)
{
	struct registry		*reg;
	struct reg_entry	*e;
	char			 sub[PATH_MAX];

	tu_path(sub, sizeof(sub), dir, "missing/state.json");
	reg = registry_new(sub);
	e = registry_set(reg, "app", 1, 2, 0x11, 16, "/w.csv", 300);
	registry_set_complete(reg, e, true, 5, 6, 7);
	ck_assert_int_ne(registry_save(reg, false), 0);
	ck_assert(!registry_durable(reg, e));
	registry_free(reg);
}
END_TEST

START_TEST(v2_wrong_field_types_fall_back_to_bak)
{
	save_variant_as(sbak, 2);
	write_v2_from_array(spath, bad_files[_i]);
	assert_falls_back_to_bak();
}
END_TEST

START_TEST(v2_nul_filled_body_falls_back_to_bak)
{
	char	*text, *nl;
	size_t	 len, head;

	save_variant_as(spath, 1);
	text = tu_slurp(spath, &len);
	nl = strchr(text, '\n');
	ck_assert_ptr_nonnull(nl);
	head = (size_t)(nl + 1 - text);
	/* A torn write: the size made it to disk, the data did not. */
	memset(text + head, 0, len - head);
	tu_write(spath, text, len);
	free(text);
	save_variant_as(sbak, 2);
	assert_falls_back_to_bak();
}
END_TEST

START_TEST(v2_nul_filled_block_inside_falls_back_to_bak)
{
	char	*text;
	size_t	 len;

	save_variant_as(spath, 1);
	text = tu_slurp(spath, &len);
	ck_assert_uint_gt(len, 120);
	memset(text + 60, 0, 40);
	tu_write(spath, text, len);
	free(text);
	save_variant_as(sbak, 2);
	assert_falls_back_to_bak();
}
END_TEST

START_TEST(v2_bad_checksum_in_header_falls_back_to_bak)
{
	char	*text, *at;
	size_t	 len;

	save_variant_as(spath, 1);
	text = tu_slurp(spath, &len);
	at = strstr(text, "\"crc32\":\"");
	ck_assert_ptr_nonnull(at);
	at += strlen("\"crc32\":\"");
	*at = *at == '0' ? '1' : '0';
	tu_write(spath, text, len);
	free(text);
	save_variant_as(sbak, 2);
	assert_falls_back_to_bak();
}
END_TEST

START_TEST(v2_malformed_header_falls_back_to_bak)
{
	static const char line[] = GOOD_ENTRY "\n";
	/* '@' stands for the body's crc32, '#' for it cut to 7 digits. */
	static const char *const heads[] = {
		"{\"version\":2,\"crc32\":\"@\",\"entries\":\"1\"}\n",
		"{\"version\":2,\"crc32\":\"@\",\"entries\":-1}\n",
		"{\"version\":2,\"crc32\":\"@\",\"entries\":1.0}\n",
		"{\"version\":2,\"crc32\":\"@\"}\n",
		"{\"version\":2,\"entries\":1,\"crc\":\"@\"}\n",
		"{\"version\":2,\"crc32\":\"#\",\"entries\":1}\n",
		"{\"version\":2,\"crc32\":\"@0\",\"entries\":1}\n",
		"{\"version\":2,\"version\":2,\"crc32\":\"@\",\"entries\":1}\n",
		"{\"version\":3,\"crc32\":\"@\",\"entries\":1}\n",
		"{\"version\":2,\"crc32\":\"@\",\"entries\":1} x\n",
		"[\"version\",2,\"crc32\",\"@\",\"entries\",1]\n",
	};
	char		 crc[9];
	const char	*p;
	struct buf	 text;
	size_t		 i;

	snprintf(crc, sizeof(crc), "%08lx", (unsigned long)crc32(crc32(0L,
	    Z_NULL, 0), (const Bytef *)line, (uInt)strlen(line)));
	for (i = 0; i < ARRAY_SIZE(heads); i++) {
		buf_init(&text);
		for (p = heads[i]; *p != '\0'; p++) {
			if (*p == '@' || *p == '#')
				buf_add(&text, crc, *p == '@' ? 8 : 7);
			else
				buf_addc(&text, *p);
		}
		buf_addstr(&text, line);
		save_variant_as(sbak, 2);
		tu_write(spath, text.data, text.len);
		assert_falls_back_to_bak();
		count_prefixed("state.json.corrupt-", true);
		buf_cleanup(&text);
	}
}
END_TEST

START_TEST(v2_header_without_end_of_line_falls_back_to_bak)
{
	static const char head[] =
	    "{\"version\":2,\"crc32\":\"00000000\",\"entries\":0}";

	save_variant_as(sbak, 2);
	tu_write(spath, head, strlen(head));
	assert_falls_back_to_bak();
}
END_TEST

/* A line over the cap is refused before jansson sees it. */
START_TEST(v2_huge_line_falls_back_to_bak)
{
	struct buf	 body;
	size_t		 i;

	buf_init(&body);
	buf_addstr(&body, "{\"flow\":\"app\",\"dev\":1,\"ino\":2,"
	    "\"fingerprint\":\"crc32:0a1b2c3d:512\",\"offset\":7,"
	    "\"updated\":9,\"path\":\"/");
	for (i = 0; i < 2 * 1024 * 1024; i++)
		buf_addc(&body, 'a');
	buf_addstr(&body, "\"}\n");
	save_variant_as(sbak, 2);
	write_v2(spath, body.data, body.len, 1);
	buf_cleanup(&body);
	assert_falls_back_to_bak();
}
END_TEST

/* ...and the writer never writes a line the reader would refuse. */
START_TEST(save_of_an_entry_too_long_to_read_back_fails_and_keeps_state)
{
	struct registry	*reg;
	char		*path;

	reg = registry_new(spath);
	fill_variant(reg, 1);
	ck_assert_int_eq(registry_save(reg, false), 0);
	path = xmalloc(2 * 1024 * 1024);
	memset(path, 'a', 2 * 1024 * 1024 - 1);
	path[2 * 1024 * 1024 - 1] = '\0';
	registry_set(reg, "app", 7, 7, 0, 0, path, 1);
	free(path);
	assert_save_failed_keeping(reg, registry_save(reg, false), -EMSGSIZE,
	    1);
	registry_remove(reg, "app", 7, 7);
	ck_assert_int_eq(registry_save(reg, false), 0);
	registry_free(reg);
}
END_TEST

START_TEST(v2_entry_line_missing_falls_back_to_bak)
{
	char	*body, *second, *third;
	size_t	 n;

	save_variant_as(spath, 1);
	body = body_of(spath, &n);
	second = strchr(body, '\n') + 1;
	third = strchr(second, '\n') + 1;
	memmove(second, third, (size_t)(body + n - third) + 1);
	n -= (size_t)(third - second);
	/* The crc matches what is left: only the count tells. */
	write_v2(spath, body, n, NVAR);
	free(body);
	save_variant_as(sbak, 2);
	assert_falls_back_to_bak();
}
END_TEST

START_TEST(v2_more_lines_than_the_header_counts_fall_back_to_bak)
{
	char	*body;
	size_t	 n;

	save_variant_as(spath, 1);
	body = body_of(spath, &n);
	write_v2(spath, body, n, NVAR - 1);
	free(body);
	save_variant_as(sbak, 2);
	assert_falls_back_to_bak();
}
END_TEST

START_TEST(v2_blank_or_unended_line_falls_back_to_bak)
{
	static const char *const bodies[] = {
		GOOD_ENTRY "\n\n",
		"\n" GOOD_ENTRY "\n",
		GOOD_ENTRY,
		GOOD_ENTRY " x\n",
	};
	size_t	 i;

	for (i = 0; i < ARRAY_SIZE(bodies); i++) {
		save_variant_as(sbak, 2);
		write_v2(spath, bodies[i], strlen(bodies[i]), 1);
		assert_falls_back_to_bak();
		count_prefixed("state.json.corrupt-", true);
	}
}
END_TEST

static Suite *
registry_v2_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("registry_v2");
	tc = tcase_create("core");
	tcase_add_checked_fixture(tc, registry_fixture_setup,
	    registry_fixture_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, v2_file_written_by_hand_with_valid_crc_is_accepted);
	tcase_add_test(tc,
	    complete_mark_is_durable_only_after_a_save_and_survives_load);
	tcase_add_test(tc, failed_save_leaves_the_complete_mark_not_durable);
	tcase_add_loop_test(tc,
	    v2_wrong_field_types_fall_back_to_bak, 0,
	    (int)nbad_files);
	tcase_add_test(tc, v2_nul_filled_body_falls_back_to_bak);
	tcase_add_test(tc, v2_nul_filled_block_inside_falls_back_to_bak);
	tcase_add_test(tc, v2_bad_checksum_in_header_falls_back_to_bak);
	tcase_add_test(tc, v2_malformed_header_falls_back_to_bak);
	tcase_add_test(tc, v2_header_without_end_of_line_falls_back_to_bak);
	tcase_add_test(tc, v2_huge_line_falls_back_to_bak);
	tcase_add_test(tc,
	    save_of_an_entry_too_long_to_read_back_fails_and_keeps_state);
	tcase_add_test(tc, v2_entry_line_missing_falls_back_to_bak);
	tcase_add_test(tc,
	    v2_more_lines_than_the_header_counts_fall_back_to_bak);
	tcase_add_test(tc, v2_blank_or_unended_line_falls_back_to_bak);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(registry_v2_suite());
}
