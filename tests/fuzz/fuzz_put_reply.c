/*
 * libFuzzer target for the reply parsers of codec.c and pbuf.c.  The input,
 * minus its first byte, is a response body; the first byte picks n, the
 * number of records the request is said to have held (0..64).  The same
 * body goes through codec_parse_put, pbuf_parse_put (the protobuf reply),
 * codec_parse_error and codec_parse_describe, and each result is checked
 * against the contracts in codec.h and pbuf.h: a count within 0..n or
 * -EBADMSG, and NUL-terminated fixed-size strings; codec_put_entries
 * agrees with codec_parse_put.  The download replies
 * of codec_read.h go through the same body: a DescribeStream page, a
 * GetCursor and a GetRecords reply (every record taken out, decoded and
 * written as a JSON line), GetCheckpoint and ListApps replies, and base64
 * decoding of the body itself.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/codec.h"
#include "wire/codec_read.h"
#include "wire/pbuf.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define MAX_N	64

static void
check_terminated(const char *s, size_t size)
{
	if (memchr(s, '\0', size) == NULL)
		abort();
}

static void
fuzz_put(const char *body, size_t len, size_t n,
    int (*parse)(const char *, size_t, struct codec_result *, size_t))
{
	struct codec_result	*res;
	size_t			 i;
	int			 rc, failed = 0;

	/* Exactly n entries, so ASan sees any write past res[n - 1]. */
	res = malloc(n ? n * sizeof(*res) : 1);
	if (res == NULL)
		abort();
	memset(res, 0xa5, n * sizeof(*res));
	rc = parse(body, len, res, n);
	if (rc != -EBADMSG && (rc < 0 || (size_t)rc > n))
		abort();
	if (rc >= 0) {
		for (i = 0; i < n; i++) {
			check_terminated(res[i].code, sizeof(res[i].code));
			check_terminated(res[i].message,
			    sizeof(res[i].message));
			failed += res[i].code[0] != '\0';
		}
		/* The return value is the number of failed records. */
		if (failed != rc)
			abort();
	}
	free(res);
}

/*
 * codec_put_entries agrees with codec_parse_put (its fast path included):
 * a reply that parses for n holds n entries, and one that holds k parses
 * for k.
 */
static void
fuzz_entries(const char *body, size_t len, size_t n)
{
	struct codec_result	*res;
	int			 k, rc;

	k = codec_put_entries(body, len);
	if (k != -EBADMSG && k < 0)
		abort();
	res = malloc((n > (size_t)MAX(k, 0) ? n : (size_t)MAX(k, 0)) *
	    sizeof(*res) + 1);
	if (res == NULL)
		abort();
	rc = codec_parse_put(body, len, res, n);
	if (rc >= 0 && k != (int)n)
		abort();
	if (k >= 0 && codec_parse_put(body, len, res, (size_t)k) < 0)
		abort();
	free(res);
}

static void
fuzz_error(const char *body, size_t len)
{
	char	 code[32], message[160], tiny[4];
	int	 rc;

	memset(code, 0xa5, sizeof(code));
	memset(message, 0xa5, sizeof(message));
	rc = codec_parse_error(body, len, code, sizeof(code), message,
	    sizeof(message));
	if (rc != 0 && rc != -EBADMSG)
		abort();
	check_terminated(code, sizeof(code));
	check_terminated(message, sizeof(message));
	if (rc == -EBADMSG && (code[0] != '\0' || message[0] != '\0'))
		abort();
	/* Truncation into very small outputs. */
	(void)codec_parse_error(body, len, tiny, 1, tiny + 1, 3);
	if (tiny[0] != '\0')
		abort();
	check_terminated(tiny + 1, 3);
}

static void
fuzz_describe(const char *body, size_t len)
{
	struct stream_info	 si;
	static const struct stream_info zero;
	int			 rc;

	memset(&si, 0xa5, sizeof(si));
	rc = codec_parse_describe(body, len, &si);
	if (rc != 0 && rc != -EBADMSG)
		abort();
	if (rc == -EBADMSG && memcmp(&si, &zero, sizeof(si)) != 0)
		abort();
	if (rc == 0) {
		check_terminated(si.status, sizeof(si.status));
		check_terminated(si.type, sizeof(si.type));
		check_terminated(si.id, sizeof(si.id));
		if (si.writable_partitions < 0)
			abort();
	}
}


/* GetCheckpoint and ListApps replies (section 10). */
static void
fuzz_apps(const char *body, size_t len)
{
	struct codec_apps apps;
	int64_t		 seq;
	char		*meta;
	size_t		 i;

	if (codec_parse_checkpoint(body, len, &seq, &meta) == 0) {
		if (seq < -1 || (meta != NULL && meta[0] == '\0'))
			abort();
	} else if (meta != NULL)
		abort();
	free(meta);
	memset(&apps, 0, sizeof(apps));
	(void)codec_parse_apps(body, len, &apps);
	for (i = 0; i < apps.napps; i++) {
		check_terminated(apps.apps[i].name, sizeof(apps.apps[i].name));
		check_terminated(apps.apps[i].id, sizeof(apps.apps[i].id));
		if (apps.apps[i].streams == NULL)
			abort();
	}
	codec_apps_cleanup(&apps);
}
static void
fuzz_download(const char *body, size_t len)
{
	struct codec_stream	 st;
	struct codec_records	*recs;
	struct codec_record	 rec;
	struct buf		 b;
	size_t			 i;
	char			*cursor;

	memset(&st, 0, sizeof(st));
	if (codec_parse_stream(body, len, &st) == 0) {
		for (i = 0; i < st.nparts; i++) {
			check_terminated(st.parts[i].id, sizeof(st.parts[i].id));
			check_terminated(st.parts[i].seq_range,
			    sizeof(st.parts[i].seq_range));
			if (st.parts[i].seq_next < st.parts[i].seq_first)
				abort();
		}
	}
	codec_stream_cleanup(&st);
	if (codec_parse_cursor(body, len, &cursor) == 0) {
		if (cursor == NULL || cursor[0] == '\0')
			abort();
		free(cursor);
	} else if (cursor != NULL)
		abort();
	fuzz_apps(body, len);
	buf_init(&b);
	if (codec_parse_records(body, len, &recs) == 0) {
		for (i = 0; i < codec_records_count(recs); i++) {
			codec_records_get(recs, i, &rec);
			if (rec.seq < 0 || rec.seq_text == NULL ||
			    codec_base64_decode(rec.data64, rec.data64_len,
			    &b) != 0)
				abort();
			codec_record_json(&b, "p", &rec);
		}
		codec_records_free(recs);
	} else if (recs != NULL)
		abort();
	buf_reset(&b);
	if (codec_base64_decode(body, len, &b) == 0 && b.len > len)
		abort();
	buf_cleanup(&b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*body;
	char		*copy;
	size_t		 n, len;

	if (size == 0)
		return 0;
	n = data[0] % (MAX_N + 1);
	len = size - 1;
	/* A copy of exactly len bytes: no NUL after it, as from the network. */
	copy = malloc(len ? len : 1);
	if (copy == NULL)
		abort();
	memcpy(copy, data + 1, len);
	body = copy;
	fuzz_put(body, len, n, codec_parse_put);
	fuzz_put(body, len, n, pbuf_parse_put);
	fuzz_entries(body, len, n);
	fuzz_error(body, len);
	fuzz_describe(body, len);
	fuzz_download(body, len);
	free(copy);
	return 0;
}
