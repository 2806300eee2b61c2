/*
 * Scans of the tracked set (files_int.h): at the start, every
 * rescanIntervalMillis and soon after a watcher event, the set is
 * reconciled with the file system, the source of truth.  A file found is
 * tracked where resume.c says, followed through a rename, or held back as
 * a possible copytruncate copy (copies.c); a tracked file's size is
 * refreshed, an in-place truncation caught by size and by a changed head
 * (R6); a tracked file not found is gone from its path, read to its end
 * and closed once committed and quiet (R1, R7) (files_gone.c).  Scans move
 * the set through its states, so set_state() is here; readCoalesceMillis
 * reads on the rescan timer with the watches paused.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "conf/conf.h"
#include "tail/copies.h"
#include "files/files.h"
#include "files/files_int.h"
#include "tail/openfail.h"
#include "files/reaper.h"
#include "tail/resume.h"
#include "files/successor.h"
#include "tail/tailer.h"
#include "files/watcher.h"
#include "files/wholefile.h"
#include "tail/zsource.h"
#include "state/registry.h"

#define EVENT_DELAY_MS	10	/* coalesce fs events */
/* readCoalesceMillis reads on a timer with the watches paused, a full
 * scan each time: beyond this many files a write is read on its event. */
#define COALESCE_MAX_FILES 512

static const char *const state_names[] = { "new", "first scan",
    "unwalked", "running", "stopped" };

/* The one place the state changes; STOPPED is the last. */
static void
set_state(struct files *fs, enum files_state st)
{
	if (fs->state == st || fs->state == FILES_STOPPED)
		return;
	log_debug("[%s] files: %s -> %s", fs->fc->name,
	    state_names[fs->state], state_names[st]);
	fs->state = st;
}

/* No scan has read a directory yet (files_int.h). */
static bool
orphans_pending(const struct files *fs)
{
	return fs->state <= FILES_UNWALKED;
}

/*
 * Until a directory has been read, what the scan sees tells which of the
 * flow's registry entries lost their file (files_follow_gone).  Only a
 * file with an entry can answer that, so only those are remembered: a
 * first start remembers nothing, however many files it finds.
 */
static void
seen_first(struct files *fs, const struct stat *st)
{
	if (orphans_pending(fs) && registry_find(fs->reg, fs->fc->name,
	    (uint64_t)st->st_dev, (uint64_t)st->st_ino) != NULL)
		successors_seen(fs->succ, (uint64_t)st->st_dev,
		    (uint64_t)st->st_ino);
}

/* --- copytruncate copies ------------------------------------------------ */

/* copies_next_fn over the tracked list; *it is the next one. */
static bool
next_candidate(void *it, struct copy_candidate *c)
{
	static const struct tracked_past none;
	struct tracked	**kp = it, *k = *kp;
	const struct tracked_past *p;

	if (k == NULL)
		return false;
	p = k->past != NULL ? k->past : &none;
	*kp = k->next;
	c->dev = tailer_dev(k->t);
	c->ino = tailer_ino(k->t);
	c->path = tailer_path(k->t);
	c->fd = tailer_fd(k->t);
	c->compressed = tailer_compressed(k->t);
	c->prev_crc = p->prev_fp_crc;
	c->prev_len = p->prev_fp_len;
	c->prev_end = p->prev_end;
	tailer_head(k->t, &c->crc, &c->len);
	c->gone = k->gone;
	return true;
}

/*
 * A file held back as a possible copy went from the matching paths before
 * it was judged (deleted, or renamed out of the pattern): its descriptor
 * (stolen) still has its bytes, so it is read to its end as a gone file --
 * from where a copy's original had got to, or from 0.
 */
static void
adopt_held(struct files *fs, int fd, char *path)
{
	struct tracked	*it = fs->list;
	struct tailer	*t;
	struct stat	 st;
	uint64_t	 off;

	if (fstat(fd, &st) != 0 ||
	    files_tracks(fs, (uint64_t)st.st_dev, (uint64_t)st.st_ino)) {
		close(fd);
		free(path);
		return;
	}
	off = copies_start_now(fd, path, &st, (size_t)fs->fc->header_bytes,
	    next_candidate, &it);
	t = tailer_open_fd(fd, path, &st, off, (uint32_t)fs->fc->header_bytes,
	    fs->fr);
	(void)files_link(fs, t, true);
	files_commit(fs, t);
	log_info("[%s] %s (inode %ju) went while held back as a possible "
	    "copy; reading it to the end from offset %ju", fs->fc->name, path,
	    (uintmax_t)st.st_ino, (uintmax_t)off);
	free(path);
}

/* --- what a scan finds -------------------------------------------------- */

/* Whether (dev, ino) is held, or was until the release's scan. */
static bool
was_held(const struct files *fs, const struct stat *st)
{
	size_t	 i;

	for (i = 0; i < fs->nheld; i++)
		if (fs->held[i].dev == (uint64_t)st->st_dev &&
		    fs->held[i].ino == (uint64_t)st->st_ino)
			return true;
	return false;
}

/*
 * The restart's read holds path: records of it the crashed run sent may
 * still land.  Not tracked until files_release (said once).
 */
static bool
hold(struct files *fs, const char *path, const struct stat *st)
{
	if (!registry_held(fs->reg, fs->fc->name, (uint64_t)st->st_dev,
	    (uint64_t)st->st_ino))
		return false;
	if (was_held(fs, st))
		return true;
	fs->held = xrealloc(fs->held, (fs->nheld + 1) * sizeof(*fs->held));
	fs->held[fs->nheld].dev = (uint64_t)st->st_dev;
	fs->held[fs->nheld++].ino = (uint64_t)st->st_ino;
	fs->holding = true;
	log_info("[%s] %s (inode %ju): records of it that the crashed run "
	    "sent may still land; read once the restart's read is over",
	    fs->fc->name, path, (uintmax_t)st->st_ino);
	return true;
}

static void
track(struct files *fs, const char *path, const struct stat *st, bool first,
    bool gone)
{
	struct tracked	*it = fs->list;
	struct reg_entry *e;
	enum copies_verdict v = COPIES_NONE;
	uint64_t	 off = 0;

	if (hold(fs, path, st))
		return;
	/* Held at the start: tracked as the first scan would have. */
	if (fs->release_scanning && was_held(fs, st))
		first = true;
	if (!first && !gone && registry_find(fs->reg, fs->fc->name,
	    (uint64_t)st->st_dev, (uint64_t)st->st_ino) == NULL)
		v = copies_check(&fs->waiting, path, st,
		    (size_t)fs->fc->header_bytes, next_candidate, &it, &off);
	if (v == COPIES_WAIT)
		return;		/* the next scan decides */
	e = registry_find(fs->reg, fs->fc->name, (uint64_t)st->st_dev,
	    (uint64_t)st->st_ino);
	if (e != NULL && !resume_same_head(path, e, (uint64_t)st->st_size)) {
		/* Inode reuse: where did the file it held go? */
		files_add_orphan(fs, e);
		fs->orphans[fs->norphans - 1].reused = true;
	}
	if (v == COPIES_NONE)
		off = resume_offset(fs->fc, fs->reg, fs->m, path, st, first);
	(void)files_track_at(fs, path, st, off, gone);
}

/*
 * Keep the registry entry's size current without making it dirty: the next
 * save (an acknowledgement, or the stop) writes it, so a file that goes
 * while the agent is stopped is known to have had bytes after its offset.
 */
static void
note_size(struct files *fs, const struct tailer *t)
{
	struct reg_entry *e;

	e = registry_find(fs->reg, fs->fc->name, tailer_dev(t), tailer_ino(t));
	if (e != NULL)
		registry_set_size(fs->reg, e, tailer_size(t));
}

/* Re-check a tracked file's size; note growth and in-place truncation
 * (copytruncate: smaller than the read offset, or a new head, R6). */
static void
refresh(struct files *fs, struct tracked *k)
{
	uint64_t old = tailer_size(k->t);
	bool	 truncated, changed;

	if (!tailer_is_open(k->t))
		return;
	(void)tailer_poll(k->t, &truncated);
	changed = tailer_size(k->t) != old;
	if (changed) {
		note_size(fs, k->t);
		fs->grew++;
	}
	/* A new head means the file was truncated and written again, maybe
	 * past the old offset before we looked (R6): a 512-byte pread per
	 * change is cheap next to missing that. */
	if (!truncated && (k->truncate_pending || (changed &&
	    tailer_head_changed(k->t))))
		truncated = true;
	if (!truncated)
		return;
	/* What was there before: its bytes past the read offset are lost. */
	if (!k->truncate_pending)
		files_past(k)->trunc_from = old;
	if (tailer_pending(k->t) > 0) {
		k->truncate_pending = true;
		return;		/* after the in-flight ranges settle */
	}
	k->truncate_pending = false;
	files_restart(fs, k, "truncated or rewritten in place "
	    "(copytruncate?)", files_past(k)->trunc_from);
}

static void
on_found(void *arg, const char *path, const struct stat *st)
{
	struct files	*fs = arg;
	struct tracked	*k;

	seen_first(fs, st);
	if (files_own(fs, path, st))
		return;		/* the loop of shipping its own log */
	k = files_find_ino(fs, (uint64_t)st->st_dev, (uint64_t)st->st_ino);
	if (k == NULL && files_shipped_before(fs, path))
		return;
	wholefile_found(fs->wf, path, st);	/* it decides when */
	if (k == NULL) {
		if (fs->wf == NULL)
			track(fs, path, st, fs->state == FILES_FIRST, false);
		return;
	}
	k->seen = true;
	if (k->gone) {
		log_info("%s (inode %ju) is back at %s", tailer_path(k->t),
		    (uintmax_t)tailer_ino(k->t), path);
		k->gone = false;
	}
	if (strcmp(tailer_path(k->t), path) != 0) {
		log_info("%s: renamed to %s", tailer_path(k->t), path);
		tailer_rename(k->t, path);
	}
	if (!tailer_is_open(k->t) &&
	    tailer_size(k->t) != (uint64_t)st->st_size) {
		tailer_set_size(k->t, (uint64_t)st->st_size);
		note_size(fs, k->t);
	}
}

/*
 * A file that does not match the pattern, in a walked directory.  A parked
 * tailer rotated to such a name is followed there, so what it grew before
 * the rename is still read.  At the first scan that reads a directory
 * only: a file the registry
 * knows for this flow (rotated away while the agent was stopped, e.g.
 * app.log -> app.log.1) that still has bytes after its committed offset is
 * read to its end.
 */
static void
on_other(void *arg, const char *path, const struct stat *st)
{
	struct files	*fs = arg;
	struct reg_entry *e;
	struct tracked	*k;
	bool		 z = zsource_name_compressed(path);

	seen_first(fs, st);
	k = files_find_ino(fs, (uint64_t)st->st_dev, (uint64_t)st->st_ino);
	if (k != NULL) {
		if (!tailer_is_open(k->t) &&
		    strcmp(tailer_path(k->t), path) != 0) {
			tailer_rename(k->t, path);
			tailer_set_size(k->t, (uint64_t)st->st_size);
		}
		return;
	}
	reaper_other(fs->reap, path, st);
	if (fs->wf != NULL)
		return;
	e = registry_find(fs->reg, fs->fc->name, (uint64_t)st->st_dev,
	    (uint64_t)st->st_ino);
	if (z && e == NULL)
		successors_add(fs->succ, path, st);
	/* A compressed file's size is not its decompressed one: the
	 * tailer finds out whether anything is left. */
	if (!(orphans_pending(fs) || (fs->release_scanning &&
	    was_held(fs, st))) || e == NULL ||
	    (!z && e->offset >= (uint64_t)st->st_size) ||
	    !resume_same_head(path, e, (uint64_t)st->st_size))
		return;
	track(fs, path, st, false, true);
}

/* --- scans -------------------------------------------------------------- */

static void	on_rescan_timer(uv_timer_t *);

/*
 * Held files are looked at again by the next scan: on a change the
 * watcher rescans, and for the end of a hold the rescan timer fires no
 * later than copies_due_ms says.
 */
static void
wake_for_held(struct files *fs)
{
	uint64_t	 due = copies_due_ms(&fs->waiting);

	if (due == UINT64_MAX || fs->once || fs->state == FILES_STOPPED)
		return;
	if (uv_is_active((uv_handle_t *)&fs->rescan_timer) &&
	    uv_timer_get_due_in(&fs->rescan_timer) <= due)
		return;
	fs->pass_timer = false;
	uv_timer_start(&fs->rescan_timer, on_rescan_timer, due,
	    (uint64_t)fs->fc->rescan_interval_ms);
}

static void	on_walked(void *, size_t, int);

/*
 * Reconcile the tracked set with the file system: the source of truth.
 * The walk may go on over turns of the loop (watcher.h); on_walked
 * finishes the scan.  A scan asked for while one is under way runs once
 * it is over.
 */
static void
scan(struct files *fs, bool first)
{
	struct tracked	*k;

	if (watcher_walking(fs->watcher)) {
		fs->scan_again = true;
		return;
	}
	if (first)
		set_state(fs, FILES_FIRST);
	fs->release_scanning = fs->release_scan;
	fs->release_scan = false;
	successors_reset(fs->succ);
	/* Truncations first: a copytruncate copy found by the walk is then
	 * recognised by the original's previous head. */
	for (k = fs->list; k != NULL; k = k->next) {
		k->seen = false;
		if (k->truncate_pending || tailer_is_open(k->t))
			refresh(fs, k);
	}
	copies_scan_begin(&fs->waiting);
	fs->scan_inline = true;
	(void)watcher_scan(fs->watcher, on_found, on_other, on_walked, fs);
	fs->scan_inline = false;
}

/*
 * The release's scan did not find a held file the state file names: it
 * went while held, as if while the agent was stopped (files_gone.c
 * follows it to a successor, or counts what it had left).
 */
static void
held_gone(struct files *fs)
{
	struct reg_entry *e;
	size_t		 i;

	for (i = 0; i < fs->nheld; i++) {
		if (files_tracks(fs, fs->held[i].dev, fs->held[i].ino))
			continue;
		e = registry_find(fs->reg, fs->fc->name, fs->held[i].dev,
		    fs->held[i].ino);
		if (e != NULL && reg_spool(e) == NULL)
			files_add_orphan(fs, e);
	}
}

/* The walk of a scan is over: what it did not find is gone. */
static void
scan_end(struct files *fs, bool walked, int err)
{
	struct tracked	*k;
	char		*path;
	int		 fd;

	if (!walked && !fs->warned_dir) {
		log_warn("[%s] cannot read directory %s: %s; will retry",
		    fs->fc->name, watcher_base(fs->watcher), strerror(-err));
		fs->warned_dir = true;
	}
	while (walked && copies_vanished(&fs->waiting, &fd, &path))
		adopt_held(fs, fd, path);
	openfail_sweep(&fs->fails, fs->fc->name, false);
	if (fs->release_scanning && !walked)
		fs->release_scan = true;	/* the next scan, then */
	else if (fs->release_scanning) {
		held_gone(fs);
		free(fs->held);
		fs->held = NULL;
		fs->nheld = 0;
	}
	fs->release_scanning = false;
	files_follow_gone(fs, walked && orphans_pending(fs));
	if (walked)
		set_state(fs, FILES_RUNNING);
	else if (fs->state == FILES_FIRST)
		set_state(fs, FILES_UNWALKED);
	for (k = fs->list; k != NULL; k = k->next) {
		if (!k->seen && !k->gone) {
			k->gone = true;
			if (k->past != NULL)
				k->past->scan_size = UINT64_MAX;
			log_info("%s (inode %ju) is gone from its path; "
			    "reading it to the end", tailer_path(k->t),
			    (uintmax_t)tailer_ino(k->t));
		}
	}
	files_drop_finished(fs);
	files_balance_fds(fs);
	wholefile_scanned(fs->wf, walked);
	reaper_scanned(fs->reap);
	wake_for_held(fs);
}

/*
 * readCoalesceMillis: once writes come faster than a scan costs, the
 * watches pause and the files are read on a timer of that period, as long
 * as a scan finds enough of them changed.  A scan that finds too few puts
 * the watches back and looks once more, for a write made in between.  The
 * cost is then per period, not per write, at a server's pace (issue 25);
 * at a slow pace each write is cheaper to read on its event than a scan
 * of every file each period (100 files written 50 times a second in all:
 * 0.25 CPU-s against 0.14 in 15 s when every pace paused).
 *
 * A scan stats every tracked file, an event reads one: the watches pause
 * when a window has seen a quarter as many writes as there are files (at
 * least 4), and stay paused while each scan finds an eighth of the files
 * changed (at least one).
 */
static bool
coalescing(const struct files *fs)
{
	return fs->fc->read_coalesce_ms > 0 && !fs->once &&
	    fs->state != FILES_STOPPED &&
	    fs->ntracked <= COALESCE_MAX_FILES;
}

/* A write to a tracked file was seen: whether to pause the watches. */
static bool
coalesce_now(struct files *fs)
{
	uint64_t	 now = uv_now(fs->loop);

	if (!coalescing(fs))
		return false;
	if (now - fs->ev_since >= (uint64_t)fs->fc->read_coalesce_ms) {
		fs->ev_since = now;
		fs->ev_count = 0;
	}
	return ++fs->ev_count >= MAX(4, fs->ntracked / 4);
}

/* The period of the passes: readCoalesceMillis, or the reader's. */
static uint64_t
pass_period(const struct files *fs)
{
	return MAX((uint64_t)fs->fc->read_coalesce_ms, fs->pace_ms);
}

/* The next pass, a period after the last (or after the pause). */
static void
coalesce_next(struct files *fs)
{
	uint64_t	 since = uv_now(fs->loop) - fs->pass_at;
	uint64_t	 due = pass_period(fs);

	due = due > since ? due - since : 0;
	if (uv_is_active((uv_handle_t *)&fs->rescan_timer) &&
	    uv_timer_get_due_in(&fs->rescan_timer) <= due)
		return;
	fs->pass_timer = true;
	uv_timer_start(&fs->rescan_timer, on_rescan_timer, due,
	    (uint64_t)fs->fc->rescan_interval_ms);
}

uint64_t
files_passes(const struct files *fs, uint64_t *gap_ms)
{
	*gap_ms = fs->pass_gap;
	if (fs->watcher == NULL || !watcher_paused(fs->watcher) ||
	    !coalescing(fs))
		return 0;
	return fs->passes;
}

void
files_pace(struct files *fs, uint64_t ms)
{
	if (fs->pace_ms == ms)
		return;
	fs->pace_ms = ms;
	/* The next pass is re-armed for the new period; a scan a watcher
	 * event asked for sooner stays. */
	if (fs->pass_timer && fs->watcher != NULL &&
	    watcher_paused(fs->watcher) && coalescing(fs)) {
		fs->pass_timer = false;
		uv_timer_stop(&fs->rescan_timer);
		coalesce_next(fs);
	}
}

/* After a scan with the watches paused: keep reading on the timer while
 * files change, else watch again. */
static void
coalesce_after_scan(struct files *fs, uint64_t grew)
{
	struct tracked	*k;

	if (fs->watcher == NULL || !watcher_paused(fs->watcher))
		return;
	if (fs->grew - grew >= MAX(1, fs->ntracked / 8) && coalescing(fs)) {
		coalesce_next(fs);
		return;
	}
	log_debug("[%s] %ju files changed in the last %lld ms: watched again",
	    fs->fc->name, (uintmax_t)(fs->grew - grew),
	    fs->fc->read_coalesce_ms);
	fs->ev_count = 0;
	fs->pace_ms = 0;
	watcher_pause(fs->watcher, false);
	for (k = fs->list; k != NULL; k = k->next)
		refresh(fs, k);
}

static void
on_rescan_timer(uv_timer_t *h)
{
	struct files	*fs = container_of(h, struct files, rescan_timer);
	uint64_t	 grew = fs->grew, now = uv_now(fs->loop);

	fs->pass_timer = false;
	if (fs->watcher != NULL && watcher_paused(fs->watcher)) {
		fs->passes++;
		fs->pass_gap = now - fs->pass_at;
		fs->pass_at = now;
	}
	if (watcher_walking(fs->watcher)) {
		fs->scan_again = true;
		fs->readable(fs->arg);	/* what files have meanwhile */
		return;
	}
	fs->scan_grew = grew;
	fs->scan_timer = true;
	scan(fs, false);
}

static void
on_walked(void *arg, size_t ndirs, int err)
{
	struct files	*fs = arg;
	bool		 timer = fs->scan_timer;

	fs->scan_timer = false;
	scan_end(fs, ndirs > 0, err);
	if (timer)
		coalesce_after_scan(fs, fs->scan_grew);
	/* A scan that went on over turns of the loop found files since the
	 * flow last asked. */
	if (timer || !fs->scan_inline)
		fs->readable(fs->arg);
	if (fs->scan_again && fs->state != FILES_STOPPED && !fs->once) {
		fs->scan_again = false;
		fs->pass_timer = false;
		uv_timer_start(&fs->rescan_timer, on_rescan_timer, 0,
		    (uint64_t)fs->fc->rescan_interval_ms);
	}
}

void
files_fs_event(void *arg, const char *dir, const char *name, int events)
{
	struct files	*fs = arg;
	struct tracked	*k;
	const char	*p;
	size_t		 n = strlen(dir);

	if (fs->state == FILES_STOPPED)
		return;
	/* A write to a tracked file: just read it.  Anything else (a new
	 * name, a rename, a deletion): rescan soon, coalescing bursts. */
	if (name != NULL && (events & UV_CHANGE) && !(events & UV_RENAME)) {
		for (k = fs->list; k != NULL; k = k->next) {
			p = tailer_path(k->t);
			if (k->gone || !tailer_is_open(k->t) ||
			    strncmp(p, dir, n) != 0 || p[n] != '/' ||
			    strcmp(p + n + 1, name) != 0)
				continue;
			refresh(fs, k);
			if (coalesce_now(fs)) {
				log_debug("[%s] %zu writes in %lld ms: watches "
				    "paused, files read every %lld ms",
				    fs->fc->name, fs->ev_count,
				    fs->fc->read_coalesce_ms,
				    fs->fc->read_coalesce_ms);
				watcher_pause(fs->watcher, true);
				fs->pass_at = uv_now(fs->loop);
				coalesce_next(fs);
			}
			fs->readable(fs->arg);
			return;
		}
	}
	/* A burst asks for one scan, EVENT_DELAY_MS after its first event:
	 * starting the timer again on each event put the scan off for as
	 * long as the events went on, so a new file written faster than
	 * that was not found (nor did the periodic rescan run) until its
	 * writer paused. */
	if (uv_is_active((uv_handle_t *)&fs->rescan_timer) &&
	    uv_timer_get_due_in(&fs->rescan_timer) <= EVENT_DELAY_MS)
		return;
	fs->pass_timer = false;
	uv_timer_start(&fs->rescan_timer, on_rescan_timer, EVENT_DELAY_MS,
	    (uint64_t)fs->fc->rescan_interval_ms);
}

/* --- start and stop ----------------------------------------------------- */

void
files_start(struct files *fs)
{
	if (registry_held(fs->reg, fs->fc->name, 0, 0)) {
		fs->held_whole = fs->holding = true;
		log_info("[%s] records of its files that the crashed run sent "
		    "may still land, and which cannot be told (a file moved, "
		    "gone or spooled since the last save, or whole files): "
		    "the flow reads once the restart's read is over",
		    fs->fc->name);
		return;
	}
	files_spool_resume(fs);
	scan(fs, true);
	if (!fs->once)
		uv_timer_start(&fs->rescan_timer, on_rescan_timer,
		    (uint64_t)fs->fc->rescan_interval_ms,
		    (uint64_t)fs->fc->rescan_interval_ms);
}

void
files_release(struct files *fs)
{
	if (!fs->holding || fs->state == FILES_STOPPED)
		return;
	fs->holding = false;
	if (fs->held_whole) {
		fs->held_whole = false;
		files_start(fs);
		return;
	}
	fs->release_scan = true;
	scan(fs, false);
}

void
files_stop(struct files *fs)
{
	set_state(fs, FILES_STOPPED);
	uv_timer_stop(&fs->rescan_timer);
	wholefile_stop(fs->wf);
	watcher_free(fs->watcher);
	fs->watcher = NULL;
}
