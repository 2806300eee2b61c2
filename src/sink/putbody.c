/*
 * PutRecords request bodies (putbody.h).  The body is written into a buffer
 * of exactly the size reserved with each record (batch.c), not a doubled
 * capacity.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"
#include "dis/disapi.h"
#include "sink/batch.h"
#include "sink/putbody.h"
#include "wire/pbuf.h"

/* A PutRecords body format (body.serialize.type): its writer and parser. */
struct body_format {
	const char	*ctype;		/* Content-Type of PutRecords */
	size_t		 entry_overhead;	/* bytes around a record's data
					   and key, beyond the data's size */
	bool		 base64;	/* data sent as base64 text */
	void		(*begin)(struct buf *, const char *, const char *);
	void		(*add)(struct buf *, const void *, size_t,
			    const char *, size_t);
	void		(*end)(struct buf *);
	int		(*parse)(const char *, size_t, struct codec_result *,
			    size_t);
	int		(*entries)(const char *, size_t);
};

static const struct body_format json_format = {
	DISAPI_JSON, 40, true,
	codec_put_begin, codec_put_addn, codec_put_end, codec_parse_put,
	codec_put_entries,
};
static const struct body_format protobuf_format = {
	PBUF_CONTENT_TYPE, PBUF_ENTRY_OVERHEAD, false,
	pbuf_put_begin, pbuf_put_addn, pbuf_put_end, pbuf_parse_put,
	pbuf_put_entries,
};

struct putbody {
	const struct body_format *fmt;	/* of the requests built from now */
	bool		 fallback;	/* auto: protobuf, JSON once refused */
	enum codec_zip	 zip;
};

struct putbody *
putbody_new(const struct conf *conf)
{
	struct putbody	*pb;

	pb = xcalloc(1, sizeof(*pb));
	pb->fallback = strcmp(conf->serialize_type, "auto") == 0;
	pb->fmt = pb->fallback ||
	    strcmp(conf->serialize_type, "protobuf") == 0 ?
	    &protobuf_format : &json_format;
	pb->zip = conf->compress ? codec_zip_parse(conf->compress_type) :
	    CODEC_ZIP_NONE;
	return pb;
}

void
putbody_free(struct putbody *pb)
{
	free(pb);
}

bool
putbody_auto(const struct putbody *pb)
{
	return pb->fallback;
}

void
putbody_fall_back(struct putbody *pb)
{
	if (pb->fallback)
		pb->fmt = &json_format;
}

/* The format req was written in (none yet: the putbody's). */
static const struct body_format *
req_format(const struct putbody *pb, const struct putbody_req *req)
{
	return req->fmt != NULL ? req->fmt : pb->fmt;
}

const char *
putbody_ctype(const struct putbody *pb, const struct putbody_req *req)
{
	return req_format(pb, req)->ctype;
}

bool
putbody_req_protobuf(const struct putbody *pb, const struct putbody_req *req)
{
	return req_format(pb, req) == &protobuf_format;
}

void
putbody_req_init(struct putbody_req *req)
{
	buf_init(&req->body);
	req->fmt = NULL;
	req->sent_idx = NULL;
	req->nsent = 0;
}

void
putbody_req_cleanup(struct putbody_req *req)
{
	buf_cleanup(&req->body);
	free(req->sent_idx);
	req->sent_idx = NULL;
	req->nsent = 0;
}

void
putbody_req_drop_body(struct putbody_req *req)
{
	buf_cleanup(&req->body);
}

/* The body of the records not yet done (at most limit of them). */
static void
write_records(const struct body_format *fmt, const struct batch *b,
    size_t limit, const char *stream, const char *stream_id,
    struct putbody_req *req)
{
	const struct batch_rec *r;
	size_t		 i;

	buf_cleanup(&req->body);
	buf_alloc_exact(&req->body, (fmt->base64 ?
	    codec_base64_len(b->data.len) : b->data.len) + b->keys.len +
	    (b->nrecs - b->ndone) * fmt->entry_overhead + 128);
	req->fmt = fmt;
	fmt->begin(&req->body, stream, stream_id);
	req->sent_idx = xrealloc(req->sent_idx, b->nrecs *
	    sizeof(*req->sent_idx));
	req->nsent = 0;
	for (i = 0; i < b->nrecs; i++) {
		r = &b->recs[i];
		if (r->done)
			continue;
		if (limit > 0 && req->nsent == limit)
			break;
		fmt->add(&req->body, b->data.data + r->off, r->len,
		    b->keys.data + r->key, batch_key_len(b, i));
		req->sent_idx[req->nsent++] = i;
	}
	fmt->end(&req->body);
}

/*
 * body.compress.enabled: replace the body, JSON or protobuf, by its lz4
 * block or zstd frame (signed as sent) and fill the two headers DIS needs.
 */
static int
compress_body(const struct putbody *pb, struct buf *body,
    struct putbody_headers *hdrs)
{
	struct buf	 z;
	int		 rc;

	hdrs->n = 0;
	if (pb->zip == CODEC_ZIP_NONE)
		return 0;
	buf_init(&z);
	rc = codec_compress(pb->zip, body->data, body->len, &z);
	if (rc != 0) {
		buf_cleanup(&z);
		buf_cleanup(body);
		return rc;
	}
	snprintf(hdrs->len, sizeof(hdrs->len), "%zu", body->len);
	buf_cleanup(body);
	*body = z;
	hdrs->h[0].name = "Content-Encoding";
	hdrs->h[0].value = codec_zip_name(pb->zip);
	hdrs->h[1].name = pb->zip == CODEC_ZIP_LZ4 ?
	    "x-dis-lz4-content-length" : "x-dis-zstd-content-length";
	hdrs->h[1].value = hdrs->len;
	hdrs->n = 2;
	return 0;
}

int
putbody_build(const struct putbody *pb, const struct batch *b, size_t limit,
    const char *stream, const char *stream_id, struct putbody_req *req,
    struct putbody_headers *hdrs)
{
	write_records(pb->fmt, b, limit, stream, stream_id, req);
	return compress_body(pb, &req->body, hdrs);
}

int
putbody_parse(const struct putbody *pb, const struct putbody_req *req,
    const char *body, size_t len, struct codec_result *res, size_t n)
{
	return req_format(pb, req)->parse(body, len, res, n);
}

int
putbody_entries(const struct putbody *pb, const struct putbody_req *req,
    const char *body, size_t len)
{
	return req_format(pb, req)->entries(body, len);
}
