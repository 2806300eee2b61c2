/*
 * filePattern matching as pure string work: globs in any component, "**"
 * for any depth, the names a scan skips, excludePattern.  files/watcher.c
 * walks with it, conf/ checks the whole-file keys with it.
 */
#include "config.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "base/pattern.h"
#include "base/util.h"

#define MAX_COMPS	64

static size_t
split(char *s, char **out, size_t max)
{
	size_t	 n = 0;
	char	*save = NULL, *c;

	for (c = strtok_r(s, "/", &save); c != NULL && n < max;
	    c = strtok_r(NULL, "/", &save))
		out[n++] = c;
	return n;
}

static bool
comp_match(const char *pat, const char *name)
{
	return fnmatch(pat, name, FNM_PERIOD) == 0;
}

static bool
full(char **pc, size_t np, char **xc, size_t nx)
{
	if (np == 0)
		return nx == 0;
	if (strcmp(pc[0], "**") == 0)
		return full(pc + 1, np - 1, xc, nx) ||
		    (nx > 1 && xc[0][0] != '.' && full(pc, np, xc + 1, nx - 1));
	if (nx == 0)
		return false;
	return comp_match(pc[0], xc[0]) && full(pc + 1, np - 1, xc + 1,
	    nx - 1);
}

/* Can a file below directory xc[0..nx) match?  The last pattern component
 * names files, so a directory must match a proper prefix. */
static bool
prefix(char **pc, size_t np, char **xc, size_t nx)
{
	if (nx == 0)
		return np > 0;
	if (np == 0)
		return false;
	if (strcmp(pc[0], "**") == 0)
		return prefix(pc + 1, np - 1, xc, nx) ||
		    (xc[0][0] != '.' && prefix(pc, np, xc + 1, nx - 1));
	if (np == 1)
		return false;
	return comp_match(pc[0], xc[0]) && prefix(pc + 1, np - 1, xc + 1,
	    nx - 1);
}

static bool
match_with(const char *pattern, const char *path, bool dir)
{
	char	*p, *x, *pc[MAX_COMPS], *xc[MAX_COMPS];
	size_t	 np, nx;
	bool	 ok;

	p = xstrdup(pattern);
	x = xstrdup(path);
	np = split(p, pc, MAX_COMPS);
	nx = split(x, xc, MAX_COMPS);
	ok = dir ? prefix(pc, np, xc, nx) : full(pc, np, xc, nx);
	free(p);
	free(x);
	return ok;
}

bool
pattern_match(const char *pattern, const char *path)
{
	return match_with(pattern, path, false);
}

bool
pattern_dir_may_match(const char *pattern, const char *dir)
{
	return match_with(pattern, dir, true);
}

static bool
ends_with(const char *s, const char *sfx)
{
	size_t	 n = strlen(s), m = strlen(sfx);

	return m > 0 && n > m && strcmp(s + n - m, sfx) == 0;
}

bool
pattern_skipped_name(const char *pattern_name, const char *name,
    const char *suffix)
{
	static const char *const sfx[] = { ".gz", ".bz2", ".zip", ".tar",
	    ".xz", ".zst" };
	size_t		 i;

	if (name[0] == '.' && pattern_name[0] != '.')
		return true;
	for (i = 0; i < ARRAY_SIZE(sfx); i++)
		if (ends_with(name, sfx[i]) &&
		    strstr(pattern_name, sfx[i]) == NULL)
			return true;
	return suffix != NULL && ends_with(name, suffix) &&
	    strstr(pattern_name, suffix) == NULL;
}

bool
pattern_excluded(const char *excl, const char *path)
{
	const char	*base;
	char		 tok[256];

	if (excl == NULL)
		return false;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	while (list_next(&excl, tok, sizeof(tok)))
		if (tok[0] == '/' ? fnmatch(tok, path, FNM_PATHNAME) == 0 :
		    fnmatch(tok, base, 0) == 0)
			return true;
	return false;
}

char *
pattern_recursive(const char *p, bool recursive)
{
	const char	*last = strrchr(p, '/');

	if (recursive && last != NULL && strstr(p, "/**/") == NULL)
		return xasprintf("%.*s/**%s", (int)(last - p), p, last);
	return xstrdup(p);
}

char *
pattern_literal_base(const char *pattern)
{
	const char	*glob, *slash;

	glob = strpbrk(pattern, "*?[");
	if (glob == NULL)
		glob = pattern + strlen(pattern);
	for (slash = glob; slash > pattern && *slash != '/'; slash--)
		;
	if (slash == pattern)
		return xstrdup("/");
	return xstrndup(pattern, (size_t)(slash - pattern));
}
