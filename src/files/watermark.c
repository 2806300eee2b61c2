/*
 * Commit watermark: a ring buffer of ranges indexed by a monotonic id.
 */
#include "config.h"

#include <stdlib.h>

#include "base/util.h"
#include "files/watermark.h"

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

static void
grow(struct watermark *w)
{
	struct wm_range	*nr;
	size_t		 i, ncap;

	ncap = w->cap ? w->cap * 2 : 8;
	nr = xcalloc(ncap, sizeof(*nr));
	for (i = 0; i < w->n; i++)
		nr[i] = w->r[(w->head + i) % w->cap];
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
	w->r[(w->head + w->n) % w->cap].end = end;
	w->r[(w->head + w->n) % w->cap].done = false;
	w->n++;
	return w->base + w->n - 1;
}

void
wm_extend(struct watermark *w, uint64_t id, uint64_t end)
{
	if (id < w->base || id >= w->base + w->n)
		return;
	w->r[(w->head + (id - w->base)) % w->cap].end = end;
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
	r = &w->r[(w->head + w->n - 1) % w->cap];
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
	w->r[(w->head + (id - w->base)) % w->cap].done = true;
	while (w->n > 0 && w->r[w->head].done) {
		if (w->r[w->head].end > w->committed)
			w->committed = w->r[w->head].end;
		w->head = (w->head + 1) % w->cap;
		w->n--;
		w->base++;
		moved = true;
	}
	return moved;
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
