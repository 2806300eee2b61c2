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
 * Walk the matching directories: call found for each matching regular file,
 * and other (when not NULL) for every other regular file in a walked
 * directory.  Adds watches on new directories and drops those of vanished
 * ones.  Returns the number of directories walked.
 */
size_t		 watcher_scan(struct watcher *, watcher_file_cb found,
		    watcher_other_cb other, void *arg);

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
