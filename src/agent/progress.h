/*
 * The progress lines operators grep for, as the DIS Agent prints them, every
 * log.statusReportingPeriodSeconds, from the flows' counters (metrics.h):
 *
 *   Agent: Progress: [N records (B bytes) / N files] parsed, and
 *     [N records / N files] sent successfully to destinations. Uptime: Nms
 *   Agent: Tailing is X MB (N bytes) behind.
 *
 * plus, when something failed, the failures by code since the last report;
 * when a restart skipped records known delivered, how many and why (once
 * each time the number grows); and the systemd STATUS= line.
 */
#ifndef DISAGENT_PROGRESS_H
#define DISAGENT_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

#include "base/metrics.h"

/* What the last report saw, to print what changed since.  Zero it. */
struct progress {
	struct metrics_code_count last_failed[4 * METRICS_NCODES];
	size_t		 nlast_failed;
	uint64_t	 last_skipped;	/* records a restart skipped */
};

/* Log the progress lines for the n flows (borrowed for the call). */
void	progress_report(struct progress *, const struct metrics_flow *const *,
	    size_t n, uint64_t uptime_ms);

#endif
