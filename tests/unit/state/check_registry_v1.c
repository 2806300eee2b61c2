/*
 * Unit tests for the registry's version 1 state file, as the previous
 * release wrote it (tests/data/state-v1.json): it still loads, falls
 * back when damaged, and is upgraded by the next save.  Every test
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

/* --- version 1, as the previous release wrote it ---------------------- */

/*
 * tests/data/state-v1.json was written by registry_save at commit 542b234
 * (the last to write version 1) from these entries; the path given as
 * "/srv/web/\xff\xfe.log", not UTF-8, was stored as "/srv/web/??.log".
 */
static const struct {
	const char	*flow;
	uint64_t	 dev, ino;
	uint32_t	 fp_crc, fp_len;
	const char	*path;
	uint64_t	 offset;
	int64_t		 updated;
} v1_fixture[] = {
	{ "app", 2049, 131074, 0x0a1b2c3du, 512, "/var/log/app/app.log",
	    1048576, 1790000000 },
	{ "app", 2049, 131075, 0xffffffffu, 4096, "/var/log/app/app.log.1",
	    0, 1789999000 },
	{ "app", UINT64_MAX, (1ULL << 63) + 5, 0, 0,
	    "/var/log/we\"ird\\na me\n\t\xc3\xbc.log", INT64_MAX, -5 },
	{ "app", 2049, 9, 0x00000001u, 1, "/var/log/app/short.log", 1, 1 },
	{ "web-2", 0, 0, 0x12345678u, 1, "", 0, 0 },
	{ "web-2", 64769, 42, 0xdeadbeefu, 512, "/srv/web/access.log",
	    123456789, 1790000123 },
	{ "web-2", 64769, 43, 0x80000000u, 512, "/srv/web/??.log", 77,
	    1790000124 },
	{ "\xc3\xa9t\xc3\xa9", 2050, 7, 0x0badf00du, 333,
	    "/var/log/\xe6\x97\xa5\xe5\xbf\x97.log", 4294967296ULL,
	    1700000000 },
};

/* Exactly the entries of the fixture, every field. */
static void
check_v1_fixture(struct registry *reg)
{
	struct reg_entry	*e;
	size_t			 i;

	ck_assert_uint_eq(registry_count(reg), ARRAY_SIZE(v1_fixture));
	for (i = 0; i < ARRAY_SIZE(v1_fixture); i++) {
		e = registry_find(reg, v1_fixture[i].flow, v1_fixture[i].dev,
		    v1_fixture[i].ino);
		ck_assert_msg(e != NULL, "fixture entry %zu missing", i);
		ck_assert_str_eq(e->flow, v1_fixture[i].flow);
		ck_assert_str_eq(e->path, v1_fixture[i].path);
		ck_assert_uint_eq(e->fp_crc, v1_fixture[i].fp_crc);
		ck_assert_uint_eq(e->fp_len, v1_fixture[i].fp_len);
		ck_assert_uint_eq(e->offset, v1_fixture[i].offset);
		ck_assert_int_eq(e->updated, v1_fixture[i].updated);
	}
}

static char *
v1_fixture_as(const char *path, size_t *len)
{
	char	*text;

	text = tu_data("state-v1.json", len);
	tu_write(path, text, *len);
	return text;
}

/* Load spath: the fixture's entries, dirty (to be saved in version 2). */
static struct registry *
load_fixture_entries(void)
{
	struct registry	*reg;
	int		 r;

	reg = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	check_v1_fixture(reg);
	ck_assert(registry_dirty(reg));
	return reg;
}

START_TEST(v1_file_of_the_previous_release_loads_every_entry)
{
	size_t	 len;

	free(v1_fixture_as(spath, &len));
	registry_free(load_fixture_entries());
	ck_assert_int_eq(count_prefixed("state.json.", false), 0);
}
END_TEST

START_TEST(v1_file_is_upgraded_in_place_by_the_next_save)
{
	struct registry	*reg, *r2;
	char		*v1, *text, *bak;
	size_t		 len, n;
	int		 r;

	v1 = v1_fixture_as(spath, &len);
	reg = load_fixture_entries();
	ck_assert_int_eq(registry_save(reg, false), 0);
	ck_assert(!registry_dirty(reg));
	text = tu_slurp(spath, &n);
	ck_assert_msg(strncmp(text, "{\"version\":2,", 13) == 0,
	    "not version 2: %.40s", text);
	/* The previous generation, as it was, is the .bak. */
	bak = tu_slurp(sbak, &n);
	ck_assert_uint_eq(n, len);
	ck_assert(memcmp(bak, v1, len) == 0);
	r2 = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	check_v1_fixture(r2);
	ck_assert(!registry_dirty(r2));
	registry_free(r2);
	free(bak);
	free(text);
	free(v1);
	registry_free(reg);
}
END_TEST

START_TEST(v1_bak_is_used_when_the_state_file_is_corrupt)
{
	size_t	 len;

	free(v1_fixture_as(sbak, &len));
	tu_write(spath, "junk", 4);
	registry_free(load_fixture_entries());
	ck_assert_int_eq(count_prefixed("state.json.corrupt-", false), 1);
}
END_TEST

START_TEST(v1_truncated_at_every_offset_never_yields_another_state)
{
	char	*full;
	size_t	 len;

	/* Version 1 is JSON: with or without its last '\n'. */
	full = tu_data("state-v1.json", &len);
	assert_prefixes_fall_back(full, len, 1, check_v1_fixture);
	free(full);
}
END_TEST

START_TEST(v1_flipped_offset_digit_fails_crc_and_falls_back)
{
	size_t	 len;

	free(v1_fixture_as(spath, &len));
	set_char_after(spath, "\"offset\":1234", '0');
	save_variant_as(sbak, 2);
	assert_falls_back_to_bak();
}
END_TEST

/* The previous release's layout, n entries, written as it wrote it. */
static void
write_v1_lines(const char *path, uint64_t n)
{
	struct buf	 b, e;
	uLong		 crc = crc32(crc32(0L, Z_NULL, 0), (const Bytef *)"[",
			    1);
	char		 hex[9];
	uint64_t	 i;

	buf_init(&b);
	buf_init(&e);
	buf_addstr(&b, "{\"version\": 1, \"crc32\": \"00000000\", "
	    "\"files\": [");
	for (i = 0; i < n; i++) {
		buf_reset(&e);
		buf_printf(&e, "{\"flow\":\"app\",\"dev\":2049,\"ino\":%ju,"
		    "\"fingerprint\":\"crc32:%08jx:512\",\"path\":"
		    "\"/var/log/app/instance-%05ju.log\",\"offset\":%ju,"
		    "\"updated\":1790000000}", (uintmax_t)(5000000 + i),
		    (uintmax_t)i, (uintmax_t)i, (uintmax_t)(i * 100));
		if (i > 0)
			crc = crc32(crc, (const Bytef *)",", 1);
		crc = crc32(crc, (const Bytef *)e.data, (uInt)e.len);
		buf_addstr(&b, i > 0 ? ",\n" : "\n");
		buf_add(&b, e.data, e.len);
	}
	crc = crc32(crc, (const Bytef *)"]", 1);
	buf_addstr(&b, "\n]}\n");
	snprintf(hex, sizeof(hex), "%08lx", (unsigned long)crc);
	memcpy(b.data + strlen("{\"version\": 1, \"crc32\": \""), hex, 8);
	tu_write(path, b.data, b.len);
	buf_cleanup(&e);
	buf_cleanup(&b);
}

/* The upgrade too: version 1 as the previous release laid it out is read
 * a line at a time, not as one tree of the whole document. */
START_TEST(v1_load_of_many_entries_builds_one_entry_tree_at_a_time)
{
	write_v1_lines(spath, 20000);
	assert_load_is_bounded(spath, 20000);
}
END_TEST

static Suite *
registry_v1_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("registry_v1");
	tc = tcase_create("core");
	tcase_add_checked_fixture(tc, registry_fixture_setup,
	    registry_fixture_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, v1_file_of_the_previous_release_loads_every_entry);
	tcase_add_test(tc, v1_file_is_upgraded_in_place_by_the_next_save);
	tcase_add_test(tc, v1_bak_is_used_when_the_state_file_is_corrupt);
	tcase_add_test(tc,
	    v1_truncated_at_every_offset_never_yields_another_state);
	tcase_add_test(tc, v1_flipped_offset_digit_fails_crc_and_falls_back);
	tcase_add_test(tc,
	    v1_load_of_many_entries_builds_one_entry_tree_at_a_time);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(registry_v1_suite());
}
