/*
 * The pace of a flow's coalesced reads (pace.h).
 */
#include "config.h"

#include "agent/pace.h"
#include "agent/source.h"
#include "agent/source_files.h"
#include "base/log.h"
#include "base/util.h"
#include "conf/conf.h"

void
pace_pump(struct pace *p, const struct source *src)
{
	uint64_t	 pass, gap = 0;

	pass = source_files(src) != NULL ?
	    source_files_passes(source_files(src), &gap) : 0;
	if (pass == 0) {		/* the watches are on */
		p->seen = 0;
		p->ms = 0;
	} else if (pass != p->seen) {
		p->seen = pass;
		p->gap = gap;
		p->total = 0;
	}
}

bool
pace_read_all(struct pace *p, struct source *src, const struct conf_flow *fc)
{
	uint64_t	 period = (uint64_t)fc->read_coalesce_ms, want, cap;

	if (p->seen == 0)
		return false;
	if (p->gap > 0 && p->total >= 2) {
		want = p->gap * (uint64_t)fc->max_buffer_records * 4 /
		    (5 * (uint64_t)p->total);
		cap = MIN((uint64_t)fc->max_buffer_age_ms, 10 * period);
		want = MIN(want, cap);
		if (want <= period)
			want = 0;
		/* Within an eighth of the pace asked for: keep it. */
		else if (p->ms != 0 && (want > p->ms ? want - p->ms :
		    p->ms - want) * 8 < p->ms)
			want = p->ms;
		if ((want != 0) != (p->ms != 0))
			log_debug("[%s] coalesced reads %s", fc->name,
			    want != 0 ? "follow the batches: a pass reads "
			    "most of one" : "every readCoalesceMillis again");
		p->ms = want;
		if (source_files(src) != NULL)
			source_files_pace(source_files(src), want);
	}
	return p->ms != 0 && p->total > 0;
}
