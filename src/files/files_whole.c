/*
 * files.c's side of a whole-file flow (files_int.h, wholefile.h):
 * wholefile decides, this tracks.  At each of wholefile's turns the
 * tailers report where they got to, a delivered one is dropped, and the
 * files wholefile hands out are tracked, up to their size when ready.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "files/files_int.h"
#include "tail/tailer.h"
#include "files/wholefile.h"

void
files_whole_turn(void *arg)
{
	struct files	*fs = arg;
	struct wholefile_progress p;
	struct wholefile_next nx;
	struct tracked	**pp, *k;
	uint64_t	 id;
	bool		 handed = false;

	pp = &fs->list;
	while (*pp != NULL) {
		k = *pp;
		p.read_off = tailer_read_off(k->t);
		p.waits = tailer_waits_for_quiet(k->t, false);
		p.pending = tailer_pending(k->t);
		if (wholefile_progress(fs->wf, tailer_id(k->t), &p))
			files_unlink(fs, pp, k);	/* delivered */
		else
			pp = &k->next;
	}
	while (wholefile_next(fs->wf, &nx)) {
		id = files_track(fs, nx.path, &nx.st, nx.offset, false);
		wholefile_tracked(fs->wf, id, id == 0 ? errno : 0);
		handed = handed || id != 0;
	}
	if (handed)
		fs->readable(fs->arg);
}
