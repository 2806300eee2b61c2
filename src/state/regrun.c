/*
 * How the last run ended (registry.h, struct reg_run): whether it stopped
 * clean, when it saved, and per stream and partition the last sequence
 * number it saw acknowledged -- the floors a restart's read starts from.
 * Plain data below the registry: the table, the state file and the
 * registry all use it.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "state/registry.h"

void
reg_run_free(struct reg_run *run)
{
	size_t	 i;

	if (run == NULL)
		return;
	for (i = 0; i < run->nstreams; i++) {
		free(run->streams[i].name);
		free(run->streams[i].seq);
	}
	free(run->streams);
	free(run);
}

const struct reg_stream *
reg_run_stream(const struct reg_run *run, const char *name)
{
	size_t	 i;

	for (i = 0; run != NULL && i < run->nstreams; i++)
		if (strcmp(run->streams[i].name, name) == 0)
			return &run->streams[i];
	return NULL;
}

struct reg_run *
reg_run_new(int64_t saved_ms, int64_t land_by_ms, bool clean)
{
	struct reg_run	*run = xcalloc(1, sizeof(*run));

	run->saved_ms = saved_ms;
	run->land_by_ms = land_by_ms;
	run->clean = clean;
	return run;
}

void
reg_run_set_started(struct reg_run *run, int64_t started_ms)
{
	run->started_ms = started_ms;
}

void
reg_run_not_clean(struct reg_run *run)
{
	run->clean = false;
}

struct reg_stream *
reg_run_add_stream(struct reg_run *run, const char *name)
{
	struct reg_stream *st;
	size_t		 i;

	for (i = 0; i < run->nstreams; i++)
		if (strcmp(run->streams[i].name, name) == 0)
			return &run->streams[i];
	run->streams = xrealloc(run->streams,
	    (run->nstreams + 1) * sizeof(*run->streams));
	st = &run->streams[run->nstreams++];
	memset(st, 0, sizeof(*st));
	st->name = xstrdup(name);
	return st;
}

void
reg_stream_put(struct reg_stream *st, int32_t part, int64_t last)
{
	size_t	 i;

	for (i = 0; i < st->n && st->seq[i].part < part; i++)
		;
	if (i < st->n && st->seq[i].part == part) {
		if (last < st->seq[i].last)
			st->seq[i].last = last;
		return;
	}
	st->seq = xrealloc(st->seq, (st->n + 1) * sizeof(*st->seq));
	memmove(st->seq + i + 1, st->seq + i, (st->n - i) * sizeof(*st->seq));
	st->seq[i].part = part;
	st->seq[i].last = last;
	st->n++;
}

int64_t
reg_stream_get(const struct reg_stream *st, int32_t part)
{
	size_t	 i;

	for (i = 0; st != NULL && i < st->n; i++)
		if (st->seq[i].part == part)
			return st->seq[i].last;
	return -2;
}
