/*
 * A flow's side of the spool (spool.h): at a stop, the unread rest of each
 * of its files that was deleted while open goes into a spool file, whose
 * registry entry replaces the original's; at the next start each spool
 * file of the flow is tracked before the first scan, read before any other
 * file (files.c), and removed once every byte of it is acknowledged and a
 * save dropped its entry.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "base/metrics.h"
#include "conf/conf.h"
#include "files/files_int.h"
#include "files/spool.h"
#include "tail/tailer.h"
#include "state/registry.h"

/* --- at a stop ---------------------------------------------------------- */

/* Whether k is a file deleted while open with bytes not committed. */
static bool
deleted_unread(const struct tracked *k, struct stat *st)
{
	struct tailer	*t = k->t;

	if (k->spool || tailer_fd(t) < 0 || tailer_compressed(t))
		return false;
	return fstat(tailer_fd(t), st) == 0 && st->st_nlink == 0 &&
	    (uint64_t)st->st_size > tailer_committed(t);
}

/* The spool file's entry in place of the original's. */
static void
register_spool(struct files *fs, struct tailer *t, const struct spool_kept *kp)
{
	struct reg_entry *e;

	registry_remove(fs->reg, fs->fc->name, tailer_dev(t), tailer_ino(t));
	e = registry_set(fs->reg, fs->fc->name, (uint64_t)kp->st.st_dev,
	    (uint64_t)kp->st.st_ino, kp->fp_crc, kp->fp_len, tailer_path(t),
	    tailer_committed(t));
	registry_set_size(fs->reg, e, kp->end);
	registry_set_spool(fs->reg, e, kp->file, tailer_dev(t), tailer_ino(t));
	/* The spool file keeps the original's offsets: what was
	 * acknowledged past the committed one is not sent from it. */
	registry_set_acked(fs->reg, e, fs->scratch, files_collect_spans(fs, t));
}

static void
spool_one(struct files *fs, struct spool *sp, struct tracked *k,
    const struct stat *st)
{
	struct tailer	*t = k->t;
	struct spool_copy c;
	struct spool_kept kp;
	uint64_t	 from = tailer_committed(t), size = (uint64_t)st->st_size;

	memset(&c, 0, sizeof(c));
	c.flow = fs->fc->name;
	c.path = tailer_path(t);
	/* What was acknowledged past from: in the description too. */
	c.nacked = files_collect_spans(fs, t);
	c.acked = fs->scratch;
	c.dev = tailer_dev(t);
	c.ino = tailer_ino(t);
	c.fd = tailer_fd(t);
	c.head = (uint32_t)fs->fc->header_bytes;
	c.from = from;
	c.size = size;
	c.delim = conf_delimiter(fs->fc->record_delimiter);
	if (spool_write(sp, &c, &kp) != 0)
		log_debug("[%s] %s: no spool file: %s", fs->fc->name,
		    tailer_path(t), kp.why);
	if (kp.file != NULL) {
		register_spool(fs, t, &kp);
		log_info("[%s] %s (inode %ju) was deleted with %ju bytes "
		    "unread: spooled %ju of them to %s", fs->fc->name,
		    tailer_path(t), (uintmax_t)tailer_ino(t),
		    (uintmax_t)(size - from), (uintmax_t)(kp.end - from),
		    kp.file);
	} else
		/* Reported here, with its bytes: not again as "gone". */
		registry_remove(fs->reg, fs->fc->name, tailer_dev(t),
		    tailer_ino(t));
	if (kp.end < size) {
		log_warn("[%s] %s (inode %ju) was deleted with %ju bytes "
		    "unread: %ju of them not spooled (%s in %s) and lost",
		    fs->fc->name, tailer_path(t), (uintmax_t)tailer_ino(t),
		    (uintmax_t)(size - from), (uintmax_t)(size - kp.end),
		    kp.why != NULL ? kp.why : "error", spool_dir(sp));
		fs->m->bytes_lost[LOST_SPOOL] += size - kp.end;
	}
	spool_kept_cleanup(&kp);
}

void
files_spool(struct files *fs, struct spool *sp)
{
	struct tracked	*k;
	struct stat	 st;

	if (fs->wf != NULL)
		return;		/* whole files are read again at the start */
	for (k = fs->list; k != NULL; k = k->next)
		if (deleted_unread(k, &st))
			spool_one(fs, sp, k, &st);
}

/* --- at the next start -------------------------------------------------- */

struct pending {
	struct reg_entry **v;
	size_t		   n;
	const char	  *flow;
};

static void
collect(const struct reg_entry *e, void *arg)
{
	struct pending	*p = arg;

	if (reg_spool(e) == NULL || strcmp(e->flow, p->flow) != 0)
		return;
	p->v = xrealloc(p->v, (p->n + 1) * sizeof(*p->v));
	p->v[p->n++] = (struct reg_entry *)(uintptr_t)e;
}

/* The spool file of e, opened as a tailer (its path the original's), or
 * NULL with why set. */
static struct tailer *
open_spool(struct files *fs, const struct reg_entry *e, const char **why)
{
	struct tailer	*t;
	struct stat	 st;
	uint32_t	 crc;

	*why = NULL;
	if (stat(reg_spool(e)->file, &st) != 0) {
		*why = strerror(errno);
		return NULL;
	}
	if ((uint64_t)st.st_dev != e->dev || (uint64_t)st.st_ino != e->ino ||
	    tailer_head_crc(reg_spool(e)->file, e->fp_len, &crc) != 0 ||
	    crc != e->fp_crc) {
		*why = "it is not the file the state names";
		return NULL;
	}
	t = tailer_open(reg_spool(e)->file, &st, e->offset,
	    (uint32_t)fs->fc->header_bytes, fs->fr);
	if (t == NULL) {
		*why = strerror(errno);
		return NULL;
	}
	/* Its records carry the original's name, as its offsets. */
	tailer_rename(t, e->path);
	files_attach_plan(fs, t, reg_spool(e)->file, &st, e->offset, true);
	return t;
}

static void
resume_one(struct files *fs, struct reg_entry *e)
{
	struct tracked	*k;
	struct tailer	*t;
	const char	*why;
	uint64_t	 left = e->size > e->offset ? e->size - e->offset : 0;

	if (files_tracks(fs, e->dev, e->ino))
		return;		/* handed over by a reload */
	t = open_spool(fs, e, &why);
	if (t == NULL) {
		log_warn("[%s] spool file %s of %s (inode %ju): %s; its %ju "
		    "bytes are lost", fs->fc->name, reg_spool(e)->file, e->path,
		    (uintmax_t)reg_spool(e)->ino, why, (uintmax_t)left);
		fs->m->bytes_lost[LOST_SPOOL] += left;
		registry_remove(fs->reg, fs->fc->name, e->dev, e->ino);
		return;
	}
	k = files_link(fs, t, true);
	k->spool = true;
	fs->nspool++;
	log_info("[%s] shipping the spool of %s (inode %ju) first: %ju bytes "
	    "from offset %ju, in %s", fs->fc->name, e->path,
	    (uintmax_t)reg_spool(e)->ino, (uintmax_t)left, (uintmax_t)e->offset,
	    reg_spool(e)->file);
}

void
files_spool_resume(struct files *fs)
{
	struct pending	 p = { NULL, 0, fs->fc->name };
	size_t		 i;

	if (fs->wf != NULL)
		return;		/* whole files are never spooled */
	(void)registry_each(fs->reg, collect, &p);
	for (i = 0; i < p.n; i++)
		resume_one(fs, p.v[i]);
	free(p.v);
}

/* --- delivered ---------------------------------------------------------- */

void
files_spool_finished(struct files *fs, struct tracked *k)
{
	struct reg_entry *e;
	struct tailer	*t = k->t;
	int		 rc;

	e = registry_find(fs->reg, fs->fc->name, tailer_dev(t),
	    tailer_ino(t));
	if (e == NULL || reg_spool(e) == NULL)
		return;
	log_info("[%s] the spool of %s (inode %ju) is delivered; removing %s "
	    "after the next save", fs->fc->name, tailer_path(t),
	    (uintmax_t)reg_spool(e)->ino, reg_spool(e)->file);
	/* Its entry goes now; the file once the state without it is on
	 * disk: a crash before that finds it named, and sends it again.
	 * Its description goes first: after that save, a file left by a
	 * crash must not be adopted and sent again. */
	rc = spool_forget(reg_spool(e)->file);
	if (rc < 0)
		log_warn("[%s] cannot remove the description of spool file "
		    "%s: %s", fs->fc->name, reg_spool(e)->file,
		    strerror(-rc));
	fs->spool_done = xrealloc(fs->spool_done,
	    (fs->nspool_done + 1) * sizeof(*fs->spool_done));
	fs->spool_done[fs->nspool_done].file = xstrdup(reg_spool(e)->file);
	registry_remove(fs->reg, fs->fc->name, tailer_dev(t), tailer_ino(t));
	fs->spool_done[fs->nspool_done++].change = registry_changes(fs->reg);
}

void
files_spool_saved(struct files *fs)
{
	struct spool_done *d;
	size_t		 i, kept = 0;

	for (i = 0; i < fs->nspool_done; i++) {
		d = &fs->spool_done[i];
		/* Removed after the save began: the file stays named on disk
		 * until the next one. */
		if (!registry_change_saved(fs->reg, d->change)) {
			fs->spool_done[kept++] = *d;
			continue;
		}
		if (unlink(d->file) != 0 && errno != ENOENT)
			log_warn("[%s] cannot remove spool file %s: %s",
			    fs->fc->name, d->file, strerror(errno));
		free(d->file);
	}
	fs->nspool_done = kept;
	if (kept == 0) {
		free(fs->spool_done);
		fs->spool_done = NULL;
	}
}

void
files_spool_free(struct files *fs)
{
	size_t	 i;

	/* Not removed: the next start's sweep removes them, once the state
	 * file that no longer names them is the one it reads. */
	for (i = 0; i < fs->nspool_done; i++)
		free(fs->spool_done[i].file);
	free(fs->spool_done);
	fs->spool_done = NULL;
	fs->nspool_done = 0;
}
