/*
 * DIS wire formats (spec/dis-api.md sections 2, 4 and 5).  The PutRecords
 * body is written straight into the caller's reused buffer: compact JSON,
 * records base64-encoded in place with a table encoder, strings escaped by
 * hand.  Replies (PutRecords, errors, DescribeStream) are parsed with
 * jansson (the read-back replies in codec_read.c), but for the common
 * PutRecords reply, every record acknowledged, which codec_ack.c reads
 * without a tree; results are copied into fixed fields, truncated on a
 * UTF-8 character boundary.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>

#include <jansson.h>
#include <lz4.h>
#include <zstd.h>

#include "base/util.h"
#include "wire/codec.h"

static const char b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t
codec_base64_len(size_t n)
{
	return (n + 2) / 3 * 4;
}

/*
 * Two output characters for every 12-bit group (8 KiB, built on first
 * use): half the table lookups of a 6-bit encoder, and the main loop reads
 * 6 input bytes with one 8-byte load.
 */
static uint16_t	b64pair[4096];

static void
b64pair_init(void)
{
	unsigned char	 pr[2];
	size_t		 i;

	for (i = 0; i < 4096; i++) {
		pr[0] = (unsigned char)b64[i >> 6];
		pr[1] = (unsigned char)b64[i & 0x3f];
		memcpy(&b64pair[i], pr, 2);
	}
}

static inline char *
b64_put2(char *o, uint64_t group)
{
	memcpy(o, &b64pair[group & 0xfff], 2);
	return o + 2;
}

/* Encode n bytes at p into o (room for codec_base64_len(n)); the end. */
static char *
b64_encode(const unsigned char *p, size_t n, char *o)
{
	uint64_t	 v;
	size_t		 i = 0;

	if (b64pair[0] == 0)
		b64pair_init();
	for (; i + 8 <= n; i += 6) {
		memcpy(&v, p + i, 8);
		v = be64toh(v);
		o = b64_put2(o, v >> 52);
		o = b64_put2(o, v >> 40);
		o = b64_put2(o, v >> 28);
		o = b64_put2(o, v >> 16);
	}
	for (; i + 3 <= n; i += 3) {
		v = (uint64_t)p[i] << 16 | (uint64_t)p[i + 1] << 8 | p[i + 2];
		o = b64_put2(o, v >> 12);
		o = b64_put2(o, v);
	}
	if (n - i == 1) {
		v = p[i];
		*o++ = b64[v >> 2];
		*o++ = b64[(v & 0x03) << 4];
		*o++ = '=';
		*o++ = '=';
	} else if (n - i == 2) {
		v = (uint64_t)p[i] << 8 | p[i + 1];
		*o++ = b64[v >> 10];
		*o++ = b64[(v >> 4) & 0x3f];
		*o++ = b64[(v & 0x0f) << 2];
		*o++ = '=';
	}
	return o;
}

size_t
codec_request_cap(const char *type, size_t max)
{
	size_t	 cap = strcmp(type, "ADVANCED") == 0 ? 5 * 1024 * 1024 :
	    1024 * 1024;

	return MIN(cap, max);
}

void
codec_base64(const void *src, size_t n, struct buf *out)
{
	size_t	 olen;

	olen = codec_base64_len(n);
	buf_reserve(out, olen);
	b64_encode(src, n, out->data + out->len);
	buf_added(out, olen);
}

/* Append s as the inside of a JSON string: ", \ and controls escaped. */
static void
json_escape(struct buf *out, const char *s)
{
	static const char	 hex[] = "0123456789abcdef";
	const char		*run;
	unsigned char		 c;

	for (run = s; *s != '\0'; s++) {
		c = (unsigned char)*s;
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		buf_add(out, run, (size_t)(s - run));
		run = s + 1;
		if (c == '"' || c == '\\') {
			buf_addc(out, '\\');
			buf_addc(out, (char)c);
		} else {
			buf_addstr(out, "\\u00");
			buf_addc(out, hex[c >> 4]);
			buf_addc(out, hex[c & 0x0f]);
		}
	}
	buf_add(out, run, (size_t)(s - run));
}

void
codec_put_begin(struct buf *out, const char *stream_name,
    const char *stream_id)
{
	if (stream_id != NULL && *stream_id != '\0') {
		buf_addstr(out, "{\"stream_id\":\"");
		json_escape(out, stream_id);
	} else {
		buf_addstr(out, "{\"stream_name\":\"");
		json_escape(out, stream_name ? stream_name : "");
	}
	buf_addstr(out, "\",\"records\":[");
}

#define ONES	0x0101010101010101ULL
#define HIGHS	0x8080808080808080ULL

/* Whether one of the 8 bytes of w is a control character, '"' or '\\'
 * (bytes of 0x80 and above, UTF-8, are plain). */
static inline bool
word_special(uint64_t w)
{
	uint64_t q = w ^ (ONES * '"'), b = w ^ (ONES * '\\');

	return (((w - ONES * 0x20) & ~w) | ((q - ONES) & ~q) |
	    ((b - ONES) & ~b)) & HIGHS;
}

/* True when s (n bytes) can go inside a JSON string as it is; a word at
 * a time (a partition key, for every record). */
static bool
json_plain(const char *s, size_t n)
{
	uint64_t	 w;
	size_t		 i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&w, s + i, 8);
		if (word_special(w))
			return false;
	}
	for (; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == '"' || s[i] == '\\')
			return false;
	return true;
}

/*
 * Hot: called once per record shipped.  The common case (a key that needs
 * no escaping) is written with one reservation and plain stores.
 */
void
codec_put_add(struct buf *out, const void *data, size_t len,
    const char *partition_key)
{
	codec_put_addn(out, data, len, partition_key,
	    partition_key ? strlen(partition_key) : 0);
}

void
codec_put_addn(struct buf *out, const void *data, size_t len,
    const char *partition_key, size_t klen)
{
	static const char head[] = "{\"data\":\"";
	static const char mid[] = "\",\"partition_key\":\"";
	char		*o;

	buf_reserve(out, codec_base64_len(len) + klen + sizeof(head) +
	    sizeof(mid) + 4);
	o = out->data + out->len;
	/* The first record follows the '[' written by codec_put_begin. */
	if (out->len > 0 && o[-1] != '[')
		*o++ = ',';
	memcpy(o, head, sizeof(head) - 1);
	o = b64_encode(data, len, o + sizeof(head) - 1);
	if (partition_key == NULL) {
		*o++ = '"';
		*o++ = '}';
		buf_setlen(out, (size_t)(o - out->data));
	} else if (json_plain(partition_key, klen)) {
		memcpy(o, mid, sizeof(mid) - 1);
		o += sizeof(mid) - 1;
		memcpy(o, partition_key, klen);
		o += klen;
		*o++ = '"';
		*o++ = '}';
		buf_setlen(out, (size_t)(o - out->data));
	} else {
		buf_setlen(out, (size_t)(o - out->data));
		buf_addstr(out, mid);
		json_escape(out, partition_key);
		buf_addstr(out, "\"}");
	}
	out->data[out->len] = '\0';
}

void
codec_dead_letter(struct buf *out, long long time, const char *flow,
    const char *file, unsigned long long offset, const char *code,
    const char *message, const void *data, size_t len)
{
	buf_printf(out, "{\"time\":%lld,\"flow\":\"", time);
	json_escape(out, flow);
	buf_addstr(out, "\",\"file\":\"");
	json_escape(out, file);
	buf_printf(out, "\",\"offset\":%llu,\"code\":\"", offset);
	json_escape(out, code);
	buf_addstr(out, "\",\"message\":\"");
	json_escape(out, message);
	buf_addstr(out, "\",\"data\":\"");
	codec_base64(data, len, out);
	buf_addstr(out, "\"}\n");
}

void
codec_put_end(struct buf *out)
{
	buf_addstr(out, "]}");
}

/*
 * Copy src (NULL counts as "") into dst[size], always NUL-terminated unless
 * size is 0, cut at a UTF-8 character boundary when it does not fit.
 */
static void
copy_trunc(char *dst, size_t size, const char *src)
{
	size_t	 n;

	if (size == 0)
		return;
	if (src == NULL)
		src = "";
	n = strlen(src);
	if (n >= size) {
		n = size - 1;
		/* Back off continuation bytes (10xxxxxx) of a split char. */
		while (n > 0 && ((unsigned char)src[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* The string value of key in obj, or NULL when absent or not a string. */
static const char *
get_str(json_t *obj, const char *key)
{
	json_t	*v;

	v = json_object_get(obj, key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

static json_t *
load(const char *body, size_t len)
{
	json_error_t	 err;

	if (body == NULL)
		return NULL;
	return json_loadb(body, len, 0, &err);
}

int32_t
codec_partition_index(const char *s, size_t n)
{
	int64_t	 v;

	if (n > 8 && memcmp(s, "shardId-", 8) == 0) {
		s += 8;
		n -= 8;
	}
	v = codec_seq_value(s, n);
	return v >= 0 && v <= INT32_MAX ? (int32_t)v : -1;
}

int64_t
codec_seq_value(const char *s, size_t n)
{
	uint64_t	 v = 0;
	size_t		 i;

	if (n == 0 || n > 19)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	return v <= INT64_MAX ? (int64_t)v : -1;
}

/* The partition and sequence number of an acknowledged record. */
static void
put_where(json_t *rec, struct codec_result *res)
{
	const char	*p = get_str(rec, "partition_id");
	const char	*q = get_str(rec, "sequence_number");

	res->partition = p != NULL ? codec_partition_index(p, strlen(p)) : -1;
	res->seq = q != NULL ? codec_seq_value(q, strlen(q)) : -1;
}

/* Fill one result from a reply record; 1 when it failed, 0 when not. */
static int
put_result(json_t *rec, struct codec_result *res)
{
	const char	*code;

	res->partition = -1;
	res->seq = -1;
	code = get_str(rec, "error_code");
	if (code == NULL || *code == '\0') {
		res->code[0] = '\0';
		res->message[0] = '\0';
		put_where(rec, res);
		return 0;
	}
	copy_trunc(res->code, sizeof(res->code), code);
	copy_trunc(res->message, sizeof(res->message),
	    get_str(rec, "error_message"));
	return 1;
}

int
codec_parse_put(const char *body, size_t len, struct codec_result *res,
    size_t n)
{
	json_t	*root, *recs, *rec;
	size_t	 i;
	int	 failed = 0;

	if (n > 0 && codec_all_acknowledged(body, len, res, n)) {
		for (i = 0; i < n; i++)
			res[i].code[0] = res[i].message[0] = '\0';
		return 0;
	}
	root = load(body, len);
	recs = json_object_get(root, "records");
	if (!json_is_array(recs) || json_array_size(recs) != n)
		goto bad;
	for (i = 0; i < n; i++) {
		rec = json_array_get(recs, i);
		if (!json_is_object(rec))
			goto bad;
		failed += put_result(rec, &res[i]);
	}
	json_decref(root);
	return failed;
bad:
	json_decref(root);
	return -EBADMSG;
}

int
codec_put_entries(const char *body, size_t len)
{
	json_t	*root, *recs, *rec;
	size_t	 i;
	int	 n = -EBADMSG;

	root = load(body, len);
	recs = json_object_get(root, "records");
	if (json_is_array(recs) && json_array_size(recs) <= INT_MAX) {
		n = (int)json_array_size(recs);
		json_array_foreach(recs, i, rec)
			if (!json_is_object(rec))
				n = -EBADMSG;
	}
	json_decref(root);
	return n;
}

int
codec_parse_error(const char *body, size_t len, char *code, size_t codelen,
    char *message, size_t msglen)
{
	json_t		*root;
	const char	*c, *m;
	int		 rc = -EBADMSG;

	copy_trunc(code, codelen, "");
	copy_trunc(message, msglen, "");
	root = load(body, len);
	if (!json_is_object(root))
		goto done;
	/* DIS writes camelCase, the API gateway snake_case (section 4). */
	c = get_str(root, "errorCode");
	if (c == NULL)
		c = get_str(root, "error_code");
	m = get_str(root, "message");
	if (m == NULL)
		m = get_str(root, "error_msg");
	if (c == NULL && m == NULL)
		goto done;
	copy_trunc(code, codelen, c);
	copy_trunc(message, msglen, m);
	rc = 0;
done:
	json_decref(root);
	return rc;
}

/* Copy a string field; -EBADMSG when too long, or absent and required. */
static int
copy_field(json_t *obj, const char *key, char *dst, size_t size,
    int required)
{
	const char	*s;

	s = get_str(obj, key);
	if (s == NULL)
		return required ? -EBADMSG : 0;
	if (strlen(s) >= size)
		return -EBADMSG;	/* a truncated id or status is wrong */
	copy_trunc(dst, size, s);
	return 0;
}

int
codec_parse_describe(const char *body, size_t len, struct stream_info *out)
{
	json_t	*root, *wp;
	int	 rc = -EBADMSG;

	memset(out, 0, sizeof(*out));
	root = load(body, len);
	if (!json_is_object(root))
		goto done;
	if (copy_field(root, "status", out->status, sizeof(out->status),
	    1) != 0 ||
	    copy_field(root, "stream_type", out->type, sizeof(out->type),
	    1) != 0 ||
	    copy_field(root, "stream_id", out->id, sizeof(out->id), 0) != 0)
		goto done;
	wp = json_object_get(root, "writable_partition_count");
	if (wp != NULL && (!json_is_integer(wp) || json_integer_value(wp) < 0))
		goto done;
	out->writable_partitions = wp ? (long)json_integer_value(wp) : 0;
	rc = 0;
done:
	if (rc != 0)
		memset(out, 0, sizeof(*out));
	json_decref(root);
	return rc;
}

enum codec_zip
codec_zip_parse(const char *s)
{
	if (s != NULL && strcmp(s, "lz4") == 0)
		return CODEC_ZIP_LZ4;
	if (s != NULL && strcmp(s, "zstd") == 0)
		return CODEC_ZIP_ZSTD;
	return CODEC_ZIP_NONE;
}

const char *
codec_zip_name(enum codec_zip z)
{
	return z == CODEC_ZIP_LZ4 ? "lz4" : z == CODEC_ZIP_ZSTD ? "zstd" : "";
}

int
codec_compress(enum codec_zip z, const void *in, size_t n, struct buf *out)
{
	size_t	 bound, r;
	int	 w;

	if (z == CODEC_ZIP_LZ4) {
		if (n > (size_t)LZ4_MAX_INPUT_SIZE)
			return -EIO;
		bound = (size_t)LZ4_compressBound((int)n);
		buf_alloc_exact(out, bound);
		w = LZ4_compress_default(in, out->data, (int)n, (int)bound);
		if (w <= 0)
			return -EIO;
		buf_setlen(out, (size_t)w);
	} else if (z == CODEC_ZIP_ZSTD) {
		bound = ZSTD_compressBound(n);
		buf_alloc_exact(out, bound);
		r = ZSTD_compress(out->data, bound, in, n, 3);
		if (ZSTD_isError(r))
			return -EIO;
		buf_setlen(out, r);
	} else
		return -EINVAL;
	return 0;
}
