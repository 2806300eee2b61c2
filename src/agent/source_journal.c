/*
 * The systemd journal as a flow's source (source.h): the entries of
 * journal/journal.h, one record each.  An entry's position on the commit
 * watermark is its number in this run (1, 2, ...), and each range of the
 * watermark keeps the cursor of its last entry, so that when an
 * acknowledgement moves the committed position the registry gets the
 * cursor of the last entry of the acknowledged prefix: what a restart
 * resumes after.  As for a file, at most maxInFlightRequests + 1 ranges
 * are out at once, which bounds what a crash can send twice.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "agent/source.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/util.h"
#include "conf/conf.h"
#include "conf/journalconf.h"
#include "tail/watermark.h"
#include "journal/journal.h"
#include "state/registry.h"

#define ORIGIN	1	/* the one origin of its records */

/* The cursor of the last entry of a range of the watermark. */
struct cursor_range {
	uint64_t	 end;
	char		*cursor;	/* owned */
};

struct source_journal {
	struct source	 src;		/* the interface */
	const struct conf_flow *fc;
	struct journal	*j;
	struct registry	*reg;
	struct metrics_flow *m;
	struct source_cbs cbs;
	struct watermark wm;
	uint64_t	 seq;		/* entries taken so far */
	struct cursor_range *ring;	/* parallel to wm's ranges */
	size_t		 head;
	size_t		 n;
	size_t		 cap;
	const char	*offered;	/* the cursor of the entry offered */
	char		*committed;	/* the cursor in the registry, or NULL */
	char		*path;		/* "journal:system", "journal:DIR" */
	bool		 at_end;	/* the last read found nothing new */
};

static struct source_journal *
sj_of(struct source *s)
{
	return container_of(s, struct source_journal, src);
}

static const struct source_journal *
csj_of(const struct source *s)
{
	return container_of(s, const struct source_journal, src);
}

/* --- the commit --------------------------------------------------------- */

/* cursor is committed: the registry keeps it. */
static void
commit(struct source_journal *sj, const char *cursor)
{
	struct reg_entry *e;

	free(sj->committed);
	sj->committed = xstrdup(cursor);
	e = registry_set(sj->reg, sj->fc->name, 0, 0, 0, 0, sj->path, 0);
	registry_set_cursor(sj->reg, e, cursor);
}

static struct cursor_range *
ring_at(struct source_journal *sj, size_t i)
{
	return &sj->ring[(sj->head + i) % sj->cap];
}

static void
ring_push(struct source_journal *sj, uint64_t end, const char *cursor)
{
	struct cursor_range *nr;
	size_t		 i, ncap;

	if (sj->n == sj->cap) {
		ncap = sj->cap ? sj->cap * 2 : 8;
		nr = xcalloc(ncap, sizeof(*nr));
		for (i = 0; i < sj->n; i++)
			nr[i] = *ring_at(sj, i);
		free(sj->ring);
		sj->ring = nr;
		sj->cap = ncap;
		sj->head = 0;
	}
	sj->ring[(sj->head + sj->n) % sj->cap].end = end;
	sj->ring[(sj->head + sj->n) % sj->cap].cursor = xstrdup(cursor);
	sj->n++;
}

/* The newest range now ends at end, with cursor. */
static void
ring_extend(struct source_journal *sj, uint64_t end, const char *cursor)
{
	struct cursor_range *r;

	if (sj->n == 0)
		return;
	r = ring_at(sj, sj->n - 1);
	r->end = end;
	free(r->cursor);
	r->cursor = xstrdup(cursor);
}

/* Nothing ends a range early here: the batch's range is extended. */
static bool
sj_add(struct source *s, const struct source_rec *r, uint64_t *range)
{
	struct source_journal *sj = sj_of(s);

	if (*range != SOURCE_NO_RANGE) {
		wm_extend(&sj->wm, *range, r->end);
		ring_extend(sj, r->end, sj->offered);
		return false;
	}
	ring_push(sj, r->end, sj->offered);
	*range = wm_push(&sj->wm, r->end);
	return true;
}

/* Entries up to end (the last one's cursor) are done without a record. */
static void
skip_to(struct source_journal *sj, uint64_t end, const char *cursor)
{
	if (wm_skip_to(&sj->wm, end))
		commit(sj, cursor);
	else
		ring_extend(sj, end, cursor);
}

static void
sj_skip(struct source *s, const struct source_rec *r)
{
	struct source_journal *sj = sj_of(s);

	skip_to(sj, r->end, sj->offered);
}

static void
sj_ack(struct source *s, uint64_t origin, uint64_t range)
{
	struct source_journal *sj = sj_of(s);
	struct cursor_range *r;
	char		*last = NULL;

	(void)origin;
	if (!wm_ack(&sj->wm, range))
		return;
	while (sj->n > 0 && ring_at(sj, 0)->end <= sj->wm.committed) {
		r = ring_at(sj, 0);
		free(last);
		last = r->cursor;
		sj->head = (sj->head + 1) % sj->cap;
		sj->n--;
	}
	if (last != NULL)
		commit(sj, last);
	free(last);
}

/* --- reading ------------------------------------------------------------ */

static bool
is_open(const struct source_journal *sj)
{
	return sj->cbs.open(sj->cbs.arg);
}

static bool
held(const struct source_journal *sj)
{
	/* What a crash can send twice stays bounded (lessons R3). */
	return wm_pending(&sj->wm) >= (size_t)sj->fc->max_in_flight + 1;
}

static bool
sj_read(struct source *s, size_t *budget, size_t max_record)
{
	struct source_journal *sj = sj_of(s);
	struct journal_entry e;
	struct source_rec r;
	int		 rc;

	while (*budget > 0 && is_open(sj) && !held(sj)) {
		rc = journal_peek(sj->j, max_record, &e);
		if (rc <= 0) {
			/* An error is logged; the next change tries again. */
			sj->at_end = true;
			return true;
		}
		sj->offered = e.cursor;
		if (e.data == NULL) {
			/* No MESSAGE: nothing to send, committed. */
			skip_to(sj, ++sj->seq, e.cursor);
			journal_take(sj->j);
			continue;
		}
		r.data = e.data;
		r.len = e.len;
		r.name = e.name;
		r.origin = ORIGIN;
		r.origin_name = sj->path;
		r.off = e.realtime;
		r.end = r.commit = sj->seq + 1;
		r.at = sj;
		r.known = false;
		if (sj->cbs.record(sj->cbs.arg, &r) != 0)
			break;		/* refused: offered again */
		sj->seq++;
		sj->m->records_truncated += e.cut;
		journal_take(sj->j);
		*budget -= MIN(*budget, e.len + 1);
	}
	return false;
}

static void
on_changed(void *arg)
{
	struct source_journal *sj = arg;

	sj->at_end = false;
	sj->cbs.readable(sj->cbs.arg);
}

/* --- the rest of the interface ------------------------------------------ */

static int
sj_start(struct source *s)
{
	struct source_journal *sj = sj_of(s);
	struct reg_entry *e;
	char		*start = NULL;
	int		 r;

	e = registry_find(sj->reg, sj->fc->name, 0, 0);
	if (e != NULL && reg_cursor(e) != NULL)
		sj->committed = xstrdup(reg_cursor(e));
	/* A cursor sd-journal refuses (a state file edited by hand) stops
	 * the flow: reading from elsewhere would resend or skip. */
	if ((r = journal_start(sj->j, sj->committed, &start)) != 0)
		return r;
	/* From the end: that is the position until an entry is sent. */
	if (start != NULL)
		commit(sj, start);
	free(start);
	return 0;
}

static void
sj_stop(struct source *s)
{
	journal_stop(sj_of(s)->j);
}

static bool
sj_all_read(const struct source *s)
{
	const struct source_journal *sj = csj_of(s);

	return sj->at_end;
}

static void
sj_touch(struct source *s)
{
	struct source_journal *sj = sj_of(s);

	if (sj->committed != NULL)
		(void)registry_set(sj->reg, sj->fc->name, 0, 0, 0, 0, sj->path,
		    0);
}

static void
sj_free(struct source *s)
{
	struct source_journal *sj = sj_of(s);

	journal_free(sj->j);
	while (sj->n > 0) {
		free(ring_at(sj, 0)->cursor);
		sj->head = (sj->head + 1) % sj->cap;
		sj->n--;
	}
	free(sj->ring);
	wm_cleanup(&sj->wm);
	free(sj->committed);
	free(sj->path);
	free(sj);
}

static const struct source_ops journal_ops = {
	.start = sj_start,
	.stop = sj_stop,
	.free = sj_free,
	.read = sj_read,
	.add = sj_add,
	.skip = sj_skip,
	.ack = sj_ack,
	.all_read = sj_all_read,
	.touch = sj_touch,
};

struct source *
source_journal_new(uv_loop_t *loop, const struct conf *conf,
    const struct conf_flow *fc, struct registry *reg, struct metrics_flow *m,
    bool keep_delim, bool once, const struct source_cbs *cbs, char *err,
    size_t errlen)
{
	struct source_journal *sj;
	char		 why[400];

	(void)conf;
	sj = xcalloc(1, sizeof(*sj));
	sj->src.ops = &journal_ops;
	sj->fc = fc;
	sj->reg = reg;
	sj->m = m;
	sj->cbs = *cbs;
	wm_init(&sj->wm, 0);
	sj->path = xasprintf("journal:%s", fc->journal_dir[0] != '\0' ?
	    fc->journal_dir : "system");
	if (fc->journal_dir[0] == '\0' &&
	    !journalconf_host_has_journal(why, sizeof(why)))
		log_warn("[%s] source = journal: %s", fc->name, why);
	sj->j = journal_open(loop, fc, keep_delim || fc->keep_delimiter, m,
	    once, on_changed, sj, err, errlen);
	if (sj->j == NULL) {
		free(sj->path);
		free(sj);
		return NULL;
	}
	return &sj->src;
}
