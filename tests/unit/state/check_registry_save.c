/*
 * Unit tests for the registry's save: the atomic write with its .bak
 * generation, private and versioned, only when dirty, and what a failed
 * save keeps.  Every test works in its own mkdtemp dir
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

/* --- save ------------------------------------------------------------- */

START_TEST(round_trip_preserves_every_field)
{
	static const char *path3 = "/var/log/we\"ird\\na me\n\t\xc3\xbc.log";
	struct registry		*reg, *r2;
	struct reg_entry	*a, *b;
	int			 r;

	reg = registry_new(spath);
	fill_variant(reg, 1);
	registry_set(reg, "edge", UINT64_MAX, (1ULL << 63) + 5, UINT32_MAX,
	    UINT32_MAX, path3, INT64_MAX)->updated = -5;
	registry_set(reg, "zero", 0, 0, 0, 0, "", 0)->updated = 0;
	ck_assert_int_eq(registry_save(reg, false), 0);
	ck_assert(!registry_dirty(reg));
	r2 = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	ck_assert(!registry_dirty(r2));
	ck_assert_uint_eq(registry_count(r2), NVAR + 2);
	check_entries(r2, 1);
	a = registry_find(reg, "edge", UINT64_MAX, (1ULL << 63) + 5);
	b = registry_find(r2, "edge", UINT64_MAX, (1ULL << 63) + 5);
	ck_assert_ptr_nonnull(b);
	ck_assert_str_eq(b->flow, a->flow);
	ck_assert_str_eq(b->path, path3);
	ck_assert_uint_eq(b->fp_crc, UINT32_MAX);
	ck_assert_uint_eq(b->fp_len, UINT32_MAX);
	ck_assert_uint_eq(b->offset, INT64_MAX);
	ck_assert_int_eq(b->updated, -5);
	b = registry_find(r2, "zero", 0, 0);
	ck_assert_ptr_nonnull(b);
	ck_assert_str_eq(b->path, "");
	ck_assert_uint_eq(b->offset, 0);
	ck_assert_int_eq(b->updated, 0);
	registry_free(r2);
	registry_free(reg);
}
END_TEST

START_TEST(saved_file_is_private_and_versioned)
{
	struct registry	*reg;
	struct stat	 st;
	json_t		*head, *e;
	json_error_t	 jerr;
	char		*text, *line, *nl;
	size_t		 len, n = 0;

	reg = registry_new(spath);
	fill_variant(reg, 1);
	ck_assert_int_eq(registry_save(reg, false), 0);
	ck_assert_int_eq(stat(spath, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	text = tu_slurp(spath, &len);
	/* JSON Lines: a header, then one entry object a line. */
	nl = strchr(text, '\n');
	ck_assert_ptr_nonnull(nl);
	head = json_loadb(text, (size_t)(nl - text), 0, &jerr);
	ck_assert_ptr_nonnull(head);
	ck_assert_int_eq(json_integer_value(json_object_get(head, "version")),
	    2);
	ck_assert_int_eq(json_integer_value(json_object_get(head, "entries")),
	    NVAR);
	ck_assert_uint_eq(strlen(json_string_value(json_object_get(head,
	    "crc32"))), 8);
	json_decref(head);
	for (line = nl + 1; *line != '\0'; line = nl + 1, n++) {
		nl = strchr(line, '\n');
		ck_assert_ptr_nonnull(nl);
		e = json_loadb(line, (size_t)(nl - line), 0, &jerr);
		ck_assert_msg(json_is_object(e), "line %zu: %s", n + 2,
		    jerr.text);
		json_decref(e);
	}
	ck_assert_uint_eq(n, NVAR);
	ck_assert_ptr_nonnull(strstr(text, "\"fingerprint\":"
	    "\"crc32:deadbe01:512\""));
	free(text);
	ck_assert(!exists(sbak));		/* first save: nothing to keep */
	ck_assert_int_eq(count_prefixed("state.json.", false), 0);
	registry_free(reg);
}
END_TEST

START_TEST(save_writes_only_when_dirty_unless_forced)
{
	struct registry	*reg;
	ino_t		 i1, i2;

	reg = registry_new(spath);
	ck_assert_int_eq(registry_save(reg, false), 0);
	ck_assert(!exists(spath));		/* clean and empty: no write */
	fill_variant(reg, 1);
	ck_assert_int_eq(registry_save(reg, false), 0);
	i1 = inode_of(spath);
	ck_assert_int_eq(registry_save(reg, false), 0);
	ck_assert(inode_of(spath) == i1);	/* not dirty: untouched */
	ck_assert_int_eq(registry_save(reg, true), 0);
	i2 = inode_of(spath);
	ck_assert(i2 != i1);			/* forced: new generation */
	registry_set(reg, "app", 2049, 100, 1, 1, "/new", 1);
	ck_assert_int_eq(registry_save(reg, false), 0);
	ck_assert(inode_of(spath) != i2);
	ck_assert(inode_of(sbak) == i2);
	registry_free(reg);
}
END_TEST

START_TEST(bak_holds_previous_generation)
{
	struct registry	*reg, *r2;
	char		 old[PATH_MAX + 16];
	int		 r;

	reg = registry_new(spath);
	fill_variant(reg, 1);
	ck_assert_int_eq(registry_save(reg, false), 0);
	registry_free(reg);
	reg = registry_new(spath);
	fill_variant(reg, 2);
	ck_assert_int_eq(registry_save(reg, false), 0);
	r2 = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	check_variant(r2, 2);
	registry_free(r2);
	/* Read the .bak as if it were the state file. */
	snprintf(old, sizeof(old), "%s/old.json", dir);
	ck_assert_int_eq(link(sbak, old), 0);
	r2 = load_new(old, &r);
	ck_assert_int_eq(r, 0);
	check_variant(r2, 1);
	registry_free(r2);
	ck_assert_int_eq(count_prefixed("state.json.tmp", false), 0);
	ck_assert_int_eq(count_prefixed("state.json.bak.tmp", false), 0);
	registry_free(reg);
}
END_TEST

START_TEST(save_into_missing_directory_fails_and_stays_dirty)
{
	struct registry	*reg;
	char		 p[PATH_MAX + 32];

	snprintf(p, sizeof(p), "%s/no/such/dir/state.json", dir);
	reg = registry_new(p);
	fill_variant(reg, 1);
	ck_assert_int_eq(registry_save(reg, false), -ENOENT);
	ck_assert(registry_dirty(reg));
	ck_assert_int_eq(registry_save(reg, true), -ENOENT);
	ck_assert(registry_dirty(reg));
	registry_free(reg);
}
END_TEST

START_TEST(save_into_readonly_directory_fails_and_stays_dirty)
{
	struct registry	*reg;

	if (geteuid() == 0)
		return;		/* root ignores directory modes */
	reg = registry_new(spath);
	fill_variant(reg, 1);
	ck_assert_int_eq(chmod(dir, 0500), 0);
	ck_assert_int_eq(registry_save(reg, false), -EACCES);
	ck_assert(registry_dirty(reg));
	ck_assert_int_eq(chmod(dir, 0700), 0);
	ck_assert_int_eq(registry_save(reg, false), 0);
	ck_assert(!registry_dirty(reg));
	registry_free(reg);
}
END_TEST

/* A short write (here: the file size limit) must leave the old state. */
START_TEST(save_write_error_keeps_previous_state_and_stays_dirty)
{
	struct registry	*reg, *r2;
	struct rlimit	 old, lim;
	char		 p[64];
	int		 i, r;

	reg = registry_new(spath);
	fill_variant(reg, 1);
	ck_assert_int_eq(registry_save(reg, false), 0);
	for (i = 0; i < 200; i++) {
		snprintf(p, sizeof(p), "/var/log/many/%d.log", i);
		registry_set(reg, "many", 9, (uint64_t)i, 1, 1, p, 1);
	}
	signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 4096;
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
	r = registry_save(reg, false);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	assert_save_failed_keeping(reg, r, -EFBIG, 1);
	ck_assert_int_eq(registry_save(reg, false), 0);
	r2 = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(registry_count(r2), NVAR + 200);
	registry_free(r2);
	registry_free(reg);
}
END_TEST

START_TEST(ten_thousand_entries_round_trip)
{
	struct registry		*reg, *r2;
	struct reg_entry	*e;
	char			 p[64];
	uint64_t		 i;
	int			 r;

	reg = registry_new(spath);
	for (i = 0; i < 10000; i++) {
		snprintf(p, sizeof(p), "/var/log/big/%ju.log", (uintmax_t)i);
		registry_set(reg, i % 2 ? "odd" : "even", 2049, 1000000 + i,
		    (uint32_t)i, 1024, p, i * 4096);
	}
	ck_assert_uint_eq(registry_count(reg), 10000);
	ck_assert_int_eq(registry_save(reg, false), 0);
	r2 = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(registry_count(r2), 10000);
	for (i = 0; i < 10000; i++) {
		e = registry_find(r2, i % 2 ? "odd" : "even", 2049,
		    1000000 + i);
		ck_assert_ptr_nonnull(e);
		ck_assert_uint_eq(e->offset, i * 4096);
		ck_assert_uint_eq(e->fp_crc, (uint32_t)i);
		ck_assert_ptr_null(registry_find(r2, i % 2 ? "even" : "odd",
		    2049, 1000000 + i));
	}
	registry_free(r2);
	registry_free(reg);
}
END_TEST

START_TEST(non_utf8_path_is_stored_lossily_and_file_stays_loadable)
{
	struct registry	*reg, *r2;
	int		 r;

	reg = registry_new(spath);
	registry_set(reg, "app", 1, 2, 3, 4, "/var/log/\xff\xfe.log", 5);
	ck_assert_int_eq(registry_save(reg, false), 0);
	r2 = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	ck_assert_str_eq(registry_find(r2, "app", 1, 2)->path,
	    "/var/log/??.log");
	ck_assert_uint_eq(registry_find(r2, "app", 1, 2)->offset, 5);
	registry_free(r2);
	registry_free(reg);
}
END_TEST

static Suite *
registry_save_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("registry_save");
	tc = tcase_create("core");
	tcase_add_checked_fixture(tc, registry_fixture_setup,
	    registry_fixture_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, round_trip_preserves_every_field);
	tcase_add_test(tc, saved_file_is_private_and_versioned);
	tcase_add_test(tc, save_writes_only_when_dirty_unless_forced);
	tcase_add_test(tc, bak_holds_previous_generation);
	tcase_add_test(tc, save_into_missing_directory_fails_and_stays_dirty);
	tcase_add_test(tc, save_into_readonly_directory_fails_and_stays_dirty);
	tcase_add_test(tc,
	    save_write_error_keeps_previous_state_and_stays_dirty);
	tcase_add_test(tc, ten_thousand_entries_round_trip);
	tcase_add_test(tc,
	    non_utf8_path_is_stored_lossily_and_file_stays_loadable);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(registry_save_suite());
}
