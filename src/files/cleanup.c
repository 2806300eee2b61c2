/*
 * Cleaning up delivered files (cleanup.h): recognising the file delivered
 * by its identity and its first and last bytes, then deleting, moving or
 * renaming it without ever replacing another file.  Every act goes
 * through the descriptor of the file's directory (unlinkat, renameat2),
 * opened without following a symbolic link below the flow's configured
 * directory, and the entry is checked again (fstatat, not following) just
 * before: a file swapped in between, or a directory turned into a link, is
 * left alone.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/pattern.h"
#include "base/util.h"
#include "conf/conf.h"
#include "files/cleanup.h"
#include "tail/tailer.h"

/* --- identity ----------------------------------------------------------- */

/* Measure the open file fd with a head of head_len and a tail of
 * tail_len bytes. */
static int
measure_fd(int fd, uint32_t head_len, uint32_t tail_len,
    struct cleanup_id *id)
{
	struct stat	 st;
	int		 r = 0;

	memset(id, 0, sizeof(*id));
	if (fstat(fd, &st) != 0)
		r = -errno;
	else if (!S_ISREG(st.st_mode))
		r = -EINVAL;
	if (r == 0) {
		id->dev = (uint64_t)st.st_dev;
		id->ino = (uint64_t)st.st_ino;
		id->size = (uint64_t)st.st_size;
		id->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 +
		    st.st_mtim.tv_nsec;
		/* A file shorter than the lengths keeps them at 0: it
		 * cannot match a longer one anyway. */
		if (head_len <= id->size &&
		    tailer_fingerprint_at(fd, 0, head_len, &id->head_crc) == 0)
			id->head_len = head_len;
		if (tail_len <= id->size && tailer_fingerprint_at(fd,
		    id->size - tail_len, tail_len, &id->tail_crc) == 0)
			id->tail_len = tail_len;
	}
	return r;
}

static int
measure(const char *path, uint32_t head_len, uint32_t tail_len,
    struct cleanup_id *id)
{
	int	 fd, r;

	memset(id, 0, sizeof(*id));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	r = measure_fd(fd, head_len, tail_len, id);
	close(fd);
	return r;
}

/* The same identity and content. */
static bool
same_id(const struct cleanup_id *now, const struct cleanup_id *want)
{
	return now->dev == want->dev && now->ino == want->ino &&
	    now->size == want->size && now->mtime_ns == want->mtime_ns &&
	    now->head_len == want->head_len &&
	    now->head_crc == want->head_crc &&
	    now->tail_len == want->tail_len && now->tail_crc == want->tail_crc;
}

int
cleanup_identify(const char *path, uint32_t fp, struct cleanup_id *id)
{
	struct stat	 st;
	uint32_t	 len;

	if (stat(path, &st) != 0)
		return -errno;
	len = (uint32_t)MIN((uint64_t)fp, (uint64_t)st.st_size);
	return measure(path, len, len, id);
}

enum cleanup_match
cleanup_check(const char *path, const struct cleanup_id *want, int *err)
{
	struct cleanup_id now;
	int		 r;

	r = measure(path, want->head_len, want->tail_len, &now);
	*err = -r;
	if (r < 0)
		return CLEANUP_GONE;
	if (now.dev != want->dev || now.ino != want->ino)
		return CLEANUP_OTHER;
	return same_id(&now, want) ? CLEANUP_SAME : CLEANUP_CHANGED;
}

/* --- acting ------------------------------------------------------------- */

void	(*cleanup_test_hook)(const char *path);

/* Whether name is one path component a walk may take ("." and ".." not). */
static bool
plain_name(const char *name, size_t n)
{
	return n > 0 && !(n == 1 && name[0] == '.') &&
	    !(n == 2 && name[0] == '.' && name[1] == '.');
}

/*
 * openat(dfd, name) of a directory, never through a symbolic link: the fd,
 * or a negative errno, -ELOOP for a link (Linux says ENOTDIR when
 * O_DIRECTORY meets one).
 */
static int
open_dir_at(int dfd, const char *name)
{
	struct stat	 st;
	int		 fd, err;

	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd >= 0)
		return fd;
	err = errno;
	if (err == ENOTDIR && fstatat(dfd, name, &st,
	    AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
		err = ELOOP;
	return -err;
}

/*
 * The directory holding path, opened into *dfd, and path's last component
 * into *name (borrowed from path).  Below base (the flow's configured
 * directory, followed as the operator wrote it) each directory is opened
 * with O_NOFOLLOW, so a symbolic link there -- put in place before the
 * cleanup or during it -- fails with -ELOOP instead of leading out of the
 * watched tree.  A path outside base: its parent, the same way.  0 or a
 * negative errno.
 */
static int
open_parent(const char *base, const char *path, int *dfd, const char **name)
{
	const char	*slash = strrchr(path, '/'), *p, *end;
	size_t		 blen = strlen(base);
	char		*dir, *comp;
	int		 fd, nfd, r = 0;

	*dfd = -1;
	if (slash == NULL || !plain_name(slash + 1, strlen(slash + 1)))
		return -EINVAL;
	*name = slash + 1;
	dir = slash == path ? xstrdup("/") :
	    xasprintf("%.*s", (int)(slash - path), path);
	if (strcmp(base, "/") == 0)
		blen = 0;
	if (blen == 0 || (strncmp(dir, base, blen) == 0 &&
	    (dir[blen] == '/' || dir[blen] == '\0'))) {
		fd = open(blen ? base : "/", O_RDONLY | O_DIRECTORY |
		    O_CLOEXEC);
		p = dir + blen;
		if (fd < 0)
			r = -errno;
	} else {
		fd = open_dir_at(AT_FDCWD, dir);
		p = dir + strlen(dir);
		if (fd < 0)
			r = fd;
	}
	for (; r == 0 && *p != '\0'; p = end) {
		p += strspn(p, "/");
		end = p + strcspn(p, "/");
		if (end == p)
			break;
		if (!plain_name(p, (size_t)(end - p))) {
			r = -EINVAL;
			break;
		}
		comp = xasprintf("%.*s", (int)(end - p), p);
		nfd = open_dir_at(fd, comp);
		free(comp);
		if (nfd < 0)
			r = nfd;
		close(fd);
		fd = nfd;
	}
	free(dir);
	if (r == 0)
		*dfd = fd;
	else if (fd >= 0)
		close(fd);
	return r;
}

/*
 * The entry name of directory dfd is still want: itself when it is a
 * regular file (opened without following), or the file a symbolic link
 * there points to (the link is what the cleanup acts on, never its
 * target).  Its own identity, link or file, into *self for the check just
 * before the act.  0, -ESTALE when it is something else, or an errno.
 */
static int
check_at(int dfd, const char *name, const struct cleanup_id *want,
    struct stat *self)
{
	struct cleanup_id now;
	struct stat	 st;
	int		 fd, r = 0;

	if (fstatat(dfd, name, self, AT_SYMLINK_NOFOLLOW) != 0)
		return -errno;
	if (!S_ISREG(self->st_mode) && !S_ISLNK(self->st_mode))
		return -ESTALE;
	fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK |
	    (S_ISLNK(self->st_mode) ? 0 : O_NOFOLLOW));
	if (fd < 0)
		return errno == ELOOP ? -ESTALE : -errno;
	/* A regular file swapped for another between the two looks. */
	if (S_ISREG(self->st_mode) && (fstat(fd, &st) != 0 ||
	    st.st_dev != self->st_dev || st.st_ino != self->st_ino))
		r = -ESTALE;
	if (r == 0 && (measure_fd(fd, want->head_len, want->tail_len,
	    &now) != 0 || !same_id(&now, want)))
		r = -ESTALE;
	close(fd);
	return r;
}

/* name in dfd is still the entry check_at saw (no swap in between). */
static bool
still_there(int dfd, const char *name, const struct stat *self)
{
	struct stat	 st;

	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    st.st_dev == self->st_dev && st.st_ino == self->st_ino &&
	    (st.st_mode & S_IFMT) == (self->st_mode & S_IFMT);
}

/* renameat(2) that fails with EEXIST instead of replacing to. */
static int
rename_noreplace(int from_dfd, const char *from, int to_dfd, const char *to)
{
	int	 r;

#ifdef HAVE_RENAMEAT2
	if (renameat2(from_dfd, from, to_dfd, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
#endif
	/* No RENAME_NOREPLACE here: a hard link does not replace either. */
	if (linkat(from_dfd, from, to_dfd, to, 0) != 0)
		return -errno;
	if (unlinkat(from_dfd, from, 0) == 0)
		return 0;
	r = -errno;
	(void)unlinkat(to_dfd, to, 0);
	return r;
}

/* The act itself, on name in dfd; *to says where it went (new). */
static int
act(enum cleanup_policy p, const char *path, int dfd, const char *name,
    const char *dir, const char *suffix, char **to)
{
	char	*target;
	int	 ddfd, r;

	switch (p) {
	case CLEANUP_KEEP:
		return 0;
	case CLEANUP_DELETE:
		return unlinkat(dfd, name, 0) == 0 ? 0 : -errno;
	case CLEANUP_MOVE:
		/* fileMoveToDir itself must not be a symbolic link: one put
		 * there would take the file out of its configured place. */
		ddfd = open_dir_at(AT_FDCWD, dir);
		if (ddfd < 0)
			return ddfd;
		r = rename_noreplace(dfd, name, ddfd, name);
		close(ddfd);
		if (r == 0)
			*to = xasprintf("%s/%s", dir, name);
		return r;
	case CLEANUP_RENAME:
		target = xasprintf("%s%s", name, suffix);
		r = rename_noreplace(dfd, name, dfd, target);
		free(target);
		if (r == 0)
			*to = xasprintf("%s%s", path, suffix);
		return r;
	}
	return -EINVAL;
}

int
cleanup_apply(enum cleanup_policy p, const char *base, const char *path,
    const struct cleanup_id *want, const char *dir, const char *suffix,
    char **to)
{
	struct stat	 self;
	const char	*name;
	int		 dfd, r;

	*to = NULL;
	if (p == CLEANUP_KEEP)
		return 0;
	r = open_parent(base, path, &dfd, &name);
	if (r != 0)
		return r;
	r = check_at(dfd, name, want, &self);
	if (r == 0 && cleanup_test_hook != NULL)
		cleanup_test_hook(path);
	/* Checked again just before: what was checked is what goes. */
	if (r == 0 && !still_there(dfd, name, &self))
		r = -ESTALE;
	if (r == 0)
		r = act(p, path, dfd, name, dir, suffix, to);
	close(dfd);
	return r;
}

int
cleanup_remove_if_same(const char *base, const char *path,
    const struct cleanup_id *want)
{
	char	*to;

	return cleanup_apply(CLEANUP_DELETE, base, path, want, NULL, NULL,
	    &to);
}

char *
cleanup_base(const struct conf_flow *fc)
{
	char	*pat = pattern_recursive(fc->file_pattern, fc->recursive);
	char	*base = pattern_literal_base(pat);

	free(pat);
	return base;
}
