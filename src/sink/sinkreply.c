/*
 * PutRecords replies judged (sinkreply.h): per record for a 200 whose body
 * answers each of them (acknowledged, retriable, refused for good), else
 * per request by cause (dis-api.md section 4, retry.c's table), with what
 * the reply says of where the records are and of the throttling.  Pure:
 * sink.c applies the verdict.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/util.h"
#include "dis/http.h"
#include "sink/putbody.h"
#include "sink/sinkreply.h"
#include "wire/codec.h"
#include "wire/retry.h"

enum retry_action
sinkreply_classify(long status, const char *code, bool renewing)
{
	enum retry_action a = retry_classify(status, code);

	if (a == RETRY_HALT && (status == 401 || status == 441) && renewing)
		return RETRY_REQUEST;
	return a;
}

enum sinkreply_aimd
sinkreply_aimd(size_t throttled, size_t nsent)
{
	if (throttled * 2 >= nsent && nsent > 0)
		return SINKREPLY_AIMD_HALVE;
	if (throttled * 10 >= nsent && throttled > 0)
		return SINKREPLY_AIMD_LESS;
	return SINKREPLY_AIMD_GROW;
}

/* s contains word, ignoring case. */
static bool
names(const char *s, const char *word)
{
	size_t	 n = strlen(word);

	for (; *s != '\0'; s++)
		if (strncasecmp(s, word, n) == 0)
			return true;
	return false;
}

bool
sinkreply_refuses_protobuf(long status, const char *code, const char *msg,
    bool taken)
{
	static const char *const words[] = { "protobuf", "content-type",
	    "content type", "media type" };
	size_t		 i;

	if (status == 415)
		return true;
	if (status != 400)
		return false;
	for (i = 0; i < ARRAY_SIZE(words); i++)
		if (names(code, words[i]) || names(msg, words[i]))
			return true;
	return !taken && (code[0] == '\0' || strcmp(code, "DIS.4200") == 0 ||
	    strcmp(code, "DIS.4300") == 0);
}

/* Each entry of a 200: acknowledged, resent or refused. */
static void
judge_records(const struct http_response *r, const struct putbody_req *req,
    const struct sinkreply_opts *o, struct sinkreply_verdict *v)
{
	const struct codec_result *e;
	size_t		 i, n = req->nsent;
	int		 nfail;

	/* Not zeroed: every parser fills each entry it returns (and 500 of
	 * them are 100 KB a reply). */
	v->res = xmalloc((n ? n : 1) * sizeof(*v->res));
	nfail = putbody_parse(o->body, req, r->body, r->bodylen, v->res, n);
	if (nfail < 0) {
		free(v->res);
		v->res = NULL;
		v->action = SINKREPLY_UNACKED;
		v->uncertain = true;	/* DIS took the request */
		v->entries = putbody_entries(o->body, req, r->body,
		    r->bodylen);
		return;
	}
	v->action = SINKREPLY_RECORDS;
	v->nfail = (size_t)nfail;
	v->rec = xmalloc(n ? n : 1);
	if (nfail == 0) {
		/* The parsers count the entries with a code: none. */
		memset(v->rec, SINKREPLY_ACKED, n);
		v->aimd = SINKREPLY_AIMD_GROW;
		return;
	}
	for (i = 0; i < n; i++) {
		e = &v->res[i];
		if (e->code[0] == '\0')
			v->rec[i] = SINKREPLY_ACKED;
		else if (retry_record_retriable(e->code, o->retriable)) {
			v->rec[i] = SINKREPLY_RESEND;
			if (strcmp(e->code, "DIS.4303") == 0)
				v->throttled++;
		} else
			v->rec[i] = SINKREPLY_REFUSED;
	}
	v->aimd = sinkreply_aimd(v->throttled, n);
}

/* An error reply: by its status and code. */
static void
judge_request(const struct http_response *r, const struct putbody_req *req,
    const struct sinkreply_opts *o, struct sinkreply_verdict *v)
{
	(void)codec_parse_error(r->body, r->bodylen, v->code,
	    sizeof(v->code), v->msg, sizeof(v->msg));
	v->retry = sinkreply_classify(r->status, v->code, o->renewing);
	if (putbody_auto(o->body) && putbody_req_protobuf(o->body, req) &&
	    sinkreply_refuses_protobuf(r->status, v->code, v->msg,
	    o->protobuf_taken)) {
		v->action = SINKREPLY_REFORMAT;
		return;
	}
	switch (v->retry) {
	case RETRY_HALT:
	case RETRY_HARD:
		v->action = SINKREPLY_PAUSE;
		v->pause_ms = v->retry == RETRY_HARD ? SINKREPLY_HARD_MS :
		    o->paused_ms;
		break;
	case RETRY_SPLIT:
		/* Halve the requests; a lone record still refused can
		 * never be accepted. */
		if (req->nsent > 1) {
			v->action = SINKREPLY_SPLIT;
			v->split_limit = req->nsent / 2;
		} else {
			v->action = SINKREPLY_DEAD;
			v->dead_idx = req->nsent ? req->sent_idx[0] : 0;
		}
		break;
	case RETRY_SLOW:
		v->action = SINKREPLY_RETRY;
		v->aimd = SINKREPLY_AIMD_HALVE;
		v->min_delay_ms = SINKREPLY_SLOW_MIN_MS;
		break;
	default:
		v->action = SINKREPLY_RETRY;
		break;
	}
}

void
sinkreply_judge(const struct http_response *r, const struct putbody_req *req,
    const struct sinkreply_opts *o, struct sinkreply_verdict *v)
{
	memset(v, 0, sizeof(*v));
	v->retry = RETRY_NONE;
	v->aimd = SINKREPLY_AIMD_KEEP;
	if (r->result != HTTP_OK) {
		/* A timeout or a dropped connection: it may have landed. */
		v->action = SINKREPLY_RETRY;
		v->retry = RETRY_REQUEST;
		v->uncertain = true;
		v->error = r->error ? r->error : "error";
		return;
	}
	v->status = r->status;
	if (r->status >= 500)
		v->uncertain = true;
	if (r->status == 200)
		judge_records(r, req, o, v);
	else
		judge_request(r, req, o, v);
}

void
sinkreply_verdict_cleanup(struct sinkreply_verdict *v)
{
	free(v->res);
	free(v->rec);
	v->res = NULL;
	v->rec = NULL;
}
