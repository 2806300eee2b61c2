/*
 * A batch of records for one PutRecords stream, and who owns it when.
 *
 * Hand-over: the flow creates a batch and fills it (batch_add); from
 * sink_submit() until the sink's done callback the sink owns it (the flow
 * must not touch it; the sink builds bodies in it and schedules its
 * retries); the done callback hands it back, delivered or cancelled, and
 * the flow frees it.  A batch holds no handle, so batch_free is immediate.
 *
 * Every record belongs to a segment: one file's range in the batch (file id
 * and name, the watermark range), so that an acknowledgement moves the
 * right file's committed offset and a dead letter names its file.
 *
 * The sink may merge a batch whose records it must resend into a later
 * batch of the same flow (batch_absorb): the later batch then owns the
 * records and the segments, and its done callback acknowledges both; the
 * earlier batch is freed by the sink and never handed back.  The records
 * the earlier batch had acknowledged are kept as spans (acked), so that
 * what is known delivered stays known (the flow publishes it).
 */
#ifndef DISAGENT_BATCH_H
#define DISAGENT_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

struct seqsnap;
struct sink;

struct batch_rec {
	uint32_t	 off;		/* into data */
	uint32_t	 len;
	uint32_t	 key;		/* into keys (NUL-terminated) */
	uint16_t	 seg;		/* its file: index into segs */
	bool		 done;		/* acknowledged or dead-lettered */
	uint64_t	 file_off;	/* offset of its first byte in the file */
	uint64_t	 file_end;	/* just past its last byte there */
};

/* Bytes [start, end) of the file with id file, acknowledged. */
struct batch_acked {
	uint64_t	 file;
	uint64_t	 start;
	uint64_t	 end;
};

/* One range of one file inside a batch, for the commit watermark. */
struct batch_seg {
	uint64_t	 file;		/* the tailer's id */
	char		*name;		/* owned: its path when added */
	uint64_t	 range;		/* its watermark range */
};

struct batch {
	/* Filled by the flow. */
	struct buf	 data;		/* record bytes, back to back */
	struct buf	 keys;		/* partition keys */
	struct batch_rec *recs;
	size_t		 nrecs;
	size_t		 caprecs;
	size_t		 ndone;
	size_t		 done_bytes;	/* data of the records done */
	struct batch_seg *segs;
	size_t		 nsegs;
	size_t		 capsegs;
	uint64_t	 created_ms;
	struct mem_budget *mem;		/* charged for data, keys, body */
	size_t		 charged;
	/* The sink's, while it owns the batch. */
	struct sink	*sink;		/* the owner */
	unsigned	 attempt;
	bool		 sending;	/* a request is in flight */
	uint64_t	 sent_ms;
	uint64_t	 sent_seq;	/* the sink's count of sends, at this one */
	uint64_t	 due_ms;	/* when a scheduled send is due */
	struct buf	 body;		/* body of the request in flight */
	size_t		*sent_idx;	/* record index of each body entry */
	size_t		 nsent;
	size_t		 limit;		/* records per request after a split */
	bool		 remnant;	/* waits to resend records a reply
					   failed one by one: may ride in
					   another batch's request */
	struct batch	*next;		/* the sink's queues */
	struct batch	*all_next;	/* every batch the sink holds */
	struct batch	*all_prev;
	struct seqsnap	*pin;		/* seqmark.h: since it was sent */
	/* Records of batches it absorbed that were acknowledged there:
	 * bytes of their files a restart must not send again. */
	struct batch_acked *acked;
	size_t		 nacked;
	bool		 uncertain;	/* an attempt ended without a verdict:
					   it may have landed */
};

/* A new, empty batch charging its memory to mem (may be NULL). */
struct batch	*batch_new(struct mem_budget *mem);
/* Free it and release its memory (NULL-safe). */
void		 batch_free(struct batch *);

/* The segment of file in b, or -1. */
int		 batch_seg_of(const struct batch *, uint64_t file);
/* A new segment for file (named name, watermark range); its index. */
uint16_t	 batch_add_seg(struct batch *, uint64_t file, const char *name,
		    uint64_t range);
/* Add a record of segment seg, bytes [file_off, file_end) of its file. */
void		 batch_add(struct batch *, const char *data, size_t len,
		    const char *key, uint16_t seg, uint64_t file_off,
		    uint64_t file_end);

/* Record i is acknowledged or dead-lettered. */
void		 batch_mark_done(struct batch *, size_t i);
/* Records of b not done yet; their data bytes into *bytes. */
size_t		 batch_undone(const struct batch *, size_t *bytes);

/* Most segments a batch takes by absorbing others (batch_absorb). */
#define BATCH_MAX_SEGS	256

/*
 * Move the records of src that are not done to the front of dst (they are
 * older), with every segment of src: its ranges are now dst's, and are
 * acknowledged when dst is delivered, acknowledged records of src
 * included.  dst is charged for the records it takes; src is left with
 * nothing to send, to be freed (which releases its own charge).  Both
 * belong to one flow's sink; dst->nsegs + src->nsegs must not exceed
 * BATCH_MAX_SEGS.
 */
void		 batch_absorb(struct batch *dst, struct batch *src);

/* Release the body of the last request (its memory stays charged: it was
 * reserved with each record). */
void		 batch_drop_body(struct batch *);

#endif
