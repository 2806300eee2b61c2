/*
 * Renamed flows (renamed.h): the same stream and pattern under another
 * name carry the positions on.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "agent/renamed.h"
#include "base/log.h"
#include "base/pattern.h"
#include "base/util.h"
#include "conf/conf.h"
#include "state/registry.h"

/* The stream as the state file keeps it: the name, or id:ID. New. */
static char *
stream_of(const struct conf_flow *fc)
{
	if (fc->stream_id != NULL && fc->stream_id[0] != '\0')
		return xasprintf("id:%s", fc->stream_id);
	return xstrdup(fc->stream != NULL ? fc->stream : "");
}

bool
renamed_same(const struct conf_flow *fc, const char *stream,
    const char *pattern)
{
	char	*s = stream_of(fc);
	char	*p = pattern_recursive(fc->file_pattern, fc->recursive);
	bool	 same = strcmp(s, stream) == 0 && strcmp(p, pattern) == 0;

	free(s);
	free(p);
	return same;
}

bool
renamed_pair(const struct conf_flow *a, const struct conf_flow *b)
{
	char	*s = stream_of(a);
	char	*p = pattern_recursive(a->file_pattern, a->recursive);
	bool	 same;

	same = a->source != SOURCE_JOURNAL && b->source == a->source &&
	    a->enable && b->enable && renamed_same(b, s, p);
	free(s);
	free(p);
	return same;
}

void
renamed_describe(struct registry *reg, const struct conf *c)
{
	char	*s, *p;
	size_t	 i;

	for (i = 0; i < c->nflows; i++) {
		if (c->flows[i].source == SOURCE_JOURNAL)
			continue;
		s = stream_of(&c->flows[i]);
		p = pattern_recursive(c->flows[i].file_pattern,
		    c->flows[i].recursive);
		registry_describe_flow(reg, c->flows[i].name, s, p);
		free(s);
		free(p);
	}
}

void
renamed_carry(struct registry *reg, const char *from,
    const struct conf_flow *to)
{
	size_t	 n = registry_rename_flow(reg, from, to->name);

	log_info("[%s] carries on the positions of flow [%s] (renamed; the "
	    "same DISStream and filePattern): %zu file%s", to->name, from, n,
	    n == 1 ? "" : "s");
}

/* The old flow of the state file fc takes over, or NULL (a WARN when one
 * read the same stream or the same pattern only). */
static const char *
old_name(struct registry *reg, const struct conf *c,
    const struct conf_flow *fc, const char **names, size_t n)
{
	const struct reg_flowdesc *d;
	char	*s = stream_of(fc);
	char	*p = pattern_recursive(fc->file_pattern, fc->recursive);
	const char *found = NULL;
	size_t	 i;

	for (i = 0; i < n && found == NULL; i++) {
		d = registry_flow_desc(reg, names[i]);
		if (d == NULL || conf_flow_named(c, names[i]) != NULL ||
		    registry_flow_count(reg, names[i]) == 0)
			continue;
		if (strcmp(d->stream, s) == 0 && strcmp(d->pattern, p) == 0)
			found = names[i];
		else if (strcmp(d->stream, s) == 0 ||
		    strcmp(d->pattern, p) == 0)
			log_warn("[%s] is new in the state file and reads "
			    "from initialPosition: flow [%s], no longer "
			    "configured, read %s for stream %s; a flow "
			    "renamed with another DISStream or filePattern "
			    "does not carry its positions on", fc->name,
			    names[i], d->pattern, d->stream);
	}
	free(s);
	free(p);
	return found;
}

void
renamed_at_start(struct registry *reg, const struct conf *c)
{
	const char	**names, **from;
	size_t		  i, n;

	names = registry_flow_names(reg, &n);
	from = xcalloc(c->nflows + 1, sizeof(*from));
	for (i = 0; i < c->nflows; i++) {
		if (!c->flows[i].enable ||
		    c->flows[i].source == SOURCE_JOURNAL ||
		    registry_flow_count(reg, c->flows[i].name) > 0)
			continue;
		from[i] = old_name(reg, c, &c->flows[i], names, n);
		if (from[i] != NULL)
			renamed_carry(reg, from[i], &c->flows[i]);
	}
	renamed_describe(reg, c);
	/* The ids of records the run before sent hash the old name: the
	 * restart's read after a crash looks for those (dedupe_plan.c). */
	for (i = 0; i < c->nflows; i++)
		if (from[i] != NULL)
			registry_flow_was(reg, c->flows[i].name, from[i]);
	free(from);
	free(names);
}
