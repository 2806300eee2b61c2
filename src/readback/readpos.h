/*
 * How far `disagent read --app` has got in each partition: the sequence
 * number of the last record written to standard output, of the last one
 * known to be out (a flush succeeded after it), and of the last one
 * committed as the app's checkpoint.  Only what is out is committed,
 * through a struct ckpt, every few seconds and when asked (at the end),
 * so a record the reader never got is read again by the next run.
 */
#ifndef DISAGENT_READPOS_H
#define DISAGENT_READPOS_H

#include <stdint.h>

#include <uv.h>

struct ckpt;
struct readpos;

/* Positions committed through ck (borrowed) every every_ms; new. */
struct readpos	*readpos_new(uv_loop_t *, struct ckpt *, uint64_t every_ms);

/* The record seq of partition was written (or reported as undecodable). */
void		 readpos_written(struct readpos *, const char *partition,
		    int64_t seq);
/* Everything written so far is out: a flush of standard output worked. */
void		 readpos_printed(struct readpos *);
/* Commit each partition's last record that is out, unless committed. */
void		 readpos_commit(struct readpos *);

/* Stop the timer and free once it is closed; NULL is fine. */
void		 readpos_free(struct readpos *);

#endif
