/*
 * The source interface (source.h): the one place that picks a flow's kind
 * of source, and the calls every kind answers.
 */
#include "config.h"

#include <stddef.h>

#include "agent/source.h"
#include "conf/conf.h"

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

bool
source_add(struct source *s, const struct source_rec *r, uint64_t *range)
{
	return s->ops->add(s, r, range);
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

struct source_files *
source_files(const struct source *s)
{
	return s->files;
}
