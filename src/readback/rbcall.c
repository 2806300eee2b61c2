/*
 * Read-back calls and their replies (rbcall.h): the error table of
 * spec/dis-api.md section 10 on top of section 4, and the backoff.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "dis/disapi.h"
#include "readback/rbcall.h"
#include "wire/codec.h"
#include "wire/retry.h"

#define MIB		(1024 * 1024)
#define RETRY_MAX	5	/* failures in a row, unless forever */
#define RETRY_MS	250
#define RETRY_MAX_MS	30000
#define THROTTLE_MS	1000	/* at least this after DIS.4303 */
/* GetRecords replies carry base64 and per-record JSON on top of
 * max_fetch_bytes: a cap far above what a reply should need. */
#define MAX_RESPONSE	(64 * MIB)

static enum rb_act
by_code(long status, const char *code)
{
	static const struct {
		const char	*code;
		enum rb_act	 act;
	} tab[] = {
		{ "DIS.4303", RB_THROTTLE }, { "DIS.4305", RB_THROTTLE },
		{ "DIS.4217", RB_RENEW }, { "DIS.4225", RB_RENEW },
		{ "DIS.4226", RB_RENEW }, { "DIS.4224", RB_RANGE },
		{ "DIS.4319", RB_GONE }, { "DIS.4302", RB_NOPART },
	};
	size_t	 i;

	if (status >= 500 || status == 408)
		return RB_RETRY;
	if (status == 429)
		return RB_THROTTLE;
	for (i = 0; i < ARRAY_SIZE(tab); i++)
		if (strcmp(code, tab[i].code) == 0)
			return tab[i].act;
	return RB_FATAL;
}

enum rb_act
rb_classify(const struct http_response *r, const char *what,
    struct rb_error *e)
{
	enum rb_act	 act;
	char		 msg[200];

	memset(e, 0, sizeof(*e));
	if (r->result != HTTP_OK) {
		snprintf(e->message, sizeof(e->message), "%s: %s", what,
		    r->error != NULL ? r->error : "request failed");
		if (r->result == HTTP_ERR_TOOBIG)
			return RB_SMALLER;
		/* A certificate does not get better by asking again. */
		return r->result == HTTP_ERR_TLS ? RB_FATAL : RB_RETRY;
	}
	e->status = r->status;
	/* 201 (CreateApp, CommitCheckpoint) and 204 (DeleteApp) too. */
	if (r->status >= 200 && r->status < 300)
		return RB_OK;
	(void)codec_parse_error(r->body, r->bodylen, e->code,
	    sizeof(e->code), msg, sizeof(msg));
	act = by_code(r->status, e->code);
	/* What to check: the agent's own hints (retry.c), for what ends
	 * the command. */
	snprintf(e->message, sizeof(e->message), "%s: HTTP %ld%s%s%s%s%s%s",
	    what, r->status, e->code[0] ? " " : "", e->code, msg[0] ? " " : "",
	    msg, act == RB_FATAL ? "; " : "",
	    act == RB_FATAL ? retry_halt_hint(r->status, e->code) : "");
	return act;
}

enum rb_act
rb_unreadable(const char *what, struct rb_error *e)
{
	memset(e, 0, sizeof(*e));
	e->status = 200;
	snprintf(e->message, sizeof(e->message), "%s: unreadable reply",
	    what);
	return RB_RETRY;
}

bool
rb_backoff(enum rb_act a, bool forever, unsigned *attempt,
    unsigned *throttles, uint64_t *delay)
{
	if (a == RB_THROTTLE) {
		*delay = THROTTLE_MS + retry_backoff_ms(MIN(*throttles, 4),
		    500, 9000, rand_unit());
		(*throttles)++;
		return true;
	}
	if (a != RB_RETRY || (!forever && *attempt + 1 >= RETRY_MAX))
		return false;
	*delay = MAX(50, retry_backoff_ms(*attempt, RETRY_MS, RETRY_MAX_MS,
	    rand_unit()));
	(*attempt)++;
	return true;
}

int
rb_call(struct disapi *api, const char *method, const char *path,
    const char *query, const char *body, http_done_cb cb, void *arg)
{
	struct disapi_call c;

	memset(&c, 0, sizeof(c));
	c.method = method;
	c.path = path;
	c.query = query;
	c.body = body;
	c.bodylen = body != NULL ? strlen(body) : 0;
	c.max_response = MAX_RESPONSE;
	return disapi_send(api, &c, cb, arg);
}

int
rb_get(struct disapi *api, const char *path, const char *query,
    http_done_cb cb, void *arg)
{
	return rb_call(api, "GET", path, query, NULL, cb, arg);
}
