/*
 * Batches (batch.h): records back to back in one buffer, their keys in
 * another, and the memory each record will need charged when it is added,
 * its share of the request body included, so the budget holds before any
 * request is built.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "sink/batch.h"
#include "wire/codec.h"
#include "wire/pbuf.h"

/* A size hint's caps: past them the arrays grow as before. */
#define LIKE_MAX_RECS	10000
#define LIKE_MAX_DATA	(1024u * 1024)
#define LIKE_MAX_KEYS	(256u * 1024)

struct batch *
batch_new(struct mem_budget *mem, const struct batch_size *like)
{
	struct batch	*b;

	b = xcalloc(1, sizeof(*b));
	buf_init(&b->data);
	buf_init(&b->keys);
	b->mem = mem;
	b->created_ms = mono_ms();
	if (like != NULL && like->nrecs > 0) {
		b->caprecs = MIN(like->nrecs, LIKE_MAX_RECS);
		b->recs = xcalloc(b->caprecs, sizeof(*b->recs));
		buf_reserve_exact(&b->data, MIN(like->data, LIKE_MAX_DATA));
		buf_reserve_exact(&b->keys, MIN(like->keys, LIKE_MAX_KEYS));
	}
	return b;
}

void
batch_size_of(const struct batch *b, struct batch_size *sz)
{
	sz->nrecs = b->nrecs;
	sz->data = b->data.len;
	sz->keys = b->keys.len;
}

void
batch_free(struct batch *b)
{
	size_t	 i;

	if (b == NULL)
		return;
	mem_release(b->mem, b->charged);
	buf_cleanup(&b->data);
	buf_cleanup(&b->keys);
	for (i = 0; i < b->nsegs; i++)
		free(b->segs[i].name);
	free(b->segs);
	free(b->acked);
	free(b->recs);
	free(b);
}

int
batch_seg_of(const struct batch *b, uint64_t file)
{
	size_t	 i;

	/* The newest first: records of one file come in runs. */
	for (i = b->nsegs; i > 0; i--)
		if (b->segs[i - 1].file == file)
			return (int)(i - 1);
	return -1;
}

uint16_t
batch_add_seg(struct batch *b, uint64_t file, const char *name,
    uint64_t range)
{
	struct batch_seg *sg;

	if (b->nsegs == b->capsegs) {
		b->capsegs = b->capsegs ? b->capsegs * 2 : 4;
		b->segs = xrealloc(b->segs, b->capsegs * sizeof(*b->segs));
	}
	sg = &b->segs[b->nsegs];
	sg->file = file;
	sg->name = xstrdup(name);
	sg->range = range;
	return (uint16_t)b->nsegs++;
}

/* Bytes of the JSON body one record takes: its base64 data, its key and
 * the {"data":"","partition_key":""}, around them.  The batch does not
 * know its format, so this bounds the protobuf entry too (raw data, and
 * fewer bytes around it), at the price of a larger share than it needs. */
static size_t
body_share(size_t len, size_t klen)
{
	return codec_base64_len(len) + klen + 40;
}
_Static_assert(PBUF_ENTRY_OVERHEAD <= 40,
    "body_share must bound a protobuf record too");

/* What a record costs its batch: data, key, entry, share of the body. */
static size_t
rec_cost(size_t len, size_t klen)
{
	return len + klen + sizeof(struct batch_rec) + body_share(len, klen);
}

static void
grow_recs(struct batch *b, size_t n)
{
	if (b->nrecs + n <= b->caprecs)
		return;
	if (b->caprecs == 0)
		b->caprecs = 64;
	while (b->caprecs < b->nrecs + n)
		b->caprecs *= 2;
	b->recs = xrealloc(b->recs, b->caprecs * sizeof(*b->recs));
}

void
batch_add(struct batch *b, const char *data, size_t len, const char *key,
    size_t keylen, uint16_t seg, uint64_t file_off, uint64_t file_end)
{
	struct batch_rec *r;
	size_t		 klen = keylen + 1, cost;

	grow_recs(b, 1);
	r = &b->recs[b->nrecs++];
	r->off = (uint32_t)b->data.len;
	r->len = (uint32_t)len;
	r->key = (uint32_t)b->keys.len;
	r->seg = seg;
	r->done = false;
	r->file_off = file_off;
	r->file_end = file_end;
	buf_add(&b->data, data, len);
	buf_add(&b->keys, key, klen);
	cost = rec_cost(len, klen);
	b->charged += cost;
	mem_charge(b->mem, cost);
}

void
batch_mark_done(struct batch *b, size_t i)
{
	struct batch_rec *r = &b->recs[i];

	if (r->done)
		return;
	r->done = true;
	b->ndone++;
	b->done_bytes += r->len;
}

size_t
batch_undone(const struct batch *b, size_t *bytes)
{
	*bytes = b->data.len - b->done_bytes;
	return b->nrecs - b->ndone;
}

/* The records src acknowledged, and those it kept, go to dst's spans. */
static void
keep_acked(struct batch *dst, const struct batch *src)
{
	const struct batch_rec *r;
	size_t		 i, n = src->nacked;

	for (i = 0; i < src->nrecs; i++)
		n += src->recs[i].done;
	if (n == 0)
		return;
	dst->acked = xrealloc(dst->acked, (dst->nacked + n) *
	    sizeof(*dst->acked));
	if (src->nacked > 0)	/* src->acked may be NULL: memcpy's UB */
		memcpy(dst->acked + dst->nacked, src->acked,
		    src->nacked * sizeof(*src->acked));
	dst->nacked += src->nacked;
	for (i = 0; i < src->nrecs; i++) {
		r = &src->recs[i];
		if (!r->done)
			continue;
		dst->acked[dst->nacked].file = src->segs[r->seg].file;
		dst->acked[dst->nacked].start = r->file_off;
		dst->acked[dst->nacked++].end = r->file_end;
	}
}

void
batch_absorb(struct batch *dst, struct batch *src)
{
	const struct batch_rec *r;
	struct batch_rec *moved;
	struct buf	 keys;
	size_t		 i, n, klen, cost = 0;
	uint16_t	 base = (uint16_t)dst->nsegs;

	for (i = 0; i < src->nsegs; i++) {
		(void)batch_add_seg(dst, src->segs[i].file, src->segs[i].name,
		    src->segs[i].range);
	}
	n = src->nrecs - src->ndone;
	grow_recs(dst, n);
	/* Older records first: the records of src go in front, and their
	 * keys before dst's, so that the keys stay in the order of the
	 * records (batch_key_len). */
	if (dst->nrecs > 0)
		memmove(dst->recs + n, dst->recs,
		    dst->nrecs * sizeof(*dst->recs));
	moved = dst->recs;
	keep_acked(dst, src);
	buf_init(&keys);
	for (i = 0; i < src->nrecs; i++) {
		r = &src->recs[i];
		if (r->done)
			continue;
		klen = batch_key_len(src, i) + 1;
		moved->off = (uint32_t)dst->data.len;
		moved->len = r->len;
		moved->key = (uint32_t)keys.len;
		moved->seg = (uint16_t)(base + r->seg);
		moved->done = false;
		moved->file_off = r->file_off;
		moved->file_end = r->file_end;
		buf_add(&dst->data, src->data.data + r->off, r->len);
		buf_add(&keys, src->keys.data + r->key, klen);
		cost += rec_cost(r->len, klen);
		moved++;
	}
	for (i = n; i < dst->nrecs + n; i++)
		dst->recs[i].key += (uint32_t)keys.len;
	buf_add(&keys, dst->keys.data, dst->keys.len);
	buf_cleanup(&dst->keys);
	dst->keys = keys;
	dst->nrecs += n;
	dst->charged += cost;
	mem_charge(dst->mem, cost);
	/* Nothing of src is left to send, and none of its records may be
	 * counted twice. */
	src->ndone = src->nrecs;
	src->done_bytes = src->data.len;
}
