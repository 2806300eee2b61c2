/*
 * Committed offsets per tracked file, and the state file that keeps them
 * across restarts.  Only committed (acknowledged) offsets are ever stored.
 * Saved atomically: write state.tmp, fsync, keep the previous file as .bak,
 * rename over, fsync the directory.  A corrupt or truncated file is detected
 * at load; the .bak copy is used and the event logged.  The file is JSON
 * Lines (statefile.c); jansson stays in the registry's files.
 */
#ifndef DISAGENT_REGISTRY_H
#define DISAGENT_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "base/util.h"

/* Bytes [start, end) of a file. */
struct reg_span {
	uint64_t	 start;
	uint64_t	 end;
};

/*
 * A record of the file that the restart's read found in the stream (agent/
 * dedupe.c): it starts at off, and keyid_data of its data is hash.  Not
 * saved: the restart hands it to the file's tailer.
 */
struct reg_found {
	uint64_t	 off;
	uint64_t	 hash;
	uint32_t	 len;
};

/* Identity of a file: (dev, ino) + crc32 of its first fp_len bytes. */
struct reg_entry {
	char		*flow;		/* the registry's, shared by its entries */
	uint64_t	 dev;
	uint64_t	 ino;
	uint32_t	 fp_crc;
	uint32_t	 fp_len;
	char		*path;		/* last known path: a shared text
					   (util.h rstr), maybe its tailer's */
	uint64_t	 offset;	/* committed offset */
	uint64_t	 size;		/* its size at the last change (0 or
					   <= offset: nothing known after) */
	int64_t		 updated;	/* wall seconds of last change */
	struct reg_rare	*rare;		/* owned; NULL for nearly every entry */
};

/*
 * What few entries hold, out of line: what is known delivered past the
 * offset (the acknowledged bytes, sorted, disjoint, each ending after the
 * offset: saved, a restart sends none of them; and the records the
 * restart's read found, by off: not saved), a whole file's completion, a
 * journal flow's cursor, a spool file.  Changed only through the
 * registry, which frees it once it holds nothing.
 */
struct reg_rare {
	struct reg_span	*acked;
	uint32_t	 nacked;
	uint32_t	 nfound;
	struct reg_found *found;
	struct reg_done	*done;		/* NULL unless complete */
	char		*cursor;	/* a journal flow's entry (dev and
					   ino 0): the sd-journal cursor of
					   its last entry committed; NULL for
					   a file */
	struct reg_spool *spool;	/* NULL unless a spool file */
};

static inline uint32_t
reg_nacked(const struct reg_entry *e)
{
	return e->rare != NULL ? e->rare->nacked : 0;
}

static inline const struct reg_span *
reg_acked(const struct reg_entry *e)
{
	return e->rare != NULL ? e->rare->acked : NULL;
}

static inline const struct reg_done *
reg_done(const struct reg_entry *e)
{
	return e->rare != NULL ? e->rare->done : NULL;
}

static inline const char *
reg_cursor(const struct reg_entry *e)
{
	return e->rare != NULL ? e->rare->cursor : NULL;
}

static inline const struct reg_spool *
reg_spool(const struct reg_entry *e)
{
	return e->rare != NULL ? e->rare->spool : NULL;
}

static inline uint32_t
reg_nfound(const struct reg_entry *e)
{
	return e->rare != NULL ? e->rare->nfound : 0;
}

/*
 * At most this many acknowledged spans are kept per file (the nearest).
 * The records a file has in flight bound them (maxInFlightRequests + 1
 * batches, each split by its throttled records): 2,500 at the defaults.
 */
#define REG_MAX_SPANS	8192

/* The last sequence number seen acknowledged in one partition. */
struct reg_seq {
	int32_t		 part;		/* partition number */
	int64_t		 last;		/* -1: none yet (empty partition) */
};

/* The partitions of one stream ("NAME", or "id:ID" for a streamId). */
struct reg_stream {
	char		*name;		/* owned */
	struct reg_seq	*seq;		/* owned, by part */
	size_t		 n;
};

/*
 * How the run that wrote the state file ended, in its header: a clean
 * stop (nothing it sent can have landed unacknowledged), or not (a crash:
 * anything sent after the last save may have landed, up to land_by_ms),
 * and, per stream, where the records the entries do not account for begin.
 */
struct reg_run {
	bool		 clean;
	int64_t		 saved_ms;	/* wall ms of the save */
	int64_t		 land_by_ms;	/* no request lands later */
	int64_t		 started_ms;	/* wall ms: no request of the run
					   (nor of a crashed one before it
					   whose read it had not finished)
					   went out earlier; 0: unknown */
	struct reg_stream *streams;	/* owned */
	size_t		 nstreams;
};

/* A run saved at saved_ms (wall) whose requests land by land_by_ms, with
 * no stream yet; clean: a clean stop, unless reg_run_not_clean(). */
struct reg_run	*reg_run_new(int64_t saved_ms, int64_t land_by_ms, bool clean);
/* Something of the run may be resent or may have landed unseen. */
void		 reg_run_not_clean(struct reg_run *);
/* Since when the run's requests went out (wall ms; 0: unknown). */
void		 reg_run_set_started(struct reg_run *, int64_t started_ms);
/* Free run and everything it owns (NULL-safe). */
void		 reg_run_free(struct reg_run *);
/* The stream called name in run, or NULL. */
const struct reg_stream *reg_run_stream(const struct reg_run *,
		    const char *name);
/* The stream called name in run, added (with no partitions) when new. */
struct reg_stream *reg_run_add_stream(struct reg_run *, const char *name);
/* Add (part, last) to st, keeping it sorted; an existing part keeps the
 * smaller last. */
void		 reg_stream_put(struct reg_stream *, int32_t part, int64_t last);
#define REG_SEQ_NONE	(-2)
/* last of part in st, or REG_SEQ_NONE when st has none. */
int64_t		 reg_stream_get(const struct reg_stream *, int32_t part);

/*
 * A whole file (isFileAppendable = false) whose every record is
 * acknowledged and that waits for its cleanup: the entry's offset is its
 * size, its mtime and the crc32 of its last tail_len bytes tell it from a
 * file that changed since.  Saved in the state file.  Out of line, so the
 * entries of tailed files (nearly all of them) do not carry it.
 */
struct reg_done {
	int64_t		 mtime_ns;
	uint32_t	 tail_crc;
	uint32_t	 tail_len;
	uint64_t	 change;	/* the change that marked it (0: read
					   from the state file) */
};

/*
 * The entry of a spool file (spool.h): the unread rest of a file that was
 * deleted while the agent had it open, copied at a stop.  The entry's
 * (dev, ino) are the spool file's, its path, fingerprint, offset and size
 * those of the original (the spool file keeps the original's offsets);
 * this says where the spool file is and which file it came from.  Saved
 * in the state file.  Out of line, as reg_done.
 */
struct reg_spool {
	char		*file;		/* owned; the spool file's path */
	uint64_t	 dev;		/* the original's identity */
	uint64_t	 ino;
};

/*
 * What a flow of the state file read: its stream and filePattern (with
 * directoryRecursionEnabled's "**"), in the header's "flows", so that a
 * flow renamed in agent.ini with the same stream and pattern is known for
 * the same one and carries its positions on.
 */
struct reg_flowdesc {
	char		*name;		/* owned */
	char		*stream;	/* owned */
	char		*pattern;	/* owned */
	char		*was;		/* owned: its name in the state file,
					   when this start carried that
					   flow's entries on (renamed; not
					   saved), or NULL */
};

struct registry;

/* New, empty registry for the state file at path (not read yet). */
struct registry	*registry_new(const char *path);
/* Frees it and lets go of its lock. */
void		 registry_free(struct registry *);

/*
 * Take the state file's lock: an flock on path.lock (created 0644 when
 * missing), held until registry_free or the end of the process (a kill -9
 * included), so that one process at a time owns the state: the agent for
 * as long as it runs, `disagent import-state` while it writes.  The holder
 * writes its pid into the file.  Returns 0; -EWOULDBLOCK when another
 * process holds it (its pid into *holder, 0 when unknown); another
 * negative errno when the lock file cannot be opened or created.
 */
int		 registry_lock(struct registry *, long *holder) WARN_UNUSED;
/* path.lock, the lock file of the state file at path: new string. */
char		*registry_lock_path(const char *path);
/*
 * Whether a process holds the lock of the state file at path (a running
 * agent): tried with a shared lock, let go at once; false when there is
 * no lock file or it cannot be opened.
 */
bool		 registry_lock_held(const char *path);
/*
 * The pid of the process that holds the lock of the state file at path
 * (the agent running with it), as it wrote it in the lock file; 0 when
 * none holds it or the pid is not known.
 */
long		 registry_lock_holder(const char *path);

/*
 * Read the state file.  A missing file (and missing .bak) is an empty
 * registry and returns 0.  A file that fails to parse or validate is
 * logged, set aside (renamed to path.corrupt-<time>) and the .bak is tried;
 * returns 0 when either loaded, else -EBADMSG with the registry empty (the
 * caller decides whether to start).  When both are bad they are left in
 * place (a copy of each is kept as .corrupt-<time>) so every later load
 * fails the same way instead of starting from zero.  A state file that
 * exists but cannot be read (EACCES, EIO) returns that negative errno
 * without trying the .bak.  Entries present before the call are dropped.
 * After the .bak was used, or a file in an earlier format (version 1) was
 * read, the registry is dirty, so the next save rewrites path (in the
 * current format).
 */
int		 registry_load(struct registry *) WARN_UNUSED;

/* Borrowed entry for (flow, dev, ino), or NULL. */
struct reg_entry *registry_find(struct registry *, const char *flow,
		    uint64_t dev, uint64_t ino);

/*
 * Insert or update the entry for (flow, dev, ino): fingerprint, path and
 * offset are replaced, updated set to now.  Marks the registry dirty when
 * anything changed.  Returns the borrowed entry (valid until it is removed
 * or expired, the next load, or registry_free).  A path that is not UTF-8
 * is saved with its non-ASCII bytes as '?' (JSON cannot carry raw bytes).
 */
struct reg_entry *registry_set(struct registry *, const char *flow,
		    uint64_t dev, uint64_t ino, uint32_t fp_crc,
		    uint32_t fp_len, const char *path, uint64_t offset);
/* The same with path a shared text (util.h rstr, a tailer's path): the
 * entry holds it instead of a copy of its own. */
struct reg_entry *registry_set_shared(struct registry *, const char *flow,
		    uint64_t dev, uint64_t ino, uint32_t fp_crc,
		    uint32_t fp_len, const char *path, uint64_t offset);

/* Drop the entry for (flow, dev, ino) if present. */
void		 registry_remove(struct registry *, const char *flow,
		    uint64_t dev, uint64_t ino);

/*
 * Drop entries not updated for ttl_s seconds (relative to now_s): those
 * with updated < now_s - ttl_s.  ttl_s <= 0 disables expiry.
 */
void		 registry_expire(struct registry *, int64_t now_s,
		    int64_t ttl_s);

/*
 * Read the state file without changing anything on disk: no file is set
 * aside, the .bak is only read (used when path is missing or corrupt, and
 * then *from_bak is set), and the registry is not marked dirty.  For
 * readers such as `disagent status`.  Returns 0; -ENOENT when neither file
 * exists; -EBADMSG when neither is usable; another negative errno when path
 * cannot be read.  Problems are logged as registry_load logs them.
 */
int		 registry_peek(struct registry *, bool *from_bak) WARN_UNUSED;

/*
 * Call cb(entry, arg) for every entry, ordered by flow, then dev, then
 * ino.  The entries are borrowed for the call; cb must not change the
 * registry.  Returns the number of entries visited.
 */
size_t		 registry_each(const struct registry *,
		    void (*cb)(const struct reg_entry *, void *), void *arg);

/*
 * Call cb(arg) each time the registry goes from clean (just loaded or
 * saved) to dirty, so the owner can schedule a save instead of polling.
 */
void		 registry_on_dirty(struct registry *, void (*cb)(void *),
		    void *arg);

/*
 * Mark e (borrowed from this registry) complete with mtime_ns and its tail
 * fingerprint, or clear the mark (complete false; the other arguments are
 * then ignored).  Marks the registry dirty when anything changed.
 */
void		 registry_set_complete(struct registry *, struct reg_entry *e,
		    bool complete, int64_t mtime_ns, uint32_t tail_crc,
		    uint32_t tail_len);

/*
 * Set the journal cursor of e (borrowed from this registry) to a copy of
 * cursor.  Marks the registry dirty when it changed.
 */
void		 registry_set_cursor(struct registry *, struct reg_entry *e,
		    const char *cursor);

/*
 * Note e's size (e borrowed from this registry): with the offset, what is
 * known to follow, should the file go before it is read.  Does not make
 * the registry dirty: the next save writes it.
 */
void		 registry_set_size(struct registry *, struct reg_entry *e,
		    uint64_t size);

/*
 * Mark e (borrowed from this registry) as the entry of the spool file at
 * file, copied from the file (dev, ino); marks the registry dirty.
 */
void		 registry_set_spool(struct registry *, struct reg_entry *e,
		    const char *file, uint64_t dev, uint64_t ino);

/*
 * Whether what e holds now is in the state file: e was read from it, or a
 * save succeeded after e's complete mark was set.  A caller that marked e
 * and then saw registry_save return 0 (or was told so by whoever saved,
 * registry_save_start's callback included) may act on the durable mark.
 */
bool		 registry_durable(const struct registry *,
		    const struct reg_entry *e);

/*
 * Replace e's acknowledged spans with the n at spans (copied; sorted and
 * disjoint, those ending at or before e's offset dropped, the nearest
 * REG_MAX_SPANS kept).  Marks the registry dirty when they changed.
 */
void		 registry_set_acked(struct registry *, struct reg_entry *e,
		    const struct reg_span *spans, size_t n);

/* Note a record found for e (kept in order of off; not saved). */
void		 registry_add_found(struct reg_entry *e, uint64_t off,
		    uint64_t hash, uint32_t len);
/* Take e's found records (new, sorted by off; free it); NULL: none. */
struct reg_found *registry_take_found(struct reg_entry *e, size_t *n);

/*
 * While the restart's read after a crash waits for requests of the crashed
 * run that may still land (agent/dedupe.c), the files whose records may be
 * among them are held: no flow reads them until it is over, when their
 * found records are all noted.  fn(arg, flow, dev, ino) says whether
 * flow's file (dev, ino) is held; with dev = ino = 0, whether all of
 * flow's files are (it cannot tell which).  NULL: nothing is held.
 */
typedef bool	(*reg_hold_fn)(void *arg, const char *flow, uint64_t dev,
		    uint64_t ino);
void		 registry_set_hold(struct registry *, reg_hold_fn, void *arg);
bool		 registry_held(const struct registry *, const char *flow,
		    uint64_t dev, uint64_t ino);

/*
 * The header's run information as loaded (borrowed; NULL when the file had
 * none: it is older, or there was no file), until registry_set_run.
 */
const struct reg_run *registry_run(const struct registry *);
/* What the next saves write in the header (steals run; NULL: none). */
void		 registry_set_run(struct registry *, struct reg_run *run);
/* The run information held now, taken (new; NULL: none). */
struct reg_run	*registry_take_run(struct registry *);

size_t		 registry_count(const struct registry *);
/* Note what flow reads (copied), saved with its entries. */
void		 registry_describe_flow(struct registry *, const char *flow,
		    const char *stream, const char *pattern);
/* What the state file (or registry_describe_flow) says flow read, or
 * NULL.  Borrowed until the next describe or load. */
const struct reg_flowdesc *registry_flow_desc(const struct registry *,
		    const char *flow);
/* flow, described, was named from in the state file (renamed.h). */
void		 registry_flow_was(struct registry *, const char *flow,
		    const char *from);
/* The flows of the entries, each once (new array of borrowed names, in
 * order; *n set). */
const char	**registry_flow_names(const struct registry *, size_t *n);
/* How many entries flow has. */
size_t		 registry_flow_count(const struct registry *, const char *flow);
/* Every entry of from becomes to's (one to already has for the same file
 * is dropped); how many moved.  Makes the registry dirty. */
size_t		 registry_rename_flow(struct registry *, const char *from,
		    const char *to);
bool		 registry_dirty(const struct registry *);
/* Entries were made since the last save (new files not on disk yet). */
bool		 registry_unsaved_entries(const struct registry *);

/*
 * Write the state atomically if dirty (or always when force).  Returns 0 or
 * a negative errno (logged; the registry stays dirty so the next save
 * retries).  -EMSGSIZE: an entry does not fit the 1 MiB a line of the
 * file may take (a path of more than about 170 KiB), so no file is written
 * that the next load would refuse.
 */
int		 registry_save(struct registry *, bool force) WARN_UNUSED;

/*
 * The same save without waiting for the disk: the state is written to
 * memory now, and to path.tmp, fsync'd and renamed (with path.bak kept)
 * on loop's thread pool, so the loop does not sleep in the fsyncs.  The
 * registry counts as saved at the moment it was written to memory; what
 * changes meanwhile makes it dirty again.  done(rc, arg) is called on the
 * loop once the file is on disk (rc 0) or the save failed (a negative
 * errno, logged; the registry is dirty again).  Returns 0 when the save
 * is under way, 1 when nothing was dirty (nothing to write, done is not
 * called), or a negative errno of the write to memory (logged).  One save
 * at a time: a save under way is waited for first, by this call, by
 * registry_save and by registry_free (registry_save_wait).
 */
int		 registry_save_start(struct registry *, uv_loop_t *,
		    void (*done)(int, void *), void *arg);
/* Whether a registry_save_start is under way. */
bool		 registry_saving(const struct registry *);
/*
 * Wait for the save under way, if any, and take its result (the counts of
 * what is saved); its done callback still comes from the loop.
 */
void		 registry_save_wait(struct registry *);
/*
 * The registry's change count now, and whether the change it counted was
 * in a save that succeeded: a file the state names no more (a delivered
 * spool file) may go once the state without it is on disk.
 */
uint64_t	 registry_changes(const struct registry *);
bool		 registry_change_saved(const struct registry *, uint64_t);

#endif
