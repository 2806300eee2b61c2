/*
 * Drop-in flow files (conf_int.h): every *.ini of the directory agent.d
 * beside agent.ini, read after it in name order, the way rsyslog.d and
 * systemd drop-ins work, so an application's package can ship its own
 * flow without editing agent.ini.  A drop-in holds [flow:NAME] sections
 * only; it is read by the same reader as agent.ini, so its errors name
 * their own file and line.  Names are ordered by strcmp, whatever the
 * locale, so the order is the same for every run; names starting with
 * '.' (editors' and dpkg's temporary files do) and entries that are not
 * regular files are skipped.
 */
#include "config.h"

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf_int.h"

char *
conf_dropin_dir(const char *path)
{
	const char	*slash = strrchr(path, '/');

	if (slash == NULL)
		return xstrdup("agent.d");
	return xasprintf("%.*s/agent.d", (int)(slash - path), path);
}

static int
is_dropin(const struct dirent *d)
{
	size_t	 n = strlen(d->d_name);

	return d->d_name[0] != '.' && n > 4 &&
	    strcmp(d->d_name + n - 4, ".ini") == 0;
}

static int
name_cmp(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* One drop-in; 0, or -1 with the error naming it. */
static int
read_one(struct parse *p, const char *path)
{
	const char	*main_path = p->path;
	struct stat	 st;
	FILE		*fp;
	int		 rc;

	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return 0;
	fp = fopen(path, "r");
	if (fp == NULL) {
		p->path = path;
		rc = conf_fail(p, 0, "%s", strerror(errno));
		p->path = main_path;
		return rc;
	}
	p->dropin = true;
	rc = conf_parse_file(p, path, fp);
	p->dropin = false;
	fclose(fp);
	p->path = main_path;
	return rc;
}

int
conf_read_dropins(struct parse *p)
{
	struct dirent	**names = NULL;
	char		 *dir, *path;
	int		  n, i, rc = 0;

	dir = conf_dropin_dir(p->path);
	n = scandir(dir, &names, is_dropin, name_cmp);
	if (n < 0 && errno != ENOENT)
		rc = conf_fail(p, 0, "cannot read the drop-in directory %s: %s",
		    dir, strerror(errno));
	for (i = 0; i < n; i++) {
		if (rc == 0) {
			path = xasprintf("%s/%s", dir, names[i]->d_name);
			rc = read_one(p, path);
			free(path);
		}
		free(names[i]);
	}
	free(names);
	free(dir);
	return rc;
}
