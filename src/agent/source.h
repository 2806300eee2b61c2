/*
 * What a flow reads, behind one small interface: the pump, the batches and
 * the window (flow.c) do not know whether the records come from files
 * (source_files.c: files.h and its tailers, framed by the flow's framer)
 * or from the systemd journal (source_journal.c: journal.h, an entry a
 * record).
 *
 * A source hands each record to the flow's record callback with where it
 * came from (struct source_rec), and the flow says whether it took it.
 * Records are committed through the commit watermark of their origin (a
 * file, the journal): each record the flow adds to a batch opens a range
 * or extends the batch's range of its origin (source_add, which decides)
 * and, once the batch is acknowledged, the flow acknowledges it
 * (source_ack), which
 * moves the committed position the registry keeps.  A record the flow
 * takes without sending (filtered, dead-lettered, dropped by the chain) is
 * skipped (source_skip), so it is committed like the others.
 *
 * Owns: what it reads with (struct files and its tailers; the journal).
 * The flow owns the source; it is freed with source_free, and whatever
 * handles it holds close asynchronously without calling back.
 */
#ifndef DISAGENT_SOURCE_H
#define DISAGENT_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "base/util.h"

struct conf;
struct conf_flow;
struct metrics_flow;
struct registry;
struct source;
struct source_files;

/* One record, borrowed for the record callback. */
struct source_rec {
	const char	*data;
	size_t		 len;
	const char	*name;		/* its file's path; a journal entry's
					   unit: partition keys, metadata */
	uint64_t	 origin;	/* its file (tailer id) or journal */
	const char	*origin_name;	/* the origin's name: dead letters */
	uint64_t	 off;		/* where it starts: the file offset, the
					   entry's time (microseconds) */
	uint64_t	 end;		/* just past it: the file offset, the
					   journal's watermark position */
	uint64_t	 commit;	/* its origin's watermark position just
					   past it: end, or for a container
					   record held back before the other
					   stream's waiting lines (records/
					   framer_ctr.c) where they start */
	void		*at;		/* the source's own: what read it */
	bool		 known;		/* a restart's read may have found it
					   in the stream: ask
					   source_files_found */
};

struct source_cbs {
	/*
	 * A record: 0 when the flow took it, non-zero when it refused it
	 * (its window closed); a refused record is offered again later.
	 */
	int		(*record)(void *arg, const struct source_rec *);
	/* Whether the flow takes records now (its window is open). */
	bool		(*open)(void *arg);
	/* There may be records to read now: the flow pumps. */
	void		(*readable)(void *arg);
	void		*arg;
};

/*
 * The operations every kind of source has; NULL where a kind has nothing
 * to do.  What only files have (hand-over, spool, what a restart knows,
 * record ids, pacing) is behind source_files() (agent/source_files.h).
 */
struct source_ops {
	int		(*start)(struct source *);
	void		(*stop)(struct source *);
	void		(*free)(struct source *);
	bool		(*read)(struct source *, size_t *budget,
			    size_t max_record);
	bool		(*add)(struct source *, const struct source_rec *,
			    uint64_t *range);
	void		(*skip)(struct source *, const struct source_rec *);
	void		(*ack)(struct source *, uint64_t origin,
			    uint64_t range);
	bool		(*all_read)(const struct source *);
	void		(*gauges)(const struct source *, struct metrics_flow *);
	void		(*touch)(struct source *);
	void		(*saved)(struct source *);
};

/* The part every kind embeds first; private: use the functions below. */
struct source {
	const struct source_ops *ops;
	struct source_files *files;	/* files only; NULL: the journal */
};

/*
 * The source of flow fc: its files, or the journal with source =
 * journal.  conf, fc, reg and m (the flow's counters) are borrowed and
 * outlive it; keep_delim: records keep their delimiter (the processing
 * chain drops it itself); once: --once.  NULL with the reason in err.
 */
struct source	*source_new(uv_loop_t *, const struct conf *,
		    const struct conf_flow *fc, struct registry *,
		    struct metrics_flow *m, bool keep_delim, bool once,
		    const struct source_cbs *, char *err, size_t errlen);
/* The kinds (source_new picks one). */
struct source	*source_files_new(uv_loop_t *, const struct conf *,
		    const struct conf_flow *fc, struct registry *,
		    struct metrics_flow *m, bool keep_delim, bool once,
		    const struct source_cbs *, char *err, size_t errlen);
struct source	*source_journal_new(uv_loop_t *, const struct conf *,
		    const struct conf_flow *fc, struct registry *,
		    struct metrics_flow *m, bool keep_delim, bool once,
		    const struct source_cbs *, char *err, size_t errlen);

/* First scan, watches, timers; 0 or a negative errno (logged). */
int		 source_start(struct source *) WARN_UNUSED;
/* No more reading (stop, reload, cancel). */
void		 source_stop(struct source *);
/* Free it (NULL-safe). */
void		 source_free(struct source *);
/*
 * Read records into the callback until the flow refuses one, nothing is
 * left, or *budget bytes are read (taken off *budget); records are cut to
 * max_record.  Whether nothing was left to read: something held back
 * (records a crash could resend, lines that may belong to a pending
 * record) is not nothing.
 */
bool		 source_read(struct source *, size_t *budget,
		    size_t max_record);
/* No range of an origin in a batch yet (source_add). */
#define SOURCE_NO_RANGE	UINT64_MAX
/*
 * r goes into a batch whose range of r's origin is *range
 * (SOURCE_NO_RANGE: none): that range is extended past r while it is the
 * origin's newest (a record a restart knew delivered may have ended it),
 * else a new range opens, its id in *range for source_ack.  True when it
 * opened one.
 */
bool		 source_add(struct source *, const struct source_rec *r,
		    uint64_t *range);
/* r is done without being sent: committed like the others. */
void		 source_skip(struct source *, const struct source_rec *r);
/* Range of origin acknowledged: commit what it allows. */
void		 source_ack(struct source *, uint64_t origin, uint64_t range);
/* --once: nothing is left to read and nothing waits (for quiet). */
bool		 source_all_read(const struct source *);
/* The gauges of m (bytes or entries behind, files tracked). */
void		 source_gauges(const struct source *, struct metrics_flow *m);
/* Refresh the registry entries it keeps (TTL). */
void		 source_touch(struct source *);
/* A save of the registry succeeded. */
void		 source_saved(struct source *);
/* The files-only part of s (agent/source_files.h), NULL for the journal. */
struct source_files *source_files(const struct source *);

#endif
