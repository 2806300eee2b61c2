/*
 * Unit tests for the line filters (records/filter.c): include, exclude and
 * both; matched anywhere, without the kept delimiter; as UTF-8, with
 * invalid bytes never matching; a match PCRE2 gives up on leaving
 * nothing out; bad patterns named with their key, and
 * caught by the configuration check at their line.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "conf/conf.h"
#include "records/filter.h"
#include "testutil.h"

static bool
pass(struct filter *f, const char *s)
{
	return filter_pass(f, s, strlen(s));
}

START_TEST(no_pattern_is_no_filter)
{
	struct filter	*f = (struct filter *)&f;
	char		 err[256];

	ck_assert_int_eq(filter_new(NULL, "", '\n', &f, NULL, err,
	    sizeof(err)), 0);
	ck_assert_ptr_null(f);
}
END_TEST

START_TEST(include_keeps_only_matching_records)
{
	struct filter	*f;
	char		 err[256];

	ck_assert_int_eq(filter_new("ERROR|WARN", NULL, -1, &f, NULL, err,
	    sizeof(err)), 0);
	ck_assert(pass(f, "2026-12-01 ERROR disk full"));
	ck_assert(pass(f, "WARN at the start"));
	ck_assert(!pass(f, "2026-12-01 INFO started"));
	ck_assert(!pass(f, ""));
	filter_free(f);
}
END_TEST

START_TEST(exclude_drops_matching_records)
{
	struct filter	*f;
	char		 err[256];

	ck_assert_int_eq(filter_new("", "\\bDEBUG\\b", -1, &f, NULL, err,
	    sizeof(err)), 0);
	ck_assert(!pass(f, "12:00 DEBUG cache miss"));
	ck_assert(pass(f, "12:00 DEBUGGER attached"));
	ck_assert(pass(f, "12:00 INFO ok"));
	ck_assert(pass(f, ""));
	filter_free(f);
}
END_TEST

START_TEST(both_need_include_and_not_exclude)
{
	struct filter	*f;
	char		 err[256];

	ck_assert_int_eq(filter_new("^app", "health", -1, &f, NULL, err,
	    sizeof(err)), 0);
	ck_assert(pass(f, "app GET /orders"));
	ck_assert(!pass(f, "app GET /health"));
	ck_assert(!pass(f, "web GET /orders"));
	filter_free(f);
}
END_TEST

START_TEST(kept_delimiter_is_not_matched)
{
	struct filter	*f;
	char		 err[256];

	/* The record's own delimiter is not part of what is matched. */
	ck_assert_int_eq(filter_new("done$", "\\n", '\n', &f, NULL, err,
	    sizeof(err)), 0);
	ck_assert(pass(f, "job done\n"));
	ck_assert(pass(f, "job done"));
	ck_assert(!pass(f, "job done\nmore\n"));	/* a multi-line record */
	filter_free(f);
	/* Another delimiter: only that byte is dropped. */
	ck_assert_int_eq(filter_new("x$", NULL, '|', &f, NULL, err,
	    sizeof(err)), 0);
	ck_assert(pass(f, "ax|"));
	ck_assert(!pass(f, "a|x|y|"));
	filter_free(f);
}
END_TEST

START_TEST(multi_line_record_is_matched_as_a_whole)
{
	struct filter	*f;
	char		 err[256];

	ck_assert_int_eq(filter_new(NULL, "NullPointerException", '\n', &f,
	    NULL, err, sizeof(err)), 0);
	ck_assert(!pass(f, "12:00 ERROR request failed\n"
	    "java.lang.NullPointerException\n\tat A.b(A.java:1)\n"));
	ck_assert(pass(f, "12:00 ERROR request failed\n\tat A.b(A.java:1)\n"));
	filter_free(f);
}
END_TEST

START_TEST(patterns_match_utf8_and_survive_invalid_bytes)
{
	struct filter	*f;
	char		 err[256];

	ck_assert_int_eq(filter_new("^caf.$", NULL, -1, &f, NULL, err,
	    sizeof(err)), 0);
	ck_assert(pass(f, "caf\xc3\xa9"));		/* é is one character */
	ck_assert(!pass(f, "caf\xc3"));			/* a cut sequence */
	ck_assert(!pass(f, "caf\xff\xfe"));
	filter_free(f);
}
END_TEST

START_TEST(a_match_that_fails_leaves_nothing_out)
{
	struct filter	*f;
	char		 err[256], s[64];

	/* Exponential backtracking: PCRE2 gives up at its match limit, so
	 * whether the pattern matches is not known; the record is sent. */
	memset(s, 'a', sizeof(s) - 2);
	s[sizeof(s) - 2] = 'b';
	s[sizeof(s) - 1] = '\0';
	ck_assert_int_eq(filter_new("^(a|aa)+$", NULL, -1, &f, NULL, err,
	    sizeof(err)), 0);
	ck_assert(pass(f, s));
	ck_assert(!pass(f, "b"));
	filter_free(f);
	ck_assert_int_eq(filter_new(NULL, "^(a|aa)+$", -1, &f, NULL, err,
	    sizeof(err)), 0);
	ck_assert(pass(f, s));
	ck_assert(!pass(f, "aaaa"));
	filter_free(f);
}
END_TEST

START_TEST(bad_pattern_names_its_key)
{
	struct filter	*f = (struct filter *)&f;
	const char	*key = NULL;
	char		 err[256];

	ck_assert_int_eq(filter_new("ok", "(unclosed", -1, &f, &key, err,
	    sizeof(err)), -EINVAL);
	ck_assert_ptr_null(f);
	ck_assert_str_eq(key, "lineExcludePattern");
	ck_assert_msg(strncmp(err, "lineExcludePattern = (unclosed is not a "
	    "valid regular expression (", 60) == 0, "%s", err);
	ck_assert_int_eq(filter_new("[z-a]", NULL, -1, &f, &key, err,
	    sizeof(err)), -EINVAL);
	ck_assert_str_eq(key, "lineIncludePattern");
	ck_assert_ptr_null(filter_check_pattern("a+b"));
	ck_assert_ptr_null(filter_check_pattern(""));
	ck_assert_ptr_nonnull(filter_check_pattern("a{2,1}"));
}
END_TEST

START_TEST(configuration_check_names_the_line)
{
	struct conf	*c = NULL;
	char		 dir[256], path[300], err[512], want[600];

	tu_tmpdir(dir, sizeof(dir), "check_filter");
	tu_path(path, sizeof(path), dir, "agent.ini");
	tu_write_str(path, "[agent]\nregion = cn-north-4\n"
	    "projectId = 0123456789abcdef\nak = AKID\nsk = SKSKSKSKSK\n"
	    "[flow:app]\nDISStream = s1\nfilePattern = /var/log/a.log\n"
	    "lineIncludePattern = ERROR\n"
	    "lineExcludePattern = (DEBUG\n");
	ck_assert_int_eq(conf_load(path, &c, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s:10: lineExcludePattern = (DEBUG is "
	    "not a valid regular expression (", path);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "%s", err);
	tu_write_str(path, "[agent]\nregion = cn-north-4\n"
	    "projectId = 0123456789abcdef\nak = AKID\nsk = SKSKSKSKSK\n"
	    "[flow:app]\nDISStream = s1\nfilePattern = /var/log/a.log\n"
	    "lineIncludePattern = ERROR|WARN\n"
	    "lineExcludePattern = \\bDEBUG\\b\n");
	if (conf_load(path, &c, err, sizeof(err)) != 0)
		ck_abort_msg("unexpected error: %s", err);
	ck_assert_str_eq(c->flows[0].line_include, "ERROR|WARN");
	ck_assert_str_eq(c->flows[0].line_exclude, "\\bDEBUG\\b");
	conf_free(c);
	tu_rmtree(dir);
}
END_TEST

static Suite *
filter_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("filter");
	tc = tcase_create("core");
	tcase_add_test(tc, no_pattern_is_no_filter);
	tcase_add_test(tc, include_keeps_only_matching_records);
	tcase_add_test(tc, exclude_drops_matching_records);
	tcase_add_test(tc, both_need_include_and_not_exclude);
	tcase_add_test(tc, kept_delimiter_is_not_matched);
	tcase_add_test(tc, multi_line_record_is_matched_as_a_whole);
	tcase_add_test(tc, patterns_match_utf8_and_survive_invalid_bytes);
	tcase_add_test(tc, a_match_that_fails_leaves_nothing_out);
	tcase_add_test(tc, bad_pattern_names_its_key);
	tcase_add_test(tc, configuration_check_names_the_line);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(filter_suite());
}
