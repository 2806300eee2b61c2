/*
 * Skip plans (skipplan.h): two sorted arrays and a cursor in each.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "tail/skipplan.h"
#include "records/keyid.h"
#include "state/registry.h"

struct skipplan {
	struct reg_span	*spans;
	size_t		 nspans;
	size_t		 si;		/* the first span not yet passed */
	struct reg_found *found;
	size_t		 nfound;
	size_t		 fi;		/* the first found not yet passed */
};

struct skipplan *
skipplan_new(const struct reg_span *spans, size_t nspans,
    struct reg_found *found, size_t nfound, uint64_t offset)
{
	struct skipplan	*p;

	p = xcalloc(1, sizeof(*p));
	if (nspans > 0) {
		p->spans = xcalloc(nspans, sizeof(*p->spans));
		memcpy(p->spans, spans, nspans * sizeof(*spans));
	}
	p->nspans = nspans;
	p->found = found;
	p->nfound = nfound;
	while (p->si < p->nspans && p->spans[p->si].end <= offset)
		p->si++;
	while (p->fi < p->nfound && p->found[p->fi].off < offset)
		p->fi++;
	if (skipplan_done(p, offset)) {
		skipplan_free(p);
		return NULL;
	}
	return p;
}

void
skipplan_free(struct skipplan *p)
{
	if (p == NULL)
		return;
	free(p->spans);
	free(p->found);
	free(p);
}

bool
skipplan_acked(struct skipplan *p, uint64_t start, uint64_t end)
{
	return skipplan_acked_from(p, start, start, end);
}

bool
skipplan_acked_from(struct skipplan *p, uint64_t from, uint64_t start,
    uint64_t end)
{
	size_t	 i;

	from = MIN(from, start);
	while (p->si < p->nspans && p->spans[p->si].end <= from)
		p->si++;
	for (i = p->si; i < p->nspans && p->spans[i].end <= start; i++)
		;
	/* An empty record (a container line held back before the other
	 * stream's partial lines whose bytes are not its own alone,
	 * records/framer_ctr.c) says nothing of what was delivered: it is
	 * sent again rather than lost.  A record held back with its own
	 * bytes is skipped only by a span that starts past where it is held:
	 * one over that point is a record's or a range's that takes the held
	 * bytes along without their record (the other stream's line joined
	 * across it, the watermark's range after it), not its own. */
	return start < end && i < p->nspans &&
	    p->spans[i].start <= start && end <= p->spans[i].end &&
	    (from == start || p->spans[i].start > from);
}

bool
skipplan_found(struct skipplan *p, uint64_t start, const void *data,
    size_t len)
{
	return skipplan_found_from(p, start, start, data, len);
}

bool
skipplan_found_from(struct skipplan *p, uint64_t from, uint64_t start,
    const void *data, size_t len)
{
	const struct reg_found *f;
	struct reg_found hit;
	uint64_t	 hash = 0;
	size_t		 i;
	bool		 hashed = false;

	from = MIN(from, start);
	while (p->fi < p->nfound && p->found[p->fi].off < from)
		p->fi++;
	for (i = p->fi; i < p->nfound && p->found[i].off < start; i++)
		;
	for (; i < p->nfound && (f = &p->found[i])->off == start; i++) {
		if (f->len != len)
			continue;
		if (!hashed) {
			hash = keyid_data(data, len);
			hashed = true;
		}
		if (f->hash != hash)
			continue;
		/* Forgotten (one skip each): the ones before it move up,
		 * so that what is left stays in order. */
		hit = *f;
		memmove(p->found + p->fi + 1, p->found + p->fi,
		    (i - p->fi) * sizeof(*p->found));
		p->found[p->fi++] = hit;
		return true;
	}
	return false;
}

bool
skipplan_done(const struct skipplan *p, uint64_t off)
{
	size_t	 si = p->si, fi = p->fi;

	while (si < p->nspans && p->spans[si].end <= off)
		si++;
	while (fi < p->nfound && p->found[fi].off < off)
		fi++;
	return si == p->nspans && fi == p->nfound;
}

bool
skipplan_found_left(const struct skipplan *p)
{
	return p->fi < p->nfound;
}

size_t
skipplan_spans(const struct skipplan *p, uint64_t off, struct reg_span *out,
    size_t max)
{
	size_t	 i, n = 0;

	for (i = p->si; i < p->nspans && n < max; i++)
		if (p->spans[i].end > off)
			out[n++] = p->spans[i];
	return n;
}

size_t
skipplan_memory(const struct skipplan *p)
{
	return sizeof(*p) + p->nspans * sizeof(*p->spans) +
	    p->nfound * sizeof(*p->found);
}

static int
span_cmp(const void *a, const void *b)
{
	const struct reg_span *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

struct skipplan *
skipplan_add(struct skipplan *p, const struct reg_span *spans, size_t n,
    uint64_t offset)
{
	struct reg_span	*v;
	size_t		 i, m = 0, have;

	if (p == NULL)
		return skipplan_new(spans, n, NULL, 0, offset);
	have = p->nspans - p->si;
	v = xcalloc(have + n + 1, sizeof(*v));
	if (have > 0)
		memcpy(v, p->spans + p->si, have * sizeof(*v));
	if (n > 0)
		memcpy(v + have, spans, n * sizeof(*v));
	qsort(v, have + n, sizeof(*v), span_cmp);
	for (i = 0; i < have + n; i++) {
		if (m > 0 && v[i].start <= v[m - 1].end) {
			if (v[i].end > v[m - 1].end)
				v[m - 1].end = v[i].end;
			continue;
		}
		v[m++] = v[i];
	}
	free(p->spans);
	p->spans = v;
	p->nspans = m;
	p->si = 0;
	while (p->si < p->nspans && p->spans[p->si].end <= offset)
		p->si++;
	if (skipplan_done(p, offset)) {
		skipplan_free(p);
		return NULL;
	}
	return p;
}
