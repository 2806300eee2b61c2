/*
 * Inside registry.c and registry_save.c: the registry itself, and a save
 * of it on the thread pool.  Nothing else includes it.
 */
#ifndef DISAGENT_REGISTRY_INT_H
#define DISAGENT_REGISTRY_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "base/atomicfile.h"
#include "state/registry.h"
#include "state/regtable.h"

struct registry {
	char		*path;
	char		*bak;		/* path.bak: the previous generation */
	char		*baktmp;	/* path.bak.tmp: link staged for .bak */
	char		*lockpath;	/* path.lock */
	int		 lock_fd;	/* -1 until registry_lock */
	struct reg_table tab;
	bool		 dirty;
	uint64_t	 changes;	/* every change so far */
	uint64_t	 saved;		/* changes written by the last save */
	uint64_t	 added;		/* entries made so far */
	uint64_t	 added_saved;	/* of them written by the last save */
	void		(*on_dirty)(void *);
	void		*on_dirty_arg;
	struct reg_flight *flight;	/* registry_save_start's, or NULL */
	reg_hold_fn	 hold;		/* registry_set_hold's, or NULL */
	void		*hold_arg;
};

/*
 * A save on the thread pool (registry_save_start).  The work function
 * touches only af (the content in memory, the paths) and the registry's
 * paths, which never change; the loop's thread applies the result.
 */
struct reg_flight {
	uv_work_t	 req;
	struct registry	*reg;		/* NULL once applied */
	struct atomicfile af;
	uint64_t	 changes;	/* what it writes: reg->changes then */
	uint64_t	 added;
	int		 rc;
	int		 bak_err;	/* keep_backup's, logged on the loop */
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;
	bool		 finished;	/* the work returned (under mu) */
	void		(*done)(int, void *); /* NULL: the owner is gone */
	void		*arg;
};

#endif
