/*
 * The tracked files of a flow (files.h): scans reconcile the tailers with
 * the file system, identity decides rename vs new file (R5), copytruncate is
 * caught by size and by a changed head (R6), a file gone from its path is
 * read to its end and closed once committed and quiet (R1, R7)
 * (files_gone.c), and parked descriptors keep the flow within maxOpenFiles
 * (files_fds.c).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "base/metrics.h"
#include "conf/conf.h"
#include "files/copies.h"
#include "files/files.h"
#include "files/files_int.h"
#include "files/openfail.h"
#include "files/reaper.h"
#include "files/resume.h"
#include "files/skipplan.h"
#include "files/successor.h"
#include "files/tailer.h"
#include "files/watcher.h"
#include "files/wholefile.h"
#include "files/zsource.h"
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

/* --- identity ----------------------------------------------------------- */

/*
 * The newest tracked file that is (dev, ino), or NULL.  A scan asks this
 * for every file it finds: through the inode map, not a walk of the list
 * (which made a rescan of 10,000 files cost ~100 ms, 80% of it here).
 * Only an inode shared across devices falls back to the walk.
 */
static struct tracked *
find_dev_ino(struct files *fs, uint64_t dev, uint64_t ino)
{
	struct tracked	*k = idmap_get(&fs->byino, ino);

	if (ino != 0 && (k == NULL || tailer_is(k->t, dev, ino)))
		return k;	/* (the map has no key 0) */
	for (k = fs->list; k != NULL; k = k->next)
		if (tailer_is(k->t, dev, ino))
			return k;
	return NULL;
}

/* Keep byino's invariant when k leaves the list (already unlinked). */
static void
forget_ino(struct files *fs, struct tracked *k)
{
	uint64_t	 ino = tailer_ino(k->t);
	struct tracked	*o;

	if (idmap_get(&fs->byino, ino) != k)
		return;
	idmap_del(&fs->byino, ino);
	for (o = fs->list; o != NULL; o = o->next)	/* the next newest */
		if (tailer_ino(o->t) == ino) {
			idmap_put(&fs->byino, ino, o);
			return;
		}
}

void
files_commit(struct files *fs, struct tailer *t)
{
	uint32_t	 crc, len;

	struct reg_entry *e;

	tailer_refresh_fingerprint(t);
	tailer_head(t, &crc, &len);
	e = registry_set(fs->reg, fs->fc->name, tailer_dev(t), tailer_ino(t),
	    crc, len, tailer_path(t), tailer_committed(t));
	/* What is known to follow, if the file goes before it is read. */
	registry_set_size(fs->reg, e, tailer_size(t));
}

struct tracked *
files_link(struct files *fs, struct tailer *t, bool gone)
{
	struct tracked	*k;

	if (resume_inside_line(fs->fc, t)) {
		log_info("%s: resuming inside a truncated line at offset %ju; "
		    "skipping to its end", tailer_path(t),
		    (uintmax_t)tailer_read_off(t));
		tailer_skip_line(t);
	}
	if (fs->once || fs->wf != NULL)
		tailer_set_target(t, tailer_size(t));
	k = xcalloc(1, sizeof(*k));
	k->t = t;
	k->gone = gone;
	k->seen = true;
	k->scan_size = UINT64_MAX;
	k->next = fs->list;
	fs->list = k;
	idmap_put(&fs->byid, tailer_id(t), k);
	if (tailer_ino(t) != 0)
		idmap_put(&fs->byino, tailer_ino(t), k);	/* the newest */
	fs->ntracked++;
	if (tailer_is_open(t))
		fs->nopen++;
	return k;
}

bool
files_tracks(struct files *fs, uint64_t dev, uint64_t ino)
{
	return find_dev_ino(fs, dev, ino) != NULL;
}

void
files_unlink(struct files *fs, struct tracked **pp, struct tracked *k)
{
	*pp = k->next;
	if (fs->cursor == k)
		fs->cursor = NULL;
	if (tailer_is_open(k->t))
		fs->nopen--;
	if (k->spool)
		fs->nspool--;
	fs->ntracked--;
	idmap_del(&fs->byid, tailer_id(k->t));
	forget_ino(fs, k);
	wholefile_untracked(fs->wf, tailer_id(k->t));
	tailer_free(k->t);
	free(k);
}

/* --- copytruncate copies ------------------------------------------------ */

/* copies_next_fn over the tracked list; *it is the next one. */
static bool
next_candidate(void *it, struct copy_candidate *c)
{
	struct tracked	**kp = it, *k = *kp;

	if (k == NULL)
		return false;
	*kp = k->next;
	c->dev = tailer_dev(k->t);
	c->ino = tailer_ino(k->t);
	c->path = tailer_path(k->t);
	c->fd = tailer_fd(k->t);
	c->compressed = tailer_compressed(k->t);
	c->prev_crc = k->prev_fp_crc;
	c->prev_len = k->prev_fp_len;
	c->prev_end = k->prev_end;
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

/* --- tracking ----------------------------------------------------------- */

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

/*
 * Track path (stat'ed as st) as a tailer from offset, parked when
 * maxOpenFiles is spent; gone: it is no longer at a matching path (read to
 * its end, then closed).  A whole-file flow's tailers read up to st's
 * size.  Its id, or 0 with errno set (the caller reports it).  Compressed
 * files are read through zsource, decompressed.
 */
uint64_t
files_track(struct files *fs, const char *path, const struct stat *st,
    uint64_t off, bool gone)
{
	struct tailer	*t;
	uint32_t	 fp = (uint32_t)fs->fc->header_bytes;

	if (zsource_name_compressed(path))
		t = tailer_open_compressed(path, st, off, fp, fs->fr);
	else if (fs->nopen >= fs->max_open)
		t = tailer_new_parked(path, st, off, fp, fs->fr);
	else
		t = tailer_open(path, st, off, fp, fs->fr);
	if (t == NULL)
		return 0;
	files_attach_plan(fs, t, path, st, off, false);
	(void)files_link(fs, t, gone);
	log_info("[%s] tracking %s (inode %ju) from offset %ju%s%s",
	    fs->fc->name, path, (uintmax_t)tailer_ino(t), (uintmax_t)off,
	    gone ? " (rotated away; reading it to the end)" : "",
	    tailer_is_open(t) ? "" : " (parked: maxOpenFiles)");
	if (tailer_is_open(t))
		files_commit(fs, t);
	return tailer_id(t);
}

/*
 * files_track, with a file that cannot be opened reported once (a
 * compressed one in a format the agent cannot read counted as lost, once).
 */
enum track_result
files_track_at(struct files *fs, const char *path, const struct stat *st,
    uint64_t off, bool gone)
{
	bool	 z = zsource_name_compressed(path);
	bool	 unreadable;
	char	 why[METRICS_MSG_LEN];
	int	 err;

	if (files_track(fs, path, st, off, gone) != 0)
		return TRACKED;
	if (z && errno == EAGAIN)
		return TRACK_LATER;	/* still being compressed */
	err = errno;
	unreadable = z && err != EACCES && err != ENOENT;
	if (openfail_report(&fs->fails, fs->fc->name, path, err,
	    unreadable ? "compressed in a format the agent cannot read (it "
	    "reads gzip and zstd)" : NULL)) {
		fs->m->open_errors++;
		/* disagent status shows it, naming the file (reason first:
		 * a long path may be cut short). */
		snprintf(why, sizeof(why), "%s: cannot open %s", unreadable ?
		    "compressed in a format the agent cannot read" :
		    strerror(err), path);
		metrics_set_error(fs->m, "OPEN", why, wall_s());
		if (unreadable)
			fs->m->bytes_lost[LOST_UNREADABLE] +=
			    (uint64_t)st->st_size;
	}
	return unreadable ? TRACK_UNREADABLE : TRACK_FAILED;
}

static void
track(struct files *fs, const char *path, const struct stat *st, bool first,
    bool gone)
{
	struct tracked	*it = fs->list;
	struct reg_entry *e;
	enum copies_verdict v = COPIES_NONE;
	uint64_t	 off = 0;

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
		off = resume_offset(fs->fc, fs->reg, path, st, first);
	(void)files_track_at(fs, path, st, off, gone);
}

/* The file was truncated or rewritten in place: read it again from 0. */
void
files_restart(struct files *fs, struct tracked *k, const char *why)
{
	struct tailer	*t = k->t;
	struct reg_entry *e;
	uint32_t	 len;

	log_warn("%s: %s; reading from 0", tailer_path(t), why);
	tailer_head(t, &k->prev_fp_crc, &len);
	k->prev_fp_len = len;
	k->prev_end = tailer_read_off(t);
	tailer_restart(t, fs->fr);
	fs->m->truncations++;
	files_commit(fs, t);
	/* The spans were the old content's. */
	e = registry_find(fs->reg, fs->fc->name, tailer_dev(t), tailer_ino(t));
	if (e != NULL)
		registry_set_acked(fs->reg, e, NULL, 0);
	k->spans_saved = false;
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
	if (tailer_pending(k->t) > 0) {
		k->truncate_pending = true;
		return;		/* after the in-flight ranges settle */
	}
	k->truncate_pending = false;
	files_restart(fs, k, "truncated or rewritten in place "
	    "(copytruncate?)");
}

static void
on_found(void *arg, const char *path, const struct stat *st)
{
	struct files	*fs = arg;
	struct tracked	*k;

	if (orphans_pending(fs))
		successors_seen(fs->succ, (uint64_t)st->st_dev,
		    (uint64_t)st->st_ino);
	k = find_dev_ino(fs, (uint64_t)st->st_dev, (uint64_t)st->st_ino);
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

	if (orphans_pending(fs))
		successors_seen(fs->succ, (uint64_t)st->st_dev,
		    (uint64_t)st->st_ino);
	k = find_dev_ino(fs, (uint64_t)st->st_dev, (uint64_t)st->st_ino);
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
	if (!orphans_pending(fs) || e == NULL ||
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
	uv_timer_start(&fs->rescan_timer, on_rescan_timer, due,
	    (uint64_t)fs->fc->rescan_interval_ms);
}

/* Reconcile the tracked set with the file system: the source of truth. */
static void
scan(struct files *fs, bool first)
{
	struct tracked	*k;
	char		*path;
	bool		 walked;
	int		 fd;

	if (first)
		set_state(fs, FILES_FIRST);
	successors_reset(fs->succ);
	/* Truncations first: a copytruncate copy found by the walk is then
	 * recognised by the original's previous head. */
	for (k = fs->list; k != NULL; k = k->next) {
		k->seen = false;
		if (k->truncate_pending || tailer_is_open(k->t))
			refresh(fs, k);
	}
	copies_scan_begin(&fs->waiting);
	walked = watcher_scan(fs->watcher, on_found, on_other, fs) > 0;
	if (!walked && !fs->warned_dir) {
		log_warn("[%s] cannot read directory %s: %s; will retry",
		    fs->fc->name, watcher_base(fs->watcher), strerror(errno));
		fs->warned_dir = true;
	}
	while (walked && copies_vanished(&fs->waiting, &fd, &path))
		adopt_held(fs, fd, path);
	openfail_sweep(&fs->fails, fs->fc->name, false);
	files_follow_gone(fs, walked && orphans_pending(fs));
	if (walked)
		set_state(fs, FILES_RUNNING);
	else if (fs->state == FILES_FIRST)
		set_state(fs, FILES_UNWALKED);
	for (k = fs->list; k != NULL; k = k->next) {
		if (!k->seen && !k->gone) {
			k->gone = true;
			k->scan_size = UINT64_MAX;
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
 * readCoalesceMillis: after a write is read on its event, the watches
 * pause and the files are read on a timer of that period, as long as a
 * scan finds them changed.  The first scan that finds nothing new puts the
 * watches back and looks once more, for a write made in between.  The
 * cost is then per period, not per write, at a server's pace (issue 25).
 */
static bool
coalescing(const struct files *fs)
{
	return fs->fc->read_coalesce_ms > 0 && !fs->once &&
	    fs->state != FILES_STOPPED &&
	    fs->ntracked <= COALESCE_MAX_FILES;
}

static void
coalesce_next(struct files *fs)
{
	if (uv_is_active((uv_handle_t *)&fs->rescan_timer) &&
	    uv_timer_get_due_in(&fs->rescan_timer) <=
	    (uint64_t)fs->fc->read_coalesce_ms)
		return;
	uv_timer_start(&fs->rescan_timer, on_rescan_timer,
	    (uint64_t)fs->fc->read_coalesce_ms,
	    (uint64_t)fs->fc->rescan_interval_ms);
}

/* After a scan with the watches paused: keep reading on the timer while
 * files change, else watch again. */
static void
coalesce_after_scan(struct files *fs, uint64_t grew)
{
	struct tracked	*k;

	if (fs->watcher == NULL || !watcher_paused(fs->watcher))
		return;
	if (fs->grew != grew && coalescing(fs)) {
		coalesce_next(fs);
		return;
	}
	watcher_pause(fs->watcher, false);
	for (k = fs->list; k != NULL; k = k->next)
		refresh(fs, k);
}

static void
on_rescan_timer(uv_timer_t *h)
{
	struct files	*fs = container_of(h, struct files, rescan_timer);
	uint64_t	 grew = fs->grew;

	scan(fs, false);
	coalesce_after_scan(fs, grew);
	fs->readable(fs->arg);
}

static void
on_fs_event(void *arg, const char *dir, const char *name, int events)
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
			if (coalescing(fs)) {
				watcher_pause(fs->watcher, true);
				coalesce_next(fs);
			}
			fs->readable(fs->arg);
			return;
		}
	}
	uv_timer_start(&fs->rescan_timer, on_rescan_timer, EVENT_DELAY_MS,
	    (uint64_t)fs->fc->rescan_interval_ms);
}

/* --- the flow's view ---------------------------------------------------- */

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
	struct tracked	*k = idmap_get(&fs->byid, id);

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

/* --- what a restart must not send again --------------------------------- */

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

	want = tailer_pending(t) + na + (p != NULL ? REG_MAX_SPANS : 0) + 1;
	if (fs->nscratch < want) {
		fs->nscratch = want;
		fs->scratch = xrealloc(fs->scratch, want * sizeof(*fs->scratch));
	}
	n = tailer_spans(t, fs->scratch, tailer_pending(t));
	if (p != NULL)
		n += skipplan_spans(p, tailer_committed(t), fs->scratch + n,
		    REG_MAX_SPANS);
	for (i = 0; i < na; i++) {
		fs->scratch[n].start = a[i].start;
		fs->scratch[n++].end = a[i].end;
	}
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

/* --- lifecycle ---------------------------------------------------------- */

static void	files_freed(struct closer *);

struct files *
files_new(uv_loop_t *loop, const struct conf *conf,
    const struct conf_flow *fc, struct registry *reg,
    const struct framer *fr, struct metrics_flow *m, bool once,
    files_cb readable, void *arg, char *err, size_t errlen)
{
	struct files	*fs;

	fs = xcalloc(1, sizeof(*fs));
	fs->watcher = watcher_new(loop, fc, once ? NULL : on_fs_event, fs,
	    err, errlen);
	if (fs->watcher == NULL) {
		free(fs);
		return NULL;
	}
	fs->loop = loop;
	fs->fc = fc;
	fs->reg = reg;
	fs->fr = fr;
	fs->m = m;
	fs->once = once;
	fs->readable = readable;
	fs->arg = arg;
	fs->max_open = files_open_budget(conf, fc);
	fs->succ = successors_new((size_t)fc->header_bytes);
	idmap_init(&fs->byid);
	idmap_init(&fs->byino);
	uv_timer_init(loop, &fs->rescan_timer);
	closer_init(&fs->closer, files_freed);
	fs->wf = wholefile_new(loop, fc, reg, m, once, files_whole_turn, fs);
	fs->reap = reaper_new(fc, reg, m);
	return fs;
}

void
files_start(struct files *fs)
{
	files_spool_resume(fs);
	scan(fs, true);
	if (!fs->once)
		uv_timer_start(&fs->rescan_timer, on_rescan_timer,
		    (uint64_t)fs->fc->rescan_interval_ms,
		    (uint64_t)fs->fc->rescan_interval_ms);
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

/* The timer closed: the memory goes. */
static void
files_freed(struct closer *c)
{
	free(container_of(c, struct files, closer));
}

void
files_free(struct files *fs)
{
	struct tracked	*k;

	if (fs == NULL)
		return;
	files_stop(fs);
	wholefile_free(fs->wf);
	fs->wf = NULL;
	reaper_free(fs->reap);
	idmap_cleanup(&fs->byino);	/* no invariant to keep now */
	while ((k = fs->list) != NULL)
		files_unlink(fs, &fs->list, k);
	openfail_sweep(&fs->fails, fs->fc->name, true);
	files_spool_free(fs);
	while (fs->norphans > 0)	/* kept for a successor still written */
		free(fs->orphans[--fs->norphans].path);
	free(fs->orphans);
	successors_free(fs->succ);
	free(fs->scratch);
	copies_cleanup(&fs->waiting);
	idmap_cleanup(&fs->byid);
	closer_close(&fs->closer, (uv_handle_t *)&fs->rescan_timer);
	closer_release(&fs->closer);
}
