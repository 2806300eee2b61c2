/*
 * A consumer app's checkpoints on one stream (spec/dis-api.md section 10),
 * for `disagent read --app` and `describe --app`: the app described (and
 * created when DIS says DIS.4332), each partition's committed LAST_READ
 * sequence number read, and commits queued, coalesced per partition and
 * retried.  At most a few calls are in flight, one per partition, and
 * the app comes first.  Log lines are WARNs about commits that failed for
 * good; everything else goes to the callbacks.
 */
#ifndef DISAGENT_CKPT_H
#define DISAGENT_CKPT_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "readback/readback.h"

struct disapi;
struct ckpt;

/* The app: rc 0 (created: it was made just now), -ENOENT (no such app
 * and not to be created), or -EIO with e. */
typedef void	(*ckpt_app_cb)(void *arg, int rc, bool created,
		    const struct rb_error *e);
/* A partition's checkpoint: rc 0 and seq (-1: none committed yet), or
 * rc < 0 with e. */
typedef void	(*ckpt_get_cb)(void *arg, int rc, int64_t seq,
		    const struct rb_error *e);
/* Nothing queued or in flight any more; failed: commits given up on
 * since the last drain. */
typedef void	(*ckpt_drain_cb)(void *arg, unsigned failed);

/*
 * The checkpoints of app on stream through api on loop (borrowed; the
 * strings are copied).  metadata (may be NULL) goes with every commit.
 * forever: retry reads of checkpoints without a limit (--follow), else a
 * handful of times.  Nothing is sent before the first call.
 */
struct ckpt	*ckpt_new(uv_loop_t *, struct disapi *, const char *app,
		    const char *stream, const char *metadata, bool forever);

/* Describe the app, creating it on DIS.4332 when create; cb once. */
void		 ckpt_app(struct ckpt *, bool create, ckpt_app_cb, void *arg);

/* Read partition's checkpoint ("shardId-..."); cb once. */
void		 ckpt_get(struct ckpt *, const char *partition, ckpt_get_cb,
		    void *arg);

/*
 * Commit seq as partition's LAST_READ: queued; a later commit of the same
 * partition replaces one not yet sent, or is sent after the one in flight.
 * A commit that fails for good (DIS.4224 after a trim, or the retries run
 * out) is a WARN and counts for the next drain.
 */
void		 ckpt_commit(struct ckpt *, const char *partition, int64_t seq);

/* Whether anything is queued or in flight. */
bool		 ckpt_busy(const struct ckpt *);

/* cb(arg, failed) once nothing is queued or in flight (on a later turn
 * of the loop when that is now). */
void		 ckpt_drain(struct ckpt *, ckpt_drain_cb, void *arg);

/*
 * No more requests or callbacks; what is queued is dropped.  Free closes
 * the timer and frees once no reply is awaited (close the http client
 * first, which cancels them); NULL is fine.
 */
void		 ckpt_stop(struct ckpt *);
void		 ckpt_free(struct ckpt *);

#endif
