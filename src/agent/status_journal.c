/*
 * `disagent status` for a journal flow (status.h): the position the state
 * file holds (the cursor of the last entry delivered, and its time) and how
 * far the journal has gone past it, measured now by reading the journal
 * the way the flow does (journal_position): the entries after the
 * position, up to a cap, and the time of the newest one.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include "agent/status.h"
#include "conf/conf.h"
#include "journal/journal.h"

/* Counting stops here: a flow this far behind is far behind. */
#define COUNT_CAP	1000000

static void
put_time(FILE *out, uint64_t usec)
{
	struct tm	 tm;
	time_t		 t = (time_t)(usec / 1000000);
	char		 s[64];

	if (usec == 0 || gmtime_r(&t, &tm) == NULL ||
	    strftime(s, sizeof(s), "%Y-%m-%d %H:%M:%S UTC", &tm) == 0) {
		fputs("an unknown time", out);
		return;
	}
	fputs(s, out);
}

void
status_journal(FILE *out, const struct conf_flow *fc, const char *cursor)
{
	struct journal_position p;
	char		 err[256];

	if (journal_position(fc, cursor, COUNT_CAP, &p, err,
	    sizeof(err)) != 0) {
		fprintf(out, "  cannot read the journal now: %s\n", err);
		if (cursor != NULL)
			fprintf(out, "  position: %s\n", cursor);
		return;
	}
	fputs("  position: ", out);
	if (cursor == NULL)
		fprintf(out, "none yet (nothing delivered; it starts %s)\n",
		    fc->initial_position == POS_END_OF_FILE ?
		    "with the entries after its first start" :
		    "at the oldest entry kept");
	else {
		put_time(out, p.at);
		fprintf(out, " (%s)%s\n", cursor, p.gone ? ", no longer in the "
		    "journal: the agent goes on from the oldest entry left" :
		    "");
	}
	fprintf(out, "  behind:   %s%" PRIu64 " entr%s", p.more ? "more than " :
	    "", p.behind, p.behind == 1 ? "y" : "ies");
	if (p.behind > 0 && p.newest != 0) {
		fputs("; the newest is from ", out);
		put_time(out, p.newest);
		if (p.at != 0 && p.newest >= p.at)
			fprintf(out, ", %" PRIu64 " s later",
			    (p.newest - p.at) / 1000000);
	}
	fputc('\n', out);
}
