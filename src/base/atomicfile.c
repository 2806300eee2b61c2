/*
 * Files replaced atomically: path.tmp written (through a 64 KiB buffer, so
 * a large file is never held whole), optionally fsync'd, renamed over path,
 * and the directory optionally fsync'd.  The first error of a replacement
 * is kept: later writes do nothing and the commit returns it, so callers
 * check once.  path.tmp is removed by atomicfile_cleanup unless the rename
 * happened.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/atomicfile.h"
#include "base/util.h"

#define CHUNK	(64u * 1024)

/* Record the first error (and what failed on which file); returns it. */
static int
failed(struct atomicfile *af, const char *op, const char *file, int err)
{
	if (af->err == 0) {
		af->err = err;
		af->op = op;
		af->file = file;
	}
	return af->err;
}

static int
create(struct atomicfile *af)
{
	af->fd = open(af->tmp, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC,
	    af->mode);
	if (af->fd == -1)
		return failed(af, "create", af->tmp, -errno);
	/* A reader running as another user must not depend on the umask. */
	if ((af->flags & ATOMICFILE_EXACT_MODE) && fchmod(af->fd, af->mode) ==
	    -1)
		return failed(af, "chmod", af->tmp, -errno);
	return 0;
}

int
atomicfile_open(struct atomicfile *af, const char *path, mode_t mode,
    unsigned flags)
{
	memset(af, 0, sizeof(*af));
	af->fd = -1;
	af->path = xstrdup(path);
	af->tmp = xasprintf("%s.tmp", path);
	af->flags = flags;
	af->mode = mode;
	buf_init(&af->b);
	return (flags & ATOMICFILE_DEFER) ? 0 : create(af);
}

static int
flush(struct atomicfile *af)
{
	int	 r;

	if (af->flags & ATOMICFILE_DEFER)
		return af->err;		/* written by the commit */
	if (af->err == 0 && af->b.len > 0) {
		r = write_all(af->fd, af->b.data, af->b.len);
		if (r < 0)
			failed(af, "write", af->tmp, r);
	}
	buf_reset(&af->b);
	return af->err;
}

int
atomicfile_write(struct atomicfile *af, const void *p, size_t n)
{
	int	 r;

	if (af->err != 0)
		return af->err;
	if (af->flags & ATOMICFILE_DEFER) {
		buf_add(&af->b, p, n);
		return 0;
	}
	if (af->b.len + n > CHUNK && flush(af) != 0)
		return af->err;
	if (n >= CHUNK) {
		r = write_all(af->fd, p, n);
		return r == 0 ? 0 : failed(af, "write", af->tmp, r);
	}
	if (af->b.cap == 0)
		buf_reserve_exact(&af->b, CHUNK);
	buf_add(&af->b, p, n);
	return 0;
}

int
atomicfile_pwrite(struct atomicfile *af, uint64_t off, const void *p,
    size_t n)
{
	ssize_t	 w;

	if (flush(af) != 0)
		return af->err;
	if (af->flags & ATOMICFILE_DEFER) {
		if (off > af->b.len || n > af->b.len - off)
			return failed(af, "write", af->tmp, -EINVAL);
		memcpy(af->b.data + off, p, n);
		return 0;
	}
	w = pwrite(af->fd, p, n, (off_t)off);
	if (w == -1)
		return failed(af, "write", af->tmp, -errno);
	if ((size_t)w != n)
		return failed(af, "write", af->tmp, -EIO);
	return 0;
}

int
atomicfile_fail(struct atomicfile *af, const char *op, int err)
{
	failed(af, op, af->tmp, err);
	return err;
}

static int
fsync_dir(const char *path)
{
	char		*dir = xdirname(path);
	int		 fd, r = 0;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd == -1 || fsync(fd) == -1)
		r = -errno;
	if (fd != -1)
		close(fd);
	free(dir);
	return r;
}

int
atomicfile_commit(struct atomicfile *af, void (*before_rename)(void *),
    void *arg)
{
	int	 fd;
	int	 r;

	if (flush(af) != 0)
		return af->err;
	if (af->flags & ATOMICFILE_DEFER) {
		if (create(af) != 0)
			return af->err;
		r = write_all(af->fd, af->b.data, af->b.len);
		buf_cleanup(&af->b);
		if (r < 0)
			return failed(af, "write", af->tmp, r);
	}
	fd = af->fd;
	if ((af->flags & ATOMICFILE_SYNC) && fsync(fd) == -1)
		return failed(af, "fsync", af->tmp, -errno);
	af->fd = -1;
	if (close(fd) == -1)
		return failed(af, "close", af->tmp, -errno);
	if (before_rename != NULL)
		before_rename(arg);
	if (rename(af->tmp, af->path) == -1)
		return failed(af, "rename to", af->path, -errno);
	af->done = true;
	if (af->flags & ATOMICFILE_SYNC) {
		r = fsync_dir(af->path);
		if (r < 0)
			return failed(af, "fsync the directory of", af->path,
			    r);
	}
	return 0;
}

void
atomicfile_cleanup(struct atomicfile *af)
{
	if (af->fd >= 0)
		close(af->fd);
	af->fd = -1;
	if (!af->done && af->tmp != NULL)
		unlink(af->tmp);
	free(af->path);
	free(af->tmp);
	af->path = af->tmp = NULL;
	af->op = af->file = NULL;
	buf_cleanup(&af->b);
}

int
atomicfile_replace(const char *path, const void *data, size_t n,
    mode_t mode, unsigned flags)
{
	struct atomicfile	 af;
	int			 r;

	r = atomicfile_open(&af, path, mode, flags);
	if (r == 0)
		r = atomicfile_write(&af, data, n);
	if (r == 0)
		r = atomicfile_commit(&af, NULL, NULL);
	atomicfile_cleanup(&af);
	return r;
}

int
atomicfile_copy(const char *src, const char *dst, mode_t mode,
    unsigned flags)
{
	struct atomicfile	 af;
	char			 chunk[CHUNK];
	ssize_t			 n;
	int			 fd, r;

	fd = open(src, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return -errno;
	r = atomicfile_open(&af, dst, mode, flags);
	while (r == 0) {
		n = read(fd, chunk, sizeof(chunk));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n == 0 ? 0 : failed(&af, "read", src, -errno);
			break;
		}
		r = atomicfile_write(&af, chunk, (size_t)n);
	}
	if (r == 0)
		r = atomicfile_commit(&af, NULL, NULL);
	atomicfile_cleanup(&af);
	close(fd);
	return r;
}
