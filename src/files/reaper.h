/*
 * deleteAfterDeliverySeconds, for tailed files (what Filebeat, Vector's
 * remove_after_secs and the OpenTelemetry filelog receiver offer): a file
 * rotated away from the pattern (renamed to a name it does not match) and
 * finished -- every byte delivered, read to its end -- is removed that many
 * seconds after it finished, when a scan finds it unchanged (the same
 * inode, size, mtime, first and last bytes) at a path the pattern does not
 * match.  A path the pattern matches is never removed; a file that changed,
 * or that the first scan after it was due did not see, is forgotten and
 * stays.  Owned by files.c, which reports finished files and the
 * non-matching files its scans see; every function accepts a NULL reaper
 * (a flow without deleteAfterDeliverySeconds) and does nothing.
 */
#ifndef DISAGENT_REAPER_H
#define DISAGENT_REAPER_H

#include <sys/stat.h>

struct conf_flow;
struct metrics_flow;
struct reaper;
struct registry;
struct tailer;

/* For flow fc, all borrowed; NULL unless deleteAfterDeliverySeconds > 0. */
struct reaper	*reaper_new(const struct conf_flow *fc, struct registry *,
		    struct metrics_flow *m);
void		 reaper_free(struct reaper *);

/* t is finished: committed to its end, no longer at a matching path. */
void		 reaper_add(struct reaper *, const struct tailer *t);
/* A scan saw path (st), a regular file the pattern does not match. */
void		 reaper_other(struct reaper *, const char *path,
		    const struct stat *st);
/* A scan ended: forget the files due that it did not see. */
void		 reaper_scanned(struct reaper *);

#endif
