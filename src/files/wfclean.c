/*
 * Cleaning up delivered whole files (wholefile_int.h): a file whose
 * complete mark is durable is checked against what was sent and then
 * deleted, moved or renamed (cleanup.h), or kept; one that changed is
 * pending again; one that is gone is forgotten.  Failures are logged once
 * per error, counted, shown as the flow's last error and tried again at
 * every rescan.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/metrics.h"
#include "conf/conf.h"
#include "files/cleanup.h"
#include "files/wholefile_int.h"
#include "state/registry.h"

#define CLEAN_PER_PASS	256	/* cleanups per loop turn */

/* f changed since it was declared ready: never clean it up; send what it
 * gained once it is quiet again. */
void
wfclean_changed(struct wholefile *wf, struct wf_file *f)
{
	struct reg_entry *e = wholefile_entry(wf, f);
	struct stat	 st;
	uint64_t	 size = 0;
	int64_t		 mtime = 0;

	if (stat(f->path, &st) == 0) {
		size = (uint64_t)st.st_size;
		mtime = wholefile_mtime(&st);
	}
	log_warn("[%s] %s changed after it was sent whole (size %ju, now "
	    "%ju): not cleaned up; what it gained is sent once it stays "
	    "unchanged", wf->fc->name, f->path, (uintmax_t)f->id.size,
	    (uintmax_t)size);
	if (e != NULL)
		registry_set_complete(wf->reg, e, false, 0, 0, 0);
	f->err = 0;
	wholefile_restart(wf, f, size, mtime);
}

static const char *
policy_verb(enum cleanup_policy p)
{
	switch (p) {
	case CLEANUP_DELETE:
		return "delete";
	case CLEANUP_MOVE:
		return "move";
	case CLEANUP_RENAME:
		return "rename";
	case CLEANUP_KEEP:
		break;
	}
	return "keep";
}

/*
 * A cleanup failed with -r: logged in full once per error, counted, and
 * the flow's last error (reason first: the label may be cut short).
 */
static void
cleanup_failed(struct wholefile *wf, struct wf_file *f, int r)
{
	char	 msg[METRICS_MSG_LEN], *to = NULL;

	if (wf->policy == CLEANUP_RENAME)
		to = xasprintf("%s%s", f->path, wf->fc->file_suffix);
	wf->m->cleanup_failures++;
	snprintf(msg, sizeof(msg), "%s: cannot %s %s", strerror(-r),
	    policy_verb(wf->policy), f->path);
	metrics_set_error(wf->m, "CLEANUP", msg, wall_s());
	if (r != f->err)
		log_warn("[%s] delivered, but cannot %s %s%s%s: %s%s; will "
		    "retry at every rescan (nothing is sent again)",
		    wf->fc->name, policy_verb(wf->policy), f->path,
		    wf->policy == CLEANUP_DELETE ? "" : " to ",
		    wf->policy == CLEANUP_MOVE ? wf->fc->move_dir :
		    to != NULL ? to : "", strerror(-r), r != -ELOOP ? "" :
		    " (a directory on its way below the pattern's directory, "
		    "or fileMoveToDir, is a symbolic link, which the agent "
		    "never deletes or moves through)");
	free(to);
	f->err = r;
}

/* f is cleaned up (deleted, moved to to, renamed to to): forget it. */
static void
cleaned(struct wholefile *wf, struct wf_file *f, const char *to)
{
	log_info("[%s] %s delivered; %s%s%s", wf->fc->name, f->path,
	    wf->policy == CLEANUP_DELETE ? "deleted" :
	    wf->policy == CLEANUP_MOVE ? "moved to " : "renamed to ",
	    to != NULL ? to : "", f->err != 0 ? " (it failed before)" : "");
	wf->m->files_cleaned++;
	registry_remove(wf->reg, wf->fc->name, f->id.dev, f->id.ino);
	wholefile_forget(wf, f);
}

/* A delivered file that is not at its path any more. */
void
wfclean_gone(struct wholefile *wf, struct wf_file *f)
{
	/* Seen by the last scan: it moved since; the next scan says where
	 * (and must not find it unknown, or it would be sent again). */
	if (f->seen_last && !wf->once)
		return;
	log_info("[%s] %s (inode %ju) is no longer at a matching path; "
	    "nothing to clean up", wf->fc->name, f->path, (uintmax_t)f->id.ino);
	registry_remove(wf->reg, wf->fc->name, f->id.dev, f->id.ino);
	wholefile_forget(wf, f);
}

/* What the file at f's path is, when it is not the one sent. */
static void
not_the_same(struct wholefile *wf, struct wf_file *f)
{
	int	 err;

	switch (cleanup_check(f->path, &f->id, &err)) {
	case CLEANUP_SAME:
		/* Swapped away and back during the act's own check: never
		 * acted on; the next rescan looks at it afresh. */
		log_info("[%s] %s changed while it was being cleaned up: left "
		    "alone; looked at again at the next rescan", wf->fc->name,
		    f->path);
		break;
	case CLEANUP_CHANGED:
		wfclean_changed(wf, f);
		break;
	case CLEANUP_OTHER:
	case CLEANUP_GONE:
		if (err == 0 || err == ENOENT || err == ENOTDIR)
			wfclean_gone(wf, f);
		else
			cleanup_failed(wf, f, -err);
		break;
	}
}

/*
 * f is delivered and durable: cleaned up if it is still the file sent,
 * which cleanup_apply checks (opening it once, as the descriptor budget
 * counts on); what else is there is looked at only when it is not.
 */
static void
try_cleanup(struct wholefile *wf, struct wf_file *f)
{
	struct reg_entry *e = wholefile_entry(wf, f);
	char		*to = NULL, *base;
	int		 r;

	f->retry = false;
	if (e == NULL || reg_done(e) == NULL) {
		wholefile_mark(wf, f);	/* lost (expired?): mark it again */
		return;
	}
	if (wf->policy == CLEANUP_KEEP) {
		if (cleanup_check(f->path, &f->id, &r) != CLEANUP_SAME) {
			not_the_same(wf, f);
			return;
		}
		log_info("[%s] %s delivered; left in place (no deletePolicy, "
		    "fileMoveToDir or fileSuffix)", wf->fc->name, f->path);
		wholefile_move(wf, f, WF_KEPT);
		return;
	}
	base = cleanup_base(wf->fc);
	r = cleanup_apply(wf->policy, base, f->path, &f->id, wf->fc->move_dir,
	    wf->fc->file_suffix, &to);
	free(base);
	if (r == 0)
		cleaned(wf, f, to);
	else if (r == -ESTALE || r == -ENOENT || r == -ENOTDIR)
		not_the_same(wf, f);
	else
		cleanup_failed(wf, f, r);
	free(to);
}

void
wfclean_due(struct wholefile *wf)
{
	struct wf_file	*f, *next;
	size_t		 n = 0;

	for (f = wf->lists[WF_DURABLE].head; f != NULL; f = next) {
		next = f->next;
		if (!f->retry)
			continue;
		if (n++ == CLEAN_PER_PASS) {
			wholefile_soon(wf);	/* the rest at the next turn */
			return;
		}
		try_cleanup(wf, f);
	}
}

