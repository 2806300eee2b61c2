/*
 * Progress lines (progress.h): sums over the flows' counter sets.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "agent/progress.h"
#include "base/log.h"
#include "base/notify.h"

static uint64_t *
code_slot(struct metrics_code_count *v, size_t *n, size_t max,
    const char *code)
{
	size_t	 i;

	for (i = 0; i < *n; i++)
		if (strcmp(v[i].code, code) == 0)
			return &v[i].count;
	if (*n == max)
		return NULL;
	snprintf(v[*n].code, sizeof(v[*n].code), "%s", code);
	v[*n].count = 0;
	return &v[(*n)++].count;
}

/* "DIS.4303 12, DIS.5000 3": records failed by code since the last line. */
static void
report_failures(struct progress *p, const struct metrics_flow *const *flows,
    size_t nflows)
{
	struct metrics_code_count cur[4 * METRICS_NCODES];
	struct buf	 line;
	size_t		 ncur = 0, i, j;
	uint64_t	*slot, before;

	for (i = 0; i < nflows; i++)
		for (j = 0; j < flows[i]->nfailed; j++) {
			slot = code_slot(cur, &ncur, ARRAY_SIZE(cur),
			    flows[i]->failed[j].code);
			if (slot != NULL)
				*slot += flows[i]->failed[j].count;
		}
	buf_init(&line);
	for (i = 0; i < ncur; i++) {
		slot = code_slot(p->last_failed, &p->nlast_failed,
		    ARRAY_SIZE(p->last_failed), cur[i].code);
		before = slot != NULL && *slot <= cur[i].count ? *slot : 0;
		if (cur[i].count > before)
			buf_printf(&line, "%s%s %" PRIu64, line.len ? ", " : "",
			    cur[i].code, cur[i].count - before);
		if (slot != NULL)
			*slot = cur[i].count;
	}
	if (line.len > 0)
		log_info("Agent: failed records since the last report: %s",
		    line.data);
	buf_cleanup(&line);
}

/* The counters the progress lines sum. */
struct sums {
	uint64_t	 read, bytes, sent, retried, dead, truncated, unacked;
	uint64_t	 filtered;
	uint64_t	 tracked, done, behind, paused;
	uint64_t	 skipped[2];
};

static void
sum(const struct metrics_flow *const *flows, size_t n, struct sums *s)
{
	size_t	 i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < n; i++) {
		s->read += flows[i]->records_read;
		s->bytes += flows[i]->bytes_read;
		s->sent += flows[i]->records_sent;
		s->retried += flows[i]->records_retried;
		s->unacked += flows[i]->replies_unacknowledged;
		s->dead += flows[i]->records_dead_lettered;
		s->truncated += flows[i]->records_truncated;
		s->filtered += flows[i]->records_filtered;
		s->tracked += flows[i]->files_tracked;
		s->done += flows[i]->files_done;
		s->behind += flows[i]->bytes_behind;
		s->paused += flows[i]->paused;
		s->skipped[0] += flows[i]->records_skipped[0];
		s->skipped[1] += flows[i]->records_skipped[1];
	}
}

void
progress_report(struct progress *p, const struct metrics_flow *const *flows,
    size_t n, uint64_t uptime_ms)
{
	struct sums	 s;
	double		 mb;

	sum(flows, n, &s);
	mb = (double)s.behind / (1024.0 * 1024.0);
	log_info("Agent: Progress: [%" PRIu64 " records (%" PRIu64
	    " bytes) / %" PRIu64 " files] parsed, and [%" PRIu64
	    " records / %" PRIu64 " files] sent successfully to destinations."
	    " Uptime: %" PRIu64 "ms", s.read, s.bytes, s.tracked + s.done,
	    s.sent, s.done, uptime_ms);
	log_info("Agent: Tailing is %.2f MB (%" PRIu64 " bytes) behind.", mb,
	    s.behind);
	(void)notify_status("%" PRIu64 " records sent, %.2f MB behind, "
	    "%" PRIu64 " files, %d paused flows", s.sent, mb, s.tracked,
	    (int)s.paused);
	if (s.filtered > 0)
		log_info("Agent: %" PRIu64 " records left out by "
		    "lineIncludePattern / lineExcludePattern (committed, not "
		    "sent)", s.filtered);
	report_failures(p, flows, n);
	if (s.skipped[0] + s.skipped[1] != p->last_skipped) {
		p->last_skipped = s.skipped[0] + s.skipped[1];
		log_info("Agent: %" PRIu64 " records not sent again since the "
		    "start, delivered before it: %" PRIu64 " acknowledged "
		    "before the restart (the state file), %" PRIu64 " found in "
		    "the stream by the restart read", p->last_skipped,
		    s.skipped[0], s.skipped[1]);
	}
	/* Sent again (a failed record, or every record of a failed request
	 * or of a reply that acknowledged none), apart from those DIS
	 * rejected for good. */
	if (s.retried > 0 || s.dead > 0 || s.paused || s.truncated > 0 ||
	    s.unacked > 0)
		log_info("Agent: %" PRIu64 " records sent again after a "
		    "failure, %" PRIu64 " dead-lettered, %" PRIu64 " truncated "
		    "to the record limit, %" PRIu64 " PutRecords repl%s "
		    "acknowledged no record; %d flow%s paused", s.retried,
		    s.dead, s.truncated, s.unacked, s.unacked == 1 ? "y" : "ies",
		    (int)s.paused, s.paused == 1 ? "" : "s");
}
