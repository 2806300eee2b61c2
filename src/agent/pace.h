/*
 * The pace of a flow's coalesced reads (readCoalesceMillis): with the
 * watches paused, its files are read in passes (files.h: files_passes,
 * files_pace); at a pace that fills a batch in several of them, the
 * period stretches so that one pass reads about four fifths of a batch
 * (maxBufferSizeRecords), within maxBufferAgeMillis and ten periods, and
 * each such pass sends what it read at its end.  A line waits no longer
 * than it did for its batch to fill, or for its age; the agent wakes once
 * a request instead of once a period (issue 25: 500-record batches of
 * 2,000 lines a second went out every other pass of 100 ms).  Faster
 * writes shorten the period again, down to readCoalesceMillis, and the
 * files set drops the pace when the watches come back.
 */
#ifndef DISAGENT_PACE_H
#define DISAGENT_PACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct conf_flow;
struct source;

struct pace {
	uint64_t	 seen;		/* the last pass seen (source_files_passes) */
	uint64_t	 gap;		/* the ms of writes it found */
	size_t		 total;		/* records read since it began */
	uint64_t	 ms;		/* the period asked for, or 0 */
};

/* A pump begins: a new pass starts a new count. */
void	pace_pump(struct pace *, const struct source *);
/* One record read. */
static inline void
pace_record(struct pace *p)
{
	p->total++;
}
/*
 * The pump read everything readable: ask the source for the period (fc:
 * the flow's keys); whether what the pass read goes out now.
 */
bool	pace_read_all(struct pace *, struct source *,
	    const struct conf_flow *);

#endif
