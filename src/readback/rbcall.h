/*
 * One GET of the read-back commands (DescribeStream, GetCursor,
 * GetRecords) and what its reply means: retry, back off, renew the cursor,
 * drop the partition, or give up with a one-line message naming the call,
 * the status, DIS's code and message, and what to check.  Shared by
 * describe.c and readback.c.
 */
#ifndef DISAGENT_RBCALL_H
#define DISAGENT_RBCALL_H

#include <stdbool.h>
#include <stdint.h>

#include "dis/http.h"
#include "readback/readback.h"

struct disapi;

enum rb_act {
	RB_OK,
	RB_RETRY,	/* network, 5xx, unreadable reply: after backoff */
	RB_THROTTLE,	/* 429, DIS.4303, DIS.4305: again, >= 1 s later */
	RB_RENEW,	/* DIS.4217, 4225, 4226: get a new cursor */
	RB_RANGE,	/* DIS.4224: sequence number out of range */
	RB_GONE,	/* DIS.4319: the partition expired */
	RB_NOPART,	/* DIS.4302: no such partition */
	RB_SMALLER,	/* the reply was over our cap: fetch less */
	RB_FATAL,	/* credentials, permission, stream, TLS, ... */
};

/*
 * Classify the reply r to the call named what ("GetRecords s1
 * shardId-0000000000"); *e gets the status, code and message.
 */
enum rb_act	rb_classify(const struct http_response *r, const char *what,
		    struct rb_error *e);

/* A 200 reply that cannot be parsed: RB_RETRY, with the message in *e. */
enum rb_act	rb_unreadable(const char *what, struct rb_error *e);

/*
 * After a failure classified a: the wait before trying again into *delay,
 * counting in *attempt (failures in a row) or *throttles (throttled
 * replies in a row).  False when it is time to give up: a is neither
 * RB_RETRY nor RB_THROTTLE, or, unless forever, the failures in a row
 * reached a handful.  Throttling is never given up on.
 */
bool		rb_backoff(enum rb_act a, bool forever, unsigned *attempt,
		    unsigned *throttles, uint64_t *delay);

/* Start a signed GET of path?query (unencoded); 0 or a negative errno. */
int		rb_get(struct disapi *, const char *path, const char *query,
		    http_done_cb, void *arg) WARN_UNUSED;

/*
 * Start a signed call: method ("POST", "DELETE", ...), path?query, and
 * body (borrowed until done; NULL: none).  0 or a negative errno.
 */
int		rb_call(struct disapi *, const char *method, const char *path,
		    const char *query, const char *body, http_done_cb,
		    void *arg) WARN_UNUSED;

#endif
