/*
 * filePattern matching, pure string work: which paths a pattern matches,
 * which directories can hold matches, the names a scan skips and
 * excludePattern.
 */
#ifndef DISAGENT_PATTERN_H
#define DISAGENT_PATTERN_H

#include <stdbool.h>

/*
 * Whether path matches pattern ("**" matches zero or more directories, the
 * other components are fnmatch(3) globs that do not match a leading '.'
 * unless they start with one).
 */
bool		 pattern_match(const char *pattern, const char *path);
/* Whether a directory dir can hold files matching pattern. */
bool		 pattern_dir_may_match(const char *pattern, const char *dir);
/*
 * Whether name is skipped although it matches: hidden names, .gz .bz2 .zip
 * .tar .xz .zst and suffix (fileSuffix), unless the file name part of
 * pattern names them (starts with '.' / contains that suffix).
 */
bool		 pattern_skipped_name(const char *pattern_name,
		    const char *name, const char *suffix);
/*
 * The pattern a flow matches with (new): file_pattern, with "**" before
 * its file name glob when recursive (directoryRecursionEnabled) and it has
 * none.
 */
char		*pattern_recursive(const char *file_pattern, bool recursive);
/* The literal leading directories of pattern, "/" at least (new). */
char		*pattern_literal_base(const char *pattern);
/* Whether path is excluded by the comma list excl (name or /path globs). */
bool		 pattern_excluded(const char *excl, const char *path);

#endif
