/*
 * A request in doubt settled by reading the stream (settle.h).  One reader
 * per partition (dis/partread.h), all at once (a stream has few): after
 * the floor to its end, asked again on a timer until the landing bound is
 * past.  The batch's records not done are looked up by a hash of their
 * partition key.
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
#include "dis/partread.h"
#include "sink/batch.h"
#include "sink/seqmark.h"
#include "sink/settle.h"
#include "wire/codec_read.h"

#define SKEW_MS		30000		/* between our clock and DIS's */

struct st_part {
	struct settle	*st;
	int32_t		 part;
	int64_t		 floor;
	bool		 done;
	struct partread	 r;
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

static void	finish(struct settle *, const char *);

/* partread_cbs: a record read back; one of the batch's, not done yet, is
 * done now (and once all are, the settle is over). */
static void
match(void *arg, const struct codec_record *rec, struct buf *data)
{
	struct st_part	*p = arg;
	struct settle	*st = p->st;
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
		if (++st->found == st->nkeys)
			finish(st, NULL);
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
		partread_cleanup(&st->parts[i].r);
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
		partread_close(&st->parts[i].r);
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

/* partread_cbs: p is read past the landing bound, or could not be. */
static void
on_part_end(void *arg, const char *fail)
{
	struct st_part	*p = arg;

	if (fail != NULL)
		finish(p->st, fail);
	else
		part_done(p);
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

/* p's reader: after its floor (from the first record without one) until
 * a GetRecords after the landing bound, or records written well after it
 * (read far enough, however busy the partition). */
static void
part_init(struct settle *st, struct st_part *p, uv_loop_t *loop)
{
	struct partread_opts o;

	p->st = st;
	o.param = st->fc->stream_id[0] != '\0' ? "stream-id" : "stream-name";
	o.stream = st->fc->stream_id[0] != '\0' ? st->fc->stream_id :
	    st->fc->stream;
	o.part = p->part;
	o.after = p->floor;
	o.at_ms = -1;
	o.past_ms = st->until + SKEW_MS;
	o.wait_until = st->until;
	o.poll_ms = SETTLE_POLL_MS;
	partread_init(&p->r, loop, st->api, &st->closer, &o,
	    &(struct partread_cbs){ match, on_part_end, p });
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
	for (i = 0; i < st->nparts; i++)
		part_init(st, &st->parts[i], loop);
	/* From timers: done is never called from inside this call. */
	for (i = 0; i < st->nparts; i++)
		partread_start_later(&st->parts[i].r);
	return st;
}
