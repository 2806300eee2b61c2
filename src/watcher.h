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

#include "util.h"

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

/* Directories being watched (INOTIFY mode). */
size_t		 watcher_watches(const struct watcher *);

/* The literal directory the pattern starts from. */
const char	*watcher_base(const struct watcher *);

/* Close the watches; the watcher frees itself once they are closed. */
void		 watcher_free(struct watcher *);

/* --- pure matching, exposed for tests ---------------------------------- */

/*
 * Whether path matches pattern ("**" matches zero or more directories, the
 * other components are fnmatch(3) globs that do not match a leading '.'
 * unless they start with one).
 */
bool		 watcher_match(const char *pattern, const char *path);
/* Whether a directory dir can hold files matching pattern. */
bool		 watcher_dir_may_match(const char *pattern, const char *dir);
/*
 * Whether name is skipped although it matches: hidden names, .gz .bz2 .zip
 * .tar .xz .zst and suffix (fileSuffix), unless the file name part of
 * pattern names them (starts with '.' / contains that suffix).
 */
bool		 watcher_skipped_name(const char *pattern_name,
		    const char *name, const char *suffix);
/*
 * The pattern a flow matches with (new): file_pattern, with "**" before
 * its file name glob when recursive (directoryRecursionEnabled) and it has
 * none.
 */
char		*watcher_pattern(const char *file_pattern, bool recursive);
/* The literal leading directories of pattern, "/" at least (new). */
char		*watcher_literal_base(const char *pattern);
/* Whether path is excluded by the comma list excl (name or /path globs). */
bool		 watcher_excluded(const char *excl, const char *path);
/*
 * Whether a scan of fc's flow would pick the regular file at path
 * (absolute): the pattern (with directoryRecursionEnabled), the names
 * skipped and excludePattern, as watcher_scan() applies them.
 */
bool		 watcher_flow_matches(const struct conf_flow *fc,
		    const char *path);

#endif
