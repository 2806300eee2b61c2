/*
 * The spool: at a stop, and for the flows a reload removes, the unread
 * rest of every file that was deleted while the agent still had it open is
 * copied into spoolDirectory, because the descriptor is the only way left
 * to those bytes.  Each spool file keeps the original's offsets (a sparse
 * copy: its head, for the fingerprint, and the bytes from the committed
 * offset on; the rest is a hole), so the records read from it carry the
 * offsets they had, and it is fsync'd before the state file names it.
 * After the restart the flow reads it first (files_spool.c) and removes it
 * once every byte is acknowledged and saved.
 *
 * A spool file also describes itself, in FILE.desc beside it (the flow,
 * the original's identity, path and offsets, the acknowledged spans),
 * written once its data is synced: a stop killed, or unable to save the
 * state, before the state file named it leaves a file the next start
 * adopts instead of deleting.  A spool file without a valid description
 * (killed while copying) is removed, as one the state file no longer names
 * is: the description goes first when a spool file is delivered.
 *
 * Owns: the spool directory's bound (spoolMaxBytes) over one stop or
 * reload.  Files and the registry entries naming them are files/'s.
 */
#ifndef DISAGENT_SPOOL_H
#define DISAGENT_SPOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "base/util.h"

struct registry;
struct spool;

/* A spool in dir (copied) of at most max_bytes; 0: no spool.  New. */
struct spool	*spool_new(const char *dir, uint64_t max_bytes);
void		 spool_free(struct spool *);
const char	*spool_dir(const struct spool *);

struct reg_span;

/* What to copy: the rest of the file open as fd from offset from. */
struct spool_copy {
	const char	*flow;
	const char	*path;		/* the original's */
	const struct reg_span *acked;	/* borrowed: acknowledged past from */
	size_t		 nacked;
	uint64_t	 dev, ino;	/* the original's */
	int		 fd;		/* borrowed */
	uint32_t	 head;		/* its fingerprint's length */
	uint64_t	 from;		/* its committed offset */
	uint64_t	 size;		/* its size now */
	int		 delim;		/* recordDelimiter; -1: none */
};

/* What a copy kept. */
struct spool_kept {
	char		*file;		/* new; NULL when nothing was kept */
	struct stat	 st;		/* the spool file's */
	uint64_t	 end;		/* the original's bytes [from, end) are
					   in it (end == from: none) */
	uint32_t	 fp_crc;	/* its head, as a tailer sees it */
	uint32_t	 fp_len;
	const char	*why;		/* why end < size: "spoolMaxBytes",
					   a strerror text; NULL */
};

/*
 * Copy c's bytes [from, size) into a new spool file, fsync'd, cut at the
 * last record delimiter within the bound, or where the disk filled up.
 * 0 with *out filled (out->file NULL when nothing fit), or a negative
 * errno when no spool file could be made (out->why says why).
 */
int		 spool_write(struct spool *, const struct spool_copy *c,
		    struct spool_kept *out) WARN_UNUSED;
void		 spool_kept_cleanup(struct spool_kept *);

/*
 * fsync the spool directory if files were added to it, so they exist
 * before the state file that names them is saved.  0 or a negative errno.
 */
int		 spool_sync(struct spool *);

/*
 * Remove the spool files that no entry of reg names: written by a stop
 * whose state file was not saved, or delivered and dropped from the state
 * before the stop that could not remove them.  At start, before the flows.
 */
/* A spool file unnamed but described is adopted instead: its entry made in
 * reg (in place of the original's), as the stop would have saved it. */
void		 spool_sweep(const struct spool *, struct registry *);

/*
 * Before the state drops the entry of delivered spool file file: remove
 * its description (the directory synced), so that a crash before the file
 * itself goes does not adopt it again.  0 or a negative errno.
 */
int		 spool_forget(const char *file);

#endif
