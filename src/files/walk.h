/*
 * The directory walk of a flow's pattern (watcher.h drives it in slices):
 * breadth first from the pattern's literal directories, each directory
 * walked once by (device, inode), so a directory reached twice -- a link
 * back up makes a loop -- costs nothing more, and each file is reported
 * once, under the shortest path that reaches it (the fewest directories;
 * among those, the real name before a link).  followSymlinks decides which
 * links are followed (linkrule.h); what the walk refuses, and each loop,
 * is logged once for as long as it stays.
 */
#ifndef DISAGENT_WALK_H
#define DISAGENT_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

struct conf_flow;
struct walker;

/* What a walk reports: a matching regular file (found), another regular
 * file of a walked directory (other, may be NULL), a walked directory
 * (dir, before its entries).  path and st are borrowed for the call. */
struct walk_cbs {
	void	(*found)(void *arg, const char *path, const struct stat *);
	void	(*other)(void *arg, const char *path, const struct stat *);
	void	*arg;
	void	(*dir)(void *dir_arg, const char *path);
	void	*dir_arg;
};

/*
 * The walker of fc (borrowed, outlives it) for pattern (with recursion's
 * "**"), from its literal directories base, whose last component is the
 * file name glob name_glob (all three borrowed likewise).  New.
 */
struct walker	*walker_new(const struct conf_flow *fc,
		    const char *pattern, const char *base,
		    const char *name_glob);

/* A new walk, reporting to cbs (copied); a walk under way is dropped. */
void		 walker_begin(struct walker *, const struct walk_cbs *cbs);

/*
 * Walk on: at most max_dirs directories, and no more once max_entries
 * entries were read.  True when the walk is over: walker_ndirs says how
 * many directories it read, and when none, walker_error why the first
 * could not be (a negative errno).
 */
bool		 walker_step(struct walker *, size_t max_dirs,
		    size_t max_entries);
/* Whether a walk is under way (begun, not over, not dropped). */
bool		 walker_busy(const struct walker *);
size_t		 walker_ndirs(const struct walker *);
int		 walker_error(const struct walker *);
/* Of walker_ndirs, how many were read (not known unchanged, dircache.h). */
size_t		 walker_nlisted(const struct walker *);
/* For tests: the realtime clock in ns the cache judges by. */
void		 walker_set_clock(struct walker *, uint64_t (*)(void));

void		 walker_free(struct walker *);

#endif
