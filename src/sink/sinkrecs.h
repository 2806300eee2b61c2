/*
 * A PutRecords reply's verdict on each record, settled in the batch
 * (sinkrecs.c), private to sink/: the acknowledged are done, counted, and
 * their sequence numbers noted (seqmark); the refused are written to the
 * dead-letter file and synced, then done, with one WARN per reply that
 * counts them by code (one that cannot be written is kept, and resent);
 * the retriable are kept.  It calls nothing of the sink: sink.c decides
 * what becomes of the batch.
 */
#ifndef DISAGENT_SINKRECS_H
#define DISAGENT_SINKRECS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct batch;
struct deadletter;
struct metrics_flow;
struct putbody_req;
struct seqmark;
struct sinkreply_verdict;

/*
 * The "Put N records to [S] spend Tms" INFO lines: at most
 * PUT_LINES_PER_S a second; the requests past them are summed into one
 * line of the same form, logged by sinkrecs_log_puts() (the progress
 * report, a stop).  WARN lines (failed records) always go out.
 */
#define PUT_LINES_PER_S	4
struct puttally {
	uint64_t	 sec_ms;	/* mono_ms() the current second began */
	unsigned	 lines;		/* INFO lines logged in it */
	size_t		 reqs;		/* summed since the last sum logged */
	size_t		 recs;
	uint64_t	 ms;
};

/* Where the records' outcomes go, all borrowed but the tally. */
struct sinkrecs {
	const char	*flow;		/* the flow's name */
	const char	*stream;
	struct deadletter *dlq;
	struct metrics_flow *m;
	struct seqmark	*seq;
	struct puttally	 tally;
};

/*
 * Settle b's records that req carried by v (SINKREPLY_RECORDS), and log
 * the reply's line (the time since sent_ms, mono_ms()'s, the dead letters'
 * syncs included).  Returns whether any record
 * must be resent; *throttled: the refused records that could not be
 * written and that DIS throttled (DIS.4303), which the window counts too.
 */
bool		 sinkrecs_settle(struct sinkrecs *, struct batch *b,
		    const struct putbody_req *req,
		    const struct sinkreply_verdict *v, uint64_t sent_ms,
		    size_t *throttled);
/*
 * Record i of b, refused (code, msg) in a request of its own: 0 when it is
 * a dead letter now (done, counted, the WARN logged), or a negative errno
 * (it is kept).
 */
int		 sinkrecs_dead_one(const struct sinkrecs *, struct batch *b,
		    size_t i, const char *code, const char *msg);
/* The requests summed since the last such line, as one INFO line. */
void		 sinkrecs_log_puts(struct sinkrecs *);

#endif
