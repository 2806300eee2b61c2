/*
 * Commit watermark: a ring buffer of ranges indexed by a monotonic id.
 */
#include "config.h"

#include <stdlib.h>

#include "base/util.h"
#include "tail/watermark.h"
#include "state/registry.h"

/* The ranges in flight: a power-of-two ring (a mask, not a division, as
 * wm_extend runs for every record), oldest at head. */
struct wm_ring {
	uint32_t	 head;
	uint32_t	 n;
	uint32_t	 cap;
	struct wm_range	 r[];
};

/* The first ring: most files have one or two ranges in flight. */
#define FIRST_CAP	2

void
wm_init(struct watermark *w, uint64_t committed)
{
	w->ring = NULL;
	w->base = 0;
	w->committed = committed;
}

void
wm_cleanup(struct watermark *w)
{
	if (w->ring != NULL)
		w->base += w->ring->n;	/* ids are never reused */
	free(w->ring);
	w->ring = NULL;
}

/* The i-th range from the oldest. */
static inline struct wm_range *
at(const struct watermark *w, uint64_t i)
{
	struct wm_ring	*g = w->ring;

	return &g->r[(g->head + i) & (g->cap - 1)];
}

static inline uint32_t
count(const struct watermark *w)
{
	return w->ring != NULL ? w->ring->n : 0;
}

static void
grow(struct watermark *w)
{
	struct wm_ring	*g;
	uint32_t	 i, n = count(w);

	g = xmalloc(sizeof(*g) + sizeof(g->r[0]) *
	    (size_t)(w->ring != NULL ? w->ring->cap * 2 : FIRST_CAP));
	g->cap = w->ring != NULL ? w->ring->cap * 2 : FIRST_CAP;
	for (i = 0; i < n; i++)
		g->r[i] = *at(w, i);
	g->head = 0;
	g->n = n;
	free(w->ring);
	w->ring = g;
}

uint64_t
wm_push(struct watermark *w, uint64_t end)
{
	struct wm_range	*r;

	if (w->ring == NULL || w->ring->n == w->ring->cap)
		grow(w);
	r = at(w, w->ring->n++);
	r->end = end;
	r->done = false;
	return w->base + w->ring->n - 1;
}

void
wm_extend(struct watermark *w, uint64_t id, uint64_t end)
{
	if (id < w->base || id >= w->base + count(w))
		return;
	at(w, id - w->base)->end = end;
}

/*
 * The newest pending range; or, with none pending, NULL and the committed
 * offset moved to end when short of it (*moved).
 */
static struct wm_range *
newest_or_commit(struct watermark *w, uint64_t end, bool *moved)
{
	*moved = false;
	if (count(w) > 0)
		return at(w, w->ring->n - 1);
	if (end > w->committed) {
		w->committed = end;
		*moved = true;
	}
	return NULL;
}

bool
wm_skip_to(struct watermark *w, uint64_t end)
{
	struct wm_range	*r;
	bool		 moved;

	if ((r = newest_or_commit(w, end, &moved)) != NULL && end > r->end)
		r->end = end;
	return moved;
}

bool
wm_ack(struct watermark *w, uint64_t id)
{
	struct wm_ring	*g = w->ring;
	struct wm_range	*r;
	bool		 moved = false;

	if (id < w->base || id >= w->base + count(w))
		return false;
	at(w, id - w->base)->done = true;
	while (g->n > 0 && (r = &g->r[g->head])->done) {
		if (r->end > w->committed)
			w->committed = r->end;
		g->head = (g->head + 1) & (g->cap - 1);
		g->n--;
		w->base++;
		moved = true;
	}
	return moved;
}

bool
wm_done_to(struct watermark *w, uint64_t end)
{
	struct wm_range	*r;
	bool		 moved;

	if ((r = newest_or_commit(w, end, &moved)) == NULL || end <= r->end)
		return moved;
	if (r->done) {
		r->end = end;
		return false;
	}
	(void)wm_push(w, end);
	at(w, w->ring->n - 1)->done = true;
	return false;
}

uint64_t
wm_last_id(const struct watermark *w)
{
	return count(w) > 0 ? w->base + count(w) - 1 : UINT64_MAX;
}

size_t
wm_spans(const struct watermark *w, struct reg_span *out, size_t max)
{
	const struct wm_range *r;
	uint64_t	 start = w->committed;
	size_t		 i, n = 0;

	for (i = 0; i < count(w); i++) {
		r = at(w, i);
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

bool
wm_acked(const struct watermark *w, uint64_t id)
{
	if (id < w->base)
		return true;
	return id < w->base + count(w) && at(w, id - w->base)->done;
}

size_t
wm_pending(const struct watermark *w)
{
	return count(w);
}

size_t
wm_memory(const struct watermark *w)
{
	return w->ring != NULL ? sizeof(*w->ring) +
	    sizeof(w->ring->r[0]) * w->ring->cap : 0;
}

void
wm_reset(struct watermark *w, uint64_t committed)
{
	if (w->ring != NULL) {
		w->base += w->ring->n;
		w->ring->n = 0;
		w->ring->head = 0;
	}
	w->committed = committed;
}
