/*
 * Unit tests for journalMatch (conf/journalconf.c): alternatives ORed by
 * ',', terms ANDed by '+', PRIORITY=A..B expanded, blanks ignored, and
 * every malformed match refused with its reason.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <string.h>

#include "base/util.h"
#include "conf/journalconf.h"
#include "testutil.h"

/* What the parser handed over, as "a|b+c" text. */
static int
on_term(void *arg, const char *term)
{
	struct buf	*b = arg;

	if (b->len > 0 && b->data[b->len - 1] != '|')
		buf_addc(b, '+');
	buf_addstr(b, term);
	return 0;
}

static int
on_alt(void *arg)
{
	buf_addc(arg, '|');
	return 0;
}

static void
parses_as(const char *match, const char *want)
{
	struct buf	 b;
	struct journalconf_match_cbs cbs = { on_term, on_alt, &b };
	char		 err[200];

	buf_init(&b);
	buf_reserve(&b, 1);
	ck_assert_msg(journalconf_match(match, &cbs, err, sizeof(err)) == 0,
	    "%s: %s", match, err);
	buf_addc(&b, '\0');
	ck_assert_str_eq(b.data, want);
	buf_cleanup(&b);
}

static void
refused(const char *match, const char *why)
{
	char	 err[200];

	ck_assert_int_eq(journalconf_match(match, NULL, err, sizeof(err)),
	    -EINVAL);
	ck_assert_msg(strstr(err, why) != NULL, "%s: %s", match, err);
	ck_assert_ptr_nonnull(journalconf_check_match(match));
}

START_TEST(terms_and_alternatives)
{
	parses_as("", "");
	parses_as("SYSLOG_IDENTIFIER=app", "SYSLOG_IDENTIFIER=app");
	parses_as("_SYSTEMD_UNIT=nginx.service+PRIORITY=0..4, "
	    "SYSLOG_IDENTIFIER=app",
	    "_SYSTEMD_UNIT=nginx.service+PRIORITY=0+PRIORITY=1+PRIORITY=2+"
	    "PRIORITY=3+PRIORITY=4|SYSLOG_IDENTIFIER=app");
	parses_as(" A=1 + B=2 ,C=3 ", "A=1+B=2|C=3");
	parses_as("PRIORITY=3", "PRIORITY=3");
	parses_as("PRIORITY=5..5", "PRIORITY=5");
	parses_as("MESSAGE=a=b", "MESSAGE=a=b");
	parses_as("_PID=", "_PID=");
	ck_assert_ptr_null(journalconf_check_match("A=1,B=2"));
}
END_TEST

START_TEST(bad_matches_say_why)
{
	refused("unit=a", "term 'unit=a' is not FIELD=VALUE");
	refused("A=1,,B=2", "empty alternative");
	refused("A=1,", "empty alternative");
	refused(",A=1", "empty alternative");
	refused("A=1++B=2", "empty term");
	refused("A=1+", "empty term");
	refused("NOEQUALS", "is not FIELD=VALUE");
	refused("1A=x", "is not FIELD=VALUE");
	refused("PRIORITY=4..1", "not a range of priorities");
	refused("PRIORITY=0..9", "not a range of priorities");
}
END_TEST

static Suite *
journalconf_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("journalconf");
	tc = tcase_create("match");
	tcase_add_test(tc, terms_and_alternatives);
	tcase_add_test(tc, bad_matches_say_why);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(journalconf_suite());
}
