/*
 * Unit tests for the processing chain (records/chain.c): each stage does
 * its part, in its place.  A line filter skips before anything else (no
 * tokens, no conversion); the rate limit refuses before the converters
 * (a refused line is converted once, when admitted) and is charged only
 * by chain_sent; the converters run on the record as framed; the partition
 * key is made from the converted record, with a record id when the caller
 * gives the file part and the option has one; the codec encodes last.  A
 * stage dropped or moved fails one of these.  And chain_new names the key
 * at fault, as the configuration check reports it.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "records/chain.h"
#include "records/convert.h"
#include "records/partkey.h"
#include "records/reccodec.h"
#include "convert_keys.h"
#include "testutil.h"

#define CAP	(1024 * 1024)

static const char *const csv_kv[] = {
	"dataProcessingOptions=CSVTOJSON",
	"CSVTOJSON.customFieldNames=[\"a\",\"b\"]", NULL
};
static const char *const drop_kv[] = {
	"dataProcessingOptions=LOGTOJSON", "LOGTOJSON.logFormat=SYSLOG",
	"LOGTOJSON.unmatched=DROP", NULL
};
static const char *const none_kv[] = { NULL };

/* The test's clock for the rate limit. */
static uint64_t	 now_ms = 1000;

static uint64_t
clock_now(void)
{
	return now_ms;
}

/* What the id callback was asked, and what it answers. */
static struct {
	int		 asked;
	bool		 answer;
	bool		 fixed;
	uint64_t	 file;
} ids;

static bool
id_file(void *arg, const struct chain_rec *r, uint64_t *file, bool *fixed)
{
	(void)arg;
	ck_assert_ptr_eq(r->ctx, &ids);
	ids.asked++;
	*file = ids.file;
	*fixed = ids.fixed;
	return ids.answer;
}

static struct convert_opts conv;
static uint64_t	 unmatched[CONVERT_NUNMATCHED];

/* Options for a chain of kv's converters, '\n'-delimited. */
static struct chain_opts
opts(const char *const *kv)
{
	struct chain_opts o;

	ck_assert_int_eq(convert_opts_from(&conv, kv), 0);
	memset(&o, 0, sizeof(o));
	memset(unmatched, 0, sizeof(unmatched));
	o.flow = "t";
	o.conv = &conv;
	o.delim = '\n';
	o.partition_key = "FILE_NAME";
	o.unmatched = unmatched;
	o.cbs.id_file = id_file;
	return o;
}

static struct chain *
make(const struct chain_opts *o)
{
	struct chain	*c;
	char		 err[256];

	ck_assert_msg(chain_new(o, &c, NULL, err, sizeof(err)) == 0, "%s",
	    err);
	chain_set_clock(c, clock_now);
	memset(&ids, 0, sizeof(ids));
	return c;
}

static enum chain_verdict
run(struct chain *c, const char *s, struct chain_out *out)
{
	struct chain_rec r = { s, strlen(s), "/var/log/app.log", 42, 7, CAP,
	    &ids };

	memset(out, 0xa5, sizeof(*out));
	return chain_record(c, &r, out);
}

static void
assert_data(const struct chain_out *o, const char *want)
{
	ck_assert_msg(o->len == strlen(want) &&
	    memcmp(o->data, want, o->len) == 0, "got %.*s, want %s",
	    (int)o->len, o->data, want);
}

static void
assert_key(const struct chain_out *o, const char *want)
{
	ck_assert_msg(o->klen == strlen(want) &&
	    memcmp(o->key, want, o->klen) == 0, "key %.*s, want %s",
	    (int)o->klen, o->key, want);
}

/* The key partkey makes for data under option, without an id. */
static char *
key_of(const char *option, const char *data)
{
	struct partkey	*pk = partkey_new(option);
	struct buf	 b;
	char		*s;

	buf_init(&b);
	partkey_make(pk, "/var/log/app.log", data, strlen(data), &b);
	s = xasprintf("%.*s", (int)b.len, b.data != NULL ? b.data : "");
	buf_cleanup(&b);
	partkey_free(pk);
	return s;
}

/* --- the stages ------------------------------------------------------- */

START_TEST(nothing_set_sends_the_record_as_framed)
{
	struct chain_opts o = opts(none_kv);
	struct chain	*c = make(&o);
	struct chain_out out;

	ck_assert_int_eq(run(c, "a,b\n", &out), CHAIN_SEND);
	assert_data(&out, "a,b\n");
	assert_key(&out, "app.log");
	ck_assert(!out.truncated);
	ck_assert(!chain_keeps_delimiter(c));
	ck_assert_uint_eq(chain_plain_cap(c, 1000), 1000);
	ck_assert_int_eq(chain_regex_jit(c), -1);
	ck_assert_ptr_null(chain_deadletter(c));
	chain_free(c);
}
END_TEST

/* The filter sees the record as framed (before the converters: the raw
 * CSV, not its JSON), and skips it before the rate limit and the
 * converters: no tokens, nothing counted unmatched. */
START_TEST(filter_skips_first)
{
	struct chain_opts o = opts(drop_kv);
	struct chain	*c;
	struct chain_out out;

	o.include = "^keep|^Mar";
	o.records_per_s = 1;
	c = make(&o);
	ck_assert_int_eq(run(c, "drop me\n", &out), CHAIN_FILTERED);
	ck_assert_uint_eq(unmatched[CONVERT_DROP], 0);
	ck_assert_int_eq(run(c, "keep, unmatched\n", &out), CHAIN_DROPPED);
	ck_assert_uint_eq(unmatched[CONVERT_DROP], 1);
	/* Its one token spent, a filtered record is still a skip, not a
	 * refusal, and is never converted. */
	chain_sent(c, 1);
	ck_assert_int_eq(run(c, "drop me too\n", &out), CHAIN_FILTERED);
	ck_assert_uint_eq(unmatched[CONVERT_DROP], 1);
	ck_assert_int_eq(run(c, "keep\n", &out), CHAIN_REFUSED);
	chain_free(c);

	o = opts(csv_kv);
	o.include = "^1,2$";	/* the line without its delimiter */
	c = make(&o);
	ck_assert_int_eq(run(c, "1,2\n", &out), CHAIN_SEND);
	assert_data(&out, "{\"a\":\"1\",\"b\":\"2\"}");
	ck_assert_int_eq(run(c, "3,4\n", &out), CHAIN_FILTERED);
	chain_free(c);
}
END_TEST

/* Refused while the bucket is empty, before the converters; charged only
 * by chain_sent; admitted again after the refill. */
START_TEST(rate_refuses_before_the_converters)
{
	struct chain_opts o = opts(drop_kv);
	struct chain	*c;
	struct chain_out out;

	o.records_per_s = 1;
	c = make(&o);
	/* Admitted and dropped, uncharged: the next is admitted too. */
	ck_assert_int_eq(run(c, "junk\n", &out), CHAIN_DROPPED);
	ck_assert_int_eq(run(c, "junk\n", &out), CHAIN_DROPPED);
	ck_assert_uint_eq(unmatched[CONVERT_DROP], 2);
	chain_sent(c, 5);
	ck_assert_int_eq(run(c, "junk\n", &out), CHAIN_REFUSED);
	ck_assert_uint_eq(out.held_ms, now_ms);
	ck_assert_uint_gt(out.wait_ms, 0);
	ck_assert_uint_le(out.wait_ms, 1051);
	ck_assert_uint_eq(unmatched[CONVERT_DROP], 2);	/* not converted */
	now_ms += out.wait_ms;
	ck_assert_int_eq(run(c, "junk\n", &out), CHAIN_DROPPED);
	ck_assert_uint_eq(unmatched[CONVERT_DROP], 3);
	chain_free(c);

	/* No limit: never refused, however much is sent. */
	o = opts(none_kv);
	c = make(&o);
	chain_sent(c, 1 << 30);
	ck_assert_int_eq(run(c, "x\n", &out), CHAIN_SEND);
	chain_free(c);
}
END_TEST

START_TEST(convert_makes_the_bytes_to_send)
{
	struct chain_opts o = opts(csv_kv);
	struct chain	*c = make(&o);
	struct chain_out out;

	ck_assert(chain_keeps_delimiter(c));
	ck_assert_int_eq(run(c, "1,2\n", &out), CHAIN_SEND);
	assert_data(&out, "{\"a\":\"1\",\"b\":\"2\"}");
	ck_assert(!out.truncated);
	chain_free(c);

	o = opts(drop_kv);
	c = make(&o);
	ck_assert_int_eq(run(c, "not syslog\n", &out), CHAIN_DROPPED);
	ck_assert_uint_eq(unmatched[CONVERT_DROP], 1);
	chain_free(c);
}
END_TEST

/* Cut to the plain cap of the record's cap. */
START_TEST(convert_cuts_to_the_cap)
{
	struct chain_opts o = opts(csv_kv);
	struct chain	*c = make(&o);
	struct chain_rec r = { "1,2\n", 4, "/a", 0, 7, 8, NULL };
	struct chain_out out;

	ck_assert_int_eq(chain_record(c, &r, &out), CHAIN_SEND);
	ck_assert(out.truncated);
	ck_assert_uint_le(out.len, 8);
	chain_free(c);
}
END_TEST

/* DETERMINISTIC hashes the record: the converted one, not the framed one
 * nor the encoded one. */
START_TEST(key_is_made_from_the_converted_record)
{
	struct chain_opts o = opts(csv_kv);
	struct chain	*c;
	struct chain_out out;
	char		*want, *raw;

	o.partition_key = "DETERMINISTIC";
	o.codec.encrypt = true;
	o.codec.password = "secret";
	c = make(&o);
	ck_assert_int_eq(run(c, "1,2\n", &out), CHAIN_SEND);
	want = key_of("DETERMINISTIC", "{\"a\":\"1\",\"b\":\"2\"}");
	raw = key_of("DETERMINISTIC", "1,2\n");
	ck_assert_str_ne(want, raw);
	assert_key(&out, want);
	free(want);
	free(raw);
	chain_free(c);
}
END_TEST

/* RANDOM_INT carries an id while ids are on and the caller gives the
 * file part; the callback is asked only then, only for a record that got
 * that far, and once for a run of an origin whose part is fixed. */
START_TEST(key_carries_an_id_when_given)
{
	struct chain_opts o = opts(csv_kv);
	struct chain	*c;
	struct chain_out out;
	struct partkey	*pk = partkey_new("RANDOM_INT");
	struct buf	 b;
	const char	*json = "{\"a\":\"1\",\"b\":\"2\"}";

	o.partition_key = "RANDOM_INT";
	o.include = "^1";
	c = make(&o);
	ck_assert(chain_carries_id(c));
	ids.answer = true;
	ids.file = 0x123456789abcULL;
	buf_init(&b);
	partkey_make_id(pk, "/var/log/app.log", json, strlen(json), ids.file,
	    42, &b);
	/* Off (no agent key): never asked, no id. */
	ck_assert_int_eq(run(c, "1,2\n", &out), CHAIN_SEND);
	ck_assert_int_eq(ids.asked, 0);
	ck_assert(out.klen != b.len || memcmp(out.key, b.data, b.len) != 0);
	chain_set_ids(c, true);
	ck_assert_int_eq(run(c, "3,4\n", &out), CHAIN_FILTERED);
	ck_assert_int_eq(ids.asked, 0);
	ck_assert_int_eq(run(c, "1,2\n", &out), CHAIN_SEND);
	ck_assert_int_eq(ids.asked, 1);
	ck_assert_uint_eq(out.klen, b.len);
	ck_assert(memcmp(out.key, b.data, b.len) == 0);
	/* No answer: a random key, not the id. */
	ids.answer = false;
	ck_assert_int_eq(run(c, "1,2\n", &out), CHAIN_SEND);
	ck_assert_int_eq(ids.asked, 2);
	ck_assert(out.klen != b.len || memcmp(out.key, b.data, b.len) != 0);
	/* Fixed for its origin: asked once for the run. */
	ids.answer = ids.fixed = true;
	ck_assert_int_eq(run(c, "1,2\n", &out), CHAIN_SEND);
	ck_assert_int_eq(run(c, "1,2\n", &out), CHAIN_SEND);
	ck_assert_int_eq(ids.asked, 3);
	ck_assert_uint_eq(out.klen, b.len);
	ck_assert(memcmp(out.key, b.data, b.len) == 0);
	chain_set_ids(c, false);
	ck_assert_int_eq(run(c, "1,2\n", &out), CHAIN_SEND);
	ck_assert(out.klen != b.len || memcmp(out.key, b.data, b.len) != 0);
	buf_cleanup(&b);
	partkey_free(pk);
	chain_free(c);

	/* An option without RANDOM_INT never asks. */
	o = opts(none_kv);
	c = make(&o);
	ck_assert(!chain_carries_id(c));
	chain_set_ids(c, true);
	ids.answer = true;
	ck_assert_int_eq(run(c, "x\n", &out), CHAIN_SEND);
	ck_assert_int_eq(ids.asked, 0);
	assert_key(&out, "app.log");
	chain_free(c);
	ck_assert(!chain_carries_id(NULL));
}
END_TEST

/* The codec encodes the converted record, last: decoding gives the JSON
 * back; the plain cap leaves room for it. */
START_TEST(codec_encodes_last)
{
	struct chain_opts o = opts(csv_kv);
	struct chain	*c;
	struct chain_out out;
	struct reccodec	*dec;
	struct buf	 plain;
	char		 why[256];

	o.codec.encrypt = true;
	o.codec.password = "secret";
	o.codec.compress = reccodec_snappy_ok(why, sizeof(why));
	c = make(&o);
	ck_assert_uint_lt(chain_plain_cap(c, 1000), 1000);
	ck_assert_int_eq(run(c, "1,2\n", &out), CHAIN_SEND);
	dec = reccodec_new(&o.codec);
	buf_init(&plain);
	ck_assert_int_eq(reccodec_decode(dec, out.data, out.len, CAP, &plain),
	    0);
	ck_assert_uint_eq(plain.len, strlen("{\"a\":\"1\",\"b\":\"2\"}"));
	ck_assert(memcmp(plain.data, "{\"a\":\"1\",\"b\":\"2\"}",
	    plain.len) == 0);
	buf_cleanup(&plain);
	reccodec_free(dec);
	chain_free(c);
}
END_TEST

/* --- compiling ---------------------------------------------------------- */

START_TEST(errors_name_the_key)
{
	static const char *const bad_kv[] = {
		"dataProcessingOptions=CSVTOJSON,FOO", NULL
	};
	struct chain_opts o = opts(bad_kv);
	struct chain	*c = (struct chain *)&o;
	const char	*key = NULL;
	char		 err[256];

	ck_assert_int_eq(chain_new(&o, &c, &key, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(c);
	ck_assert_str_eq(key, "dataProcessingOptions");
	o = opts(csv_kv);
	o.exclude = "(unclosed";
	key = NULL;
	ck_assert_int_eq(chain_new(&o, &c, &key, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(c);
	ck_assert_str_eq(key, "lineExcludePattern");
	ck_assert_msg(strstr(err, "(unclosed") != NULL, "%s", err);
}
END_TEST

/* The dead-letter file is the chain's, and the sink borrows it. */
START_TEST(owns_the_dead_letter_file)
{
	struct chain_opts o = opts(none_kv);
	struct chain	*c;

	o.dead_letter_path = "/nonexistent/dead.jsonl";
	c = make(&o);
	ck_assert_ptr_nonnull(chain_deadletter(c));
	chain_free(c);
	chain_free(NULL);
}
END_TEST

static Suite *
chain_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("chain");
	tc = tcase_create("core");
	tcase_add_test(tc, nothing_set_sends_the_record_as_framed);
	tcase_add_test(tc, filter_skips_first);
	tcase_add_test(tc, rate_refuses_before_the_converters);
	tcase_add_test(tc, convert_makes_the_bytes_to_send);
	tcase_add_test(tc, convert_cuts_to_the_cap);
	tcase_add_test(tc, key_is_made_from_the_converted_record);
	tcase_add_test(tc, key_carries_an_id_when_given);
	tcase_add_test(tc, codec_encodes_last);
	tcase_add_test(tc, errors_name_the_key);
	tcase_add_test(tc, owns_the_dead_letter_file);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(chain_suite());
}
