/*
 * Sequence-number floors (seqmark.h): the current values are a shared,
 * reference-counted array, copied before a change while a pin holds it.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "sink/seqmark.h"

struct seqsnap {
	unsigned	 refs;
	size_t		 n;
	int64_t		 last[];	/* by partition; SEQMARK_NONE: unknown */
};

struct seqmark {
	struct seqsnap	*cur;		/* one reference is the mark's */
};

static struct seqsnap *
snap_new(size_t n, const struct seqsnap *from)
{
	struct seqsnap	*s;
	size_t		 i = 0;

	s = xmalloc(sizeof(*s) + n * sizeof(s->last[0]));
	s->refs = 1;
	s->n = n;
	if (from != NULL)
		for (; i < from->n && i < n; i++)
			s->last[i] = from->last[i];
	for (; i < n; i++)
		s->last[i] = SEQMARK_NONE;
	return s;
}

struct seqmark *
seqmark_new(void)
{
	struct seqmark	*m;

	m = xcalloc(1, sizeof(*m));
	m->cur = snap_new(0, NULL);
	return m;
}

void
seqmark_free(struct seqmark *m)
{
	if (m == NULL)
		return;
	seqsnap_unpin(m->cur);
	free(m);
}

/* The current values, writable, with room for part. */
static struct seqsnap *
writable(struct seqmark *m, int32_t part)
{
	struct seqsnap	*s = m->cur;
	size_t		 n = s->n;

	if ((size_t)part >= n)
		n = MAX((size_t)part + 1, 2 * n);
	if (s->refs == 1 && n == s->n)
		return s;
	m->cur = snap_new(n, s);
	seqsnap_unpin(s);
	return m->cur;
}

static void
raise_to(struct seqmark *m, int32_t part, int64_t v)
{
	struct seqsnap	*s;

	if (part < 0 || part >= SEQMARK_MAX || v < -1)
		return;
	if ((size_t)part < m->cur->n && m->cur->last[part] >= v)
		return;
	s = writable(m, part);
	if (s->last[part] < v)
		s->last[part] = v;
}

void
seqmark_seed(struct seqmark *m, int32_t part, int64_t last)
{
	raise_to(m, part, last);
}

void
seqmark_ack(struct seqmark *m, int32_t part, int64_t seq)
{
	raise_to(m, part, seq);
}

struct seqsnap *
seqmark_pin(struct seqmark *m)
{
	m->cur->refs++;
	return m->cur;
}

void
seqsnap_unpin(struct seqsnap *s)
{
	if (s != NULL && --s->refs == 0)
		free(s);
}

static int64_t
least(int64_t a, int64_t b)
{
	if (a == SEQMARK_NONE)
		return b;
	if (b == SEQMARK_NONE)
		return a;
	return MIN(a, b);
}

struct seqsnap *
seqsnap_join(struct seqsnap *a, struct seqsnap *b)
{
	struct seqsnap	*s;
	size_t		 i;

	if (a == NULL || a == b) {
		if (a != NULL)
			seqsnap_unpin(a);
		return b;
	}
	if (b == NULL)
		return a;
	s = snap_new(MAX(a->n, b->n), NULL);
	for (i = 0; i < s->n; i++)
		s->last[i] = least(i < a->n ? a->last[i] : SEQMARK_NONE,
		    i < b->n ? b->last[i] : SEQMARK_NONE);
	seqsnap_unpin(a);
	seqsnap_unpin(b);
	return s;
}

void
seqmark_floors(const struct seqmark *m, struct seqsnap *const *pins,
    size_t npins, void (*cb)(int32_t, int64_t, void *), void *arg)
{
	const struct seqsnap *cur = m->cur;
	int64_t		 v;
	size_t		 p, i;

	for (p = 0; p < cur->n; p++) {
		v = cur->last[p];
		if (v == SEQMARK_NONE)
			continue;
		/* A pin from before anything was known of p does not
		 * lower it (its records there can only be resent). */
		for (i = 0; i < npins; i++)
			if (pins[i] != NULL && p < pins[i]->n &&
			    pins[i]->last[p] != SEQMARK_NONE &&
			    pins[i]->last[p] < v)
				v = pins[i]->last[p];
		cb((int32_t)p, v, arg);
	}
}
