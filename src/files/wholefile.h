/*
 * Whole-file flows (isFileAppendable = false): files written once (CSV
 * exports, hourly batches) that are sent whole, then cleaned up.
 *
 * A matching file is pending until its size and mtime stayed the same for
 * maxFileCheckingMillis since it was first seen (or last changed); then it
 * is ready (an empty one is left alone under isIgnoreEmptyData).  Ready
 * files are read oldest mtime first (names break ties), at most
 * WHOLEFILE_READING at a time, each up to the size it had when it became
 * ready, its last record sent even without a delimiter.  Once
 * every record of a file is acknowledged its registry entry is marked
 * complete; once a save has written that mark (wholefile_saved), the file
 * at its path is checked -- same device, inode, size, mtime, first and last
 * bytes -- and deleted, moved into fileMoveToDir or renamed with
 * fileSuffix (cleanup.h), and only then is its entry dropped.  A crash at
 * any point resumes: a file half sent continues from its committed offset,
 * a file marked complete is cleaned up at the next start without sending
 * anything again.  A file that changed after it was declared ready is
 * never cleaned up: it is logged, pending again, and what it gained is
 * sent.  A cleanup that fails is logged with the path and the reason,
 * counted, shown by `disagent status` (the flow's last error) and retried
 * at every rescan; nothing is sent again because of it.
 *
 * Owned by files.c, which reports what scans find and when reading or
 * acknowledgements moved.  wholefile decides and files.c tracks: at each
 * of wholefile's turns files.c reports what its tailers did
 * (wholefile_progress, which says when one is delivered and to be
 * dropped) and asks for the next file to read (wholefile_next), tracks it
 * as a tailer and says how that went (wholefile_tracked).  wholefile never
 * calls into files.c.  One uv timer: readiness deadlines, and the work a
 * poke defers out of the caller's stack.
 */
#ifndef DISAGENT_WHOLEFILE_H
#define DISAGENT_WHOLEFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include <uv.h>

#define WHOLEFILE_READING	8	/* files read at once */

struct conf_flow;
struct metrics_flow;
struct registry;
struct wholefile;

/*
 * The whole-file state of flow fc (NULL when fc tails its files), with the
 * flow's complete entries of reg
 * (delivered files to clean up, from the state file or before a reload).
 * reg and m are borrowed and outlive it.  turn(arg) is files.c's part of
 * each turn: wholefile_progress for its tailers, then wholefile_next and
 * wholefile_tracked until it says no.  once: --once (no rescans; the
 * files seen at the first scan are still waited for, sent and cleaned
 * up).
 *
 * Every function below accepts a NULL wholefile and does nothing (files.c
 * calls them for every flow).
 */
struct wholefile *wholefile_new(uv_loop_t *, const struct conf_flow *fc,
		    struct registry *reg, struct metrics_flow *m, bool once,
		    void (*turn)(void *), void *arg);
/* No more work (stop, reload); state on disk is untouched. */
void		 wholefile_stop(struct wholefile *);
/* Free it; its timer closes asynchronously. */
void		 wholefile_free(struct wholefile *);

/* A scan found the matching regular file path (st). */
void		 wholefile_found(struct wholefile *, const char *path,
		    const struct stat *st);
/*
 * A scan ended; walked: it read at least one directory (otherwise what it
 * did not see says nothing).  Failed cleanups are tried again.
 */
void		 wholefile_scanned(struct wholefile *, bool walked);
/* A read or an acknowledgement moved: look at the files in progress. */
void		 wholefile_poke(struct wholefile *);
/* A save of the registry succeeded: complete marks may be durable now. */
void		 wholefile_saved(struct wholefile *);
/* Refresh the registry entries of delivered files (TTL). */
void		 wholefile_touch(struct wholefile *);
/*
 * Nothing left to do but wait for new files or rescans: no file pending,
 * ready, in progress or waiting for a save or a first cleanup attempt.
 */
bool		 wholefile_settled(const struct wholefile *);
/* The whole-file gauges of m. */
void		 wholefile_gauges(const struct wholefile *,
		    struct metrics_flow *m);

/* --- what files.c asks and reports at a turn ------------------------------ */

/* Where a tailer of a whole file has got to. */
struct wholefile_progress {
	uint64_t	 read_off;	/* read up to here */
	bool		 waits;		/* a record waits at its end */
	size_t		 pending;	/* ranges in flight */
};

/*
 * The tailer with id is at p (a tailer wholefile did not hand out is
 * ignored): whether every record of its file is now acknowledged, and
 * files.c is to drop the tailer.
 */
bool		 wholefile_progress(struct wholefile *, uint64_t id,
		    const struct wholefile_progress *p);
/* files.c no longer tracks the tailer with id: its file starts over. */
void		 wholefile_untracked(struct wholefile *, uint64_t id);

/* The file to read next, as wholefile_next hands it out. */
struct wholefile_next {
	const char	*path;		/* borrowed until wholefile_tracked */
	struct stat	 st;		/* as it is now */
	uint64_t	 offset;	/* where to read from */
};

/*
 * The oldest ready file, while fewer than WHOLEFILE_READING are read:
 * false when there is none.  files.c tracks it, up to st's size, then
 * calls wholefile_tracked before asking again.
 */
bool		 wholefile_next(struct wholefile *, struct wholefile_next *);
/* What became of it: tracked as the tailer id, or 0 and errno err. */
void		 wholefile_tracked(struct wholefile *, uint64_t id, int err);

/* --- pure, exposed for tests ------------------------------------------- */

enum wholefile_look {
	WHOLEFILE_WAIT,		/* unchanged, not quiet long enough yet */
	WHOLEFILE_CHANGED,	/* size or mtime moved: the wait restarts */
	WHOLEFILE_READY,	/* unchanged for quiet_ms: send it */
	WHOLEFILE_EMPTY,	/* ready, but empty and ignore_empty */
};

/*
 * A look at a pending file first seen (or last changed) at since_ms with
 * was_size and was_mtime, now size and mtime at now_ms.
 */
enum wholefile_look wholefile_look(uint64_t was_size, int64_t was_mtime,
		    uint64_t size, int64_t mtime, uint64_t since_ms,
		    uint64_t now_ms, uint64_t quiet_ms, bool ignore_empty);

/* The order ready files are read in: older mtime first, then path. */
int		 wholefile_order(int64_t mtime_a, const char *path_a,
		    int64_t mtime_b, const char *path_b);

#endif
