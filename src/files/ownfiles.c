/*
 * The agent's own files (ownfiles.h): names in directories known by
 * device and inode, and stdout/stderr by theirs.
 */
#include "config.h"

#include <sys/stat.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "conf/conf.h"
#include "files/ownfiles.h"

#define MAX_REPORTED	32

/* A name of the agent's in a directory: the name itself, and with
 * siblings, every name that starts with it and a dot. */
struct ownname {
	char		*dir;		/* as written */
	char		*base;		/* NULL: every file of the directory */
	const char	*what;
	bool		 siblings;
	bool		 known;		/* dev, ino hold the directory's */
	dev_t		 dev;
	ino_t		 ino;
};

struct ownfiles {
	struct ownname	 names[4];
	size_t		 nnames;
	struct stat	 out[2];	/* fds 1 and 2 */
	bool		 out_ok[2];
	char		*last_dir;	/* the directory last stat'ed */
	struct stat	 last_st;
	bool		 last_ok;
	char		*reported[MAX_REPORTED];
	size_t		 nreported;
};

/* path (a file, or a directory when base is NULL) as one of the names. */
static void
add(struct ownfiles *o, const char *path, bool dir, bool siblings,
    const char *what)
{
	struct ownname	*n = &o->names[o->nnames++];
	const char	*slash = strrchr(path, '/');
	struct stat	 st;

	if (dir) {
		n->dir = xstrdup(path);
		n->base = NULL;
	} else if (slash == NULL) {
		n->dir = xstrdup(".");
		n->base = xstrdup(path);
	} else {
		n->dir = slash == path ? xstrdup("/") :
		    xasprintf("%.*s", (int)(slash - path), path);
		n->base = xstrdup(slash + 1);
	}
	n->what = what;
	n->siblings = siblings;
	if (stat(n->dir, &st) == 0) {
		n->known = true;
		n->dev = st.st_dev;
		n->ino = st.st_ino;
	}
}

struct ownfiles *
ownfiles_new(const struct conf *c)
{
	struct ownfiles	*o = xcalloc(1, sizeof(*o));
	char		*p;
	int		 i;

	add(o, c->checkpoint_file, false, true, "the agent's state file");
	p = conf_deadletter_path(c);
	add(o, p, false, true, "the agent's dead-letter file");
	free(p);
	p = conf_spool_dir(c);
	add(o, p, true, false, "a file of the agent's spool");
	free(p);
	if (c->metrics_file[0] != '\0')
		add(o, c->metrics_file, false, true,
		    "the agent's metrics file");
	/* Where the agent's own log goes, when that is a file. */
	for (i = 0; i < 2; i++)
		o->out_ok[i] = fstat(i + 1, &o->out[i]) == 0 &&
		    S_ISREG(o->out[i].st_mode);
	return o;
}

void
ownfiles_free(struct ownfiles *o)
{
	size_t	 i;

	if (o == NULL)
		return;
	for (i = 0; i < o->nnames; i++) {
		free(o->names[i].dir);
		free(o->names[i].base);
	}
	for (i = 0; i < o->nreported; i++)
		free(o->reported[i]);
	free(o->last_dir);
	free(o);
}

static bool
name_is(const struct ownname *n, const char *base)
{
	size_t	 len;

	if (n->base == NULL)
		return true;
	len = strlen(n->base);
	if (strncmp(base, n->base, len) != 0)
		return false;
	return base[len] == '\0' || (n->siblings && base[len] == '.');
}

/* Whether the directory part of path, dlen bytes, is n's directory: the
 * same string, or the same device and inode. */
static bool
dir_is(struct ownfiles *o, const struct ownname *n, const char *path,
    size_t dlen)
{
	if (strlen(n->dir) == dlen && strncmp(n->dir, path, dlen) == 0)
		return true;
	if (!n->known)
		return false;
	if (o->last_dir == NULL || strlen(o->last_dir) != dlen ||
	    strncmp(o->last_dir, path, dlen) != 0) {
		free(o->last_dir);
		o->last_dir = dlen == 0 ? xstrdup("/") :
		    xasprintf("%.*s", (int)dlen, path);
		o->last_ok = stat(o->last_dir, &o->last_st) == 0;
	}
	return o->last_ok && o->last_st.st_dev == n->dev &&
	    o->last_st.st_ino == n->ino;
}

const char *
ownfiles_what(struct ownfiles *o, const char *path, const struct stat *st)
{
	const char	*slash = strrchr(path, '/');
	const char	*base = slash != NULL ? slash + 1 : path;
	size_t		 dlen = slash != NULL ? (size_t)(slash - path) : 0;
	size_t		 i;

	for (i = 0; i < 2; i++)
		if (o->out_ok[i] && o->out[i].st_dev == st->st_dev &&
		    o->out[i].st_ino == st->st_ino)
			return "the agent's own log (its stdout or stderr)";
	if (slash == NULL)
		return NULL;	/* scans give full paths */
	for (i = 0; i < o->nnames; i++)
		if (name_is(&o->names[i], base) &&
		    dir_is(o, &o->names[i], path, dlen))
			return o->names[i].what;
	return NULL;
}

bool
ownfiles_reported(struct ownfiles *o, const char *path)
{
	size_t	 i;

	for (i = 0; i < o->nreported; i++)
		if (strcmp(o->reported[i], path) == 0)
			return true;
	if (o->nreported < MAX_REPORTED)
		o->reported[o->nreported++] = xstrdup(path);
	return false;
}
