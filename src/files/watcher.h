/*
 * Which files belong to a flow: filePattern with globs in any component and
 * "**" (any depth), directoryRecursionEnabled, excludePattern, and the
 * names skipped unless a pattern names them (hidden, compressed, fileSuffix).
 * Scans walk only the directories that can hold matches; in INOTIFY mode
 * each walked directory gets a uv_fs_event watch, reconciled on every scan,
 * so directories that appear later are watched from the next scan on.  The
 * events only cut latency: the caller's periodic scan is what correctness
 * rests on (lessons R8).
 */
#ifndef DISAGENT_WATCHER_H
#define DISAGENT_WATCHER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include <uv.h>

#include "base/util.h"

struct conf_flow;
struct watcher;

/* A matching regular file found by a scan. */
typedef void	(*watcher_file_cb)(void *arg, const char *path,
		    const struct stat *);
/* A regular file in a watched directory that does NOT match. */
typedef void	(*watcher_other_cb)(void *arg, const char *path,
		    const struct stat *);
/* A walk is over: ndirs directories read; none: err (negative errno)
 * says why not the first. */
typedef void	(*watcher_done_cb)(void *arg, size_t ndirs, int err);
/* An inotify event in directory dir for entry name (may be NULL). */
typedef void	(*watcher_event_cb)(void *arg, const char *dir,
		    const char *name, int uv_events);

/*
 * A watcher for fc's pattern.  events may be NULL (POLL mode is chosen by
 * fc->watch_mode).  Returns NULL with a message in err when the pattern
 * cannot work (not absolute, empty component).
 */
struct watcher	*watcher_new(uv_loop_t *, const struct conf_flow *,
		    watcher_event_cb, void *arg, char *err, size_t errlen);

/*
 * Walk the matching directories (files/walk.h: each once, each file under
 * its shortest path, links as followSymlinks says): call found for each
 * matching regular file, and other (when not NULL) for every other regular
 * file in a walked directory, then done.  Adds watches on new directories
 * and drops those of vanished ones.  A walk of many directories goes on in
 * slices over turns of the loop; a small one is over (done called) before
 * this returns.  0, or -EBUSY while a walk is
 * under way.  watcher_free drops a walk under way: no more callbacks.
 */
int		 watcher_scan(struct watcher *, watcher_file_cb found,
		    watcher_other_cb other, watcher_done_cb done, void *arg);
/*
 * The same walk, whole, in this call (no slices, no other callback): for
 * a look before the flows start, such as the restart's plan.  0, or a
 * negative errno when no directory could be read, -EBUSY while a walk is
 * under way.
 */
int		 watcher_scan_now(struct watcher *, watcher_file_cb found,
		    void *arg);
/* Whether a walk is under way. */
bool		 watcher_walking(const struct watcher *);

/*
 * Pause (true) or resume (false) the directory watches: while paused no
 * event is delivered, and the caller scans on its own timer.  Resuming
 * puts every watch back; the caller then looks once more for what changed
 * in between.  Nothing in POLL mode.
 */
void		 watcher_pause(struct watcher *, bool pause);
bool		 watcher_paused(const struct watcher *);

/* Directories being watched (INOTIFY mode). */
size_t		 watcher_watches(const struct watcher *);

/* The literal directory the pattern starts from. */
const char	*watcher_base(const struct watcher *);

/* Close the watches; the watcher frees itself once they are closed. */
void		 watcher_free(struct watcher *);

#endif
