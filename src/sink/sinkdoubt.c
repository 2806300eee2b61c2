/*
 * Requests whose outcome is unknown (sink_int.h).  An attempt that ended
 * without a verdict (a timeout, a connection lost after the body went
 * out, a 5xx, a 200 that does not parse) may have landed.  Its batch keeps
 * the pin it took when it was sent (seqmark.h), so the floors every save
 * writes stay below its records, and before its records are sent again
 * the stream is read from that pin (settle.h): what landed counts as
 * acknowledged, the rest goes again.  A batch handed back while still in
 * doubt (a stop, a reload) leaves its pin to the sink, which keeps it for
 * the saves to come and counts it: a stop with any is not clean.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>

#include "base/log.h"
#include "base/metrics.h"
#include "base/util.h"
#include "conf/conf.h"
#include "sink/batch.h"
#include "sink/seqmark.h"
#include "sink/settle.h"
#include "sink/sink_int.h"

#define SETTLE_LOG_EVERY_MS	60000

/* --- settled by reading ------------------------------------------------- */

static void
on_settled(size_t found, const char *fail, void *arg)
{
	struct sink_batch *sb = arg;
	struct sink	*s = sb->sink;
	size_t		 left;
	uint64_t	 now = mono_ms();

	sb->settle = NULL;
	left = sb->b->nrecs - sb->b->ndone;
	s->m->records_sent += found;	/* they landed */
	if (fail != NULL) {
		/* Still in doubt: sent again, and pinned as before. */
		if (now - s->last_settle_log_ms >= SETTLE_LOG_EVERY_MS) {
			s->last_settle_log_ms = now;
			log_info("PutRecords to [%s]: a request without a "
			    "verdict could not be settled by reading the "
			    "stream (%s): %zu found, the other %zu records "
			    "are sent again", s->fc->stream, fail, found,
			    left);
		}
	} else {
		log_info("PutRecords to [%s]: a request without a verdict "
		    "settled by reading the stream: %zu of its records had "
		    "landed, %zu had not and are sent again", s->fc->stream,
		    found, left);
		/* What is left did not land: nothing of it is in doubt. */
		sb->uncertain = false;
		seqsnap_unpin(sb->pin);
		sb->pin = NULL;
	}
	if (!sink_finish_if_done(s, sb))
		sink_schedule(s, sb, sb->settle_delay);
	/* A stop or a reload waiting for quiet looks again. */
	if (s->cbs.ended != NULL)
		s->cbs.ended(s->cbs.arg);
}

size_t
sink_settling(const struct sink *s)
{
	const struct sink_batch *sb;
	size_t		 n = 0;

	for (sb = s->q.all; sb != NULL; sb = sb->all_next)
		if (sb->settle != NULL)
			n++;
	return n;
}

void
sinkdoubt_retry(struct sink *s, struct sink_batch *sb, uint64_t delay_ms)
{
	int64_t	 until;

	if (!sb->uncertain || !s->ids || s->state == SINK_CLOSING ||
	    sb->b->ndone == sb->b->nrecs) {
		sink_schedule(s, sb, delay_ms);
		return;
	}
	/* Its landing bound: the attempt ended (its timeout is over, or
	 * the server answered or closed), plus a margin for a request
	 * still on its way inside DIS. */
	until = wall_ms() + SETTLE_MARGIN_MS;
	sb->settle_delay = delay_ms;
	sb->settle = settle_start(s->loop, s->api, s->fc, s->seq, sb->pin,
	    sb->b, until, on_settled, sb);
	if (sb->settle == NULL)
		sink_schedule(s, sb, delay_ms);
}

void
sinkdoubt_cancel(struct sink *s)
{
	struct sink_batch *sb, **v;
	size_t		 i, n = 0;

	v = xcalloc(s->q.pending + 1, sizeof(*v));
	for (sb = s->q.all; sb != NULL; sb = sb->all_next)
		if (sb->settle != NULL && n < s->q.pending)
			v[n++] = sb;
	for (i = 0; i < n; i++)
		sink_hand_back(s, v[i], false);
	free(v);
}

/* --- handed back in doubt ----------------------------------------------- */

void
sinkdoubt_keep(struct sink *s, struct sink_batch *sb)
{
	settle_cancel(sb->settle);
	sb->settle = NULL;
	/* Undelivered but maybe landed (a timeout, a dropped connection, a
	 * request cancelled on the wire): the stop is not clean, and the
	 * floors stay below its records. */
	if (sb->uncertain && sb->b->ndone < sb->b->nrecs) {
		s->doubt = seqsnap_join(s->doubt, sb->pin);
		sb->pin = NULL;
		s->ndoubt++;
	}
}

/* --- what a restart needs ----------------------------------------------- */

void
sink_seed(struct sink *s, int32_t part, int64_t last)
{
	seqmark_seed(s->seq, part, last);
}

void
sink_floors(const struct sink *s, void (*cb)(int32_t, int64_t, void *),
    void *arg)
{
	struct seqsnap	**pins;
	struct sink_batch *sb;
	size_t		 n = 0;

	pins = xcalloc(s->q.pending + 2, sizeof(*pins));
	for (sb = s->q.all; sb != NULL; sb = sb->all_next)
		if (n < s->q.pending)
			pins[n++] = sb->pin;
	pins[n++] = s->doubt;
	seqmark_floors(s->seq, pins, n, cb, arg);
	free(pins);
}

void
sink_each(const struct sink *s, void (*fn)(const struct batch *, void *),
    void *arg)
{
	const struct sink_batch *sb;

	for (sb = s->q.all; sb != NULL; sb = sb->all_next)
		fn(sb->b, arg);
}

size_t
sink_uncertain(const struct sink *s)
{
	const struct sink_batch *sb;
	size_t		 n = s->ndoubt + s->inflight;

	for (sb = s->q.all; sb != NULL; sb = sb->all_next)
		if (sb->uncertain && sb->b->ndone < sb->b->nrecs)
			n++;
	return n;
}

