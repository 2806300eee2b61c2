/*
 * The directory walk (walk.h).  Breadth first: a queue of directories,
 * each visited once, by (device, inode), when it is first reached -- so
 * by its path of the fewest directories -- and its entries in two passes,
 * the real names before the links, so that at equal depth a real name
 * wins.  A directory reached again is not queued: when its first path is
 * above the new one, the new one is a loop, logged once.  A file reached
 * again is not reported again (found and other apart: a link that
 * matches the pattern to a file that does not is still found).
 *
 * Links (followSymlinks): owner resolves each one with linkrule.c, always
 * follows it as stat(2) does, never skips it.  The literal directories
 * are judged as under owner unless always.  What is opened is checked
 * against what was judged: a directory's descriptor by its identity here,
 * a file's by the tailer (tailer_open).
 *
 * A directory unchanged since its last read is not read again: its
 * listing (dircache.h) gives the names, each stat'ed by its path as the
 * read would; one that is not what the listing says makes the walk read
 * the directory after all.  Links are listed by name only, judged and
 * followed again at each walk.  The listing keeps the verdict on each
 * other name (whether the pattern, and a containers flow, take it), which
 * rests on its path alone: replayed under the path it was read by, the
 * directory's names are not matched again (a pass every
 * readCoalesceMillis matched each path of kubelet's tree, issue 38).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/hash.h"
#include "base/log.h"
#include "base/pattern.h"
#include "conf/conf.h"
#include "conf/ctrconf.h"
#include "tail/linkrule.h"
#include "files/dircache.h"
#include "files/walk.h"

#define MAX_DEPTH	32	/* directories below the literal ones */

enum follow {
	FOLLOW_OWNER,
	FOLLOW_ALWAYS,
	FOLLOW_NEVER,
};

/* --- identities ---------------------------------------------------------- */

/* A set of (dev, ino), each with a path (directories) or flags (files). */
struct ident {
	uint64_t	 dev, ino;
	char		*path;		/* new, or NULL */
	unsigned	 flags;
	bool		 used;
};

struct idset {
	struct ident	*v;
	size_t		 cap, n;	/* cap: 0 or a power of 2 */
};

#define SEEN_FOUND	0x1
#define SEEN_OTHER	0x2

static struct ident *
id_slot(struct ident *v, size_t cap, uint64_t dev, uint64_t ino)
{
	size_t	 i;

	for (i = hash_devino(dev, ino, cap); v[i].used;
	    i = (i + 1) & (cap - 1))
		if (v[i].dev == dev && v[i].ino == ino)
			break;
	return &v[i];
}

/* (dev, ino)'s entry, made (unused fields zero) when add; else NULL. */
static struct ident *
id_get(struct idset *s, const struct stat *st, bool add)
{
	uint64_t	 dev = (uint64_t)st->st_dev, ino = (uint64_t)st->st_ino;
	struct ident	*e, *old = s->v;
	size_t		 i, oldcap = s->cap;

	if (s->cap > 0 && (e = id_slot(s->v, s->cap, dev, ino))->used)
		return e;
	if (!add)
		return NULL;
	if ((s->n + 1) * 4 > s->cap * 3) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->v = xcalloc(s->cap, sizeof(*s->v));
		for (i = 0; i < oldcap; i++)
			if (old[i].used)
				*id_slot(s->v, s->cap, old[i].dev,
				    old[i].ino) = old[i];
		free(old);
	}
	e = id_slot(s->v, s->cap, dev, ino);
	e->used = true;
	e->dev = dev;
	e->ino = ino;
	s->n++;
	return e;
}

/* Emptied; a table of up to ID_KEEP slots is kept for the next walk,
 * which would grow it again. */
#define ID_KEEP		4096

static void
id_clear(struct idset *s)
{
	size_t	 i;

	for (i = 0; i < s->cap; i++)
		free(s->v[i].path);
	if (s->cap > 0 && s->cap <= ID_KEEP) {
		memset(s->v, 0, s->cap * sizeof(*s->v));
		s->n = 0;
		return;
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static void
id_free(struct idset *s)
{
	id_clear(s);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* --- notes: what is logged once while it stays ------------------------- */

struct note {
	char		*key;
	bool		 seen;		/* by the current walk */
	struct note	*next;
};

/* A directory waiting to be read. */
struct qdir {
	char		*path;
	int		 depth;
	struct stat	 st;		/* when reached */
	struct qdir	*next;
};

struct walker {
	const struct conf_flow *fc;
	const char	*pattern, *base, *name_glob;
	enum follow	 follow;
	struct note	*notes;
	/* The walk under way. */
	struct walk_cbs	 cbs;
	bool		 busy;
	struct qdir	*head, **tail;
	struct idset	 dirs;		/* queued or read: paths */
	struct idset	 files;		/* reported; SEEN_* */
	size_t		 ndirs, nlisted;
	int		 err;
	char		*pbuf;		/* join's */
	size_t		 pcap;
	/* Across walks. */
	struct dircache	*cache;
	uint64_t	(*clock)(void);
};

/* Whether key is new (then the caller logs it); marks it seen. */
static bool
note_once(struct walker *k, const char *key)
{
	struct note	*n;

	for (n = k->notes; n != NULL; n = n->next)
		if (strcmp(n->key, key) == 0) {
			n->seen = true;
			return false;
		}
	n = xcalloc(1, sizeof(*n));
	n->key = xstrdup(key);
	n->seen = true;
	n->next = k->notes;
	k->notes = n;
	return true;
}

/* After a whole walk: forget what is gone, so that it is logged again
 * should it come back. */
static void
notes_sweep(struct walker *k)
{
	struct note	**pp, *n;

	for (pp = &k->notes; (n = *pp) != NULL;) {
		if (n->seen) {
			n->seen = false;
			pp = &n->next;
			continue;
		}
		*pp = n->next;
		free(n->key);
		free(n);
	}
}

/* --- links ---------------------------------------------------------------- */

/*
 * Whether a link at path to what has mode would matter if followed: a
 * file the pattern matches, a directory that could hold matches.  Only
 * such a link is worth a line when it is skipped (not a "current" link
 * to a file of another name beside the logs).
 */
static bool
matters(const struct walker *k, const char *path, mode_t mode)
{
	if (S_ISREG(mode))
		return pattern_match(k->pattern, path);
	return S_ISDIR(mode) && pattern_dir_may_match(k->pattern, path);
}

/*
 * The link at path under owner: true with *st what it leads to, or false
 * (refused: one WARN while it stays, when it matters).
 */
static bool
owner_allows(struct walker *k, const char *path, struct stat *st)
{
	struct linkrule_refusal why;
	char		*key;
	int		 rc;

	rc = linkrule_resolve(path, st, NULL, &why);
	if (rc == -EPERM && !matters(k, path, why.target_mode))
		linkrule_refusal_cleanup(&why);
	else if (rc == -EPERM) {
		key = xasprintf("refused %s", why.link);
		if (note_once(k, key))
			log_warn("[%s] %s: a link owned by uid %u to a %s "
			    "owned by uid %u; not followed (followSymlinks = "
			    "owner)%s%s", k->fc->name, why.link,
			    (unsigned)why.link_uid,
			    S_ISDIR(why.target_mode) ? "directory" : "file",
			    (unsigned)why.target_uid,
			    strcmp(why.link, path) != 0 ? ", so skipping " :
			    "", strcmp(why.link, path) != 0 ? path : "");
		free(key);
		linkrule_refusal_cleanup(&why);
	} else if (rc != 0)
		log_debug("[%s] %s: %s", k->fc->name, path, strerror(-rc));
	return rc == 0;
}

/* The link at path: whether to follow it, *st then what it leads to. */
static bool
follow_link(struct walker *k, const char *path, struct stat *st)
{
	char	*key;

	switch (k->follow) {
	case FOLLOW_ALWAYS:
		return stat(path, st) == 0;
	case FOLLOW_OWNER:
		break;
	case FOLLOW_NEVER:
		if (stat(path, st) != 0 || !matters(k, path, st->st_mode))
			return false;
		key = xasprintf("never %s", path);
		if (note_once(k, key))
			log_info("[%s] %s is a link: not followed "
			    "(followSymlinks = never)", k->fc->name, path);
		free(key);
		return false;
	}
	return owner_allows(k, path, st);
}

/* --- the walk ------------------------------------------------------------ */

static void
enqueue(struct walker *k, const char *path, int depth, const struct stat *st)
{
	struct qdir	*q = xcalloc(1, sizeof(*q));

	q->path = xstrdup(path);
	q->depth = depth;
	q->st = *st;
	*k->tail = q;
	k->tail = &q->next;
	id_get(&k->dirs, st, true)->path = xstrdup(path);
}

/* Whether dir is path or a directory above it. */
static bool
above(const char *dir, const char *path)
{
	size_t	 n = strlen(dir);

	return strncmp(dir, path, n) == 0 &&
	    (path[n] == '/' || path[n] == '\0' || strcmp(dir, "/") == 0);
}

/* Whether directory path, an entry of q, can hold matches. */
static bool
dir_ok(const struct walker *k, const struct qdir *q, const char *path)
{
	return q->depth + 1 <= MAX_DEPTH &&
	    pattern_dir_may_match(k->pattern, path);
}

/*
 * Whether the flow takes file path (name its last component); *stable
 * says whether that rests on the path alone, to be kept with a listing:
 * not a Docker container's (ctrconf_picks_path).
 */
static bool
file_ok(const struct walker *k, const char *path, const char *name,
    bool *stable)
{
	const struct conf_flow *fc = k->fc;

	*stable = true;
	return pattern_match(k->pattern, path) &&
	    !pattern_skipped_name(k->name_glob, name, fc->file_suffix) &&
	    !pattern_excluded(fc->exclude_pattern, path) &&
	    (fc->source != SOURCE_CONTAINERS ||
	    ctrconf_picks_path(fc, path, stable));
}

static void
dir_entry(struct walker *k, const struct qdir *q, const char *path,
    const struct stat *st, bool ok)
{
	struct ident	*e;
	char		*key;

	if (!ok)
		return;
	if ((e = id_get(&k->dirs, st, false)) == NULL) {
		enqueue(k, path, q->depth + 1, st);
		return;
	}
	if (!above(e->path, path))
		return;		/* another way to a directory walked */
	key = xasprintf("loop %s", path);
	if (note_once(k, key))
		log_info("[%s] %s leads back to %s, a loop: each directory "
		    "is walked once", k->fc->name, path, e->path);
	free(key);
}

/* A regular file at path; picked: whether the flow takes it (file_ok). */
static void
file_entry(struct walker *k, const char *path, const struct stat *st,
    bool picked)
{
	struct ident	*e;
	unsigned	 flag;
	if (!picked && k->cbs.other == NULL)
		return;
	flag = picked ? SEEN_FOUND : SEEN_OTHER;
	e = id_get(&k->files, st, true);
	if (e->flags & flag)
		return;		/* reached before, by a shorter path */
	e->flags |= flag;
	if (picked)
		k->cbs.found(k->cbs.arg, path, st);
	else
		k->cbs.other(k->cbs.arg, path, st);
}

/* The path of entry name of q, in the walker's buffer (a walk's
 * callbacks copy what they keep). */
static const char *
join(struct walker *k, const struct qdir *q, const char *name)
{
	size_t	 dl = strcmp(q->path, "/") == 0 ? 0 : strlen(q->path);
	size_t	 nl = strlen(name), need = dl + nl + 2;

	if (need > k->pcap) {
		k->pcap = MAX(need, 2 * k->pcap);
		k->pbuf = xrealloc(k->pbuf, k->pcap);
	}
	memcpy(k->pbuf, q->path, dl);
	k->pbuf[dl] = '/';
	memcpy(k->pbuf + dl + 1, name, nl + 1);
	return k->pbuf;
}

/*
 * Entry name of q, at path, whose lstat is st; v: the pattern's verdict
 * on it kept from a read of q (-1: none).  Returns the verdict on a
 * directory or regular file that is no link, else -1.
 */
static int
judge(struct walker *k, const struct qdir *q, const char *path,
    const char *name, struct stat *st, int v)
{
	bool	 ok, stable;

	if (S_ISLNK(st->st_mode)) {
		if (!follow_link(k, path, st))
			return -1;
		if (S_ISDIR(st->st_mode))
			dir_entry(k, q, path, st, dir_ok(k, q, path));
		else if (S_ISREG(st->st_mode))
			file_entry(k, path, st, file_ok(k, path, name,
			    &stable));
		return -1;
	}
	if (S_ISDIR(st->st_mode)) {
		ok = v >= 0 ? v != 0 : dir_ok(k, q, path);
		dir_entry(k, q, path, st, ok);
		return ok;
	}
	if (S_ISREG(st->st_mode)) {
		stable = true;
		ok = v >= 0 ? v != 0 : file_ok(k, path, name, &stable);
		file_entry(k, path, st, ok);
		return stable ? ok : -1;
	}
	return -1;
}

static enum dirkind
kind_of(mode_t mode)
{
	return S_ISLNK(mode) ? DIRKIND_LINK : S_ISDIR(mode) ? DIRKIND_DIR :
	    S_ISREG(mode) ? DIRKIND_FILE : 0;
}

/* Entry name of the open directory q (fd dfd): links only when links. */
static void
entry(struct walker *k, const struct qdir *q, int dfd, const char *name,
    unsigned char type, bool links)
{
	struct stat	 st;
	enum dirkind	 kind;
	int		 v;

	if ((type == DT_LNK) != links && type != DT_UNKNOWN)
		return;
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
	    S_ISLNK(st.st_mode) != links)
		return;
	if ((kind = kind_of(st.st_mode)) != 0)
		dircache_add(k->cache, name, kind);
	v = judge(k, q, join(k, q, name), name, &st, -1);
	if (kind != 0 && v >= 0)
		dircache_verdict(k->cache, v != 0);
}

/*
 * Directory q by its listing l: false when a name is not what l says
 * (the directory changed within its stamps' tick), then it is read.
 */
static bool
replay(struct walker *k, const struct qdir *q, const struct dirlist *l,
    size_t *n)
{
	enum dirkind	 kind;
	struct stat	 st;
	const char	*name, *path;
	size_t		 off = 0;
	bool		 same = true;
	bool		 kept = strcmp(dirlist_path(l), q->path) == 0;
	int		 v;

	while (same && (name = dirlist_next(l, &off, &kind, &v)) != NULL) {
		(*n)++;
		if (!kept)
			v = -1;		/* judged under another path */
		path = join(k, q, name);
		if (kind == DIRKIND_DIR &&
		    !(v >= 0 ? v != 0 : dir_ok(k, q, path)))
			continue;	/* as the read: stat'ed, not queued */
		if (lstat(path, &st) != 0 || kind_of(st.st_mode) != kind)
			same = false;
		else
			(void)judge(k, q, path, name, &st, v);
	}
	return same;
}

/*
 * Read directory q, from start_ns on: its real names, then its links;
 * how many entries.
 */
static size_t
read_dir(struct walker *k, const struct qdir *q, uint64_t start_ns)
{
	struct dirent	*de;
	struct stat	 st;
	size_t		 n = 0;
	DIR		*d;
	int		 pass;
	bool		 ok = true;

	if ((d = opendir(q->path)) == NULL) {
		if (k->ndirs == 0 && k->err == 0)
			k->err = -errno;
		return 0;
	}
	/* What is read is what was judged: not a link swapped since. */
	if (fstat(dirfd(d), &st) != 0 || st.st_dev != q->st.st_dev ||
	    st.st_ino != q->st.st_ino) {
		if (k->ndirs == 0 && k->err == 0)
			k->err = -ESTALE;	/* the next scan looks again */
		closedir(d);
		return 0;
	}
	k->ndirs++;
	k->nlisted++;
	if (k->cbs.dir != NULL)
		k->cbs.dir(k->cbs.dir_arg, q->path);
	dircache_begin(k->cache, &st, start_ns, q->path);
	for (pass = 0; pass < 2; pass++) {
		rewinddir(d);
		for (;;) {
			errno = 0;
			if ((de = readdir(d)) == NULL)
				break;
			entry(k, q, dirfd(d), de->d_name, de->d_type, pass);
			n++;
		}
		ok = ok && errno == 0;
	}
	dircache_end(k->cache, ok);
	closedir(d);
	return n;
}

/* Directory q: by its listing when it did not change, else read. */
static size_t
visit(struct walker *k, const struct qdir *q)
{
	const struct dirlist *l;
	uint64_t	 now = k->clock();
	size_t		 n = 0;

	if ((l = dircache_get(k->cache, &q->st, now)) != NULL) {
		k->ndirs++;
		if (k->cbs.dir != NULL)
			k->cbs.dir(k->cbs.dir_arg, q->path);
		if (replay(k, q, l, &n))
			return n;
		k->ndirs--;		/* counted again by the read */
		dircache_forget(k->cache, &q->st);
	}
	/* What was reported is not again (k->files, k->dirs). */
	return n + read_dir(k, q, now);
}

/* The literal directories: where the walk starts, when it may. */
static void
start(struct walker *k)
{
	struct linkrule_refusal why;
	struct stat	 st;
	char		*key;
	int		 rc;

	if (k->follow == FOLLOW_ALWAYS)
		rc = stat(k->base, &st) == 0 ? 0 : -errno;
	else
		rc = linkrule_resolve(k->base, &st, NULL, &why);
	if (rc == -EPERM) {
		key = xasprintf("refused %s", why.link);
		if (note_once(k, key))
			log_warn("[%s] %s: a link owned by uid %u to a "
			    "directory owned by uid %u; %s is not read "
			    "(followSymlinks = %s)", k->fc->name, why.link,
			    (unsigned)why.link_uid, (unsigned)why.target_uid,
			    k->base, k->fc->follow_symlinks);
		free(key);
		linkrule_refusal_cleanup(&why);
	}
	if (rc != 0)
		k->err = rc;
	else if (!S_ISDIR(st.st_mode))
		k->err = -ENOTDIR;
	else
		enqueue(k, k->base, 0, &st);
}

/* Drop the walk under way, if any. */
static void
walk_drop(struct walker *k)
{
	struct qdir	*q;

	while ((q = k->head) != NULL) {
		k->head = q->next;
		free(q->path);
		free(q);
	}
	k->tail = &k->head;
	id_clear(&k->dirs);
	id_clear(&k->files);
	k->busy = false;
}

static uint64_t
realtime_ns(void)
{
	struct timespec	 t;

	if (clock_gettime(CLOCK_REALTIME, &t) != 0 || t.tv_sec < 0)
		return 0;
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

struct walker *
walker_new(const struct conf_flow *fc, const char *pattern, const char *base,
    const char *name_glob)
{
	struct walker	*k = xcalloc(1, sizeof(*k));

	k->fc = fc;
	k->pattern = pattern;
	k->base = base;
	k->name_glob = name_glob;
	k->tail = &k->head;
	k->cache = dircache_new();
	k->clock = realtime_ns;
	if (fc->follow_symlinks == NULL ||
	    strcmp(fc->follow_symlinks, "owner") == 0)
		k->follow = FOLLOW_OWNER;
	else if (strcmp(fc->follow_symlinks, "always") == 0)
		k->follow = FOLLOW_ALWAYS;
	else
		k->follow = FOLLOW_NEVER;
	return k;
}

void
walker_begin(struct walker *k, const struct walk_cbs *cbs)
{
	walk_drop(k);
	k->cbs = *cbs;
	k->busy = true;
	k->ndirs = 0;
	k->nlisted = 0;
	k->err = 0;
	start(k);
}

bool
walker_step(struct walker *k, size_t max_dirs, size_t max_entries)
{
	struct qdir	*q;
	size_t		 dirs = 0, entries = 0;

	if (!k->busy)
		return true;
	while (k->busy && (q = k->head) != NULL && dirs < max_dirs &&
	    entries < max_entries) {
		entries += visit(k, q);
		dirs++;
		/* read_dir may have queued more behind q, never before. */
		k->head = q->next;
		if (k->head == NULL)
			k->tail = &k->head;
		free(q->path);
		free(q);
	}
	if (k->head != NULL)
		return false;
	notes_sweep(k);
	dircache_sweep(k->cache);
	walk_drop(k);
	return true;
}

bool
walker_busy(const struct walker *k)
{
	return k->busy;
}

size_t
walker_ndirs(const struct walker *k)
{
	return k->ndirs;
}

size_t
walker_nlisted(const struct walker *k)
{
	return k->nlisted;
}

void
walker_set_clock(struct walker *k, uint64_t (*clock)(void))
{
	k->clock = clock;
}

int
walker_error(const struct walker *k)
{
	return k->err;
}

void
walker_free(struct walker *k)
{
	struct note	*n;

	if (k == NULL)
		return;
	walk_drop(k);
	id_free(&k->dirs);
	id_free(&k->files);
	dircache_free(k->cache);
	free(k->pbuf);
	while ((n = k->notes) != NULL) {
		k->notes = n->next;
		free(n->key);
		free(n);
	}
	free(k);
}
