/*
 * Saving the registry (registry.h): the state file replaced atomically
 * (atomicfile.c: path.tmp, fsync, rename, directory fsync) with the
 * previous generation kept as path.bak, synchronously or with the disk's
 * part on the loop's thread pool.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/atomicfile.h"
#include "base/log.h"
#include "base/util.h"
#include "state/registry.h"
#include "state/registry_int.h"
#include "state/regtable.h"
#include "state/statefile.h"

/* --- saving ------------------------------------------------------------ */

/*
 * Make path.bak the current path (if any) without path ever missing: stage
 * a link as path.bak.tmp and rename it over path.bak, or copy path to
 * path.bak where links are not supported.  Failure is only a warning: the
 * new state matters more than the old one.  Called by the commit between
 * the new file's fsync and its rename.
 */
static int
keep_backup_at(const struct registry *reg)
{
	int		 r = 0;

	if (unlink(reg->baktmp) == -1 && errno != ENOENT)
		r = -errno;
	if (r == 0 && link(reg->path, reg->baktmp) == -1) {
		r = -errno;
		if (r == -ENOENT)
			return 0;	/* no previous generation */
		if (r == -EPERM || r == -ENOTSUP || r == -EOPNOTSUPP ||
		    r == -EMLINK || r == -EXDEV)
			return atomicfile_copy(reg->path, reg->bak, 0600,
			    ATOMICFILE_SYNC);
	}
	if (r == 0 && rename(reg->baktmp, reg->bak) == -1)
		r = -errno;
	/* rename() of two links to one file does nothing: drop the stage. */
	unlink(reg->baktmp);
	return r;
}

static void
backup_failed(const struct registry *reg, int r)
{
	log_warn("cannot keep %s as %s: %s", reg->path, reg->bak,
	    strerror(-r));
}

static void
keep_backup(void *arg)
{
	struct registry	*reg = arg;
	int		 r;

	if ((r = keep_backup_at(reg)) < 0)
		backup_failed(reg, r);
}

/* What a save of changes (and of added entries) wrote, or why not. */
static void
took(struct registry *reg, const struct atomicfile *af, int r,
    uint64_t changes, uint64_t added)
{
	if (r == 0) {
		reg->saved = changes;
		reg->added_saved = added;
		log_debug("saved %zu entries to %s", reg->tab.n, reg->path);
	} else {
		reg->dirty = true;
		log_error("cannot save state: %s %s: %s", af->op, af->file,
		    strerror(-r));
	}
}

int
registry_save(struct registry *reg, bool force)
{
	struct atomicfile af;
	int		 r;

	registry_save_wait(reg);
	if (!reg->dirty && !force) {
		reg->saved = reg->changes;
		return 0;
	}
	r = atomicfile_open(&af, reg->path, 0600, ATOMICFILE_SYNC);
	if (r == 0)
		r = statefile_write(&af, &reg->tab);
	if (r == 0)
		r = atomicfile_commit(&af, keep_backup, reg);
	if (r == 0)
		reg->dirty = false;
	took(reg, &af, r, reg->changes, reg->added);
	atomicfile_cleanup(&af);
	return r;
}

/* --- saves on the thread pool ------------------------------------------- */

static void
flight_keep_backup(void *arg)
{
	struct reg_flight *fl = arg;

	fl->bak_err = keep_backup_at(fl->reg);
}

/* On a thread of the pool: nothing but the file. */
static void
flight_work(uv_work_t *req)
{
	struct reg_flight *fl = container_of(req, struct reg_flight, req);
	int		 rc;

	rc = atomicfile_commit(&fl->af, flight_keep_backup, fl);
	pthread_mutex_lock(&fl->mu);
	fl->rc = rc;
	fl->finished = true;
	pthread_cond_signal(&fl->cv);
	pthread_mutex_unlock(&fl->mu);
}

/* On the loop, once the work returned: the registry takes the result. */
static void
flight_apply(struct reg_flight *fl)
{
	struct registry	*reg = fl->reg;

	if (reg == NULL)
		return;
	fl->reg = NULL;
	reg->flight = NULL;
	if (fl->bak_err < 0)
		backup_failed(reg, fl->bak_err);
	took(reg, &fl->af, fl->rc, fl->changes, fl->added);
	atomicfile_cleanup(&fl->af);
}

static void
flight_after(uv_work_t *req, int status)
{
	struct reg_flight *fl = container_of(req, struct reg_flight, req);

	(void)status;		/* never cancelled */
	flight_apply(fl);
	if (fl->done != NULL)
		fl->done(fl->rc, fl->arg);
	pthread_cond_destroy(&fl->cv);
	pthread_mutex_destroy(&fl->mu);
	free(fl);
}

int
registry_save_start(struct registry *reg, uv_loop_t *loop,
    void (*done)(int, void *), void *arg)
{
	struct reg_flight *fl;
	int		 r;

	registry_save_wait(reg);
	if (!reg->dirty) {
		reg->saved = reg->changes;
		return 1;
	}
	fl = xcalloc(1, sizeof(*fl));
	r = atomicfile_open(&fl->af, reg->path, 0600, ATOMICFILE_SYNC |
	    ATOMICFILE_DEFER);
	if (r == 0)
		r = statefile_write(&fl->af, &reg->tab);
	if (r != 0) {
		log_error("cannot save state: %s %s: %s", fl->af.op,
		    fl->af.file, strerror(-r));
		atomicfile_cleanup(&fl->af);
		free(fl);
		return r;
	}
	fl->reg = reg;
	fl->changes = reg->changes;
	fl->added = reg->added;
	fl->done = done;
	fl->arg = arg;
	pthread_mutex_init(&fl->mu, NULL);
	pthread_cond_init(&fl->cv, NULL);
	reg->dirty = false;	/* a change from now on is not in this save */
	reg->flight = fl;
	/* Fails only without a work function. */
	if ((r = uv_queue_work(loop, &fl->req, flight_work, flight_after)) != 0)
		fatalx("uv_queue_work: %s", uv_strerror(r));
	return 0;
}

bool
registry_saving(const struct registry *reg)
{
	return reg->flight != NULL;
}

void
registry_save_wait(struct registry *reg)
{
	struct reg_flight *fl = reg->flight;

	if (fl == NULL)
		return;
	pthread_mutex_lock(&fl->mu);
	while (!fl->finished)
		pthread_cond_wait(&fl->cv, &fl->mu);
	pthread_mutex_unlock(&fl->mu);
	flight_apply(fl);
}

uint64_t
registry_changes(const struct registry *reg)
{
	return reg->changes;
}

bool
registry_change_saved(const struct registry *reg, uint64_t change)
{
	return change <= reg->saved;
}
