/*
 * Spool files (spool.h): sparse copies of the unread rest of deleted files,
 * bounded by spoolMaxBytes, fsync'd, in one directory; each described by
 * FILE.desc, so that one the state file does not name yet is adopted.
 */
#include "config.h"

#include <sys/stat.h>

#include <dirent.h>
#include <stdio.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "files/spool.h"
#include "tail/tailer.h"
#include "state/registry.h"

#define CHUNK		(256u * 1024)
#define SUFFIX		".spool"
#define DESC		".desc"		/* after the spool file's name */
#define DESC_MAGIC	"disagent-spool 1\n"
#define DESC_MAX	(64u * 1024)

struct spool {
	char		*dir;
	uint64_t	 max;
	uint64_t	 used;		/* bytes its files hold */
	bool		 counted;	/* used includes the files found */
	bool		 added;		/* a file was made: sync the dir */
};

struct spool *
spool_new(const char *dir, uint64_t max_bytes)
{
	struct spool	*sp = xcalloc(1, sizeof(*sp));

	sp->dir = xstrdup(dir);
	sp->max = max_bytes;
	return sp;
}

void
spool_free(struct spool *sp)
{
	if (sp == NULL)
		return;
	free(sp->dir);
	free(sp);
}

const char *
spool_dir(const struct spool *sp)
{
	return sp->dir;
}

void
spool_kept_cleanup(struct spool_kept *k)
{
	free(k->file);
	k->file = NULL;
}

static bool
is_spool_name(const char *name)
{
	size_t	 n = strlen(name), m = strlen(SUFFIX);

	return n > m && strcmp(name + n - m, SUFFIX) == 0;
}

/* The bytes the files already in the directory hold (not yet shipped). */
static void
count_used(struct spool *sp)
{
	struct dirent	*de;
	struct stat	 st;
	DIR		*d;

	sp->counted = true;
	d = opendir(sp->dir);
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL)
		if (is_spool_name(de->d_name) &&
		    fstatat(dirfd(d), de->d_name, &st, 0) == 0 &&
		    S_ISREG(st.st_mode))
			sp->used += (uint64_t)st.st_blocks * 512;
	closedir(d);
}

/* A new spool file for c, open for writing, its path into *path. */
static int
create(struct spool *sp, const struct spool_copy *c, char **path)
{
	unsigned	 n;
	int		 fd;

	if (mkdir(sp->dir, 0700) != 0 && errno != EEXIST)
		return -errno;
	/* FLOW-DEV-INO-OFFSET.spool; .N before the suffix if that exists
	 * (the same rest spooled again, by a stop after a failed save). */
	for (n = 0; n < 100; n++) {
		*path = n == 0 ? xasprintf("%s/%s-%ju-%ju-%ju" SUFFIX, sp->dir,
		    c->flow, (uintmax_t)c->dev, (uintmax_t)c->ino,
		    (uintmax_t)c->from) : xasprintf("%s/%s-%ju-%ju-%ju.%u"
		    SUFFIX, sp->dir, c->flow, (uintmax_t)c->dev,
		    (uintmax_t)c->ino, (uintmax_t)c->from, n);
		/* Read back too: its fingerprint is taken once written. */
		fd = open(*path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC |
		    O_NOFOLLOW, 0600);
		if (fd >= 0)
			return fd;
		free(*path);
		*path = NULL;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* Copy [off, end) of src to the same offsets of dst; the bytes copied
 * (short on a write error, with *err set), or -errno of a read. */
static int64_t
copy_range(int src, int dst, uint64_t off, uint64_t end, int delim,
    uint64_t *last_delim, int *err)
{
	char		*b = xmalloc(CHUNK);
	uint64_t	 done = 0;
	ssize_t		 n, w;
	char		*p;

	*err = 0;
	while (off + done < end) {
		n = pread(src, b, (size_t)MIN((uint64_t)CHUNK,
		    end - off - done), (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;	/* the file shrank: what is there is all */
		w = pwrite(dst, b, (size_t)n, (off_t)(off + done));
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			*err = errno;
			break;
		}
		p = delim >= 0 ? memrchr(b, delim, (size_t)w) : NULL;
		if (p != NULL)
			*last_delim = off + done + (uint64_t)(p - b) + 1;
		done += (uint64_t)w;
		if (w < n) {
			*err = ENOSPC;
			break;
		}
	}
	free(b);
	return (int64_t)done;
}

/*
 * The copy proper: the head (the fingerprint a tailer computes) and the
 * byte before from (whether from follows a delimiter), then [from, end).
 * Sets out->end and out->why; 0, or -errno when the spool file is unusable.
 */
static int
copy(const struct spool_copy *c, int dst, uint64_t limit,
    struct spool_kept *out)
{
	uint64_t	 start = c->from > 0 ? c->from - 1 : 0;
	uint64_t	 end = MIN(c->size, c->from + limit), last = c->from;
	uint64_t	 head = MIN((uint64_t)c->head, c->size), dummy = 0;
	int64_t		 n;
	int		 err;

	if (head > start && head > 0)
		head = start;	/* the range copy covers the rest */
	if (head > 0 && copy_range(c->fd, dst, 0, head, -1, &dummy,
	    &err) != (int64_t)head)
		return err != 0 ? -err : -EIO;
	n = copy_range(c->fd, dst, start, end, c->delim, &last, &err);
	if (n < 0)
		return (int)n;
	if (err != 0)
		out->why = strerror(err);
	else if (end < c->size)
		out->why = "spoolMaxBytes";
	/* Whole records only, unless everything fit (a last line without
	 * delimiter is shipped as a file's last line is). */
	out->end = out->why == NULL && start + (uint64_t)n == c->size ?
	    c->size : MAX(last, c->from);
	if (out->end <= c->from)
		return 0;
	if (ftruncate(dst, (off_t)out->end) != 0 || fsync(dst) != 0)
		return -errno;
	return 0;
}

/* --- descriptions ------------------------------------------------------ */

/* The description of spool file file: new. */
static char *
desc_of(const char *file)
{
	return xasprintf("%s" DESC, file);
}

/* Write all of b, or -errno. */
static int
desc_write_all(int fd, const struct buf *b)
{
	size_t	 done = 0;
	ssize_t	 n;

	while (done < b->len) {
		n = write(fd, b->data + done, b->len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		done += (size_t)n;
	}
	return 0;
}

/*
 * FILE.desc for the spool file out->file (synced): written to a temporary
 * name, synced and renamed, so it exists whole or not at all; the
 * directory is synced with the spool file's (spool_sync).  The path comes
 * last and runs to the end (any byte but NUL).  0 or -errno.
 */
static int
write_desc(const struct spool_copy *c, const struct spool_kept *out)
{
	struct buf	 b;
	char		*desc = desc_of(out->file), *tmp;
	size_t		 i;
	int		 fd, rc;

	tmp = xasprintf("%s.tmp", desc);
	buf_init(&b);
	buf_printf(&b, DESC_MAGIC "flow %s\ndev %ju\nino %ju\nfrom %ju\n"
	    "end %ju\nsize %ju\nfp %" PRIu32 " %" PRIu32 "\n", c->flow,
	    (uintmax_t)c->dev, (uintmax_t)c->ino, (uintmax_t)c->from,
	    (uintmax_t)out->end, (uintmax_t)c->size, out->fp_len,
	    out->fp_crc);
	for (i = 0; i < c->nacked; i++)
		buf_printf(&b, "acked %ju %ju\n", (uintmax_t)c->acked[i].start,
		    (uintmax_t)c->acked[i].end);
	buf_printf(&b, "path %s\n", c->path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
	    0600);
	rc = fd < 0 ? -errno : desc_write_all(fd, &b);
	if (rc == 0 && fsync(fd) != 0)
		rc = -errno;
	if (fd >= 0)
		close(fd);
	if (rc == 0 && rename(tmp, desc) != 0)
		rc = -errno;
	if (rc != 0)
		(void)unlink(tmp);
	buf_cleanup(&b);
	free(tmp);
	free(desc);
	return rc;
}

/* What a description says. */
struct desc {
	char		 flow[128];
	uint64_t	 dev, ino, from, end, size;
	uint32_t	 fp_len, fp_crc;
	struct reg_span	*acked;
	size_t		 nacked;
	char		*path;
};

static void
desc_cleanup(struct desc *d)
{
	free(d->acked);
	free(d->path);
}

/* One line of a description into d; false when it is not one. */
static bool
desc_line(struct desc *d, const char *l)
{
	uintmax_t	 a, b;
	unsigned	 x, y;

	if (sscanf(l, "flow %127s", d->flow) == 1)
		return true;
	if (sscanf(l, "dev %ju", &a) == 1)
		return d->dev = a, true;
	if (sscanf(l, "ino %ju", &a) == 1)
		return d->ino = a, true;
	if (sscanf(l, "from %ju", &a) == 1)
		return d->from = a, true;
	if (sscanf(l, "end %ju", &a) == 1)
		return d->end = a, true;
	if (sscanf(l, "size %ju", &a) == 1)
		return d->size = a, true;
	if (sscanf(l, "fp %u %u", &x, &y) == 2) {
		d->fp_len = x;
		d->fp_crc = y;
		return true;
	}
	if (sscanf(l, "acked %ju %ju", &a, &b) == 2 && a < b &&
	    d->nacked < REG_MAX_SPANS) {
		d->acked = xrealloc(d->acked, (d->nacked + 1) *
		    sizeof(*d->acked));
		d->acked[d->nacked++] = (struct reg_span){ .start = a,
		    .end = b };
		return true;
	}
	return false;
}

/* The description of spool file file into d (cleaned up by the caller);
 * false when there is none or it is not whole. */
static bool
read_desc(const char *file, struct desc *d)
{
	char	*desc = desc_of(file), *text = xmalloc(DESC_MAX + 1), *p, *nl;
	ssize_t	 n = -1;
	int	 fd;
	bool	 ok = false;

	fd = open(desc, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0) {
		n = read(fd, text, DESC_MAX);
		close(fd);
	}
	if (n <= 0 || (size_t)n < strlen(DESC_MAGIC) ||
	    memcmp(text, DESC_MAGIC, strlen(DESC_MAGIC)) != 0 ||
	    text[n - 1] != '\n' || memchr(text, '\0', (size_t)n) != NULL)
		goto out;
	text[n - 1] = '\0';		/* the path's end */
	for (p = text + strlen(DESC_MAGIC); strncmp(p, "path ", 5) != 0;
	    p = nl + 1) {
		nl = strchr(p, '\n');
		if (nl == NULL)
			goto out;
		*nl = '\0';
		if (!desc_line(d, p))
			goto out;
	}
	d->path = xstrdup(p + 5);
	ok = d->flow[0] != '\0' && d->path[0] != '\0' && d->end > d->from &&
	    d->size >= d->end;
out:
	free(text);
	free(desc);
	return ok;
}

/*
 * Adopt spool file file, which no entry names: its description's entry,
 * as the stop would have saved it, in place of the original's.  False
 * when it has no valid description or is not the file it describes.
 */
static bool
adopt(struct registry *reg, const char *file)
{
	struct desc	 d;
	struct stat	 st;
	struct reg_entry *e;
	uint32_t	 crc;
	bool		 ok;

	memset(&d, 0, sizeof(d));
	ok = read_desc(file, &d) && stat(file, &st) == 0 &&
	    S_ISREG(st.st_mode) && (uint64_t)st.st_size == d.end &&
	    tailer_head_crc(file, d.fp_len, &crc) == 0 && crc == d.fp_crc;
	if (ok) {
		registry_remove(reg, d.flow, d.dev, d.ino);
		e = registry_set(reg, d.flow, (uint64_t)st.st_dev,
		    (uint64_t)st.st_ino, d.fp_crc, d.fp_len, d.path, d.from);
		registry_set_size(reg, e, d.end);
		registry_set_spool(reg, e, file, d.dev, d.ino);
		registry_set_acked(reg, e, d.acked, d.nacked);
		log_info("spool: adopting %s: the state file does not name it "
		    "yet (the stop that wrote it could not save the state); "
		    "[%s] ships its %ju bytes of %s (inode %ju) from offset "
		    "%ju", file, d.flow, (uintmax_t)(d.end - d.from), d.path,
		    (uintmax_t)d.ino, (uintmax_t)d.from);
	}
	desc_cleanup(&d);
	return ok;
}

/* Sync the directory of path.  0 or -errno. */
static int
sync_dir_of(const char *path)
{
	const char	*slash = strrchr(path, '/');
	char		*dir;
	int		 fd, rc = 0;

	dir = slash == NULL ? xstrdup(".") : slash == path ? xstrdup("/") :
	    xasprintf("%.*s", (int)(slash - path), path);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) != 0)
		rc = -errno;
	if (fd >= 0)
		close(fd);
	free(dir);
	return rc;
}

int
spool_forget(const char *file)
{
	char	*desc = desc_of(file);
	int	 rc = 0;

	if (unlink(desc) != 0)
		rc = errno == ENOENT ? 1 : -errno;
	free(desc);
	if (rc < 0)
		return rc;
	return rc == 0 ? sync_dir_of(file) : 0;
}

int
spool_write(struct spool *sp, const struct spool_copy *c,
    struct spool_kept *out)
{
	uint64_t	 room, need = c->size - c->from;
	int		 fd, rc, desc_rc;

	memset(out, 0, sizeof(*out));
	out->end = c->from;
	if (!sp->counted)
		count_used(sp);
	room = sp->max > sp->used ? sp->max - sp->used : 0;
	if (room == 0) {
		out->why = "spoolMaxBytes";
		return 0;
	}
	fd = create(sp, c, &out->file);
	if (fd < 0) {
		out->why = strerror(-fd);
		return fd;
	}
	rc = copy(c, fd, MIN(room, need), out);
	if (rc == 0 && out->end > c->from && fstat(fd, &out->st) != 0)
		rc = -errno;
	if (rc == 0 && out->end > c->from) {
		out->fp_len = (uint32_t)MIN((uint64_t)c->head, out->end);
		if (tailer_fingerprint(fd, out->fp_len, &out->fp_crc) != 0)
			rc = -EIO;
	}
	close(fd);
	/* The data is synced: now it may be relied on.  Without its
	 * description (a full disk) it is what it was before there were
	 * any: kept, for the state file to name. */
	if (rc == 0 && out->end > c->from && (desc_rc = write_desc(c,
	    out)) != 0)
		log_warn("spool: %s has no description (%s): if the state "
		    "file cannot name it, the next start removes it",
		    out->file, strerror(-desc_rc));
	if (rc != 0 || out->end <= c->from) {
		if (rc != 0)
			out->why = strerror(-rc);
		(void)unlink(out->file);
		(void)spool_forget(out->file);
		spool_kept_cleanup(out);
		out->end = c->from;
		return rc;
	}
	sp->used += (uint64_t)out->st.st_blocks * 512;
	sp->added = true;
	return 0;
}

int
spool_sync(struct spool *sp)
{
	int	 fd, rc = 0;

	if (!sp->added)
		return 0;
	fd = open(sp->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) != 0)
		rc = -errno;
	if (fd >= 0)
		close(fd);
	if (rc == 0)
		sp->added = false;
	return rc;
}

/* --- the sweep at start ------------------------------------------------- */

struct named {
	char	**files;
	size_t	  n;
};

static void
collect_named(const struct reg_entry *e, void *arg)
{
	struct named	*nm = arg;

	if (reg_spool(e) == NULL)
		return;
	nm->files = xrealloc(nm->files, (nm->n + 1) * sizeof(*nm->files));
	nm->files[nm->n++] = reg_spool(e)->file;
}

static bool
named(const struct named *nm, const char *path)
{
	size_t	 i;

	for (i = 0; i < nm->n; i++)
		if (strcmp(nm->files[i], path) == 0)
			return true;
	return false;
}

/* A description (or its temporary) whose spool file is gone: removed. */
static void
sweep_desc(const struct spool *sp, const char *name)
{
	size_t	 n = strlen(name), m = strlen(SUFFIX DESC);
	char	*path, *file;

	if (n > 4 && strcmp(name + n - 4, ".tmp") == 0)
		n -= 4;
	if (n <= m || strncmp(name + n - m, SUFFIX DESC, m) != 0)
		return;
	path = xasprintf("%s/%s", sp->dir, name);
	file = xasprintf("%s/%.*s", sp->dir, (int)(n - strlen(DESC)), name);
	if (n < strlen(name) || access(file, F_OK) != 0)
		(void)unlink(path);
	free(file);
	free(path);
}

void
spool_sweep(const struct spool *sp, struct registry *reg)
{
	struct named	 nm = { NULL, 0 };
	struct dirent	*de;
	DIR		*d;
	char		*path;

	d = opendir(sp->dir);
	if (d == NULL)
		return;
	(void)registry_each(reg, collect_named, &nm);
	while ((de = readdir(d)) != NULL) {
		if (!is_spool_name(de->d_name))
			continue;
		path = xasprintf("%s/%s", sp->dir, de->d_name);
		if (!named(&nm, path) && !adopt(reg, path)) {
			log_info("spool: removing %s: the state file does not "
			    "name it and it has no description (delivered, or "
			    "written by a stop killed while copying)", path);
			(void)unlink(path);
			(void)spool_forget(path);
		}
		free(path);
	}
	rewinddir(d);
	while ((de = readdir(d)) != NULL)
		sweep_desc(sp, de->d_name);
	closedir(d);
	free(nm.files);
}
