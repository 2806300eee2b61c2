/*
 * The lifecycle of every tracked file of one flow: what the watcher's scans
 * find becomes a tailer (resumed from the registry, or from 0 or the end),
 * renames and rotations keep it (also while the agent was stopped),
 * copytruncate and inode reuse restart it at 0, a file gone from its path
 * is read to its end and closed once every byte is committed, and open
 * descriptors stay within maxOpenFiles.  The periodic rescan is the truth;
 * inotify events only cut latency (R8).
 *
 * Owns: the tailers, the watcher and the rescan timer.  The flow reads the
 * tailers it hands out (files_next_readable) and reports acknowledgements
 * back (files_ack); the registry gets every committed offset from here.
 */
#ifndef DISAGENT_FILES_H
#define DISAGENT_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include <uv.h>

#include "base/util.h"

struct conf;
struct conf_flow;
struct framer;
struct metrics_flow;
struct registry;
struct spool;
struct tailer;
struct files;
struct files_handover;

/* There may be bytes to read now (a scan or an event found growth). */
typedef void	(*files_cb)(void *arg);

/*
 * The files of flow fc.  fr (the flow's framing) and m (its counters) are
 * borrowed and outlive the files; once: --once (no watches, no rescans,
 * each file read up to its size at the first scan).  NULL with a message
 * in err when the pattern cannot work.
 */
struct files	*files_new(uv_loop_t *, const struct conf *,
		    const struct conf_flow *fc, struct registry *,
		    const struct framer *fr, struct metrics_flow *m, bool once,
		    files_cb readable, void *arg, char *err, size_t errlen);
/*
 * First scan; then watches and the rescan timer (daemon).  While the
 * restart's read after a crash holds files (registry_held), they are not
 * tracked -- all of the flow's, when it holds the flow wholly: then the
 * start waits -- until files_release.
 */
void		 files_start(struct files *);
/* The restart's read is over: the held files are tracked now, from their
 * entries (with the records it found) or as a first scan would. */
void		 files_release(struct files *);
/* No more scans or events (stop, reload). */
void		 files_stop(struct files *);
/* Free every tailer; the handles close asynchronously. */
void		 files_free(struct files *);

/*
 * The next tailer with bytes to read, round robin: open (parked files are
 * reopened while maxOpenFiles allows), not stalled, not waiting for a
 * truncation to settle, and with fewer than hold ranges in flight (what a
 * crash can resend stays bounded per file, R3).  NULL when none.
 */
struct tailer	*files_next_readable(struct files *, size_t hold);
/*
 * Whether a tailer has bytes to read that only its hold ranges in flight
 * keep back: files_next_readable would hand it out once one is
 * acknowledged.
 */
bool		 files_held(const struct files *, size_t hold);

/*
 * After a read of t: n bytes consumed, or -errno (logged, retried at the
 * next growth or rescan); refused: the flow stopped taking records.  A
 * read that consumed nothing without a refusal found only a partial line:
 * t waits for growth.  committed: the read moved the committed offset.
 */
void		 files_read_done(struct files *, struct tailer *, long n,
		    bool refused, bool committed);

/* Range of the file with id acknowledged: commit and trim. */
void		 files_ack(struct files *, uint64_t id, uint64_t range);
/* The borrowed tailer with id, or NULL when it is no longer tracked. */
struct tailer	*files_find(struct files *, uint64_t id);
/* Save t's committed offset (and fingerprint) in the registry. */
void		 files_commit(struct files *, struct tailer *);

/*
 * Coalesced reads (readCoalesceMillis, files_scan.c): the number of the
 * last pass made with the watches paused (0: none yet, or the watches
 * are on) and the ms of writes it found (since the pass before, or since
 * the pause).  A reader
 * that would rather take them at a longer period asks with files_pace
 * (ms, or 0 for readCoalesceMillis; never shorter than it): the next pass
 * comes that long after the last, and the period falls back to
 * readCoalesceMillis when the watches are back.
 */
uint64_t	 files_passes(const struct files *, uint64_t *gap_ms);
void		 files_pace(struct files *, uint64_t ms);

/* Call fn for every tracked file's tailer, open or not (a view: fn must
 * change nothing). */
void		 files_each(const struct files *,
		    void (*fn)(const struct tailer *, void *), void *arg);

/* Call fn for every open tailer until it returns false. */
void		 files_each_open(struct files *,
		    bool (*fn)(struct tailer *, void *), void *arg);

/*
 * Whether nothing is left to read: no open tailer is readable (and not
 * stalled) and none waits for quiet (miss_last: isMissLastRecordDelimiter).
 */
bool		 files_all_read(const struct files *, bool miss_last);

/*
 * A save of the registry succeeded: whole files whose complete mark it
 * wrote can be cleaned up now (wholefile.h).
 */
void		 files_saved(struct files *);

/* --- transitions: a reload, a stop (files_handover.c, files_spool.c) --- */

/*
 * A reload changed the flow: its open descriptors, each with its path and
 * committed offset, for the flow that succeeds it (new; fs's tailers are
 * left parked, to be freed).  The flow must be cancelled: nothing moves
 * its offsets any more.
 */
struct files_handover *files_hand_over(struct files *);
size_t		 files_handover_count(const struct files_handover *);
void		 files_handover_free(struct files_handover *);
/*
 * Before files_start: track the handed files this flow reads (those its
 * pattern matches; deleted, rotated-away and spool files, read to their
 * end) on their descriptors, from their committed offsets; close the rest.
 * Steals h.  Returns how many it took.
 */
size_t		 files_adopt(struct files *, struct files_handover *h);

/*
 * A stop, or a reload that removed the flow: copy the unread rest (from
 * the committed offset) of every open file that was deleted into the
 * spool, and let its spool file's registry entry take the original's.
 * What does not fit is logged and counted in bytes_lost.  The flow must be
 * cancelled, and the state saved after this (spool_sync first).
 */
void		 files_spool(struct files *, struct spool *);

/* Refresh the registry entry of every tracked file (TTL). */
void		 files_touch(struct files *);

/* Acknowledged bytes of the file with id file (the flow's batches). */
struct files_acked {
	uint64_t	 file;
	uint64_t	 start;
	uint64_t	 end;
};

/*
 * Before a save: write into each tracked file's registry entry the bytes
 * past its committed offset known to be delivered, so that a restart
 * sends none of them: the acknowledged ranges behind one that is not
 * (the watermark), the records acknowledged in batches not done yet
 * (acked[0..n-1], sorted by file, from the flow), and what the file's skip
 * plan has not reached yet.
 */
void		 files_publish(struct files *, const struct files_acked *acked,
		    size_t n);
/*
 * Whether a tailer still has records the restart's read found and it has
 * not read past yet (until then the sequence numbers the restart read
 * from must stay in the state file).
 */
bool		 files_restart_pending(struct files *);
/*
 * A batch was handed back undelivered (cancelled) with records of these
 * files acknowledged (acked[0..n-1], sorted by file): their bytes go into
 * the files' skip plans, so a save still has them, and a successor (a
 * reload) or a spool file takes them along.
 */
void		 files_keep_acked(struct files *, const struct files_acked *acked,
		    size_t n);
/* The gauges of m: bytes_behind and files_tracked. */
void		 files_gauges(const struct files *, struct metrics_flow *m);

#endif
