/*
 * The checks of the keys that choose how delivered files are cleaned up
 * (cleanconf.h), apart from cleanup.c so that the configuration needs only
 * the pure pattern functions of the watcher.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/pattern.h"
#include "base/util.h"
#include "conf/cleanconf.h"
#include "conf/conf.h"

enum cleanup_policy
cleanconf_policy(const struct conf_flow *fc)
{
	if (strcmp(fc->delete_policy, "immediate") == 0)
		return CLEANUP_DELETE;
	if (fc->move_dir[0] != '\0')
		return CLEANUP_MOVE;
	if (fc->file_suffix[0] != '\0')
		return CLEANUP_RENAME;
	return CLEANUP_KEEP;
}

/*
 * fileMoveToDir: not a directory whose files the pattern matches (they
 * would be read again); with fs also an existing, writable directory on
 * the file system of the pattern's directory (files are moved by rename).
 */
static const char *
check_move_dir(const struct conf_flow *fc, bool fs, char *why, size_t len)
{
	struct stat	 st, bst;
	char		*pat, *base;
	bool		 have_base, same_dev, reread;

	pat = pattern_recursive(fc->file_pattern, fc->recursive);
	reread = pattern_dir_may_match(pat, fc->move_dir);
	free(pat);
	if (reread || !fs) {
		snprintf(why, len, "fileMoveToDir = %s is a directory "
		    "filePattern reads: moved files would be read again",
		    fc->move_dir);
		return reread ? why : NULL;
	}
	if (stat(fc->move_dir, &st) != 0) {
		snprintf(why, len, "fileMoveToDir = %s: %s", fc->move_dir,
		    strerror(errno));
		return why;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, len, "fileMoveToDir = %s is not a directory",
		    fc->move_dir);
		return why;
	}
	if (access(fc->move_dir, W_OK | X_OK) != 0) {
		snprintf(why, len, "fileMoveToDir = %s is not writable by "
		    "uid %u: %s", fc->move_dir, (unsigned)geteuid(),
		    strerror(errno));
		return why;
	}
	pat = pattern_recursive(fc->file_pattern, fc->recursive);
	base = pattern_literal_base(pat);
	/* The pattern's directory may not exist yet: then the first move
	 * says so (EXDEV), counted and shown by status. */
	have_base = stat(base, &bst) == 0;
	same_dev = !have_base || bst.st_dev == st.st_dev;
	/* The pattern's directory under another name (a symlink). */
	reread = have_base && same_dev && bst.st_ino == st.st_ino &&
	    pattern_dir_may_match(pat, base);
	if (!same_dev)
		snprintf(why, len, "fileMoveToDir = %s is on another file "
		    "system than %s: files are moved by rename, never copied",
		    fc->move_dir, base);
	else if (reread)
		snprintf(why, len, "fileMoveToDir = %s is a directory "
		    "filePattern reads: moved files would be read again",
		    fc->move_dir);
	free(base);
	free(pat);
	if (!same_dev || reread)
		return why;
	/* Files are never moved through a link (cleanup.c): say so now. */
	if (lstat(fc->move_dir, &st) == 0 && S_ISLNK(st.st_mode)) {
		snprintf(why, len, "fileMoveToDir = %s is a symbolic link, "
		    "which the agent never moves files through: give the "
		    "directory itself", fc->move_dir);
		return why;
	}
	return NULL;
}

/* The whole-file keys of a tailing flow: only deleteAfterDeliverySeconds. */
static const char *
check_tailing(const struct conf_flow *fc, const char **key)
{
	if (strcmp(fc->delete_policy, "immediate") == 0) {
		*key = "deletePolicy";
		return "deletePolicy = immediate applies to whole files "
		    "(isFileAppendable = false) only; tailed files rotated "
		    "away can be removed with deleteAfterDeliverySeconds";
	}
	if (fc->move_dir[0] != '\0') {
		*key = "fileMoveToDir";
		return "fileMoveToDir applies to whole files "
		    "(isFileAppendable = false) only";
	}
	return NULL;
}

const char *
cleanconf_check(const struct conf_flow *fc, bool fs, const char **key,
    char *why, size_t len)
{
	const char	*name = strrchr(fc->file_pattern, '/');
	enum cleanup_policy p = cleanconf_policy(fc);

	if (fc->file_appendable)
		return check_tailing(fc, key);
	*key = "deleteAfterDeliverySeconds";
	if (fc->delete_after_s > 0)
		return "deleteAfterDeliverySeconds is for tailed files; whole "
		    "files (isFileAppendable = false) are cleaned up by "
		    "deletePolicy, fileMoveToDir or fileSuffix";
	*key = "fileMoveToDir";
	if (p == CLEANUP_DELETE && fc->move_dir[0] != '\0')
		return "fileMoveToDir and deletePolicy = immediate: a "
		    "delivered file is either deleted or moved";
	*key = "initialPosition";
	if (fc->initial_position == POS_END_OF_FILE)
		return "initialPosition = END_OF_FILE: whole files "
		    "(isFileAppendable = false) are always sent from their "
		    "start";
	*key = "ignoreNotUpdatedFileSeconds";
	if (fc->ignore_older_s > 0)
		return "ignoreNotUpdatedFileSeconds: whole files "
		    "(isFileAppendable = false) are sent however old they are";
	*key = "fileSuffix";
	if (p == CLEANUP_RENAME && name != NULL &&
	    strstr(name, fc->file_suffix) != NULL)
		return "filePattern names fileSuffix: files renamed with it "
		    "would be read again";
	*key = "fileMoveToDir";
	return p == CLEANUP_MOVE ? check_move_dir(fc, fs, why, len) : NULL;
}
