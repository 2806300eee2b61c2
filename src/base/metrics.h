/*
 * Metrics for node_exporter's textfile collector.  The agent keeps plain
 * counters (struct metrics_flow, one per flow, updated in place with the
 * helpers below) and every metricsIntervalMillis hands a snapshot of them to
 * metrics_write_file, which renders the Prometheus text exposition format
 * (names prefixed "disagent_", HELP and TYPE lines, escaped labels) and
 * replaces the file atomically.  No sockets, no threads, no allocation
 * while counting.  metrics_read_errors reads the last-error gauges back for
 * `disagent status`.
 */
#ifndef DISAGENT_METRICS_H
#define DISAGENT_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

/*
 * PutRecords round-trip histogram.  Upper bounds (seconds, inclusive):
 * 0.005 0.01 0.025 0.05 0.1 0.25 0.5 1 2.5 5 10, and +Inf.
 */
#define METRICS_NBUCKETS	12

struct metrics_hist {
	uint64_t	 bucket[METRICS_NBUCKETS];	/* not cumulative */
	uint64_t	 count;
	double		 sum;				/* seconds */
};

/* Count one observation of seconds (negative counts as 0; NaN ignored). */
void	metrics_observe_latency(struct metrics_hist *, double seconds);

/* Why bytes of a file could not be delivered (disagent_bytes_lost_total). */
enum lost_reason {
	LOST_GONE,		/* the file went before it was read, and no
				   compressed successor holds the rest */
	LOST_UNREADABLE,	/* compressed in a format the agent cannot
				   read (xz, bzip2), or corrupt */
	LOST_SPOOL,		/* deleted while open and not spooled at a
				   stop: beyond spoolMaxBytes, disk full */
	LOST_TRUNCATED,		/* truncated in place before it was read */
	METRICS_NLOST
};

#define METRICS_NCODES		8	/* codes; the last is "other" */
#define METRICS_NSTATUS		8	/* statuses; the last is -1 */
#define METRICS_CODE_LEN	24	/* "DIS.4303" fits with room */
#define METRICS_MSG_LEN		160	/* last error message */

struct metrics_code_count {
	char		 code[METRICS_CODE_LEN];
	uint64_t	 count;
};

struct metrics_status_count {
	int		 status;	/* HTTP; 0 transport; -1 other */
	uint64_t	 count;
};

/*
 * The counters of one flow: the one set every module of the flow counts
 * into where the event happens (files, the pump, the sink), and that the
 * metrics file, the progress lines and status read.  Zero it (memset) and
 * set name and stream once; they are borrowed and must outlive every
 * snapshot that shows them (point them into struct conf_flow).  Counters
 * only grow; gauges are set when a snapshot is taken.
 */
struct metrics_flow {
	const char	*name;			/* [flow:NAME] */
	const char	*stream;		/* DISStream, or streamId */
	/* counters */
	uint64_t	 records_read;		/* parsed from files */
	uint64_t	 bytes_read;
	uint64_t	 records_sent;		/* acknowledged by DIS */
	uint64_t	 bytes_sent;
	uint64_t	 records_retried;	/* records sent again */
	uint64_t	 records_dead_lettered;
	uint64_t	 records_failed;	/* failed in a reply, any code */
	uint64_t	 records_truncated;	/* cut to the record limit */
	uint64_t	 records_filtered;	/* left out by lineIncludePattern
						   or lineExcludePattern */
	uint64_t	 container_malformed;	/* container lines of no format,
						   sent as they are */
	uint64_t	 container_joined;	/* container records joined from
						   partial lines */
	uint64_t	 journal_gaps;		/* committed cursors rotated
						   away (journal.h) */
	uint64_t	 journal_entries_lost;	/* entries known lost to them */
	uint64_t	 truncations;		/* files read again from 0 */
	uint64_t	 files_done;		/* closed after full delivery */
	uint64_t	 files_cleaned;		/* deleted, moved or renamed
						   after delivery */
	uint64_t	 cleanup_failures;	/* such cleanups that failed */
	uint64_t	 open_errors;		/* a matching file failed to open
						   (counted when warned about) */
	uint64_t	 bytes_lost[METRICS_NLOST];	/* by enum lost_reason */
	uint64_t	 requests_failed;	/* no usable reply, or not 200 */
	uint64_t	 replies_unacknowledged;	/* 200s acknowledging no
						   record (sinkreply.c) */
	uint64_t	 throttled;		/* throttling events (AIMD) */
	/* LOGTOJSON lines that did not match, by LOGTOJSON.unmatched:
	 * deadletter, raw, drop (convert.h) */
	uint64_t	 records_unmatched[3];
	/* Records a restart did not send again, known delivered: by the
	 * state file's acknowledged spans, by the restart's read. */
	uint64_t	 records_skipped[2];
	struct metrics_code_count failed[METRICS_NCODES];	/* by code */
	size_t		 nfailed;
	struct metrics_status_count requests[METRICS_NSTATUS]; /* by HTTP */
	size_t		 nrequests;
	struct metrics_hist latency;		/* PutRecords round trip */
	/* gauges */
	uint64_t	 bytes_behind;		/* size - committed */
	uint64_t	 files_tracked;
	uint64_t	 files_unreadable;	/* matching, cannot be opened */
	/* whole files (isFileAppendable = false), wholefile.h */
	uint64_t	 whole_pending;		/* waiting to stay unchanged */
	uint64_t	 whole_in_progress;	/* read, sent, acknowledged */
	uint64_t	 whole_cleanup_pending;	/* delivered, to clean up */
	uint64_t	 whole_cleanup_failing;	/* of those: last try failed */
	bool		 paused;		/* waits for the operator */
	bool		 rate_limited;		/* held by maxBytesPerSecond or
						   maxRecordsPerSecond */
	/* last error ("" code: none) */
	char		 last_error_code[METRICS_CODE_LEN];
	char		 last_error_message[METRICS_MSG_LEN];
	int64_t		 last_error_time;	/* wall seconds */
};

/*
 * Add n records failed with code (a DIS error code such as "DIS.4303", or
 * any short text).  Codes beyond the table's room are counted as "other".
 */
void	metrics_count_failed(struct metrics_flow *, const char *code,
	    uint64_t n);

/* Count one DIS request (PutRecords, DescribeStream) that ended with HTTP
 * status (0: no reply). */
void	metrics_count_request(struct metrics_flow *, int status);

/*
 * Remember the latest error of the flow: code and message are copied
 * (truncated, control characters made blanks); now_s is wall seconds.
 */
void	metrics_set_error(struct metrics_flow *, const char *code,
	    const char *message, int64_t now_s);

/* Everything one file shows.  All pointers are borrowed for the call. */
struct metrics_snapshot {
	const struct metrics_flow *flows;
	size_t		 nflows;
	uint64_t	 memory_in_use;		/* bytes of the budget */
	uint64_t	 memory_limit;		/* 0: no limit */
	double		 uptime_s;
	const char	*version;		/* PACKAGE_VERSION */
};

/* Append the exposition text of snap to out. */
void	metrics_render(const struct metrics_snapshot *, struct buf *out);

/*
 * Render snap and replace path with it atomically: write path.tmp (same
 * directory, mode 0644 whatever the umask), then rename it over path, so a
 * reader sees the old file or the new one, never a partial one.  No fsync:
 * the file is rewritten every few seconds.  Returns 0 or a negative errno
 * (path.tmp is removed); the caller logs.  Name the file *.prom for the
 * textfile collector: path.tmp does not match that glob.
 */
int	metrics_write_file(const char *path, const struct metrics_snapshot *)
	    WARN_UNUSED;

/* One disagent_last_error_info sample read back from a metrics file. */
struct metrics_error {
	char		*flow;			/* owned */
	char		*code;			/* owned */
	char		*message;		/* owned */
	int64_t		 time;			/* wall s; 0 unknown */
};

/*
 * Read the last-error gauges of the metrics file at path into *out, a new
 * array of *n entries (free with metrics_errors_free), in file order.
 * Lines that do not parse are skipped.  Returns 0 or a negative errno
 * (-ENOENT when there is no file).
 */
int	metrics_read_errors(const char *path, struct metrics_error **out,
	    size_t *n) WARN_UNUSED;
void	metrics_errors_free(struct metrics_error *, size_t);

/*
 * The value of the sample of family name (a full name: "disagent_...")
 * whose flow label is flow, read back from the metrics file at path into
 * *value.  0; -ENOENT when there is no file or no such sample; another
 * negative errno when it cannot be read.
 */
int	metrics_read_gauge(const char *path, const char *name,
	    const char *flow, double *value) WARN_UNUSED;

#endif
