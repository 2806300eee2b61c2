/*
 * The flow's view of its tracked files (files.h): which tailer it reads
 * next (the spool first, then round robin among those that can be read
 * and have fewer ranges in flight than the hold), what a read or an
 * acknowledgement moved (the committed offset into the registry, a turn
 * of wholefile), whether everything is read, and the gauges.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "base/log.h"
#include "base/metrics.h"
#include "files/files.h"
#include "files/files_int.h"
#include "files/openfail.h"
#include "files/tailer.h"
#include "files/watcher.h"
#include "files/wholefile.h"

static bool
can_read(const struct tracked *k, size_t hold)
{
	return tailer_is_open(k->t) && tailer_readable(k->t) &&
	    !tailer_stalled(k->t) && tailer_pending(k->t) < hold &&
	    !k->truncate_pending;
}

/*
 * The spool is shipped first: a spool file that can be read, or NULL --
 * and then *wait when one still has bytes that only its ranges in flight
 * hold back, so that no other file is read before it.
 */
static struct tracked *
next_spooled(struct files *fs, size_t hold, bool *wait)
{
	struct tracked	*k;

	*wait = false;
	for (k = fs->list; k != NULL && fs->nspool > 0; k = k->next) {
		if (!k->spool)
			continue;
		if (can_read(k, hold))
			return k;
		if (can_read(k, SIZE_MAX))
			*wait = true;
	}
	return NULL;
}

static struct tracked *
next_tracked(struct files *fs, size_t hold)
{
	struct tracked	*k, *start;
	bool		 wait;

	if (fs->list == NULL)
		return NULL;
	k = next_spooled(fs, hold, &wait);
	if (k != NULL || wait)
		return k;
	start = fs->cursor ? fs->cursor : fs->list;
	k = start;
	do {
		if (can_read(k, hold)) {
			fs->cursor = k->next ? k->next : fs->list;
			return k;
		}
		k = k->next ? k->next : fs->list;
	} while (k != start);
	return NULL;
}

struct tailer *
files_next_readable(struct files *fs, size_t hold)
{
	struct tracked	*k;

	k = next_tracked(fs, hold);
	if (k == NULL && fs->nopen < fs->ntracked) {
		files_balance_fds(fs);	/* parked files wait */
		k = next_tracked(fs, hold);
	}
	return k != NULL ? k->t : NULL;
}

bool
files_held(const struct files *fs, size_t hold)
{
	const struct tracked *k;

	for (k = fs->list; k != NULL; k = k->next)
		if (!can_read(k, hold) && can_read(k, SIZE_MAX))
			return true;
	return false;
}

void
files_read_done(struct files *fs, struct tailer *t, long n, bool refused,
    bool committed)
{
	if (committed)
		files_commit(fs, t);
	if (n < 0) {
		log_warn("%s: read error: %s; will retry", tailer_path(t),
		    strerror((int)-n));
		tailer_stall(t);
	} else if (n == 0 && !refused)
		tailer_stall(t);	/* only a partial line */
	wholefile_poke(fs->wf);
}

struct tailer *
files_find(struct files *fs, uint64_t id)
{
	struct tracked	*k = keymap_get(&fs->byid, id);

	return k != NULL ? k->t : NULL;
}

void
files_ack(struct files *fs, uint64_t id, uint64_t range)
{
	struct tailer	*t = files_find(fs, id);

	if (t == NULL)
		return;
	if (tailer_ack(t, range))
		files_commit(fs, t);
	tailer_trim(t);
	wholefile_poke(fs->wf);
}

void
files_each(const struct files *fs, void (*fn)(const struct tailer *, void *),
    void *arg)
{
	const struct tracked *k;

	for (k = fs->list; k != NULL; k = k->next)
		fn(k->t, arg);
}

void
files_each_open(struct files *fs, bool (*fn)(struct tailer *, void *),
    void *arg)
{
	struct tracked	*k;

	for (k = fs->list; k != NULL; k = k->next)
		if (tailer_is_open(k->t) && !fn(k->t, arg))
			return;
}

bool
files_all_read(const struct files *fs, bool miss_last)
{
	const struct tracked *k;

	/* A walk under way may still find files (--once waits for it). */
	if (fs->watcher != NULL && watcher_walking(fs->watcher))
		return false;
	if (fs->wf != NULL)
		return wholefile_settled(fs->wf);
	for (k = fs->list; k != NULL; k = k->next)
		if ((tailer_readable(k->t) && !tailer_stalled(k->t)) ||
		    tailer_waits_for_quiet(k->t, miss_last))
			return false;
	return true;
}

void
files_touch(struct files *fs)
{
	struct tracked	*k;

	for (k = fs->list; k != NULL; k = k->next)
		files_commit(fs, k->t);
	wholefile_touch(fs->wf);
}

void
files_gauges(const struct files *fs, struct metrics_flow *m)
{
	const struct tracked *k;
	uint64_t	 size, done;

	m->bytes_behind = 0;
	for (k = fs->list; k != NULL; k = k->next) {
		size = tailer_size(k->t);
		done = tailer_committed(k->t);
		if (size > done)
			m->bytes_behind += size - done;
	}
	m->files_tracked = fs->ntracked;
	m->files_unreadable = openfail_count(&fs->fails);
	wholefile_gauges(fs->wf, m);
}

void
files_saved(struct files *fs)
{
	wholefile_saved(fs->wf);
	files_spool_saved(fs);
}
