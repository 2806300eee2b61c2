/*
 * Reading a stream back from DIS: DescribeStream over every page, then per
 * partition GetCursor and GetRecords (spec/dis-api.md section 10), in
 * sequence order, on the caller's loop and through its disapi.  It renews
 * expired cursors from the last sequence number handed out (no gap, no
 * duplicate), keeps under the partition's read limit and backs off when
 * DIS throttles, waits between polls at the end of the data, and, while
 * following, picks up partitions that appear and drops those that expire.
 * With an app, each partition starts after the app's committed LAST_READ
 * checkpoint (GetCheckpoint first), or where opts say when it has none.
 * Used by `disagent describe`, `read` and `verify`; it prints nothing but
 * WARN/INFO log lines about partitions and expired data.
 */
#ifndef DISAGENT_READBACK_H
#define DISAGENT_READBACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "wire/codec_read.h"

struct disapi;
struct readback;

enum rb_start {
	RB_TRIM_HORIZON,	/* the oldest record kept */
	RB_LATEST,		/* only records written from now on */
	RB_AT_SEQUENCE,		/* at start_seq, in every partition read */
	RB_AT_TIME,		/* the first record at or after start_ms */
};

/* Why reading stopped, for the one-line message of a command. */
struct rb_error {
	long	 status;	/* HTTP status; 0: no reply */
	char	 code[32];	/* DIS error code, "" when none */
	char	 message[320];	/* what failed, with DIS's own message */
};

struct rb_opts {
	const char	*stream;
	const char *const *partitions;	/* "0" or "shardId-0000000000"; */
	size_t		 npartitions;	/* 0: every partition */
	enum rb_start	 start;
	int64_t		 start_seq;	/* RB_AT_SEQUENCE */
	int64_t		 start_ms;	/* RB_AT_TIME: ms since the epoch */
	bool		 follow;	/* wait for new records for ever */
	bool		 describe_only;	/* stop once the stream is described */
	unsigned	 parallel;	/* partitions read at once, 0: all;
					   without follow, 1 reads them one
					   after the other, in order */
	uint64_t	 poll_ms;	/* follow: wait at the end; 0: 1000 */
	uint64_t	 rescan_ms;	/* follow: describe again; 0: 10000 */
	const char	*app;		/* start after its checkpoints; NULL:
					   none (the app must exist) */
};

struct rb_callbacks {
	/*
	 * The stream is described (every page), before any record is read;
	 * may be NULL.  Non-zero stops reading (done is called with rc).
	 */
	int	(*described)(void *arg, const struct codec_stream *);
	/*
	 * One record of partition (borrowed, valid during the call), in
	 * sequence order per partition.  Non-zero stops reading: done is
	 * called with 0.
	 */
	int	(*record)(void *arg, const char *partition,
		    const struct codec_record *);
	/*
	 * Reading ended by itself: rc 0 at the end of the data (without
	 * follow), when a callback asked to stop, or once described with
	 * describe_only; rc < 0 with err filled on an error that retrying
	 * does not cure (or that outlasted the retries, without follow).
	 * Not called after readback_stop().
	 */
	void	(*done)(void *arg, int rc, const struct rb_error *err);
};

/*
 * A reader of opts->stream through api on loop (all borrowed; opts and its
 * strings are copied).  Nothing happens before readback_start().
 */
struct readback	*readback_new(uv_loop_t *, struct disapi *,
		    const struct rb_opts *, const struct rb_callbacks *,
		    void *arg);
void		 readback_start(struct readback *);

/*
 * Stop: no request is sent any more and no callback is called.  Replies
 * still in flight are ignored when they come; close the http client
 * (which cancels them) before readback_free().
 */
void		 readback_stop(struct readback *);

/* Close the timers and free once they are closed; NULL is fine. */
void		 readback_free(struct readback *);

/*
 * "3" or "shardId-0000000003" -> "shardId-0000000003" into out[len];
 * other names are copied as they are.
 */
void		 readback_partition_name(const char *in, char *out,
		    size_t len);

#endif
