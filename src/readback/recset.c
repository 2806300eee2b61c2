/*
 * The record multiset (recset.h): open addressing with linear probing in
 * one array of {hash, expected, seen} slots, the slot picked by
 * multiplying the hash into the table size (no power of two needed, so
 * the table is sized to the file's record count).  Hash 0 marks a free
 * slot; a record hashing to 0 is stored as 1.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "readback/recset.h"

struct slot {
	uint64_t	 h;
	uint32_t	 want;		/* occurrences in the files */
	uint32_t	 got;		/* in the stream; the claims take it */
};

struct recset {
	struct slot	*slots;
	uint64_t	 cap;
	uint64_t	 used;
};

static uint64_t
cap_for(uint64_t n)
{
	return n + n / 3 + 16;
}

struct recset *
recset_new(uint64_t n)
{
	struct recset	*s;

	s = xcalloc(1, sizeof(*s));
	s->cap = cap_for(n);
	s->slots = xcalloc(s->cap, sizeof(*s->slots));
	return s;
}

void
recset_free(struct recset *s)
{
	if (s == NULL)
		return;
	free(s->slots);
	free(s);
}

static uint64_t
mix(uint64_t x)
{
	/* splitmix64's finaliser: every input bit reaches every output bit. */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

uint64_t
recset_hash(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t	 h = mix(len ^ 0x9e3779b97f4a7c15ULL), w;
	size_t		 i = 0;

	for (; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		h = mix(h ^ w) + 0x9e3779b97f4a7c15ULL;
	}
	w = 0;
	memcpy(&w, p + i, len - i);
	return mix(h ^ w ^ ((uint64_t)(len - i) << 59));
}

static struct slot *
find(const struct recset *s, uint64_t h)
{
	uint64_t	 i = (uint64_t)(((unsigned __int128)h * s->cap) >> 64);

	while (s->slots[i].h != 0 && s->slots[i].h != h)
		i = i + 1 == s->cap ? 0 : i + 1;
	return &s->slots[i];
}

static void
grow(struct recset *s)
{
	struct slot	*old = s->slots, *d;
	uint64_t	 i, n = s->cap;

	s->cap = cap_for(s->used * 2);
	s->slots = xcalloc(s->cap, sizeof(*s->slots));
	for (i = 0; i < n; i++)
		if (old[i].h != 0) {
			d = find(s, old[i].h);
			*d = old[i];
		}
	free(old);
}

static uint64_t
nonzero(uint64_t h)
{
	return h != 0 ? h : 1;
}

void
recset_add(struct recset *s, uint64_t h)
{
	struct slot	*e;

	h = nonzero(h);
	if ((s->used + 1) * 4 > s->cap * 3)
		grow(s);
	e = find(s, h);
	if (e->h == 0) {
		e->h = h;
		s->used++;
	}
	if (e->want < UINT32_MAX)
		e->want++;
}

bool
recset_seen(struct recset *s, uint64_t h)
{
	struct slot	*e = find(s, nonzero(h));

	if (e->h == 0)
		return false;
	if (e->got < UINT32_MAX)
		e->got++;
	return true;
}

bool
recset_claim(struct recset *s, uint64_t h)
{
	struct slot	*e = find(s, nonzero(h));

	if (e->h == 0 || e->got == 0)
		return false;
	e->got--;
	return true;
}

void
recset_counts(const struct recset *s, struct recset_counts *c)
{
	const struct slot *e;
	uint64_t	 i, match;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < s->cap; i++) {
		e = &s->slots[i];
		if (e->h == 0)
			continue;
		match = MIN(e->want, e->got);
		c->expected += e->want;
		c->found += match;
		c->missing += e->want - match;
		c->extra += e->got - match;
	}
}

size_t
recset_memory(const struct recset *s)
{
	return (size_t)s->cap * sizeof(*s->slots) + sizeof(*s);
}
