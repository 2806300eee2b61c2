/*
 * What a flow's batches acknowledged, as bytes of their files (acked.h).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "agent/acked.h"
#include "base/util.h"
#include "files/files.h"
#include "sink/batch.h"

static void
add_acked(struct acked_list *l, uint64_t file, uint64_t start, uint64_t end)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n++] = (struct files_acked){ .file = file, .start = start,
	    .end = end };
}

/* The records of b acknowledged so far (and those of the batches it
 * absorbed), as bytes of their files. */
void
acked_add_batch(const struct batch *b, void *arg)
{
	struct acked_list *l = arg;
	const struct batch_rec *r;
	size_t		 i;

	for (i = 0; i < b->nacked; i++)
		add_acked(l, b->acked[i].file, b->acked[i].start,
		    b->acked[i].end);
	if (b->ndone == 0)
		return;
	for (i = 0; i < b->nrecs; i++) {
		r = &b->recs[i];
		if (r->done)
			add_acked(l, b->segs[r->seg].file, r->file_off,
			    r->file_end);
	}
}

static int
acked_cmp(const void *a, const void *b)
{
	const struct files_acked *x = a, *y = b;

	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

void
acked_sort(struct acked_list *l)
{
	if (l->n > 1)
		qsort(l->v, l->n, sizeof(*l->v), acked_cmp);
}
