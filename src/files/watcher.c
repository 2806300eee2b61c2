/*
 * Directory walks and directory watches (base/pattern.c matches).  The
 * watcher's memory goes once every watch is closed (base/closer.h).
 *
 * While paused (readCoalesceMillis), the uv_fs_event watches are off, so
 * that a write wakes nothing; the names in the directories are still
 * watched on an inotify descriptor of the watcher's own, for creations
 * and renames into them only (uv_fs_event has no event mask).  A file
 * created, written and rotated away between two coalesced reads is then
 * seen as it comes, as without the pause.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#ifdef HAVE_SYS_INOTIFY_H
#include <sys/inotify.h>
#endif
#include <unistd.h>

#include "base/closer.h"
#include "base/log.h"
#include "base/pattern.h"
#include "conf/conf.h"
#include "files/walk.h"
#include "files/watcher.h"

struct watchdir {
	char		*path;
	uv_fs_event_t	 ev;
	bool		 seen;
	bool		 started;	/* the inotify watch is on */
	int		 name_wd;	/* paused: its names watch, or -1 */
	struct watcher	*w;
	struct watchdir	*next;
};

struct watcher {
	uv_loop_t	*loop;
	const struct conf_flow *fc;
	char		*pattern;	/* with ** inserted for recursion */
	char		*base;		/* literal leading directories */
	const char	*name_glob;	/* last component of pattern */
	bool		 inotify;
	bool		 paused;	/* watcher_pause: no watch is on */
	bool		 warned_remote;
	struct watchdir	*dirs;		/* in the order the walk reached them */
	struct watchdir	**at;		/* where the walk is in dirs */
	size_t		 ndirs;
	int		 names_fd;	/* paused: names watches; -1: none */
	uv_poll_t	 names;		/* ... polled */
	bool		 warned_names;
	struct closer	 closer;	/* the watches being closed */
	watcher_event_cb events;
	void		*arg;
	struct walker	*walker;
	uv_idle_t	 slice;		/* the walk's next slice */
	watcher_done_cb	 done;		/* a walk is under way */
	void		*arg_scan;	/* its callbacks' */
};

/* --- watches ------------------------------------------------------------ */

static void
on_event(uv_fs_event_t *h, const char *name, int events, int status)
{
	struct watchdir	*d = container_of(h, struct watchdir, ev);
	struct watcher	*w = d->w;

	if (status < 0) {
		log_warn("watch on %s: %s", d->path, uv_strerror(status));
		return;
	}
	if (w->events != NULL && !closer_released(&w->closer))
		w->events(w->arg, d->path, name, events);
}

/* --- names watches, while paused -------------------------------------- */

#ifdef HAVE_SYS_INOTIFY_H
#define NAMES_MASK	(IN_CREATE | IN_MOVED_TO | IN_ONLYDIR)

static void	names_close(struct watcher *);

static void
on_names(uv_poll_t *h, int status, int events)
{
	struct watcher	*w = container_of(h, struct watcher, names);
	char		 buf[4096]
	    __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	struct watchdir	*d;
	ssize_t		 n;
	char		*p;

	(void)events;
	if (status < 0)
		return;
	while ((n = read(w->names_fd, buf, sizeof(buf))) > 0) {
		for (p = buf; p < buf + n; p += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)(void *)p;
			if (ev->len == 0 || closer_released(&w->closer))
				continue;
			for (d = w->dirs; d != NULL; d = d->next)
				if (d->name_wd == ev->wd)
					break;
			if (d != NULL && w->events != NULL)
				w->events(w->arg, d->path, ev->name, UV_RENAME);
		}
	}
}

/* The names of d watched while its uv_fs_event watch is off. */
static void
names_watch(struct watcher *w, struct watchdir *d)
{
	int	 rc;

	if (d->name_wd >= 0)
		return;
	if (w->names_fd < 0 &&
	    (w->names_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) >= 0) {
		rc = uv_poll_init(w->loop, &w->names, w->names_fd);
		if (rc != 0) {
			close(w->names_fd);
			w->names_fd = -1;
		} else if ((rc = uv_poll_start(&w->names, UV_READABLE,
		    on_names)) != 0)
			names_close(w);
		if (rc != 0)
			errno = -rc;
	}
	if (w->names_fd >= 0)
		d->name_wd = inotify_add_watch(w->names_fd, d->path,
		    NAMES_MASK);
	if (d->name_wd < 0 && !w->warned_names) {
		log_warn("[%s] cannot watch the names in %s while reads are "
		    "coalesced: %s; a file there is found by the next read "
		    "(readCoalesceMillis)", w->fc->name, d->path,
		    strerror(errno));
		w->warned_names = true;
	}
}

static void
names_unwatch(struct watcher *w, struct watchdir *d)
{
	if (d->name_wd >= 0)
		(void)inotify_rm_watch(w->names_fd, d->name_wd);
	d->name_wd = -1;
}

static void
names_closed(uv_handle_t *h)
{
	struct watcher	*w = container_of((uv_poll_t *)(void *)h,
	    struct watcher, names);

	close((int)(intptr_t)h->data);
	(void)closer_drop(&w->closer);
}

/* The names descriptor closed (after its poll handle); -1 at once. */
static void
names_close(struct watcher *w)
{
	if (w->names_fd < 0)
		return;
	closer_hold(&w->closer);
	w->names.data = (void *)(intptr_t)w->names_fd;
	w->names_fd = -1;
	uv_close((uv_handle_t *)&w->names, names_closed);
}
#else
static void names_watch(struct watcher *w, struct watchdir *d)
{ (void)w; (void)d; }
static void names_unwatch(struct watcher *w, struct watchdir *d)
{ (void)w; (void)d; }
static void names_close(struct watcher *w) { (void)w; }
#endif

static void
watchdir_closed(uv_handle_t *h)
{
	struct watchdir	*d = container_of((uv_fs_event_t *)(void *)h,
	    struct watchdir, ev);
	struct watcher	*w = d->w;

	free(d->path);
	free(d);
	(void)closer_drop(&w->closer);
}

static void
watchdir_close(struct watchdir *d)
{
	names_unwatch(d->w, d);
	closer_hold(&d->w->closer);
	uv_close((uv_handle_t *)&d->ev, watchdir_closed);
}

static void
watcher_freed(struct closer *c)
{
	struct watcher	*w = container_of(c, struct watcher, closer);

	walker_free(w->walker);
	free(w->pattern);
	free(w->base);
	free(w);
}

/* Whether dir is on a file system where inotify misses writes made by
 * other hosts (lessons R9). */
static const char *
remote_fs(const char *dir)
{
	struct statfs	 sf;

	if (statfs(dir, &sf) != 0)
		return NULL;
	switch ((unsigned long)sf.f_type) {
	case 0x6969UL:
		return "NFS";
	case 0xFF534D42UL:
		return "CIFS";
	case 0xFE534D42UL:
		return "SMB2";
	case 0x517BUL:
		return "SMB";
	case 0x65735546UL:
		return "FUSE";
	default:
		return NULL;
	}
}

static void
watch(struct watcher *w, const char *dir)
{
	const char	*fs;
	struct watchdir	*d, **pp;
	int		 rc;

	/* The walk reaches them in the same order each time: one compare
	 * a directory, not the whole list (201 for 100 pods, each pass). */
	if (*w->at != NULL && strcmp((*w->at)->path, dir) == 0) {
		(*w->at)->seen = true;
		w->at = &(*w->at)->next;
		return;
	}
	for (pp = &w->dirs; (d = *pp) != NULL; pp = &d->next)
		if (strcmp(d->path, dir) == 0) {
			d->seen = true;
			w->at = &d->next;	/* the order from here on */
			return;
		}
	fs = w->warned_remote ? NULL : remote_fs(dir);
	if (fs != NULL) {
		log_warn("[%s] %s is on %s, where inotify does not see writes "
		    "from other hosts; new lines there wait for the rescan "
		    "every %lld ms.  Set watchMode = POLL for this flow.",
		    w->fc->name, dir, fs, w->fc->rescan_interval_ms);
		w->warned_remote = true;
	}
	d = xcalloc(1, sizeof(*d));
	d->path = xstrdup(dir);
	d->w = w;
	d->seen = true;
	d->name_wd = -1;
	uv_fs_event_init(w->loop, &d->ev);
	rc = w->paused ? 0 : uv_fs_event_start(&d->ev, on_event, dir, 0);
	d->started = !w->paused;
	if (w->paused)
		names_watch(w, d);
	if (rc != 0) {
		log_warn("[%s] cannot watch %s: %s; relying on the rescan "
		    "every %lld ms", w->fc->name, dir, uv_strerror(rc),
		    w->fc->rescan_interval_ms);
		watchdir_close(d);
		return;
	}
	d->next = *w->at;
	*w->at = d;
	w->at = &d->next;
	w->ndirs++;
}

static void
drop_unseen(struct watcher *w)
{
	struct watchdir	**pp, *d;

	for (pp = &w->dirs; (d = *pp) != NULL;) {
		if (d->seen) {
			d->seen = false;
			pp = &d->next;
			continue;
		}
		*pp = d->next;
		w->ndirs--;
		watchdir_close(d);
	}
	w->at = &w->dirs;
}

/* --- walking, in slices ------------------------------------------------- */

/*
 * A walk reads at most this many directories, or a directory more once
 * this many entries were read, per turn of the loop; the next slice runs
 * from an idle handle, after the loop's poll has served signals, replies
 * and reads.  Not a 0 ms timer: libuv before 1.48 runs a timer started in
 * its own callback again in the same turn, so the whole walk was one turn
 * (check_walk counts them).  A walk of a usual tree is one slice, done
 * in the call.
 */
#define SLICE_DIRS	32
#define SLICE_ENTRIES	4096

static void
on_walk_dir(void *arg, const char *dir)
{
	struct watcher	*w = arg;

	if (w->inotify)
		watch(w, dir);
}

static void	on_slice(uv_idle_t *);

/* One slice; the end of the walk reported when it is over. */
static void
slice(struct watcher *w)
{
	watcher_done_cb	 done = w->done;
	size_t		 ndirs;
	int		 err;

	if (!walker_step(w->walker, SLICE_DIRS, SLICE_ENTRIES)) {
		uv_idle_start(&w->slice, on_slice);
		return;
	}
	uv_idle_stop(&w->slice);
	ndirs = walker_ndirs(w->walker);
	err = walker_error(w->walker);
	if (w->inotify)
		drop_unseen(w);
	w->done = NULL;
	done(w->arg_scan, ndirs, err);	/* may begin the next walk */
}

static void
on_slice(uv_idle_t *h)
{
	struct watcher	*w = container_of(h, struct watcher, slice);

	if (!closer_released(&w->closer) && w->done != NULL)
		slice(w);
}

int
watcher_scan(struct watcher *w, watcher_file_cb found, watcher_other_cb other,
    watcher_done_cb done, void *arg)
{
	struct walk_cbs	 cbs = { found, other, arg, on_walk_dir, w };

	if (w->done != NULL)
		return -EBUSY;
	w->done = done;
	w->arg_scan = arg;
	w->at = &w->dirs;
	walker_begin(w->walker, &cbs);
	slice(w);
	return 0;
}

int
watcher_scan_now(struct watcher *w, watcher_file_cb found, void *arg)
{
	struct walk_cbs	 cbs = { found, NULL, arg, on_walk_dir, w };

	if (w->done != NULL)
		return -EBUSY;
	w->at = &w->dirs;
	walker_begin(w->walker, &cbs);
	while (!walker_step(w->walker, SIZE_MAX, SIZE_MAX))
		continue;
	return walker_ndirs(w->walker) > 0 ? 0 : walker_error(w->walker);
}

bool
watcher_walking(const struct watcher *w)
{
	return w->done != NULL;
}

/*
 * Pause or resume every watch: the caller reads on its own timer while
 * files keep changing, and no inotify event wakes the loop meanwhile.  A
 * watch that cannot be put back is logged once per try; the scans still
 * find everything (lessons R8).
 */
void
watcher_pause(struct watcher *w, bool pause)
{
	struct watchdir	*d;
	int		 rc;

	if (!w->inotify || w->paused == pause)
		return;
	w->paused = pause;
	for (d = w->dirs; d != NULL; d = d->next) {
		/* The names watch covers the gap on either side. */
		if (pause)
			names_watch(w, d);
		if (pause && d->started) {
			(void)uv_fs_event_stop(&d->ev);
			d->started = false;
		} else if (!pause && !d->started) {
			rc = uv_fs_event_start(&d->ev, on_event, d->path, 0);
			if (rc != 0)
				log_warn("[%s] cannot watch %s again: %s; "
				    "relying on the rescan every %lld ms",
				    w->fc->name, d->path, uv_strerror(rc),
				    w->fc->rescan_interval_ms);
			d->started = rc == 0;
		}
		if (!pause && d->started)
			names_unwatch(w, d);
	}
}

bool
watcher_paused(const struct watcher *w)
{
	return w->paused;
}

size_t
watcher_watches(const struct watcher *w)
{
	return w->ndirs;
}

const char *
watcher_base(const struct watcher *w)
{
	return w->base;
}

/* --- setup -------------------------------------------------------------- */

struct watcher *
watcher_new(uv_loop_t *loop, const struct conf_flow *fc,
    watcher_event_cb events, void *arg, char *err, size_t errlen)
{
	struct watcher	*w;
	const char	*p = fc->file_pattern, *last;

	last = strrchr(p, '/');
	if (p[0] != '/' || last == NULL || last[1] == '\0' ||
	    strstr(p, "//") != NULL) {
		snprintf(err, errlen, "filePattern %s must be an absolute path "
		    "ending in a file name glob", p);
		return NULL;
	}
	w = xcalloc(1, sizeof(*w));
	w->at = &w->dirs;
	w->loop = loop;
	w->fc = fc;
	w->events = events;
	w->arg = arg;
	w->inotify = strcmp(fc->watch_mode, "POLL") != 0;
	w->pattern = pattern_recursive(p, fc->recursive);
	w->name_glob = strrchr(w->pattern, '/') + 1;
	w->base = pattern_literal_base(w->pattern);
	w->names_fd = -1;
	w->walker = walker_new(fc, w->pattern, w->base, w->name_glob);
	closer_init(&w->closer, watcher_freed);
	uv_idle_init(loop, &w->slice);
	return w;
}

void
watcher_free(struct watcher *w)
{
	struct watchdir	*d;

	if (w == NULL)
		return;
	while ((d = w->dirs) != NULL) {
		w->dirs = d->next;
		watchdir_close(d);
	}
	names_close(w);
	w->done = NULL;		/* the walk under way is dropped */
	closer_close(&w->closer, (uv_handle_t *)&w->slice);
	closer_release(&w->closer);
}
