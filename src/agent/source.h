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
 * file, the journal): the flow opens a range for the records it adds to a
 * batch (source_push), extends it with the next ones (source_extend) and,
 * once the batch is acknowledged, acknowledges it (source_ack), which
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
struct files_acked;
struct files_handover;
struct hash_key;
struct metrics_flow;
struct registry;
struct source;
struct spool;

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
	uint64_t	 end;		/* its origin's watermark position just
					   past it */
	void		*at;		/* the source's own: what read it */
	bool		 known;		/* a restart may know it delivered:
					   ask source_known */
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

/* One file a source reads: its path (borrowed for the call), the end of
 * what is delivered of it, and its size at the last look. */
typedef void	(*source_file_fn)(const char *path, uint64_t committed,
		    uint64_t size, void *arg);

/* A source's functions; NULL where a kind has nothing to do. */
struct source_ops {
	int		(*start)(struct source *);
	void		(*stop)(struct source *);
	void		(*free)(struct source *);
	bool		(*read)(struct source *, size_t *budget,
			    size_t max_record);
	uint64_t	(*push)(struct source *, const struct source_rec *);
	void		(*extend)(struct source *, const struct source_rec *,
			    uint64_t range);
	void		(*skip)(struct source *, const struct source_rec *);
	void		(*ack)(struct source *, uint64_t origin,
			    uint64_t range);
	bool		(*all_read)(const struct source *);
	void		(*gauges)(const struct source *, struct metrics_flow *);
	void		(*touch)(struct source *);
	void		(*saved)(struct source *);
	/* Transitions (files.h): what a changed flow's successor reads on,
	 * and the spool of a stop. */
	struct files_handover *(*hand_over)(struct source *);
	size_t		(*adopt)(struct source *, struct files_handover *);
	void		(*spool)(struct source *, struct spool *);
	/* A restart: what is known delivered past the committed positions
	 * (files.h: skip plans, acknowledged spans), and record ids. */
	bool		(*known)(struct source *, const struct source_rec *,
			    const char *sent, size_t sentlen);
	void		(*skip_known)(struct source *,
			    const struct source_rec *);
	void		(*passed)(struct source *, const struct source_rec *);
	bool		(*is_newest)(struct source *,
			    const struct source_rec *, uint64_t range);
	bool		(*id_file)(struct source *, const struct source_rec *,
			    const struct hash_key *, uint64_t *file,
			    bool *fixed);
	void		(*keep_acked)(struct source *,
			    const struct files_acked *, size_t);
	void		(*publish)(struct source *,
			    const struct files_acked *, size_t);
	bool		(*restart_pending)(struct source *);
	/* Coalesced reads (files.h: files_passes, files_pace). */
	uint64_t	(*passes)(const struct source *, uint64_t *gap_ms);
	void		(*pace)(struct source *, uint64_t ms);
	/* The files it reads (source_each_file). */
	void		(*each_file)(const struct source *,
			    source_file_fn, void *);
};

/* The part every kind embeds first; private: use the functions below. */
struct source {
	const struct source_ops *ops;
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
/* A new range of r's origin ending past r; its id for source_ack. */
uint64_t	 source_push(struct source *, const struct source_rec *r);
/* Range (the newest of r's origin) now ends past r. */
void		 source_extend(struct source *, const struct source_rec *r,
		    uint64_t range);
/* r is done without being sent: committed like the others. */
void		 source_skip(struct source *, const struct source_rec *r);
/* Range of origin acknowledged: commit what it allows. */
void		 source_ack(struct source *, uint64_t origin, uint64_t range);
/* --once: nothing is left to read and nothing waits (for quiet). */
bool		 source_all_read(const struct source *);
/* The gauges of m (bytes or entries behind, files tracked). */
void		 source_gauges(const struct source *, struct metrics_flow *m);
/* Call fn for every file it reads (none for the journal). */
void		 source_each_file(const struct source *, source_file_fn,
		    void *arg);
/* Refresh the registry entries it keeps (TTL). */
void		 source_touch(struct source *);
/* A save of the registry succeeded. */
void		 source_saved(struct source *);
/*
 * A reload changed the flow: after source_stop, what its successor reads
 * on (new; files.h: the open files with their offsets), or NULL.
 */
struct files_handover *source_hand_over(struct source *);
/* Read on what h holds (steals it; NULL-safe, s too): the files adopted. */
size_t		 source_adopt(struct source *, struct files_handover *h);
/* A stop: the unread rest of the files deleted while open to sp. */
void		 source_spool(struct source *, struct spool *sp);

/*
 * What a restart knows (issue 20; files only, false or nothing for the
 * journal, whose cursor resends nothing).  source_known: r was delivered
 * before the restart -- with sent NULL, inside the acknowledged spans the
 * state file kept; else found in the stream by the restart's read with the
 * data sent[0..sentlen-1] (as encoded).  source_skip_known: r is done
 * without being sent, as a range of its own (never an extension of a
 * range in flight).  source_passed: r is in a batch (the plan moves on).
 * source_is_newest: range is still the newest of r's origin.
 */
bool		 source_known(struct source *, const struct source_rec *r,
		    const char *sent, size_t sentlen);
void		 source_skip_known(struct source *, const struct source_rec *r);
void		 source_passed(struct source *, const struct source_rec *r);
bool		 source_is_newest(struct source *, const struct source_rec *r,
		    uint64_t range);
/* The file part of r's record id (keyid.h) under the agent key k into
 * *file, and whether it is the same for every later record of r's origin
 * (*fixed); false when r's records carry none. */
bool		 source_id_file(struct source *, const struct source_rec *r,
		    const struct hash_key *k, uint64_t *file, bool *fixed);
/* files.h: files_keep_acked, files_publish, files_restart_pending. */
void		 source_keep_acked(struct source *, const struct files_acked *,
		    size_t);
void		 source_publish(struct source *, const struct files_acked *,
		    size_t);
bool		 source_restart_pending(struct source *);
/*
 * Reads coalesced in passes (files.h: files_passes, files_pace): the
 * number of the last pass (0: none; always for the journal) and the ms of
 * writes it found; and the period the flow would rather have.
 */
uint64_t	 source_passes(const struct source *, uint64_t *gap_ms);
void		 source_pace(struct source *, uint64_t ms);

#endif
