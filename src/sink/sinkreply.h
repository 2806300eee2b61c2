/*
 * What a PutRecords reply says (sinkreply.c): the transport's result, the
 * HTTP status and the body of the reply to one request, judged into a
 * verdict that sink.c applies (timers, requeues, callbacks, metrics, logs;
 * sinkrecs.c settles the records).  A pure classifier: no clock, no
 * randomness, no I/O, nothing of the sink's; a verdict is tested without
 * a loop (tests/unit/sink/check_sinkreply.c).
 */
#ifndef DISAGENT_SINKREPLY_H
#define DISAGENT_SINKREPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/codec.h"
#include "wire/retry.h"

struct http_response;
struct putbody;
struct putbody_req;

#define SINKREPLY_HARD_MS	(30 * 60 * 1000)	/* IP blacklisted */
#define SINKREPLY_SLOW_MIN_MS	1000	/* the least wait of a throttled
					   request */

/* What becomes of the request. */
enum sinkreply_action {
	SINKREPLY_RECORDS,	/* a 200 that answers each record: rec[] */
	SINKREPLY_UNACKED,	/* a 200 that acknowledges none of them (not
				   a reply, or one for another number of
				   records): the whole request goes again */
	SINKREPLY_RETRY,	/* the whole request again after a backoff of
				   at least min_delay_ms */
	SINKREPLY_PAUSE,	/* only the operator can fix it: halt, and
				   probe after pause_ms */
	SINKREPLY_SPLIT,	/* too large or invalid: split_limit records
				   per request from now on */
	SINKREPLY_DEAD,		/* the same, for a request of one record:
				   record dead_idx is a dead letter */
	SINKREPLY_REFORMAT,	/* body.serialize.type = auto: the endpoint
				   refused the protobuf request, which it
				   did not take (sinkreply_refuses_protobuf):
				   JSON from now on, this request again now */
};

/* The verdict on one record of a SINKREPLY_RECORDS reply. */
enum sinkreply_rec {
	SINKREPLY_ACKED,	/* stored: res[i].partition and .seq */
	SINKREPLY_RESEND,	/* a retriable code (retriableErrorCodes) */
	SINKREPLY_REFUSED,	/* DIS will never take it: a dead letter */
};

/* How the reply moves the window of requests in flight (AIMD). */
enum sinkreply_aimd {
	SINKREPLY_AIMD_KEEP,	/* a request-level failure, not throttling */
	SINKREPLY_AIMD_GROW,	/* success, or a few records throttled */
	SINKREPLY_AIMD_LESS,	/* some records throttled: one request fewer */
	SINKREPLY_AIMD_HALVE,	/* most records, or the request, throttled:
				   halve it and pace the sends */
};

/* What the judgement needs besides the reply. */
struct sinkreply_opts {
	const struct putbody *body;	/* the format of the replies */
	const char	*retriable;	/* retriableErrorCodes (NULL: the
					   default) */
	uint64_t	 paused_ms;	/* pausedRetrySeconds, in ms */
	bool		 renewing;	/* temporary keys are being renewed
					   (disapi_renewing) */
	bool		 protobuf_taken; /* the endpoint acknowledged a
					   protobuf request this run */
};

struct sinkreply_verdict {
	enum sinkreply_action action;
	enum retry_action retry;	/* the request's class (RETRY_NONE:
					   a 200) */
	enum sinkreply_aimd aimd;
	/* The records may have landed without an acknowledgement: no
	 * reply, a 5xx, a 200 that does not parse.  Else the attempt says
	 * where each of them is (a 4xx took none). */
	bool		 uncertain;
	long		 status;	/* the HTTP status; 0: no reply */
	const char	*error;		/* status 0: why (borrowed from the
					   response: valid during its
					   callback) */
	char		 code[32];	/* a request-level error: its code, */
	char		 msg[160];	/* and message ("" when none) */
	uint64_t	 min_delay_ms;	/* RETRY */
	uint64_t	 pause_ms;	/* PAUSE */
	size_t		 split_limit;	/* SPLIT */
	size_t		 dead_idx;	/* DEAD: the batch's record index */
	/* RECORDS: one entry per body entry (req->sent_idx says whose). */
	struct codec_result *res;	/* owned */
	unsigned char	*rec;		/* owned: enum sinkreply_rec */
	size_t		 nfail;		/* entries with an error code */
	size_t		 throttled;	/* entries resent for DIS.4303 */
	/* UNACKED: the entries the reply holds, or -EBADMSG: not a
	 * PutRecords reply at all. */
	int		 entries;
};

/*
 * Judge the reply r to the request req into *v (to be released with
 * sinkreply_verdict_cleanup).  r is borrowed for the call, but v->error
 * points into it.
 */
void		 sinkreply_judge(const struct http_response *r,
		    const struct putbody_req *req,
		    const struct sinkreply_opts *, struct sinkreply_verdict *v);
void		 sinkreply_verdict_cleanup(struct sinkreply_verdict *);

/*
 * retry_classify, but temporary keys that DIS refused while new ones are
 * being fetched (renewing) are resent, not paused (dis-api.md 4: "new
 * token, REQ once, then HALT").  For DescribeStream too.
 */
enum retry_action sinkreply_classify(long status, const char *code,
		    bool renewing);

/*
 * Whether an error reply (status, and the code and message it carries,
 * "" when none) to a protobuf PutRecords says the endpoint takes no
 * protobuf -- none of the request's records was stored, as with any 4xx:
 * - 415 Unsupported Media Type, whatever its body;
 * - a 400 whose code or message names the format ("protobuf",
 *   "content-type", "content type", "media type");
 * - before the endpoint ever acknowledged a protobuf request (taken
 *   false): a 400 "invalid request" (DIS.4200, DIS.4300), or a 400 with
 *   no DIS code at all -- what an endpoint that reads every body as JSON
 *   answers.  Once protobuf was acknowledged, those are what the table
 *   says (a split: the request was too large).
 * A 200, even one that does not parse, is never a refusal: the records
 * may have landed (SINKREPLY_UNACKED settles that).
 */
bool		 sinkreply_refuses_protobuf(long status, const char *code,
		    const char *msg, bool taken);

/*
 * AIMD by the share of a request's nsent records DIS throttled: most of
 * them, halve and pace; some, one request fewer; a few, as a success.
 */
enum sinkreply_aimd sinkreply_aimd(size_t throttled, size_t nsent);

#endif
