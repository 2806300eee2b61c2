/*
 * Commit watermark: a ring buffer of ranges indexed by a monotonic id.
 */
#include "config.h"

#include <stdlib.h>

#include "base/util.h"
#include "files/watermark.h"
#include "state/registry.h"

void
wm_init(struct watermark *w, uint64_t committed)
{
	w->r = NULL;
	w->head = 0;
	w->n = 0;
	w->cap = 0;
	w->base = 0;
	w->committed = committed;
}

void
wm_cleanup(struct watermark *w)
{
	free(w->r);
	w->r = NULL;
	w->n = w->cap = w->head = 0;
}

/* The ring's index of the i-th range from the head; cap is a power of two
 * (grow), so a mask, not a division: wm_extend runs for every record. */
static inline size_t
slot(const struct watermark *w, uint64_t i)
{
	return (size_t)((w->head + i) & (w->cap - 1));
}

static void
grow(struct watermark *w)
{
	struct wm_range	*nr;
	size_t		 i, ncap;

	ncap = w->cap ? w->cap * 2 : 8;
	nr = xcalloc(ncap, sizeof(*nr));
	for (i = 0; i < w->n; i++)
		nr[i] = w->r[slot(w, i)];
	free(w->r);
	w->r = nr;
	w->cap = ncap;
	w->head = 0;
}

uint64_t
wm_push(struct watermark *w, uint64_t end)
{
	if (w->n == w->cap)
		grow(w);
	w->r[slot(w, w->n)].end = end;
	w->r[slot(w, w->n)].done = false;
	w->n++;
	return w->base + w->n - 1;
}

void
wm_extend(struct watermark *w, uint64_t id, uint64_t end)
{
	if (id < w->base || id >= w->base + w->n)
		return;
	w->r[slot(w, (id - w->base))].end = end;
}

bool
wm_skip_to(struct watermark *w, uint64_t end)
{
	struct wm_range	*r;

	if (w->n == 0) {
		if (end <= w->committed)
			return false;
		w->committed = end;
		return true;
	}
	r = &w->r[slot(w, w->n - 1)];
	if (end > r->end)
		r->end = end;
	return false;
}

bool
wm_ack(struct watermark *w, uint64_t id)
{
	bool	 moved = false;

	if (id < w->base || id >= w->base + w->n)
		return false;
	w->r[slot(w, (id - w->base))].done = true;
	while (w->n > 0 && w->r[w->head].done) {
		if (w->r[w->head].end > w->committed)
			w->committed = w->r[w->head].end;
		w->head = slot(w, 1);
		w->n--;
		w->base++;
		moved = true;
	}
	return moved;
}

bool
wm_done_to(struct watermark *w, uint64_t end)
{
	struct wm_range	*r;

	if (w->n == 0) {
		if (end <= w->committed)
			return false;
		w->committed = end;
		return true;
	}
	r = &w->r[slot(w, w->n - 1)];
	if (end <= r->end)
		return false;
	if (r->done) {
		r->end = end;
		return false;
	}
	(void)wm_push(w, end);
	w->r[slot(w, w->n - 1)].done = true;
	return false;
}

uint64_t
wm_last_id(const struct watermark *w)
{
	return w->n > 0 ? w->base + w->n - 1 : UINT64_MAX;
}

size_t
wm_spans(const struct watermark *w, struct reg_span *out, size_t max)
{
	const struct wm_range *r;
	uint64_t	 start = w->committed;
	size_t		 i, n = 0;

	for (i = 0; i < w->n; i++) {
		r = &w->r[slot(w, i)];
		if (r->done && r->end > start) {
			if (n > 0 && out[n - 1].end == start)
				out[n - 1].end = r->end;
			else if (n < max) {
				out[n].start = start;
				out[n++].end = r->end;
			} else
				break;
		}
		if (r->end > start)
			start = r->end;
	}
	return n;
}

size_t
wm_pending(const struct watermark *w)
{
	return w->n;
}

void
wm_reset(struct watermark *w, uint64_t committed)
{
	w->base += w->n;
	w->n = 0;
	w->head = 0;
	w->committed = committed;
}
