/*
 * One tracked file, as read: its descriptor, identity (dev, inode, head
 * fingerprint), the read offset (always on a record boundary), the commit
 * watermark of its in-flight ranges, and the framing state that turns its
 * bytes into records.  Plain synchronous reads of regular files, bounded
 * per call so one read never stalls the loop for long.
 *
 * Opaque: files.c decides its lifecycle (tracking, rotation, parking),
 * flow.c reads it and records its in-flight ranges, both through the
 * functions below.
 */
#ifndef DISAGENT_TAILER_H
#define DISAGENT_TAILER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "base/util.h"
#include "records/framer.h"

struct reg_span;
struct skipplan;
struct tailer;

/*
 * Open path (already stat'ed as st) and compute its fingerprint over up to
 * fp_max bytes.  The read offset and the committed offset start at offset;
 * the framing state is set up for fr.  Returns a new tailer or NULL with
 * errno set (logged by the caller).
 */
struct tailer	*tailer_open(const char *path, const struct stat *st,
		    uint64_t offset, uint32_t fp_max, const struct framer *fr);
/* The same on fd, already open on path (steals fd). */
struct tailer	*tailer_open_fd(int fd, const char *path,
		    const struct stat *st, uint64_t offset, uint32_t fp_max,
		    const struct framer *fr);
/* The same without opening it: a parked tailer (no fd, no fingerprint). */
struct tailer	*tailer_new_parked(const char *path, const struct stat *st,
		    uint64_t offset, uint32_t fp_max, const struct framer *fr);
/*
 * The same for a compressed file (gzip, zstd), read as its decompressed
 * bytes: offsets, size and fingerprint are decompressed ones.  It is read
 * once at open to learn its size.  NULL with errno EAGAIN when the stream
 * is not complete yet (being compressed), EPROTONOSUPPORT for a format the
 * agent cannot read (xz, bzip2), EBADMSG when it is corrupt.
 */
struct tailer	*tailer_open_compressed(const char *path,
		    const struct stat *st, uint64_t offset, uint32_t fp_max,
		    const struct framer *fr);
void		 tailer_free(struct tailer *);
/* Whether it reads a compressed file (never parked, never grows). */
bool		 tailer_compressed(const struct tailer *);

/* --- identity ----------------------------------------------------------- */

/* Unique in the process, never reused. */
uint64_t	 tailer_id(const struct tailer *);
/* The last path it was seen at (borrowed, valid until the next rename):
 * a shared text (util.h rstr_hold), so the registry holds the same copy. */
const char	*tailer_path(const struct tailer *);
void		 tailer_rename(struct tailer *, const char *path);
uint64_t	 tailer_dev(const struct tailer *);
uint64_t	 tailer_ino(const struct tailer *);
bool		 tailer_is(const struct tailer *, uint64_t dev, uint64_t ino);
/* The head fingerprint: crc32 of the first *len bytes. */
void		 tailer_head(const struct tailer *, uint32_t *crc,
		    uint32_t *len);
/* Grow a short fingerprint as the file grows (up to fp_max). */
void		 tailer_refresh_fingerprint(struct tailer *);
/* Whether the first fp_len bytes changed (rewritten in place). */
bool		 tailer_head_changed(struct tailer *);

/*
 * crc32 of the first len bytes of fd into *crc; 0, or -1 when the file is
 * shorter than len or unreadable.
 */
int		 tailer_fingerprint(int fd, uint32_t len, uint32_t *crc);
/* The same for the len bytes at off (a tail: cleanup.c). */
int		 tailer_fingerprint_at(int fd, uint64_t off, uint32_t len,
		    uint32_t *crc);
/* The same for the file at path, decompressed when its name and magic
 * say it is compressed. */
int		 tailer_head_crc(const char *path, uint32_t len,
		    uint32_t *crc);

/* --- descriptor --------------------------------------------------------- */

bool		 tailer_is_open(const struct tailer *);
/*
 * Hand t's descriptor out (a reload gives it to the flow that succeeds
 * t's): the caller owns it, t is left parked.  -1 when t has none, or
 * reads a compressed file (whose reads go through its decompressor).
 */
int		 tailer_take_fd(struct tailer *) WARN_UNUSED;
/* Its descriptor, borrowed (-1 while parked): the spool copies through
 * it what only it still reaches. */
int		 tailer_fd(const struct tailer *);
/* Close the descriptor of an idle tailer; it keeps its identity. */
void		 tailer_park(struct tailer *);
/*
 * Reopen a parked tailer at its path (its stall ends).  0; -ESTALE when
 * the path now holds another file (other inode, or the head no longer
 * matches the fingerprint); or a negative errno.
 */
int		 tailer_reopen(struct tailer *) WARN_UNUSED;
/* The byte before offset, read through the descriptor; -1 if none. */
int		 tailer_byte_before(const struct tailer *, uint64_t offset);
/*
 * The read offset is inside a line whose head was sent before a stop:
 * skip to the line's end (the framer discards up to the delimiter).
 */
void		 tailer_skip_line(struct tailer *);

/* --- offsets and growth ------------------------------------------------- */

/* Size at the last fstat (or stat, while parked). */
uint64_t	 tailer_size(const struct tailer *);
/* A parked tailer's size from a scan's stat. */
void		 tailer_set_size(struct tailer *, uint64_t);
/* The next byte to frame. */
uint64_t	 tailer_read_off(const struct tailer *);
/* The end of its acknowledged prefix (what the registry stores). */
uint64_t	 tailer_committed(const struct tailer *);
/* --once: read no further than size (by default there is no limit). */
void		 tailer_set_target(struct tailer *, uint64_t size);
/* Bytes between the read offset and the size (or the --once target). */
bool		 tailer_readable(const struct tailer *);

/*
 * fstat the descriptor and update the size (a change of size ends a stall
 * and counts as activity).  Returns true when there are bytes after the
 * read offset.  A size below the read offset means the file was truncated
 * in place (copytruncate): *truncated is set and the caller decides.
 */
bool		 tailer_poll(struct tailer *, bool *truncated);

/* Nothing more to frame until the file grows (a partial last line). */
bool		 tailer_stalled(const struct tailer *);
void		 tailer_stall(struct tailer *);
/* mono_ms() of its last growth (or of the last read that found bytes). */
uint64_t	 tailer_active_ms(const struct tailer *);

/*
 * The file was truncated or rewritten in place: forget its ranges, the
 * framing state and the fingerprint, and read it again from 0 (committed
 * 0).  Read windows holding its old bytes become invalid.
 */
void		 tailer_restart(struct tailer *, const struct framer *);

/* --- in-flight ranges (the commit watermark) --------------------------- */

/* A new in-flight range ending at end; its id for tailer_ack. */
uint64_t	 tailer_push(struct tailer *, uint64_t end);
/* Move the end of range id (the newest) to end. */
void		 tailer_extend(struct tailer *, uint64_t id, uint64_t end);
/* Acknowledge range id; true when the committed offset moved. */
bool		 tailer_ack(struct tailer *, uint64_t id);
/*
 * Bytes up to end are done without a record (the skipped tail of a
 * truncated line, a record the processing chain dropped): true when the
 * committed offset moved.
 */
bool		 tailer_skip_to(struct tailer *, uint64_t end);
/* Ranges pushed and not yet committed. */
size_t		 tailer_pending(const struct tailer *);
/* The id of the newest range (UINT64_MAX: none): a batch extends a range
 * only while it is the newest. */
uint64_t	 tailer_last_range(const struct tailer *);
/*
 * The bytes up to end were delivered before a restart (a record its skip
 * plan skips): done, without a record (watermark.h, wm_done_to); true
 * when the committed offset moved.
 */
bool		 tailer_done_to(struct tailer *, uint64_t end);
/*
 * The acknowledged ranges past the committed offset (wm_spans), then the
 * held records acknowledged (tailer_note_held): not sorted.
 */
size_t		 tailer_spans(const struct tailer *, struct reg_span *out,
		    size_t max);
/*
 * A container record held back (records/framer_ctr.c: its watermark end
 * is before its bytes, [start, end)) went in range id, or was done
 * without one (TAILER_HELD_DONE: skipped as delivered, or by the chain):
 * once range id is acknowledged, its bytes are among tailer_spans until
 * the committed offset passes them, so that a save keeps them and a
 * restart does not send the record again.  At most TAILER_MAX_HELD are
 * kept (the rest are sent again after a restart, as before).
 */
#define TAILER_HELD_DONE	UINT64_MAX
#define TAILER_MAX_HELD		8192
void		 tailer_note_held(struct tailer *, uint64_t id,
		    uint64_t start, uint64_t end);
/* How many held records tailer_spans may add. */
size_t		 tailer_nheld(const struct tailer *);

/* --- what a restart skips (skipplan.h) -------------------------------- */

/* The plan (steals; NULL: none), replacing any other. */
void		 tailer_set_plan(struct tailer *, struct skipplan *);
/* The plan, borrowed, or NULL (nearly always). */
struct skipplan	*tailer_plan(const struct tailer *);
/* Free the plan once nothing at or after off is left in it. */
void		 tailer_plan_passed(struct tailer *, uint64_t off);
/* The plan, taken (new; NULL: none). */
struct skipplan	*tailer_take_plan(struct tailer *);
/* Heap bytes it holds besides itself: the ring and the framing state. */
size_t		 tailer_memory(const struct tailer *);
/*
 * Free the watermark's ring once every range is committed: most tracked
 * files are idle, and each would otherwise keep the ring its busiest
 * moment grew.
 */
void		 tailer_trim(struct tailer *);

/* --- reading ------------------------------------------------------------ */

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
	uint64_t	 epoch;		/* the owner's epoch (restarts) */
	uint64_t	 off;
};

/* An empty window; its memory is released by readbuf_cleanup. */
void		 readbuf_init(struct readbuf *);
void		 readbuf_cleanup(struct readbuf *);
/* Drop what the window holds. */
void		 readbuf_forget(struct readbuf *);

/* What one read did (besides the records it handed to the callback). */
struct tailer_read {
	uint64_t	 truncated;	/* records cut to max_record */
	uint64_t	 malformed;	/* container lines of no format */
	uint64_t	 joined;	/* records joined from partial lines */
	bool		 committed;	/* the committed offset moved: the tail
					   of a cut line was skipped (R10) */
};

/*
 * Read max bytes after read_off into the window (up to max_record + 1 when
 * they hold no whole line; none when the window already holds a whole line
 * at read_off) and hand them to the framer, which emits each complete
 * record through cb (and may refuse-stop when cb returns non-zero; the
 * record is then not taken and read_off stays before it).  Returns the bytes
 * consumed (>= 0), or -errno on a read error; *out says more.
 */
long		 tailer_read(struct tailer *, struct framer *,
		    struct readbuf *, size_t max, size_t max_record,
		    framer_cb cb, void *arg, struct tailer_read *out);

/*
 * Whether a record waits for the file to be quiet: a pending multi-line
 * record, or (miss_last) a last line without delimiter.  Never while whole
 * lines wait to be read (the flow holding the file back): they may belong
 * to that record.
 */
bool		 tailer_waits_for_quiet(const struct tailer *, bool miss_last);

/* When what waits for quiet is sent. */
struct tailer_quiet {
	bool		 miss_last;	/* isMissLastRecordDelimiter */
	uint64_t	 last_ms;	/* maxFileCheckingMillis */
	uint64_t	 flush_ms;	/* multiLineFlushMillis */
};

/*
 * Flush what waits for quiet once the file was quiet long enough (now 0:
 * at once, as --once does at the end of the data): the last line without
 * delimiter, then the pending multi-line record, unless whole lines wait to
 * be read.  0, or cb's refusal, or -errno.
 */
int		 tailer_flush_quiet(struct tailer *, struct framer *,
		    struct readbuf *, size_t max_record, uint64_t now,
		    const struct tailer_quiet *, framer_cb cb, void *arg);

#endif
