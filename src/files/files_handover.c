/*
 * A reload that changed a flow hands its open files to the flow that
 * succeeds it (files.h): each descriptor with its identity (device, inode)
 * and committed offset, so a file deleted while open -- whose descriptor is
 * the only way left to its bytes -- is read on by the successor instead of
 * being closed.  The successor takes the files it would read: those its
 * pattern matches, those deleted or rotated away (read to their end), and
 * spool files; it closes the rest, whose offsets stay in the registry.
 */
#include "config.h"

#include <sys/stat.h>

#include <inttypes.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/log.h"
#include "conf/conf.h"
#include "files/files_int.h"
#include "tail/skipplan.h"
#include "tail/tailer.h"

struct handed {
	int		 fd;
	char		*path;
	uint64_t	 offset;	/* committed */
	bool		 gone;
	bool		 spool;
	struct skipplan	*plan;		/* what is delivered past offset */
};

struct files_handover {
	struct handed	*v;
	size_t		 n;
};

struct files_handover *
files_hand_over(struct files *fs)
{
	struct files_handover *h = xcalloc(1, sizeof(*h));
	struct tracked	*k;
	struct handed	*d;
	int		 fd;

	for (k = fs->list; k != NULL; k = k->next) {
		fd = tailer_take_fd(k->t);
		if (fd < 0)
			continue;	/* parked: found again at its path */
		fs->nopen--;
		h->v = xrealloc(h->v, (h->n + 1) * sizeof(*h->v));
		d = &h->v[h->n++];
		d->fd = fd;
		d->path = xstrdup(tailer_path(k->t));
		d->offset = tailer_committed(k->t);
		d->gone = k->gone;
		d->spool = k->spool;
		/* What was acknowledged past the committed offset goes along:
		 * the successor does not send it again. */
		d->plan = skipplan_add(tailer_take_plan(k->t), fs->scratch,
		    files_collect_spans(fs, k->t), d->offset);
	}
	return h;
}

size_t
files_handover_count(const struct files_handover *h)
{
	return h != NULL ? h->n : 0;
}

void
files_handover_free(struct files_handover *h)
{
	size_t	 i;

	if (h == NULL)
		return;
	for (i = 0; i < h->n; i++) {
		if (h->v[i].fd >= 0)
			close(h->v[i].fd);
		free(h->v[i].path);
		skipplan_free(h->v[i].plan);
	}
	free(h->v);
	free(h);
}

/* Take d (its descriptor stolen) when this flow reads it; false if not. */
static bool
adopt_one(struct files *fs, struct handed *d)
{
	struct tracked	*k;
	struct tailer	*t;
	struct stat	 st;
	bool		 deleted, matches;

	if (fstat(d->fd, &st) != 0 ||
	    files_tracks(fs, (uint64_t)st.st_dev, (uint64_t)st.st_ino))
		return false;
	deleted = st.st_nlink == 0;
	matches = conf_flow_matches(fs->fc, d->path);
	if (fs->wf != NULL || (!deleted && !matches && !d->gone && !d->spool))
		return false;
	t = tailer_open_fd(d->fd, d->path, &st, d->offset,
	    (uint32_t)fs->fc->header_bytes, fs->fr);
	d->fd = -1;
	tailer_set_plan(t, d->plan);
	d->plan = NULL;
	fs->plans = fs->plans || tailer_plan(t) != NULL;
	k = files_link(fs, t, d->spool || deleted || !matches);
	if (d->spool) {
		k->spool = true;
		fs->nspool++;
	} else
		files_commit(fs, t);
	log_info("[%s] %s (inode %ju) handed over at offset %ju%s",
	    fs->fc->name, d->path, (uintmax_t)st.st_ino,
	    (uintmax_t)d->offset, d->spool ? " (a spool file)" : deleted ?
	    " (deleted; reading it to the end)" : !matches ?
	    " (rotated away; reading it to the end)" : "");
	return true;
}

size_t
files_adopt(struct files *fs, struct files_handover *h)
{
	size_t	 i, n = 0;

	for (i = 0; h != NULL && i < h->n; i++)
		if (adopt_one(fs, &h->v[i]))
			n++;
	files_handover_free(h);
	return n;
}
