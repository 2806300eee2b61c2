/*
 * The dead-letter file (deadletter.h): append-only, opened on first use,
 * every line synced before it counts.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "records/deadletter.h"
#include "wire/codec.h"

struct deadletter {
	char	*path;
	int	 fd;
};

struct deadletter *
deadletter_new(const char *path)
{
	struct deadletter *d;

	d = xcalloc(1, sizeof(*d));
	d->path = xstrdup(path);
	d->fd = -1;
	return d;
}

void
deadletter_free(struct deadletter *d)
{
	if (d == NULL)
		return;
	if (d->fd >= 0)
		close(d->fd);
	free(d->path);
	free(d);
}

const char *
deadletter_path(const struct deadletter *d)
{
	return d->path;
}

int
deadletter_write(struct deadletter *d, const char *flow, const char *file,
    uint64_t offset, const char *code, const char *msg, const void *data,
    size_t len)
{
	struct buf	 line;
	int		 rc;

	if (d->fd < 0) {
		d->fd = open(d->path, O_WRONLY | O_APPEND | O_CREAT |
		    O_CLOEXEC, 0600);
		if (d->fd < 0) {
			rc = -errno;
			log_error("dead-letter file %s: %s; the record is kept "
			    "and retried", d->path, strerror(-rc));
			return rc;
		}
	}
	buf_init(&line);
	codec_dead_letter(&line, (long long)wall_s(), flow, file,
	    (unsigned long long)offset, code, msg, data, len);
	rc = write_all(d->fd, line.data, line.len);
	if (rc == 0 && fdatasync(d->fd) != 0)
		rc = -errno;
	buf_cleanup(&line);
	if (rc != 0)
		log_error("dead-letter file %s: %s; the record is kept and "
		    "retried", d->path, strerror(-rc));
	return rc;
}
