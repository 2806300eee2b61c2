/*
 * Per-partition positions of `read --app` (readpos.h).  Partitions are
 * few (at most a few thousand) and records come in runs per partition,
 * so a flat array with the last one used remembered is enough.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/closer.h"
#include "base/util.h"
#include "readback/ckpt.h"
#include "readback/readpos.h"

struct pos {
	char		 id[40];
	int64_t		 written;
	int64_t		 printed;
	int64_t		 committed;
};

struct readpos {
	struct ckpt	*ck;
	uv_timer_t	 timer;
	struct closer	 closer;	/* the timer being closed */
	struct pos	*v;
	size_t		 n;
	size_t		 cap;
	size_t		 last;		/* index of the last one used */
};

static void	freed(struct closer *);

static void
on_timer(uv_timer_t *t)
{
	readpos_commit(container_of(t, struct readpos, timer));
}

struct readpos *
readpos_new(uv_loop_t *loop, struct ckpt *ck, uint64_t every_ms)
{
	struct readpos	*rp;

	rp = xcalloc(1, sizeof(*rp));
	rp->ck = ck;
	uv_timer_init(loop, &rp->timer);
	closer_init(&rp->closer, freed);
	uv_timer_start(&rp->timer, on_timer, every_ms, every_ms);
	return rp;
}

static struct pos *
find(struct readpos *rp, const char *partition)
{
	size_t	 i;

	if (rp->n > 0 && strcmp(rp->v[rp->last].id, partition) == 0)
		return &rp->v[rp->last];
	for (i = 0; i < rp->n; i++)
		if (strcmp(rp->v[i].id, partition) == 0)
			break;
	if (i == rp->n) {
		if (rp->n == rp->cap) {
			rp->cap = rp->cap ? 2 * rp->cap : 16;
			rp->v = xrealloc(rp->v, rp->cap * sizeof(*rp->v));
		}
		snprintf(rp->v[i].id, sizeof(rp->v[i].id), "%s", partition);
		rp->v[i].written = rp->v[i].printed = rp->v[i].committed = -1;
		rp->n++;
	}
	rp->last = i;
	return &rp->v[i];
}

void
readpos_written(struct readpos *rp, const char *partition, int64_t seq)
{
	struct pos	*p = find(rp, partition);

	if (seq > p->written)
		p->written = seq;
}

void
readpos_printed(struct readpos *rp)
{
	size_t	 i;

	for (i = 0; i < rp->n; i++)
		rp->v[i].printed = rp->v[i].written;
}

void
readpos_commit(struct readpos *rp)
{
	struct pos	*p;

	for (p = rp->v; p < rp->v + rp->n; p++)
		if (p->printed > p->committed) {
			ckpt_commit(rp->ck, p->id, p->printed);
			p->committed = p->printed;
		}
}

/* The timer closed: the memory goes. */
static void
freed(struct closer *c)
{
	struct readpos	*rp = container_of(c, struct readpos, closer);

	free(rp->v);
	free(rp);
}

void
readpos_free(struct readpos *rp)
{
	if (rp == NULL)
		return;
	closer_close(&rp->closer, (uv_handle_t *)&rp->timer);
	closer_release(&rp->closer);
}
