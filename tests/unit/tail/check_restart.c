/*
 * Unit tests of what a restart uses not to send anything twice: SipHash
 * (its published test vector), the record ids in partition keys (encode,
 * decode, the file part, how they spread over partitions as DIS hashes
 * keys), the watermark's done ranges and acknowledged spans, the skip
 * plan, and the sequence-number floors with their pins.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "base/hash.h"
#include "base/util.h"
#include "tail/skipplan.h"
#include "tail/watermark.h"
#include "records/keyid.h"
#include "records/partkey.h"
#include "sink/seqmark.h"
#include "state/registry.h"
#include "wire/codec.h"
#include "wire/pbuf.h"
#include "testutil.h"

/* --- SipHash and the ids ------------------------------------------------ */

/* The paper's vector: key 00..0f, message 00..0e (15 bytes). */
START_TEST(siphash_matches_the_paper)
{
	struct hash_key	 k = { 0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL };
	unsigned char	 m[15];
	int		 i;

	for (i = 0; i < 15; i++)
		m[i] = (unsigned char)i;
	ck_assert_uint_eq(hash_sip(&k, m, sizeof(m)), 0xa129ca6149be45e5ULL);
}
END_TEST

START_TEST(keyid_decodes_what_it_encodes)
{
	uint64_t	 files[] = { 0, 1, KEYID_FILE_MASK, 0x123456789aULL };
	uint64_t	 offs[] = { 0, 1, 0xffffffffULL, 0x100000000ULL + 7,
	    123456789 };
	uint64_t	 f;
	uint32_t	 o;
	char		 id[KEYID_LEN];
	size_t		 i, j, k;

	for (i = 0; i < ARRAY_SIZE(files); i++)
		for (j = 0; j < ARRAY_SIZE(offs); j++) {
			keyid_encode(files[i], offs[j], id);
			for (k = 0; k < KEYID_LEN; k++)
				ck_assert(strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "abcdefghijklmnopqrstuvwxyz0123456789-_",
				    id[k]) != NULL);
			ck_assert(keyid_decode(id, KEYID_LEN, &f, &o));
			ck_assert_uint_eq(f, files[i]);
			ck_assert_uint_eq(o, (uint32_t)offs[j]);
		}
}
END_TEST

START_TEST(keyid_rejects_what_is_not_an_id)
{
	uint64_t	 f;
	uint32_t	 o;

	ck_assert(!keyid_decode("483021", 6, &f, &o));
	ck_assert(!keyid_decode("AAAAAAAAAAA", 11, &f, &o));
	ck_assert(!keyid_decode("AAAAAAAAAAAAA", 13, &f, &o));
	ck_assert(!keyid_decode("AAAAAA+AAAAA", 12, &f, &o));
	ck_assert(!keyid_find("app.log,483021", 14, &f, &o));
	ck_assert(!keyid_find("", 0, &f, &o));
}
END_TEST

/* Offsets 4 GiB apart have the same id; the offset is recovered from the
 * committed offset the reader knows (the window is far smaller). */
START_TEST(keyid_offset_is_found_after_the_base)
{
	ck_assert_uint_eq(keyid_offset(100, 0), 100);
	ck_assert_uint_eq(keyid_offset(100, 100), 100);
	ck_assert_uint_eq(keyid_offset(5, 0x100000000ULL + 3),
	    0x100000000ULL + 5);
	ck_assert_uint_eq(keyid_offset(2, 0x1fffffff0ULL),
	    0x200000002ULL);
}
END_TEST

/* The file part tells agents and files apart, and the fingerprint only
 * once it is whole. */
START_TEST(keyid_file_depends_on_agent_file_and_full_head)
{
	struct hash_key	 a, b;
	uint64_t	 x;

	keyid_agent("0123", "host", "/var/lib/disagent/state.json", &a);
	keyid_agent("0123", "host", "/srv/other/state.json", &b);
	ck_assert(a.k0 != b.k0 || a.k1 != b.k1);
	x = keyid_file(&a, "app", 2049, 77, true, 0xabcd, 512);
	ck_assert_uint_le(x, KEYID_FILE_MASK);
	ck_assert_uint_eq(x, keyid_file(&a, "app", 2049, 77, true, 0xabcd,
	    512));
	ck_assert_uint_ne(x, keyid_file(&b, "app", 2049, 77, true, 0xabcd,
	    512));
	ck_assert_uint_ne(x, keyid_file(&a, "web", 2049, 77, true, 0xabcd,
	    512));
	ck_assert_uint_ne(x, keyid_file(&a, "app", 2049, 78, true, 0xabcd,
	    512));
	ck_assert_uint_ne(x, keyid_file(&a, "app", 2049, 77, true, 0xabce,
	    512));
	/* A short head still grows: it does not count. */
	ck_assert_uint_eq(keyid_file(&a, "app", 2049, 77, false, 1, 10),
	    keyid_file(&a, "app", 2049, 77, false, 2, 20));
}
END_TEST

START_TEST(partkey_carries_the_id_in_place_of_random_int)
{
	struct partkey	*pk;
	struct buf	 key;
	uint64_t	 f;
	uint32_t	 o;

	buf_init(&key);
	pk = partkey_new("RANDOM_INT");
	ck_assert(partkey_carries_id(pk));
	partkey_make_id(pk, "/l/app.log", "x", 1, 0x42, 1000, &key);
	ck_assert_uint_eq(key.len, KEYID_LEN);
	ck_assert(keyid_find(key.data, key.len, &f, &o));
	ck_assert_uint_eq(f, 0x42);
	ck_assert_uint_eq(o, 1000);
	partkey_free(pk);

	pk = partkey_new("FILE_NAME,RANDOM_INT,RANDOM_INT");
	ck_assert(partkey_carries_id(pk));
	partkey_make_id(pk, "/l/app.log", "x", 1, 0x42, 1000, &key);
	ck_assert_int_eq(strncmp(key.data, "app.log,", 8), 0);
	ck_assert(keyid_find(key.data, key.len, &f, &o));
	ck_assert_uint_eq(o, 1000);
	partkey_free(pk);

	pk = partkey_new("FILE_NAME");
	ck_assert(!partkey_carries_id(pk));
	partkey_make_id(pk, "/l/app.log", "x", 1, 0x42, 1000, &key);
	ck_assert_str_eq(key.data, "app.log");
	partkey_free(pk);
	buf_cleanup(&key);
}
END_TEST

/* DIS's partition of a key (dis-api.md 8): MD5, first 8 bytes, as a
 * positive long, over n equal hash ranges. */
static unsigned
partition_of(const char *key, size_t len, unsigned n)
{
	unsigned char	 md[16];
	unsigned int	 mdlen = 0;
	uint64_t	 h = 0;
	int		 i;

	EVP_Digest(key, len, md, &mdlen, EVP_md5(), NULL);
	for (i = 0; i < 8; i++)
		h = h << 8 | md[i];
	h &= 0x7fffffffffffffffULL;
	return (unsigned)MIN(h / (0x7fffffffffffffffULL / n), n - 1);
}

/*
 * The ids of one file's consecutive records (offsets 101 bytes apart)
 * spread over 4 partitions as RANDOM_INT's numbers do: each partition
 * within 3% of a quarter of 40,000 records.
 */
START_TEST(ids_spread_over_partitions_like_random_ints)
{
	unsigned	 ids[4] = { 0 }, nums[4] = { 0 };
	char		 id[KEYID_LEN], num[16];
	int		 i, n;

	rand_seed(7);
	for (i = 0; i < 40000; i++) {
		keyid_encode(0x1234567, (uint64_t)i * 101, id);
		ids[partition_of(id, KEYID_LEN, 4)]++;
		n = snprintf(num, sizeof(num), "%u",
		    (unsigned)(rand_u64() % 1000000));
		nums[partition_of(num, (size_t)n, 4)]++;
	}
	for (i = 0; i < 4; i++) {
		ck_assert_msg(ids[i] > 9700 && ids[i] < 10300,
		    "ids: partition %d got %u", i, ids[i]);
		ck_assert_msg(nums[i] > 9700 && nums[i] < 10300,
		    "numbers: partition %d got %u", i, nums[i]);
	}
}
END_TEST

/* --- the watermark's acknowledged spans --------------------------------- */

START_TEST(spans_are_the_acknowledged_ranges_behind_a_gap_merged)
{
	struct watermark w;
	struct reg_span	 s[8];
	uint64_t	 a, b, c, d, e;

	wm_init(&w, 100);
	a = wm_push(&w, 200);
	b = wm_push(&w, 300);
	c = wm_push(&w, 400);
	d = wm_push(&w, 500);
	e = wm_push(&w, 600);
	ck_assert_uint_eq(wm_spans(&w, s, 8), 0);
	ck_assert(!wm_ack(&w, b));
	ck_assert(!wm_ack(&w, c));
	ck_assert(!wm_ack(&w, e));
	ck_assert_uint_eq(wm_spans(&w, s, 8), 2);
	ck_assert_uint_eq(s[0].start, 200);
	ck_assert_uint_eq(s[0].end, 400);
	ck_assert_uint_eq(s[1].start, 500);
	ck_assert_uint_eq(s[1].end, 600);
	ck_assert_uint_eq(wm_spans(&w, s, 1), 1);
	ck_assert(wm_ack(&w, a));
	ck_assert_uint_eq(w.committed, 400);
	ck_assert_uint_eq(wm_spans(&w, s, 8), 1);
	ck_assert_uint_eq(s[0].start, 500);
	ck_assert(wm_ack(&w, d));
	ck_assert_uint_eq(w.committed, 600);
	ck_assert_uint_eq(wm_spans(&w, s, 8), 0);
	wm_cleanup(&w);
}
END_TEST

/*
 * Bytes delivered before a restart: committed at once with nothing in
 * flight; otherwise a range of their own, done, which a later skip
 * extends, and never the range in flight (were it resent, they would be).
 */
START_TEST(done_to_never_extends_a_range_in_flight)
{
	struct watermark w;
	struct reg_span	 s[4];
	uint64_t	 a, b;

	wm_init(&w, 0);
	ck_assert(wm_done_to(&w, 50));
	ck_assert_uint_eq(w.committed, 50);
	a = wm_push(&w, 100);
	ck_assert(!wm_done_to(&w, 150));
	ck_assert_uint_ne(wm_last_id(&w), a);
	ck_assert(!wm_done_to(&w, 180));
	ck_assert_uint_eq(wm_pending(&w), 2);
	ck_assert_uint_eq(wm_spans(&w, s, 4), 1);
	ck_assert_uint_eq(s[0].start, 100);
	ck_assert_uint_eq(s[0].end, 180);
	b = wm_push(&w, 250);
	ck_assert_uint_eq(wm_last_id(&w), b);
	ck_assert(!wm_ack(&w, b));
	ck_assert_uint_eq(wm_spans(&w, s, 4), 1);
	ck_assert_uint_eq(s[0].end, 250);
	ck_assert(wm_ack(&w, a));
	ck_assert_uint_eq(w.committed, 250);
	ck_assert_uint_eq(wm_pending(&w), 0);
	ck_assert_uint_eq(wm_last_id(&w), UINT64_MAX);
	wm_cleanup(&w);
}
END_TEST

/* --- skip plans --------------------------------------------------------- */

START_TEST(plan_skips_records_wholly_inside_a_span)
{
	struct reg_span	 sp[2] = { { 100, 300 }, { 500, 600 } };
	struct skipplan	*p;

	p = skipplan_new(sp, 2, NULL, 0, 100);
	ck_assert_ptr_nonnull(p);
	ck_assert(skipplan_acked(p, 100, 200));
	ck_assert(skipplan_acked(p, 200, 300));
	ck_assert(!skipplan_acked(p, 300, 400));
	ck_assert(!skipplan_acked(p, 450, 520));	/* starts before */
	ck_assert(!skipplan_acked(p, 590, 650));	/* ends after */
	ck_assert(!skipplan_done(p, 590));
	ck_assert(skipplan_done(p, 600));
	skipplan_free(p);
	/* Nothing past the offset: no plan. */
	ck_assert_ptr_null(skipplan_new(sp, 2, NULL, 0, 600));
}
END_TEST

START_TEST(plan_skips_a_found_record_only_with_its_data)
{
	struct reg_found *f;
	struct skipplan	*p;

	f = xcalloc(3, sizeof(*f));
	f[0].off = 10;
	f[0].hash = keyid_data("ten", 3);
	f[0].len = 3;
	f[1].off = 40;
	f[1].hash = keyid_data("forty", 5);
	f[1].len = 5;
	f[2].off = 70;
	f[2].hash = keyid_data("seventy", 7);
	f[2].len = 7;
	p = skipplan_new(NULL, 0, f, 3, 0);
	ck_assert(skipplan_found_left(p));
	ck_assert(!skipplan_found(p, 0, "ten", 3));	/* other offset */
	ck_assert(skipplan_found(p, 10, "ten", 3));
	ck_assert(!skipplan_found(p, 10, "ten", 3));	/* once */
	ck_assert(!skipplan_found(p, 40, "FORTY", 5));	/* other text */
	ck_assert(!skipplan_found(p, 40, "fort", 4));
	ck_assert(skipplan_found_left(p));
	ck_assert(skipplan_found(p, 70, "seventy", 7));
	ck_assert(!skipplan_found_left(p));
	ck_assert(skipplan_done(p, 71));
	skipplan_free(p);
}
END_TEST

START_TEST(plan_spans_ahead_are_kept_for_the_next_save)
{
	struct reg_span	 sp[3] = { { 10, 20 }, { 30, 40 }, { 50, 60 } };
	struct reg_span	 out[3];
	struct skipplan	*p;

	p = skipplan_new(sp, 3, NULL, 0, 0);
	ck_assert(skipplan_acked(p, 30, 35));
	ck_assert_uint_eq(skipplan_spans(p, 35, out, 3), 2);
	ck_assert_uint_eq(out[0].start, 30);
	ck_assert_uint_eq(out[1].start, 50);
	ck_assert_uint_eq(skipplan_spans(p, 35, out, 1), 1);
	skipplan_free(p);
}
END_TEST

/* --- where acknowledged records went ----------------------------------- */

/*
 * The reply's partition_id and sequence_number of each acknowledged
 * record, in the fast scan (all acknowledged) and in jansson's parse
 * (some failed) alike; what is absent or odd is unknown (-1).
 */
START_TEST(put_reply_gives_partition_and_sequence_number)
{
	static const char *const ok =
	    "{\"failed_record_count\":0,\"records\":["
	    "{\"partition_id\":\"shardId-0000000003\","
	    "\"sequence_number\":\"1024\"},"
	    "{\"sequence_number\" : \"7\", \"partition_id\" : \"12\"},"
	    "{\"partition_id\":\"shardId-x\",\"sequence_number\":\"\"},"
	    "{}]}";
	static const char *const some =
	    "{\"failed_record_count\":1,\"records\":["
	    "{\"partition_id\":\"shardId-0000000001\","
	    "\"sequence_number\":\"9223372036854775807\"},"
	    "{\"error_code\":\"DIS.4303\",\"error_message\":\"x\"}]}";
	struct codec_result res[4];

	ck_assert_int_eq(codec_parse_put(ok, strlen(ok), res, 4), 0);
	ck_assert_int_eq(res[0].partition, 3);
	ck_assert_int_eq(res[0].seq, 1024);
	ck_assert_int_eq(res[1].partition, 12);
	ck_assert_int_eq(res[1].seq, 7);
	ck_assert_int_eq(res[2].partition, -1);
	ck_assert_int_eq(res[2].seq, -1);
	ck_assert_int_eq(res[3].partition, -1);
	ck_assert_int_eq(codec_parse_put(some, strlen(some), res, 2), 1);
	ck_assert_int_eq(res[0].partition, 1);
	ck_assert_int_eq(res[0].seq, INT64_MAX);
	ck_assert_int_eq(res[1].partition, -1);
	ck_assert_int_eq(res[1].seq, -1);
	ck_assert_int_eq(codec_partition_index("shardId-0000000042", 18), 42);
	ck_assert_int_eq(codec_partition_index("42", 2), 42);
	ck_assert_int_eq(codec_partition_index("shard", 5), -1);
	ck_assert_int_eq(codec_seq_value("99999999999999999999", 20), -1);
}
END_TEST

/* The same from a protobuf PutRecordsResult (shardId 23, sequenceNumber
 * 24 in each entry of field 22). */
START_TEST(protobuf_reply_gives_partition_and_sequence_number)
{
	static const unsigned char pb[] = {
		0xa8, 0x01, 0x00,			/* failedRecordCount 0 */
		0xb2, 0x01, 0x1a,			/* records, 26 bytes */
		0xba, 0x01, 0x12, 's', 'h', 'a', 'r', 'd', 'I', 'd', '-',
		'0', '0', '0', '0', '0', '0', '0', '0', '0', '2',
		0xc2, 0x01, 0x02, '5', '5',
	};
	struct codec_result res[1];

	ck_assert_int_eq(pbuf_parse_put((const char *)pb, sizeof(pb), res, 1),
	    0);
	ck_assert_int_eq(res[0].partition, 2);
	ck_assert_int_eq(res[0].seq, 55);
}
END_TEST

/* --- sequence-number floors -------------------------------------------- */

struct floor_out {
	int64_t		 v[8];
	int		 n;
};

static void
on_floor(int32_t part, int64_t last, void *arg)
{
	struct floor_out *o = arg;

	ck_assert_int_lt(part, 8);
	o->v[part] = last;
	o->n++;
}

/*
 * A request pins the numbers as they were when it was sent: the floor is
 * the least pin, the current values when nothing is pinned, and a
 * partition known only after a pin is not lowered by it.
 */
START_TEST(floors_are_the_least_pin)
{
	struct seqmark	*m = seqmark_new();
	struct seqsnap	*p1, *p2, *pins[2];
	struct floor_out o;

	seqmark_seed(m, 0, 99);
	seqmark_seed(m, 1, -1);
	seqmark_seed(m, 0, 50);			/* never lowers */
	p1 = seqmark_pin(m);
	seqmark_ack(m, 0, 120);
	seqmark_ack(m, 1, 7);
	p2 = seqmark_pin(m);
	seqmark_ack(m, 0, 200);
	seqmark_ack(m, 2, 5);
	seqmark_ack(m, SEQMARK_MAX, 5);		/* not followed */
	seqmark_ack(m, -1, 5);
	pins[0] = p2;
	pins[1] = p1;
	memset(&o, 0, sizeof(o));
	seqmark_floors(m, pins, 2, on_floor, &o);
	ck_assert_int_eq(o.n, 3);
	ck_assert_int_eq(o.v[0], 99);
	ck_assert_int_eq(o.v[1], -1);
	ck_assert_int_eq(o.v[2], 5);
	seqsnap_unpin(p1);
	pins[1] = NULL;
	memset(&o, 0, sizeof(o));
	seqmark_floors(m, pins, 2, on_floor, &o);
	ck_assert_int_eq(o.v[0], 120);
	ck_assert_int_eq(o.v[1], 7);
	seqsnap_unpin(p2);
	memset(&o, 0, sizeof(o));
	seqmark_floors(m, NULL, 0, on_floor, &o);
	ck_assert_int_eq(o.v[0], 200);
	seqmark_free(m);
}
END_TEST

/* Two requests in one (a remnant riding in another): the joined pin holds
 * per partition the least either knew, so neither's floor is lost. */
START_TEST(joined_pins_keep_the_least_of_both)
{
	struct seqmark	*m = seqmark_new();
	struct seqsnap	*p1, *p2, *j;
	struct floor_out o;

	seqmark_seed(m, 0, 99);
	p1 = seqmark_pin(m);			/* nothing known of 1 */
	seqmark_ack(m, 0, 120);
	seqmark_ack(m, 1, 7);
	p2 = seqmark_pin(m);
	seqmark_ack(m, 0, 200);
	seqmark_ack(m, 1, 30);
	j = seqsnap_join(p2, p1);		/* the later one first */
	memset(&o, 0, sizeof(o));
	seqmark_floors(m, &j, 1, on_floor, &o);
	ck_assert_int_eq(o.n, 2);
	ck_assert_int_eq(o.v[0], 99);		/* p1's */
	ck_assert_int_eq(o.v[1], 7);		/* p2's: p1 knew nothing */
	j = seqsnap_join(j, NULL);
	j = seqsnap_join(NULL, j);
	p1 = seqmark_pin(m);
	j = seqsnap_join(j, p1);
	memset(&o, 0, sizeof(o));
	seqmark_floors(m, &j, 1, on_floor, &o);
	ck_assert_int_eq(o.v[0], 99);
	ck_assert_int_eq(o.v[1], 7);
	p1 = seqmark_pin(m);
	p2 = seqmark_pin(m);
	seqsnap_unpin(seqsnap_join(p1, p2));	/* the same copy twice */
	seqsnap_unpin(j);
	seqmark_free(m);
}
END_TEST

static Suite *
restart_suite(void)
{
	Suite	*s = suite_create("restart");
	TCase	*tc;

	tc = tcase_create("ids");
	tcase_add_test(tc, siphash_matches_the_paper);
	tcase_add_test(tc, keyid_decodes_what_it_encodes);
	tcase_add_test(tc, keyid_rejects_what_is_not_an_id);
	tcase_add_test(tc, keyid_offset_is_found_after_the_base);
	tcase_add_test(tc, keyid_file_depends_on_agent_file_and_full_head);
	tcase_add_test(tc, partkey_carries_the_id_in_place_of_random_int);
	tcase_add_test(tc, ids_spread_over_partitions_like_random_ints);
	suite_add_tcase(s, tc);
	tc = tcase_create("spans");
	tcase_add_test(tc, spans_are_the_acknowledged_ranges_behind_a_gap_merged);
	tcase_add_test(tc, done_to_never_extends_a_range_in_flight);
	tcase_add_test(tc, plan_skips_records_wholly_inside_a_span);
	tcase_add_test(tc, plan_skips_a_found_record_only_with_its_data);
	tcase_add_test(tc, plan_spans_ahead_are_kept_for_the_next_save);
	suite_add_tcase(s, tc);
	tc = tcase_create("floors");
	tcase_add_test(tc, put_reply_gives_partition_and_sequence_number);
	tcase_add_test(tc, protobuf_reply_gives_partition_and_sequence_number);
	tcase_add_test(tc, floors_are_the_least_pin);
	tcase_add_test(tc, joined_pins_keep_the_least_of_both);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(restart_suite());
}
