/*
 * DescribeStream over every page (spec/dis-api.md section 5: pages of
 * limit_partitions, the next starting after the last partition of the
 * previous one, while has_more_partitions), retried a few times on network
 * errors, server errors and throttling.  For `disagent describe` and the
 * read-back client.
 */
#ifndef DISAGENT_DESCRIBE_H
#define DISAGENT_DESCRIBE_H

#include <uv.h>

#include "readback/readback.h"
#include "wire/codec_read.h"

struct disapi;
struct describe;

/*
 * The end of a run: rc 0 and st (borrowed until the next run or
 * describe_free()) with every partition, or rc < 0 and err.
 */
typedef void	(*describe_cb)(void *arg, int rc,
		    const struct codec_stream *st, const struct rb_error *err);

/* A describer of stream through api on loop (borrowed; stream copied). */
struct describe	*describe_new(uv_loop_t *, struct disapi *,
		    const char *stream, describe_cb, void *arg);
/* Describe now; a run under way goes on instead.  One cb per run. */
void		 describe_run(struct describe *);
/* No more requests or callbacks (a reply in flight is ignored). */
void		 describe_stop(struct describe *);
/*
 * Stop, close the timer, and free once it is closed and no reply is
 * awaited (close the http client first, which cancels it); NULL is fine.
 */
void		 describe_free(struct describe *);

#endif
