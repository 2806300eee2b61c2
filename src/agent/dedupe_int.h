/*
 * The restart's read (dedupe.h), shared by dedupe.c (the reading) and
 * dedupe_plan.c (what to read: the streams, their partitions' floors, the
 * files whose records are looked for) only.
 */
#ifndef DISAGENT_DEDUPE_INT_H
#define DISAGENT_DEDUPE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "base/closer.h"
#include "base/hash.h"
#include "dis/partread.h"

struct conf;
struct disapi;
struct reg_run;
struct registry;

/* One file of a flow of the stream whose records may be in it. */
struct dd_file {
	uint64_t	 fid;		/* keyid_file */
	const char	*flow;		/* the conf's */
	uint64_t	 dev, ino;
	uint64_t	 offset;	/* committed, as saved */
	uint64_t	 below;		/* its records' offsets are below this */
	char		*path;		/* owned: a file the state file does
					   not name (first seen after its
					   last save), found by a scan now;
					   NULL for the state file's */
	uint32_t	 fp_crc, fp_len; /* its head now, for its entry */
	bool		 held;		/* records of it may be on their way:
					   the flow reads it once the read
					   is over (registry_held) */
};

/* A file held, or a flow held wholly (dev = ino = 0). */
struct dd_held {
	uint64_t	 dev, ino;
	const char	*flow;		/* the conf's */
};

struct dd_stream;

enum dd_state { DD_QUEUED, DD_ACTIVE, DD_DONE };

/* One partition of a stream, read by its reader (dis/partread.h). */
struct dd_part {
	struct dd_stream *st;
	int32_t		 part;
	enum dd_state	 state;
	struct partread	 r;
};

struct dd_stream {
	struct dedupe	*d;
	const char	*key;		/* "NAME" or "id:ID" (the run's) */
	char		*own_key;	/* key, when the run has no floors
					   of the stream */
	bool		 by_id;
	/* Partitions not all known (no DescribeStream: a streamId, or
	 * none before the crash): GetCursor by time for partition 0, 1,
	 * ... until one does not exist. */
	bool		 probing;
	int32_t		 probe;
	int32_t		*probed;	/* the partitions that exist */
	size_t		 nprobed;
	struct dd_file	*files;		/* by fid */
	size_t		 nfiles;
	struct dd_part	*parts;
	size_t		 nparts;
	size_t		 left;		/* parts not done */
	size_t		 nheld;		/* files held, flows held wholly */
	uint64_t	 read;		/* records read */
	uint64_t	 ours;		/* of them this agent's files' */
	bool		 failed;
};

struct dedupe {
	uv_loop_t	*loop;
	struct disapi	*api;
	const struct conf *conf;
	struct registry	*reg;
	struct hash_key	 agent;
	struct dd_stream *streams;
	size_t		 nstreams;
	size_t		 active;	/* parts being read */
	size_t		 left;		/* parts not done, all streams */
	struct closer	 closer;	/* requests on the wire, timers
					   being closed */
	int64_t		 until_ms;	/* records after this: not ours */
	int64_t		 since_ms;	/* wall ms before the crashed run's
					   first request (its start, less
					   DEDUPE_SKEW_MS), or 0: unknown */
	const struct reg_run *run;
	int64_t		 wait_until;	/* wall ms: a request of the crashed
					   run may land until then, so a
					   partition read to its end before
					   is polled again */
	uint64_t	 t0;
	uint64_t	 waited_ms;	/* the longest a partition waited */
	uv_timer_t	 deadline;	/* DEDUPE_MAX_MS; then the end */
	struct dd_held	*held;		/* by dev, ino */
	size_t		 nheld;
	size_t		 nwhole;	/* of them flows */
	void		(*done)(void *);
	void		*done_arg;
	bool		 freed;
};

/*
 * Plan d's streams from run: the flows that write records with ids,
 * grouped by stream, each with its files -- the state file's and, found
 * by a scan of the flow's pattern now, those it does not name yet --
 * sorted by fid.  A flow whose keys cannot carry ids is named (its
 * in-flight records are sent again).  The streams' keys point into run.
 */
void		 dedupe_plan(struct dedupe *, const struct reg_run *run);
/* The file of st whose ids have fid, or NULL. */
const struct dd_file *dedupe_find_file(const struct dd_stream *,
		    uint64_t fid);

#endif
