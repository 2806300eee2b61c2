/*
 * The PutRecords request of a batch (body.serialize.type, body.compress.*):
 * the records not yet done, at most a split limit of them, written as
 * JSON (codec) or protobuf (pbuf) into a struct putbody_req, then lz4- or
 * zstd-compressed when configured, with the headers DIS needs for that.
 * Also parses the reply in the format its request was written in.
 *
 * body.serialize.type = auto writes protobuf until putbody_fall_back
 * (the endpoint refused protobuf: sinkreply.h), then JSON.
 */
#ifndef DISAGENT_PUTBODY_H
#define DISAGENT_PUTBODY_H

#include <stddef.h>

#include "base/util.h"
#include "wire/codec.h"
#include "wire/signer.h"

struct batch;
struct body_format;
struct conf;
struct putbody;

/* The format and compression of conf (body.*). */
struct putbody	*putbody_new(const struct conf *);
void		 putbody_free(struct putbody *);
/* body.serialize.type = auto (whether or not it fell back yet). */
bool		 putbody_auto(const struct putbody *);
/* auto: JSON from now on (else nothing). */
void		 putbody_fall_back(struct putbody *);

/* Headers a compressed body needs (all signed). */
struct putbody_headers {
	struct sign_header h[2];
	size_t		 n;
	char		 len[24];	/* the uncompressed size */
};

/*
 * One request built from a batch: its body, and the batch's record index
 * of each entry (a reply answers the entries by position).  The sink
 * embeds one per batch it holds; putbody_req_init, putbody_req_cleanup.
 */
struct putbody_req {
	const struct body_format *fmt;	/* written in (NULL: none yet) */
	struct buf	 body;		/* as sent (compressed when configured) */
	size_t		*sent_idx;	/* record index of each entry */
	size_t		 nsent;
};

void		 putbody_req_init(struct putbody_req *);
/* The Content-Type of req (none built yet: of pb's format). */
const char	*putbody_ctype(const struct putbody *pb,
		    const struct putbody_req *req);
/* req was written as protobuf (none built yet: pb writes protobuf). */
bool		 putbody_req_protobuf(const struct putbody *pb,
		    const struct putbody_req *req);
void		 putbody_req_cleanup(struct putbody_req *);
/* Release the body once the request ended (the entries stay, for the
 * reply; its memory stays charged to the batch, which reserved it with
 * each record). */
void		 putbody_req_drop_body(struct putbody_req *);

/*
 * Write the request of b's records not yet done (at most limit of them, 0:
 * all) for stream (or stream_id when not "") into req; compress it when
 * configured and fill *hdrs.  0, or a negative errno (the compressor
 * failed; req->body is freed).
 */
int		 putbody_build(const struct putbody *, const struct batch *b,
		    size_t limit, const char *stream, const char *stream_id,
		    struct putbody_req *req,
		    struct putbody_headers *hdrs) WARN_UNUSED;

/*
 * Parse a 200 reply to req, a request of n records, into res
 * (codec_parse_put's contract, in the format req was written in).
 */
int		 putbody_parse(const struct putbody *,
		    const struct putbody_req *req, const char *body,
		    size_t len, struct codec_result *res, size_t n) WARN_UNUSED;
/* The entries a 200 reply holds when putbody_parse refused it for their
 * number (codec_put_entries, pbuf_put_entries), or -EBADMSG. */
int		 putbody_entries(const struct putbody *,
		    const struct putbody_req *req, const char *body,
		    size_t len) WARN_UNUSED;

#endif
