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

struct batch *
batch_new(struct mem_budget *mem)
{
	struct batch	*b;

	b = xcalloc(1, sizeof(*b));
	buf_init(&b->data);
	buf_init(&b->keys);
	buf_init(&b->body);
	b->mem = mem;
	b->created_ms = mono_ms();
	return b;
}

void
batch_free(struct batch *b)
{
	size_t	 i;

	if (b == NULL)
		return;
	mem_release(b->mem, b->charged);
	buf_cleanup(&b->body);
	buf_cleanup(&b->data);
	buf_cleanup(&b->keys);
	for (i = 0; i < b->nsegs; i++)
		free(b->segs[i].name);
	free(b->segs);
	free(b->recs);
	free(b->sent_idx);
	free(b);
}

void
batch_drop_body(struct batch *b)
{
	buf_cleanup(&b->body);
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

void
batch_add(struct batch *b, const char *data, size_t len, const char *key,
    uint16_t seg, uint64_t file_off, uint64_t file_end)
{
	struct batch_rec *r;
	size_t		 klen = strlen(key) + 1, cost;

	if (b->nrecs == b->caprecs) {
		b->caprecs = b->caprecs ? b->caprecs * 2 : 64;
		b->recs = xrealloc(b->recs, b->caprecs * sizeof(*b->recs));
	}
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
	cost = len + klen + sizeof(*r) + body_share(len, klen);
	b->charged += cost;
	mem_charge(b->mem, cost);
}
