/*
 * The registry's chained hash table.  Keys are (flow, dev, ino), hashed
 * with FNV-1a over the flow name and a 64-bit mixer over the numbers; the
 * bucket array doubles at 3/4 load.  An entry costs its node and its path:
 * the flow name is shared by all the entries of a flow, since a copy per
 * entry would cost more than the entry's numbers.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/pool.h"
#include "base/util.h"
#include "state/regtable.h"

#define TABLE_MIN	64

struct reg_node {
	struct reg_entry	 e;
	struct reg_node		*next;	/* its key's hash is computed again:
					   one word less a known file */
};

/* Every table's nodes (a registry holds one per file it knows). */
static struct pool nodes = POOL_INITIALIZER(struct reg_node);

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

void
regtable_init(struct reg_table *t)
{
	t->nb = TABLE_MIN;
	t->n = 0;
	t->b = xcalloc(t->nb, sizeof(*t->b));
	t->flows = NULL;
	t->nflows = 0;
	t->run = NULL;
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
node_free(struct reg_node *nd)
{
	rstr_free(nd->e.path);
	reg_rare_free(nd->e.rare);
	pool_free(&nodes, nd);
}

void
regtable_cleanup(struct reg_table *t)
{
	struct reg_node	*nd, *next;
	size_t		 i;

	for (i = 0; t->b != NULL && i < t->nb; i++) {
		for (nd = t->b[i]; nd != NULL; nd = next) {
			next = nd->next;
			node_free(nd);
		}
	}
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
}

void
regtable_swap(struct reg_table *a, struct reg_table *b)
{
	struct reg_table	 tmp = *a;

	*a = *b;
	*b = tmp;
}

/* Address of the link that points at the node for the key (or at NULL). */
static struct reg_node **
table_slot(struct reg_table *t, const char *flow, uint64_t dev,
    uint64_t ino)
{
	struct reg_node	**pp, *nd;
	uint64_t	  h;

	h = key_hash(flow, dev, ino);
	for (pp = &t->b[h & (t->nb - 1)]; *pp != NULL; pp = &nd->next) {
		nd = *pp;
		if (nd->e.ino == ino && nd->e.dev == dev &&
		    strcmp(nd->e.flow, flow) == 0)
			break;
	}
	return pp;
}

static void
table_grow(struct reg_table *t)
{
	struct reg_node	**nb, *nd, *next;
	size_t		  i, n;
	uint64_t	  h;

	n = t->nb * 2;
	nb = xcalloc(n, sizeof(*nb));
	for (i = 0; i < t->nb; i++) {
		for (nd = t->b[i]; nd != NULL; nd = next) {
			next = nd->next;
			h = key_hash(nd->e.flow, nd->e.dev, nd->e.ino);
			nd->next = nb[h & (n - 1)];
			nb[h & (n - 1)] = nd;
		}
	}
	free(t->b);
	t->b = nb;
	t->nb = n;
}

static void
table_unlink(struct reg_table *t, struct reg_node **pp)
{
	struct reg_node	*nd = *pp;

	*pp = nd->next;
	node_free(nd);
	t->n--;
}

struct reg_entry *
regtable_find(struct reg_table *t, const char *flow, uint64_t dev,
    uint64_t ino)
{
	struct reg_node	*nd;

	nd = *table_slot(t, flow, dev, ino);
	return nd != NULL ? &nd->e : NULL;
}

struct reg_entry *
regtable_add(struct reg_table *t, const char *flow, uint64_t dev,
    uint64_t ino)
{
	struct reg_node	 *nd, **head;

	if (t->n + 1 > t->nb / 4 * 3)
		table_grow(t);
	nd = pool_alloc(&nodes);
	nd->e.flow = table_flow(t, flow);
	nd->e.dev = dev;
	nd->e.ino = ino;
	head = &t->b[key_hash(flow, dev, ino) & (t->nb - 1)];
	nd->next = *head;
	*head = nd;
	t->n++;
	return &nd->e;
}

bool
regtable_remove(struct reg_table *t, const char *flow, uint64_t dev,
    uint64_t ino)
{
	struct reg_node	**pp;

	pp = table_slot(t, flow, dev, ino);
	if (*pp == NULL)
		return false;
	table_unlink(t, pp);
	return true;
}

size_t
regtable_expire(struct reg_table *t, int64_t before)
{
	struct reg_node	**pp;
	size_t		  i, dropped = 0;

	for (i = 0; i < t->nb; i++) {
		pp = &t->b[i];
		while (*pp != NULL) {
			if ((*pp)->e.updated < before) {
				table_unlink(t, pp);
				dropped++;
			} else
				pp = &(*pp)->next;
		}
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
	struct reg_node		 *nd;
	size_t			  i, k = 0;

	v = xcalloc(t->n, sizeof(*v));
	for (i = 0; i < t->nb; i++)
		for (nd = t->b[i]; nd != NULL; nd = nd->next)
			v[k++] = &nd->e;
	qsort(v, t->n, sizeof(*v), entry_cmp);
	return v;
}
