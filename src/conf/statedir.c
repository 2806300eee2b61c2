/*
 * The directories of the agent's own files (statedir.h): checked, and at
 * start made when missing.  The check (-t) makes the first missing
 * directory and removes it again, so it refuses what the start would.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "conf/statedir.h"

/* The directory part of path: new; "." without a slash, "/" for "/x". */
static char *
dir_of(const char *path)
{
	const char	*slash = strrchr(path, '/');

	if (slash == NULL)
		return xstrdup(".");
	while (slash > path && slash[-1] == '/')
		slash--;
	if (slash == path)
		return xstrdup("/");
	return xasprintf("%.*s", (int)(slash - path), path);
}

/* dir exists (st): a directory this user may create files in. */
static const char *
writable(const char *dir, const struct stat *st, char *why, size_t len)
{
	if (!S_ISDIR(st->st_mode)) {
		snprintf(why, len, "%s is not a directory", dir);
		return why;
	}
	if (access(dir, W_OK | X_OK) != 0) {
		snprintf(why, len, "%s is not writable by uid %u: %s", dir,
		    (unsigned)geteuid(), strerror(errno));
		return why;
	}
	return NULL;
}

/*
 * first, the first missing directory of a path, made and removed again: only
 * trying says whether it can be made (root passes access() on /proc,
 * where mkdir fails), and the message is the start's own.
 */
static const char *
try_make(const char *first, char *why, size_t len)
{
	if (mkdir(first, STATEDIR_MODE) != 0) {
		snprintf(why, len, "cannot create %s: %s", first,
		    strerror(errno));
		return why;
	}
	/* Left behind, it would only be what the start makes anyway. */
	(void)rmdir(first);
	return NULL;
}

/* dir is missing: the nearest ancestor that exists must let us make it. */
static const char *
creatable(const char *dir, char *why, size_t len)
{
	struct stat	 st;
	char		*first = xstrdup(dir), *up;
	const char	*r = NULL;

	for (;;) {
		up = dir_of(first);
		if (stat(up, &st) == 0)
			break;
		if (errno != ENOENT || strcmp(up, "/") == 0 ||
		    strcmp(up, ".") == 0) {
			snprintf(why, len, "cannot create %s: %s: %s", dir, up,
			    strerror(errno));
			r = why;
			goto out;
		}
		free(first);
		first = up;
	}
	if (writable(up, &st, why, len) != NULL) {
		/* "cannot create D: A is not writable ..." */
		free(first);
		first = xstrdup(why);
		snprintf(why, len, "cannot create %s: %s", dir, first);
		r = why;
	} else
		r = try_make(first, why, len);
out:
	free(up);
	free(first);
	return r;
}

/* mkdir -p dir, each missing component STATEDIR_MODE. */
static const char *
make(const char *dir, char *why, size_t len)
{
	char		*p = xstrdup(dir);
	size_t		 i, n = strlen(p);
	const char	*r = NULL;

	for (i = 1; i <= n && r == NULL; i++) {
		if ((p[i] != '/' && p[i] != '\0') || p[i - 1] == '/')
			continue;
		p[i] = '\0';
		if (mkdir(p, STATEDIR_MODE) != 0 && errno != EEXIST) {
			snprintf(why, len, "cannot create %s: %s", p,
			    strerror(errno));
			r = why;
		}
		if (i < n)
			p[i] = '/';
	}
	free(p);
	return r;
}

/* dir made (mkdir -p), and writable. */
static const char *
made(const char *dir, char *why, size_t len)
{
	struct stat	 st;

	if (make(dir, why, len) != NULL)
		return why;
	if (stat(dir, &st) != 0) {
		snprintf(why, len, "%s: %s", dir, strerror(errno));
		return why;
	}
	return writable(dir, &st, why, len);
}

const char *
statedir_check(const char *file, bool create, char *why, size_t len)
{
	struct stat	 st;
	char		*dir = dir_of(file);
	const char	*r;

	if (stat(dir, &st) == 0)
		r = writable(dir, &st, why, len);
	else if (errno != ENOENT) {
		snprintf(why, len, "%s: %s", dir, strerror(errno));
		r = why;
	} else if (!create)
		r = creatable(dir, why, len);
	else
		r = made(dir, why, len);
	free(dir);
	return r;
}
