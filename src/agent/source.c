/*
 * The source interface (source.h): the one place that picks a flow's kind
 * of source, and the calls every kind answers.
 */
#include "config.h"

#include <stddef.h>

#include "agent/source.h"
#include "conf/conf.h"
#include "files/files.h"

struct source *
source_new(uv_loop_t *loop, const struct conf *conf,
    const struct conf_flow *fc, struct registry *reg, struct metrics_flow *m,
    bool keep_delim, bool once, const struct source_cbs *cbs, char *err,
    size_t errlen)
{
	if (fc->source == SOURCE_JOURNAL)
		return source_journal_new(loop, conf, fc, reg, m, keep_delim,
		    once, cbs, err, errlen);
	return source_files_new(loop, conf, fc, reg, m, keep_delim, once, cbs,
	    err, errlen);
}

int
source_start(struct source *s)
{
	return s->ops->start(s);
}

void
source_stop(struct source *s)
{
	s->ops->stop(s);
}

void
source_free(struct source *s)
{
	if (s != NULL)
		s->ops->free(s);
}

bool
source_read(struct source *s, size_t *budget, size_t max_record)
{
	return s->ops->read(s, budget, max_record);
}

uint64_t
source_push(struct source *s, const struct source_rec *r)
{
	return s->ops->push(s, r);
}

void
source_extend(struct source *s, const struct source_rec *r, uint64_t range)
{
	s->ops->extend(s, r, range);
}

void
source_skip(struct source *s, const struct source_rec *r)
{
	s->ops->skip(s, r);
}

void
source_ack(struct source *s, uint64_t origin, uint64_t range)
{
	s->ops->ack(s, origin, range);
}

bool
source_all_read(const struct source *s)
{
	return s->ops->all_read(s);
}

void
source_gauges(const struct source *s, struct metrics_flow *m)
{
	if (s->ops->gauges != NULL)
		s->ops->gauges(s, m);
}

void
source_each_file(const struct source *s, source_file_fn fn, void *arg)
{
	if (s->ops->each_file != NULL)
		s->ops->each_file(s, fn, arg);
}

void
source_touch(struct source *s)
{
	if (s->ops->touch != NULL)
		s->ops->touch(s);
}

void
source_saved(struct source *s)
{
	if (s->ops->saved != NULL)
		s->ops->saved(s);
}

struct files_handover *
source_hand_over(struct source *s)
{
	return s->ops->hand_over != NULL ? s->ops->hand_over(s) : NULL;
}

size_t
source_adopt(struct source *s, struct files_handover *h)
{
	/* A flow that reads no files now (the journal, or none at all)
	 * has no use for its predecessor's files. */
	if (s == NULL || s->ops->adopt == NULL) {
		files_handover_free(h);
		return 0;
	}
	return s->ops->adopt(s, h);
}

void
source_spool(struct source *s, struct spool *sp)
{
	if (s->ops->spool != NULL)
		s->ops->spool(s, sp);
}

bool
source_known(struct source *s, const struct source_rec *r, const char *sent,
    size_t sentlen)
{
	return s->ops->known != NULL && s->ops->known(s, r, sent, sentlen);
}

void
source_skip_known(struct source *s, const struct source_rec *r)
{
	if (s->ops->skip_known != NULL)
		s->ops->skip_known(s, r);
	else
		s->ops->skip(s, r);
}

void
source_passed(struct source *s, const struct source_rec *r)
{
	if (s->ops->passed != NULL)
		s->ops->passed(s, r);
}

bool
source_is_newest(struct source *s, const struct source_rec *r,
    uint64_t range)
{
	return s->ops->is_newest == NULL || s->ops->is_newest(s, r, range);
}

bool
source_id_file(struct source *s, const struct source_rec *r,
    const struct hash_key *k, uint64_t *file, bool *fixed)
{
	return s->ops->id_file != NULL && s->ops->id_file(s, r, k, file,
	    fixed);
}

void
source_keep_acked(struct source *s, const struct files_acked *v, size_t n)
{
	if (s->ops->keep_acked != NULL)
		s->ops->keep_acked(s, v, n);
}

void
source_publish(struct source *s, const struct files_acked *v, size_t n)
{
	if (s->ops->publish != NULL)
		s->ops->publish(s, v, n);
}

bool
source_restart_pending(struct source *s)
{
	return s->ops->restart_pending != NULL && s->ops->restart_pending(s);
}

uint64_t
source_passes(const struct source *s, uint64_t *gap_ms)
{
	*gap_ms = 0;
	return s->ops->passes != NULL ? s->ops->passes(s, gap_ms) : 0;
}

void
source_pace(struct source *s, uint64_t ms)
{
	if (s->ops->pace != NULL)
		s->ops->pace(s, ms);
}
