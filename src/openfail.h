/*
 * Matching files that cannot be opened: each is reported once per error
 * (again when the error changes, or hourly), with a hint for permission
 * errors, and counted; not at every rescan.  The scan marks the ones that
 * failed again and sweeps the rest, which are reported as recovered.
 */
#ifndef DISAGENT_OPENFAIL_H
#define DISAGENT_OPENFAIL_H

#include <stdbool.h>
#include <stdint.h>

struct openfail;

/* path failed with errno err in flow (borrowed); *count grows when it is
 * reported. */
void	openfail_report(struct openfail **, const char *flow,
	    const char *path, int err, uint64_t *count);
/* After a scan: forget (and report recovered) those that did not fail
 * again; all: forget every entry quietly. */
void	openfail_sweep(struct openfail **, const char *flow, bool all);

#endif
