/*
 * Matching files that cannot be opened: each is reported once per error
 * (again when the error changes, or hourly), with a hint for permission
 * errors, and counted; not at every rescan.  The scan marks the ones that
 * failed again and sweeps the rest, which are reported as recovered.
 */
#ifndef DISAGENT_OPENFAIL_H
#define DISAGENT_OPENFAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct openfail;

/*
 * path failed with errno err in flow (borrowed); why, when not NULL, says
 * it instead of strerror(err).  Returns whether it was reported now.
 */
bool	openfail_report(struct openfail **, const char *flow,
	    const char *path, int err, const char *why);
/* How many matching files fail to open now. */
size_t	openfail_count(struct openfail *const *);
/* After a scan: forget (and report recovered) those that did not fail
 * again; all: forget every entry quietly. */
void	openfail_sweep(struct openfail **, const char *flow, bool all);

#endif
