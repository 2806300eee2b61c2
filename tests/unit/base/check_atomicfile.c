/*
 * Unit tests for atomicfile, the one way the state file, its .bak copy and
 * the metrics file are replaced: the content arrives whole, the mode is
 * what was asked, and every failure (create, write, rename, the caller's
 * own) leaves the old file as it was and no path.tmp behind.  Every test
 * works in its own temp dir.
 */
#include "config.h"

#include <sys/resource.h>
#include <sys/stat.h>

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/atomicfile.h"
#include "base/util.h"
#include "testutil.h"

static char	 dir[256];
static char	 path[PATH_MAX];	/* dir/f */
static char	 tmp[PATH_MAX];		/* dir/f.tmp */

static void
setup(void)
{
	tu_tmpdir(dir, sizeof(dir), "check_atomicfile");
	tu_path(path, sizeof(path), dir, "f");
	tu_path(tmp, sizeof(tmp), dir, "f.tmp");
}

static void
teardown(void)
{
	tu_rmtree(dir);
}

static bool
exists(const char *p)
{
	struct stat	 st;

	return lstat(p, &st) == 0;
}

/* path holds exactly text, and no path.tmp is left. */
static void
assert_holds(const char *text)
{
	char	*got;

	got = tu_slurp(path, NULL);
	ck_assert_str_eq(got, text);
	free(got);
	ck_assert(!exists(tmp));
}

/* n bytes of a pattern that shows a misplaced chunk: new. */
static char *
pattern(size_t n)
{
	char	*p;
	size_t	 i;

	p = xmalloc(n + 1);
	for (i = 0; i < n; i++)
		p[i] = (char)('a' + (i / 1000 + i) % 26);
	p[n] = '\0';
	return p;
}

START_TEST(replace_writes_the_content_and_leaves_no_tmp)
{
	ck_assert_int_eq(atomicfile_replace(path, "old\n", 4, 0600, 0), 0);
	assert_holds("old\n");
	ck_assert_int_eq(atomicfile_replace(path, "new\n", 4, 0600,
	    ATOMICFILE_SYNC), 0);
	assert_holds("new\n");
	ck_assert_int_eq(atomicfile_replace(path, "", 0, 0600, 0), 0);
	assert_holds("");
}
END_TEST

/* Writes below, across and above the 64 KiB buffer arrive in order. */
START_TEST(writes_of_every_size_arrive_in_order)
{
	struct atomicfile	 af;
	char			*want;
	size_t			 sizes[] = { 1, 1000, 65535, 2, 65536, 200000,
				    7, 70000 };
	size_t			 i, at = 0, total = 0;

	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		total += sizes[i];
	want = pattern(total);
	ck_assert_int_eq(atomicfile_open(&af, path, 0600, 0), 0);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		ck_assert_int_eq(atomicfile_write(&af, want + at, sizes[i]), 0);
		at += sizes[i];
	}
	ck_assert_int_eq(atomicfile_commit(&af, NULL, NULL), 0);
	atomicfile_cleanup(&af);
	assert_holds(want);
	free(want);
}
END_TEST

START_TEST(pwrite_overwrites_what_was_written)
{
	struct atomicfile	 af;
	char			*want;

	want = pattern(150000);
	ck_assert_int_eq(atomicfile_open(&af, path, 0600, 0), 0);
	ck_assert_int_eq(atomicfile_write(&af, want, 150000), 0);
	memcpy(want + 10, "XYZ", 3);
	memcpy(want + 149990, "END", 3);
	ck_assert_int_eq(atomicfile_pwrite(&af, 10, "XYZ", 3), 0);
	ck_assert_int_eq(atomicfile_write(&af, "tail", 4), 0);
	ck_assert_int_eq(atomicfile_pwrite(&af, 149990, "END", 3), 0);
	ck_assert_int_eq(atomicfile_commit(&af, NULL, NULL), 0);
	atomicfile_cleanup(&af);
	want = xrealloc(want, 150005);
	memcpy(want + 150000, "tail", 5);
	assert_holds(want);
	free(want);
}
END_TEST

START_TEST(mode_is_exact_only_when_asked)
{
	struct stat	 st;
	mode_t		 old;

	old = umask(077);
	ck_assert_int_eq(atomicfile_replace(path, "x", 1, 0644,
	    ATOMICFILE_EXACT_MODE), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0644);
	ck_assert_int_eq(atomicfile_replace(path, "x", 1, 0644, 0), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	umask(old);
}
END_TEST

static void
see_both(void *arg)
{
	char	*got;

	/* The new file is complete as path.tmp, the old one still path. */
	got = tu_slurp(tmp, NULL);
	ck_assert_str_eq(got, "new");
	free(got);
	got = tu_slurp(path, NULL);
	ck_assert_str_eq(got, "old");
	free(got);
	(*(int *)arg)++;
}

START_TEST(before_rename_sees_the_new_file_complete_and_the_old_in_place)
{
	struct atomicfile	 af;
	int			 calls = 0;

	tu_write_str(path, "old");
	ck_assert_int_eq(atomicfile_open(&af, path, 0600, ATOMICFILE_SYNC), 0);
	ck_assert_int_eq(atomicfile_write(&af, "new", 3), 0);
	ck_assert_int_eq(atomicfile_commit(&af, see_both, &calls), 0);
	atomicfile_cleanup(&af);
	ck_assert_int_eq(calls, 1);
	assert_holds("new");
}
END_TEST

START_TEST(create_failure_leaves_the_old_file)
{
	struct atomicfile	 af;
	char			 p[PATH_MAX + 16];

	snprintf(p, sizeof(p), "%s/no/such/f", dir);
	ck_assert_int_eq(atomicfile_replace(p, "x", 1, 0600, 0), -ENOENT);
	tu_write_str(path, "old");
	/* path.tmp cannot be created: it is a directory. */
	ck_assert_int_eq(mkdir(tmp, 0700), 0);
	ck_assert_int_eq(atomicfile_open(&af, path, 0600, 0), -EISDIR);
	ck_assert_str_eq(af.op, "create");
	ck_assert_str_eq(af.file, tmp);
	ck_assert_int_eq(atomicfile_write(&af, "new", 3), -EISDIR);
	ck_assert_int_eq(atomicfile_commit(&af, NULL, NULL), -EISDIR);
	atomicfile_cleanup(&af);
	ck_assert_int_eq(rmdir(tmp), 0);
	assert_holds("old");
}
END_TEST

/* A short write (here: the file size limit) ends the replacement. */
START_TEST(write_failure_leaves_the_old_file_and_no_tmp)
{
	struct atomicfile	 af;
	struct rlimit		 old, lim;
	char			*big;
	int			 r, r2;

	tu_write_str(path, "old");
	big = pattern(300000);
	signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 100000;
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
	ck_assert_int_eq(atomicfile_open(&af, path, 0600, 0), 0);
	r = atomicfile_write(&af, big, 300000);
	r2 = atomicfile_commit(&af, NULL, NULL);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	ck_assert_int_eq(r, -EFBIG);
	ck_assert_int_eq(r2, -EFBIG);		/* the first error sticks */
	ck_assert_str_eq(af.op, "write");
	atomicfile_cleanup(&af);
	assert_holds("old");
	free(big);
}
END_TEST

START_TEST(rename_failure_leaves_the_target_and_no_tmp)
{
	struct atomicfile	 af;
	char			 inner[PATH_MAX + 16];

	/* path is a directory that is not empty: rename(2) refuses. */
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(inner, sizeof(inner), "%s/keep", path);
	tu_write_str(inner, "kept");
	ck_assert_int_eq(atomicfile_open(&af, path, 0600, ATOMICFILE_SYNC), 0);
	ck_assert_int_eq(atomicfile_write(&af, "new", 3), 0);
	ck_assert_int_eq(atomicfile_commit(&af, NULL, NULL), -EISDIR);
	ck_assert_str_eq(af.op, "rename to");
	ck_assert_str_eq(af.file, path);
	atomicfile_cleanup(&af);
	ck_assert(!exists(tmp));
	ck_assert(exists(inner));
}
END_TEST

START_TEST(callers_failure_and_cleanup_without_commit_leave_the_old_file)
{
	struct atomicfile	 af;

	tu_write_str(path, "old");
	ck_assert_int_eq(atomicfile_open(&af, path, 0600, 0), 0);
	ck_assert_int_eq(atomicfile_write(&af, "new", 3), 0);
	ck_assert_int_eq(atomicfile_fail(&af, "encode", -EMSGSIZE),
	    -EMSGSIZE);
	ck_assert_int_eq(atomicfile_write(&af, "more", 4), -EMSGSIZE);
	ck_assert_int_eq(atomicfile_commit(&af, NULL, NULL), -EMSGSIZE);
	ck_assert_str_eq(af.op, "encode");
	atomicfile_cleanup(&af);
	assert_holds("old");
	/* Abandoned: cleanup alone removes path.tmp. */
	ck_assert_int_eq(atomicfile_open(&af, path, 0600, 0), 0);
	ck_assert_int_eq(atomicfile_write(&af, "new", 3), 0);
	ck_assert(exists(tmp));
	atomicfile_cleanup(&af);
	atomicfile_cleanup(&af);		/* safe to repeat */
	assert_holds("old");
}
END_TEST

START_TEST(copy_replaces_dst_with_src_and_missing_src_changes_nothing)
{
	char	 src[PATH_MAX + 16], *want;

	snprintf(src, sizeof(src), "%s/src", dir);
	want = pattern(200000);
	tu_write_str(src, want);
	tu_write_str(path, "old");
	ck_assert_int_eq(atomicfile_copy(src, path, 0600, ATOMICFILE_SYNC),
	    0);
	assert_holds(want);
	ck_assert_int_eq(unlink(src), 0);
	ck_assert_int_eq(atomicfile_copy(src, path, 0600, 0), -ENOENT);
	assert_holds(want);
	free(want);
}
END_TEST

static Suite *
atomicfile_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("atomicfile");
	tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, replace_writes_the_content_and_leaves_no_tmp);
	tcase_add_test(tc, writes_of_every_size_arrive_in_order);
	tcase_add_test(tc, pwrite_overwrites_what_was_written);
	tcase_add_test(tc, mode_is_exact_only_when_asked);
	tcase_add_test(tc,
	    before_rename_sees_the_new_file_complete_and_the_old_in_place);
	tcase_add_test(tc, create_failure_leaves_the_old_file);
	tcase_add_test(tc, write_failure_leaves_the_old_file_and_no_tmp);
	tcase_add_test(tc, rename_failure_leaves_the_target_and_no_tmp);
	tcase_add_test(tc,
	    callers_failure_and_cleanup_without_commit_leave_the_old_file);
	tcase_add_test(tc,
	    copy_replaces_dst_with_src_and_missing_src_changes_nothing);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(atomicfile_suite());
}
