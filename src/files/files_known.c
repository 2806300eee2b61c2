/*
 * What a restart must not send again (files.h): the skip plan a tailer
 * takes from its registry entry when it reads on from the entry's offset
 * in the very file the entry describes (the state file's acknowledged
 * spans, the records the restart's read found), and, before each save,
 * the spans acknowledged past each file's committed offset -- its
 * watermark's, its plan's, the batches' still out -- published into its
 * entry; a batch handed back undelivered leaves its acknowledged records
 * in its files' plans.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "base/log.h"
#include "conf/conf.h"
#include "files/files.h"
#include "files/files_int.h"
#include "tail/resume.h"
#include "tail/skipplan.h"
#include "tail/tailer.h"
#include "tail/zsource.h"
#include "state/registry.h"

/* --- a restart's plan --------------------------------------------------- */

/* Keep the found records that start within size; returns how many. */
static size_t
within(struct reg_found *found, size_t n, uint64_t size)
{
	size_t	 i, m = 0;

	for (i = 0; i < n; i++)
		if (found[i].off < size)
			found[m++] = found[i];
	return m;
}

/*
 * What a restart knows was delivered past off (the state file's spans,
 * the restart read's records) goes to t when it reads on from off in the
 * very file the entry describes (same: a descriptor handed over, known to
 * be it); for any other file it is dropped.
 */
void
files_attach_plan(struct files *fs, struct tailer *t, const char *path,
    const struct stat *st, uint64_t off, bool same)
{
	struct reg_entry *e;
	struct reg_found *found;
	struct skipplan	*p;
	size_t		 nfound;

	e = registry_find(fs->reg, fs->fc->name, tailer_dev(t),
	    tailer_ino(t));
	if (e == NULL || (reg_nacked(e) == 0 && reg_nfound(e) == 0))
		return;
	found = registry_take_found(e, &nfound);
	if (off != e->offset ||
	    (!same && !resume_same_head(path, e, (uint64_t)st->st_size))) {
		free(found);
		registry_set_acked(fs->reg, e, NULL, 0);
		return;
	}
	/* A record of this file that landed is in it: what would start past
	 * its end is another file's (an inode used again), never read. */
	if (!zsource_name_compressed(path))
		nfound = within(found, nfound, (uint64_t)st->st_size);
	p = skipplan_new(reg_acked(e), reg_nacked(e), found, nfound, off);
	if (p == NULL)
		return;
	log_debug("[%s] %s: %u acknowledged spans and %zu records found "
	    "in the stream past offset %ju are not sent again", fs->fc->name,
	    path, reg_nacked(e), nfound, (uintmax_t)off);
	tailer_set_plan(t, p);
	fs->plans = true;
}

/* --- the acknowledged spans, before a save ------------------------------ */

static int
span_cmp(const void *a, const void *b)
{
	const struct reg_span *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* Sort v[0..n-1], merge what overlaps or touches, drop what ends at or
 * before from; returns the new count. */
static size_t
merge_spans(struct reg_span *v, size_t n, uint64_t from)
{
	size_t	 i, m = 0;

	qsort(v, n, sizeof(*v), span_cmp);
	for (i = 0; i < n; i++) {
		if (v[i].end <= from)
			continue;
		if (v[i].start < from)
			v[i].start = from;
		if (m > 0 && v[i].start <= v[m - 1].end) {
			if (v[i].end > v[m - 1].end)
				v[m - 1].end = v[i].end;
			continue;
		}
		v[m++] = v[i];
	}
	return m;
}

/* The first of acked[0..n-1] for file, or n. */
static size_t
first_acked(const struct files_acked *acked, size_t n, uint64_t file)
{
	size_t	 lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (acked[mid].file < file)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* t's spans and the n of a into fs->scratch, merged; how many. */
static size_t
collect(struct files *fs, struct tailer *t, const struct files_acked *a,
    size_t na)
{
	struct skipplan	*p = tailer_plan(t);
	size_t		 want, n, i;

	want = tailer_pending(t) + tailer_nheld(t) + na +
	    (p != NULL ? REG_MAX_SPANS : 0) + 1;
	if (fs->nscratch < want) {
		fs->nscratch = want;
		fs->scratch = xrealloc(fs->scratch, want * sizeof(*fs->scratch));
	}
	n = tailer_spans(t, fs->scratch, tailer_pending(t) + tailer_nheld(t));
	if (p != NULL)
		n += skipplan_spans(p, tailer_committed(t), fs->scratch + n,
		    REG_MAX_SPANS);
	for (i = 0; i < na; i++)
		fs->scratch[n++] = (struct reg_span){ .start = a[i].start,
		    .end = a[i].end };
	return merge_spans(fs->scratch, n, tailer_committed(t));
}

size_t
files_collect_spans(struct files *fs, struct tailer *t)
{
	return collect(fs, t, NULL, 0);
}

static void
publish_one(struct files *fs, struct tracked *k, const struct files_acked *a,
    size_t na)
{
	struct tailer	*t = k->t;
	struct reg_entry *e;
	size_t		 n;

	n = collect(fs, t, a, na);
	e = registry_find(fs->reg, fs->fc->name, tailer_dev(t),
	    tailer_ino(t));
	if (e == NULL)
		return;
	registry_set_acked(fs->reg, e, fs->scratch, n);
	k->spans_saved = n > 0;
}

void
files_publish(struct files *fs, const struct files_acked *acked, size_t n)
{
	struct tracked	*k;
	size_t		 i, j;

	for (k = fs->list; k != NULL; k = k->next) {
		i = first_acked(acked, n, tailer_id(k->t));
		for (j = i; j < n && acked[j].file == tailer_id(k->t); j++)
			;
		if (j == i && !k->spans_saved && tailer_pending(k->t) == 0 &&
		    tailer_nheld(k->t) == 0 &&
		    tailer_plan(k->t) == NULL)
			continue;
		publish_one(fs, k, acked + i, j - i);
	}
}

void
files_keep_acked(struct files *fs, const struct files_acked *acked, size_t n)
{
	struct reg_span	*v;
	struct tailer	*t;
	size_t		 i = 0, j, m;

	v = xcalloc(n + 1, sizeof(*v));
	while (i < n) {
		for (j = i, m = 0; j < n && acked[j].file == acked[i].file;
		    j++, m++) {
			v[m].start = acked[j].start;
			v[m].end = acked[j].end;
		}
		t = files_find(fs, acked[i].file);
		if (t != NULL) {
			tailer_set_plan(t, skipplan_add(tailer_take_plan(t), v,
			    m, tailer_committed(t)));
			fs->plans = true;
		}
		i = j;
	}
	free(v);
}

bool
files_restart_pending(struct files *fs)
{
	struct tracked	*k;
	bool		 any = false;

	if (fs->holding)
		return true;	/* what the restart's read found is to come */
	if (!fs->plans)
		return false;
	for (k = fs->list; k != NULL; k = k->next) {
		if (tailer_plan(k->t) == NULL)
			continue;
		any = true;
		if (skipplan_found_left(tailer_plan(k->t)))
			return true;
	}
	fs->plans = any;
	return false;
}
