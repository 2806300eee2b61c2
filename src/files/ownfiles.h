/*
 * The agent's own files, never shipped: a filePattern over the directory
 * of the state file, or over where the agent's stderr goes, would ship the
 * state file, its spool, its own log, and each line shipped writes more of
 * them, a loop that never settles.  The state file and its .bak, .tmp,
 * .lock and .corrupt-* siblings, deadLetterFile, the spool directory's
 * files, metricsFile (and its .tmp) are known by name in their directory
 * (the directory by device and inode, so another spelling of the path is
 * caught too); the file stdout or stderr is, by its device and inode.
 *
 * Owns: its copies of the names.  One per tracked set (files.c).
 */
#ifndef DISAGENT_OWNFILES_H
#define DISAGENT_OWNFILES_H

#include <stdbool.h>
#include <sys/stat.h>

struct conf;
struct ownfiles;

/* The agent's own files as conf names them, stdout and stderr as they are
 * now.  New. */
struct ownfiles	*ownfiles_new(const struct conf *);
void		 ownfiles_free(struct ownfiles *);

/*
 * What path (stat'ed as st) is to the agent ("the state file", ...), or
 * NULL when it is none of its own.  A stat of a directory only when the
 * name is one of the own names (cached per directory).
 */
const char	*ownfiles_what(struct ownfiles *, const char *path,
		    const struct stat *st);

/* Whether path was reported before; notes it (a few dozen at most). */
bool		 ownfiles_reported(struct ownfiles *, const char *path);

#endif
