/*
 * Files gone from their paths (files_int.h): a gone file is read to its end
 * and closed once committed and quiet (R1, R7); one gone while the agent
 * was stopped, while parked, or replaced on its inode is followed into its
 * compressed successor, or what it could not deliver is counted lost.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/metrics.h"
#include "conf/conf.h"
#include "files/files_int.h"
#include "files/reaper.h"
#include "files/successor.h"
#include "tail/tailer.h"
#include "state/registry.h"

void
files_add_orphan(struct files *fs, const struct reg_entry *e)
{
	struct orphan	*p;

	fs->orphans = xrealloc(fs->orphans,
	    (fs->norphans + 1) * sizeof(*fs->orphans));
	p = &fs->orphans[fs->norphans++];
	p->dev = e->dev;
	p->ino = e->ino;
	p->off = e->offset;
	p->size = e->size;
	p->crc = e->fp_crc;
	p->len = e->fp_len;
	p->path = xstrdup(e->path);
	p->reused = false;
}

/*
 * A gone file is finished when every byte is committed, nothing is left to
 * read, no record waits in the framer (a multi-line record, a container's
 * partial line: sent when the file is quiet, multiLineFlushMillis), and it
 * did not grow since the previous scan (R1, R7).
 */
static bool
finished(const struct tracked *k)
{
	return k->gone && tailer_pending(k->t) == 0 && read_to_end(k->t) &&
	    !tailer_waits_for_quiet(k->t, false) &&
	    tailer_size(k->t) == files_scan_size(k);
}

void
files_drop_finished(struct files *fs)
{
	struct tracked	**pp, *k;
	struct tailer	*t;

	for (pp = &fs->list; (k = *pp) != NULL;) {
		t = k->t;
		if (!finished(k)) {
			/* What "did not grow since the previous scan"
			 * compares with next time. */
			if (k->gone)
				files_past(k)->scan_size = tailer_size(t);
			pp = &k->next;
			continue;
		}
		if (tailer_read_off(t) < tailer_size(t))
			log_warn("%s: closed with %ju bytes after the last "
			    "newline not shipped", tailer_path(t),
			    (uintmax_t)(tailer_size(t) - tailer_read_off(t)));
		log_info("[%s] finished %s (inode %ju) at offset %ju",
		    fs->fc->name, tailer_path(t), (uintmax_t)tailer_ino(t),
		    (uintmax_t)tailer_committed(t));
		/* The entry stays (until checkpointTimeToLiveDays): a file
		 * moved away and back resumes instead of starting over.  A
		 * spool file's goes, and the file after the next save. */
		fs->m->files_done++;
		if (k->spool)
			files_spool_finished(fs, k);
		else
			reaper_add(fs->reap, t);
		files_unlink(fs, pp, k);
	}
}

/* --- files gone with bytes not delivered -------------------------------- */

/* The entry's bytes went elsewhere, or are counted lost: forget it (its
 * inode is gone), so no later start looks for it again. */
static void
settle(struct files *fs, uint64_t dev, uint64_t ino)
{
	registry_remove(fs->reg, fs->fc->name, dev, ino);
}

/* A tracked compressed file already holds the bytes of the file whose head
 * is (crc, len): a restart inside a successor. */
static bool
covered(struct files *fs, uint32_t crc, uint32_t len)
{
	struct tracked	*k;
	uint32_t	 c;

	for (k = fs->list; k != NULL; k = k->next)
		if (tailer_compressed(k->t) &&
		    tailer_head_crc(tailer_path(k->t), len, &c) == 0 &&
		    c == crc)
			return true;
	return false;
}

enum follow {
	FOLLOWED,		/* its bytes are read on elsewhere */
	FOLLOW_LATER,		/* its successor is still being compressed */
	FOLLOW_NONE,		/* nothing to follow (what was lost is counted) */
};

/*
 * A file gone from where it was known (path, inode) with its head
 * (crc, len) and its bytes up to off delivered, size known: follow its
 * compressed successor from off, or report what could not be delivered.
 */
static enum follow
follow(struct files *fs, const char *path, uint64_t ino, uint32_t crc,
    uint32_t len, uint64_t off, uint64_t size)
{
	const char	*to;
	struct stat	 st;

	if (covered(fs, crc, len))
		return FOLLOWED;
	to = successors_find(fs->succ, crc, len, &st);
	if (to != NULL) {
		switch (files_track_at(fs, to, &st, off, true)) {
		case TRACKED:
			log_info("[%s] %s (inode %ju) was compressed into %s; "
			    "reading on from offset %ju", fs->fc->name, path,
			    (uintmax_t)ino, to, (uintmax_t)off);
			return FOLLOWED;
		case TRACK_LATER:
			return FOLLOW_LATER;
		case TRACK_UNREADABLE:
			return FOLLOW_NONE;	/* counted, with its name */
		case TRACK_FAILED:
			break;
		}
	}
	if (size <= off)
		return FOLLOW_NONE;
	log_warn("[%s] %s (inode %ju) is gone with %ju bytes after its "
	    "committed offset that could not be delivered: no compressed "
	    "copy of it (gzip, zstd) is in the walked directories.  It was "
	    "deleted, moved elsewhere or compressed with xz or bzip2 before "
	    "it was read; with logrotate, use delaycompress", fs->fc->name,
	    path, (uintmax_t)ino, (uintmax_t)(size - off));
	fs->m->bytes_lost[LOST_GONE] += size - off;
	return FOLLOW_NONE;
}

/* registry_each: an entry of this flow whose file the first scan did not
 * see (it may have grown after the agent stopped, whatever its size). */
static void
collect_orphan(const struct reg_entry *e, void *arg)
{
	struct files	*fs = arg;

	/* Not one it reads already (handed over by a reload, a spool file:
	 * files_spool.c says what became of those). */
	if (strcmp(e->flow, fs->fc->name) == 0 && reg_spool(e) == NULL &&
	    !successors_was_seen(fs->succ, e->dev, e->ino) &&
	    !files_tracks(fs, e->dev, e->ino))
		files_add_orphan(fs, e);
}

/* Gone while the agent was stopped (first scan), replaced by another file
 * on the same inode, or gone while parked. */
void
files_follow_gone(struct files *fs, bool first)
{
	struct tracked	**pp, *k;
	struct orphan	*o;
	enum follow	 f;
	uint32_t	 crc, len;
	size_t		 i, kept = 0;

	if (first)
		(void)registry_each(fs->reg, collect_orphan, fs);
	for (i = 0; i < fs->norphans; i++) {
		o = &fs->orphans[i];
		f = follow(fs, o->path, o->ino, o->crc, o->len, o->off,
		    o->size);
		if (f == FOLLOW_LATER) {
			fs->orphans[kept++] = *o;	/* the next scan */
			continue;
		}
		if ((f == FOLLOWED || o->size > o->off) && !o->reused)
			settle(fs, o->dev, o->ino);
		free(o->path);
	}
	fs->norphans = kept;
	if (kept == 0) {
		free(fs->orphans);
		fs->orphans = NULL;
	}
	for (pp = &fs->list; (k = *pp) != NULL;) {
		if (!k->vanished) {
			pp = &k->next;
			continue;
		}
		tailer_head(k->t, &crc, &len);
		if (follow(fs, tailer_path(k->t), tailer_ino(k->t), crc, len,
		    tailer_committed(k->t), tailer_size(k->t)) ==
		    FOLLOW_LATER) {
			pp = &k->next;	/* the next scan */
			continue;
		}
		/* The successor went in at the head of the list: when k was
		 * the head, it is one further now. */
		while (*pp != k)
			pp = &(*pp)->next;
		settle(fs, tailer_dev(k->t), tailer_ino(k->t));
		fs->m->files_done++;	/* this identity is done with */
		files_unlink(fs, pp, k);
	}
}
