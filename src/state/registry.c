/*
 * The registry: committed offsets keyed by (flow, dev, ino), kept in a hash
 * table (regtable.c), and the policy that keeps them safe on disk; the
 * format itself is statefile.c's.  Saving replaces the file atomically
 * (atomicfile.c: path.tmp, fsync, rename, directory fsync) and keeps the
 * previous generation as path.bak (a hard link, or a copy where links are
 * not supported), made just before the rename, so a complete state file
 * exists at every instant (registry_save.c, which can also leave the
 * disk's part to the loop's thread pool).  Loading uses path, or
 * path.bak when path is missing or corrupt; a file that fails to load is
 * set aside as path.corrupt-<time>, and when both are bad the agent
 * refuses to start rather than start silently from zero.
 */
#include "config.h"

#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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


/* --- lifetime and lookup ----------------------------------------------- */

struct registry *
registry_new(const char *path)
{
	struct registry	*reg;

	reg = xcalloc(1, sizeof(*reg));
	reg->path = xstrdup(path);
	reg->bak = xasprintf("%s.bak", path);
	reg->baktmp = xasprintf("%s.bak.tmp", path);
	reg->lockpath = registry_lock_path(path);
	reg->lock_fd = -1;
	regtable_init(&reg->tab);
	return reg;
}

void
registry_free(struct registry *reg)
{
	if (reg == NULL)
		return;
	if (reg->flight != NULL)
		reg->flight->done = NULL;	/* its owner goes too */
	registry_save_wait(reg);
	regtable_cleanup(&reg->tab);
	if (reg->lock_fd >= 0)
		close(reg->lock_fd);	/* and with it the lock */
	free(reg->path);
	free(reg->bak);
	free(reg->baktmp);
	free(reg->lockpath);
	free(reg);
}

char *
registry_lock_path(const char *path)
{
	return xasprintf("%s.lock", path);
}

/* The pid the holder wrote into the lock file, or 0. */
static long
holder_of(int fd)
{
	char	 buf[24];
	ssize_t	 n;

	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strtol(buf, NULL, 10);
}

/*
 * Whether a process holds the lock of the state file at path, tried with
 * a shared lock let go at once; its pid (as it wrote it) into *pid, 0 when
 * unknown.
 */
static bool
probe_lock(const char *path, long *pid)
{
	char	*lock = registry_lock_path(path);
	bool	 held = false;
	int	 fd;

	*pid = 0;
	fd = open(lock, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	free(lock);
	if (fd == -1)
		return false;
	if (flock(fd, LOCK_SH | LOCK_NB) == -1 && errno == EWOULDBLOCK) {
		held = true;
		*pid = holder_of(fd);
	}
	close(fd);		/* lets go of the shared lock, if it got it */
	return held;
}

bool
registry_lock_held(const char *path)
{
	long	 pid;

	return probe_lock(path, &pid);
}

long
registry_lock_holder(const char *path)
{
	long	 pid;

	return probe_lock(path, &pid) && pid > 0 ? pid : 0;
}

int
registry_lock(struct registry *reg, long *holder)
{
	char	 pid[24];
	int	 fd, r, n;

	*holder = 0;
	if (reg->lock_fd >= 0)
		return 0;
	fd = open(reg->lockpath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
	    0644);
	/* Made by another user (import-state run as root): flock works on
	 * a descriptor open for reading too. */
	if (fd == -1 && errno == EACCES)
		fd = open(reg->lockpath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd == -1)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) == -1) {
		r = -errno;
		if (r == -EWOULDBLOCK)
			*holder = holder_of(fd);
		close(fd);
		return r;
	}
	/* For the message of whoever finds it held (best effort). */
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) == 0 && pwrite(fd, pid, (size_t)n, 0) != n)
		log_debug("%s: cannot write the pid", reg->lockpath);
	reg->lock_fd = fd;
	return 0;
}

struct reg_entry *
registry_find(struct registry *reg, const char *flow, uint64_t dev,
    uint64_t ino)
{
	return regtable_find(&reg->tab, flow, dev, ino);
}

/* Replace *dst with a copy of src; true when the text changed. */
static bool
replace_str(char **dst, const char *src)
{
	if (*dst != NULL && strcmp(*dst, src) == 0)
		return false;
	free(*dst);
	*dst = xstrdup(src);
	return true;
}

/*
 * Make *dst (a shared text, util.h) read src: a copy of it, or, when
 * shared, src itself held once more (a tailer's path: one copy of it for
 * the two).  True when the text changed.
 */
static bool
replace_path(char **dst, const char *src, bool shared)
{
	char	*old = *dst;
	bool	 same = old != NULL && strcmp(old, src) == 0;

	if (old == src || (same && !shared))
		return false;
	*dst = shared ? rstr_hold((char *)(uintptr_t)src) : rstr_new(src);
	rstr_free(old);
	return !same;
}

/* Clean -> dirty: tell the owner once, so it can save soon. */
static void
mark_dirty(struct registry *reg)
{
	reg->changes++;
	if (reg->dirty)
		return;
	reg->dirty = true;
	if (reg->on_dirty != NULL)
		reg->on_dirty(reg->on_dirty_arg);
}

void
registry_on_dirty(struct registry *reg, void (*cb)(void *), void *arg)
{
	reg->on_dirty = cb;
	reg->on_dirty_arg = arg;
}

/* Drop the acknowledged spans that end at or before offset. */
static void
trim_acked(struct reg_entry *e, uint64_t offset)
{
	struct reg_rare	*k = e->rare;
	uint32_t	 i = 0;

	if (k == NULL)
		return;
	while (i < k->nacked && k->acked[i].end <= offset)
		i++;
	if (i == 0)
		return;
	memmove(k->acked, k->acked + i, (k->nacked - i) * sizeof(*k->acked));
	k->nacked -= i;
	reg_rare_trim(e);
}

static struct reg_entry *
set(struct registry *reg, const char *flow, uint64_t dev, uint64_t ino,
    uint32_t fp_crc, uint32_t fp_len, const char *path, bool shared,
    uint64_t offset)
{
	struct reg_entry *e;
	int64_t		 now = wall_s();
	bool		 changed;

	e = regtable_find(&reg->tab, flow, dev, ino);
	if (e == NULL) {
		e = regtable_add(&reg->tab, flow, dev, ino);
		reg->added++;
		mark_dirty(reg);
	}
	changed = replace_path(&e->path, path, shared);
	changed |= e->fp_crc != fp_crc || e->fp_len != fp_len ||
	    e->offset != offset || e->updated != now;
	/* Spans belong to the bytes they were acknowledged in: a file read
	 * again from an earlier offset (rewritten in place) has none. */
	trim_acked(e, offset < e->offset ? UINT64_MAX : offset);
	e->fp_crc = fp_crc;
	e->fp_len = fp_len;
	e->offset = offset;
	e->updated = now;
	if (changed)
		mark_dirty(reg);
	return e;
}

struct reg_entry *
registry_set(struct registry *reg, const char *flow, uint64_t dev,
    uint64_t ino, uint32_t fp_crc, uint32_t fp_len, const char *path,
    uint64_t offset)
{
	return set(reg, flow, dev, ino, fp_crc, fp_len, path, false, offset);
}

struct reg_entry *
registry_set_shared(struct registry *reg, const char *flow, uint64_t dev,
    uint64_t ino, uint32_t fp_crc, uint32_t fp_len, const char *path,
    uint64_t offset)
{
	return set(reg, flow, dev, ino, fp_crc, fp_len, path, true, offset);
}

void
registry_remove(struct registry *reg, const char *flow, uint64_t dev,
    uint64_t ino)
{
	if (regtable_remove(&reg->tab, flow, dev, ino))
		mark_dirty(reg);
}

/* A ttl_s <= 0 disables expiry (nothing is dropped). */
void
registry_expire(struct registry *reg, int64_t now_s, int64_t ttl_s)
{
	size_t	 dropped;

	if (ttl_s <= 0)
		return;
	dropped = regtable_expire(&reg->tab, now_s - ttl_s);
	if (dropped > 0) {
		mark_dirty(reg);
		log_info("%s: expired %zu entries older than %" PRId64 " s",
		    reg->path, dropped, ttl_s);
	}
}

void
registry_set_spool(struct registry *reg, struct reg_entry *e,
    const char *file, uint64_t dev, uint64_t ino)
{
	struct reg_rare	*r = reg_rare_of(e);

	if (r->spool == NULL)
		r->spool = xcalloc(1, sizeof(*r->spool));
	(void)replace_str(&r->spool->file, file);
	r->spool->dev = dev;
	r->spool->ino = ino;
	mark_dirty(reg);
}

void
registry_set_complete(struct registry *reg, struct reg_entry *e,
    bool complete, int64_t mtime_ns, uint32_t tail_crc, uint32_t tail_len)
{
	struct reg_done	*d = e->rare != NULL ? e->rare->done : NULL;

	if (!complete) {
		if (d == NULL)
			return;
		free(d);
		e->rare->done = NULL;
		reg_rare_trim(e);
		mark_dirty(reg);
		return;
	}
	if (d != NULL && d->mtime_ns == mtime_ns && d->tail_crc == tail_crc &&
	    d->tail_len == tail_len)
		return;
	if (d == NULL)
		d = reg_rare_of(e)->done = xcalloc(1, sizeof(*d));
	d->mtime_ns = mtime_ns;
	d->tail_crc = tail_crc;
	d->tail_len = tail_len;
	mark_dirty(reg);
	d->change = reg->changes;
}

void
registry_set_acked(struct registry *reg, struct reg_entry *e,
    const struct reg_span *spans, size_t n)
{
	static bool	 warned;
	struct reg_rare	*k;
	size_t		 i = 0;

	while (i < n && spans[i].end <= e->offset)
		i++;
	spans += i;
	n -= i;
	if (n > REG_MAX_SPANS && !warned) {
		log_warn("%s: %zu acknowledged ranges past offset %ju; the "
		    "farthest are not kept, and would be sent again after a "
		    "restart", e->path, n, (uintmax_t)e->offset);
		warned = true;
	}
	n = MIN(n, (size_t)REG_MAX_SPANS);
	if (n == reg_nacked(e) && (n == 0 ||
	    memcmp(reg_acked(e), spans, n * sizeof(*spans)) == 0))
		return;
	k = reg_rare_of(e);
	if (n > k->nacked)
		k->acked = xrealloc(k->acked, n * sizeof(*k->acked));
	if (n > 0)
		memcpy(k->acked, spans, n * sizeof(*spans));
	k->nacked = (uint32_t)n;
	reg_rare_trim(e);
	mark_dirty(reg);
}

void
registry_set_hold(struct registry *reg, reg_hold_fn fn, void *arg)
{
	reg->hold = fn;
	reg->hold_arg = arg;
}

bool
registry_held(const struct registry *reg, const char *flow, uint64_t dev,
    uint64_t ino)
{
	return reg->hold != NULL && reg->hold(reg->hold_arg, flow, dev, ino);
}

void
registry_add_found(struct reg_entry *e, uint64_t off, uint64_t hash,
    uint32_t len)
{
	struct reg_rare	*k = reg_rare_of(e);
	uint32_t	 i;

	/* A read in sequence order finds each file's records in about file
	 * order: insert from the end. */
	if ((k->nfound & (k->nfound - 1)) == 0)
		k->found = xrealloc(k->found, (k->nfound ? 2 * k->nfound : 1) *
		    sizeof(*k->found));
	for (i = k->nfound; i > 0 && k->found[i - 1].off > off; i--)
		k->found[i] = k->found[i - 1];
	k->found[i].off = off;
	k->found[i].hash = hash;
	k->found[i].len = len;
	k->nfound++;
}

struct reg_found *
registry_take_found(struct reg_entry *e, size_t *n)
{
	struct reg_found *f;

	*n = reg_nfound(e);
	if (e->rare == NULL)
		return NULL;
	f = e->rare->found;
	e->rare->found = NULL;
	e->rare->nfound = 0;
	reg_rare_trim(e);
	return f;
}

const struct reg_run *
registry_run(const struct registry *reg)
{
	return reg->tab.run;
}

void
registry_set_run(struct registry *reg, struct reg_run *run)
{
	reg_run_free(reg->tab.run);
	reg->tab.run = run;
}

struct reg_run *
registry_take_run(struct registry *reg)
{
	struct reg_run	*run = reg->tab.run;

	reg->tab.run = NULL;
	return run;
}

void
registry_set_cursor(struct registry *reg, struct reg_entry *e,
    const char *cursor)
{
	if (replace_str(&reg_rare_of(e)->cursor, cursor))
		mark_dirty(reg);
}

void
registry_set_size(struct registry *reg, struct reg_entry *e, uint64_t size)
{
	(void)reg;
	e->size = size;
}

bool
registry_durable(const struct registry *reg, const struct reg_entry *e)
{
	return reg_done(e) == NULL || reg_done(e)->change <= reg->saved;
}

bool
registry_unsaved_entries(const struct registry *reg)
{
	return reg->added != reg->added_saved;
}

size_t
registry_count(const struct registry *reg)
{
	return reg->tab.n;
}

void
registry_describe_flow(struct registry *reg, const char *flow,
    const char *stream, const char *pattern)
{
	regtable_describe(&reg->tab, flow, stream, pattern);
}

const struct reg_flowdesc *
registry_flow_desc(const struct registry *reg, const char *flow)
{
	return regtable_desc(&reg->tab, flow);
}

void
registry_flow_was(struct registry *reg, const char *flow, const char *from)
{
	struct reg_flowdesc *d;

	d = (struct reg_flowdesc *)regtable_desc(&reg->tab, flow);
	if (d == NULL)
		return;
	free(d->was);
	d->was = xstrdup(from);
}

const char **
registry_flow_names(const struct registry *reg, size_t *n)
{
	struct reg_entry **v = regtable_sorted(&reg->tab);
	const char	 **names = xcalloc(reg->tab.n + 1, sizeof(*names));
	size_t		   i;

	*n = 0;
	for (i = 0; i < reg->tab.n; i++)
		if (*n == 0 || strcmp(names[*n - 1], v[i]->flow) != 0)
			names[(*n)++] = v[i]->flow;
	free(v);
	return names;
}

size_t
registry_flow_count(const struct registry *reg, const char *flow)
{
	size_t	 i, n = 0;

	for (i = 0; i < reg->tab.nb; i++)
		if (reg->tab.b[i] != NULL &&
		    strcmp(reg->tab.b[i]->flow, flow) == 0)
			n++;
	return n;
}

size_t
registry_rename_flow(struct registry *reg, const char *from, const char *to)
{
	size_t	 moved = regtable_rename_flow(&reg->tab, from, to);

	if (moved > 0)
		mark_dirty(reg);
	return moved;
}

bool
registry_dirty(const struct registry *reg)
{
	return reg->dirty;
}

size_t
registry_each(const struct registry *reg,
    void (*cb)(const struct reg_entry *, void *), void *arg)
{
	struct reg_entry	**v;
	size_t			  i, n = reg->tab.n;

	v = regtable_sorted(&reg->tab);
	for (i = 0; i < n; i++)
		cb(v[i], arg);
	free(v);
	return n;
}

/* --- loading ----------------------------------------------------------- */

/* What choose() found: how each generation read, and which one is in t. */
struct choice {
	int		 r;		/* path */
	int		 rb;		/* path.bak; -ENOENT when not tried */
	int		 version;	/* of the file in t */
	bool		 from_bak;
};

/*
 * The generation to use, read into t, as registry_load and registry_peek
 * both decide it: path; else path.bak when path is missing or corrupt.
 * Returns 0 (t holds it); -ENOENT when neither exists; -EBADMSG when a
 * file is corrupt and neither is usable; or the error reading path (the
 * .bak is not tried) or, path missing, reading the .bak.
 */
static int
choose(struct registry *reg, struct reg_table *t, struct choice *c)
{
	memset(c, 0, sizeof(*c));
	c->rb = -ENOENT;
	c->r = statefile_read(reg->path, t, &c->version);
	if (c->r == 0)
		return 0;
	if (c->r != -ENOENT && c->r != -EBADMSG)
		return c->r;
	c->rb = statefile_read(reg->bak, t, &c->version);
	if (c->rb == 0) {
		c->from_bak = true;
		return 0;
	}
	return c->r == -EBADMSG ? -EBADMSG : c->rb;
}

/*
 * Keep a corrupt file as path.corrupt-<time>: moved away when keep is
 * false, hard-linked (left in place) when true.
 */
static void
set_aside(const char *path, bool keep)
{
	struct stat	 st;
	char		*name = NULL;
	int64_t		 now = wall_s();
	int		 i, r;

	for (i = 0; i < 100; i++) {
		free(name);
		name = i == 0 ? xasprintf("%s.corrupt-%" PRId64, path, now) :
		    xasprintf("%s.corrupt-%" PRId64 ".%d", path, now, i);
		if (lstat(name, &st) == -1 && errno == ENOENT)
			break;
	}
	r = keep ? link(path, name) : rename(path, name);
	if (r == -1)
		log_error("cannot set aside %s as %s: %s", path, name,
		    strerror(errno));
	else
		log_warn("corrupt state file %s %s %s", path,
		    keep ? "copied to" : "moved to", name);
	free(name);
}

/*
 * Act on what choose() returned (r) for registry_load: log it, set corrupt
 * files aside, mark the registry dirty when path must be rewritten.
 * Returns r, or 0 when there is no state file at all (a first start).
 */
static int
settle(struct registry *reg, const struct choice *c, int r, size_t n)
{
	if (r == 0 && !c->from_bak)
		log_info("loaded %zu entries from %s", n, reg->path);
	if (r == 0 && c->from_bak) {
		if (c->r == -EBADMSG)
			set_aside(reg->path, false);
		log_warn("%s %s; loaded %zu entries from the backup %s",
		    reg->path, c->r == -ENOENT ? "is missing" : "was corrupt",
		    n, reg->bak);
		/* Rewrite path soon so two good generations exist again. */
		reg->dirty = true;
	}
	if (r == 0 && c->version < STATEFILE_VERSION) {
		log_info("%s: state file version %d; the next save writes "
		    "version %d", c->from_bak ? reg->bak : reg->path,
		    c->version, STATEFILE_VERSION);
		reg->dirty = true;
	}
	if (r == -ENOENT) {
		log_info("no state file %s; starting with no offsets",
		    reg->path);
		return 0;
	}
	if (r < 0 && (c->r == -ENOENT || c->r == -EBADMSG)) {
		/* Leave the bad files in place: every later start fails
		 * alike. */
		if (c->r == -EBADMSG)
			set_aside(reg->path, true);
		if (c->rb == -EBADMSG)
			set_aside(reg->bak, true);
		log_error("no usable state in %s or %s", reg->path, reg->bak);
	}
	return r;
}

/* Forget the entries held, then choose the generation to read into t. */
static int
choose_afresh(struct registry *reg, struct reg_table *t, struct choice *c)
{
	regtable_cleanup(&reg->tab);
	regtable_init(&reg->tab);
	reg->dirty = false;
	return choose(reg, t, c);
}

int
registry_load(struct registry *reg)
{
	struct reg_table t = { NULL, 0, 0, NULL, 0, NULL, NULL, 0 };
	struct choice	 c;
	int		 r;

	r = choose_afresh(reg, &t, &c);
	r = settle(reg, &c, r, t.n);
	if (r == 0)
		regtable_swap(&reg->tab, &t);
	regtable_cleanup(&t);
	return r;
}

int
registry_peek(struct registry *reg, bool *from_bak)
{
	struct reg_table t = { NULL, 0, 0, NULL, 0, NULL, NULL, 0 };
	struct choice	 c;
	int		 r;

	r = choose_afresh(reg, &t, &c);
	*from_bak = r == 0 && c.from_bak;
	if (r == 0)
		regtable_swap(&reg->tab, &t);
	regtable_cleanup(&t);
	return r;
}
