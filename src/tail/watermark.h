/*
 * The commit watermark of one file: the in-flight byte ranges of the file in
 * read order, each acknowledged in any order; the committed offset is the end
 * of the longest prefix of ranges that are all acknowledged (lessons R2).
 * Pure bookkeeping, no I/O.
 */
#ifndef DISAGENT_WATERMARK_H
#define DISAGENT_WATERMARK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct wm_range {
	uint64_t	 end;	/* offset just past the range's last record */
	bool		 done;
};

/*
 * Every tracked file has one, idle ones included, so it is three words: the
 * ring and its indexes live in one allocation, made by the first wm_push
 * and freed by wm_cleanup once nothing is in flight (tailer_trim).
 */
struct wm_ring;
struct watermark {
	struct wm_ring	*ring;	/* ranges in flight, oldest first; or NULL */
	uint64_t	 base;	/* id of the oldest range in flight */
	uint64_t	 committed;
};

void		wm_init(struct watermark *, uint64_t committed);
/*
 * Free the ring of ranges.  The committed offset and the next range id are
 * kept, so the watermark stays usable: the next wm_push grows a new ring
 * (tailer_trim relies on this to free the rings of idle files).
 */
void		wm_cleanup(struct watermark *);

/*
 * A new in-flight range ending at end (>= every earlier end).  Returns its
 * id for wm_ack().
 */
uint64_t	wm_push(struct watermark *, uint64_t end);

/* Move the end of range id (the newest range) to end. */
void		wm_extend(struct watermark *, uint64_t id, uint64_t end);

/*
 * Bytes after the newest range up to end are done without a record (the
 * skipped tail of a truncated line): the newest range now ends at end, or,
 * with no range pending, the committed offset moves to end.  Returns true
 * when the committed offset moved.
 */
bool		wm_skip_to(struct watermark *, uint64_t end);

/*
 * Acknowledge range id.  Returns true when the committed offset moved.
 * Acknowledging an unknown or already committed id is a no-op.
 */
bool		wm_ack(struct watermark *, uint64_t id);

/*
 * Bytes after the newest range (or the committed offset) up to end were
 * delivered before (a record a restart skips, its bytes acknowledged by
 * the run before): the newest range grows to end when it is done, else a
 * new range, done already, ends at end; with no range pending the
 * committed offset moves to end.  Never extends a range in flight, whose
 * records may still have to be sent again.  True when the committed
 * offset moved.
 */
bool		wm_done_to(struct watermark *, uint64_t end);

/* The id of the newest range, or UINT64_MAX with none pending. */
uint64_t	wm_last_id(const struct watermark *);
/* Range id was acknowledged (or done); false for one still in flight. */
bool		wm_acked(const struct watermark *, uint64_t id);

/*
 * The acknowledged ranges past the committed offset (behind one that is
 * not), adjacent ones merged, into out[0..max-1], nearest first; returns
 * how many.  Each starts where the range before it ends.
 */
struct reg_span;
size_t		wm_spans(const struct watermark *, struct reg_span *out,
		    size_t max);
/* Heap bytes of its ring (0 without one). */
size_t		wm_memory(const struct watermark *);

/* Ranges pushed and not yet committed. */
size_t		wm_pending(const struct watermark *);

/* Forget all ranges and restart at committed (truncation, tests). */
void		wm_reset(struct watermark *, uint64_t committed);

#endif
