/*
 * The protobuf PutRecords wire format the DIS SDK offers
 * (body.serialize.type = protobuf; field numbers in dis-api.md section 1):
 * the request body written directly into the caller's reused buffer, record
 * bytes as they are (no base64), and a bounds-checked decoder for the
 * PutRecordsResult reply.  No protobuf library: the handful of fields are
 * encoded and decoded by hand.
 */
#ifndef DISAGENT_PBUF_H
#define DISAGENT_PBUF_H

#include <stddef.h>

#include "base/util.h"
#include "wire/codec.h"

/* The Content-Type of protobuf PutRecords requests (and replies). */
#define PBUF_CONTENT_TYPE	"application/x-protobuf; charset=utf-8"

/*
 * Most bytes pbuf_put_add writes around one record's data and partition
 * key: three tags and three varint lengths of at most 10 bytes each.
 */
#define PBUF_ENTRY_OVERHEAD	33

/*
 * PutRecords body, mirroring codec_put_begin/add/end: begin, add each
 * record, end.  stream_id may be NULL or "" (then stream_name, field 1, is
 * sent; else stream_id, field 30).  Each record is one PutRecordsRequest-
 * Entry (field 2) holding data (field 3, the bytes as given) and, unless
 * partition_key is NULL, partitionKey (field 5).  Appends to *out; a record
 * takes at most len + strlen(partition_key) + PBUF_ENTRY_OVERHEAD bytes.
 * pbuf_put_end writes nothing (protobuf has no closing token) and exists so
 * the two formats are used alike.
 */
void	pbuf_put_begin(struct buf *out, const char *stream_name,
	    const char *stream_id);
void	pbuf_put_add(struct buf *out, const void *data, size_t len,
	    const char *partition_key);
/* The same with the key's length known (codec_put_addn). */
void	pbuf_put_addn(struct buf *out, const void *data, size_t len,
	    const char *partition_key, size_t klen);
void	pbuf_put_end(struct buf *out);

/*
 * Parse a 200 PutRecords reply (a PutRecordsResult) for a request of n
 * records into res[0..n-1], with codec_parse_put's contract: returns the
 * number of failed records (>= 0), or -EBADMSG when the body is not such a
 * message -- truncated, a varint or length running past the end or past 10
 * bytes, a group or an invalid wire type, a known field with the wrong wire
 * type, a NUL inside errorCode or errorMessage, failedRecordCount (required
 * in the .proto) absent -- or when it holds other than n records (field
 * 22).  Unknown fields are skipped by wire type.  A record failed iff its
 * errorCode (field 25) is non-empty; code and message are truncated on a
 * UTF-8 character boundary and always NUL-terminated.  Only res[0..n-1] is
 * written, whatever the input.
 */
int	pbuf_parse_put(const char *body, size_t len, struct codec_result *res,
	    size_t n) WARN_UNUSED;

/*
 * How many entries a PutRecordsResult holds when it is otherwise
 * well-formed (codec_put_entries' counterpart), or -EBADMSG.
 */
int	pbuf_put_entries(const char *body, size_t len) WARN_UNUSED;

#endif
