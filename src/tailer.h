/*
 * One tracked file: its descriptor, identity (dev, inode, head fingerprint),
 * the read offset (always on a record boundary), the commit watermark, and
 * the line framing that turns bytes into records.  Plain synchronous reads of
 * regular files, bounded per call so one read never stalls the loop for long.
 *
 * The struct is visible so that flow.c can keep tailers in its lists; other
 * modules use the functions.
 */
#ifndef DISAGENT_TAILER_H
#define DISAGENT_TAILER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "framer.h"
#include "util.h"
#include "watermark.h"

/* One per tracked file, idle ones included: keep it small (no padding). */
struct tailer {
	uint64_t	 id;		/* unique in the process */
	char		*path;		/* last path it was seen at */
	int		 fd;		/* -1: parked (closed, see maxOpenFiles) */
	uint32_t	 fp_max;	/* headerBytesLength */
	uint64_t	 dev;
	uint64_t	 ino;
	uint32_t	 fp_crc;	/* crc32 of the first fp_len bytes */
	uint32_t	 fp_len;
	uint64_t	 read_off;	/* next byte to frame */
	uint64_t	 size;		/* size at the last fstat */
	uint64_t	 target;	/* --once: stop at this size */
	bool		 gone;		/* no longer at any matching path */
	bool		 stalled;	/* nothing to frame until it grows */
	bool		 seen;		/* found by the current scan */
	bool		 truncate_pending; /* after in-flight ranges settle */
	/* Its identity before the last in-place truncation, to recognise a
	 * copytruncate copy of it (R6). */
	uint32_t	 prev_fp_crc;
	uint32_t	 prev_fp_len;
	uint64_t	 prev_end;	/* bytes of it read before then */
	uint64_t	 gone_size;	/* size when last seen gone */
	uint64_t	 active_ms;	/* last time it had bytes to read */
	struct watermark wm;		/* committed = wm.committed */
	struct framer_state fs;		/* records across reads */
	struct tailer	*next;		/* flow's list */
};

/*
 * Open path (already stat'ed as st) and compute its fingerprint over up to
 * fp_max bytes.  The read offset and the committed offset start at offset.
 * Returns a new tailer or NULL with errno set (logged by the caller).
 */
struct tailer	*tailer_open(const char *path, const struct stat *st,
		    uint64_t offset, uint32_t fp_max);
/* The same without opening it: a parked tailer (fd -1, no fingerprint). */
struct tailer	*tailer_new_parked(const char *path, const struct stat *st,
		    uint64_t offset, uint32_t fp_max);
void		 tailer_free(struct tailer *);

/*
 * Free the watermark's ring once every range is committed: most tracked
 * files are idle, and each would otherwise keep the ring its busiest
 * moment grew.
 */
void		 tailer_trim(struct tailer *);

/* Close the descriptor of an idle tailer; it keeps its identity. */
void		 tailer_park(struct tailer *);
/*
 * Reopen a parked tailer at its path.  0; -ESTALE when the path now holds
 * another file (other inode, or the head no longer matches the
 * fingerprint); or a negative errno.
 */
int		 tailer_reopen(struct tailer *) WARN_UNUSED;

/*
 * crc32 of the first len bytes of fd into *crc; 0, or -1 when the file is
 * shorter than len or unreadable.
 */
int		 tailer_fingerprint(int fd, uint32_t len, uint32_t *crc);

/* Grow a short fingerprint as the file grows (up to fp_max). */
void		 tailer_refresh_fingerprint(struct tailer *);

/* Whether the first fp_len bytes changed (rewritten in place). */
bool		 tailer_head_changed(struct tailer *);

/*
 * fstat the descriptor and update size.  Returns true when there are bytes
 * after read_off.  A size below read_off means the file was truncated in
 * place (copytruncate); *truncated is set and the caller decides.
 */
bool		 tailer_poll(struct tailer *, bool *truncated);

/*
 * A read window shared by the tailers of a flow: bytes of one tailer from
 * offset off.  A read of short lines holds several batches, so the next
 * batch is framed from the same window instead of reading it again.  It is
 * as large as the largest read so far: the read size, or one record and its
 * delimiter after a line longer than that.
 */
struct readbuf {
	struct buf	 b;
	uint64_t	 owner;		/* tailer id, 0: empty */
	uint64_t	 off;
};

/* Drop what the window holds (the file was truncated or rewritten). */
void		 readbuf_forget(struct readbuf *);

/*
 * Read max bytes after read_off into the window (up to max_record + 1 when
 * they hold no whole line; none when the window already holds a whole line
 * at read_off) and hand them to the framer, which emits each complete
 * record through cb (and may refuse-stop when cb returns non-zero; the
 * record is then not taken and read_off stays before it).  Returns the bytes
 * consumed (>= 0), or -errno on a read error.
 */
long		 tailer_read(struct tailer *, struct framer *,
		    struct readbuf *, size_t max, size_t max_record,
		    framer_cb cb, void *arg);

/*
 * isMissLastRecordDelimiter: send the bytes after read_off (a last line
 * without delimiter) as a record.  0, or cb's refusal, or -errno.
 */
int		 tailer_read_last(struct tailer *, struct framer *,
		    struct readbuf *, size_t max_record, framer_cb cb,
		    void *arg);

#endif
