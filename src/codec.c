/*
 * DIS wire formats (spec/dis-api.md sections 2, 4 and 5).  The PutRecords
 * body is written straight into the caller's reused buffer: compact JSON,
 * records base64-encoded in place with a table encoder, strings escaped by
 * hand.  Replies (PutRecords, errors, DescribeStream) are parsed with
 * jansson, which no other file includes; results are copied into fixed
 * fields, truncated on a UTF-8 character boundary.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include <jansson.h>
#include <lz4.h>
#include <zstd.h>

#include "codec.h"
#include "util.h"

static const char b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t
codec_base64_len(size_t n)
{
	return (n + 2) / 3 * 4;
}

void
codec_base64(const void *src, size_t n, struct buf *out)
{
	const unsigned char	*p = src;
	char			*o;
	uint32_t		 v;
	size_t			 i, olen;

	olen = codec_base64_len(n);
	buf_reserve(out, olen);
	o = out->data + out->len;
	for (i = 0; i + 3 <= n; i += 3) {
		v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		*o++ = b64[v >> 18];
		*o++ = b64[(v >> 12) & 0x3f];
		*o++ = b64[(v >> 6) & 0x3f];
		*o++ = b64[v & 0x3f];
	}
	if (n - i == 1) {
		v = (uint32_t)p[i] << 16;
		*o++ = b64[v >> 18];
		*o++ = b64[(v >> 12) & 0x3f];
		*o++ = '=';
		*o++ = '=';
	} else if (n - i == 2) {
		v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
		*o++ = b64[v >> 18];
		*o++ = b64[(v >> 12) & 0x3f];
		*o++ = b64[(v >> 6) & 0x3f];
		*o++ = '=';
	}
	out->len += olen;
	out->data[out->len] = '\0';
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

void
codec_put_add(struct buf *out, const void *data, size_t len,
    const char *partition_key)
{
	/* The first record follows the '[' written by codec_put_begin. */
	if (out->len > 0 && out->data[out->len - 1] != '[')
		buf_addc(out, ',');
	buf_reserve(out, codec_base64_len(len) + 32);
	buf_addstr(out, "{\"data\":\"");
	codec_base64(data, len, out);
	buf_addc(out, '"');
	if (partition_key != NULL) {
		buf_addstr(out, ",\"partition_key\":\"");
		json_escape(out, partition_key);
		buf_addc(out, '"');
	}
	buf_addc(out, '}');
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

/* Fill one result from a reply record; 1 when it failed, 0 when not. */
static int
put_result(json_t *rec, struct codec_result *res)
{
	const char	*code;

	code = get_str(rec, "error_code");
	if (code == NULL || *code == '\0') {
		res->code[0] = '\0';
		res->message[0] = '\0';
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
		out->len = (size_t)w;
	} else if (z == CODEC_ZIP_ZSTD) {
		bound = ZSTD_compressBound(n);
		buf_alloc_exact(out, bound);
		r = ZSTD_compress(out->data, bound, in, n, 3);
		if (ZSTD_isError(r))
			return -EIO;
		out->len = r;
	} else
		return -EINVAL;
	out->data[out->len] = '\0';
	return 0;
}
