/*
 * The state saves (agent_int.h).  The save timer the registry's dirty
 * callback arms writes the registry checkpointIntervalMillis after a
 * change, and a failed save is retried.  The timer's saves go to the disk
 * on the thread pool (registry_save_start), so the loop never sleeps in
 * their fsyncs; every other save (the lease's, a reload's, the stop's)
 * is synchronous, and waits for one under way first.
 *
 * Every save also writes what a restart needs not to send anything twice:
 * per file the bytes acknowledged past its committed offset (the flows
 * publish them into the registry first; a batch cancelled undelivered
 * leaves its acknowledged records in its files' skip plans), and in the
 * header how the run stands (struct reg_run): the sequence-number floors
 * of each stream, the time until which a request it sent may still land
 * (the lease: a PutRecords goes out only while the state on disk covers
 * it, else a save comes first), and, only in the last save of a stop that
 * left nothing on the wire or in doubt, the clean mark that tells the next
 * start it need not read anything back.  A start without the mark, after
 * a crash, reads the streams back first (dedupe.c).
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "agent/agent_int.h"
#include "agent/flow.h"
#include "base/log.h"
#include "base/util.h"
#include "conf/conf.h"
#include "state/registry.h"

/* A save covers the requests of the next LEASE_MS (and their timeout). */
#define LEASE_MS	10000
#define LEASE_SLACK_MS	1000

#define SAVE_RETRY_MS	1000
/* Larger states are saved synchronously (on_save_timer). */
#define SAVE_ASYNC_ENTRIES 2000

static void	on_save_timer(uv_timer_t *);
static void	on_registry_dirty(void *);
static void	save_failed(struct agent *);
static void	saved(struct agent *);

static int	save_state_as(struct agent *, bool, bool);

/* --- what a restart needs ----------------------------------------------- */

struct floors {
	struct reg_stream *st;
};

static void
add_floor(int32_t part, int64_t last, void *arg)
{
	struct floors	*fl = arg;

	reg_stream_put(fl->st, part, last);
}

/*
 * The state file's floors of the run before, for the partitions of st
 * this run knows nothing of, or all of them while records that run's
 * restart read found are not read past yet (a crash now must find them
 * again).
 */
static void
keep_prev(struct agent *a, struct reg_stream *st, bool pending)
{
	const struct reg_stream *ps;
	size_t		 i;

	ps = reg_run_stream(a->prev_run, st->name);
	for (i = 0; ps != NULL && i < ps->n; i++)
		if (pending || reg_stream_get(st, ps->seq[i].part) ==
		    REG_SEQ_NONE)
			reg_stream_put(st, ps->seq[i].part, ps->seq[i].last);
}

/*
 * Before a save: every flow publishes what is delivered past its files'
 * offsets, and the header gets the run's state.  clean: the last save of
 * a stop, which is clean only if nothing may have landed unacknowledged.
 */
static void
prepare_save(struct agent *a, bool clean)
{
	struct reg_run	*run;
	struct floors	 fl;
	int64_t		 now;
	struct flow	*f;
	size_t		 i;
	bool		 pending, any = a->nflows + a->ngoing == 0;

	if (!a->took_run) {
		a->prev_run = registry_take_run(a->reg);
		a->took_run = true;
	}
	now = wall_ms();
	run = reg_run_new(now, now + LEASE_MS + a->conf->socket_timeout_s *
	    1000, clean);
	for (i = 0; i < a->nflows + a->ngoing; i++) {
		f = i < a->nflows ? a->flows[i] : a->going[i - a->nflows];
		flow_publish(f);
		fl.st = reg_run_add_stream(run, flow_stream_key(f));
		flow_floors(f, add_floor, &fl);
		pending = flow_restart_pending(f);
		any = any || pending;
		keep_prev(a, fl.st, pending);
		if (flow_uncertain(f) || pending)
			reg_run_not_clean(run);
	}
	/* Where a partition has no floor, a restart reads from the time
	 * the run started -- that of the run before while its read is not
	 * done with. */
	if (any && a->prev_run != NULL && !a->prev_run->clean &&
	    a->prev_run->started_ms > 0)
		reg_run_set_started(run, MIN(a->started_wall,
		    a->prev_run->started_ms));
	else
		reg_run_set_started(run, a->started_wall);
	/* No flow yet (the restart's read is under way): the floors stay as
	 * they were, for the next start. */
	for (i = 0; a->nflows + a->ngoing == 0 && a->prev_run != NULL &&
	    i < a->prev_run->nstreams; i++) {
		fl.st = reg_run_add_stream(run, a->prev_run->streams[i].name);
		keep_prev(a, fl.st, true);
	}
	registry_set_run(a->reg, run);
}

/* --- the lease ---------------------------------------------------------- */

static void
count_floor(int32_t part, int64_t last, void *arg)
{
	(void)part;
	(void)last;
	++*(size_t *)arg;
}

/* Whether the state on disk has floors for f's stream, or f has none to
 * give (a streamId flow before its first acknowledgement). */
static bool
floors_saved(struct agent *a, const struct flow *f)
{
	const struct reg_stream *st;
	size_t		 n = 0;

	st = reg_run_stream(registry_run(a->reg), flow_stream_key(f));
	if (st != NULL && st->n > 0)
		return true;
	flow_floors(f, count_floor, &n);
	return n == 0;
}

/*
 * A PutRecords of f is about to go out: if the state on disk does not
 * cover its landing (LEASE_MS after the last save, plus its timeout) or
 * has no floors of its stream yet, save now, so that a restart after a
 * crash reads back far enough.  Only the registry is written: no flow is
 * told (this runs inside a flow's call).
 */
void
agent_lease(struct agent *a, const struct flow *f)
{
	int64_t	 now = wall_ms();
	uint64_t t0 = mono_ms();
	bool	 covered, known;

	if (a->state == AGENT_FINISHING || a->saving)
		return;
	/* The stream's floors must be on disk before its first request:
	 * a save made before its stream was described had none.  A save
	 * under way counts once it is done (a->land_by_ms is the last
	 * finished one's), and its header may hold floors the disk has not
	 * (flight_new_floors): then the save below comes first. */
	covered = now + a->conf->socket_timeout_s * 1000 + LEASE_SLACK_MS <=
	    a->land_by_ms && floors_saved(a, f) &&
	    !(registry_saving(a->reg) && a->flight_new_floors);
	/* A new file the state does not name is found at the restart only
	 * while its pattern still matches it (dedupe_plan.c); renamed away
	 * meanwhile, only through its entry: a save for it waits as long as
	 * the save timer would (a state of many files is slow to write), and
	 * what goes meanwhile of such a file is resent after a crash. */
	known = !registry_unsaved_entries(a->reg) || t0 - a->saved_ms <
	    MAX((uint64_t)a->conf->checkpoint_interval_ms,
	    20 * a->save_cost_ms);
	if (covered && known)
		return;
	a->saving = true;
	prepare_save(a, false);		/* registry_save waits for a flight */
	if (registry_save(a->reg, true) == 0) {
		a->land_by_ms = registry_run(a->reg)->land_by_ms;
		a->saved_ms = t0;
	}
	a->save_cost_ms = mono_ms() - t0;
	a->saving = false;
}

/* --- saves -------------------------------------------------------------- */

int
agent_save_state(struct agent *a, bool force)
{
	return save_state_as(a, force, false);
}

int
agent_save_stop(struct agent *a)
{
	return save_state_as(a, true, true);
}

static int
save_state_as(struct agent *a, bool force, bool clean)
{
	uint64_t	 t0 = mono_ms();
	int		 rc;
	bool		 writes;

	a->saving = true;
	registry_save_wait(a->reg);
	prepare_save(a, clean);
	writes = force || registry_dirty(a->reg);
	rc = registry_save(a->reg, force);
	a->saving = false;
	if (rc == 0 && writes) {
		a->land_by_ms = registry_run(a->reg)->land_by_ms;
		a->saved_ms = t0;
	}
	a->save_cost_ms = mono_ms() - t0;
	if (rc != 0) {
		save_failed(a);
		return rc;
	}
	saved(a);
	return rc;
}

static void
save_failed(struct agent *a)
{
	if (a->save_failed_ms == 0)	/* /healthz (agent_http.c) */
		a->save_failed_ms = MAX(mono_ms(), 1);
	if (a->state == AGENT_FINISHING)
		return;		/* the stop says what it leaves (agent_stop.c) */
	log_error("state not saved; will retry");
	uv_timer_start(&a->save_timer, on_save_timer, SAVE_RETRY_MS, 0);
}

/*
 * Whole files whose complete mark is now on disk can go, spool files
 * whose entry is gone from it (only while running: the flows of a stop
 * are on their way out, as those a reload drains).
 */
static void
saved(struct agent *a)
{
	size_t	 i;

	a->save_failed_ms = 0;
	if (a->state == AGENT_RUNNING || a->state == AGENT_RELOADING) {
		for (i = 0; i < a->nflows; i++)
			flow_saved(a->flows[i]);
		agent_check_soon(a);		/* --once: cleanups may settle it */
	}
}

/* The timer's save is on disk, or failed (the registry is dirty again). */
static void
on_flight_done(int rc, void *arg)
{
	struct agent	*a = arg;

	a->save_cost_ms = mono_ms() - a->flight_t0;
	if (rc != 0) {
		save_failed(a);
		return;
	}
	/* A synchronous save since then has covered as much or more. */
	a->land_by_ms = MAX(a->land_by_ms, a->flight_land_by);
	a->saved_ms = MAX(a->saved_ms, a->flight_t0);
	saved(a);
	if (registry_dirty(a->reg))
		on_registry_dirty(a);
}

/*
 * The timer's save: to memory now, to the disk on the thread pool.  One
 * at a time; a change made meanwhile arms the timer again when it ends.
 * A state of many entries is streamed to the disk synchronously instead,
 * through 64 KiB, rather than held in memory whole: past
 * SAVE_ASYNC_ENTRIES (about 320 KB of file) the copy would cost more than
 * the fsyncs (10,000 entries are 1.6 MB: an agent tailing them peaked at
 * 20.9 MiB instead of 19.5), and the saves of such a state are spaced by
 * their cost anyway.
 */
static void
on_save_timer(uv_timer_t *t)
{
	struct agent	*a = container_of(t, struct agent, save_timer);
	uint64_t	 t0 = mono_ms();
	size_t		 i;
	int		 rc;

	if (registry_saving(a->reg))
		return;
	if (!registry_dirty(a->reg) ||
	    registry_count(a->reg) > SAVE_ASYNC_ENTRIES) {
		(void)agent_save_state(a, false);
		return;
	}
	a->flight_new_floors = false;
	for (i = 0; i < a->nflows; i++)
		if (!floors_saved(a, a->flows[i]))
			a->flight_new_floors = true;
	a->saving = true;
	prepare_save(a, false);
	a->flight_land_by = registry_run(a->reg)->land_by_ms;
	a->flight_t0 = t0;
	rc = registry_save_start(a->reg, &a->loop, on_flight_done, a);
	a->saving = false;
	if (rc < 0) {
		a->save_cost_ms = mono_ms() - t0;
		save_failed(a);
	}
}

/*
 * The registry went dirty (an acknowledgement moved an offset): save within
 * checkpointIntervalMillis, together with what else is acknowledged
 * meanwhile, and never spend more than about 5% of the time saving (a
 * state of many thousand files takes a while to write).
 */
static void
on_registry_dirty(void *arg)
{
	struct agent	*a = arg;
	uint64_t	 delay;

	if (a->state == AGENT_FINISHING || a->saving ||
	    uv_is_active((uv_handle_t *)&a->save_timer))
		return;
	delay = MAX((uint64_t)a->conf->checkpoint_interval_ms,
	    20 * a->save_cost_ms);
	uv_timer_start(&a->save_timer, on_save_timer, delay, 0);
}

/*
 * Saves from now on: the registry's dirty callback arms the save timer
 * (at once when the state was loaded from the .bak).
 */
void
agent_save_start(struct agent *a)
{
	registry_on_dirty(a->reg, on_registry_dirty, a);
	if (registry_dirty(a->reg))	/* loaded from the .bak */
		on_registry_dirty(a);
}
