/*
 * The insides of the whole-file state (wholefile.h), shared by
 * wholefile.c (the table, readiness, delivery, what files.c reports) and
 * wfclean.c (cleaning up what is delivered).  Nothing else includes it.
 *
 * Each file the flow knows is one struct wf_file, on the list of its
 * state:
 *
 *   PENDING --quiet--> READY --slot--> READING --read to its size--> SENT
 *     ^  \--quiet, empty--> EMPTY          --every record acked--> DELIVERED
 *     |                                  --the mark is saved--> DURABLE
 *     +--- changed after it was ready ---  DURABLE --cleaned--> (forgotten)
 *                                          DURABLE --no policy--> KEPT
 *
 * and every change of state goes through wholefile_move().
 */
#ifndef DISAGENT_WHOLEFILE_INT_H
#define DISAGENT_WHOLEFILE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include <uv.h>

#include "base/closer.h"
#include "base/util.h"
#include "files/cleanup.h"
#include "files/wholefile.h"

enum wf_state {
	WF_PENDING,
	WF_EMPTY,
	WF_READY,
	WF_READING,
	WF_SENT,
	WF_DELIVERED,
	WF_DURABLE,
	WF_KEPT,
	WF_NSTATES
};

struct wf_file {
	struct wf_file	*prev, *next;	/* on the list of its state */
	struct wf_file	*same_ino;	/* chain in the map */
	enum wf_state	 state;
	char		*path;
	/* As last seen; from READY on, what is sent (and later checked). */
	struct cleanup_id id;
	uint64_t	 since_ms;	/* PENDING: last change seen */
	uint64_t	 tid;		/* READING, SENT: its tailer */
	int		 err;		/* last failure (open, cleanup) */
	bool		 seen;		/* by the scan under way */
	bool		 seen_last;	/* by the last scan that walked */
	bool		 retry;		/* DURABLE: try the cleanup now */
};

struct wf_list {
	struct wf_file	*head, *tail;
	size_t		 n;
};

struct wholefile {
	const struct conf_flow *fc;
	struct registry	*reg;
	struct metrics_flow *m;
	void		(*turn)(void *);	/* files.c's part of a turn */
	void		*arg;
	enum cleanup_policy policy;
	uint64_t	 quiet_ms;	/* maxFileCheckingMillis */
	uint32_t	 fp;		/* headerBytesLength */
	bool		 once;
	bool		 stopped;
	bool		 ready_sorted;
	struct keymap	 byino;		/* ino -> chain of wf_file */
	struct keymap	 bytid;		/* READING, SENT: tailer id -> file */
	struct wf_file	*picked;	/* by wholefile_next, to be tracked */
	uint64_t	 picked_off;	/* where it resumes */
	struct wf_list	 lists[WF_NSTATES];
	uv_timer_t	 timer;
	struct closer	 closer;	/* the timer being closed */
};

struct reg_entry;

/* st's mtime in nanoseconds. */
static inline int64_t
wholefile_mtime(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

/* The registry entry of f (borrowed), or NULL. */
struct reg_entry *wholefile_entry(struct wholefile *, const struct wf_file *f);
/* Put f on the list of st: the one place a file changes state. */
void		 wholefile_move(struct wholefile *, struct wf_file *f,
		    enum wf_state st);
/* Drop f from the table and free it. */
void		 wholefile_forget(struct wholefile *, struct wf_file *f);
/* f is pending again from now, at size and mtime (ns). */
void		 wholefile_restart(struct wholefile *, struct wf_file *f,
		    uint64_t size, int64_t mtime);
/* (Re)write f's registry entry, complete at its size: DELIVERED. */
void		 wholefile_mark(struct wholefile *, struct wf_file *f);
/* Run the work pass at the next loop turn. */
void		 wholefile_soon(struct wholefile *);

/*
 * Try the cleanups due (DURABLE, retry set), at most a loop turn's worth;
 * the rest soon after.
 */
void		 wfclean_due(struct wholefile *);
/* f changed after it was declared ready: pending again, never cleaned. */
void		 wfclean_changed(struct wholefile *, struct wf_file *f);
/*
 * f (delivered) is not at its path: forget it (and its entry) unless the
 * last scan saw it, which means it moved since and the next scan says
 * where.
 */
void		 wfclean_gone(struct wholefile *, struct wf_file *f);

#endif
