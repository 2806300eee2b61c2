/*
 * One partition of a stream read back from a position to its end, for a
 * reader looking for records it sent: the restart after a crash
 * (agent/dedupe.c) and a request in doubt (sink/settle.c).  A GetCursor
 * after a sequence number (from the partition's first record when there
 * is none, or from a time), then GetRecords with each reply's next cursor
 * until a record written after past_ms, or the end of the partition; at
 * the end it is asked again every poll_ms (a timer: the read sleeps
 * meanwhile) until a GetRecords sent after wait_until finds nothing more:
 * a request that could still land then has landed.
 *
 * Failures: an outage is ridden out with a backoff (a certificate or an
 * oversized reply is not: it does not get better by asking again),
 * throttling waited out, an expired cursor renewed after the last record
 * read; anything else DIS refuses ends the read with the reason.  The
 * owner bounds the whole read with its own deadline.
 *
 * The reader is embedded in its owner and lives on the owner's closer
 * (base/closer.h): each request holds it, and partread_close closes the
 * timer through it.  Private: use the API.
 */
#ifndef DISAGENT_PARTREAD_H
#define DISAGENT_PARTREAD_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

struct buf;
struct closer;
struct codec_record;
struct disapi;

struct partread_cbs {
	/*
	 * A record read (borrowed for the call); scratch is a buffer the
	 * callback may use (to decode the data).  The callback may stop
	 * the read (partread_stop, partread_close): nothing more is
	 * called then.
	 */
	void		(*record)(void *arg, const struct codec_record *,
			    struct buf *scratch);
	/*
	 * The read is over: fail is NULL when the partition was read past
	 * the bound, else why not (borrowed for the call).  Called once,
	 * never after partread_stop, and never from partread_init.
	 */
	void		(*end)(void *arg, const char *fail);
	void		*arg;
};

/* Where and how far: the owner's; copied by partread_init. */
struct partread_opts {
	const char	*param;		/* "stream-name" or "stream-id" */
	const char	*stream;	/* its value (borrowed: outlives it) */
	int32_t		 part;
	int64_t		 after;		/* read after this sequence number;
					   < 0: none */
	int64_t		 at_ms;		/* after < 0: from this time (wall
					   ms; < 0: the first record) */
	int64_t		 past_ms;	/* a record written after this ends
					   the read */
	int64_t		 wait_until;	/* at the end, asked again until a
					   GetRecords goes after this */
	uint64_t	 poll_ms;	/* then, how often */
};

enum partread_state { PARTREAD_IDLE, PARTREAD_READING, PARTREAD_DONE };

/* Embedded (it holds a timer); private: use the API. */
struct partread {
	struct disapi	*api;
	struct closer	*closer;	/* the owner's */
	struct partread_opts o;
	struct partread_cbs cbs;
	enum partread_state state;
	int64_t		 seen;		/* the last sequence number read
					   (-1: none) */
	char		*cursor;	/* NULL: get one */
	int64_t		 asked;		/* wall ms of the last GetRecords */
	uint64_t	 end_ms;	/* mono ms it first reached the end
					   (0: not yet) */
	uint64_t	 waited_ms;	/* since then, at its last end */
	unsigned	 attempts;	/* failures in a row */
	uv_timer_t	 timer;		/* retries, polls */
};

/* Make p on loop, idle; api and closer borrowed (they outlive it). */
void		 partread_init(struct partread *p, uv_loop_t *,
		    struct disapi *api, struct closer *closer,
		    const struct partread_opts *, const struct partread_cbs *);
/* Start reading now (at once: end may be called from inside, when the
 * first request cannot be sent); or from the loop, a 0 ms timer. */
void		 partread_start(struct partread *);
void		 partread_start_later(struct partread *);
/* Whether it is read to its end once (or over). */
bool		 partread_at_end(const struct partread *);
/* How long it waited at the end for requests that could still land. */
uint64_t	 partread_waited_ms(const struct partread *);
/* No more reading and no callback; a request on the wire is dropped. */
void		 partread_stop(struct partread *);
/* partread_stop, and its timer closed through the owner's closer. */
void		 partread_close(struct partread *);
/* What it holds besides the timer; in the owner's free, after close. */
void		 partread_cleanup(struct partread *);

#endif
