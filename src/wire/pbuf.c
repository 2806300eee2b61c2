/*
 * The protobuf PutRecords format of the DIS SDK (dis-api.md section 1,
 * proto2): the request is written straight into the caller's reused body
 * buffer, one reserve per record, the record bytes copied as they are; the
 * PutRecordsResult reply is read by a small decoder that trusts nothing --
 * every varint, length and field is checked against the end of the input,
 * unknown fields are skipped by their wire type, and groups are refused.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "base/util.h"
#include "wire/codec.h"
#include "wire/pbuf.h"

/* Field numbers of dis-api.md section 1. */
enum {
	F_STREAM_NAME = 1,		/* PutRecordsRequest */
	F_RECORDS = 2,
	F_STREAM_ID = 30,
	F_DATA = 3,			/* PutRecordsRequestEntry */
	F_PARTITION_KEY = 5,
	F_FAILED_COUNT = 21,		/* PutRecordsResult */
	F_RESULTS = 22,
	F_SHARD_ID = 23,		/* PutRecordsResultEntry */
	F_SEQUENCE = 24,
	F_ERROR_CODE = 25,
	F_ERROR_MESSAGE = 26,
};

enum {
	WT_VARINT = 0,
	WT_I64 = 1,
	WT_LEN = 2,
	WT_I32 = 5,
};

#define VARINT_MAX	10	/* bytes of a 64-bit varint */
#define TAG(f, wt)	((uint64_t)(f) << 3 | (wt))

/* --- encoding ----------------------------------------------------------- */

static size_t
varint_len(uint64_t v)
{
	size_t	 n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static char *
put_varint(char *o, uint64_t v)
{
	while (v >= 0x80) {
		*o++ = (char)(v | 0x80);
		v >>= 7;
	}
	*o++ = (char)v;
	return o;
}

/* Field f, wire type 2: tag, length, bytes.  Room must be reserved. */
static char *
put_bytes(char *o, unsigned f, const void *p, size_t n)
{
	o = put_varint(o, TAG(f, WT_LEN));
	o = put_varint(o, n);
	if (n > 0)
		memcpy(o, p, n);
	return o + n;
}

static void
commit(struct buf *out, char *end)
{
	buf_setlen(out, (size_t)(end - out->data));
}

void
pbuf_put_begin(struct buf *out, const char *stream_name,
    const char *stream_id)
{
	const char	*s = stream_name != NULL ? stream_name : "";
	unsigned	 f = F_STREAM_NAME;
	size_t		 n;

	if (stream_id != NULL && *stream_id != '\0') {
		s = stream_id;
		f = F_STREAM_ID;
	}
	n = strlen(s);
	buf_reserve(out, n + 2 * VARINT_MAX);
	commit(out, put_bytes(out->data + out->len, f, s, n));
}

void
pbuf_put_add(struct buf *out, const void *data, size_t len,
    const char *partition_key)
{
	pbuf_put_addn(out, data, len, partition_key,
	    partition_key != NULL ? strlen(partition_key) : 0);
}

void
pbuf_put_addn(struct buf *out, const void *data, size_t len,
    const char *partition_key, size_t klen)
{
	size_t	 inner;
	char	*o;

	inner = 1 + varint_len(len) + len;
	if (partition_key != NULL)
		inner += 1 + varint_len(klen) + klen;
	buf_reserve(out, 1 + varint_len(inner) + inner);
	o = put_varint(out->data + out->len, TAG(F_RECORDS, WT_LEN));
	o = put_varint(o, inner);
	o = put_bytes(o, F_DATA, data, len);
	if (partition_key != NULL)
		o = put_bytes(o, F_PARTITION_KEY, partition_key, klen);
	commit(out, o);
}

void
pbuf_put_end(struct buf *out)
{
	(void)out;
}

/* --- decoding ----------------------------------------------------------- */

struct rd {
	const unsigned char	*p;
	const unsigned char	*end;
};

/* A varint of at most 10 bytes that fits 64 bits; 0 or -EBADMSG. */
static int
rd_varint(struct rd *r, uint64_t *v)
{
	uint64_t	 x = 0;
	unsigned	 i;
	unsigned char	 c;

	/* Most keys and lengths of a reply are one byte, the entries' keys
	 * (fields 22..26) two. */
	if (r->p < r->end && *r->p < 0x80) {
		*v = *r->p++;
		return 0;
	}
	if (r->end - r->p >= 2 && r->p[1] < 0x80) {
		*v = (uint64_t)(r->p[0] & 0x7f) | (uint64_t)r->p[1] << 7;
		r->p += 2;
		return 0;
	}
	for (i = 0; i < VARINT_MAX; i++) {
		if (r->p >= r->end)
			return -EBADMSG;
		c = *r->p++;
		/* The 10th byte holds bit 63 only, and ends the varint. */
		if (i == VARINT_MAX - 1 && c > 1)
			return -EBADMSG;
		x |= (uint64_t)(c & 0x7f) << (7 * i);
		if ((c & 0x80) == 0) {
			*v = x;
			return 0;
		}
	}
	return -EBADMSG;
}

/* A field key: field number >= 1 (fits 29 bits) and wire type. */
static int
rd_key(struct rd *r, uint32_t *field, unsigned *wt)
{
	uint64_t	 k;

	if (rd_varint(r, &k) != 0 || k > UINT32_MAX || (k >> 3) == 0)
		return -EBADMSG;
	*field = (uint32_t)(k >> 3);
	*wt = (unsigned)(k & 7);
	return 0;
}

/* A length-delimited value: *p, *n inside the input. */
static int
rd_len(struct rd *r, const unsigned char **p, size_t *n)
{
	uint64_t	 v;

	if (rd_varint(r, &v) != 0 || v > (uint64_t)(r->end - r->p))
		return -EBADMSG;
	*p = r->p;
	*n = (size_t)v;
	r->p += v;
	return 0;
}

static int
rd_fixed(struct rd *r, size_t n)
{
	if ((size_t)(r->end - r->p) < n)
		return -EBADMSG;
	r->p += n;
	return 0;
}

/* Skip a field's value by wire type; groups (3, 4) and 6, 7 are refused. */
static int
rd_skip(struct rd *r, unsigned wt)
{
	const unsigned char	*p;
	uint64_t		 v;
	size_t			 n;

	switch (wt) {
	case WT_VARINT:
		return rd_varint(r, &v);
	case WT_I64:
		return rd_fixed(r, 8);
	case WT_LEN:
		return rd_len(r, &p, &n);
	case WT_I32:
		return rd_fixed(r, 4);
	default:
		return -EBADMSG;
	}
}

/*
 * Copy n bytes into dst[size], NUL-terminated, cut on a UTF-8 character
 * boundary when they do not fit -- but never cut to nothing, so a
 * non-empty error code stays non-empty (a failed record must not read as
 * acknowledged, whatever bytes the code holds).
 */
static void
copy_trunc(char *dst, size_t size, const unsigned char *src, size_t n)
{
	size_t	 cut;

	if (n >= size) {
		n = size - 1;
		for (cut = 0; cut < 3 && n > 1 &&
		    (src[n] & 0xc0) == 0x80; cut++)
			n--;
	}
	if (n > 0)
		memcpy(dst, src, n);
	dst[n] = '\0';
}

/* A string field of a result entry: wire type 2 and no NUL inside. */
static int
rd_string(struct rd *r, unsigned wt, const unsigned char **p, size_t *n)
{
	if (wt != WT_LEN || rd_len(r, p, n) != 0 ||
	    memchr(*p, '\0', *n) != NULL)
		return -EBADMSG;
	return 0;
}

/* A field key above 127 and below 16384 as its two varint bytes. */
#define KEY_LO(k)	((unsigned char)(((k) & 0x7f) | 0x80))
#define KEY_HI(k)	((unsigned char)((k) >> 7))

/*
 * The entry DIS writes for an acknowledged record, byte for byte: shardId
 * then sequenceNumber, each shorter than 128 bytes, nothing else.  Read by
 * position; true when the n bytes at p are exactly that (then the two
 * strings in *shard and *seq), false for anything else (parse_entry's
 * loop decides, and reads this shape the same).
 */
static inline bool
entry_dis(const unsigned char *p, size_t n, const unsigned char **shard,
    size_t *shard_len, const unsigned char **seq, size_t *seq_len)
{
	const unsigned char	*q;
	size_t			 l1, l2;

	if (n < 6 || p[0] != KEY_LO(TAG(F_SHARD_ID, WT_LEN)) ||
	    p[1] != KEY_HI(TAG(F_SHARD_ID, WT_LEN)) || (l1 = p[2]) >= 0x80 ||
	    n < 6 + l1)
		return false;
	q = p + 3 + l1;
	if (q[0] != KEY_LO(TAG(F_SEQUENCE, WT_LEN)) ||
	    q[1] != KEY_HI(TAG(F_SEQUENCE, WT_LEN)) || (l2 = q[2]) >= 0x80 ||
	    n != 6 + l1 + l2 || memchr(p + 3, '\0', l1) != NULL ||
	    memchr(q + 3, '\0', l2) != NULL)
		return false;
	*shard = p + 3;
	*shard_len = l1;
	*seq = q + 3;
	*seq_len = l2;
	return true;
}

/*
 * One PutRecordsResultEntry of n bytes at p into *res: 1 when it failed,
 * 0 when acknowledged, -EBADMSG.  The last errorCode and errorMessage
 * count, as protobuf merges repeated occurrences of a singular field.
 */
static int
parse_entry(const unsigned char *p, size_t n, struct codec_result *res,
    struct codec_part_cache *c)
{
	struct rd		 r = { p, p + n };
	const unsigned char	*code = NULL, *msg = NULL, *s, *q;
	size_t			 codelen = 0, msglen = 0, slen;
	const char		*seq_at = NULL;
	size_t			 seq_len = 0;
	int32_t			 part = -1;
	uint32_t		 f;
	unsigned		 wt;

	/* DIS's own shape: the loop below would read it the same. */
	if (entry_dis(p, n, &s, &slen, &q, &seq_len)) {
		part = codec_cached_partition(c, (const char *)s, slen);
		seq_at = (const char *)q;
		r.p = r.end;
	}
	while (r.p < r.end) {
		if (rd_key(&r, &f, &wt) != 0)
			return -EBADMSG;
		if (f == F_ERROR_CODE || f == F_ERROR_MESSAGE ||
		    f == F_SHARD_ID || f == F_SEQUENCE) {
			if (rd_string(&r, wt, &s, &slen) != 0)
				return -EBADMSG;
			if (f == F_ERROR_CODE) {
				code = s;
				codelen = slen;
			} else if (f == F_ERROR_MESSAGE) {
				msg = s;
				msglen = slen;
			} else if (f == F_SHARD_ID)
				part = codec_cached_partition(c,
				    (const char *)s, slen);
			else {
				seq_at = (const char *)s;
				seq_len = slen;
			}
		} else if (rd_skip(&r, wt) != 0)
			return -EBADMSG;
	}
	res->code[0] = res->message[0] = '\0';
	res->partition = codelen == 0 ? part : -1;
	res->seq = -1;			/* codec_last_seqs */
	res->seq_at = codelen == 0 && seq_len <= UINT32_MAX ? seq_at : NULL;
	res->seq_len = (uint32_t)seq_len;
	if (codelen == 0)
		return 0;
	copy_trunc(res->code, sizeof(res->code), code, codelen);
	copy_trunc(res->message, sizeof(res->message), msg, msglen);
	return 1;
}

/*
 * The entries (field 22) of the PutRecordsResult body into res[0..max-1],
 * or only checked when res is NULL; their number into *count.  The number
 * of failed entries, or -EBADMSG (pbuf_parse_put's reasons, and an entry
 * past max).
 */
static int
parse_result(const char *body, size_t len, struct codec_result *res,
    size_t max, size_t *count)
{
	struct codec_result	 scratch;
	struct rd		 r;
	const unsigned char	*p;
	uint64_t		 v;
	size_t			 plen;
	uint32_t		 f;
	unsigned		 wt;
	int			 failed = 0, rc;
	bool			 have_count = false;
	struct codec_part_cache	 c;

	c.n = c.next = 0;
	*count = 0;
	if (body == NULL)
		return -EBADMSG;
	r.p = (const unsigned char *)body;
	r.end = r.p + len;
	while (r.p < r.end) {
		if (rd_key(&r, &f, &wt) != 0)
			return -EBADMSG;
		if (f == F_FAILED_COUNT) {
			/* Required, but the entries are what counts. */
			if (wt != WT_VARINT || rd_varint(&r, &v) != 0)
				return -EBADMSG;
			have_count = true;
		} else if (f == F_RESULTS) {
			/* One entry more than records sent: no room, bad. */
			if (wt != WT_LEN || *count == max ||
			    rd_len(&r, &p, &plen) != 0)
				return -EBADMSG;
			rc = parse_entry(p, plen, res != NULL ? &res[*count] :
			    &scratch, &c);
			if (rc < 0)
				return rc;
			(*count)++;
			failed += rc;
		} else if (rd_skip(&r, wt) != 0)
			return -EBADMSG;
	}
	return have_count ? failed : -EBADMSG;
}

int
pbuf_parse_put(const char *body, size_t len, struct codec_result *res,
    size_t n)
{
	size_t	 count;
	int	 rc;

	rc = parse_result(body, len, res, n, &count);
	if (rc >= 0 && count != n)
		return -EBADMSG;
	if (rc >= 0)
		codec_last_seqs(res, n);
	return rc;
}

int
pbuf_put_entries(const char *body, size_t len)
{
	size_t	 count;
	int	 rc;

	rc = parse_result(body, len, NULL, INT_MAX, &count);
	return rc < 0 ? rc : (int)count;
}
