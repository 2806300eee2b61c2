/*
 * Unit tests for the journal cursor in the registry and the state file:
 * a journal flow's entry (dev and ino 0) keeps its cursor across a save
 * and a load, setting the same cursor again changes nothing, the entries
 * of files carry none (so a file written before cursors existed loads as
 * it did), and a cursor of the wrong type is a corrupt file.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "base/util.h"
#include "state/registry.h"
#include "testutil.h"

#define CURSOR	"s=fbb4ca42c87a40e684483a3ae26a551e;i=2;b=0123456789abcdef" \
		"0123456789abcdef;m=7d0;t=60a24182d8240;x=67265034a7ba4c4d"

static char	 dir[256];
static char	 spath[PATH_MAX];

static void
setup(void)
{
	tu_tmpdir(dir, sizeof(dir), "check_registry_cursor");
	tu_path(spath, sizeof(spath), dir, "state.json");
}

static void
teardown(void)
{
	tu_rmtree(dir);
}

START_TEST(cursor_survives_save_and_load)
{
	struct registry	*r;
	struct reg_entry *e;

	r = registry_new(spath);
	ck_assert_int_eq(registry_load(r), 0);
	e = registry_set(r, "j", 0, 0, 0, 0, "journal:system", 0);
	registry_set_cursor(r, e, CURSOR);
	e = registry_set(r, "app", 2049, 77, 0x1234, 16, "/var/log/a.log", 10);
	ck_assert_int_eq(registry_save(r, false), 0);
	ck_assert(!registry_dirty(r));
	/* The same cursor again: nothing to save. */
	registry_set_cursor(r, registry_find(r, "j", 0, 0), CURSOR);
	ck_assert(!registry_dirty(r));
	registry_free(r);

	r = registry_new(spath);
	ck_assert_int_eq(registry_load(r), 0);
	e = registry_find(r, "j", 0, 0);
	ck_assert_ptr_nonnull(e);
	ck_assert_str_eq(reg_cursor(e), CURSOR);
	ck_assert_str_eq(e->path, "journal:system");
	e = registry_find(r, "app", 2049, 77);
	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_null(reg_cursor(e));
	/* A new cursor is a change. */
	registry_set_cursor(r, registry_find(r, "j", 0, 0), "s=1;i=3");
	ck_assert(registry_dirty(r));
	/* A file's entry, loaded without a cursor or anything else rare,
	 * keeps no part out of line; the journal's keeps its cursor there. */
	ck_assert_ptr_null(registry_find(r, "app", 2049, 77)->rare);
	ck_assert_ptr_nonnull(registry_find(r, "j", 0, 0)->rare);
	registry_free(r);
}
END_TEST

START_TEST(file_entries_are_written_without_a_cursor)
{
	struct registry	*r;
	char		*text;

	r = registry_new(spath);
	ck_assert_int_eq(registry_load(r), 0);
	(void)registry_set(r, "app", 2049, 77, 0x1234, 16, "/var/log/a.log",
	    10);
	ck_assert_int_eq(registry_save(r, false), 0);
	registry_free(r);
	text = tu_slurp(spath, NULL);
	ck_assert_ptr_null(strstr(text, "cursor"));
	free(text);
}
END_TEST

/* A state file with one entry line, its crc and count computed. */
static void
write_state(const char *line)
{
	struct buf	 b;
	uLong		 crc;

	buf_init(&b);
	crc = crc32(crc32(0L, Z_NULL, 0), (const Bytef *)line,
	    (uInt)strlen(line));
	buf_printf(&b, "{\"version\":2,\"crc32\":\"%08lx\",\"entries\":1}\n%s",
	    (unsigned long)crc, line);
	tu_write(spath, b.data, b.len);
	buf_cleanup(&b);
}

START_TEST(cursor_of_the_wrong_type_is_corrupt)
{
	struct registry	*r;

	write_state("{\"flow\":\"j\",\"dev\":0,\"ino\":0,\"fingerprint\":"
	    "\"crc32:00000000:0\",\"path\":\"journal:system\",\"offset\":0,"
	    "\"updated\":1700000000,\"cursor\":42}\n");
	r = registry_new(spath);
	ck_assert_int_eq(registry_load(r), -EBADMSG);
	registry_free(r);
	write_state("{\"flow\":\"j\",\"dev\":0,\"ino\":0,\"fingerprint\":"
	    "\"crc32:00000000:0\",\"path\":\"journal:system\",\"offset\":0,"
	    "\"updated\":1700000000,\"cursor\":\"" CURSOR "\"}\n");
	r = registry_new(spath);
	ck_assert_int_eq(registry_load(r), 0);
	ck_assert_str_eq(reg_cursor(registry_find(r, "j", 0, 0)), CURSOR);
	registry_free(r);
}
END_TEST

static Suite *
registry_cursor_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("registry_cursor");
	tc = tcase_create("cursor");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, cursor_survives_save_and_load);
	tcase_add_test(tc, file_entries_are_written_without_a_cursor);
	tcase_add_test(tc, cursor_of_the_wrong_type_is_corrupt);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(registry_cursor_suite());
}
