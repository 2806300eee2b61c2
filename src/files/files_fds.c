/*
 * The descriptor budget of a flow (files_int.h): idle files are parked,
 * parked files with bytes to read are reopened while there is room, and
 * maxOpenFiles is lowered where the open-file limit would leave the
 * connections no descriptor.
 */
#include "config.h"

#include <errno.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "base/log.h"
#include "conf/conf.h"
#include "files/files_int.h"
#include "tail/tailer.h"
#include "files/wholefile.h"

/* Descriptors kept for everything but tailed files: connections (at most
 * 16), the state, dead-letter and metrics files, inotify, libuv's own. */
#define FD_RESERVE	128

/* An idle file: at its path, fully read and committed, nothing pending;
 * or a whole file read to its size (its acks need no descriptor). */
static bool
idle(const struct files *fs, const struct tracked *k)
{
	if (!tailer_is_open(k->t) || k->gone || tailer_compressed(k->t))
		return false;
	if (fs->wf != NULL)
		return !tailer_readable(k->t) &&
		    !tailer_waits_for_quiet(k->t, false);
	return tailer_pending(k->t) == 0 && read_to_end(k->t);
}

/* A parked file with bytes to read, a gone one (its end is checked), or
 * one now shorter than its read offset (truncated while parked, R6). */
static bool
wants_fd(const struct tracked *k)
{
	return !tailer_is_open(k->t) && (tailer_readable(k->t) || k->gone ||
	    tailer_size(k->t) < tailer_read_off(k->t));
}

/* Park the idle files that were quiet longest until at most target are
 * open. */
static void
park_idle(struct files *fs, size_t target)
{
	struct tracked	*k, *oldest;

	while (fs->nopen > target) {
		oldest = NULL;
		for (k = fs->list; k != NULL; k = k->next)
			if (idle(fs, k) && (oldest == NULL ||
			    tailer_active_ms(k->t) <
			    tailer_active_ms(oldest->t)))
				oldest = k;
		if (oldest == NULL)
			break;
		tailer_park(oldest->t);
		fs->nopen--;
	}
}

static bool
still_at_path(const struct tailer *t)
{
	struct stat	 st;

	return stat(tailer_path(t), &st) == 0 &&
	    tailer_is(t, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
}

/*
 * Reopen a parked file.  Its inode at its matching path with another head
 * was truncated or rewritten in place while parked (copytruncate): read it
 * again from 0, as refresh does for an open file (R6).  A parked file has
 * no range in flight (only idle files are parked).
 */
static int
reopen(struct files *fs, struct tracked *k)
{
	int	 rc = tailer_reopen(k->t);

	if (rc != -ESTALE || k->gone || !still_at_path(k->t))
		return rc;
	files_restart(fs, k, "truncated or rewritten in place while parked "
	    "(copytruncate?)", tailer_size(k->t));
	return tailer_reopen(k->t);
}

/*
 * Keep open descriptors within maxOpenFiles: park the idle files that were
 * quiet longest, and open parked files that have bytes to read while there
 * is room.  Files with bytes not yet delivered stay open.
 */
void
files_balance_fds(struct files *fs)
{
	struct tracked	*k;
	size_t		 wanting = 0;
	int		 rc;

	for (k = fs->list; k != NULL; k = k->next)
		if (wants_fd(k))
			wanting++;
	park_idle(fs, fs->max_open - MIN(wanting, fs->max_open));
	for (k = fs->list; k != NULL && fs->nopen < fs->max_open;
	    k = k->next) {
		if (!wants_fd(k))
			continue;
		rc = reopen(fs, k);
		if (rc == 0) {
			fs->nopen++;
			files_commit(fs, k->t);
		} else if (rc == -ESTALE || (rc == -ENOENT && k->gone)) {
			/* Its path holds another file now, or none: the
			 * next scan looks for where its bytes went. */
			k->gone = true;
			k->vanished = true;
		}
	}
	if (fs->nopen > fs->max_open && !fs->warned_fds) {
		log_warn("[%s] %zu files with bytes to deliver are open, more "
		    "than maxOpenFiles = %zu", fs->fc->name, fs->nopen,
		    fs->max_open);
		fs->warned_fds = true;
	}
}

/*
 * maxOpenFiles, lowered when the flows' files together would take the
 * descriptors the connections need: with the soft RLIMIT_NOFILE of 1024
 * that systemd gives services, 1,024 open files left no socket for DIS,
 * and nothing was sent.  main() raises the soft limit to the hard one
 * first, so this bites only where the hard limit is low.
 */
size_t
files_open_budget(const struct conf *conf,
    const struct conf_flow *fc)
{
	struct rlimit	 rl;
	size_t		 i, nflows = 0, share;

	for (i = 0; i < conf->nflows; i++)
		if (conf->flows[i].enable)
			nflows++;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return (size_t)fc->max_open_files;
	share = rl.rlim_cur > FD_RESERVE + 8 * MAX(nflows, 1) ?
	    (size_t)(rl.rlim_cur - FD_RESERVE) / MAX(nflows, 1) : 8;
	if ((size_t)fc->max_open_files <= share)
		return (size_t)fc->max_open_files;
	log_warn("[%s] maxOpenFiles = %lld leaves no descriptors for the "
	    "connections (open-file limit %llu over %zu flows); using %zu",
	    fc->name, fc->max_open_files, (unsigned long long)rl.rlim_cur,
	    nflows, share);
	return share;
}

