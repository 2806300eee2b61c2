/*
 * Private to tail/tailer.c and tail/tailread.c: struct tailer itself
 * (opaque to everyone else, tailer.h) and the framing state it lends a
 * read.
 */
#ifndef TAIL_TAILER_INT_H
#define TAIL_TAILER_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "records/framer.h"
#include "tail/tailer.h"
#include "tail/watermark.h"

struct skipplan;
struct zsource;

/*
 * What few files need, out of line: a restarted file's epoch, a compressed
 * file's decompressor, a restart's skip plan, and the framing state while
 * it is not idle (a header to skip, a multi-line record pending, the tail
 * of a cut line being discarded).
 */
/* A held record's bytes and its range (TAILER_HELD_DONE: done). */
struct tailer_held {
	uint64_t	 range;
	uint64_t	 start;
	uint64_t	 end;
};

struct tailer_rare {
	uint64_t	 epoch;		/* restarts from 0 so far */
	struct zsource	*z;		/* a compressed file: read through it */
	struct skipplan	*plan;		/* what a restart skips, or NULL */
	struct tailer_held *held;	/* records held back (tailer_note_held) */
	uint32_t	 nheld;
	uint32_t	 capheld;
	bool		 framing;	/* fs is in use (else idle) */
	struct framer_state fs;		/* records across reads */
};

/* One per tracked file, idle ones included: keep it small. */
struct tailer {
	uint64_t	 id;		/* unique in the process */
	char		*path;		/* last path it was seen at */
	uint64_t	 dev;
	uint64_t	 ino;
	uint64_t	 read_off;	/* next byte to frame */
	uint64_t	 size;		/* size at the last fstat */
	uint64_t	 target;	/* --once: stop at this size (or MAX) */
	uint64_t	 active_ms;	/* last time it had bytes to read */
	struct watermark wm;		/* committed = wm.committed */
	struct tailer_rare *rare;	/* NULL for nearly every file */
	int		 fd;		/* -1: parked (closed, see maxOpenFiles) */
	uint32_t	 fp_crc;	/* crc32 of the first fp_len bytes */
	uint32_t	 fp_max : 30;	/* headerBytesLength */
	bool		 stalled : 1;	/* nothing to frame until it grows */
	bool		 warned_bad : 1; /* its malformed lines were warned of */
	uint32_t	 fp_len;
};

/* The epoch of a tailer without a rare part, and the idle framing state. */
#define EPOCH(t)	((t)->rare != NULL ? (t)->rare->epoch : 0)
#define ZSRC(t)		((t)->rare != NULL ? (t)->rare->z : NULL)
#define PLAN(t)		((t)->rare != NULL ? (t)->rare->plan : NULL)

/*
 * The framing state to feed: the rare part's, or *tmp, idle, for the
 * nearly every file that has none.  tailer_fs_put keeps a state that is
 * no longer idle and lets go of one that is.
 */
struct framer_state *tailer_fs_get(struct tailer *, struct framer_state *tmp);
void	tailer_fs_put(struct tailer *, struct framer_state *,
	    struct framer_state *tmp);

#endif
