/*
 * Unit tests for the DIS wire codec: base64 against RFC 4648 and libcrypto,
 * the PutRecords body byte for byte against spec/dis-api.md section 2, JSON
 * escaping, and parsing of PutRecords, error and DescribeStream replies,
 * including malformed and oversized input.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <openssl/evp.h>

#include "base/util.h"
#include "wire/codec.h"
#include "testutil.h"

/* The exact one-line body of the spec section 2 example (265 bytes). */
static const char spec_body[] = "{\"stream_name\":\"app-logs\",\"records\":["
    "{\"data\":\"MjAyNC0wMS0wMSAwMDowMDowMCBJTkZPIHN0YXJ0\","
    "\"partition_key\":\"483021\"},"
    "{\"data\":\"MjAyNC0wMS0wMSAwMDowMDowMSBXQVJOIHNsb3c=\","
    "\"partition_key\":\"77\"},"
    "{\"data\":\"MjAyNC0wMS0wMSAwMDowMDowMiBJTkZPIGRvbmU=\","
    "\"partition_key\":\"913456\"}]}";

/* The spec section 2 reply, whitespace and all. */
static const char spec_reply[] = "{\"failed_record_count\":1,\"records\":[\n"
    " {\"partition_id\":\"shardId-0000000000\",\"sequence_number\":\"1024\"},\n"
    " {\"error_code\":\"DIS.4303\","
    "\"error_message\":\"Exceeded traffic control limit.\"},\n"
    " {\"partition_id\":\"shardId-0000000001\",\"sequence_number\":\"377\"}]}";

/* The spec section 5 DescribeStream reply. */
static const char spec_describe[] =
    "{\"stream_id\":\"8QM3Nt9YTLOwtUVYJhO\",\"stream_name\":\"newstream\","
    "\"create_time\":1593569685875,\n"
    "\"retention_period\":24,\"status\":\"RUNNING\",\"stream_type\":"
    "\"COMMON\",\"data_type\":\"BLOB\",\n"
    "\"writable_partition_count\":1,\"readable_partition_count\":1,"
    "\"tags\":[],\"auto_scale_enabled\":false,\n"
    "\"partitions\":[{\"status\":\"ACTIVE\",\"partition_id\":"
    "\"shardId-0000000000\",\n"
    " \"hash_range\":\"[0 : 9223372036854775807]\","
    "\"sequence_number_range\":\"[289911 : 289927]\"}],\n"
    "\"has_more_partitions\":false}";

static char *
b64(const void *p, size_t n)
{
	struct buf	 b;

	buf_init(&b);
	codec_base64(p, n, &b);
	ck_assert_uint_eq(b.len, codec_base64_len(n));
	if (b.data == NULL)
		return strdup("");
	return b.data;
}

static int
parse_put_str(const char *s, struct codec_result *res, size_t n)
{
	return codec_parse_put(s, strlen(s), res, n);
}

START_TEST(base64_rfc4648_vectors)
{
	static const char *const in[] = {
		"", "f", "fo", "foo", "foob", "fooba", "foobar"
	};
	static const char *const want[] = {
		"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"
	};
	size_t	 i;
	char	*s;

	for (i = 0; i < ARRAY_SIZE(in); i++) {
		s = b64(in[i], strlen(in[i]));
		ck_assert_str_eq(s, want[i]);
		free(s);
	}
}
END_TEST

START_TEST(base64_len_rounds_up_to_quads)
{
	ck_assert_uint_eq(codec_base64_len(0), 0);
	ck_assert_uint_eq(codec_base64_len(1), 4);
	ck_assert_uint_eq(codec_base64_len(2), 4);
	ck_assert_uint_eq(codec_base64_len(3), 4);
	ck_assert_uint_eq(codec_base64_len(4), 8);
	ck_assert_uint_eq(codec_base64_len(1048576), 1398104);
}
END_TEST

/*
 * Every byte value and every length up to 300 (all phases of the 6-byte
 * main loop and the 3-byte and padded tails) agree with libcrypto.
 */
START_TEST(base64_binary_matches_libcrypto)
{
	unsigned char	 in[300], ref[420];
	size_t		 n, i;
	char		*s;
	int		 len;

	for (i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)(i * 7 + 3);
	for (n = 0; n <= sizeof(in); n++) {
		len = EVP_EncodeBlock(ref, in, (int)n);
		s = b64(in, n);
		ck_assert_int_eq((int)strlen(s), len);
		ck_assert_str_eq(s, (char *)ref);
		free(s);
		/* The same bytes from an odd address (the 8-byte loads). */
		if (n == 0)
			continue;
		len = EVP_EncodeBlock(ref, in + 1, (int)n - 1);
		s = b64(in + 1, n - 1);
		ck_assert_int_eq((int)strlen(s), len);
		ck_assert_str_eq(s, (char *)ref);
		ck_assert_ptr_null(strchr(s, '\n'));
		free(s);
	}
}
END_TEST

START_TEST(base64_appends_to_existing_text)
{
	struct buf	 b;

	buf_init(&b);
	buf_addstr(&b, "x:");
	codec_base64("hello", 5, &b);
	ck_assert_str_eq(b.data, "x:aGVsbG8=");
	ck_assert_uint_eq(b.len, 10);
	buf_cleanup(&b);
}
END_TEST

static void
spec_put(struct buf *b)
{
	codec_put_begin(b, "app-logs", NULL);
	codec_put_add(b, "2024-01-01 00:00:00 INFO start", 30, "483021");
	codec_put_add(b, "2024-01-01 00:00:01 WARN slow", 29, "77");
	codec_put_add(b, "2024-01-01 00:00:02 INFO done", 29, "913456");
	codec_put_end(b);
}

START_TEST(put_body_reproduces_spec_example)
{
	struct buf	 b;

	buf_init(&b);
	spec_put(&b);
	ck_assert_uint_eq(b.len, 265);
	ck_assert_str_eq(b.data, spec_body);
	/* The buffer is reused between requests: same bytes again. */
	buf_reset(&b);
	spec_put(&b);
	ck_assert_uint_eq(b.len, 265);
	ck_assert_str_eq(b.data, spec_body);
	buf_cleanup(&b);
}
END_TEST

START_TEST(put_body_with_stream_id_replaces_name)
{
	struct buf	 b;

	buf_init(&b);
	codec_put_begin(&b, "ignored", "8QM3Nt9YTLOwtUVYJhO");
	codec_put_add(&b, "a", 1, "1");
	codec_put_end(&b);
	ck_assert_str_eq(b.data, "{\"stream_id\":\"8QM3Nt9YTLOwtUVYJhO\","
	    "\"records\":[{\"data\":\"YQ==\",\"partition_key\":\"1\"}]}");
	buf_reset(&b);
	codec_put_begin(&b, "named", "");
	codec_put_end(&b);
	ck_assert_str_eq(b.data, "{\"stream_name\":\"named\",\"records\":[]}");
	buf_cleanup(&b);
}
END_TEST

START_TEST(put_body_omits_null_partition_key_and_encodes_empty_data)
{
	struct buf	 b;

	buf_init(&b);
	codec_put_begin(&b, "s", NULL);
	codec_put_add(&b, "", 0, NULL);
	codec_put_add(&b, "\x00\xff", 2, "");
	codec_put_end(&b);
	ck_assert_str_eq(b.data, "{\"stream_name\":\"s\",\"records\":["
	    "{\"data\":\"\"},{\"data\":\"AP8=\",\"partition_key\":\"\"}]}");
	buf_cleanup(&b);
}
END_TEST

START_TEST(put_body_escapes_strings)
{
	struct buf	 b;

	buf_init(&b);
	codec_put_begin(&b, "a\"b\\c\n\x01\x1f", NULL);
	codec_put_add(&b, "x", 1, "k\"\t\\/\xc3\xa9");
	codec_put_end(&b);
	ck_assert_str_eq(b.data, "{\"stream_name\":\"a\\\"b\\\\c\\u000a"
	    "\\u0001\\u001f\",\"records\":[{\"data\":\"eA==\","
	    "\"partition_key\":\"k\\\"\\u0009\\\\/\xc3\xa9\"}]}");
	buf_cleanup(&b);
}
END_TEST

START_TEST(parse_put_all_acknowledged)
{
	static const char	 body[] = "{\"failed_record_count\":0,\"records\":["
	    "{\"partition_id\":\"shardId-0000000000\",\"sequence_number\":\"1\"},"
	    "{\"partition_id\":\"shardId-0000000000\",\"sequence_number\":\"2\"}]}";
	struct codec_result	 res[2];

	memset(res, 'x', sizeof(res));
	ck_assert_int_eq(parse_put_str(body, res, 2), 0);
	ck_assert_str_eq(res[0].code, "");
	ck_assert_str_eq(res[0].message, "");
	ck_assert_str_eq(res[1].code, "");
	ck_assert_str_eq(res[1].message, "");
}
END_TEST

START_TEST(parse_put_spec_partial_failure)
{
	struct codec_result	 res[3];

	ck_assert_int_eq(parse_put_str(spec_reply, res, 3), 1);
	ck_assert_str_eq(res[0].code, "");
	ck_assert_str_eq(res[1].code, "DIS.4303");
	ck_assert_str_eq(res[1].message, "Exceeded traffic control limit.");
	ck_assert_str_eq(res[2].code, "");
}
END_TEST

START_TEST(parse_put_mixed_codes_by_position)
{
	static const char	 body[] = "{\"failed_record_count\":3,\"records\":["
	    "{\"partition_id\":\"shardId-0000000000\",\"sequence_number\":\"7\"},"
	    "{\"error_code\":\"DIS.4303\",\"error_message\":\"throttled\"},"
	    "{\"partition_id\":\"shardId-0000000001\",\"sequence_number\":\"8\"},"
	    "{\"error_code\":\"DIS.5000\",\"error_message\":\"system error\"},"
	    "{\"error_code\":\"DIS.4200\"}]}";
	struct codec_result	 res[5];

	ck_assert_int_eq(parse_put_str(body, res, 5), 3);
	ck_assert_str_eq(res[0].code, "");
	ck_assert_str_eq(res[1].code, "DIS.4303");
	ck_assert_str_eq(res[1].message, "throttled");
	ck_assert_str_eq(res[2].code, "");
	ck_assert_str_eq(res[3].code, "DIS.5000");
	ck_assert_str_eq(res[3].message, "system error");
	ck_assert_str_eq(res[4].code, "DIS.4200");
	ck_assert_str_eq(res[4].message, "");
}
END_TEST

START_TEST(parse_put_count_mismatch_is_ebadmsg)
{
	struct codec_result	 res[4];

	ck_assert_int_eq(parse_put_str(spec_reply, res, 2), -EBADMSG);
	ck_assert_int_eq(parse_put_str(spec_reply, res, 4), -EBADMSG);
	ck_assert_int_eq(parse_put_str("{\"records\":[]}", res, 1), -EBADMSG);
	ck_assert_int_eq(parse_put_str("{\"records\":[]}", res, 0), 0);
}
END_TEST

START_TEST(parse_put_garbage_is_ebadmsg)
{
	static const char *const bad[] = {
		"", "not json", "<html>502</html>", "{\"records\":[{}]", "[{}]",
		"{\"records\":[{}]} trailing", "null", "\"records\"",
	};
	struct codec_result	 res[1];
	size_t			 i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		ck_assert_msg(parse_put_str(bad[i], res, 1) == -EBADMSG,
		    "accepted: %s", bad[i]);
	ck_assert_int_eq(codec_parse_put(NULL, 0, res, 1), -EBADMSG);
	/* Length is honoured: the valid prefix alone parses. */
	ck_assert_int_eq(codec_parse_put("{\"records\":[{}]}xyz", 16, res, 1),
	    0);
}
END_TEST

/* A reply for another number of records says how many it holds. */
START_TEST(put_entries_counts_a_reply_of_any_length)
{
	static const char two[] = "{\"records\":[{\"sequence_number\":\"1\"},"
	    "{\"error_code\":\"DIS.4303\"}],\"failed_record_count\":1}";

	ck_assert_int_eq(codec_put_entries(two, strlen(two)), 2);
	ck_assert_int_eq(codec_put_entries("{\"records\":[]}", 14), 0);
	ck_assert_int_eq(codec_put_entries(two, strlen(two) - 1), -EBADMSG);
	ck_assert_int_eq(codec_put_entries("{\"records\":[1]}", 15),
	    -EBADMSG);
	ck_assert_int_eq(codec_put_entries("<html></html>", 13), -EBADMSG);
	ck_assert_int_eq(codec_put_entries(NULL, 0), -EBADMSG);
}
END_TEST

START_TEST(parse_put_missing_or_wrong_records_is_ebadmsg)
{
	struct codec_result	 res[1];

	ck_assert_int_eq(parse_put_str("{\"failed_record_count\":0}", res, 1),
	    -EBADMSG);
	ck_assert_int_eq(parse_put_str("{\"records\":{}}", res, 1), -EBADMSG);
	ck_assert_int_eq(parse_put_str("{\"records\":[1]}", res, 1),
	    -EBADMSG);
	ck_assert_int_eq(parse_put_str("{\"records\":[null]}", res, 1),
	    -EBADMSG);
}
END_TEST

START_TEST(parse_put_empty_or_non_string_error_code_is_success)
{
	static const char	 body[] = "{\"records\":["
	    "{\"error_code\":\"\",\"error_message\":\"\"},"
	    "{\"error_code\":null},"
	    "{\"error_code\":4303,\"error_message\":\"odd\"}]}";
	struct codec_result	 res[3];

	ck_assert_int_eq(parse_put_str(body, res, 3), 0);
	ck_assert_str_eq(res[0].code, "");
	ck_assert_str_eq(res[1].code, "");
	ck_assert_str_eq(res[2].code, "");
	ck_assert_str_eq(res[2].message, "");
}
END_TEST

START_TEST(parse_put_truncates_long_code_and_message)
{
	struct codec_result	 res[1];
	struct buf		 b;
	size_t			 i;

	buf_init(&b);
	buf_addstr(&b, "{\"records\":[{\"error_code\":\"DIS.");
	for (i = 0; i < 100; i++)
		buf_addc(&b, '9');
	buf_addstr(&b, "\",\"error_message\":\"");
	/* 2-byte UTF-8 characters: the cut must not split one. */
	for (i = 0; i < 50000; i++)
		buf_addstr(&b, "\xc3\xa9");
	buf_addstr(&b, "\"}]}");
	ck_assert_int_eq(codec_parse_put(b.data, b.len, res, 1), 1);
	ck_assert_uint_eq(strlen(res[0].code), sizeof(res[0].code) - 1);
	ck_assert_int_eq(strncmp(res[0].code, "DIS.999", 7), 0);
	ck_assert_uint_le(strlen(res[0].message), sizeof(res[0].message) - 1);
	ck_assert_uint_ge(strlen(res[0].message), sizeof(res[0].message) - 2);
	ck_assert_uint_eq(strlen(res[0].message) % 2, 0);
	ck_assert_int_eq(memcmp(res[0].message, "\xc3\xa9\xc3\xa9", 4), 0);
	buf_cleanup(&b);
}
END_TEST

START_TEST(parse_error_dis_shape)
{
	static const char	 body[] = "{\"errorCode\":\"DIS.4301\","
	    "\"message\":\"Stream does not exist. [app-logs]\"}";
	char			 code[32], msg[128];

	ck_assert_int_eq(codec_parse_error(body, strlen(body), code,
	    sizeof(code), msg, sizeof(msg)), 0);
	ck_assert_str_eq(code, "DIS.4301");
	ck_assert_str_eq(msg, "Stream does not exist. [app-logs]");
}
END_TEST

START_TEST(parse_error_gateway_shape)
{
	static const char	 body[] = "{\"error_msg\":\"Incorrect IAM "
	    "authentication information\",\"error_code\":\"APIGW.0301\","
	    "\"request_id\":\"abc\"}";
	char			 code[32], msg[128];

	ck_assert_int_eq(codec_parse_error(body, strlen(body), code,
	    sizeof(code), msg, sizeof(msg)), 0);
	ck_assert_str_eq(code, "APIGW.0301");
	ck_assert_str_eq(msg, "Incorrect IAM authentication information");
}
END_TEST

START_TEST(parse_error_absent_field_is_empty_and_long_is_truncated)
{
	static const char	 body[] = "{\"errorCode\":\"DIS.4117\"}";
	static const char	 lng[] = "{\"errorCode\":\"DIS.5000\","
	    "\"message\":\"0123456789abcdef\"}";
	char			 code[8], msg[8];

	strcpy(msg, "stale");
	ck_assert_int_eq(codec_parse_error(body, strlen(body), code,
	    sizeof(code), msg, sizeof(msg)), 0);
	ck_assert_str_eq(code, "DIS.411");	/* 7 chars fit in 8 */
	ck_assert_str_eq(msg, "");
	ck_assert_int_eq(codec_parse_error(lng, strlen(lng), code,
	    sizeof(code), msg, sizeof(msg)), 0);
	ck_assert_str_eq(msg, "0123456");
}
END_TEST

START_TEST(parse_error_non_json_is_ebadmsg_with_empty_outputs)
{
	static const char *const bad[] = {
		"<html>Bad Gateway</html>", "", "[1,2]", "{\"other\":1}",
		"{\"errorCode\":",
	};
	char	 code[32], msg[64];
	size_t	 i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		strcpy(code, "stale");
		strcpy(msg, "stale");
		ck_assert_msg(codec_parse_error(bad[i], strlen(bad[i]), code,
		    sizeof(code), msg, sizeof(msg)) == -EBADMSG, "accepted %s",
		    bad[i]);
		ck_assert_str_eq(code, "");
		ck_assert_str_eq(msg, "");
	}
}
END_TEST

START_TEST(parse_describe_spec_example)
{
	struct stream_info	 si;

	ck_assert_int_eq(codec_parse_describe(spec_describe,
	    strlen(spec_describe), &si), 0);
	ck_assert_str_eq(si.status, "RUNNING");
	ck_assert_str_eq(si.type, "COMMON");
	ck_assert_str_eq(si.id, "8QM3Nt9YTLOwtUVYJhO");
	ck_assert_int_eq(si.writable_partitions, 1);
}
END_TEST

START_TEST(parse_describe_optional_fields)
{
	static const char	 body[] = "{\"status\":\"FROZEN\","
	    "\"stream_type\":\"ADVANCED\"}";
	struct stream_info	 si;

	ck_assert_int_eq(codec_parse_describe(body, strlen(body), &si), 0);
	ck_assert_str_eq(si.status, "FROZEN");
	ck_assert_str_eq(si.type, "ADVANCED");
	ck_assert_str_eq(si.id, "");
	ck_assert_int_eq(si.writable_partitions, 0);
}
END_TEST

START_TEST(parse_describe_bad_input_is_ebadmsg)
{
	static const char *const bad[] = {
		"", "garbage", "[]",
		"{\"stream_type\":\"COMMON\"}",
		"{\"status\":\"RUNNING\"}",
		"{\"status\":7,\"stream_type\":\"COMMON\"}",
		"{\"status\":\"RUNNING\",\"stream_type\":\"COMMON\","
		    "\"writable_partition_count\":\"1\"}",
		"{\"status\":\"RUNNING\",\"stream_type\":\"COMMON\","
		    "\"writable_partition_count\":-1}",
		"{\"status\":\"RUNNING_BUT_MUCH_TOO_LONG\","
		    "\"stream_type\":\"COMMON\"}",
	};
	struct stream_info	 si;
	size_t			 i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ck_assert_msg(codec_parse_describe(bad[i], strlen(bad[i]),
		    &si) == -EBADMSG, "accepted %s", bad[i]);
		ck_assert_str_eq(si.status, "");
	}
}
END_TEST

/* The scanner that takes the all-acknowledged shortcut must agree with the
 * full parser on every body, whatever the shape. */
START_TEST(parse_put_shortcut_agrees_with_the_full_parser)
{
	static const struct {
		const char	*body;
		size_t		 n;
		int		 want;
	} cases[] = {
		{ "{\"failed_record_count\":0,\"records\":[{\"partition_id\":"
		  "\"shardId-0000000000\",\"sequence_number\":\"1\"},{}]}", 2, 0 },
		{ " { \"records\" : [ { \"error_code\" : \"\" } ] , \"x\": "
		  "[1, -2.5e+3, true, false, null, {\"a\":\"\\\"\"}] } ", 1, 0 },
		{ "{\"records\":[{\"error_code\":\"DIS.4303\"}]}", 1, 1 },
		{ "{\"records\":[{\"error\\u005fcode\":\"DIS.4303\"}]}", 1, 1 },
		{ "{\"records\":[{\"error_code\":null}]}", 1, 0 },
		{ "{\"records\":[{},{}]}", 3, -EBADMSG },
		{ "{\"records\":[{\"x\":tru}]}", 1, -EBADMSG },
		{ "{\"records\":[{}]} trailing", 1, -EBADMSG },
		{ "{\"records\":[{}],\"records\":[{}]}", 1, 0 },
		{ "{\"records\":[{\"x\":01x}]}", 1, -EBADMSG },
		/* What fuzz_put_reply found the shortcut taking and jansson
		 * refusing (the first), and its kin: bytes that are not
		 * UTF-8, escapes, numbers outside JSON's grammar or too big
		 * for jansson.  Text jansson takes still parses. */
		{ "{\"failed_record_count\":0,\"records\":[{\"partition_id\":"
		  "\"shardId-0000000000\",\"sequen\xff\xff\xff" "ce_number\":"
		  "\"0\"}]}", 1, -EBADMSG },
		{ "{\"records\":[{\"x\":\"\xc3\"}]}", 1, -EBADMSG },
		{ "{\"records\":[{\"x\":\"\xc3\xa9\"}]}", 1, 0 },
		{ "{\"records\":[{\"x\":\"\\q\"}]}", 1, -EBADMSG },
		{ "{\"records\":[{\"x\":\"\\ud800\"}]}", 1, -EBADMSG },
		{ "{\"records\":[{\"x\":\"\\u00e9\\n\"}]}", 1, 0 },
		{ "{\"records\":[{\"x\":01}]}", 1, -EBADMSG },
		{ "{\"records\":[{\"x\":1.e5}]}", 1, -EBADMSG },
		{ "{\"records\":[{\"x\":.5}]}", 1, -EBADMSG },
		{ "{\"records\":[{\"x\":1e5e5}]}", 1, -EBADMSG },
		{ "{\"records\":[{\"x\":123456789012345678901234567890}]}", 1,
		  -EBADMSG },
		{ "{\"records\":[{\"x\":1e999}]}", 1, -EBADMSG },
		{ "{\"records\":[{\"x\":-0.25E-3}]}", 1, 0 },
		{ "{\"records\":[{\"x\":1234567890123456}]}", 1, 0 },
	};
	struct codec_result res[3];
	size_t		 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(codec_parse_put(cases[i].body,
		    strlen(cases[i].body), res, cases[i].n) == cases[i].want,
		    "case %zu", i);
}
END_TEST

/*
 * DIS's own record shape, {"partition_id":"..","sequence_number":".."}, is
 * read by a byte-pattern path; every record must come out as the general
 * reader reads it (the same text with a space after each colon takes the
 * general path), near misses included, with the last sequence number of
 * each partition parsed and the others -1.
 */
START_TEST(parse_put_dis_shape_reads_as_the_general_reader)
{
	static const char *const recs[] = {
		"{\"partition_id\":\"shardId-0000000002\","
		    "\"sequence_number\":\"41\"}",
		"{\"partition_id\":\"shardId-0000000001\","
		    "\"sequence_number\":\"7\"}",
		"{\"partition_id\":\"shardId-0000000002\","
		    "\"sequence_number\":\"42\"}",
		/* near misses: the general reader decides */
		"{\"partition_id\":\"shardId-0000000003\","
		    "\"sequence_number\":\"x9\"}",
		"{\"partition_id\":\"shardId-000000000\\/4\","
		    "\"sequence_number\":\"5\"}",
		"{\"partition_id\":\"shardId-0000000001\","
		    "\"sequence_number\":\"8\",\"error_code\":\"\"}",
		"{\"partition_id\":\"\",\"sequence_number\":\"3\"}",
		"{\"partition_id\":\"shardId-0000000005\","
		    "\"sequence_number\":\"\"}",
		"{\"partition_id\":\"shardId-0000000006\","
		    "\"sequence_number\":\"12\"}",
	};
	enum { N = sizeof(recs) / sizeof(recs[0]) };
	struct codec_result fast[N], slow[N];
	struct buf	 a, b;
	const char	*r;
	size_t		 i;

	buf_init(&a);
	buf_init(&b);
	buf_addstr(&a, "{\"failed_record_count\":0,\"records\":[");
	buf_addstr(&b, "{\"failed_record_count\": 0, \"records\": [");
	for (i = 0; i < N; i++) {
		buf_addstr(&a, i ? "," : "");
		buf_addstr(&b, i ? ", " : "");
		buf_addstr(&a, recs[i]);
		for (r = recs[i]; *r != '\0'; r++) {
			buf_addc(&b, *r);
			if (*r == ':')
				buf_addc(&b, ' ');
		}
	}
	buf_addstr(&a, "]}");
	buf_addstr(&b, "]}");
	ck_assert(codec_all_acknowledged(a.data, a.len, fast, N));
	ck_assert(codec_all_acknowledged(b.data, b.len, slow, N));
	for (i = 0; i < N; i++) {
		ck_assert_msg(fast[i].partition == slow[i].partition,
		    "record %zu: partition %d, general %d", i,
		    (int)fast[i].partition, (int)slow[i].partition);
		ck_assert_msg(fast[i].seq == slow[i].seq,
		    "record %zu: seq %lld, general %lld", i,
		    (long long)fast[i].seq, (long long)slow[i].seq);
	}
	ck_assert_int_eq(fast[0].partition, 2);
	ck_assert_int_eq(fast[0].seq, -1);		/* not the last of 2 */
	ck_assert_int_eq(fast[2].seq, 42);
	ck_assert_int_eq(fast[1].seq, -1);
	ck_assert_int_eq(fast[5].seq, 8);
	ck_assert_int_eq(fast[4].partition, -1);	/* escaped: unknown */
	ck_assert_int_eq(fast[8].partition, 6);
	ck_assert_int_eq(fast[8].seq, 12);
	/* Cut inside the shape: not a reply. */
	ck_assert(!codec_all_acknowledged(a.data, 60, fast, N));
	buf_cleanup(&a);
	buf_cleanup(&b);
}
END_TEST

/*
 * The shortcut scans strings 16 bytes at a time: a control character,
 * an escape or the closing quote at every offset of a long string must be
 * seen exactly where it is.
 */
START_TEST(parse_put_shortcut_long_strings_at_every_offset)
{
	struct codec_result res[1];
	char		 body[256], pad[64];
	size_t		 off;

	for (off = 0; off < 40; off++) {
		memset(pad, 'a', off);
		pad[off] = '\0';
		/* A control character: not JSON. */
		snprintf(body, sizeof(body), "{\"records\":[{\"partition_id\":"
		    "\"%s\x01" "bbbbbbbbbbbbbbbbbbbb\",\"sequence_number\":\"1\"}]}",
		    pad);
		ck_assert_msg(codec_parse_put(body, strlen(body), res, 1) ==
		    -EBADMSG, "control at %zu", off);
		/* An escaped quote is not the end of the string. */
		snprintf(body, sizeof(body), "{\"records\":[{\"partition_id\":"
		    "\"%s\\\"bbbbbbbbbbbbbbbbbbbbbbb\",\"error_code\":\"E\"}]}",
		    pad);
		ck_assert_msg(codec_parse_put(body, strlen(body), res, 1) == 1,
		    "escape at %zu", off);
		ck_assert_str_eq(res[0].code, "E");
		/* Cut short anywhere inside the last string: not JSON. */
		snprintf(body, sizeof(body), "{\"records\":[{\"partition_id\":"
		    "\"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb%s", pad);
		ck_assert_msg(codec_parse_put(body, strlen(body), res, 1) ==
		    -EBADMSG, "cut at %zu", off);
	}
}
END_TEST

static Suite *
codec_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("codec");
	tc = tcase_create("base64");
	tcase_add_test(tc, base64_rfc4648_vectors);
	tcase_add_test(tc, base64_len_rounds_up_to_quads);
	tcase_add_test(tc, base64_binary_matches_libcrypto);
	tcase_add_test(tc, base64_appends_to_existing_text);
	suite_add_tcase(s, tc);

	tc = tcase_create("put_body");
	tcase_add_test(tc, put_body_reproduces_spec_example);
	tcase_add_test(tc, put_body_with_stream_id_replaces_name);
	tcase_add_test(tc,
	    put_body_omits_null_partition_key_and_encodes_empty_data);
	tcase_add_test(tc, put_body_escapes_strings);
	suite_add_tcase(s, tc);

	tc = tcase_create("parse_put");
	tcase_add_test(tc, parse_put_all_acknowledged);
	tcase_add_test(tc, put_entries_counts_a_reply_of_any_length);
	tcase_add_test(tc, parse_put_shortcut_agrees_with_the_full_parser);
	tcase_add_test(tc, parse_put_shortcut_long_strings_at_every_offset);
	tcase_add_test(tc, parse_put_dis_shape_reads_as_the_general_reader);
	tcase_add_test(tc, parse_put_spec_partial_failure);
	tcase_add_test(tc, parse_put_mixed_codes_by_position);
	tcase_add_test(tc, parse_put_count_mismatch_is_ebadmsg);
	tcase_add_test(tc, parse_put_garbage_is_ebadmsg);
	tcase_add_test(tc, parse_put_missing_or_wrong_records_is_ebadmsg);
	tcase_add_test(tc, parse_put_empty_or_non_string_error_code_is_success);
	tcase_add_test(tc, parse_put_truncates_long_code_and_message);
	suite_add_tcase(s, tc);

	tc = tcase_create("parse_error");
	tcase_add_test(tc, parse_error_dis_shape);
	tcase_add_test(tc, parse_error_gateway_shape);
	tcase_add_test(tc,
	    parse_error_absent_field_is_empty_and_long_is_truncated);
	tcase_add_test(tc, parse_error_non_json_is_ebadmsg_with_empty_outputs);
	suite_add_tcase(s, tc);

	tc = tcase_create("parse_describe");
	tcase_add_test(tc, parse_describe_spec_example);
	tcase_add_test(tc, parse_describe_optional_fields);
	tcase_add_test(tc, parse_describe_bad_input_is_ebadmsg);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(codec_suite());
}
