/*
 * Spool files (spool.h): sparse copies of the unread rest of deleted files,
 * bounded by spoolMaxBytes, fsync'd, in one directory.
 */
#include "config.h"

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "files/spool.h"
#include "files/tailer.h"
#include "state/registry.h"

#define CHUNK		(256u * 1024)
#define SUFFIX		".spool"

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

int
spool_write(struct spool *sp, const struct spool_copy *c,
    struct spool_kept *out)
{
	uint64_t	 room, need = c->size - c->from;
	int		 fd, rc;

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
	if (rc != 0 || out->end <= c->from) {
		if (rc != 0)
			out->why = strerror(-rc);
		(void)unlink(out->file);
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

void
spool_sweep(const struct spool *sp, const struct registry *reg)
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
		if (!named(&nm, path)) {
			log_info("spool: removing %s: the state file does not "
			    "name it (delivered, or written by a stop that "
			    "could not save the state)", path);
			(void)unlink(path);
		}
		free(path);
	}
	closedir(d);
	free(nm.files);
}
