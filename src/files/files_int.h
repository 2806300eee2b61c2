/*
 * Inside files.c and the files_*.c beside it: the tracked set of a flow.
 * files.c owns it (identity, tracking, new and free); files_scan.c
 * reconciles it with the file system and moves its state; files_view.c
 * is what the flow asks of it; files_known.c what a restart must not send
 * again; files_gone.c finishes the files gone from their paths and
 * follows where their bytes went; files_fds.c keeps the open descriptors
 * within maxOpenFiles; files_whole.c tracks what wholefile.c hands out;
 * files_handover.c and files_spool.c use it too.  Nothing else includes
 * it.
 */
#ifndef DISAGENT_FILES_INT_H
#define DISAGENT_FILES_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include <uv.h>

#include "base/closer.h"
#include "base/util.h"
#include "tail/copies.h"
#include "files/files.h"
#include "tail/tailer.h"

struct conf;
struct conf_flow;
struct framer;
struct metrics_flow;
struct openfail;
struct ownfiles;
struct reaper;
struct reg_entry;
struct registry;
struct successors;
struct watcher;
struct wholefile;

/*
 * What a tracked file's past says, out of line (most files have none):
 * its head before the last in-place truncation, to recognise a
 * copytruncate copy of it (R6; headerBytesLength <= 65536), and its size
 * at the last scan while it is gone.
 */
struct tracked_past {
	uint64_t	 prev_end;	/* bytes of it read before then */
	uint64_t	 scan_size;	/* size at the last scan, while gone */
	uint64_t	 trunc_from;	/* size last seen before a truncation
					   noticed, restart pending */
	uint32_t	 prev_fp_crc;
	uint32_t	 prev_fp_len;
};

/* What the lifecycle knows of one tailer; one per file, so packed: 32
 * bytes. */
struct tracked {
	struct tailer	*t;
	struct tracked	*next;
	struct tracked_past *past;	/* NULL: no truncation, not gone */
	bool		 gone : 1;	/* no longer at any matching path */
	bool		 seen : 1;	/* found by the current scan */
	bool		 truncate_pending : 1; /* after in-flight ranges settle */
	bool		 vanished : 1;	/* parked, and its path lost it */
	bool		 spans_saved : 1; /* its entry has acknowledged spans */
	bool		 spool : 1;	/* a spool file (files_spool.c) */
};

/* k's past, made on first use (scan_size UINT64_MAX: not scanned gone). */
struct tracked_past *files_past(struct tracked *k);
/* Its size at the last scan while gone, or UINT64_MAX. */
static inline uint64_t
files_scan_size(const struct tracked *k)
{
	return k->past != NULL ? k->past->scan_size : UINT64_MAX;
}

/*
 * Where the tracked set is in its life, changed only in set_state()
 * (files_scan.c):
 *
 *   NEW --files_start--> FIRST --a scan read a directory--> RUNNING
 *                          \--none read yet--> UNWALKED --/
 *   (any) --files_stop--> STOPPED
 *
 * Until a scan has read a directory (NEW, FIRST, UNWALKED), nothing the
 * registry knows can be called gone: a mount not up yet at start would
 * make every file of the flow "deleted while stopped".
 */
enum files_state {
	FILES_NEW,		/* before files_start */
	FILES_FIRST,		/* the first scan is under way */
	FILES_UNWALKED,		/* scanned, no directory read yet */
	FILES_RUNNING,
	FILES_STOPPED,		/* no more scans or events */
};

struct files {
	uv_loop_t	*loop;
	const struct conf *conf;	/* fc's */
	const struct conf_flow *fc;
	struct registry	*reg;
	const struct framer *fr;
	struct metrics_flow *m;
	struct watcher	*watcher;
	uv_timer_t	 rescan_timer;
	struct closer	 closer;	/* the timer being closed */
	struct tracked	*list;
	struct tracked	*cursor;	/* round-robin position */
	struct keymap	 byid;		/* tailer id -> tracked */
	/* inode -> a tracked file with it: every tracked inode is here, the
	 * newest such file when two share it (files_find_ino). */
	struct keymap	 byino;
	size_t		 ntracked;
	size_t		 nopen;		/* tailers with a descriptor */
	size_t		 max_open;	/* maxOpenFiles, within RLIMIT_NOFILE */
	struct copies_wait waiting;	/* new files that may be copies */
	struct successors *succ;	/* where gone files' bytes went */
	struct orphan	*orphans;	/* this scan's files gone from view */
	size_t		 norphans;
	struct openfail	*fails;		/* matching files we cannot open */
	struct wholefile *wf;		/* isFileAppendable = false, or NULL */
	struct reaper	*reap;		/* deleteAfterDeliverySeconds or NULL */
	struct ownfiles	*own;		/* the agent's files, never tracked */
	struct spool_done *spool_done;	/* delivered spool files, removed
					   once a save without their
					   entries is on disk */
	size_t		 nspool_done;
	size_t		 nspool;	/* spool files tracked */
	uint64_t	 grew;		/* refreshes that found a change */
	uint64_t	 ev_since;	/* uv_now of the events window's start */
	size_t		 ev_count;	/* writes to tracked files in it */
	/* Coalesced passes (files_scan.c): how many, when the last began,
	 * the time since the one before (or since the pause), and the
	 * period the reader asked for (files_pace; 0: readCoalesceMillis). */
	uint64_t	 passes;
	uint64_t	 pass_at;
	uint64_t	 pass_gap;
	uint64_t	 pace_ms;
	bool		 pass_timer;	/* the rescan timer is the next pass */
	/* Scans (files_scan.c): the one under way began on the rescan
	 * timer, when grew was scan_grew; within scan() still; another is
	 * asked for once it is over. */
	bool		 scan_timer;
	bool		 scan_inline;
	bool		 scan_again;
	uint64_t	 scan_grew;
	enum files_state state;
	bool		 once;
	bool		 warned_fds;
	bool		 warned_dir;
	bool		 plans;		/* a tailer may have a skip plan */
	/* The restart's read holds files (registry_held): all of them
	 * (files_start waits), or those in held, untracked until
	 * files_release; its scan tracks them as a first scan would. */
	bool		 held_whole;
	bool		 holding;	/* until files_release */
	bool		 release_scan;	/* the next scan is the release's */
	bool		 release_scanning; /* the scan under way is */
	struct files_held *held;
	size_t		 nheld;
	struct reg_span	*scratch;	/* files_publish's */
	size_t		 nscratch;
	files_cb	 readable;
	void		*arg;
};

struct files_held {
	uint64_t	 dev, ino;
};

struct spool_done {
	char		*file;
	uint64_t	 change;	/* registry_changes() without its entry */
};

struct orphan {
	uint64_t	 dev, ino, off, size;
	uint32_t	 crc, len;
	char		*path;
	bool		 reused;	/* its inode holds another file now */
};

/* Nothing left to read in t: stalled on a partial line, or at its end. */
static inline bool
read_to_end(const struct tailer *t)
{
	return tailer_stalled(t) || !tailer_readable(t);
}

/* files.c */
enum track_result {
	TRACKED,
	TRACK_LATER,		/* a compressed file still being written */
	TRACK_FAILED,		/* reported (openfail) */
	TRACK_UNREADABLE,	/* reported, its bytes counted lost */
};
/* files_track.c */
/*
 * Track path (stat'ed as st) as a tailer from offset; its id, or 0 with
 * errno set (files_track.c has the whole contract).
 */
uint64_t files_track(struct files *, const char *, const struct stat *,
	    uint64_t, bool);
enum track_result files_track_at(struct files *, const char *,
	    const struct stat *, uint64_t, bool);
/* Whether path (st) is one of the agent's own files, never tracked: said
 * once per path. */
bool	files_own(struct files *, const char *path, const struct stat *st);
/* Whether an earlier flow of the same stream ships path (a new file to
 * this flow): said once per path, naming both flows. */
bool	files_shipped_before(struct files *, const char *path);
/* Read k again from 0 (why: a truncation); before: the size last seen
 * before it, whose bytes past the read offset are counted lost. */
void	files_restart(struct files *, struct tracked *, const char *why,
	    uint64_t before);
void	files_unlink(struct files *, struct tracked **, struct tracked *);
struct tracked *files_link(struct files *, struct tailer *, bool);
/* The newest tracked file that is (dev, ino), or NULL. */
struct tracked *files_find_ino(struct files *, uint64_t, uint64_t);
bool	files_tracks(struct files *, uint64_t, uint64_t);
/* The two maps of fs, empty (files_life.c). */
void	files_index_init(struct files *);

/* files_scan.c */
/* The watcher's events: a write to a tracked file is read at once,
 * anything else rescans soon. */
void	files_fs_event(void *, const char *, const char *, int);

/* files_known.c */
/* The restart's plan for t from its entry, when t reads on from the
 * entry's offset in that very file (same: known to be it). */
void	files_attach_plan(struct files *, struct tailer *, const char *,
	    const struct stat *, uint64_t, bool);
/* t's acknowledged spans past its committed offset (its watermark's and
 * its plan's) into fs->scratch, merged; how many. */
size_t	files_collect_spans(struct files *, struct tailer *);

/* files_spool.c */
void	files_spool_resume(struct files *);
void	files_spool_finished(struct files *, struct tracked *);
void	files_spool_saved(struct files *);
void	files_spool_free(struct files *);

/* files_gone.c */
void	files_add_orphan(struct files *, const struct reg_entry *);
void	files_drop_finished(struct files *);
void	files_follow_gone(struct files *, bool);

/* files_whole.c: wholefile's turn (wholefile_new's turn callback). */
void	files_whole_turn(void *);

/* files_fds.c */
void	files_balance_fds(struct files *);
size_t	files_open_budget(const struct conf *, const struct conf_flow *);

#endif
