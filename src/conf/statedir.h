/*
 * The directories the agent writes its own files into: checkpointFile's
 * (the state file, its .tmp and .bak), the dead-letter file's and the one
 * that holds the spool, which are the same one unless deadLetterFile and
 * spoolDirectory name others.  A directory that does
 * not exist is created at start (mode 0750, with any missing parents), so
 * a plain `make install` or an agent.ini from --import-yml runs as it
 * stands; one that cannot be made or written stops -t and the start
 * instead of failing every save.  conf_finish.c calls it with the key's
 * line for the message.
 */
#ifndef DISAGENT_STATEDIR_H
#define DISAGENT_STATEDIR_H

#include <stdbool.h>
#include <stddef.h>

/* The mode of a directory statedir_check creates (before the umask). */
#define STATEDIR_MODE	0750

/*
 * Whether this process can write files beside file (a path as configured:
 * absolute, or relative to the working directory): its directory exists
 * and this user may create files in it, or, with create false, the
 * nearest existing ancestor is a directory this user may create the rest
 * in (its first missing directory is made and removed again, to be sure
 * as the start would be).  With create true, missing directories are made (STATEDIR_MODE).
 * Returns NULL, or why not ("cannot create /a/b: Permission denied"),
 * written into why[len].
 */
const char	*statedir_check(const char *file, bool create, char *why,
		    size_t len);

#endif
