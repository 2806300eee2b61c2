/*
 * The tracked files of a flow (files.h): the set, one struct tracked
 * around each tailer, and how a file joins and leaves it.  Identity
 * decides rename vs new file (R5): a file is its (dev, ino), found through
 * the inode map.  Tracking opens a tailer at the offset a scan chose,
 * parked when maxOpenFiles is spent; a file that cannot be opened is
 * reported once.  The rest of the module works on this set (files_int.h
 * says who): scans reconcile it with the file system (files_scan.c), the
 * flow reads from it (files_view.c), what a restart must not send again
 * rides on it (files_known.c).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/closer.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/pool.h"
#include "conf/conf.h"
#include "files/copies.h"
#include "files/files.h"
#include "files/files_int.h"
#include "files/openfail.h"
#include "files/ownfiles.h"
#include "files/reaper.h"
#include "files/resume.h"
#include "files/successor.h"
#include "files/tailer.h"
#include "files/watcher.h"
#include "files/wholefile.h"
#include "files/zsource.h"
#include "state/registry.h"

/* --- identity ----------------------------------------------------------- */

/* The keys of the two maps of tracked files (keymap: the values carry
 * them). */
static uint64_t
key_id(const void *k)
{
	return tailer_id(((const struct tracked *)k)->t);
}

static uint64_t
key_ino(const void *k)
{
	return tailer_ino(((const struct tracked *)k)->t);
}

/*
 * The newest tracked file that is (dev, ino), or NULL.  A scan asks this
 * for every file it finds: through the inode map, not a walk of the list
 * (which made a rescan of 10,000 files cost ~100 ms, 80% of it here).
 * Only an inode shared across devices falls back to the walk.
 */
struct tracked *
files_find_ino(struct files *fs, uint64_t dev, uint64_t ino)
{
	struct tracked	*k = keymap_get(&fs->byino, ino);

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

	if (keymap_get(&fs->byino, ino) != k)
		return;
	keymap_del(&fs->byino, ino);
	for (o = fs->list; o != NULL; o = o->next)	/* the next newest */
		if (tailer_ino(o->t) == ino) {
			keymap_put(&fs->byino, o);
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
	e = registry_set_shared(fs->reg, fs->fc->name, tailer_dev(t),
	    tailer_ino(t), crc, len, tailer_path(t), tailer_committed(t));
	/* What is known to follow, if the file goes before it is read. */
	registry_set_size(fs->reg, e, tailer_size(t));
}

/* Every flow's tracked records, one per file. */
static struct pool trackeds = POOL_INITIALIZER(struct tracked);

struct tracked_past *
files_past(struct tracked *k)
{
	if (k->past == NULL) {
		k->past = xcalloc(1, sizeof(*k->past));
		k->past->scan_size = UINT64_MAX;
	}
	return k->past;
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
	k = pool_alloc(&trackeds);
	k->t = t;
	k->gone = gone;
	k->seen = true;
	k->next = fs->list;
	fs->list = k;
	keymap_put(&fs->byid, k);
	if (tailer_ino(t) != 0)
		keymap_put(&fs->byino, k);	/* the newest */
	fs->ntracked++;
	if (tailer_is_open(t))
		fs->nopen++;
	return k;
}

bool
files_tracks(struct files *fs, uint64_t dev, uint64_t ino)
{
	return files_find_ino(fs, dev, ino) != NULL;
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
	keymap_del(&fs->byid, tailer_id(k->t));
	forget_ino(fs, k);
	wholefile_untracked(fs->wf, tailer_id(k->t));
	tailer_free(k->t);
	free(k->past);
	pool_free(&trackeds, k);
}

/* --- tracking ----------------------------------------------------------- */

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
	if (errno == ESTALE) {
		/* Not the file the scan judged any more: the next looks. */
		log_debug("[%s] %s changed while opened", fs->fc->name, path);
		return TRACK_LATER;
	}
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

bool
files_own(struct files *fs, const char *path, const struct stat *st)
{
	const char	*what = ownfiles_what(fs->own, path, st);

	if (what == NULL)
		return false;
	if (!ownfiles_reported(fs->own, path))
		log_info("[%s] %s is %s: never shipped", fs->fc->name, path,
		    what);
	return true;
}

bool
files_shipped_before(struct files *fs, const char *path)
{
	const struct conf_flow *o;

	o = conf_flow_shipped_before(fs->conf, fs->fc, path);
	if (o == NULL)
		return false;
	if (!ownfiles_reported(fs->own, path))
		log_warn("[%s] %s is read by flow [%s] too, for the same "
		    "stream %s: only [%s] ships it, or each line would be "
		    "sent twice", fs->fc->name, path, o->name, o->stream,
		    o->name);
	return true;
}

/* The file was truncated or rewritten in place: read it again from 0. */
void
files_restart(struct files *fs, struct tracked *k, const char *why,
    uint64_t before)
{
	struct tailer	*t = k->t;
	struct tracked_past *p;
	struct reg_entry *e;
	uint64_t	 off = tailer_read_off(t);
	uint32_t	 len;

	/* Only the size last seen is known: bytes written after it and
	 * truncated before the next look were never known to the agent. */
	if (before > off) {
		log_warn("%s: %s with %" PRIu64 " bytes unread (inode %ju, "
		    "read to offset %" PRIu64 " of the %" PRIu64 " bytes last "
		    "seen): they are lost; reading from 0", tailer_path(t),
		    why, before - off, (uintmax_t)tailer_ino(t), off, before);
		fs->m->bytes_lost[LOST_TRUNCATED] += before - off;
	} else
		log_warn("%s: %s; reading from 0", tailer_path(t), why);
	p = files_past(k);
	tailer_head(t, &p->prev_fp_crc, &len);
	p->prev_fp_len = len;
	p->prev_end = tailer_read_off(t);
	tailer_restart(t, fs->fr);
	fs->m->truncations++;
	files_commit(fs, t);
	/* The spans were the old content's. */
	e = registry_find(fs->reg, fs->fc->name, tailer_dev(t), tailer_ino(t));
	if (e != NULL)
		registry_set_acked(fs->reg, e, NULL, 0);
	k->spans_saved = false;
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
	fs->watcher = watcher_new(loop, fc, once ? NULL : files_fs_event, fs,
	    err, errlen);
	if (fs->watcher == NULL) {
		free(fs);
		return NULL;
	}
	fs->loop = loop;
	fs->conf = conf;
	fs->fc = fc;
	fs->reg = reg;
	fs->fr = fr;
	fs->m = m;
	fs->once = once;
	fs->readable = readable;
	fs->arg = arg;
	fs->max_open = files_open_budget(conf, fc);
	fs->succ = successors_new((size_t)fc->header_bytes);
	keymap_init(&fs->byid, key_id);
	keymap_init(&fs->byino, key_ino);
	uv_timer_init(loop, &fs->rescan_timer);
	closer_init(&fs->closer, files_freed);
	fs->wf = wholefile_new(loop, fc, reg, m, once, files_whole_turn, fs);
	fs->reap = reaper_new(fc, reg, m);
	fs->own = ownfiles_new(conf);
	return fs;
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
	ownfiles_free(fs->own);
	fs->own = NULL;
	keymap_cleanup(&fs->byino);	/* no invariant to keep now */
	while ((k = fs->list) != NULL)
		files_unlink(fs, &fs->list, k);
	openfail_sweep(&fs->fails, fs->fc->name, true);
	files_spool_free(fs);
	while (fs->norphans > 0)	/* kept for a successor still written */
		free(fs->orphans[--fs->norphans].path);
	free(fs->orphans);
	successors_free(fs->succ);
	free(fs->scratch);
	free(fs->held);
	copies_cleanup(&fs->waiting);
	keymap_cleanup(&fs->byid);
	closer_close(&fs->closer, (uv_handle_t *)&fs->rescan_timer);
	closer_release(&fs->closer);
}
