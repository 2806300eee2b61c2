/*
 * Where a file the scan sees for the first time starts reading, from what
 * the state file remembers (R5: the same device, inode and head), the
 * flow's initialPosition and ignoreNotUpdatedFileSeconds; and whether a
 * resumed offset falls inside a line (its head sent before a stop).
 */
#ifndef DISAGENT_RESUME_H
#define DISAGENT_RESUME_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

struct conf_flow;
struct reg_entry;
struct metrics_flow;
struct registry;
struct tailer;

/* Whether the file at path (of size) starts with the head e remembers. */
bool		 resume_same_head(const char *path, const struct reg_entry *e,
		    uint64_t size);

/*
 * Where path (stat'ed as st) starts: its committed offset when the registry
 * knows this exact file, else 0; or its end for initialPosition =
 * END_OF_FILE at the first scan (first), or when it was not modified for
 * ignoreNotUpdatedFileSeconds.  Logs each decision that is not "0, new".
 * A file truncated while stopped below its committed offset had, as far
 * as the state file knew, its size at the last save: what it held past
 * the offset is counted lost in m (NULL: not counted).
 */
uint64_t	 resume_offset(const struct conf_flow *, struct registry *,
		    struct metrics_flow *m, const char *path,
		    const struct stat *st, bool first);

/*
 * Committed offsets follow a delimiter, except after the kept head of a
 * truncated line (and a last line sent without delimiter, as
 * isMissLastRecordDelimiter and whole files do): whether t's read offset
 * is inside a line, so the rest of the line must be skipped.
 */
bool		 resume_inside_line(const struct conf_flow *,
		    const struct tailer *t);

#endif
