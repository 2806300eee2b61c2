/*
 * libFuzzer target for the download replies of codec_read.c and the
 * DescribeStream reply of codec.c: the input is a response body, parsed as
 * each of them.  Checked against codec_read.h and codec.h:
 * - DescribeStream: codec_parse_describe is 0 with NUL-terminated fields
 *   and a non-negative partition count, or -EBADMSG with *out zeroed; the
 *   body as two pages of codec_parse_stream appends the second page's
 *   partitions after the first's, each with NUL-terminated fields and
 *   seq_first <= seq_next;
 * - GetCursor: a non-empty cursor on 0, none on -EBADMSG;
 * - GetRecords: every record's data decodes as base64, sequence numbers
 *   are non-negative, and the JSON line codec_record_json writes for it is
 *   one JSON object whose sequence_number is the text as sent.
 * The seed corpus is the test endpoint's own replies (make_corpus.py).
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "wire/codec.h"
#include "wire/codec_read.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check_terminated(const char *s, size_t size)
{
	if (memchr(s, '\0', size) == NULL)
		abort();
}

static void
fuzz_describe(const char *body, size_t len)
{
	static const struct stream_info zero;
	struct stream_info	 si;
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

static void
check_parts(const struct codec_stream *st, size_t from)
{
	const struct codec_partition *p;
	size_t			 i;

	for (i = from; i < st->nparts; i++) {
		p = &st->parts[i];
		check_terminated(p->id, sizeof(p->id));
		check_terminated(p->status, sizeof(p->status));
		check_terminated(p->hash_range, sizeof(p->hash_range));
		check_terminated(p->seq_range, sizeof(p->seq_range));
		if (p->seq_first < -1 || p->seq_next < -1 ||
		    (p->seq_first >= 0 && p->seq_next >= 0 &&
		    p->seq_next < p->seq_first))
			abort();
	}
}

static void
fuzz_stream(const char *body, size_t len)
{
	struct codec_stream	 st;
	size_t			 first;

	memset(&st, 0, sizeof(st));
	if (codec_parse_stream(body, len, &st) == 0) {
		check_terminated(st.info.status, sizeof(st.info.status));
		check_parts(&st, 0);
		first = st.nparts;
		/* The same page again: appended, the first ones kept. */
		if (codec_parse_stream(body, len, &st) != 0 ||
		    st.nparts != 2 * first)
			abort();
		check_parts(&st, first);
	}
	codec_stream_cleanup(&st);
}

static void
fuzz_cursor(const char *body, size_t len)
{
	char	*cursor = (char *)1;

	if (codec_parse_cursor(body, len, &cursor) == 0) {
		if (cursor == NULL || cursor[0] == '\0')
			abort();
		free(cursor);
	} else if (cursor != NULL)
		abort();
}

/* The line codec_record_json wrote for rec: one object, as sent. */
static void
check_line(const struct buf *b, const struct codec_record *rec)
{
	json_t		*o;
	const char	*seq;

	if (b->len == 0 || b->data[b->len - 1] != '\n' ||
	    memchr(b->data, '\n', b->len - 1) != NULL)
		abort();
	o = json_loadb(b->data, b->len - 1, 0, NULL);
	seq = json_string_value(json_object_get(o, "sequence_number"));
	if (!json_is_object(o) || seq == NULL ||
	    strcmp(seq, rec->seq_text) != 0)
		abort();
	json_decref(o);
}

static void
fuzz_records(const char *body, size_t len)
{
	struct codec_records	*recs = (struct codec_records *)1;
	struct codec_record	 rec;
	struct buf		 b;
	size_t			 i;

	buf_init(&b);
	if (codec_parse_records(body, len, &recs) == 0) {
		for (i = 0; i < codec_records_count(recs); i++) {
			codec_records_get(recs, i, &rec);
			buf_reset(&b);
			if (rec.seq < 0 || rec.seq_text == NULL ||
			    codec_base64_decode(rec.data64, rec.data64_len,
			    &b) != 0)
				abort();
			buf_reset(&b);
			codec_record_json(&b, "shardId-0000000000", &rec);
			check_line(&b, &rec);
		}
		(void)codec_records_next(recs);
		codec_records_free(recs);
	} else if (recs != NULL)
		abort();
	buf_reset(&b);
	/* Base64 never decodes to more bytes than it has. */
	if (codec_base64_decode(body, len, &b) == 0 && b.len > len)
		abort();
	buf_cleanup(&b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	*body;

	/* Exactly size bytes, as from the network: no NUL after them. */
	body = malloc(size ? size : 1);
	if (body == NULL)
		abort();
	memcpy(body, data, size);
	fuzz_describe(body, size);
	fuzz_stream(body, size);
	fuzz_cursor(body, size);
	fuzz_records(body, size);
	free(body);
	return 0;
}
