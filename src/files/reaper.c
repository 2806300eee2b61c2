/*
 * Removing rotated-away tailed files after delivery (reaper.h).  A
 * candidate is measured the first time a scan sees it after it finished
 * (the path a finished tailer last knew may name its successor by now, so
 * only what a scan sees by device and inode counts), and removed by the
 * first scan that sees it, unchanged, once it is due.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/metrics.h"
#include "base/pattern.h"
#include "conf/conf.h"
#include "files/cleanup.h"
#include "files/reaper.h"
#include "tail/tailer.h"
#include "files/watcher.h"
#include "state/registry.h"

struct victim {
	struct victim	*next;
	struct cleanup_id id;		/* size, head: when it finished */
	bool		 measured;	/* mtime and tail: at the first sight */
	bool		 seen;		/* by the scan under way */
	uint64_t	 due_ms;
};

struct reaper {
	const struct conf_flow *fc;
	struct registry	*reg;
	struct metrics_flow *m;
	char		*pattern;
	struct victim	*list;
};

struct reaper *
reaper_new(const struct conf_flow *fc, struct registry *reg,
    struct metrics_flow *m)
{
	struct reaper	*r;

	if (fc->delete_after_s <= 0)
		return NULL;
	r = xcalloc(1, sizeof(*r));
	r->fc = fc;
	r->reg = reg;
	r->m = m;
	r->pattern = pattern_recursive(fc->file_pattern, fc->recursive);
	return r;
}

void
reaper_free(struct reaper *r)
{
	struct victim	*v;

	if (r == NULL)
		return;
	while ((v = r->list) != NULL) {
		r->list = v->next;
		free(v);
	}
	free(r->pattern);
	free(r);
}

void
reaper_add(struct reaper *r, const struct tailer *t)
{
	struct victim	*v;

	if (r == NULL)
		return;
	v = xcalloc(1, sizeof(*v));
	v->id.dev = tailer_dev(t);
	v->id.ino = tailer_ino(t);
	v->id.size = tailer_committed(t);
	tailer_head(t, &v->id.head_crc, &v->id.head_len);
	v->due_ms = mono_ms() + (uint64_t)r->fc->delete_after_s * 1000;
	v->next = r->list;
	r->list = v;
}

/* First sight of v at path: it must be the file delivered, at its end. */
static bool
measure(struct reaper *r, struct victim *v, const char *path)
{
	struct cleanup_id now;

	if (cleanup_identify(path, v->id.head_len, &now) != 0 ||
	    now.dev != v->id.dev || now.ino != v->id.ino ||
	    now.size != v->id.size || now.head_len != v->id.head_len ||
	    now.head_crc != v->id.head_crc) {
		log_info("[%s] %s changed after it was delivered: not removed",
		    r->fc->name, path);
		return false;
	}
	v->id = now;
	v->measured = true;
	return true;
}

/* v is due and at path: remove it if it is still what was delivered. */
static void
remove_it(struct reaper *r, struct victim *v, const char *path)
{
	char	*base = pattern_literal_base(r->pattern);
	int	 rc;

	rc = pattern_match(r->pattern, path) ? -EPERM :
	    cleanup_remove_if_same(base, path, &v->id);
	free(base);
	if (rc == 0) {
		log_info("[%s] removed %s (inode %ju): delivered %lld s ago "
		    "(deleteAfterDeliverySeconds)", r->fc->name, path,
		    (uintmax_t)v->id.ino, r->fc->delete_after_s);
		r->m->files_cleaned++;
		registry_remove(r->reg, r->fc->name, v->id.dev, v->id.ino);
		return;
	}
	if (rc == -ESTALE || rc == -EPERM)
		log_info("[%s] %s changed after it was delivered, or matches "
		    "filePattern again: not removed", r->fc->name, path);
	else {
		r->m->cleanup_failures++;
		log_warn("[%s] cannot remove %s: %s", r->fc->name, path,
		    strerror(-rc));
	}
}

void
reaper_other(struct reaper *r, const char *path, const struct stat *st)
{
	struct victim	**pp, *v;

	if (r == NULL)
		return;
	for (pp = &r->list; (v = *pp) != NULL; pp = &v->next)
		if (v->id.dev == (uint64_t)st->st_dev &&
		    v->id.ino == (uint64_t)st->st_ino)
			break;
	if (v == NULL)
		return;
	v->seen = true;
	if (!v->measured && !measure(r, v, path))
		goto drop;
	if (mono_ms() < v->due_ms)
		return;
	remove_it(r, v, path);
drop:
	*pp = v->next;
	free(v);
}

void
reaper_scanned(struct reaper *r)
{
	struct victim	**pp, *v;
	uint64_t	  now = mono_ms();

	if (r == NULL)
		return;
	for (pp = &r->list; (v = *pp) != NULL;) {
		if (!v->seen && now >= v->due_ms) {
			*pp = v->next;	/* moved away or removed by others */
			free(v);
			continue;
		}
		v->seen = false;
		pp = &v->next;
	}
}
