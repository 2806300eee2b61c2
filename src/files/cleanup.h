/*
 * Cleaning up a delivered file, safely.  Before a file is deleted, moved
 * into fileMoveToDir or renamed with fileSuffix, the file at its path must
 * still be the one delivered: the same device and inode, size and mtime,
 * and the same first and last bytes (crc32).  A move or rename never
 * replaces a file that is in the way, and no symbolic link leads a cleanup
 * out of place (cleanup_apply).  The checks of the keys that choose the
 * cleanup are cleanconf.h's.
 *
 * Used by wholefile.c (isFileAppendable = false) and reaper.c
 * (deleteAfterDeliverySeconds).  Plain synchronous calls: each reads at
 * most two fingerprints' worth of bytes.
 */
#ifndef DISAGENT_CLEANUP_H
#define DISAGENT_CLEANUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"
#include "conf/cleanconf.h"

struct conf_flow;

/* What identifies a delivered file's content. */
struct cleanup_id {
	uint64_t	 dev;
	uint64_t	 ino;
	uint64_t	 size;
	int64_t		 mtime_ns;
	uint32_t	 head_crc;	/* crc32 of the first head_len bytes */
	uint32_t	 head_len;
	uint32_t	 tail_crc;	/* crc32 of the last tail_len bytes */
	uint32_t	 tail_len;
};

/*
 * Measure the regular file at path into *id: dev, ino, size, mtime, and
 * the crc32 of its first and last MIN(fp, size) bytes.  0, or a negative
 * errno (-ENOENT: no file at path; -EINVAL: not a regular file).
 */
int		 cleanup_identify(const char *path, uint32_t fp,
		    struct cleanup_id *id) WARN_UNUSED;

enum cleanup_match {
	CLEANUP_SAME,		/* the file delivered, unchanged */
	CLEANUP_CHANGED,	/* the same inode, other size, mtime or bytes */
	CLEANUP_OTHER,		/* another file is at the path */
	CLEANUP_GONE,		/* nothing (or nothing readable) is there */
};

/*
 * Compare the file at path with want, reading the head and tail lengths
 * want has.  *err gets the errno of a failed measurement (0 otherwise).
 */
enum cleanup_match cleanup_check(const char *path,
		    const struct cleanup_id *want, int *err);

/*
 * Carry out policy p on path (dir: fileMoveToDir, suffix: fileSuffix) when
 * the file there is still want, whose flow reads below base (cleanup_base).
 * Everything happens in the directory's descriptor: it is opened from base
 * down without following a symbolic link (base itself is followed: it is
 * the operator's), the entry is checked against want, and checked again
 * (same entry, not followed) just before unlinkat or renameat2.  A symbolic
 * link at path is itself what is deleted, moved or renamed, never its
 * target, and only when it points to want.  Returns 0 with where it went in
 * *to (new; NULL for a deletion and for CLEANUP_KEEP), or a negative
 * errno: -ESTALE when the file is not want (changed, replaced, or swapped
 * during the check), -ELOOP when a directory below base or fileMoveToDir
 * itself is a symbolic link, -EEXIST when the target is in the way,
 * -EXDEV when the directory is on another file system (a move is a rename,
 * never a copy), or what the system calls said.
 */
int		 cleanup_apply(enum cleanup_policy p, const char *base,
		    const char *path, const struct cleanup_id *want,
		    const char *dir, const char *suffix, char **to)
		    WARN_UNUSED;

/* cleanup_apply with CLEANUP_DELETE: 0, -ESTALE, or the error. */
int		 cleanup_remove_if_same(const char *base, const char *path,
		    const struct cleanup_id *want) WARN_UNUSED;

/* The directory a flow's pattern starts in, followed as configured: the
 * base of cleanup_apply (new). */
char		*cleanup_base(const struct conf_flow *fc);

/*
 * For tests only: when set, called by cleanup_apply between its check of
 * the file and the check just before the act, so a test can swap the file
 * in that window.  NULL otherwise.
 */
extern void	(*cleanup_test_hook)(const char *path);

#endif
