/*
 * A batch of records for one PutRecords stream, and who owns it when.
 *
 * Hand-over: the flow creates a batch and fills it (batch_add); from
 * sink_submit() until the sink's done callback the sink owns it (the flow
 * must not touch it); the done callback hands it back, delivered or
 * cancelled, and the flow frees it.  A batch holds no handle, so
 * batch_free is immediate.
 *
 * struct batch is the records and nothing else: the flow writes it while
 * it fills it, the sink only marks records done (batch_mark_done) and
 * merges batches (batch_absorb).  What the sink keeps about a batch while
 * it owns it (its attempts, the request on the wire, its place in the
 * queues, its sequence-number pin) is the sink's own struct sink_batch
 * (sink/sinkq.h, private to sink/), which points to the batch and is
 * freed when the batch is handed back.
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
	/* Partition keys, each with its NUL, in the order of the records. */
	struct buf	 keys;
	struct batch_rec *recs;
	size_t		 nrecs;
	size_t		 caprecs;
	size_t		 ndone;		/* batch_mark_done, batch_absorb */
	size_t		 done_bytes;	/* data of the records done */
	struct batch_seg *segs;
	size_t		 nsegs;
	size_t		 capsegs;
	uint64_t	 created_ms;
	struct mem_budget *mem;		/* charged for data, keys, body */
	size_t		 charged;
	/* Records of batches it absorbed that were acknowledged there:
	 * bytes of their files a restart must not send again (written by
	 * batch_absorb only; the flow reads them when it is handed back). */
	struct batch_acked *acked;
	size_t		 nacked;
};

/* How big a batch grew: what the next one of its flow is sized for. */
struct batch_size {
	size_t		 nrecs;
	size_t		 data;
	size_t		 keys;
};

/*
 * A new, empty batch charging its memory to mem (may be NULL), its arrays
 * made for a batch like *like at once (capped), instead of grown by
 * doubling as the records come (NULL: grown).  What is made but not
 * filled is not charged.
 */
struct batch	*batch_new(struct mem_budget *mem,
		    const struct batch_size *like);
/* b's size, for the next batch_new(). */
void		 batch_size_of(const struct batch *, struct batch_size *);
/* Free it and release its memory (NULL-safe). */
void		 batch_free(struct batch *);

/* The segment of file in b, or -1. */
int		 batch_seg_of(const struct batch *, uint64_t file);
/* A new segment for file (named name, watermark range); its index. */
uint16_t	 batch_add_seg(struct batch *, uint64_t file, const char *name,
		    uint64_t range);
/* Add a record of segment seg, bytes [file_off, file_end) of its file;
 * its key is the klen bytes at key. */
void		 batch_add(struct batch *, const char *data, size_t len,
		    const char *key, size_t klen, uint16_t seg, uint64_t file_off,
		    uint64_t file_end);
/* The length of record i's key: up to where the next one starts. */
static inline size_t
batch_key_len(const struct batch *b, size_t i)
{
	return (i + 1 < b->nrecs ? b->recs[i + 1].key : b->keys.len) -
	    b->recs[i].key - 1;
}

/* What the flow reads of the batch it fills or is handed back. */
static inline size_t
batch_nrecs(const struct batch *b)
{
	return b->nrecs;
}

/* Bytes of record data in it. */
static inline size_t
batch_bytes(const struct batch *b)
{
	return b->data.len;
}

static inline size_t
batch_nsegs(const struct batch *b)
{
	return b->nsegs;
}

/* Segment seg's file (its tailer's id) and watermark range. */
static inline uint64_t
batch_seg_file(const struct batch *b, size_t seg)
{
	return b->segs[seg].file;
}

static inline uint64_t
batch_seg_range(const struct batch *b, size_t seg)
{
	return b->segs[seg].range;
}

/* Some of its records were acknowledged or dead-lettered, here or in a
 * batch it absorbed. */
static inline bool
batch_any_done(const struct batch *b)
{
	return b->ndone > 0 || b->nacked > 0;
}

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

#endif
