/*
 * Unit tests for journal entries as records (journal/jformat.c): the
 * JSON object of journalctl -o json (its three first members, repeated
 * fields as arrays, bytes that are not printable UTF-8 as numbers, the
 * size cap), the short line, and the gap between two cursors.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "journal/jformat.h"
#include "testutil.h"

#define F(n, v)	{ n, sizeof(n) - 1, v, sizeof(v) - 1 }

static const struct jentry entry = {
	"s=abc;i=2a;b=def;m=3e8;t=60a24181e4000;x=1", 1700000000000000ULL, 1000
};

static char *
json(const struct jfield *f, size_t n, size_t max, bool *cut)
{
	struct buf	 b;

	buf_init(&b);
	jformat_json(f, n, &entry, max, &b, cut);
	buf_addc(&b, '\0');
	return b.data;
}

START_TEST(json_is_journalctl_s_object)
{
	struct jfield	 f[] = {
		F("_BOOT_ID", "0123"), F("MESSAGE", "hello \"you\"\tthere"),
		F("PRIORITY", "6"), F("TAG", "a"), F("TAG", "b"),
	};
	bool		 cut;
	char		*s;

	s = json(f, ARRAY_SIZE(f), 4096, &cut);
	ck_assert(!cut);
	ck_assert_str_eq(s, "{\"__CURSOR\":\"s=abc;i=2a;b=def;m=3e8;"
	    "t=60a24181e4000;x=1\",\"__REALTIME_TIMESTAMP\":"
	    "\"1700000000000000\",\"__MONOTONIC_TIMESTAMP\":\"1000\","
	    "\"_BOOT_ID\":\"0123\",\"MESSAGE\":\"hello \\\"you\\\"\\tthere\","
	    "\"PRIORITY\":\"6\",\"TAG\":[\"a\",\"b\"]}");
	free(s);
}
END_TEST

START_TEST(json_values_not_printable_are_bytes)
{
	struct jfield	 f[] = {
		F("MESSAGE", "a\x01z"), F("BIN", "\xff\xfe"),
		F("NL", "two\nlines"), F("UTF", "caf\xc3\xa9"),
	};
	bool		 cut;
	char		*s;

	s = json(f, ARRAY_SIZE(f), 4096, &cut);
	ck_assert_ptr_nonnull(strstr(s, "\"MESSAGE\":[97,1,122]"));
	ck_assert_ptr_nonnull(strstr(s, "\"BIN\":[255,254]"));
	ck_assert_ptr_nonnull(strstr(s, "\"NL\":\"two\\nlines\""));
	ck_assert_ptr_nonnull(strstr(s, "\"UTF\":\"caf\xc3\xa9\""));
	free(s);
}
END_TEST

START_TEST(json_is_cut_at_the_cap)
{
	struct jfield	 f[] = { F("MESSAGE", "0123456789012345678901234567") };
	bool		 cut;
	char		*s;

	s = json(f, ARRAY_SIZE(f), 100, &cut);
	ck_assert(cut);
	ck_assert_uint_le(strlen(s), 100);
	free(s);
}
END_TEST

START_TEST(short_line_is_journalctl_s)
{
	struct jfield	 f[] = {
		F("_HOSTNAME", "web1"), F("SYSLOG_IDENTIFIER", "nginx"),
		F("_PID", "77"), F("MESSAGE", "started"), F("_COMM", "x"),
	};
	struct jfield	 g[] = {
		F("_HOSTNAME", "web1"), F("_COMM", "cron"),
		F("MESSAGE", "tick"),
		F("_SOURCE_REALTIME_TIMESTAMP", "1700000061000000"),
	};
	struct buf	 b;
	bool		 cut;

	setenv("TZ", "UTC", 1);
	tzset();
	buf_init(&b);
	jformat_short(f, ARRAY_SIZE(f), &entry, 4096, &b, &cut);
	buf_addc(&b, '\0');
	ck_assert_str_eq(b.data, "Nov 14 22:13:20 web1 nginx[77]: started");
	jformat_short(g, ARRAY_SIZE(g), &entry, 4096, &b, &cut);
	buf_addc(&b, '\0');
	ck_assert_str_eq(b.data, "Nov 14 22:14:21 web1 cron: tick");
	jformat_short(f, ARRAY_SIZE(f), &entry, 10, &b, &cut);
	ck_assert(cut);
	ck_assert_uint_eq(b.len, 10);
	buf_cleanup(&b);
}
END_TEST

START_TEST(cursor_gap_counts_what_went)
{
	uint64_t	 lost = 99;
	struct jcursor	 c;

	ck_assert(jcursor_parse("s=abc;i=1f;b=x;m=1;t=60a24181e4000;x=2", &c));
	ck_assert_str_eq(c.seqnum_id, "abc");
	ck_assert_uint_eq(c.seqnum, 31);
	ck_assert_uint_eq(c.realtime, 1700000000000000ULL);
	/* Entries 0x20..0x29 went. */
	ck_assert_int_eq(jcursor_gap("s=abc;i=1f;t=1", "s=abc;i=2a;t=2",
	    &lost), 1);
	ck_assert_uint_eq(lost, 10);
	/* Only the committed entry itself went. */
	ck_assert_int_eq(jcursor_gap("s=abc;i=1f;t=1", "s=abc;i=20;t=2",
	    &lost), 1);
	ck_assert_uint_eq(lost, 0);
	/* Other files, another sequence: unknown. */
	ck_assert_int_eq(jcursor_gap("s=abc;i=1f;t=1", "s=def;i=2;t=2",
	    &lost), 0);
	ck_assert_int_eq(jcursor_gap("garbage", "s=def;i=2;t=2", &lost), -1);
	ck_assert(!jcursor_parse("s=abc;i=zz;t=1", &c));
	ck_assert(!jcursor_parse("s=abc;t=1", &c));
}
END_TEST

static Suite *
jformat_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("jformat");
	tc = tcase_create("core");
	tcase_add_test(tc, json_is_journalctl_s_object);
	tcase_add_test(tc, json_values_not_printable_are_bytes);
	tcase_add_test(tc, json_is_cut_at_the_cap);
	tcase_add_test(tc, short_line_is_journalctl_s);
	tcase_add_test(tc, cursor_gap_counts_what_went);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(jformat_suite());
}
