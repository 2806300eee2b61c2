/*
 * Private to readback/: the read-back client's state (readback.c runs the
 * partitions, rbstream.c the stream's description and the API).
 */
#ifndef READBACK_READBACK_INT_H
#define READBACK_READBACK_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "base/closer.h"
#include "readback/readback.h"

struct codec_partition;
struct codec_stream;
struct describe;
struct disapi;

enum pstate { PS_IDLE, PS_ACTIVE, PS_DONE };


/* Where the next cursor starts (the diagram at the top). */
enum from {
	FROM_START,	/* as the options say (start) */
	FROM_LATEST,	/* LATEST; renewed after last or as start says */
	FROM_CKPT,	/* after last, the app's checkpoint; nothing handed
			   out yet */
	FROM_LAST,	/* after last, the last record handed out */
	FROM_OLDEST,	/* TRIM_HORIZON: what followed last expired */
};

struct rb_part {
	struct readback	*rb;
	uv_timer_t	 timer;
	char		 id[40];
	enum rb_start	 start;
	char		*cursor;	/* NULL: get one first */
	int64_t		 last;		/* last sequence number handed out,
					   or the checkpoint; -1: none */
	enum from	 from;		/* the next cursor */
	bool		 placed;	/* the app's checkpoint is known */
	int64_t		 first;		/* when described; -1 unknown */
	int64_t		 end;		/* no follow: next number then */
	size_t		 fetch;		/* max_fetch_bytes */
	unsigned	 attempt;	/* failures in a row */
	unsigned	 throttles;	/* throttled replies in a row */
	unsigned	 renewals;
	unsigned	 empty;
	enum pstate	 state;
	struct rb_part	*next;
};

struct readback {
	uv_loop_t	*loop;
	struct disapi	*api;
	struct rb_opts	 o;
	char		*stream;
	char		*app;		/* NULL: no checkpoints */
	char		**names;	/* partitions asked for, normalised */
	size_t		 nnames;
	struct rb_callbacks cb;
	void		*arg;
	struct describe	*desc;
	const struct codec_stream *st;	/* the last description (desc's) */
	bool		 advanced;	/* an ADVANCED stream */
	uv_timer_t	 timer;		/* rescans */
	struct rb_part	*parts, **tail;
	size_t		 active;
	struct closer	 closer;	/* the timers, the replies awaited */
	bool		 stopped;
};

/* Stop everything and call done, once. */
void	rb_finish(struct readback *, int rc, const struct rb_error *);
/* Start the next idle partitions, up to the options' limit. */
void	rb_start_next(struct readback *);
/* A partition of the description, at the tail of the list, idle. */
struct rb_part *rb_part_new(struct readback *, const struct codec_partition *,
	    enum rb_start);

#endif
