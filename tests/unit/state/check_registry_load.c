/*
 * Unit tests for the registry's load, and every way a state file can be
 * damaged (empty, truncated at each byte, NUL-filled, garbage, wrong
 * version, bad crc, wrong types), each of which must fall back to the
 * .bak and set the bad file aside; loads bounded in memory.  Every test
 * works in its own mkdtemp dir (registry_fixture.h).
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

/* --- load ------------------------------------------------------------- */

START_TEST(load_with_no_files_is_empty_and_ok)
{
	struct registry	*reg;
	int		 r;

	reg = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(registry_count(reg), 0);
	ck_assert(!registry_dirty(reg));
	registry_free(reg);
}
END_TEST

START_TEST(load_replaces_entries_already_present)
{
	struct registry	*reg;

	save_variant_as(spath, 1);
	reg = registry_new(spath);
	registry_set(reg, "stale", 1, 1, 1, 1, "/stale", 1);
	ck_assert_int_eq(registry_load(reg), 0);
	ck_assert_ptr_null(registry_find(reg, "stale", 1, 1));
	check_variant(reg, 1);
	ck_assert(!registry_dirty(reg));
	registry_free(reg);
}
END_TEST

START_TEST(load_missing_file_uses_bak)
{
	struct registry	*reg;
	int		 r;

	save_variant_as(sbak, 2);
	reg = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	check_variant(reg, 2);
	ck_assert(registry_dirty(reg));
	ck_assert_int_eq(count_prefixed("state.json.corrupt-", false), 0);
	registry_free(reg);
}
END_TEST

START_TEST(load_empty_file_falls_back_to_bak)
{
	save_variant_as(sbak, 2);
	tu_write(spath, "", 0);
	assert_falls_back_to_bak();
}
END_TEST

START_TEST(load_nul_filled_file_falls_back_to_bak)
{
	char	 zeros[4096];

	memset(zeros, 0, sizeof(zeros));
	save_variant_as(sbak, 2);
	tu_write(spath, zeros, sizeof(zeros));
	assert_falls_back_to_bak();
}
END_TEST

START_TEST(load_garbage_falls_back_to_bak)
{
	static const char g[] = "\x89PNG this is not json }{][\"\n";

	save_variant_as(sbak, 2);
	tu_write(spath, g, sizeof(g) - 1);
	assert_falls_back_to_bak();
}
END_TEST

START_TEST(load_wrong_version_falls_back_to_bak)
{
	save_variant_as(sbak, 2);
	write_with_crc(spath, 2, "[" GOOD_ENTRY "]");
	assert_falls_back_to_bak();
}
END_TEST

START_TEST(load_file_with_valid_crc_written_by_hand_is_accepted)
{
	struct registry		*reg;
	struct reg_entry	*e;
	int			 r;

	/* Control for the field tests below: the helper makes good files. */
	write_with_crc(spath, 1, "[" GOOD_ENTRY "]");
	reg = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	e = registry_find(reg, "app", 1, 2);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->fp_crc, 0x0a1b2c3d);
	ck_assert_uint_eq(e->fp_len, 512);
	ck_assert_uint_eq(e->offset, 7);
	ck_assert_int_eq(e->updated, 9);
	registry_free(reg);
}
END_TEST

/*
 * The file is read member by member and entry by entry, but it is still
 * JSON: members in any order, blanks anywhere, unknown keys ignored.
 */
START_TEST(load_accepts_members_in_any_order_and_unknown_keys)
{
	const char	*files = "[" GOOD_ENTRY ",\n\t "
	    "{\"updated\":1,\"offset\":3,\"path\":\"/y\",\"flow\":\"b\","
	    "\"fingerprint\":\"crc32:00000001:1\",\"ino\":5,\"dev\":4}]";
	struct registry		*reg;
	struct reg_entry	*e;
	json_t			*j;
	uLong			 crc = crc32(0L, Z_NULL, 0);
	char			*text;
	int			 r;

	j = json_loads(files, 0, NULL);
	ck_assert_ptr_nonnull(j);
	json_dump_callback(j, crc_cb, &crc, JSON_COMPACT);
	json_decref(j);
	text = xasprintf(" {\n \"files\" :%s ,\"note\": {\"a\": [1, \"]\"]},"
	    "\"crc32\":\"%08lx\",\r\n\"version\"\t: 1 }\n\n", files,
	    (unsigned long)crc);
	tu_write(spath, text, strlen(text));
	free(text);
	reg = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(registry_count(reg), 2);
	ck_assert_ptr_nonnull(registry_find(reg, "app", 1, 2));
	e = registry_find(reg, "b", 4, 5);
	ck_assert_ptr_nonnull(e);
	ck_assert_str_eq(e->path, "/y");
	ck_assert_uint_eq(e->offset, 3);
	registry_free(reg);
}
END_TEST

/*
 * A size noted keeps the registry clean (a tailed file's growth alone is
 * no save), and the next save writes it.
 */
START_TEST(set_size_keeps_clean_and_the_next_save_writes_it)
{
	struct registry		*reg, *r2;
	struct reg_entry	*e;
	int			 r;

	reg = registry_new(spath);
	e = registry_set(reg, "app", 1, 2, 0x0a1b2c3d, 512, "/a.log", 10);
	ck_assert_int_eq(registry_save(reg, false), 0);
	registry_set_size(reg, e, 4096);
	ck_assert(!registry_dirty(reg));
	ck_assert_uint_eq(registry_find(reg, "app", 1, 2)->size, 4096);
	(void)registry_set(reg, "app", 1, 2, 0x0a1b2c3d, 512, "/a.log", 20);
	ck_assert(registry_dirty(reg));
	ck_assert_int_eq(registry_save(reg, false), 0);
	r2 = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	e = registry_find(r2, "app", 1, 2);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->offset, 20);
	ck_assert_uint_eq(e->size, 4096);
	registry_free(r2);
	registry_free(reg);
}
END_TEST

/*
 * The entry of a spool file keeps, through a save and a load, where the
 * spool file is and which file it came from; an entry without it (every
 * file written before it existed) loads with none, and a bad one is
 * refused like any bad field.
 */
START_TEST(spool_entry_round_trips_and_is_optional)
{
	struct registry		*reg, *r2;
	struct reg_entry	*e;
	int			 r;

	reg = registry_new(spath);
	fill_variant(reg, 1);
	e = registry_set(reg, "app", 64768, 99, 0x0a1b2c3d, 512,
	    "/var/log/a.log", 1000);
	registry_set_size(reg, e, 5000);
	registry_set_spool(reg, e, "/var/lib/disagent/spool/app-1-2-1000.spool",
	    1, 2);
	ck_assert(registry_dirty(reg));
	ck_assert_int_eq(registry_save(reg, false), 0);
	r2 = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	check_entries(r2, 1);
	e = registry_find(r2, "app", 64768, 99);
	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_nonnull(reg_spool(e));
	ck_assert_str_eq(reg_spool(e)->file,
	    "/var/lib/disagent/spool/app-1-2-1000.spool");
	ck_assert_uint_eq(reg_spool(e)->dev, 1);
	ck_assert_uint_eq(reg_spool(e)->ino, 2);
	ck_assert_uint_eq(e->offset, 1000);
	ck_assert_uint_eq(e->size, 5000);
	ck_assert_str_eq(e->path, "/var/log/a.log");
	/* The others have none. */
	ck_assert_ptr_null(reg_spool(registry_find(r2, "app", 2049, 100)));
	registry_remove(r2, "app", 64768, 99);
	ck_assert_int_eq(registry_save(r2, false), 0);
	registry_free(r2);
	r2 = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	check_entries(r2, 1);
	ck_assert_ptr_null(registry_find(r2, "app", 64768, 99));
	registry_free(r2);
	registry_free(reg);
	/* A spool that is not an object with an absolute file is refused
	 * (no .bak to fall back to). */
	ck_assert_int_eq(unlink(sbak), 0);
	write_with_crc(spath, 1, "[{\"flow\":\"app\",\"dev\":1,\"ino\":2,"
	    "\"fingerprint\":\"crc32:0a1b2c3d:512\",\"path\":\"/x\","
	    "\"offset\":7,\"updated\":9,\"spool\":{\"file\":\"rel\","
	    "\"dev\":1,\"ino\":2}}]");
	reg = load_new(spath, &r);
	ck_assert_int_eq(r, -EBADMSG);
	registry_free(reg);
}
END_TEST

/*
 * Loading a state file of many entries holds the file and the table, plus
 * one entry's JSON tree at a time: a tree of the whole file (about 1.5 KB
 * per entry) took 15 MB at start for 10,000 files.  Measured as the rise in
 * peak RSS, so only in builds without sanitizers.
 */
START_TEST(load_of_many_entries_builds_one_entry_tree_at_a_time)
{
	struct registry	*reg;
	char		 p[80];
	uint64_t	 i;

	reg = registry_new(spath);
	for (i = 0; i < 20000; i++) {
		snprintf(p, sizeof(p), "/var/log/app/instance-%05ju.log",
		    (uintmax_t)i);
		registry_set(reg, "app", 2049, 5000000 + i, (uint32_t)i, 512,
		    p, i * 100);
	}
	ck_assert_int_eq(registry_save(reg, false), 0);
	registry_free(reg);
	assert_load_is_bounded(spath, 20000);
}
END_TEST

START_TEST(load_flipped_offset_digit_fails_crc_and_falls_back)
{
	save_variant_as(spath, 1);
	save_variant_as(sbak, 2);
	set_char_after(spath, "\"offset\":100", '7');
	assert_falls_back_to_bak();
}
END_TEST

START_TEST(load_wrong_field_types_fall_back_to_bak)
{
	save_variant_as(sbak, 2);
	write_with_crc(spath, 1, bad_files[_i]);
	assert_falls_back_to_bak();
}
END_TEST

START_TEST(load_wrong_top_level_shape_falls_back_to_bak)
{
	static const char *const tops[] = {
		"[]",
		"{\"version\": 1, \"files\": []}",
		"{\"version\": \"1\", \"crc32\": \"0d4cbb29\", \"files\": []}",
		"{\"version\": 1, \"crc32\": \"0d4cbb29\", \"files\": {}}",
		"{\"version\": 1, \"crc32\": \"0D4CBB29\", \"files\": []}",
		"{\"version\": 1, \"crc32\": \"0d4cbb29\", \"files\": []}x",
		"{\"version\": 1, \"crc32\": \"0d4cbb29\", \"files\": []} {}",
		"{\"version\": 1, \"version\": 1, \"crc32\": \"0d4cbb29\", "
		    "\"files\": []}",
		"{\"version\": 1, \"crc32\": \"0d4cbb29\", \"files\": [], "
		    "\"files\": []}",
		"{\"version\": 1, \"crc32\": \"0d4cbb29\", \"files\": [],}",
		"{\"version\": 1 \"crc32\": \"0d4cbb29\", \"files\": []}",
		"{\"version\": 1, \"crc32\": \"0d4cbb29\", \"files\": [,]}",
		"{\"version\": 1, \"crc32\": \"0d4cbb29\", \"files\": []",
		"{1: 1, \"version\": 1, \"crc32\": \"0d4cbb29\", "
		    "\"files\": []}",
		"{\"version\": 1, \"crc32\": \"0d4cbb29\", \"files\" []}",
	};
	size_t	 i;

	for (i = 0; i < ARRAY_SIZE(tops); i++) {
		save_variant_as(sbak, 2);
		tu_write(spath, tops[i], strlen(tops[i]));
		assert_falls_back_to_bak();
		count_prefixed("state.json.corrupt-", true);
	}
}
END_TEST

START_TEST(empty_registry_file_has_the_crc_the_shape_tests_use)
{
	static const char v1_empty[] =
	    "{\"version\": 1, \"crc32\": \"0d4cbb29\", \"files\": []}\n";
	struct registry	*reg, *r2;
	char		*text;
	size_t		 len;
	int		 r;

	/* Guards the test above: "0d4cbb29" is crc32("[]"), so only the
	 * shape is wrong in those files, not the checksum: the same file
	 * in the right shape loads. */
	ck_assert_uint_eq(crc32(crc32(0L, Z_NULL, 0), (const Bytef *)"[]", 2),
	    0x0d4cbb29);
	tu_write(spath, v1_empty, strlen(v1_empty));
	r2 = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(registry_count(r2), 0);
	registry_free(r2);
	/* An empty registry saves as a header alone: crc32("") is 0. */
	reg = registry_new(spath);
	ck_assert_int_eq(registry_save(reg, true), 0);
	text = tu_slurp(spath, &len);
	ck_assert_str_eq(text,
	    "{\"version\":2,\"crc32\":\"00000000\",\"entries\":0}\n");
	free(text);
	r2 = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(registry_count(r2), 0);
	registry_free(r2);
	registry_free(reg);
}
END_TEST

static void
check_variant_1(struct registry *reg)
{
	check_variant(reg, 1);
}

START_TEST(load_truncated_at_every_offset_never_yields_another_state)
{
	char	*full;
	size_t	 len;

	/* Version 2: the crc covers the last '\n' too. */
	save_variant_as(spath, 1);
	full = tu_slurp(spath, &len);
	assert_prefixes_fall_back(full, len, 0, check_variant_1);
	free(full);
}
END_TEST

START_TEST(load_with_both_files_corrupt_returns_ebadmsg_and_is_empty)
{
	struct registry	*reg;
	int		 r;

	tu_write(spath, "{\"version\": 1,", 14);
	tu_write(sbak, "\0\0\0\0", 4);
	reg = registry_new(spath);
	registry_set(reg, "stale", 1, 1, 1, 1, "/stale", 1);
	ck_assert_int_eq(registry_load(reg), -EBADMSG);
	ck_assert_uint_eq(registry_count(reg), 0);
	/* Left in place, so the next start fails the same way... */
	ck_assert(exists(spath));
	ck_assert(exists(sbak));
	/* ...and a copy of each is kept aside. */
	ck_assert_int_eq(count_prefixed("state.json.corrupt-", false), 1);
	ck_assert_int_eq(count_prefixed("state.json.bak.corrupt-", false), 1);
	registry_free(reg);
	reg = load_new(spath, &r);
	ck_assert_int_eq(r, -EBADMSG);
	registry_free(reg);
}
END_TEST

START_TEST(load_corrupt_file_without_bak_returns_ebadmsg)
{
	struct registry	*reg;
	int		 r;

	tu_write(spath, "garbage", 7);
	reg = load_new(spath, &r);
	ck_assert_int_eq(r, -EBADMSG);
	ck_assert_uint_eq(registry_count(reg), 0);
	registry_free(reg);
	/* Not silently empty on the next start either. */
	reg = load_new(spath, &r);
	ck_assert_int_eq(r, -EBADMSG);
	registry_free(reg);
}
END_TEST

START_TEST(load_missing_file_with_corrupt_bak_returns_ebadmsg)
{
	struct registry	*reg;
	int		 r;

	tu_write(sbak, "{}", 2);
	reg = load_new(spath, &r);
	ck_assert_int_eq(r, -EBADMSG);
	ck_assert_uint_eq(registry_count(reg), 0);
	registry_free(reg);
}
END_TEST

START_TEST(load_unreadable_file_returns_errno_without_using_bak)
{
	struct registry	*reg;
	int		 r;

	if (geteuid() == 0)
		return;		/* root ignores file modes */
	save_variant_as(spath, 1);
	save_variant_as(sbak, 2);
	ck_assert_int_eq(chmod(spath, 0), 0);
	reg = load_new(spath, &r);
	ck_assert_int_eq(r, -EACCES);
	ck_assert_uint_eq(registry_count(reg), 0);
	ck_assert(exists(spath));
	ck_assert_int_eq(count_prefixed("state.json.corrupt-", false), 0);
	registry_free(reg);
}
END_TEST

START_TEST(save_after_fallback_restores_state_file)
{
	struct registry	*reg, *r2;
	int		 r;

	save_variant_as(sbak, 2);
	tu_write(spath, "junk", 4);
	reg = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	ck_assert_int_eq(registry_save(reg, false), 0);
	r2 = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	check_variant(r2, 2);
	ck_assert(!registry_dirty(r2));
	registry_free(r2);
	registry_free(reg);
}
END_TEST

static Suite *
registry_load_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("registry_load");
	tc = tcase_create("core");
	tcase_add_checked_fixture(tc, registry_fixture_setup,
	    registry_fixture_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, load_with_no_files_is_empty_and_ok);
	tcase_add_test(tc, load_replaces_entries_already_present);
	tcase_add_test(tc, load_missing_file_uses_bak);
	tcase_add_test(tc, load_empty_file_falls_back_to_bak);
	tcase_add_test(tc, load_nul_filled_file_falls_back_to_bak);
	tcase_add_test(tc, load_garbage_falls_back_to_bak);
	tcase_add_test(tc, load_wrong_version_falls_back_to_bak);
	tcase_add_test(tc,
	    load_file_with_valid_crc_written_by_hand_is_accepted);
	tcase_add_test(tc, load_accepts_members_in_any_order_and_unknown_keys);
	tcase_add_test(tc, spool_entry_round_trips_and_is_optional);
	tcase_add_test(tc, set_size_keeps_clean_and_the_next_save_writes_it);
	tcase_add_test(tc,
	    load_of_many_entries_builds_one_entry_tree_at_a_time);
	tcase_add_test(tc, load_flipped_offset_digit_fails_crc_and_falls_back);
	tcase_add_loop_test(tc,
	    load_wrong_field_types_fall_back_to_bak, 0,
	    (int)nbad_files);
	tcase_add_test(tc, load_wrong_top_level_shape_falls_back_to_bak);
	tcase_add_test(tc,
	    empty_registry_file_has_the_crc_the_shape_tests_use);
	tcase_add_test(tc,
	    load_truncated_at_every_offset_never_yields_another_state);
	tcase_add_test(tc,
	    load_with_both_files_corrupt_returns_ebadmsg_and_is_empty);
	tcase_add_test(tc, load_corrupt_file_without_bak_returns_ebadmsg);
	tcase_add_test(tc, load_missing_file_with_corrupt_bak_returns_ebadmsg);
	tcase_add_test(tc,
	    load_unreadable_file_returns_errno_without_using_bak);
	tcase_add_test(tc, save_after_fallback_restores_state_file);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(registry_load_suite());
}
