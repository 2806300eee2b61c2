/*
 * The life of a flow's struct files (files.h): made with its watcher,
 * successors, whole-file state, reaper and own-file list, and freed with
 * all of them.  At the top of the folder: it calls into every part and
 * none calls it.
 */
#include "config.h"

#include <stdlib.h>

#include "base/closer.h"
#include "base/pool.h"
#include "conf/conf.h"
#include "files/files.h"
#include "files/files_int.h"
#include "files/ownfiles.h"
#include "files/reaper.h"
#include "files/successor.h"
#include "files/watcher.h"
#include "files/wholefile.h"
#include "tail/copies.h"
#include "tail/openfail.h"

static void	files_freed(struct closer *);

struct files *
files_new(uv_loop_t *loop, const struct conf *conf,
    const struct conf_flow *fc, struct registry *reg,
    const struct framer *fr, struct metrics_flow *m, bool once,
    files_cb readable, void *arg, char *err, size_t errlen)
{
	struct files	*fs;

	fs = xcalloc(1, sizeof(*fs));
	fs->watcher = watcher_new(loop, fc, once ? NULL : files_fs_event, fs,
	    err, errlen);
	if (fs->watcher == NULL) {
		free(fs);
		return NULL;
	}
	fs->loop = loop;
	fs->conf = conf;
	fs->fc = fc;
	fs->reg = reg;
	fs->fr = fr;
	fs->m = m;
	fs->once = once;
	fs->readable = readable;
	fs->arg = arg;
	fs->max_open = files_open_budget(conf, fc);
	fs->succ = successors_new((size_t)fc->header_bytes);
	files_index_init(fs);
	uv_timer_init(loop, &fs->rescan_timer);
	closer_init(&fs->closer, files_freed);
	fs->wf = wholefile_new(loop, fc, reg, m, once, files_whole_turn, fs);
	fs->reap = reaper_new(fc, reg, m);
	fs->own = ownfiles_new(conf);
	return fs;
}

/* The timer closed: the memory goes. */
static void
files_freed(struct closer *c)
{
	free(container_of(c, struct files, closer));
}

void
files_free(struct files *fs)
{
	struct tracked	*k;

	if (fs == NULL)
		return;
	files_stop(fs);
	wholefile_free(fs->wf);
	fs->wf = NULL;
	reaper_free(fs->reap);
	ownfiles_free(fs->own);
	fs->own = NULL;
	keymap_cleanup(&fs->byino);	/* no invariant to keep now */
	while ((k = fs->list) != NULL)
		files_unlink(fs, &fs->list, k);
	openfail_sweep(&fs->fails, fs->fc->name, true);
	files_spool_free(fs);
	while (fs->norphans > 0)	/* kept for a successor still written */
		free(fs->orphans[--fs->norphans].path);
	free(fs->orphans);
	successors_free(fs->succ);
	free(fs->scratch);
	free(fs->held);
	copies_cleanup(&fs->waiting);
	keymap_cleanup(&fs->byid);
	closer_close(&fs->closer, (uv_handle_t *)&fs->rescan_timer);
	closer_release(&fs->closer);
}
