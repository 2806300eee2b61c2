/*
 * source = journal in agent.ini (journalconf.h): the journalMatch parser
 * that both the key check and the reader use, the keys that go with each
 * source, and the file system checks of disagent -t.
 */
#include "config.h"

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "conf/conf_int.h"
#include "conf/ctrconf.h"
#include "conf/journalconf.h"

#define FIELD_MAX	64	/* sd-journal's limit on a field name */

const char *const journalconf_formats[] = {
	"MESSAGE", "JSON", "SHORT", NULL
};
const char *const journalconf_sources[] = { "files", "journal",
    "containers", NULL };

/* --- journalMatch ------------------------------------------------------ */

static const char *
trim(char *s)
{
	char	*e;

	s += strspn(s, " \t");
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	return s;
}

static bool
field_ok(const char *f, size_t n)
{
	size_t	 i;

	if (n == 0 || n > FIELD_MAX || (f[0] >= '0' && f[0] <= '9'))
		return false;
	for (i = 0; i < n; i++)
		if (!((f[i] >= 'A' && f[i] <= 'Z') || (f[i] >= '0' &&
		    f[i] <= '9') || f[i] == '_'))
			return false;
	return true;
}

/* PRIORITY=A..B: each priority from A to B. */
static int
priorities(const char *v, const struct journalconf_match_cbs *cbs, char *err,
    size_t errlen)
{
	char	 term[16];
	int	 a, b, i, rc;

	if (strlen(v) != 4 || v[0] < '0' || v[0] > '7' || v[3] < '0' ||
	    v[3] > '7' || v[0] > v[3]) {
		snprintf(err, errlen, "PRIORITY=%s is not a range of "
		    "priorities (0..7, the lower first)", v);
		return -EINVAL;
	}
	a = v[0] - '0';
	b = v[3] - '0';
	for (i = a; cbs != NULL && i <= b; i++) {
		snprintf(term, sizeof(term), "PRIORITY=%d", i);
		if ((rc = cbs->term(cbs->arg, term)) != 0)
			return rc;
	}
	return 0;
}

/* One FIELD=VALUE term (t, trimmed); 0 or an error. */
static int
one_term(char *t, const struct journalconf_match_cbs *cbs, char *err,
    size_t errlen)
{
	char	*eq = strchr(t, '=');

	if (*t == '\0') {
		snprintf(err, errlen, "has an empty term");
		return -EINVAL;
	}
	if (eq == NULL || !field_ok(t, (size_t)(eq - t))) {
		snprintf(err, errlen, "term '%.60s' is not FIELD=VALUE (a field "
		    "is upper-case letters, digits and '_')", t);
		return -EINVAL;
	}
	if (strncmp(t, "PRIORITY=", 9) == 0 && strstr(eq, "..") != NULL)
		return priorities(eq + 1, cbs, err, errlen);
	return cbs != NULL ? cbs->term(cbs->arg, t) : 0;
}

/* One alternative (a, trimmed, non-empty): its '+' terms. */
static int
one_alternative(char *a, const struct journalconf_match_cbs *cbs, char *err,
    size_t errlen)
{
	char	*term, *plus;
	int	 rc = 0;

	for (term = a; rc == 0 && term != NULL; term = plus) {
		plus = strchr(term, '+');
		if (plus != NULL)
			*plus++ = '\0';
		rc = one_term((char *)trim(term), cbs, err, errlen);
	}
	return rc;
}

int
journalconf_match(const char *match, const struct journalconf_match_cbs *cbs,
    char *err, size_t errlen)
{
	char	*copy, *alt, *comma;
	bool	 first = true;
	int	 rc = 0;

	copy = xstrdup(match);
	if (*trim(copy) == '\0')
		goto done;
	for (alt = copy; rc == 0 && alt != NULL; alt = comma) {
		comma = strchr(alt, ',');
		if (comma != NULL)
			*comma++ = '\0';
		alt = (char *)trim(alt);
		if (*alt == '\0') {
			snprintf(err, errlen, "has an empty alternative");
			rc = -EINVAL;
			break;
		}
		if (!first && cbs != NULL &&
		    (rc = cbs->alternative(cbs->arg)) != 0)
			break;
		first = false;
		rc = one_alternative(alt, cbs, err, errlen);
	}
done:
	free(copy);
	return rc;
}

const char *
journalconf_check_match(const char *value)
{
	static char	 why[200];
	char		 err[160];

	if (journalconf_match(value, NULL, err, sizeof(err)) == 0)
		return NULL;
	snprintf(why, sizeof(why), "is not a journal match: %s", err);
	return why;
}

/* --- the file system (disagent -t) ------------------------------------ */

/* Whether dir holds anything but "." and "..". */
static bool
has_entries(const char *dir)
{
	struct dirent	*d;
	DIR		*dp;
	bool		 any = false;

	if ((dp = opendir(dir)) == NULL)
		return false;
	while (!any && (d = readdir(dp)) != NULL)
		any = strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0;
	closedir(dp);
	return any;
}

bool
journalconf_host_has_journal(char *why, size_t whylen)
{
	if (access("/run/systemd/system", F_OK) == 0 ||
	    has_entries("/run/log/journal") || has_entries("/var/log/journal"))
		return true;
	snprintf(why, whylen, "this host has no systemd journal to read: it "
	    "was not booted with systemd (no /run/systemd/system) and there "
	    "are no journal files in /run/log/journal or /var/log/journal; "
	    "set journalDirectory to read journal files copied here");
	return false;
}

bool
journalconf_dir_readable(const char *dir, char *why, size_t whylen)
{
	DIR	*dp;

	if ((dp = opendir(dir)) == NULL) {
		snprintf(why, whylen, "cannot read the directory: %s",
		    strerror(errno));
		return false;
	}
	closedir(dp);
	return true;
}

/* --- the keys of each source (conf_finish.c asks) ----------------------- */

/* Keys about files, which a journal flow has no use for. */
static const char *const files_only[] = {
	"filePattern", "directoryRecursionEnabled", "excludePattern",
	"fileSuffix", "watchMode", "followSymlinks", "maxOpenFiles",
	"ignoreNotUpdatedFileSeconds", "headerBytesLength", "recordDelimiter",
	"stripCarriageReturn", "skipEmptyLines", "isMissLastRecordDelimiter",
	"maxFileCheckingMillis", "multiLineStartPattern", "multiLinePreset",
	"multiLineFlushMillis", "skipHeaderLines", "fileEncoding",
	"isFileAppendable", "deletePolicy", "fileMoveToDir",
	"isIgnoreEmptyData", "deleteAfterDeliverySeconds",
	"rescanIntervalMillis", NULL
};
static const char *const journal_only[] = {
	"journalMatch", "journalDirectory", "journalFormat", NULL
};
static const char *const containers_only[] = {
	"containerLogDirectory", "containerMatch", "containerExclude",
	"containerStreams", "containerFormat", "containerRecord", NULL
};
/* Keys about files that a containers flow sets itself (its files are
 * the runtimes', in their format). */
static const char *const not_for_containers[] = {
	"filePattern", "directoryRecursionEnabled", "excludePattern",
	"fileSuffix", "recordDelimiter", "isRemainRecordDelimiter",
	"stripCarriageReturn", "skipEmptyLines", "isMissLastRecordDelimiter",
	"multiLineStartPattern", "skipHeaderLines", "fileEncoding",
	"isFileAppendable", "deletePolicy", "fileMoveToDir",
	"deleteAfterDeliverySeconds", NULL
};

/* The first key of list set in s, and its line; NULL when none. */
static const char *
first_set(struct sect *s, const char *const *list, int *line)
{
	for (; *list != NULL; list++)
		if ((*line = conf_key_line(s, *list)) != 0)
			return *list;
	return NULL;
}

/* The -t checks: is there a journal to read? */
static int
check_journal_fs(struct parse *p, struct conf_flow *f, struct sect *s,
    const char *label)
{
	char		 why[400];
	int		 line;

	if (f->journal_dir[0] != '\0') {
		if (journalconf_dir_readable(f->journal_dir, why, sizeof(why)))
			return 0;
		line = conf_key_line(s, "journalDirectory");
		return conf_fail(p, line, "%s: journalDirectory = %s: %s",
		    label, f->journal_dir, why);
	}
	if (journalconf_host_has_journal(why, sizeof(why)))
		return 0;
	line = conf_key_line(s, "source");
	return conf_fail(p, line != 0 ? line : s->line, "%s: source = journal: "
	    "%s", label, why);
}

/* source = containers: its keys, and the pattern its files are found by. */
static int
check_containers(struct parse *p, struct conf_flow *f, struct sect *s,
    const char *label)
{
	const char	*key;
	int		 line;

	if ((key = first_set(s, journal_only, &line)) != NULL)
		return conf_fail(p, line, "%s: %s applies to source = journal "
		    "only", label, key);
	if ((key = first_set(s, not_for_containers, &line)) != NULL)
		return conf_fail(p, line, "%s: %s is not used with source = "
		    "containers (the runtimes' files say it)", label, key);
	free(f->file_pattern);
	f->file_pattern = ctrconf_pattern(f->ctr_dir);
	f->recursive = false;
	return 0;
}

int
conf_check_source(struct parse *p, struct conf_flow *f, struct sect *s,
    const char *label)
{
	const char	*key;
	int		 line;

	if (f->source != SOURCE_CONTAINERS &&
	    (key = first_set(s, containers_only, &line)) != NULL)
		return conf_fail(p, line, "%s: %s applies to source = "
		    "containers only", label, key);
	if (f->source == SOURCE_CONTAINERS)
		return check_containers(p, f, s, label);
	if (f->source == SOURCE_FILES) {
		if ((key = first_set(s, journal_only, &line)) != NULL)
			return conf_fail(p, line, "%s: %s applies to source = "
			    "journal only", label, key);
		if (conf_key_line(s, "filePattern") == 0)
			return conf_fail(p, s->line, "%s is missing required "
			    "key 'filePattern'", label);
		return 0;
	}
	if ((key = first_set(s, files_only, &line)) != NULL)
		return conf_fail(p, line, "%s: %s is not used with source = "
		    "journal (it applies to files)", label, key);
	if (p->opts & CONF_FS_CHECKS)
		return check_journal_fs(p, f, s, label);
	return 0;
}
