/*
 * One partition read back to its end (partread.h): the requests, the
 * decisions after a failed one, and the wait at the end for requests
 * that could still land.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/closer.h"
#include "base/util.h"
#include "dis/disapi.h"
#include "dis/http.h"
#include "dis/partread.h"
#include "wire/codec.h"
#include "wire/codec_read.h"
#include "wire/retry.h"

#define RETRY_MS	250		/* backoff after a failure */
#define RETRY_MAX_MS	5000
#define THROTTLE_MS	1000
#define FETCH_BYTES	(1024 * 1024)
#define MAX_RESPONSE	(64 * 1024 * 1024)

static void	on_cursor(const struct http_response *, void *);
static void	on_records(const struct http_response *, void *);
static void	part_next(struct partread *);

/* Over: the owner is told once (fail NULL: read past the bound). */
static void
finish(struct partread *p, const char *fail)
{
	if (p->state == PARTREAD_DONE)
		return;
	p->state = PARTREAD_DONE;
	uv_timer_stop(&p->timer);
	p->cbs.end(p->cbs.arg, fail);
}

static void
part_get(struct partread *p, const char *path, const char *query,
    http_done_cb cb)
{
	struct disapi_call c;
	char		 why[160];
	int		 rc;

	memset(&c, 0, sizeof(c));
	c.method = "GET";
	c.path = path;
	c.query = query;
	c.max_response = MAX_RESPONSE;
	rc = disapi_send(p->api, &c, cb, p);
	if (rc == 0) {
		closer_hold(p->closer);
		return;
	}
	snprintf(why, sizeof(why), "cannot send %s: %s", path,
	    rc == -EKEYEXPIRED ? disapi_key_error(p->api) : strerror(-rc));
	finish(p, why);
}

static void
get_cursor(struct partread *p)
{
	struct buf	 q;
	int64_t		 after = p->seen >= 0 ? p->seen : p->o.after;

	buf_init(&q);
	buf_printf(&q, "%s=%s&partition-id=shardId-%010" PRId32, p->o.param,
	    p->o.stream, p->o.part);
	if (after < 0 && p->o.at_ms >= 0)
		buf_printf(&q, "&cursor-type=AT_TIMESTAMP&timestamp=%" PRId64,
		    p->o.at_ms);
	else if (after < 0)	/* nothing before: from its first record */
		buf_printf(&q, "&cursor-type=AT_SEQUENCE_NUMBER"
		    "&starting-sequence-number=0");
	else
		buf_printf(&q, "&cursor-type=AFTER_SEQUENCE_NUMBER"
		    "&starting-sequence-number=%" PRId64, after);
	part_get(p, "cursors/", q.data, on_cursor);
	buf_cleanup(&q);
}

static void
get_records(struct partread *p)
{
	struct buf	 q;

	p->asked = wall_ms();
	buf_init(&q);
	buf_printf(&q, "partition-cursor=%s&max_fetch_bytes=%d", p->cursor,
	    FETCH_BYTES);
	part_get(p, "records/", q.data, on_records);
	buf_cleanup(&q);
}

static void
part_next(struct partread *p)
{
	if (p->cursor == NULL)
		get_cursor(p);
	else
		get_records(p);
}

static void
on_timer(uv_timer_t *t)
{
	struct partread	*p = container_of(t, struct partread, timer);

	if (p->state == PARTREAD_READING)
		part_next(p);
}

/* The request of p ended: false when p is no longer read (its owner is
 * gone, or stopped it). */
static bool
alive(struct partread *p)
{
	return !closer_drop(p->closer) && p->state == PARTREAD_READING;
}

/* Why DIS refused a call of p (what names it), into why. */
static void
refusal(const struct partread *p, const struct http_response *r,
    const char *what, const char *code, const char *msg, char *why,
    size_t len)
{
	int64_t	 after = p->seen >= 0 ? p->seen : p->o.after;

	if (strcmp(code, "DIS.4224") == 0 || strcmp(code, "DIS.4226") == 0)
		snprintf(why, len, "the stream no longer holds the records "
		    "after sequence number %" PRId64 " of partition %" PRId32
		    " (trimmed: %s %s)", after, p->o.part, code, msg);
	else if (strcmp(code, "DIS.4319") == 0 ||
	    strcmp(code, "DIS.4302") == 0)
		snprintf(why, len, "partition %" PRId32 " is gone (%s %s)",
		    p->o.part, code, msg);
	else
		snprintf(why, len, "%s refused: HTTP %ld %s %s (%s)", what,
		    r->status, code, msg, retry_halt_hint(r->status, code));
}

/*
 * After a failed call of p (what names it): retry, wait, renew the cursor,
 * or end the read.
 */
static void
failed(struct partread *p, const struct http_response *r, const char *what)
{
	char		 code[32] = "", msg[160] = "", why[320];
	uint64_t	 delay;

	if (r->result != HTTP_OK || r->status >= 500) {
		/* An outage is ridden out, up to the owner's deadline; a
		 * certificate does not get better by asking again. */
		if (r->result != HTTP_ERR_TLS && r->result != HTTP_ERR_TOOBIG) {
			delay = retry_backoff_ms(MIN(p->attempts, 8), RETRY_MS,
			    RETRY_MAX_MS, rand_unit());
			p->attempts++;
			uv_timer_start(&p->timer, on_timer, MAX(delay, 50), 0);
			return;
		}
		snprintf(why, sizeof(why), "%s failed: %s", what,
		    r->result != HTTP_OK ? (r->error ? r->error : "error") :
		    "server error");
		finish(p, why);
		return;
	}
	(void)codec_parse_error(r->body, r->bodylen, code, sizeof(code), msg,
	    sizeof(msg));
	if (r->status == 429 || strcmp(code, "DIS.4303") == 0 ||
	    strcmp(code, "DIS.4305") == 0) {
		uv_timer_start(&p->timer, on_timer, THROTTLE_MS, 0);
		return;
	}
	if (strcmp(code, "DIS.4217") == 0 || strcmp(code, "DIS.4225") == 0) {
		/* A cursor that expired: a new one after what was read. */
		free(p->cursor);
		p->cursor = NULL;
		uv_timer_start(&p->timer, on_timer, 0, 0);
		return;
	}
	refusal(p, r, what, code, msg, why, sizeof(why));
	finish(p, why);
}

static void
on_cursor(const struct http_response *r, void *arg)
{
	struct partread	*p = arg;

	if (!alive(p))
		return;
	if (r->result == HTTP_OK && r->status == 200 &&
	    codec_parse_cursor(r->body, r->bodylen, &p->cursor) == 0) {
		p->attempts = 0;
		get_records(p);
		return;
	}
	if (r->result == HTTP_OK && r->status == 200) {
		finish(p, "unreadable GetCursor reply");
		return;
	}
	failed(p, r, "GetCursor");
}

enum next { MORE, END, PAST, STOPPED };

/* The records of one reply to the owner: more to read at once, the
 * partition's end for now, records written after the bound, or the
 * owner stopped the read. */
static enum next
take_all(struct partread *p, const struct codec_records *rs)
{
	struct codec_record rec;
	struct buf	 data;
	size_t		 i, n = codec_records_count(rs);
	enum next	 next = n > 0 ? MORE : END;

	buf_init(&data);
	for (i = 0; i < n && next != STOPPED; i++) {
		codec_records_get(rs, i, &rec);
		p->seen = rec.seq;
		if (rec.timestamp >= 0 && rec.timestamp > p->o.past_ms) {
			next = PAST;
			break;
		}
		p->cbs.record(p->cbs.arg, &rec, &data);
		if (p->state != PARTREAD_READING)
			next = STOPPED;
	}
	buf_cleanup(&data);
	if (next == MORE && codec_records_next(rs) == NULL)
		next = END;
	return next;
}

/*
 * p is read to its end.  Over when the GetRecords that found it was sent
 * after wait_until; else asked again after poll_ms, from the reply's next
 * cursor (next, or the same one when NULL).
 */
static bool
at_end(struct partread *p, const char *next)
{
	int64_t		 left = p->o.wait_until - p->asked;
	uint64_t	 now = mono_ms();

	if (p->end_ms != 0)
		p->waited_ms = now - p->end_ms;
	if (left <= 0)
		return false;
	if (p->end_ms == 0)
		p->end_ms = now;
	if (next != NULL) {
		free(p->cursor);
		p->cursor = xstrdup(next);
	}
	left = p->o.wait_until - wall_ms();
	uv_timer_start(&p->timer, on_timer,
	    (uint64_t)MAX(MIN(left, (int64_t)p->o.poll_ms), 0), 0);
	return true;
}

static void
on_records(const struct http_response *r, void *arg)
{
	struct partread	*p = arg;
	struct codec_records *rs;
	enum next	 more;
	const char	*next;

	if (!alive(p))
		return;
	if (r->result != HTTP_OK || r->status != 200) {
		failed(p, r, "GetRecords");
		return;
	}
	if (codec_parse_records(r->body, r->bodylen, &rs) != 0) {
		finish(p, "unreadable GetRecords reply");
		return;
	}
	p->attempts = 0;
	more = take_all(p, rs);
	next = codec_records_next(rs);
	if (more == PAST || (more == END && !at_end(p, next))) {
		codec_records_free(rs);
		finish(p, NULL);
		return;
	}
	if (more == MORE) {
		free(p->cursor);
		p->cursor = xstrdup(next);
		get_records(p);
	}
	codec_records_free(rs);
}

/* --- the API ------------------------------------------------------------ */

void
partread_init(struct partread *p, uv_loop_t *loop, struct disapi *api,
    struct closer *closer, const struct partread_opts *o,
    const struct partread_cbs *cbs)
{
	memset(p, 0, sizeof(*p));
	p->api = api;
	p->closer = closer;
	p->o = *o;
	p->cbs = *cbs;
	p->seen = -1;
	uv_timer_init(loop, &p->timer);
}

void
partread_start(struct partread *p)
{
	if (p->state != PARTREAD_IDLE)
		return;
	p->state = PARTREAD_READING;
	part_next(p);
}

void
partread_start_later(struct partread *p)
{
	if (p->state != PARTREAD_IDLE)
		return;
	p->state = PARTREAD_READING;
	uv_timer_start(&p->timer, on_timer, 0, 0);
}

bool
partread_at_end(const struct partread *p)
{
	return p->end_ms != 0 || p->state == PARTREAD_DONE;
}

uint64_t
partread_waited_ms(const struct partread *p)
{
	return p->waited_ms;
}

void
partread_stop(struct partread *p)
{
	p->state = PARTREAD_DONE;
	uv_timer_stop(&p->timer);
}

void
partread_close(struct partread *p)
{
	partread_stop(p);
	closer_close(p->closer, (uv_handle_t *)&p->timer);
}

void
partread_cleanup(struct partread *p)
{
	free(p->cursor);
	p->cursor = NULL;
}
