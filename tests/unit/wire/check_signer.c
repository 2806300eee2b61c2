/*
 * Unit tests for the request signer: every vector of spec/dis-api.md 6.5
 * (V1, the section 2 PutRecords example, V2, V3, V4 and their negative
 * variants), canonicalisation rules (URI, query, headers), argument
 * validation, the X-Sdk-Date formatter and the V11 derived-key dialect.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "base/util.h"
#include "wire/signer.h"
#include "testutil.h"

#define PID		"0123456789abcdef0123456789abcdef"
#define RECORDS_PATH	"/v2/" PID "/records/"
#define EMPTY_SHA256 \
	"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

static const struct sign_header dis_headers[] = {
	{ "Content-Type", "application/json; charset=utf-8" },
	{ "Host", "dis.cn-north-1.myhuaweicloud.com" },
	{ "X-Project-Id", PID },
	{ "X-Sdk-Date", "20240101T000000Z" },
};

static const struct sign_key my_key = {
	"MYAK", "MYSK", "cn-north-1", "dis"
};

static const char v1_body[] = "{\"stream_name\": \"mystream\", \"records\": "
    "[{\"data\": \"aGVsbG8=\", \"partition_key\": \"1\"}]}";

/* The exact one-line body of the spec section 2 example (265 bytes). */
static const char put_body[] = "{\"stream_name\":\"app-logs\",\"records\":["
    "{\"data\":\"MjAyNC0wMS0wMSAwMDowMDowMCBJTkZPIHN0YXJ0\","
    "\"partition_key\":\"483021\"},"
    "{\"data\":\"MjAyNC0wMS0wMSAwMDowMDowMSBXQVJOIHNsb3c=\","
    "\"partition_key\":\"77\"},"
    "{\"data\":\"MjAyNC0wMS0wMSAwMDowMDowMiBJTkZPIGRvbmU=\","
    "\"partition_key\":\"913456\"}]}";

static const struct sign_key gov3_key = {
	"AccessKey", "SecretKey", NULL, NULL
};

static const struct sign_header gov3_headers[] = {
	{ "X-Sdk-Date", "20060102T150405Z" },
};

static struct sign_request
dis_request(const char *body)
{
	struct sign_request	 r;

	memset(&r, 0, sizeof(r));
	r.method = "POST";
	r.path = RECORDS_PATH;
	r.headers = dis_headers;
	r.nheaders = ARRAY_SIZE(dis_headers);
	r.body = body;
	r.bodylen = strlen(body);
	return r;
}

static struct sign_request
gov3_request(const char *method, const char *path, const char *query,
    const char *body)
{
	struct sign_request	 r;

	memset(&r, 0, sizeof(r));
	r.method = method;
	r.path = path;
	r.query = query;
	r.headers = gov3_headers;
	r.nheaders = ARRAY_SIZE(gov3_headers);
	r.body = body;
	r.bodylen = body ? strlen(body) : 0;
	return r;
}

/* hex(SHA256(canonical request)) of r. */
static void
canonical_hash(const struct sign_request *r, char out[65])
{
	struct buf	 b;

	buf_init(&b);
	signer_canonical(r, &b);
	signer_sha256_hex(b.data, b.len, out);
	buf_cleanup(&b);
}

/* The Authorization value for r; the caller frees it. */
static char *
authorization(enum sign_dialect d, const struct sign_key *k,
    const char *date, const struct sign_request *r)
{
	struct buf	 b;

	buf_init(&b);
	ck_assert_int_eq(signer_authorization(d, k, date, r, &b), 0);
	ck_assert_ptr_nonnull(b.data);
	return b.data;
}

static char *
canonical_text(const struct sign_request *r)
{
	struct buf	 b;

	buf_init(&b);
	signer_canonical(r, &b);
	return b.data;
}

START_TEST(sha256_hex_of_empty_and_known_input)
{
	char	 h[65];

	signer_sha256_hex(NULL, 0, h);
	ck_assert_str_eq(h, EMPTY_SHA256);
	signer_sha256_hex(v1_body, strlen(v1_body), h);
	ck_assert_str_eq(h, "013f80a1e3e303acc34a28c3bdebbbe3"
	    "e98143470a2416a0c7478072ce6e9be1");
}
END_TEST

START_TEST(v1_canonical_request_matches_spec_text)
{
	struct sign_request	 r = dis_request(v1_body);
	char			*c, h[65];

	c = canonical_text(&r);
	ck_assert_str_eq(c,
	    "POST\n"
	    RECORDS_PATH "\n"
	    "\n"
	    "content-type:application/json; charset=utf-8\n"
	    "host:dis.cn-north-1.myhuaweicloud.com\n"
	    "x-project-id:" PID "\n"
	    "x-sdk-date:20240101T000000Z\n"
	    "\n"
	    "content-type;host;x-project-id;x-sdk-date\n"
	    "013f80a1e3e303acc34a28c3bdebbbe3e98143470a2416a0c7478072ce6e9be1");
	free(c);
	canonical_hash(&r, h);
	ck_assert_str_eq(h, "a425db3a0a138e14ca54b2b65e3a9ca4"
	    "4d553958d31e62091d4d44ee0e898dc3");
}
END_TEST

START_TEST(v1_dis_authorization_matches_spec)
{
	struct sign_request	 r = dis_request(v1_body);
	char			*a;

	a = authorization(SIGN_DIS, &my_key, "20240101T000000Z", &r);
	ck_assert_str_eq(a, "SDK-HMAC-SHA256 Credential=MYAK/20240101/"
	    "cn-north-1/dis/sdk_request, SignedHeaders=content-type;host;"
	    "x-project-id;x-sdk-date, Signature=30ff4359061bc57f8995f414d31c"
	    "962db66dd650d6bb51f9195197f368e77d9f");
	free(a);
}
END_TEST

START_TEST(precomputed_body_hash_gives_same_signature)
{
	struct sign_request	 r = dis_request(v1_body);
	char			*a, *b, h[65];

	a = authorization(SIGN_DIS, &my_key, "20240101T000000Z", &r);
	signer_sha256_hex(v1_body, strlen(v1_body), h);
	r.body = NULL;
	r.bodylen = 0;
	r.body_sha256 = h;
	b = authorization(SIGN_DIS, &my_key, "20240101T000000Z", &r);
	ck_assert_str_eq(a, b);
	free(a);
	free(b);
}
END_TEST

START_TEST(put_records_example_signature_matches_spec)
{
	struct sign_request	 r = dis_request(put_body);
	char			*a;

	ck_assert_uint_eq(strlen(put_body), 265);
	a = authorization(SIGN_DIS, &my_key, "20240101T000000Z", &r);
	ck_assert_str_eq(a, "SDK-HMAC-SHA256 Credential=MYAK/20240101/"
	    "cn-north-1/dis/sdk_request, SignedHeaders=content-type;host;"
	    "x-project-id;x-sdk-date, Signature=a469974d6ea73483b090767fd73c"
	    "885500c44ec67117895f8fd147d703609345");
	free(a);
}
END_TEST

START_TEST(v2_apig_example_matches_published_hash_and_signature)
{
	static const struct sign_header hs[] = {
		{ "Content-Type", "application/json" },
		{ "Host", "service.region.example.com" },
		{ "X-Sdk-Date", "20191115T033655Z" },
	};
	static const struct sign_key k = {
		"QTWAOYTTINDUT2QVKYUC",
		"MFyfvK41ba2giqM7Uio6PznpdUKGpownRZlmVmHc", NULL, NULL
	};
	struct sign_request	 r;
	char			*a, h[65];

	memset(&r, 0, sizeof(r));
	r.method = "GET";
	r.path = "/v1/77b6a44cba5143ab91d13ab9a8ff44fd/vpcs";
	/* Deliberately out of order: the canonical form sorts. */
	r.query = "marker=13551d6b-755d-4757-b956-536f674975c0&limit=2";
	r.headers = hs;
	r.nheaders = ARRAY_SIZE(hs);
	canonical_hash(&r, h);
	ck_assert_str_eq(h, "b25362e603ee30f4f25e7858e8a7160f"
	    "d36e803bb2dfe206278659d71a9bcd7a");
	a = authorization(SIGN_APIG, &k, "20191115T033655Z", &r);
	ck_assert_str_eq(a, "SDK-HMAC-SHA256 Access=QTWAOYTTINDUT2QVKYUC, "
	    "SignedHeaders=content-type;host;x-sdk-date, Signature="
	    "7be6668032f70418fcc22abc52071e57aff61b84a1d2381bb430d6870f4f6ebe");
	free(a);
}
END_TEST

START_TEST(v3_gov3_get_matches_hash_and_signature)
{
	struct sign_request	 r;
	char			*a, *c, h[65];

	r = gov3_request("GET", "/path", "limit=1", NULL);
	c = canonical_text(&r);
	ck_assert_str_eq(c, "GET\n/path/\nlimit=1\n"
	    "x-sdk-date:20060102T150405Z\n\nx-sdk-date\n" EMPTY_SHA256);
	free(c);
	canonical_hash(&r, h);
	ck_assert_str_eq(h, "85c3b7730f308aee452b16138a42a914"
	    "397e43a8f0d732dfa521c0ef2afa98a4");
	a = authorization(SIGN_APIG, &gov3_key, "20060102T150405Z", &r);
	ck_assert_str_eq(a, "SDK-HMAC-SHA256 Access=AccessKey, "
	    "SignedHeaders=x-sdk-date, Signature=5a2ce64c865e0e6046321c6f3d5a"
	    "77ba8413eeaf355c3166c03d58d02ac79624");
	free(a);
}
END_TEST

/*
 * The negative V3 variant: a canonical string carrying "/path" instead of
 * "/path/" hashes to the published negative value, and our signer never
 * produces it because the URI always gets its trailing slash.
 */
START_TEST(v3_uri_without_slash_is_the_negative_vector)
{
	struct sign_request	 r;
	char			*a, *c, h[65];
	static const char	 bad[] = "GET\n/path\nlimit=1\n"
	    "x-sdk-date:20060102T150405Z\n\nx-sdk-date\n" EMPTY_SHA256;

	signer_sha256_hex(bad, strlen(bad), h);
	ck_assert_str_eq(h, "d1bfa182b237a4109589d47b65d30688"
	    "79becab0c6419a5cce0685ff8cf21b08");
	r = gov3_request("GET", "/path", "limit=1", NULL);
	c = canonical_text(&r);
	ck_assert_str_ne(c, bad);
	free(c);
	canonical_hash(&r, h);
	ck_assert_str_ne(h, "d1bfa182b237a4109589d47b65d30688"
	    "79becab0c6419a5cce0685ff8cf21b08");
	a = authorization(SIGN_APIG, &gov3_key, "20060102T150405Z", &r);
	ck_assert_ptr_null(strstr(a, "b7934608bd995c6bc982344d1216a278"
	    "13fc0d01b5e4eea2602d35b2462c679a"));
	free(a);
}
END_TEST

START_TEST(v4_gov3_post_matches_body_hash_and_signature)
{
	static const char	 body[] = "{\"Name\":\"test\",\"Id\":1}\n";
	struct sign_request	 r;
	char			*a, h[65];

	ck_assert_uint_eq(strlen(body), 23);
	signer_sha256_hex(body, strlen(body), h);
	ck_assert_str_eq(h, "a29d7b4c5efd1a22011d69fd7b7aee76"
	    "fe51e4083c609244228de258afd61289");
	r = gov3_request("POST", "/path", "key=value", body);
	canonical_hash(&r, h);
	ck_assert_str_eq(h, "13f75ff5f5216199f986c7e7f2f77834"
	    "d5e160ad9e46f37319816dc72ba7eeab");
	a = authorization(SIGN_APIG, &gov3_key, "20060102T150405Z", &r);
	ck_assert_str_eq(a, "SDK-HMAC-SHA256 Access=AccessKey, "
	    "SignedHeaders=x-sdk-date, Signature=cecc2af119b18ab70b4d094c0750"
	    "f3b42c02f254903179a0fc2cc72fc9db4f59");
	free(a);
}
END_TEST

START_TEST(v4_body_without_newline_gives_the_negative_vector)
{
	static const char	 body[] = "{\"Name\":\"test\",\"Id\":1}";
	struct sign_request	 r;
	char			*a, h[65];

	signer_sha256_hex(body, strlen(body), h);
	ck_assert_str_eq(h, "4beb4e25467baf0f987a4dbb1c8fd2d9"
	    "f01c9a79992f8a4ac387eceb0d934dbc");
	r = gov3_request("POST", "/path", "key=value", body);
	canonical_hash(&r, h);
	ck_assert_str_ne(h, "13f75ff5f5216199f986c7e7f2f77834"
	    "d5e160ad9e46f37319816dc72ba7eeab");
	a = authorization(SIGN_APIG, &gov3_key, "20060102T150405Z", &r);
	ck_assert_str_eq(a, "SDK-HMAC-SHA256 Access=AccessKey, "
	    "SignedHeaders=x-sdk-date, Signature=83599e5230b5b31fb58837c5760b"
	    "4c2d407542df1f9493834ead538696e17a35");
	ck_assert_ptr_null(strstr(a, "cecc2af119b18ab70b4d094c0750"
	    "f3b42c02f254903179a0fc2cc72fc9db4f59"));
	free(a);
}
END_TEST

START_TEST(uri_segments_are_percent_encoded_and_slash_terminated)
{
	struct sign_request	 r;
	char			*c;

	r = gov3_request("GET", "/a b/c~d-e_f.g/h*i%/\xc3\xbc", NULL, NULL);
	c = canonical_text(&r);
	ck_assert_ptr_eq(strstr(c, "GET\n/a%20b/c~d-e_f.g/h%2Ai%25/%C3%BC/\n"),
	    c);
	free(c);
	r.path = "/";
	c = canonical_text(&r);
	ck_assert_ptr_eq(strstr(c, "GET\n/\n\n"), c);
	free(c);
	r.path = "";
	c = canonical_text(&r);
	ck_assert_ptr_eq(strstr(c, "GET\n/\n\n"), c);
	free(c);
}
END_TEST

START_TEST(query_is_encoded_and_sorted_by_name_then_value)
{
	struct sign_request	 r;
	char			*c;

	r = gov3_request("GET", "/p/", "b=2&a=z&a=y&sp ace=x y*&flag&&c=",
	    NULL);
	c = canonical_text(&r);
	ck_assert_ptr_eq(strstr(c,
	    "GET\n/p/\na=y&a=z&b=2&c=&flag=&sp%20ace=x%20y%2A\n"), c);
	free(c);
}
END_TEST

START_TEST(empty_query_gives_empty_line)
{
	struct sign_request	 r;
	char			*c, *d;

	r = gov3_request("GET", "/p", NULL, NULL);
	c = canonical_text(&r);
	r.query = "";
	d = canonical_text(&r);
	ck_assert_str_eq(c, d);
	ck_assert_ptr_eq(strstr(c, "GET\n/p/\n\nx-sdk-date:"), c);
	free(c);
	free(d);
}
END_TEST

START_TEST(headers_are_lowercased_trimmed_and_sorted)
{
	static const struct sign_header hs[] = {
		{ "X-Sdk-Date", "  20240101T000000Z\t" },
		{ "HOST", "\tExample.COM " },
		{ "Content-Type", "application/json;  charset=utf-8" },
		{ "X-Empty", "   " },
	};
	struct sign_request	 r;
	char			*c;

	memset(&r, 0, sizeof(r));
	r.method = "PUT";
	r.path = "/x/";
	r.headers = hs;
	r.nheaders = ARRAY_SIZE(hs);
	c = canonical_text(&r);
	ck_assert_str_eq(c, "PUT\n/x/\n\n"
	    "content-type:application/json;  charset=utf-8\n"
	    "host:Example.COM\n"
	    "x-empty:\n"
	    "x-sdk-date:20240101T000000Z\n"
	    "\n"
	    "content-type;host;x-empty;x-sdk-date\n" EMPTY_SHA256);
	free(c);
}
END_TEST

START_TEST(header_order_and_case_do_not_change_signature)
{
	static const struct sign_header hs[] = {
		{ "x-sdk-date", "20240101T000000Z" },
		{ "x-project-id", PID },
		{ "HOST", " dis.cn-north-1.myhuaweicloud.com " },
		{ "content-TYPE", "application/json; charset=utf-8" },
	};
	struct sign_request	 r = dis_request(v1_body);
	char			*a, *b;

	a = authorization(SIGN_DIS, &my_key, "20240101T000000Z", &r);
	r.headers = hs;
	b = authorization(SIGN_DIS, &my_key, "20240101T000000Z", &r);
	ck_assert_str_eq(a, b);
	free(a);
	free(b);
}
END_TEST

START_TEST(authorization_appends_to_existing_buffer)
{
	struct sign_request	 r = dis_request(v1_body);
	struct buf		 b;

	buf_init(&b);
	buf_addstr(&b, "Authorization: ");
	ck_assert_int_eq(signer_authorization(SIGN_DIS, &my_key,
	    "20240101T000000Z", &r, &b), 0);
	ck_assert_ptr_eq(strstr(b.data, "Authorization: SDK-HMAC-SHA256 "
	    "Credential=MYAK/"), b.data);
	ck_assert_uint_eq(b.len, strlen(b.data));
	buf_cleanup(&b);
}
END_TEST

START_TEST(malformed_date_is_einval)
{
	static const char *const bad[] = {
		"", "20240101", "20240101T000000", "20240101T000000ZZ",
		"20240101 000000Z", "20240101T000000z", "2024010AT000000Z",
		"20241301T000000Z", "20240100T000000Z", "20240101T240000Z",
		"20240101T006000Z", "-2024011T000000Z",
	};
	struct sign_request	 r = dis_request(v1_body);
	struct buf		 b;
	size_t			 i;

	buf_init(&b);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ck_assert_msg(signer_authorization(SIGN_DIS, &my_key, bad[i],
		    &r, &b) == -EINVAL, "date \"%s\" accepted", bad[i]);
		ck_assert_msg(signer_authorization(SIGN_APIG, &my_key, bad[i],
		    &r, &b) == -EINVAL, "date \"%s\" accepted", bad[i]);
	}
	ck_assert_int_eq(signer_authorization(SIGN_DIS, &my_key, NULL, &r,
	    &b), -EINVAL);
	ck_assert_uint_eq(b.len, 0);
	buf_cleanup(&b);
}
END_TEST

START_TEST(missing_required_field_is_einval)
{
	struct sign_request	 r = dis_request(v1_body);
	struct sign_key		 k = my_key;
	struct buf		 b;

	buf_init(&b);
	k.sk = NULL;
	ck_assert_int_eq(signer_authorization(SIGN_DIS, &k,
	    "20240101T000000Z", &r, &b), -EINVAL);
	k = my_key;
	k.ak = NULL;
	ck_assert_int_eq(signer_authorization(SIGN_APIG, &k,
	    "20240101T000000Z", &r, &b), -EINVAL);
	k = my_key;
	k.region = NULL;
	ck_assert_int_eq(signer_authorization(SIGN_DIS, &k,
	    "20240101T000000Z", &r, &b), -EINVAL);
	ck_assert_int_eq(signer_authorization(SIGN_V11, &k,
	    "20240101T000000Z", &r, &b), -EINVAL);
	k = my_key;
	r.method = NULL;
	ck_assert_int_eq(signer_authorization(SIGN_DIS, &k,
	    "20240101T000000Z", &r, &b), -EINVAL);
	r = dis_request(v1_body);
	r.path = NULL;
	ck_assert_int_eq(signer_authorization(SIGN_DIS, &k,
	    "20240101T000000Z", &r, &b), -EINVAL);
	ck_assert_uint_eq(b.len, 0);
	/* APIG needs neither region nor service. */
	r = dis_request(v1_body);
	k.region = NULL;
	k.service = NULL;
	ck_assert_int_eq(signer_authorization(SIGN_APIG, &k,
	    "20240101T000000Z", &r, &b), 0);
	buf_cleanup(&b);
}
END_TEST

START_TEST(sdk_date_formats_utc)
{
	char	 d[17];

	signer_date(0, d);
	ck_assert_str_eq(d, "19700101T000000Z");
	signer_date(1704067200LL, d);
	ck_assert_str_eq(d, "20240101T000000Z");
	signer_date(1136214245LL, d);		/* GOV3 vector date */
	ck_assert_str_eq(d, "20060102T150405Z");
	signer_date(1573789015LL, d);		/* V2 date */
	ck_assert_str_eq(d, "20191115T033655Z");
	signer_date(951782400LL, d);		/* leap day 2000 */
	ck_assert_str_eq(d, "20000229T000000Z");
	signer_date(4107542399LL, d);
	ck_assert_str_eq(d, "21000228T235959Z");
	signer_date(253402300799LL, d);
	ck_assert_str_eq(d, "99991231T235959Z");
	signer_date(253402300800LL * 4, d);	/* clamped */
	ck_assert_str_eq(d, "99991231T235959Z");
	signer_date(-5, d);			/* clamped */
	ck_assert_str_eq(d, "19700101T000000Z");
}
END_TEST

/*
 * V11 vector for the V1 inputs, derived offline with Python's standard
 * library, independent of this code:
 *
 * python3 -c 'import hmac,hashlib as h
 * H=lambda k,m:hmac.new(k,m,h.sha256).digest()
 * s=H(H(b"MYAK",b"MYSK"),b"20240101/cn-north-1/dis\x01").hex()
 * c=open("v1.txt","rb").read()
 * t=(b"V11-HMAC-SHA256\n20240101T000000Z\n20240101/cn-north-1/dis/"
 *    b"sdk_request\n"+h.sha256(c).hexdigest().encode())
 * k=("SDK"+s).encode()
 * for d in [b"20240101",b"cn-north-1",b"dis",b"sdk_request"]: k=H(k,d)
 * print(s, hmac.new(k,t,h.sha256).hexdigest())'
 *
 * where v1.txt holds the V1 canonical text of spec 6.5 exactly as printed
 * (no trailing newline; its SHA-256 is the published a425db3a...)
 * -> secret 0d7a96e9c20dfea58f6af32838a7c62ce47f2847345f0dbe8826d2fbf5dcf99a
 *    signature ab8bad35a22740ffc2b0dfcd4a94dd0d67a47e733172e114a055e1cced491607
 */
START_TEST(v11_matches_python_derivation_and_differs_from_dis)
{
	struct sign_request	 r = dis_request(v1_body);
	char			*a, *d;

	a = authorization(SIGN_V11, &my_key, "20240101T000000Z", &r);
	ck_assert_str_eq(a, "V11-HMAC-SHA256 Credential=MYAK/20240101/"
	    "cn-north-1/dis/sdk_request, SignedHeaders=content-type;host;"
	    "x-project-id;x-sdk-date, Signature=ab8bad35a22740ffc2b0dfcd4a94"
	    "dd0d67a47e733172e114a055e1cced491607");
	d = authorization(SIGN_DIS, &my_key, "20240101T000000Z", &r);
	ck_assert_str_ne(strstr(a, "Signature="), strstr(d, "Signature="));
	free(a);
	free(d);
}
END_TEST

START_TEST(v11_secret_depends_on_day)
{
	static const struct sign_header hs[] = {
		{ "X-Sdk-Date", "20240102T000000Z" },
	};
	struct sign_request	 r = dis_request(v1_body);
	char			*a, *b;

	r.headers = hs;
	r.nheaders = 1;
	a = authorization(SIGN_V11, &my_key, "20240102T000000Z", &r);
	b = authorization(SIGN_V11, &my_key, "20240102T000001Z", &r);
	ck_assert_ptr_nonnull(strstr(a, "Credential=MYAK/20240102/"));
	ck_assert_str_ne(a, b);
	free(a);
	free(b);
}
END_TEST

/*
 * The derived signing key is kept between requests: a change of secret,
 * day, region or dialect must never reuse it, and going back must give
 * the first signature again.
 */
START_TEST(kept_signing_key_follows_secret_day_and_region)
{
	static const char *const want = "Signature=30ff4359061bc57f8995f414d31c"
	    "962db66dd650d6bb51f9195197f368e77d9f";
	struct sign_request	 r = dis_request(v1_body);
	struct sign_key		 other = my_key, west = my_key;
	char			*first, *a, *b;

	other.sk = "MYSK2";
	west.region = "cn-west-1";
	/* Computed first, with nothing kept yet. */
	first = authorization(SIGN_DIS, &other, "20240101T000000Z", &r);
	a = authorization(SIGN_DIS, &my_key, "20240101T000000Z", &r);
	ck_assert_str_eq(strstr(a, "Signature="), want);
	free(a);
	a = authorization(SIGN_DIS, &other, "20240101T000000Z", &r);
	ck_assert_str_eq(a, first);
	free(a);
	a = authorization(SIGN_DIS, &my_key, "20240102T000000Z", &r);
	ck_assert_str_ne(strstr(a, "Signature="), want);
	b = authorization(SIGN_DIS, &west, "20240101T000000Z", &r);
	ck_assert_str_ne(strstr(b, "Signature="), want);
	free(a);
	free(b);
	a = authorization(SIGN_V11, &my_key, "20240101T000000Z", &r);
	ck_assert_str_eq(strstr(a, "Signature="), "Signature=ab8bad35a22740ff"
	    "c2b0dfcd4a94dd0d67a47e733172e114a055e1cced491607");
	free(a);
	a = authorization(SIGN_DIS, &my_key, "20240101T000000Z", &r);
	ck_assert_str_eq(strstr(a, "Signature="), want);
	free(a);
	free(first);
}
END_TEST

static Suite *
signer_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("signer");
	tc = tcase_create("vectors");
	tcase_add_test(tc, sha256_hex_of_empty_and_known_input);
	tcase_add_test(tc, v1_canonical_request_matches_spec_text);
	tcase_add_test(tc, v1_dis_authorization_matches_spec);
	tcase_add_test(tc, kept_signing_key_follows_secret_day_and_region);
	tcase_add_test(tc, precomputed_body_hash_gives_same_signature);
	tcase_add_test(tc, put_records_example_signature_matches_spec);
	tcase_add_test(tc, v2_apig_example_matches_published_hash_and_signature);
	tcase_add_test(tc, v3_gov3_get_matches_hash_and_signature);
	tcase_add_test(tc, v3_uri_without_slash_is_the_negative_vector);
	tcase_add_test(tc, v4_gov3_post_matches_body_hash_and_signature);
	tcase_add_test(tc, v4_body_without_newline_gives_the_negative_vector);
	tcase_add_test(tc, v11_matches_python_derivation_and_differs_from_dis);
	tcase_add_test(tc, v11_secret_depends_on_day);
	suite_add_tcase(s, tc);

	tc = tcase_create("canonical");
	tcase_add_test(tc, uri_segments_are_percent_encoded_and_slash_terminated);
	tcase_add_test(tc, query_is_encoded_and_sorted_by_name_then_value);
	tcase_add_test(tc, empty_query_gives_empty_line);
	tcase_add_test(tc, headers_are_lowercased_trimmed_and_sorted);
	tcase_add_test(tc, header_order_and_case_do_not_change_signature);
	suite_add_tcase(s, tc);

	tc = tcase_create("api");
	tcase_add_test(tc, authorization_appends_to_existing_buffer);
	tcase_add_test(tc, malformed_date_is_einval);
	tcase_add_test(tc, missing_required_field_is_einval);
	tcase_add_test(tc, sdk_date_formats_utc);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(signer_suite());
}
