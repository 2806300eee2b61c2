/*
 * A request in doubt settled by reading the stream (settle.h).  One reader
 * per partition, all at once (a stream has few): GetCursor after the
 * floor, GetRecords with each reply's next cursor, at the end asked again
 * on a timer until the landing bound is past.  The batch's records not
 * done are looked up by a hash of their partition key.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/closer.h"
#include "base/hash.h"
#include "base/log.h"
#include "base/util.h"
#include "conf/conf.h"
#include "dis/disapi.h"
#include "dis/http.h"
#include "sink/batch.h"
#include "sink/seqmark.h"
#include "sink/settle.h"
#include "wire/codec.h"
#include "wire/codec_read.h"

#define FETCH_BYTES	(1024 * 1024)
#define MAX_RESPONSE	(64 * 1024 * 1024)
#define RETRY_MS	500
#define SKEW_MS		30000		/* between our clock and DIS's */

struct st_part {
	struct settle	*st;
	int32_t		 part;
	int64_t		 floor;
	char		*cursor;	/* NULL: get one */
	int64_t		 asked;		/* wall ms of the last GetRecords */
	unsigned	 attempts;
	bool		 done;
	uv_timer_t	 timer;
};

/* A record of the batch not done yet, by the hash of its key. */
struct st_key {
	uint64_t	 h;
	size_t		 i;
};

struct settle {
	struct disapi	*api;
	const struct conf_flow *fc;
	struct batch	*b;
	struct st_key	*keys;
	size_t		 nkeys;
	struct st_part	*parts;
	size_t		 nparts;
	size_t		 left;
	int64_t		 until;
	size_t		 found;
	settle_done_cb	 done;
	void		*arg;
	bool		 ended;		/* done called, or cancelled */
	struct closer	 closer;
	uv_timer_t	 deadline;
};

static const struct hash_key key_key = {
	0x736574746c652031ULL, 0x6b65792068617368ULL,
};

static void	part_next(struct st_part *);

/* --- the batch's records ------------------------------------------------ */

static int
key_cmp(const void *a, const void *b)
{
	const struct st_key *x = a, *y = b;

	return x->h < y->h ? -1 : x->h > y->h;
}

static void
index_keys(struct settle *st)
{
	const struct batch *b = st->b;
	size_t		 i;

	st->keys = xcalloc(b->nrecs + 1, sizeof(*st->keys));
	for (i = 0; i < b->nrecs; i++) {
		if (b->recs[i].done)
			continue;
		st->keys[st->nkeys].h = hash_sip(&key_key, b->keys.data +
		    b->recs[i].key, batch_key_len(b, i));
		st->keys[st->nkeys++].i = i;
	}
	qsort(st->keys, st->nkeys, sizeof(*st->keys), key_cmp);
}

/* A record read back: one of the batch's, not done yet, is done now. */
static void
match(struct settle *st, const struct codec_record *rec, struct buf *data)
{
	struct batch	*b = st->b;
	size_t		 lo = 0, hi = st->nkeys, mid, klen, i;
	uint64_t	 h;

	if (rec->key == NULL)
		return;
	klen = strlen(rec->key);
	h = hash_sip(&key_key, rec->key, klen);
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (st->keys[mid].h < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < st->nkeys && st->keys[lo].h == h; lo++) {
		i = st->keys[lo].i;
		if (b->recs[i].done || batch_key_len(b, i) != klen ||
		    memcmp(b->keys.data + b->recs[i].key, rec->key, klen) != 0)
			continue;
		buf_reset(data);
		if (codec_base64_decode(rec->data64, rec->data64_len,
		    data) != 0 || data->len != b->recs[i].len ||
		    memcmp(data->data, b->data.data + b->recs[i].off,
		    data->len) != 0)
			continue;
		batch_mark_done(b, i);
		st->found++;
		return;
	}
}

/* --- the end ------------------------------------------------------------ */

static void
destroy(struct closer *c)
{
	struct settle	*st = container_of(c, struct settle, closer);
	size_t		 i;

	for (i = 0; i < st->nparts; i++)
		free(st->parts[i].cursor);
	free(st->parts);
	free(st->keys);
	free(st);
}

/* No more requests or timers: closed, and freed once all have ended. */
static void
wind_up(struct settle *st)
{
	size_t	 i;

	st->ended = true;
	closer_close(&st->closer, (uv_handle_t *)&st->deadline);
	for (i = 0; i < st->nparts; i++)
		closer_close(&st->closer, (uv_handle_t *)&st->parts[i].timer);
	closer_release(&st->closer);
}

static void
finish(struct settle *st, const char *fail)
{
	if (st->ended)
		return;
	st->done(st->found, fail, st->arg);
	wind_up(st);
}

void
settle_cancel(struct settle *st)
{
	if (st != NULL && !st->ended)
		wind_up(st);
}

static void
part_done(struct st_part *p)
{
	if (p->done)
		return;
	p->done = true;
	if (--p->st->left == 0 || p->st->found == p->st->nkeys)
		finish(p->st, NULL);
}

/* --- requests ----------------------------------------------------------- */

static void	on_cursor(const struct http_response *, void *);
static void	on_records(const struct http_response *, void *);

static void
part_get(struct st_part *p, const char *path, const char *query,
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
	rc = disapi_send(p->st->api, &c, cb, p);
	if (rc == 0) {
		closer_hold(&p->st->closer);
		return;
	}
	snprintf(why, sizeof(why), "cannot send %s: %s", path, strerror(-rc));
	finish(p->st, why);
}

static void
stream_query(const struct settle *st, struct buf *q)
{
	if (st->fc->stream_id[0] != '\0')
		buf_printf(q, "stream-id=%s", st->fc->stream_id);
	else
		buf_printf(q, "stream-name=%s", st->fc->stream);
}

static void
part_next(struct st_part *p)
{
	struct buf	 q;

	buf_init(&q);
	if (p->cursor == NULL) {
		stream_query(p->st, &q);
		buf_printf(&q, "&partition-id=shardId-%010" PRId32, p->part);
		if (p->floor < 0)
			buf_printf(&q, "&cursor-type=AT_SEQUENCE_NUMBER"
			    "&starting-sequence-number=0");
		else
			buf_printf(&q, "&cursor-type=AFTER_SEQUENCE_NUMBER"
			    "&starting-sequence-number=%" PRId64, p->floor);
		part_get(p, "cursors/", q.data, on_cursor);
	} else {
		p->asked = wall_ms();
		buf_printf(&q, "partition-cursor=%s&max_fetch_bytes=%d",
		    p->cursor, FETCH_BYTES);
		part_get(p, "records/", q.data, on_records);
	}
	buf_cleanup(&q);
}

static void
on_part_timer(uv_timer_t *t)
{
	struct st_part	*p = container_of(t, struct st_part, timer);

	if (!p->st->ended && !p->done)
		part_next(p);
}

/* The request of p ended: false when p is no longer read. */
static bool
part_alive(struct st_part *p)
{
	struct settle	*st = p->st;

	if (closer_drop(&st->closer))
		return false;
	return !st->ended && !p->done;
}

/* A failed call: an outage or throttling is waited out (up to the
 * deadline); anything DIS refuses ends the settle. */
static void
part_failed(struct st_part *p, const struct http_response *r,
    const char *what)
{
	char	 code[32] = "", msg[160] = "", why[256];

	if (r->result == HTTP_OK && r->status < 500 && r->status != 429)
		(void)codec_parse_error(r->body, r->bodylen, code,
		    sizeof(code), msg, sizeof(msg));
	if (r->result != HTTP_OK || r->status >= 500 || r->status == 429 ||
	    strcmp(code, "DIS.4303") == 0 || strcmp(code, "DIS.4305") == 0) {
		p->attempts++;
		uv_timer_start(&p->timer, on_part_timer,
		    MIN((uint64_t)RETRY_MS << MIN(p->attempts, 4), 5000), 0);
		return;
	}
	if (strcmp(code, "DIS.4217") == 0 || strcmp(code, "DIS.4225") == 0) {
		free(p->cursor);	/* expired: read again from the floor */
		p->cursor = NULL;
		uv_timer_start(&p->timer, on_part_timer, 0, 0);
		return;
	}
	snprintf(why, sizeof(why), "%s of partition %" PRId32 " refused: "
	    "HTTP %ld %s %s", what, p->part, r->status, code, msg);
	finish(p->st, why);
}

static void
on_cursor(const struct http_response *r, void *arg)
{
	struct st_part	*p = arg;

	if (!part_alive(p))
		return;
	if (r->result == HTTP_OK && r->status == 200) {
		if (codec_parse_cursor(r->body, r->bodylen, &p->cursor) != 0) {
			finish(p->st, "unreadable GetCursor reply");
			return;
		}
		p->attempts = 0;
		part_next(p);
		return;
	}
	part_failed(p, r, "GetCursor");
}

static void
on_records(const struct http_response *r, void *arg)
{
	struct st_part	*p = arg;
	struct settle	*st = p->st;
	struct codec_records *rs;
	struct codec_record rec;
	struct buf	 data;
	const char	*next;
	size_t		 i, n;
	int64_t		 left;

	if (!part_alive(p))
		return;
	if (r->result != HTTP_OK || r->status != 200) {
		part_failed(p, r, "GetRecords");
		return;
	}
	if (codec_parse_records(r->body, r->bodylen, &rs) != 0) {
		finish(st, "unreadable GetRecords reply");
		return;
	}
	p->attempts = 0;
	n = codec_records_count(rs);
	buf_init(&data);
	for (i = 0; i < n; i++) {
		codec_records_get(rs, i, &rec);
		/* Written well after the request could land: read far
		 * enough, however busy the partition. */
		if (rec.timestamp > st->until + SKEW_MS) {
			p->asked = st->until;
			n = 0;
			break;
		}
		match(st, &rec, &data);
	}
	buf_cleanup(&data);
	next = codec_records_next(rs);
	if (next != NULL) {
		free(p->cursor);
		p->cursor = xstrdup(next);
	}
	codec_records_free(rs);
	if (st->found == st->nkeys) {
		finish(st, NULL);
		return;
	}
	if (n > 0 && next != NULL) {
		part_next(p);
		return;
	}
	/* At the end: done once asked after the landing bound. */
	left = st->until - p->asked;
	if (left <= 0) {
		part_done(p);
		return;
	}
	left = st->until - wall_ms();
	uv_timer_start(&p->timer, on_part_timer,
	    (uint64_t)MAX(MIN(left, SETTLE_POLL_MS), 0), 0);
}

/* --- the start ---------------------------------------------------------- */

static void
on_deadline(uv_timer_t *t)
{
	struct settle	*st = container_of(t, struct settle, deadline);

	finish(st, "not read within its deadline");
}

static void
add_part(int32_t part, int64_t last, void *arg)
{
	struct settle	*st = arg;
	struct st_part	*p;

	st->parts = xrealloc(st->parts, (st->nparts + 1) * sizeof(*p));
	p = &st->parts[st->nparts++];
	memset(p, 0, sizeof(*p));
	p->part = part;
	p->floor = last;
}

struct settle *
settle_start(uv_loop_t *loop, struct disapi *api,
    const struct conf_flow *fc, const struct seqmark *m,
    struct seqsnap *pin, struct batch *b, int64_t until,
    settle_done_cb done, void *arg)
{
	struct settle	*st;
	size_t		 i;
	int64_t		 wait;

	st = xcalloc(1, sizeof(*st));
	seqmark_floors(m, &pin, 1, add_part, st);
	if (st->nparts == 0) {
		free(st);
		return NULL;
	}
	st->api = api;
	st->fc = fc;
	st->b = b;
	st->until = until;
	st->done = done;
	st->arg = arg;
	st->left = st->nparts;
	index_keys(st);
	closer_init(&st->closer, destroy);
	uv_timer_init(loop, &st->deadline);
	wait = MAX(until - wall_ms(), 0);
	uv_timer_start(&st->deadline, on_deadline,
	    SETTLE_MAX_MS + (uint64_t)wait, 0);
	for (i = 0; i < st->nparts; i++) {
		st->parts[i].st = st;
		uv_timer_init(loop, &st->parts[i].timer);
	}
	/* From timers: done is never called from inside this call. */
	for (i = 0; i < st->nparts; i++)
		uv_timer_start(&st->parts[i].timer, on_part_timer, 0, 0);
	return st;
}
