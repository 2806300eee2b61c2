/*
 * Unit tests for the protobuf PutRecords format (pbuf.c): the request body
 * byte for byte against the field numbers of dis-api.md section 1 (tags,
 * varint lengths, binary data untouched), and the PutRecordsResult decoder
 * against codec_parse_put's contract -- results by position, count
 * mismatches, unknown fields of every wire type, groups, truncation at
 * every byte, overlong varints and lengths, and random and mutated input
 * that must never be read or written out of bounds.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "base/util.h"
#include "wire/pbuf.h"
#include "testutil.h"

/* --- a reply builder (the test's own encoder) --------------------------- */

static void
varint(struct buf *b, uint64_t v)
{
	while (v >= 0x80) {
		buf_addc(b, (char)(v | 0x80));
		v >>= 7;
	}
	buf_addc(b, (char)v);
}

static void
key(struct buf *b, uint32_t field, unsigned wt)
{
	varint(b, (uint64_t)field << 3 | wt);
}

static void
lenfield(struct buf *b, uint32_t field, const void *p, size_t n)
{
	key(b, field, 2);
	varint(b, n);
	buf_add(b, p, n);
}

static void
strfield(struct buf *b, uint32_t field, const char *s)
{
	lenfield(b, field, s, strlen(s));
}

/* failedRecordCount = v */
static void
failed_count(struct buf *b, uint64_t v)
{
	key(b, 21, 0);
	varint(b, v);
}

/* One PutRecordsResultEntry: acknowledged when code is NULL. */
static void
entry(struct buf *b, const char *code, const char *msg)
{
	struct buf	 e;

	buf_init(&e);
	if (code == NULL) {
		strfield(&e, 23, "shardId-0000000001");
		strfield(&e, 24, "377");
	} else {
		strfield(&e, 25, code);
		if (msg != NULL)
			strfield(&e, 26, msg);
	}
	lenfield(b, 22, e.data, e.len);
	buf_cleanup(&e);
}

/* An acknowledged entry of partition shard at sequence number seq. */
static void
entry_at(struct buf *b, const char *shard, const char *seq)
{
	struct buf	 e;

	buf_init(&e);
	strfield(&e, 23, shard);
	strfield(&e, 24, seq);
	lenfield(b, 22, e.data, e.len);
	buf_cleanup(&e);
}

/* The spec section 2 reply, in protobuf: records 0 and 2 acknowledged. */
static void
spec_reply(struct buf *b)
{
	failed_count(b, 1);
	entry(b, NULL, NULL);
	entry(b, "DIS.4303", "Exceeded traffic control limit.");
	entry(b, NULL, NULL);
}

/*
 * Parse a copy of exactly len bytes (so ASan sees any read past it) into
 * n results plus a sentinel that must stay untouched.
 */
static int
parse(const void *body, size_t len, struct codec_result *res, size_t n)
{
	struct codec_result	*r;
	char			*copy;
	int			 rc;

	copy = xmalloc(len ? len : 1);
	if (len > 0)
		memcpy(copy, body, len);
	r = xcalloc(n + 1, sizeof(*r));
	memset(&r[n], 0x5a, sizeof(r[n]));
	rc = pbuf_parse_put(copy, len, r, n);
	ck_assert_msg(r[n].code[0] == 0x5a && r[n].message[159] == 0x5a,
	    "wrote past res[n - 1]");
	if (res != NULL)
		memcpy(res, r, n * sizeof(*r));
	free(r);
	free(copy);
	return rc;
}

static int
parse_buf(const struct buf *b, struct codec_result *res, size_t n)
{
	return parse(b->data, b->len, res, n);
}

/* --- the request body --------------------------------------------------- */

START_TEST(put_body_bytes_by_field_number)
{
	static const unsigned char want[] = {
		0x0a, 0x01, 's',			/* streamName = 1 */
		0x12, 0x07,				/* records = 2 */
		    0x1a, 0x02, 'a', 'b',		/*  data = 3 */
		    0x2a, 0x01, 'k',			/*  partitionKey = 5 */
		0x12, 0x02,				/* records = 2 */
		    0x1a, 0x00,				/*  data = 3, empty */
	};
	struct buf	 b;

	buf_init(&b);
	pbuf_put_begin(&b, "s", NULL);
	pbuf_put_add(&b, "ab", 2, "k");
	pbuf_put_add(&b, "", 0, NULL);
	pbuf_put_end(&b);
	ck_assert_uint_eq(b.len, sizeof(want));
	ck_assert(memcmp(b.data, want, sizeof(want)) == 0);
	ck_assert_int_eq(b.data[b.len], '\0');
	buf_cleanup(&b);
}
END_TEST

START_TEST(put_body_with_stream_id_replaces_name)
{
	static const unsigned char want[] = {
		0xf2, 0x01, 0x03, 'i', 'd', '7',	/* streamId = 30 */
	};
	struct buf	 b;

	buf_init(&b);
	pbuf_put_begin(&b, "name", "id7");
	ck_assert_uint_eq(b.len, sizeof(want));
	ck_assert(memcmp(b.data, want, sizeof(want)) == 0);
	buf_reset(&b);
	pbuf_put_begin(&b, "name", "");
	ck_assert_uint_eq(b.len, 6);
	ck_assert(memcmp(b.data, "\x0a\x04name", 6) == 0);
	buf_reset(&b);
	pbuf_put_begin(&b, NULL, NULL);
	ck_assert_uint_eq(b.len, 2);
	ck_assert(memcmp(b.data, "\x0a\x00", 2) == 0);
	buf_cleanup(&b);
}
END_TEST

/* Every byte value passes untouched; lengths over 127 take two bytes. */
START_TEST(put_body_binary_data_and_multibyte_lengths)
{
	unsigned char	 data[300];
	struct buf	 b;
	size_t		 i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(i * 7);
	buf_init(&b);
	buf_addstr(&b, "prefix");
	pbuf_put_add(&b, data, sizeof(data), "483021");
	/* entry: 1 + 2 + 300 + 1 + 1 + 6 = 311 = 0xb7 0x02 */
	ck_assert_uint_eq(b.len, 6 + 1 + 2 + 311);
	ck_assert(memcmp(b.data, "prefix\x12\xb7\x02\x1a\xac\x02", 12) == 0);
	ck_assert(memcmp(b.data + 12, data, sizeof(data)) == 0);
	ck_assert(memcmp(b.data + 12 + 300, "\x2a\x06" "483021", 8) == 0);
	ck_assert_uint_le(b.len - 6 - sizeof(data) - 6, PBUF_ENTRY_OVERHEAD);
	buf_cleanup(&b);
}
END_TEST

/* A record as big as an ADVANCED stream allows: 4-byte lengths. */
START_TEST(put_body_five_mib_record_within_overhead)
{
	size_t		 len = 5 * 1024 * 1024;
	char		*data;
	struct buf	 b;

	data = xcalloc(1, len);
	buf_init(&b);
	pbuf_put_add(&b, data, len, "1234567890");
	ck_assert_uint_eq(b.len, 1 + 4 + 1 + 4 + len + 1 + 1 + 10);
	ck_assert_uint_le(b.len - len - 10, PBUF_ENTRY_OVERHEAD);
	ck_assert(memcmp(b.data, "\x12\x91\x80\xc0\x02\x1a\x80\x80\xc0\x02",
	    10) == 0);
	buf_cleanup(&b);
	free(data);
}
END_TEST

/* --- the reply ---------------------------------------------------------- */

START_TEST(parse_put_all_acknowledged)
{
	struct codec_result	 res[3];
	struct buf		 b;
	size_t			 i;

	buf_init(&b);
	failed_count(&b, 0);
	for (i = 0; i < 3; i++)
		entry(&b, NULL, NULL);
	memset(res, 'x', sizeof(res));
	ck_assert_int_eq(parse_buf(&b, res, 3), 0);
	for (i = 0; i < 3; i++) {
		ck_assert_str_eq(res[i].code, "");
		ck_assert_str_eq(res[i].message, "");
	}
	buf_cleanup(&b);
}
END_TEST

START_TEST(parse_put_spec_partial_failure)
{
	struct codec_result	 res[3];
	struct buf		 b;

	buf_init(&b);
	spec_reply(&b);
	ck_assert_int_eq(parse_buf(&b, res, 3), 1);
	ck_assert_str_eq(res[0].code, "");
	ck_assert_str_eq(res[1].code, "DIS.4303");
	ck_assert_str_eq(res[1].message, "Exceeded traffic control limit.");
	ck_assert_str_eq(res[2].code, "");
	buf_cleanup(&b);
}
END_TEST

/*
 * Where each acknowledged record went: its partition (ids in either
 * form), and the sequence number of the last record of each partition
 * (the floors need only a partition's highest; the others stay -1).
 */
START_TEST(parse_put_partitions_and_last_sequence_numbers)
{
	struct codec_result	 res[6];
	struct buf		 b;

	buf_init(&b);
	failed_count(&b, 1);
	entry_at(&b, "shardId-0000000001", "10");
	entry_at(&b, "shardId-0000000003", "7");
	entry_at(&b, "shardId-0000000001", "11");
	entry(&b, "DIS.4303", "Exceeded traffic control limit.");
	entry_at(&b, "2", "400");
	entry_at(&b, "shardId-0000000003", "8");
	ck_assert_int_eq(parse_buf(&b, res, 6), 1);
	ck_assert_int_eq(res[0].partition, 1);
	ck_assert_int_eq(res[1].partition, 3);
	ck_assert_int_eq(res[2].partition, 1);
	ck_assert_int_eq(res[3].partition, -1);
	ck_assert_int_eq(res[4].partition, 2);
	ck_assert_int_eq(res[5].partition, 3);
	ck_assert_int_eq(res[0].seq, -1);
	ck_assert_int_eq(res[1].seq, -1);
	ck_assert_int_eq(res[2].seq, 11);
	ck_assert_int_eq(res[3].seq, -1);
	ck_assert_int_eq(res[4].seq, 400);
	ck_assert_int_eq(res[5].seq, 8);
	buf_cleanup(&b);
}
END_TEST

/*
 * DIS's own entry shape (shardId then sequenceNumber, nothing else) is
 * read by position; it must read as the general reader reads the same
 * fields in the other order, and a NUL inside it is still refused.
 */
START_TEST(parse_put_dis_shape_reads_as_the_general_reader)
{
	static const char *const e[][2] = {
		{ "shardId-0000000002", "41" }, { "shardId-0000000001", "7" },
		{ "shardId-0000000002", "42" }, { "3", "900" },
		{ "", "5" }, { "shardId-0000000001", "" },
		{ "shardId-0000000004", "x1" },
	};
	enum { N = sizeof(e) / sizeof(e[0]) };
	struct codec_result	 fast[N], slow[N];
	struct buf		 a, b, x;
	size_t			 i;

	buf_init(&a);
	buf_init(&b);
	failed_count(&a, 0);
	failed_count(&b, 0);
	for (i = 0; i < N; i++) {
		entry_at(&a, e[i][0], e[i][1]);
		buf_init(&x);
		strfield(&x, 24, e[i][1]);
		strfield(&x, 23, e[i][0]);
		lenfield(&b, 22, x.data, x.len);
		buf_cleanup(&x);
	}
	ck_assert_int_eq(parse_buf(&a, fast, N), 0);
	ck_assert_int_eq(parse_buf(&b, slow, N), 0);
	for (i = 0; i < N; i++) {
		ck_assert_msg(fast[i].partition == slow[i].partition,
		    "entry %zu: partition %d, general %d", i,
		    (int)fast[i].partition, (int)slow[i].partition);
		ck_assert_msg(fast[i].seq == slow[i].seq,
		    "entry %zu: seq %lld, general %lld", i,
		    (long long)fast[i].seq, (long long)slow[i].seq);
		ck_assert_str_eq(fast[i].code, "");
	}
	ck_assert_int_eq(fast[2].seq, 42);
	ck_assert_int_eq(fast[3].partition, 3);
	ck_assert_int_eq(fast[3].seq, 900);
	buf_cleanup(&a);
	/* A NUL in the shard id: not a reply. */
	buf_init(&a);
	failed_count(&a, 0);
	buf_init(&x);
	lenfield(&x, 23, "shard\0Id-01", 12);
	strfield(&x, 24, "1");
	lenfield(&a, 22, x.data, x.len);
	buf_cleanup(&x);
	ck_assert_int_eq(parse_buf(&a, fast, 1), -EBADMSG);
	buf_cleanup(&a);
	buf_cleanup(&b);
}
END_TEST

/* The failure count is the entries', not failedRecordCount's. */
START_TEST(parse_put_counts_entries_not_the_header)
{
	struct codec_result	 res[2];
	struct buf		 b;

	buf_init(&b);
	entry(&b, "DIS.5000", NULL);
	failed_count(&b, 0);		/* after the entries, and wrong */
	entry(&b, "DIS.4303", "x");
	ck_assert_int_eq(parse_buf(&b, res, 2), 2);
	ck_assert_str_eq(res[0].code, "DIS.5000");
	ck_assert_str_eq(res[0].message, "");
	ck_assert_str_eq(res[1].message, "x");
	buf_cleanup(&b);
}
END_TEST

START_TEST(parse_put_count_mismatch_is_ebadmsg)
{
	struct buf	 b;
	size_t		 n;

	buf_init(&b);
	spec_reply(&b);
	for (n = 0; n < 8; n++)
		if (n != 3)
			ck_assert_int_eq(parse_buf(&b, NULL, n), -EBADMSG);
	buf_cleanup(&b);
}
END_TEST

/* A reply for another number of records says how many it holds. */
START_TEST(put_entries_counts_a_reply_of_any_length)
{
	struct buf	 b;

	buf_init(&b);
	spec_reply(&b);
	ck_assert_int_eq(pbuf_put_entries(b.data, b.len), 3);
	ck_assert_int_eq(pbuf_put_entries(b.data, b.len - 1), -EBADMSG);
	buf_reset(&b);
	failed_count(&b, 0);
	ck_assert_int_eq(pbuf_put_entries(b.data, b.len), 0);
	buf_reset(&b);
	entry(&b, NULL, NULL);		/* no failedRecordCount */
	ck_assert_int_eq(pbuf_put_entries(b.data, b.len), -EBADMSG);
	ck_assert_int_eq(pbuf_put_entries("<html>", 6), -EBADMSG);
	ck_assert_int_eq(pbuf_put_entries(NULL, 0), -EBADMSG);
	buf_cleanup(&b);
}
END_TEST

START_TEST(parse_put_empty_replies)
{
	struct buf	 b;

	/* No records, but the required count: a reply to n = 0. */
	buf_init(&b);
	failed_count(&b, 0);
	ck_assert_int_eq(parse_buf(&b, NULL, 0), 0);
	ck_assert_int_eq(parse_buf(&b, NULL, 1), -EBADMSG);
	/* Empty body, or entries without failedRecordCount (required). */
	ck_assert_int_eq(parse("", 0, NULL, 0), -EBADMSG);
	ck_assert_int_eq(pbuf_parse_put(NULL, 0, NULL, 0), -EBADMSG);
	buf_reset(&b);
	entry(&b, NULL, NULL);
	ck_assert_int_eq(parse_buf(&b, NULL, 1), -EBADMSG);
	buf_cleanup(&b);
}
END_TEST

/* Fields this agent does not know, of every valid wire type, anywhere. */
START_TEST(parse_put_skips_unknown_fields_by_wire_type)
{
	struct codec_result	 res[2];
	struct buf		 b, e;

	buf_init(&b);
	buf_init(&e);
	key(&b, 1, 0);			/* varint, 10 bytes */
	varint(&b, UINT64_MAX);
	key(&b, 2, 1);			/* fixed64 */
	buf_add(&b, "12345678", 8);
	strfield(&b, 3, "a string");	/* length-delimited */
	key(&b, 4, 5);			/* fixed32 */
	buf_add(&b, "1234", 4);
	key(&b, 536870911, 0);		/* the largest field number */
	varint(&b, 1);
	failed_count(&b, 1);
	/* An entry with unknown fields around its error code. */
	key(&e, 7, 1);
	buf_add(&e, "\xff\xff\xff\xff\xff\xff\xff\xff", 8);
	strfield(&e, 25, "DIS.4303");
	key(&e, 99, 5);
	buf_add(&e, "\0\0\0\0", 4);
	lenfield(&e, 100, "\x08\x01", 2);	/* a nested message */
	lenfield(&b, 22, e.data, e.len);
	entry(&b, NULL, NULL);
	ck_assert_int_eq(parse_buf(&b, res, 2), 1);
	ck_assert_str_eq(res[0].code, "DIS.4303");
	ck_assert_str_eq(res[1].code, "");
	buf_cleanup(&e);
	buf_cleanup(&b);
}
END_TEST

/* Groups (3, 4) and the undefined wire types (6, 7), at either level. */
START_TEST(parse_put_groups_and_bad_wire_types_are_ebadmsg)
{
	struct buf	 b, e;
	unsigned	 wt;

	buf_init(&b);
	buf_init(&e);
	for (wt = 3; wt <= 7; wt++) {
		if (wt == 5)
			continue;
		buf_reset(&b);
		failed_count(&b, 0);
		key(&b, 9, wt);
		ck_assert_msg(parse_buf(&b, NULL, 0) == -EBADMSG, "top %u", wt);
		buf_reset(&b);
		buf_reset(&e);
		key(&e, 9, wt);
		failed_count(&b, 0);
		lenfield(&b, 22, e.data, e.len);
		ck_assert_msg(parse_buf(&b, NULL, 1) == -EBADMSG, "entry %u",
		    wt);
	}
	buf_cleanup(&e);
	buf_cleanup(&b);
}
END_TEST

/* A known field with the wrong wire type is not the message we expect. */
START_TEST(parse_put_known_field_wrong_wire_type_is_ebadmsg)
{
	struct buf	 b, e;

	buf_init(&b);
	buf_init(&e);
	key(&b, 21, 2);			/* failedRecordCount as bytes */
	varint(&b, 0);
	ck_assert_int_eq(parse_buf(&b, NULL, 0), -EBADMSG);
	buf_reset(&b);
	failed_count(&b, 0);
	key(&b, 22, 0);			/* records as a varint */
	varint(&b, 1);
	ck_assert_int_eq(parse_buf(&b, NULL, 1), -EBADMSG);
	buf_reset(&b);
	key(&e, 25, 0);			/* errorCode as a varint 0, */
	varint(&e, 0);			/* which reads as "" as bytes */
	failed_count(&b, 1);
	lenfield(&b, 22, e.data, e.len);
	ck_assert_int_eq(parse_buf(&b, NULL, 1), -EBADMSG);
	buf_cleanup(&e);
	buf_cleanup(&b);
}
END_TEST

/* Every strict prefix of a good reply is refused, none read past. */
START_TEST(parse_put_truncated_anywhere_is_ebadmsg)
{
	struct buf	 b;
	size_t		 i;

	buf_init(&b);
	spec_reply(&b);
	for (i = 0; i < b.len; i++)
		ck_assert_msg(parse(b.data, i, NULL, 3) == -EBADMSG,
		    "prefix of %zu bytes accepted", i);
	ck_assert_int_eq(parse_buf(&b, NULL, 3), 1);
	buf_cleanup(&b);
}
END_TEST

START_TEST(parse_put_bad_varints_and_lengths_are_ebadmsg)
{
	static const struct {
		const char	*p;
		size_t		 n;
	} bad[] = {
		/* 11-byte varint value */
		{ "\xa8\x01\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00", 13 },
		/* the 10th byte carrying more than bit 63 */
		{ "\xa8\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 12 },
		/* a key over 32 bits */
		{ "\xa8\x01\x00\x80\x80\x80\x80\x80\x01\x00", 10 },
		/* field number 0 */
		{ "\x00\x00\xa8\x01\x00", 5 },
		{ "\x02\x00\xa8\x01\x00", 5 },
		/* a length past the end, and a 64-bit one */
		{ "\xa8\x01\x00\xb2\x01\x05\x00", 7 },
		{ "\xa8\x01\x00\x1a\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 13 },
		/* an entry length past its own end inside the entry */
		{ "\xa8\x01\x00\xb2\x01\x03\xca\x01\x05", 9 },
		/* fixed64 and fixed32 cut short */
		{ "\xa8\x01\x00\x09\x01\x02", 6 },
		{ "\xa8\x01\x00\x0d\x01", 5 },
		/* a key cut in the middle */
		{ "\xa8\x01\x00\xb2", 4 },
	};
	size_t	 i, n;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		for (n = 0; n <= 1; n++)
			ck_assert_msg(parse(bad[i].p, bad[i].n, NULL, n) ==
			    -EBADMSG, "case %zu accepted (n = %zu)", i, n);
	/* The largest valid varint (10 bytes, last one 0x01) is fine. */
	ck_assert_int_eq(parse("\xa8\x01\xff\xff\xff\xff\xff\xff\xff\xff"
	    "\xff\x01", 12, NULL, 0), 0);
}
END_TEST

START_TEST(parse_put_nul_in_strings_is_ebadmsg)
{
	struct buf	 b, e;

	buf_init(&b);
	buf_init(&e);
	/* "\0DIS" would read as an empty code: an acknowledgement. */
	lenfield(&e, 25, "\0DIS", 4);
	failed_count(&b, 1);
	lenfield(&b, 22, e.data, e.len);
	ck_assert_int_eq(parse_buf(&b, NULL, 1), -EBADMSG);
	buf_reset(&b);
	buf_reset(&e);
	strfield(&e, 25, "DIS.4303");
	lenfield(&e, 26, "a\0b", 3);
	failed_count(&b, 1);
	lenfield(&b, 22, e.data, e.len);
	ck_assert_int_eq(parse_buf(&b, NULL, 1), -EBADMSG);
	buf_cleanup(&e);
	buf_cleanup(&b);
}
END_TEST

/*
 * A NUL at any place of a string of any length is refused, in the entry
 * DIS writes (shardId then sequenceNumber, read by position) and in an
 * error message: a check that reads more than a byte at a time must not
 * let a short or unaligned tail hide one.
 */
START_TEST(parse_put_nul_anywhere_in_any_length_is_ebadmsg)
{
	struct buf	 b, e;
	char		 s[80];
	size_t		 n, at, which;

	buf_init(&b);
	buf_init(&e);
	for (which = 0; which < 3; which++)
		for (n = 1; n <= 72; n++)
			for (at = 0; at <= n; at++) {
				/* at == n: no NUL, the control case. */
				memset(s, which == 1 ? '7' : 'a', n);
				if (at < n)
					s[at] = '\0';
				buf_reset(&b);
				buf_reset(&e);
				if (which == 2) {
					strfield(&e, 25, "DIS.4303");
					lenfield(&e, 26, s, n);
				} else if (which == 1) {
					strfield(&e, 23, "shardId-0000000001");
					lenfield(&e, 24, s, n);
				} else {
					lenfield(&e, 23, s, n);
					strfield(&e, 24, "377");
				}
				failed_count(&b, which == 2 ? 1 : 0);
				lenfield(&b, 22, e.data, e.len);
				ck_assert_msg(parse_buf(&b, NULL, 1) ==
				    (at < n ? -EBADMSG : which == 2 ? 1 : 0),
				    "field %zu, length %zu, NUL at %zu", which,
				    n, at);
			}
	buf_cleanup(&e);
	buf_cleanup(&b);
}
END_TEST

/* An empty errorCode is success; the last occurrence of a field wins. */
START_TEST(parse_put_empty_code_is_success_and_last_value_wins)
{
	struct codec_result	 res[2];
	struct buf		 b, e;

	buf_init(&b);
	buf_init(&e);
	failed_count(&b, 1);
	entry(&b, "", "ignored");
	strfield(&e, 25, "DIS.4303");
	strfield(&e, 25, "DIS.5000");
	strfield(&e, 26, "first");
	strfield(&e, 26, "second");
	lenfield(&b, 22, e.data, e.len);
	ck_assert_int_eq(parse_buf(&b, res, 2), 1);
	ck_assert_str_eq(res[0].code, "");
	ck_assert_str_eq(res[0].message, "");
	ck_assert_str_eq(res[1].code, "DIS.5000");
	ck_assert_str_eq(res[1].message, "second");
	buf_cleanup(&e);
	buf_cleanup(&b);
}
END_TEST

START_TEST(parse_put_truncates_long_code_and_message)
{
	struct codec_result	 res[2];
	char			 code[64], msg[400];
	unsigned char		 cont[64];
	struct buf		 b, e;

	memset(code, 'C', sizeof(code) - 1);
	code[sizeof(code) - 1] = '\0';
	/* 158 ASCII bytes then a 3-byte character across the cut at 159. */
	memset(msg, 'm', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = '\0';
	memcpy(msg + 158, "\xe2\x82\xac", 3);
	buf_init(&b);
	buf_init(&e);
	failed_count(&b, 2);
	entry(&b, code, msg);
	/* A code of continuation bytes only must stay non-empty. */
	memset(cont, 0x80, sizeof(cont));
	lenfield(&e, 25, cont, sizeof(cont));
	lenfield(&b, 22, e.data, e.len);
	ck_assert_int_eq(parse_buf(&b, res, 2), 2);
	ck_assert_uint_eq(strlen(res[0].code), sizeof(res[0].code) - 1);
	ck_assert_uint_eq(strlen(res[0].message), 158);
	ck_assert(res[1].code[0] != '\0');
	ck_assert_uint_ge(strlen(res[1].code), sizeof(res[1].code) - 4);
	buf_cleanup(&e);
	buf_cleanup(&b);
}
END_TEST

/* xorshift64: deterministic, so a failure replays. */
static uint64_t
next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void
check_contract(const void *p, size_t len, size_t n)
{
	struct codec_result	 res[8];
	size_t			 i;
	int			 rc, failed = 0;

	memset(res, 0xa5, sizeof(res));
	rc = parse(p, len, res, n);
	ck_assert(rc == -EBADMSG || (rc >= 0 && (size_t)rc <= n));
	if (rc < 0)
		return;
	for (i = 0; i < n; i++) {
		ck_assert(memchr(res[i].code, '\0', sizeof(res[i].code)));
		ck_assert(memchr(res[i].message, '\0',
		    sizeof(res[i].message)));
		failed += res[i].code[0] != '\0';
	}
	ck_assert_int_eq(failed, rc);
}

/* Random bytes, and a good reply with random bytes changed. */
START_TEST(parse_put_random_and_mutated_input_keeps_the_contract)
{
	unsigned char	 junk[64];
	struct buf	 b;
	uint64_t	 seed = 0x9e3779b97f4a7c15ULL, r;
	size_t		 i, j, len;
	char		*m;

	for (i = 0; i < 20000; i++) {
		len = next_rand(&seed) % sizeof(junk);
		for (j = 0; j < len; j++)
			junk[j] = (unsigned char)next_rand(&seed);
		check_contract(junk, len, next_rand(&seed) % 4);
	}
	buf_init(&b);
	spec_reply(&b);
	m = xmalloc(b.len);
	for (i = 0; i < 20000; i++) {
		memcpy(m, b.data, b.len);
		for (j = 0; j < 1 + i % 3; j++) {
			r = next_rand(&seed);
			m[r % b.len] = (char)(r >> 32);
		}
		check_contract(m, b.len, 3);
	}
	free(m);
	buf_cleanup(&b);
}
END_TEST

static Suite *
pbuf_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("pbuf");
	tc = tcase_create("put_body");
	tcase_add_test(tc, put_body_bytes_by_field_number);
	tcase_add_test(tc, put_body_with_stream_id_replaces_name);
	tcase_add_test(tc, put_body_binary_data_and_multibyte_lengths);
	tcase_add_test(tc, put_body_five_mib_record_within_overhead);
	suite_add_tcase(s, tc);

	tc = tcase_create("parse_put");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, parse_put_all_acknowledged);
	tcase_add_test(tc, parse_put_spec_partial_failure);
	tcase_add_test(tc, parse_put_partitions_and_last_sequence_numbers);
	tcase_add_test(tc, parse_put_dis_shape_reads_as_the_general_reader);
	tcase_add_test(tc, parse_put_counts_entries_not_the_header);
	tcase_add_test(tc, parse_put_count_mismatch_is_ebadmsg);
	tcase_add_test(tc, put_entries_counts_a_reply_of_any_length);
	tcase_add_test(tc, parse_put_empty_replies);
	tcase_add_test(tc, parse_put_skips_unknown_fields_by_wire_type);
	tcase_add_test(tc, parse_put_groups_and_bad_wire_types_are_ebadmsg);
	tcase_add_test(tc, parse_put_known_field_wrong_wire_type_is_ebadmsg);
	tcase_add_test(tc, parse_put_truncated_anywhere_is_ebadmsg);
	tcase_add_test(tc, parse_put_bad_varints_and_lengths_are_ebadmsg);
	tcase_add_test(tc, parse_put_nul_in_strings_is_ebadmsg);
	tcase_add_test(tc, parse_put_nul_anywhere_in_any_length_is_ebadmsg);
	tcase_add_test(tc, parse_put_empty_code_is_success_and_last_value_wins);
	tcase_add_test(tc, parse_put_truncates_long_code_and_message);
	tcase_add_test(tc,
	    parse_put_random_and_mutated_input_keeps_the_contract);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(pbuf_suite());
}
