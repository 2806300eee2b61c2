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

/* Where the records' outcomes go, all borrowed. */
struct sinkrecs {
	const char	*flow;		/* the flow's name */
	const char	*stream;
	struct deadletter *dlq;
	struct metrics_flow *m;
	struct seqmark	*seq;
};

/*
 * Settle b's records that req carried by v (SINKREPLY_RECORDS), and log
 * the reply's line (the time since sent_ms, mono_ms()'s, the dead letters'
 * syncs included).  Returns whether any record
 * must be resent; *throttled: the refused records that could not be
 * written and that DIS throttled (DIS.4303), which the window counts too.
 */
bool		 sinkrecs_settle(const struct sinkrecs *, struct batch *b,
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

#endif
