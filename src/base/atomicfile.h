/*
 * Replacing a file atomically, the one way every file the agent rewrites
 * (the state file, its .bak copy, the metrics file) is written: the new
 * content goes to path.tmp in the same directory and is renamed over path
 * once complete, so a reader sees the old file or the new one, never a
 * part of either.  With ATOMICFILE_SYNC the file is fsync'd before the
 * rename and its directory after it, so the new file also survives a crash
 * once the commit returns.  Any failure leaves path as it was, and
 * path.tmp is removed by atomicfile_cleanup.
 */
#ifndef DISAGENT_ATOMICFILE_H
#define DISAGENT_ATOMICFILE_H

#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

#define ATOMICFILE_SYNC		0x1	/* fsync the file, then the directory */
#define ATOMICFILE_EXACT_MODE	0x2	/* mode whatever the umask (fchmod) */
/*
 * Nothing touches the disk before atomicfile_commit: the content is kept
 * in memory, and path.tmp made by the commit, which may then run on
 * another thread (registry_save_start).
 */
#define ATOMICFILE_DEFER	0x4

/*
 * One replacement in progress.  Private but for op and file: after a call
 * failed they say what failed on which file ("create", path.tmp), for the
 * caller's log line; they stay valid until atomicfile_cleanup.
 */
struct atomicfile {
	const char	*op;
	const char	*file;
	char		*path;		/* private */
	char		*tmp;
	int		 fd;
	int		 err;		/* first error; ends the writes */
	unsigned	 flags;
	mode_t		 mode;
	bool		 done;		/* renamed over path */
	struct buf	 b;		/* written at 64 KiB */
};

/*
 * Create path.tmp (truncated, mode as open(2) gives it, or exactly mode
 * with ATOMICFILE_EXACT_MODE) for a new content of path.  Returns 0 or a
 * negative errno; call atomicfile_cleanup either way.
 */
int	atomicfile_open(struct atomicfile *, const char *path, mode_t mode,
	    unsigned flags) WARN_UNUSED;

/*
 * Append n bytes (buffered).  Returns 0 or the first error of this file,
 * which every later call returns too.
 */
int	atomicfile_write(struct atomicfile *, const void *, size_t) WARN_UNUSED;

/* Overwrite n bytes at offset off of what was written so far. */
int	atomicfile_pwrite(struct atomicfile *, uint64_t off, const void *,
	    size_t n) WARN_UNUSED;

/*
 * End the writes with an error of the caller's (err < 0, described by op):
 * the file will not be committed.  Returns err.
 */
int	atomicfile_fail(struct atomicfile *, const char *op, int err);

/*
 * Flush, fsync (ATOMICFILE_SYNC), close, call before_rename(arg) if not
 * NULL (the complete new file exists as path.tmp, the old one as path),
 * rename path.tmp over path, fsync the directory (ATOMICFILE_SYNC).
 * Returns 0, or the first error of the writes or of these steps.
 */
int	atomicfile_commit(struct atomicfile *, void (*before_rename)(void *),
	    void *arg) WARN_UNUSED;

/* Close and remove path.tmp unless committed; free.  Safe to repeat. */
void	atomicfile_cleanup(struct atomicfile *);

/* Replace path with the n bytes of data: open, write, commit, cleanup. */
int	atomicfile_replace(const char *path, const void *data, size_t n,
	    mode_t mode, unsigned flags) WARN_UNUSED;

/*
 * Replace dst with a copy of the file src (read 64 KiB at a time), for
 * filesystems where a hard link cannot do it.  0 or a negative errno
 * (-ENOENT when src is missing; dst is untouched on any failure).
 */
int	atomicfile_copy(const char *src, const char *dst, mode_t mode,
	    unsigned flags) WARN_UNUSED;

#endif
