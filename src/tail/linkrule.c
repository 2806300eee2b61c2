/*
 * The owner rule of followSymlinks (linkrule.h): a path walked a
 * component at a time from "/", as the kernel does, except that each link
 * met is resolved on its own first, so that what the link leads to (its
 * owner) is known before the link is followed.  A link inside a link's
 * text is judged the same way.  The resolved prefix never holds a link,
 * so ".." after a link is the parent of where it led, as in the kernel.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "tail/linkrule.h"

#define MAX_LINKS	40	/* the kernel's MAXSYMLINKS */

struct resolve {
	int			 links;
	struct linkrule_refusal	*why;
};

static int	resolve_at(struct resolve *, const char *, const char *,
		    char **, struct stat *);

/* The text of link path (new), or NULL with errno set. */
static char *
read_link(const char *path)
{
	char	*text = xmalloc(PATH_MAX);
	ssize_t	 n = readlink(path, text, PATH_MAX - 1);

	if (n < 0) {
		free(text);
		return NULL;
	}
	text[n] = '\0';
	return text;
}

/*
 * The link at path (lstat'ed as lst, in the link-free directory dir):
 * where it leads into *next (new) and *st, or why not.
 */
static int
follow(struct resolve *r, const char *dir, const char *path,
    const struct stat *lst, char **next, struct stat *st)
{
	char	*text;
	int	 rc;

	if (++r->links > MAX_LINKS)
		return -ELOOP;
	if ((text = read_link(path)) == NULL)
		return -errno;
	rc = resolve_at(r, dir, text, next, st);
	free(text);
	if (rc != 0)
		return rc;
	if (lst->st_uid == 0 || lst->st_uid == st->st_uid)
		return 0;
	free(*next);
	*next = NULL;
	if (r->why->link == NULL) {	/* the innermost refusal names it */
		r->why->link = xstrdup(path);
		r->why->link_uid = lst->st_uid;
		r->why->target_uid = st->st_uid;
		r->why->target_mode = st->st_mode;
	}
	return -EPERM;
}

/* The parent of the link-free path p ("" is "/"), in place. */
static void
up(char *p)
{
	char	*s = strrchr(p, '/');

	if (s != NULL)
		*s = '\0';
}

/*
 * text resolved from the link-free directory dir ("" is "/"): *out (new,
 * "" for "/") and its lstat in *st.
 */
static int
resolve_at(struct resolve *r, const char *dir, const char *text, char **out,
    struct stat *st)
{
	struct stat	 lst;
	char		*copy, *save = NULL, *c, *cur, *next, *to;
	bool		 ok = true;
	int		 rc = 0;

	copy = xstrdup(text);
	cur = xstrdup(text[0] == '/' ? "" : dir);
	for (c = strtok_r(copy, "/", &save); c != NULL && rc == 0;
	    c = strtok_r(NULL, "/", &save)) {
		if (!ok) {
			rc = -ENOTDIR;
			break;
		}
		if (strcmp(c, ".") == 0)
			continue;
		if (strcmp(c, "..") == 0) {
			up(cur);
			continue;
		}
		next = xasprintf("%s/%s", cur, c);
		if (lstat(next, st) != 0)
			rc = -errno;
		else if (S_ISLNK(st->st_mode)) {
			lst = *st;
			to = NULL;
			rc = follow(r, cur, next, &lst, &to, st);
			free(next);
			next = to;
		}
		free(cur);
		cur = next;
		ok = rc == 0 && S_ISDIR(st->st_mode);
	}
	free(copy);
	if (rc == 0 && lstat(cur[0] != '\0' ? cur : "/", st) != 0)
		rc = -errno;
	if (rc != 0) {
		free(cur);
		return rc;
	}
	*out = cur;
	return 0;
}

int
linkrule_resolve(const char *path, struct stat *st, char **real,
    struct linkrule_refusal *why)
{
	struct resolve	 r = { 0, why };
	char		*out;
	int		 rc;

	memset(why, 0, sizeof(*why));
	rc = resolve_at(&r, "", path, &out, st);
	if (rc != 0)
		return rc;
	if (real != NULL)
		*real = out[0] != '\0' ? out : xstrdup("/");
	if (real == NULL || out[0] == '\0')
		free(out);
	return 0;
}

void
linkrule_refusal_cleanup(struct linkrule_refusal *why)
{
	free(why->link);
	why->link = NULL;
}

int
linkrule_open(const char *path, const struct stat *st)
{
	struct stat	 now;
	int		 fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (fstat(fd, &now) != 0 || now.st_dev != st->st_dev ||
	    now.st_ino != st->st_ino) {
		close(fd);
		errno = ESTALE;
		return -1;
	}
	return fd;
}
