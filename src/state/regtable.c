/*
 * The registry's hash table: open addressing with linear probing, one
 * pointer a slot, the array doubled at 3/4 load.  Keys are (flow, dev,
 * ino), hashed with FNV-1a over the flow name and a 64-bit mixer over the
 * numbers.  An entry costs its 72 bytes from a pool, its slot (8 to 16
 * bytes) and its path: no chain pointer, and the flow name is shared by
 * all the entries of a flow, since a copy per entry would cost more than
 * the entry's numbers.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/pool.h"
#include "base/util.h"
#include "state/regtable.h"

#define TABLE_MIN	64

/* Every table's entries (a registry holds one per file it knows). */
static struct pool entries = POOL_INITIALIZER(struct reg_entry);

static uint64_t
mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t
key_hash(const char *flow, uint64_t dev, uint64_t ino)
{
	uint64_t	 h = 0xcbf29ce484222325ULL;	/* FNV-1a */

	for (; *flow != '\0'; flow++) {
		h ^= (unsigned char)*flow;
		h *= 0x100000001b3ULL;
	}
	return mix64(mix64(h ^ dev) ^ ino);
}

/* The slot an entry's probe starts at. */
static size_t
home_of(const struct reg_table *t, const struct reg_entry *e)
{
	return key_hash(e->flow, e->dev, e->ino) & (t->nb - 1);
}

void
regtable_init(struct reg_table *t)
{
	t->nb = TABLE_MIN;
	t->n = 0;
	t->b = xcalloc(t->nb, sizeof(*t->b));
	t->flows = NULL;
	t->nflows = 0;
	t->run = NULL;
	t->descs = NULL;
	t->ndescs = 0;
}

/* The table's copy of flow name, shared by all its entries of that flow. */
static char *
table_flow(struct reg_table *t, const char *flow)
{
	size_t	 i;

	for (i = 0; i < t->nflows; i++)
		if (strcmp(t->flows[i], flow) == 0)
			return t->flows[i];
	t->flows = xrealloc(t->flows, (t->nflows + 1) * sizeof(*t->flows));
	t->flows[t->nflows] = xstrdup(flow);
	return t->flows[t->nflows++];
}

struct reg_rare *
reg_rare_of(struct reg_entry *e)
{
	if (e->rare == NULL)
		e->rare = xcalloc(1, sizeof(*e->rare));
	return e->rare;
}

void
reg_rare_trim(struct reg_entry *e)
{
	struct reg_rare	*r = e->rare;

	if (r != NULL && r->nacked == 0 && r->nfound == 0 && r->done == NULL &&
	    r->cursor == NULL && r->spool == NULL) {
		reg_rare_free(r);
		e->rare = NULL;
	}
}

void
reg_rare_free(struct reg_rare *r)
{
	if (r == NULL)
		return;
	free(r->acked);
	free(r->found);
	free(r->done);
	free(r->cursor);
	reg_spool_free(r->spool);
	free(r);
}

void
reg_spool_free(struct reg_spool *sp)
{
	if (sp != NULL)
		free(sp->file);
	free(sp);
}

static void
entry_free(struct reg_entry *e)
{
	rstr_free(e->path);
	reg_rare_free(e->rare);
	pool_free(&entries, e);
}

void
regtable_cleanup(struct reg_table *t)
{
	size_t		 i;

	for (i = 0; t->b != NULL && i < t->nb; i++)
		if (t->b[i] != NULL)
			entry_free(t->b[i]);
	free(t->b);
	t->b = NULL;
	t->nb = t->n = 0;
	for (i = 0; i < t->nflows; i++)
		free(t->flows[i]);
	free(t->flows);
	t->flows = NULL;
	t->nflows = 0;
	reg_run_free(t->run);
	t->run = NULL;
	for (i = 0; i < t->ndescs; i++) {
		free(t->descs[i].name);
		free(t->descs[i].stream);
		free(t->descs[i].pattern);
		free(t->descs[i].was);
	}
	free(t->descs);
	t->descs = NULL;
	t->ndescs = 0;
}

void
regtable_swap(struct reg_table *a, struct reg_table *b)
{
	struct reg_table	 tmp = *a;

	*a = *b;
	*b = tmp;
}

/* The slot that holds the entry for the key, or the empty slot its probe
 * ends at. */
static size_t
table_slot(const struct reg_table *t, const char *flow, uint64_t dev,
    uint64_t ino)
{
	const struct reg_entry	*e;
	size_t			 i, mask = t->nb - 1;

	for (i = key_hash(flow, dev, ino) & mask; (e = t->b[i]) != NULL;
	    i = (i + 1) & mask)
		if (e->ino == ino && e->dev == dev && strcmp(e->flow, flow) == 0)
			break;
	return i;
}

/* Put e in the first empty slot of its probe (its key is not there, as
 * regtable_add's callers and a growing table know): no key compares. */
static void
table_place(struct reg_table *t, struct reg_entry *e)
{
	size_t	 i, mask = t->nb - 1;

	for (i = home_of(t, e); t->b[i] != NULL; i = (i + 1) & mask)
		continue;
	t->b[i] = e;
}

static void
table_grow(struct reg_table *t)
{
	struct reg_entry **old = t->b;
	size_t		   i, on = t->nb;

	t->nb = on * 2;
	t->b = xcalloc(t->nb, sizeof(*t->b));
	for (i = 0; i < on; i++)
		if (old[i] != NULL)
			table_place(t, old[i]);
	free(old);
}

/*
 * Free the entry at slot i and close the gap (backward shift): a later
 * entry of the run moves into the hole unless its home lies cyclically in
 * (hole, its slot], where a probe from its home would not pass the hole.
 * A probe never meets an empty slot before its entry.
 */
static void
table_unlink(struct reg_table *t, size_t i)
{
	size_t	 j, home, mask = t->nb - 1;

	entry_free(t->b[i]);
	t->b[i] = NULL;
	t->n--;
	for (j = (i + 1) & mask; t->b[j] != NULL; j = (j + 1) & mask) {
		home = home_of(t, t->b[j]);
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		t->b[i] = t->b[j];
		t->b[j] = NULL;
		i = j;
	}
}

struct reg_entry *
regtable_find(struct reg_table *t, const char *flow, uint64_t dev,
    uint64_t ino)
{
	return t->b[table_slot(t, flow, dev, ino)];
}

struct reg_entry *
regtable_add(struct reg_table *t, const char *flow, uint64_t dev,
    uint64_t ino)
{
	struct reg_entry *e;

	if (t->n + 1 > t->nb / 4 * 3)
		table_grow(t);
	e = pool_alloc(&entries);
	e->flow = table_flow(t, flow);
	e->dev = dev;
	e->ino = ino;
	table_place(t, e);
	t->n++;
	return e;
}

bool
regtable_remove(struct reg_table *t, const char *flow, uint64_t dev,
    uint64_t ino)
{
	size_t	 i = table_slot(t, flow, dev, ino);

	if (t->b[i] == NULL)
		return false;
	table_unlink(t, i);
	return true;
}

size_t
regtable_rename_flow(struct reg_table *t, const char *from, const char *to)
{
	struct reg_entry **old = t->b;
	char		  *nf = table_flow(t, to);
	size_t		   i, moved = 0;

	/* Placed again from scratch: the key of every moved entry changes. */
	t->b = xcalloc(t->nb, sizeof(*t->b));
	for (i = 0; i < t->nb; i++)
		if (old[i] != NULL && strcmp(old[i]->flow, from) != 0)
			table_place(t, old[i]);
	for (i = 0; i < t->nb; i++) {
		if (old[i] == NULL || strcmp(old[i]->flow, from) != 0)
			continue;
		if (t->b[table_slot(t, to, old[i]->dev, old[i]->ino)] != NULL) {
			entry_free(old[i]);
			t->n--;
			continue;
		}
		old[i]->flow = nf;
		table_place(t, old[i]);
		moved++;
	}
	free(old);
	return moved;
}

const struct reg_flowdesc *
regtable_desc(const struct reg_table *t, const char *flow)
{
	size_t	 i;

	for (i = 0; i < t->ndescs; i++)
		if (strcmp(t->descs[i].name, flow) == 0)
			return &t->descs[i];
	return NULL;
}

void
regtable_describe(struct reg_table *t, const char *flow, const char *stream,
    const char *pattern)
{
	struct reg_flowdesc *d = (struct reg_flowdesc *)regtable_desc(t, flow);

	if (d == NULL) {
		t->descs = xrealloc(t->descs,
		    (t->ndescs + 1) * sizeof(*t->descs));
		d = &t->descs[t->ndescs++];
		d->name = xstrdup(flow);
		d->was = NULL;
	} else {
		free(d->stream);
		free(d->pattern);
	}
	d->stream = xstrdup(stream);
	d->pattern = xstrdup(pattern);
}

/*
 * A removal may move a later entry into the slot just checked, so the
 * slot is checked again before moving on.  The entries it moves from past
 * the array's end into the slots before it were checked already, and
 * stay.
 */
size_t
regtable_expire(struct reg_table *t, int64_t before)
{
	size_t	 i = 0, dropped = 0;

	while (i < t->nb) {
		if (t->b[i] != NULL && t->b[i]->updated < before) {
			table_unlink(t, i);
			dropped++;
		} else
			i++;
	}
	return dropped;
}

static int
entry_cmp(const void *a, const void *b)
{
	const struct reg_entry	*x = *(struct reg_entry *const *)a;
	const struct reg_entry	*y = *(struct reg_entry *const *)b;
	int			 c;

	c = strcmp(x->flow, y->flow);
	if (c != 0)
		return c;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return 0;
}

struct reg_entry **
regtable_sorted(const struct reg_table *t)
{
	struct reg_entry	**v;
	size_t			  i, k = 0;

	v = xcalloc(t->n, sizeof(*v));
	for (i = 0; i < t->nb; i++)
		if (t->b[i] != NULL)
			v[k++] = t->b[i];
	qsort(v, t->n, sizeof(*v), entry_cmp);
	return v;
}
