/*
 * Open failures reported once (openfail.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"
#include "tail/openfail.h"

#define REPEAT_MS	(3600 * 1000)

struct openfail {
	char		*path;
	int		 err;
	uint64_t	 warned_ms;
	bool		 seen;		/* failed again in the current scan */
	struct openfail	*next;
};

static const char *
hint(int err)
{
	if (err == EACCES || err == EPERM)
		return "; the agent's user cannot read it: add that user to a "
		    "group that can (the packages put disagent in adm), or "
		    "see docs/operations.md for root-only logs";
	return "";
}

bool
openfail_report(struct openfail **list, const char *flow, const char *path,
    int err, const char *why)
{
	struct openfail	*o;
	uint64_t	 now = mono_ms();

	for (o = *list; o != NULL; o = o->next)
		if (strcmp(o->path, path) == 0)
			break;
	if (o == NULL) {
		o = xcalloc(1, sizeof(*o));
		o->path = xstrdup(path);
		o->next = *list;
		*list = o;
	} else if (o->err == err && now - o->warned_ms < REPEAT_MS) {
		o->seen = true;
		return false;
	}
	log_warn("[%s] %s: cannot open: %s; will retry at every rescan%s",
	    flow, path, why != NULL ? why : strerror(err), hint(err));
	o->err = err;
	o->warned_ms = now;
	o->seen = true;
	return true;
}

size_t
openfail_count(struct openfail *const *list)
{
	const struct openfail	*o;
	size_t			 n = 0;

	for (o = *list; o != NULL; o = o->next)
		n++;
	return n;
}

void
openfail_sweep(struct openfail **list, const char *flow, bool all)
{
	struct openfail	**pp, *o;

	for (pp = list; (o = *pp) != NULL;) {
		if (o->seen && !all) {
			o->seen = false;
			pp = &o->next;
			continue;
		}
		if (!all)
			log_info("[%s] %s: no longer failing to open", flow,
			    o->path);
		*pp = o->next;
		free(o->path);
		free(o);
	}
}
