/*
 * The life of a flow's sink (sink.h): made, started (DescribeStream first,
 * sinkdesc.c, whose findings arrive here), the small accessors, cancelled
 * and freed.  What it does with batches in between is sink.c's.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "base/closer.h"
#include "base/log.h"
#include "base/metrics.h"
#include "conf/conf.h"
#include "dis/disapi.h"
#include "sink/aimd.h"
#include "sink/batch.h"
#include "sink/outage.h"
#include "sink/seqmark.h"
#include "sink/sink.h"
#include "sink/sinkdesc.h"
#include "sink/sink_int.h"
#include "sink/sinkq.h"
#include "records/partkey.h"
#include "wire/codec.h"

static void	on_seed(int32_t, int64_t, void *);
static void	on_described(const char *, void *);
static void	on_desc_halt(long, const char *, const char *, void *);
static void	on_desc_ended(void *);

/* --- setup -------------------------------------------------------------- */

static void
set_caps(struct sink *s, const char *type)
{
	s->request_cap = codec_request_cap(type,
	    (size_t)s->fc->max_buffer_bytes);
}

static void
sink_freed(struct closer *c)
{
	free(container_of(c, struct sink, closer));
}

static bool
ids_in_keys(const struct conf_flow *fc)
{
	struct partkey	*pk = partkey_new(fc->partition_key_option);
	bool		 ids = partkey_carries_id(pk);

	partkey_free(pk);
	return ids;
}

struct sink *
sink_new(uv_loop_t *loop, struct disapi *api, const struct conf *conf,
    const struct conf_flow *fc, struct deadletter *dlq,
    struct metrics_flow *m, const struct sink_cbs *cbs)
{
	struct sink	*s;
	struct sinkdesc_cbs desc_cbs = { on_seed, on_described, on_desc_halt,
	    on_desc_ended, NULL };

	s = xcalloc(1, sizeof(*s));
	desc_cbs.arg = s;
	s->loop = loop;
	s->api = api;
	s->conf = conf;
	s->fc = fc;
	snprintf(s->what, sizeof(s->what), "PutRecords to [%s]", fc->stream);
	s->m = m;
	s->cbs = *cbs;
	s->state = SINK_DESCRIBING;
	s->body = putbody_new(conf);
	s->desc = sinkdesc_new(loop, api, conf, fc, m, &desc_cbs);
	uv_timer_init(loop, &s->timer);
	closer_init(&s->closer, sink_freed);
	aimd_init(&s->aimd, s->fc->ordered ? 1.0 : (double)fc->max_in_flight);
	s->seq = seqmark_new();
	s->ids = ids_in_keys(fc);
	s->recs.flow = fc->name;
	s->recs.stream = fc->stream;
	s->recs.dlq = dlq;
	s->recs.m = m;
	s->recs.seq = s->seq;
	set_caps(s, fc->stream_type);
	return s;
}

void
sink_start(struct sink *s)
{
	if (s->fc->stream_id[0] != '\0') {
		log_info("DISStream %s type is %s", s->fc->stream_id,
		    s->fc->stream_type);
		s->described = true;
		sink_set_state(s, SINK_READY);
		return;
	}
	sinkdesc_start(s->desc);
}

size_t
sink_pending(const struct sink *s)
{
	return s->q.pending;
}

size_t
sink_inflight(const struct sink *s)
{
	/* A DescribeStream on the wire too: its reply reaches the sink, so
	 * a reload frees a drained flow only once it ended. */
	return s->inflight + (sinkdesc_busy(s->desc) ? 1 : 0);
}

size_t
sink_window(const struct sink *s)
{
	return aimd_window(&s->aimd);
}

enum sink_state
sink_state(const struct sink *s)
{
	return s->state;
}

size_t
sink_request_cap(const struct sink *s)
{
	return s->request_cap;
}

size_t
sink_record_cap(const struct sink *s)
{
	return s->request_cap;
}

/* --- DescribeStream (sinkdesc.c) -------------------------------------- */

static void
on_seed(int32_t part, int64_t last, void *arg)
{
	struct sink	*s = arg;

	seqmark_seed(s->seq, part, last);
}

static void
on_described(const char *type, void *arg)
{
	struct sink	*s = arg;

	set_caps(s, type);
	s->described = true;
	s->last_halt_log_ms = 0;
	sink_set_state(s, SINK_READY);
	sink_release_waiting(s);
}

static void
on_desc_halt(long status, const char *code, const char *msg, void *arg)
{
	struct sink	*s = arg;

	sink_set_state(s, SINK_PAUSED);
	sink_halt(s, status, code, msg);
}

static void
on_desc_ended(void *arg)
{
	struct sink	*s = arg;

	if (s->cbs.ended != NULL)
		s->cbs.ended(s->cbs.arg);
}

/* --- teardown ----------------------------------------------------------- */

static void
give_back_list(struct sink *s, struct sink_batch *list)
{
	struct sink_batch *sb;

	while ((sb = list) != NULL) {
		list = sb->next;
		sb->next = NULL;
		sink_hand_back(s, sb, false);
	}
}

void
sink_cancel(struct sink *s)
{
	struct sink_batch *w, *t;

	sink_set_state(s, SINK_CLOSING);
	uv_timer_stop(&s->timer);
	sinkdesc_cancel(s->desc);
	sinkdoubt_cancel(s);
	w = sinkq_take_waiting(&s->q);
	t = sinkq_take_timed(&s->q);
	s->probe = NULL;
	give_back_list(s, w);
	give_back_list(s, t);
}

void
sink_log_puts(struct sink *s)
{
	if (s != NULL)
		sinkrecs_log_puts(&s->recs);
}

void
sink_free(struct sink *s)
{
	if (s == NULL)
		return;
	sinkrecs_log_puts(&s->recs);
	sink_cancel(s);
	seqsnap_unpin(s->doubt);
	s->doubt = NULL;
	seqmark_free(s->seq);
	s->seq = NULL;
	putbody_free(s->body);
	sinkdesc_free(s->desc);
	s->desc = NULL;
	closer_close(&s->closer, (uv_handle_t *)&s->timer);
	closer_release(&s->closer);
}
