/*
 * Unit tests for the pure parts of the read-back commands: the times of
 * their command lines (cli_parse_time), the download replies of codec_read
 * (DescribeStream pages, GetCursor, GetRecords, base64, the JSON line),
 * the record multiset of verify (recset), partition names, and which
 * files verify takes for a flow (conf_flow_matches) with which framer
 * options (conf_framer_opts).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <check.h>

#include "base/util.h"
#include "conf/conf.h"
#include "readback/cli.h"
#include "readback/readback.h"
#include "readback/recset.h"
#include "records/framer.h"
#include "wire/codec_read.h"
#include "testutil.h"

#define NOW	1796112000000LL		/* 2026-12-01T08:00:00Z */

/* --- cli_parse_time ----------------------------------------------------- */

static int64_t
t_ok(const char *s)
{
	int64_t	 ms = -1;

	ck_assert_msg(cli_parse_time(s, NOW, &ms) == 0, "%s rejected", s);
	return ms;
}

START_TEST(time_iso_utc_and_offsets)
{
	ck_assert_int_eq(t_ok("2026-12-01T08:00:00Z"), NOW);
	ck_assert_int_eq(t_ok("2026-12-01t08:00:00z"), NOW);
	ck_assert_int_eq(t_ok("2026-12-01T16:00:00+08:00"), NOW);
	ck_assert_int_eq(t_ok("2026-12-01T16:00:00+0800"), NOW);
	ck_assert_int_eq(t_ok("2026-12-01T16:00+08"), NOW);
	ck_assert_int_eq(t_ok("2026-12-01T03:30:00-04:30"), NOW);
	ck_assert_int_eq(t_ok("2026-12-01 08:00Z"), NOW);
	ck_assert_int_eq(t_ok("2026-12-01T08:00:00.5Z"), NOW + 500);
	ck_assert_int_eq(t_ok("2026-12-01T08:00:00.123456Z"), NOW + 123);
	ck_assert_int_eq(t_ok("2026-12-01T08:00:00,25Z"), NOW + 250);
}
END_TEST

START_TEST(time_iso_without_zone_is_local)
{
	struct tm	 tm;
	time_t		 t;

	setenv("TZ", "Asia/Shanghai", 1);
	tzset();
	ck_assert_int_eq(t_ok("2026-12-01T16:00:00"), NOW);
	ck_assert_int_eq(t_ok("2026-12-01"), NOW - 16 * 3600000LL);
	unsetenv("TZ");
	tzset();
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = 126;
	tm.tm_mon = 11;
	tm.tm_mday = 1;
	tm.tm_isdst = -1;
	t = mktime(&tm);
	ck_assert_int_eq(t_ok("2026-12-01"), (int64_t)t * 1000);
}
END_TEST

START_TEST(time_relative_is_ago)
{
	ck_assert_int_eq(t_ok("10m"), NOW - 600000);
	ck_assert_int_eq(t_ok("-10m"), NOW - 600000);
	ck_assert_int_eq(t_ok("+10m"), NOW - 600000);
	ck_assert_int_eq(t_ok("2h"), NOW - 7200000);
	ck_assert_int_eq(t_ok("1h30m"), NOW - 5400000);
	ck_assert_int_eq(t_ok("90s"), NOW - 90000);
	ck_assert_int_eq(t_ok("2d"), NOW - 2 * 86400000LL);
	ck_assert_int_eq(t_ok("0s"), NOW);
}
END_TEST

START_TEST(time_rejects)
{
	static const char *const bad[] = {
		"", "-", "10", "10x", "m", "10m5", "h2", "yesterday",
		"2026-13-01", "2026-12-32", "2026-12-01T25:00", "2026-12-01T",
		"2026-12-01T08", "2026-12-01T08:61", "2026-12-01T08:00:00+25:00",
		"2026-12-01T08:00:00Q", "2026-12-01T08:00:00Z ", "26-12-01",
		"2026/12/01", "99999999999m",
	};
	int64_t	 ms = 7;
	size_t	 i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		ck_assert_msg(cli_parse_time(bad[i], NOW, &ms) == -EINVAL,
		    "\"%s\" accepted", bad[i]);
	ck_assert_int_eq(ms, 7);
}
END_TEST

/* --- DescribeStream pages ----------------------------------------------- */

#define PAGE1 \
	"{\"stream_id\":\"8QM3\",\"stream_name\":\"s\",\"retention_period\":24," \
	"\"status\":\"RUNNING\",\"stream_type\":\"COMMON\"," \
	"\"writable_partition_count\":2,\"readable_partition_count\":3," \
	"\"partitions\":[{\"status\":\"ACTIVE\",\"partition_id\":" \
	"\"shardId-0000000000\",\"hash_range\":\"[0 : 4611686018427387903]\"," \
	"\"sequence_number_range\":\"[289911 : 289927]\"},{\"status\":" \
	"\"DELETED\",\"partition_id\":\"shardId-0000000001\"}]," \
	"\"has_more_partitions\":true}"
#define PAGE2 \
	"{\"status\":\"RUNNING\",\"stream_type\":\"COMMON\",\"partitions\":" \
	"[{\"status\":\"ACTIVE\",\"partition_id\":\"shardId-0000000002\"," \
	"\"sequence_number_range\":\"[0:0]\"}],\"has_more_partitions\":false}"

START_TEST(stream_pages_append)
{
	struct codec_stream st;

	memset(&st, 0, sizeof(st));
	ck_assert_int_eq(codec_parse_stream(PAGE1, strlen(PAGE1), &st), 0);
	ck_assert(st.has_more);
	ck_assert_int_eq(st.retention_hours, 24);
	ck_assert_int_eq(st.readable_partitions, 3);
	ck_assert_int_eq(st.info.writable_partitions, 2);
	ck_assert_str_eq(st.info.id, "8QM3");
	ck_assert_uint_eq(st.nparts, 2);
	ck_assert_str_eq(st.parts[0].id, "shardId-0000000000");
	ck_assert_str_eq(st.parts[0].hash_range, "[0 : 4611686018427387903]");
	ck_assert_int_eq(st.parts[0].seq_first, 289911);
	ck_assert_int_eq(st.parts[0].seq_next, 289927);
	ck_assert_str_eq(st.parts[1].status, "DELETED");
	ck_assert_int_eq(st.parts[1].seq_first, -1);
	ck_assert_int_eq(st.parts[1].seq_next, -1);
	ck_assert_int_eq(codec_parse_stream(PAGE2, strlen(PAGE2), &st), 0);
	ck_assert(!st.has_more);
	ck_assert_uint_eq(st.nparts, 3);
	ck_assert_str_eq(st.parts[2].id, "shardId-0000000002");
	ck_assert_int_eq(st.parts[2].seq_first, 0);
	ck_assert_int_eq(st.parts[2].seq_next, 0);
	ck_assert_int_eq(st.retention_hours, -1);
	codec_stream_cleanup(&st);
	ck_assert_ptr_null(st.parts);
	codec_stream_cleanup(NULL);
}
END_TEST

START_TEST(stream_bad_pages)
{
	static const char *const bad[] = {
		"", "[]", "{\"status\":\"RUNNING\"}",
		"{\"status\":\"RUNNING\",\"stream_type\":\"COMMON\"}",
		"{\"status\":\"RUNNING\",\"stream_type\":\"COMMON\","
		    "\"partitions\":{}}",
		"{\"status\":\"RUNNING\",\"stream_type\":\"COMMON\","
		    "\"partitions\":[{\"status\":\"ACTIVE\"}]}",
		"{\"status\":\"RUNNING\",\"stream_type\":\"COMMON\","
		    "\"partitions\":[{\"partition_id\":\"\","
		    "\"status\":\"ACTIVE\"}]}",
		"{\"status\":\"RUNNING\",\"stream_type\":\"COMMON\","
		    "\"partitions\":[],\"has_more_partitions\":1}",
		"{\"status\":\"RUNNING\",\"stream_type\":\"COMMON\","
		    "\"partitions\":[],\"retention_period\":\"24\"}",
		"{\"status\":\"RUNNING\",\"stream_type\":\"COMMON\","
		    "\"partitions\":[{\"partition_id\":\"shardId-0000000000"
		    "0000000000000000000000000000000\",\"status\":\"ACTIVE\"}]}",
	};
	struct codec_stream st;
	size_t		 i;

	memset(&st, 0, sizeof(st));
	ck_assert_int_eq(codec_parse_stream(PAGE1, strlen(PAGE1), &st), 0);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ck_assert_msg(codec_parse_stream(bad[i], strlen(bad[i]),
		    &st) == -EBADMSG, "accepted %s", bad[i]);
		/* The pages before are kept. */
		ck_assert_uint_eq(st.nparts, 2);
	}
	codec_stream_cleanup(&st);
}
END_TEST

START_TEST(stream_odd_ranges)
{
	static const struct {
		const char	*range;
		int64_t		 first, next;
	} t[] = {
		{ "[5 : 9]", 5, 9 }, { "[5:9]", 5, 9 }, { " [ 5 : 9 ] ", -1, -1 },
		{ "[9 : 5]", -1, -1 }, { "[-1 : -1]", -1, -1 },
		{ "[1 : x]", -1, -1 }, { "1 : 2", -1, -1 }, { "[1 : 2]x", -1, -1 },
		{ "[0 : 9223372036854775807]", 0, INT64_MAX },
	};
	struct codec_stream st;
	char		 body[512];
	size_t		 i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		memset(&st, 0, sizeof(st));
		snprintf(body, sizeof(body), "{\"status\":\"RUNNING\","
		    "\"stream_type\":\"ADVANCED\",\"partitions\":[{\"status\":"
		    "\"ACTIVE\",\"partition_id\":\"p\",\"sequence_number_range\":"
		    "\"%s\"}]}", t[i].range);
		ck_assert_int_eq(codec_parse_stream(body, strlen(body), &st),
		    0);
		ck_assert_msg(st.parts[0].seq_first == t[i].first &&
		    st.parts[0].seq_next == t[i].next, "%s: %lld %lld",
		    t[i].range, (long long)st.parts[0].seq_first,
		    (long long)st.parts[0].seq_next);
		codec_stream_cleanup(&st);
	}
}
END_TEST

/* --- GetCursor, GetRecords ---------------------------------------------- */

START_TEST(cursor_reply)
{
	static const char *const bad[] = {
		"", "{}", "{\"partition_cursor\":\"\"}",
		"{\"partition_cursor\":5}", "{\"partition_cursor\":null}",
		"[\"partition_cursor\"]",
	};
	char	*c = NULL;
	size_t	 i;
	const char *ok = "{\"partition_cursor\":\"eyJnZXRJdGVy+/=\"}";

	ck_assert_int_eq(codec_parse_cursor(ok, strlen(ok), &c), 0);
	ck_assert_str_eq(c, "eyJnZXRJdGVy+/=");
	free(c);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ck_assert_int_eq(codec_parse_cursor(bad[i], strlen(bad[i]), &c),
		    -EBADMSG);
		ck_assert_ptr_null(c);
	}
}
END_TEST

/* Apps and checkpoints: the bodies sent, the replies read. */
START_TEST(checkpoint_bodies_and_replies)
{
	static const char *const bad[] = {
		"", "{}", "{\"sequence_number\":\"x1\"}",
		"{\"sequence_number\":-2}", "{\"sequence_number\":null}",
		"{\"sequence_number\":\"99999999999999999999\"}",
	};
	struct buf	 b;
	int64_t		 seq;
	char		*meta;
	size_t		 i;
	const char	*r;

	buf_init(&b);
	codec_checkpoint_body(&b, "app-1", "s1", "shardId-0000000002", 41,
	    "\"q\"");
	ck_assert_str_eq(b.data, "{\"app_name\":\"app-1\",\"checkpoint_type\":"
	    "\"LAST_READ\",\"stream_name\":\"s1\",\"partition_id\":"
	    "\"shardId-0000000002\",\"sequence_number\":\"41\",\"metadata\":"
	    "\"\\\"q\\\"\"}");
	buf_reset(&b);
	codec_app_body(&b, "app-1");
	ck_assert_str_eq(b.data, "{\"app_name\":\"app-1\"}");
	buf_cleanup(&b);
	r = "{\"sequence_number\":\"41\",\"metadata\":\"m\"}";
	ck_assert_int_eq(codec_parse_checkpoint(r, strlen(r), &seq, &meta), 0);
	ck_assert_int_eq(seq, 41);
	ck_assert_str_eq(meta, "m");
	free(meta);
	/* None yet: "-1" (the spec), -1, or an empty string. */
	r = "{\"sequence_number\":\"-1\",\"metadata\":\"\"}";
	ck_assert_int_eq(codec_parse_checkpoint(r, strlen(r), &seq, &meta), 0);
	ck_assert_int_eq(seq, -1);
	ck_assert_ptr_null(meta);
	r = "{\"sequence_number\":-1}";
	ck_assert_int_eq(codec_parse_checkpoint(r, strlen(r), &seq, &meta), 0);
	ck_assert_int_eq(seq, -1);
	r = "{\"sequence_number\":7}";
	ck_assert_int_eq(codec_parse_checkpoint(r, strlen(r), &seq, &meta), 0);
	ck_assert_int_eq(seq, 7);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		ck_assert_int_eq(codec_parse_checkpoint(bad[i], strlen(bad[i]),
		    &seq, &meta), -EBADMSG);
	ck_assert(codec_app_name_ok("a"));
	ck_assert(codec_app_name_ok("A-b_9"));
	ck_assert(!codec_app_name_ok(""));
	ck_assert(!codec_app_name_ok("a b"));
	ck_assert(!codec_app_name_ok("a/b"));
}
END_TEST

START_TEST(list_apps_pages)
{
	struct codec_apps a;
	const char	*p1 = "{\"has_more_app\":true,\"apps\":[{\"app_name\":"
	    "\"a1\",\"app_id\":\"id1\",\"create_time\":1700000000000,"
	    "\"commit_checkpoint_stream_names\":[\"s1\",\"s2\"]}],"
	    "\"total_number\":2}";
	const char	*p2 = "{\"has_more_app\":false,\"apps\":[{\"app_name\":"
	    "\"a2\",\"app_id\":17}]}";

	memset(&a, 0, sizeof(a));
	ck_assert_int_eq(codec_parse_apps(p1, strlen(p1), &a), 0);
	ck_assert(a.has_more);
	ck_assert_int_eq(codec_parse_apps(p2, strlen(p2), &a), 0);
	ck_assert(!a.has_more);
	ck_assert_uint_eq(a.napps, 2);
	ck_assert_str_eq(a.apps[0].name, "a1");
	ck_assert_str_eq(a.apps[0].id, "id1");
	ck_assert_int_eq(a.apps[0].created_ms, 1700000000000LL);
	ck_assert_str_eq(a.apps[0].streams, "s1,s2");
	ck_assert_str_eq(a.apps[1].id, "17");
	ck_assert_int_eq(a.apps[1].created_ms, -1);
	ck_assert_str_eq(a.apps[1].streams, "");
	ck_assert_int_eq(codec_parse_apps("{\"apps\":[{}]}", 13, &a),
	    -EBADMSG);
	ck_assert_int_eq(codec_parse_apps("[]", 2, &a), -EBADMSG);
	ck_assert_uint_eq(a.napps, 2);
	codec_apps_cleanup(&a);
}
END_TEST

#define RECORDS \
	"{\"records\":[{\"partition_key\":\"0\",\"sequence_number\":\"485\"," \
	"\"data\":\"MTEx\",\"timestamp\":1527577402541,\"timestamp_type\":" \
	"\"CreateTime\"},{\"sequence_number\":\"9223372036854775807\"," \
	"\"data\":\"\"},{\"sequence_number\":\"486\",\"data\":\"Zm9vYg==\"," \
	"\"partition_key\":null,\"timestamp\":null}]," \
	"\"next_partition_cursor\":\"eyJpdGVy\"}"

START_TEST(records_reply)
{
	struct codec_records *r;
	struct codec_record rec;

	ck_assert_int_eq(codec_parse_records(RECORDS, strlen(RECORDS), &r), 0);
	ck_assert_uint_eq(codec_records_count(r), 3);
	ck_assert_str_eq(codec_records_next(r), "eyJpdGVy");
	codec_records_get(r, 0, &rec);
	ck_assert_int_eq(rec.seq, 485);
	ck_assert_str_eq(rec.seq_text, "485");
	ck_assert_str_eq(rec.key, "0");
	ck_assert_uint_eq(rec.data64_len, 4);
	ck_assert(memcmp(rec.data64, "MTEx", 4) == 0);
	ck_assert_int_eq(rec.timestamp, 1527577402541LL);
	ck_assert_str_eq(rec.timestamp_type, "CreateTime");
	codec_records_get(r, 1, &rec);
	ck_assert_int_eq(rec.seq, INT64_MAX);
	ck_assert_ptr_null(rec.key);
	ck_assert_uint_eq(rec.data64_len, 0);
	ck_assert_int_eq(rec.timestamp, -1);
	ck_assert_ptr_null(rec.timestamp_type);
	codec_records_get(r, 2, &rec);
	ck_assert_ptr_null(rec.key);
	ck_assert_int_eq(rec.timestamp, -1);
	codec_records_free(r);
	codec_records_free(NULL);
}
END_TEST

START_TEST(records_reply_end_and_empty)
{
	static const char *const ends[] = {
		"{\"records\":[],\"next_partition_cursor\":null}",
		"{\"records\":[]}",
		"{\"records\":[],\"next_partition_cursor\":\"\"}",
	};
	struct codec_records *r;
	size_t		 i;

	for (i = 0; i < ARRAY_SIZE(ends); i++) {
		ck_assert_int_eq(codec_parse_records(ends[i], strlen(ends[i]),
		    &r), 0);
		ck_assert_uint_eq(codec_records_count(r), 0);
		ck_assert_ptr_null(codec_records_next(r));
		codec_records_free(r);
	}
}
END_TEST

START_TEST(records_reply_rejects)
{
	static const char *const bad[] = {
		"", "{}", "{\"records\":{}}", "{\"records\":[1]}",
		"{\"records\":[],\"next_partition_cursor\":7}",
		"{\"records\":[{\"data\":\"MTEx\"}]}",
		"{\"records\":[{\"sequence_number\":485,\"data\":\"MTEx\"}]}",
		"{\"records\":[{\"sequence_number\":\"\",\"data\":\"MTEx\"}]}",
		"{\"records\":[{\"sequence_number\":\"-1\",\"data\":\"MTEx\"}]}",
		"{\"records\":[{\"sequence_number\":\"12a\",\"data\":\"MTEx\"}]}",
		"{\"records\":[{\"sequence_number\":\"9223372036854775808\","
		    "\"data\":\"MTEx\"}]}",
		"{\"records\":[{\"sequence_number\":\"1\"}]}",
		"{\"records\":[{\"sequence_number\":\"1\",\"data\":\"MTE\"}]}",
		"{\"records\":[{\"sequence_number\":\"1\",\"data\":\"M!Ex\"}]}",
		"{\"records\":[{\"sequence_number\":\"1\",\"data\":\"MTEx\","
		    "\"partition_key\":5}]}",
		"{\"records\":[{\"sequence_number\":\"1\",\"data\":\"MTEx\","
		    "\"timestamp\":\"now\"}]}",
		/* One bad record spoils the reply: nothing is handed out. */
		"{\"records\":[{\"sequence_number\":\"1\",\"data\":\"MTEx\"},"
		    "{\"sequence_number\":\"2\",\"data\":\"=MTE\"}]}",
	};
	struct codec_records *r = (void *)1;
	size_t		 i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ck_assert_msg(codec_parse_records(bad[i], strlen(bad[i]),
		    &r) == -EBADMSG, "accepted %s", bad[i]);
		ck_assert_ptr_null(r);
	}
}
END_TEST

START_TEST(base64_decodes)
{
	static const struct {
		const char	*in;
		const char	*out;
	} t[] = {
		{ "", "" }, { "Zg==", "f" }, { "Zm8=", "fo" }, { "Zm9v", "foo" },
		{ "Zm9vYg==", "foob" }, { "Zm9vYmE=", "fooba" },
		{ "Zm9vYmFy", "foobar" }, { "+/+/", "\xfb\xff\xbf" },
	};
	static const char *const bad[] = {
		"Zg=", "Z===", "Zm9v!", "=Zg=", "Zg==Zg==", "Zm9", "Z=g=",
	};
	struct buf	 b;
	size_t		 i;

	buf_init(&b);
	for (i = 0; i < ARRAY_SIZE(t); i++) {
		buf_reset(&b);
		ck_assert_int_eq(codec_base64_decode(t[i].in, strlen(t[i].in),
		    &b), 0);
		ck_assert_uint_eq(b.len, strlen(t[i].out));
		ck_assert(memcmp(b.data, t[i].out, b.len) == 0);
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		buf_reset(&b);
		ck_assert_msg(codec_base64_decode(bad[i], strlen(bad[i]),
		    &b) == -EBADMSG, "accepted %s", bad[i]);
		ck_assert_uint_eq(b.len, 0);
	}
	/* Round trip over every byte value. */
	{
		char		 raw[256];
		struct buf	 enc;

		for (i = 0; i < 256; i++)
			raw[i] = (char)i;
		buf_init(&enc);
		codec_base64(raw, sizeof(raw), &enc);
		buf_reset(&b);
		ck_assert_int_eq(codec_base64_decode(enc.data, enc.len, &b), 0);
		ck_assert_uint_eq(b.len, 256);
		ck_assert(memcmp(b.data, raw, 256) == 0);
		buf_cleanup(&enc);
	}
	buf_cleanup(&b);
}
END_TEST

START_TEST(record_json_line)
{
	struct codec_records *r;
	struct codec_record rec;
	struct buf	 b;

	buf_init(&b);
	ck_assert_int_eq(codec_parse_records(RECORDS, strlen(RECORDS), &r), 0);
	codec_records_get(r, 0, &rec);
	codec_record_json(&b, "shardId-0000000001", &rec);
	ck_assert_str_eq(b.data, "{\"partition\":\"shardId-0000000001\","
	    "\"sequence_number\":\"485\",\"partition_key\":\"0\","
	    "\"timestamp\":1527577402541,\"timestamp_type\":\"CreateTime\","
	    "\"data\":\"MTEx\"}\n");
	buf_reset(&b);
	codec_records_get(r, 1, &rec);
	codec_record_json(&b, "p\"1", &rec);
	ck_assert_str_eq(b.data, "{\"partition\":\"p\\\"1\","
	    "\"sequence_number\":\"9223372036854775807\",\"data\":\"\"}\n");
	codec_records_free(r);
	buf_cleanup(&b);
}
END_TEST

/* --- recset ------------------------------------------------------------- */

START_TEST(recset_counts_and_claims)
{
	struct recset	*s = recset_new(4);
	struct recset_counts c;
	uint64_t	 a = recset_hash("a", 1), b = recset_hash("b", 1);
	uint64_t	 d = recset_hash("d", 1);

	/* Files: a a b (and d, never sent); stream: a b b x. */
	recset_add(s, a);
	recset_add(s, a);
	recset_add(s, b);
	recset_add(s, d);
	ck_assert(recset_seen(s, a));
	ck_assert(recset_seen(s, b));
	ck_assert(recset_seen(s, b));
	ck_assert(!recset_seen(s, recset_hash("x", 1)));
	recset_counts(s, &c);
	ck_assert_uint_eq(c.expected, 4);
	ck_assert_uint_eq(c.found, 2);
	ck_assert_uint_eq(c.missing, 2);
	ck_assert_uint_eq(c.extra, 1);
	/* The first occurrence of a is there, the second is the missing. */
	ck_assert(recset_claim(s, a));
	ck_assert(!recset_claim(s, a));
	ck_assert(recset_claim(s, b));
	ck_assert(!recset_claim(s, d));
	ck_assert(!recset_claim(s, recset_hash("x", 1)));
	recset_free(s);
	recset_free(NULL);
}
END_TEST

START_TEST(recset_grows_past_its_size)
{
	struct recset	*s = recset_new(10);
	struct recset_counts c;
	size_t		 small;
	uint32_t	 i;

	small = recset_memory(s);
	for (i = 0; i < 100000; i++)
		recset_add(s, recset_hash(&i, sizeof(i)));
	for (i = 0; i < 100000; i += 2)
		ck_assert(recset_seen(s, recset_hash(&i, sizeof(i))));
	recset_counts(s, &c);
	ck_assert_uint_eq(c.expected, 100000);
	ck_assert_uint_eq(c.found, 50000);
	ck_assert_uint_eq(c.missing, 50000);
	ck_assert_uint_eq(c.extra, 0);
	ck_assert_uint_gt(recset_memory(s), small);
	/* 16 bytes a record, a third over, when sized right. */
	recset_free(s);
	s = recset_new(1000000);
	ck_assert_uint_le(recset_memory(s), 16 * 1000000 * 4 / 3 + 1024);
	recset_free(s);
}
END_TEST

START_TEST(recset_hash_sees_every_byte)
{
	char		 a[40], b[40];
	size_t		 len, i;

	memset(a, 'x', sizeof(a));
	for (len = 0; len <= sizeof(a); len++) {
		for (i = 0; i < len; i++) {
			memcpy(b, a, sizeof(b));
			b[i] ^= 1;
			ck_assert_msg(recset_hash(a, len) != recset_hash(b, len),
			    "byte %zu of %zu", i, len);
		}
		if (len > 0)
			ck_assert(recset_hash(a, len) != recset_hash(a,
			    len - 1));
	}
	/* Trailing NULs are not the same as a shorter record. */
	memset(a, 0, sizeof(a));
	ck_assert(recset_hash(a, 3) != recset_hash(a, 4));
	ck_assert(recset_hash(a, 8) != recset_hash(a, 9));
}
END_TEST

/* --- partitions and flows ----------------------------------------------- */

START_TEST(partition_names)
{
	char	 out[40];

	readback_partition_name("0", out, sizeof(out));
	ck_assert_str_eq(out, "shardId-0000000000");
	readback_partition_name("17", out, sizeof(out));
	ck_assert_str_eq(out, "shardId-0000000017");
	readback_partition_name("shardId-0000000003", out, sizeof(out));
	ck_assert_str_eq(out, "shardId-0000000003");
	readback_partition_name("x1", out, sizeof(out));
	ck_assert_str_eq(out, "x1");
	readback_partition_name("12345678901", out, sizeof(out));
	ck_assert_str_eq(out, "12345678901");
}
END_TEST

START_TEST(flow_matching_and_framer_options)
{
	char		 pat1[] = "/var/log/app/*.log", pat2[] = "/var/log/app/*";
	char		 sfx[] = ".COMPLETED", excl[] = "debug*", delim[] = "|";
	char		 ml[] = "^\\d", enc[] = "GBK";
	struct conf_flow fc;
	struct framer_opts fo;

	memset(&fc, 0, sizeof(fc));
	fc.file_pattern = pat1;
	fc.file_suffix = sfx;
	fc.exclude_pattern = excl;
	ck_assert(conf_flow_matches(&fc, "/var/log/app/a.log"));
	ck_assert(!conf_flow_matches(&fc, "/var/log/app/sub/a.log"));
	ck_assert(!conf_flow_matches(&fc, "/var/log/app/.a.log"));
	ck_assert(!conf_flow_matches(&fc, "/var/log/app/debug1.log"));
	ck_assert(!conf_flow_matches(&fc, "/var/log/app/a.txt"));
	fc.file_pattern = pat2;
	ck_assert(!conf_flow_matches(&fc, "/var/log/app/a.log.gz"));
	ck_assert(!conf_flow_matches(&fc, "/var/log/app/a.COMPLETED"));
	fc.recursive = true;
	ck_assert(conf_flow_matches(&fc, "/var/log/app/sub/deep/a.log"));

	fc.record_delimiter = delim;
	fc.keep_delimiter = true;
	fc.strip_cr = true;
	fc.skip_empty = true;
	fc.multiline_pattern = ml;
	fc.file_encoding = enc;
	fc.skip_header_lines = 3;
	conf_framer_opts(&fc, &fo);
	ck_assert_int_eq(fo.delim, '|');
	ck_assert(fo.keep_delim && fo.strip_cr && fo.skip_empty);
	ck_assert_str_eq(fo.multiline, "^\\d");
	ck_assert_str_eq(fo.encoding, "GBK");
	ck_assert_uint_eq(fo.skip_header, 3);
}
END_TEST

static Suite *
readback_suite(void)
{
	Suite	*s = suite_create("readback");
	TCase	*tc;

	tc = tcase_create("time");
	tcase_add_test(tc, time_iso_utc_and_offsets);
	tcase_add_test(tc, time_iso_without_zone_is_local);
	tcase_add_test(tc, time_relative_is_ago);
	tcase_add_test(tc, time_rejects);
	suite_add_tcase(s, tc);
	tc = tcase_create("replies");
	tcase_add_test(tc, stream_pages_append);
	tcase_add_test(tc, stream_bad_pages);
	tcase_add_test(tc, stream_odd_ranges);
	tcase_add_test(tc, cursor_reply);
	tcase_add_test(tc, checkpoint_bodies_and_replies);
	tcase_add_test(tc, list_apps_pages);
	tcase_add_test(tc, records_reply);
	tcase_add_test(tc, records_reply_end_and_empty);
	tcase_add_test(tc, records_reply_rejects);
	tcase_add_test(tc, base64_decodes);
	tcase_add_test(tc, record_json_line);
	suite_add_tcase(s, tc);
	tc = tcase_create("recset");
	tcase_add_test(tc, recset_counts_and_claims);
	tcase_add_test(tc, recset_grows_past_its_size);
	tcase_add_test(tc, recset_hash_sees_every_byte);
	suite_add_tcase(s, tc);
	tc = tcase_create("names");
	tcase_add_test(tc, partition_names);
	tcase_add_test(tc, flow_matching_and_framer_options);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(readback_suite());
}
