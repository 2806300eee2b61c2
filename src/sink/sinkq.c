/*
 * The batches a sink holds and their queues (sinkq.h): the list of all,
 * the waiting FIFO, the timed queue in due order, and the remnants that
 * ride in another batch's request.
 */
#include "config.h"

#include <stdlib.h>

#include "base/util.h"
#include "sink/batch.h"
#include "sink/putbody.h"
#include "sink/seqmark.h"
#include "sink/sinkq.h"

struct sink_batch *
sinkq_add(struct sinkq *q, struct sink *s, struct batch *b)
{
	struct sink_batch *sb;

	sb = xcalloc(1, sizeof(*sb));
	sb->b = b;
	sb->sink = s;
	putbody_req_init(&sb->req);
	sb->all_next = q->all;
	if (q->all != NULL)
		q->all->all_prev = sb;
	q->all = sb;
	q->pending++;
	return sb;
}

struct batch *
sinkq_take(struct sinkq *q, struct sink_batch *sb)
{
	struct batch	*b = sb->b;

	if (sb->all_prev != NULL)
		sb->all_prev->all_next = sb->all_next;
	else
		q->all = sb->all_next;
	if (sb->all_next != NULL)
		sb->all_next->all_prev = sb->all_prev;
	q->pending--;
	seqsnap_unpin(sb->pin);
	putbody_req_cleanup(&sb->req);
	free(sb);
	return b;
}

/* --- waiting ------------------------------------------------------------ */

void
sinkq_enqueue(struct sinkq *q, struct sink_batch *sb)
{
	struct sink_batch **pp;

	sb->next = NULL;
	for (pp = &q->waiting; *pp != NULL; pp = &(*pp)->next)
		;
	*pp = sb;
}

struct sink_batch *
sinkq_take_waiting(struct sinkq *q)
{
	struct sink_batch *w = q->waiting;

	q->waiting = NULL;
	return w;
}

struct sink_batch *
sinkq_pop_waiting(struct sinkq *q)
{
	struct sink_batch *sb = q->waiting;

	if (sb != NULL) {
		q->waiting = sb->next;
		sb->next = NULL;
	}
	return sb;
}

/* --- timed -------------------------------------------------------------- */

bool
sinkq_insert(struct sinkq *q, struct sink_batch *sb)
{
	struct sink_batch **pp;

	for (pp = &q->timed; *pp != NULL && (*pp)->due_ms <= sb->due_ms;
	    pp = &(*pp)->next)
		;
	sb->next = *pp;
	*pp = sb;
	return q->timed == sb;
}

bool
sinkq_remove(struct sinkq *q, struct sink_batch *sb)
{
	struct sink_batch **pp;

	for (pp = &q->timed; *pp != NULL; pp = &(*pp)->next)
		if (*pp == sb) {
			*pp = sb->next;
			sb->next = NULL;
			return true;
		}
	return false;
}

struct sink_batch *
sinkq_take_due(struct sinkq *q, uint64_t now)
{
	struct sink_batch *due = NULL, **tail = &due, *sb;

	while ((sb = q->timed) != NULL && sb->due_ms <= now) {
		q->timed = sb->next;
		sb->next = NULL;
		*tail = sb;
		tail = &sb->next;
	}
	return due;
}

struct sink_batch *
sinkq_take_timed(struct sinkq *q)
{
	struct sink_batch *t = q->timed;

	q->timed = NULL;
	return t;
}

struct sink_batch *
sinkq_take_parked(struct sinkq *q)
{
	struct sink_batch **pp, *sb;

	for (pp = &q->timed; (sb = *pp) != NULL; pp = &sb->next)
		if (sb->due_ms == SINKQ_PARKED) {
			*pp = sb->next;
			sb->next = NULL;
			return sb;
		}
	return NULL;
}

const struct sink_batch *
sinkq_head(const struct sinkq *q)
{
	return q->timed;
}

bool
sinkq_only_remnants(const struct sinkq *q)
{
	const struct sink_batch *t;

	for (t = q->timed; t != NULL; t = t->next)
		if (!t->remnant)
			return false;
	return true;
}

/* --- riders ------------------------------------------------------------- */

bool
sinkq_rider(const struct sink_batch *t)
{
	return t->remnant && t->limit == 0 && t->b->nsegs < BATCH_MAX_SEGS;
}

size_t
sinkq_riders(const struct sinkq *q, bool riding, size_t *nbatches,
    size_t *bytes)
{
	const struct sink_batch *t;
	size_t		 n = 0, tb;

	*nbatches = 0;
	*bytes = 0;
	if (!riding)
		return 0;
	for (t = q->timed; t != NULL; t = t->next)
		if (sinkq_rider(t)) {
			n += batch_undone(t->b, &tb);
			*bytes += tb;
			(*nbatches)++;
		}
	return n;
}

/*
 * t, absorbed into sb: what it pinned and its uncertainty are sb's now.
 * sb may hold a pin of its own (an earlier attempt of sb's without a
 * verdict), from before t's or after: sb keeps the least of both, so the
 * floors stay below every record of either that may have landed.
 */
static void
absorb(struct sinkq *q, struct sink_batch *sb, struct sink_batch *t)
{
	batch_absorb(sb->b, t->b);
	sb->pin = seqsnap_join(sb->pin, t->pin);
	t->pin = NULL;
	sb->uncertain = sb->uncertain || t->uncertain;
	batch_free(sinkq_take(q, t));	/* its records and ranges are sb's */
}

size_t
sinkq_absorb_riders(struct sinkq *q, struct sink_batch *sb,
    size_t max_records, size_t max_bytes, size_t *taken, size_t *n)
{
	struct sink_batch **pp, *t;
	size_t		 bytes, tn, tbytes, nb = 0;

	*taken = 0;
	*n = batch_undone(sb->b, &bytes);
	for (pp = &q->timed; (t = *pp) != NULL;) {
		if (t == sb || !sinkq_rider(t)) {
			pp = &t->next;
			continue;
		}
		tn = batch_undone(t->b, &tbytes);
		if (*n + tn > max_records || bytes + tbytes > max_bytes ||
		    sb->b->nsegs + t->b->nsegs > BATCH_MAX_SEGS) {
			pp = &t->next;
			continue;
		}
		*pp = t->next;
		t->next = NULL;
		absorb(q, sb, t);
		*n += tn;
		bytes += tbytes;
		*taken += tn;
		nb++;
	}
	return nb;
}
