/*
 * Cleaning up delivered files (cleanup.h): recognising the file delivered
 * by its identity and its first and last bytes, then deleting, moving or
 * renaming it without ever replacing another file.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "conf/conf.h"
#include "files/cleanup.h"
#include "files/tailer.h"

/* --- identity ----------------------------------------------------------- */

/* Measure path with a head of head_len and a tail of tail_len bytes. */
static int
measure(const char *path, uint32_t head_len, uint32_t tail_len,
    struct cleanup_id *id)
{
	struct stat	 st;
	int		 fd, r = 0;

	memset(id, 0, sizeof(*id));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
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
	close(fd);
	return r;
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
	if (now.size != want->size || now.mtime_ns != want->mtime_ns ||
	    now.head_len != want->head_len || now.head_crc != want->head_crc ||
	    now.tail_len != want->tail_len || now.tail_crc != want->tail_crc)
		return CLEANUP_CHANGED;
	return CLEANUP_SAME;
}

/* --- acting ------------------------------------------------------------- */

/* rename(2) that fails with EEXIST instead of replacing to. */
static int
rename_noreplace(const char *from, const char *to)
{
	int	 r;

#ifdef HAVE_RENAMEAT2
	if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
#endif
	/* No RENAME_NOREPLACE here: a hard link does not replace either. */
	if (link(from, to) != 0)
		return -errno;
	if (unlink(from) == 0)
		return 0;
	r = -errno;
	(void)unlink(to);
	return r;
}

int
cleanup_apply(enum cleanup_policy p, const char *path, const char *dir,
    const char *suffix, char **to)
{
	const char	*name;
	int		 r;

	*to = NULL;
	switch (p) {
	case CLEANUP_KEEP:
		return 0;
	case CLEANUP_DELETE:
		return unlink(path) == 0 ? 0 : -errno;
	case CLEANUP_MOVE:
		name = strrchr(path, '/');
		*to = xasprintf("%s/%s", dir, name != NULL ? name + 1 : path);
		break;
	case CLEANUP_RENAME:
		*to = xasprintf("%s%s", path, suffix);
		break;
	}
	r = rename_noreplace(path, *to);
	if (r < 0) {
		free(*to);
		*to = NULL;
	}
	return r;
}

int
cleanup_remove_if_same(const char *path, const struct cleanup_id *want)
{
	int	 err;

	if (cleanup_check(path, want, &err) != CLEANUP_SAME)
		return -ESTALE;
	return unlink(path) == 0 ? 0 : -errno;
}
