/*
 * The dead-letter file: records that can never be delivered (DIS rejects
 * them for good, or a converter cannot parse them) are appended to it, one
 * JSON line each (codec_dead_letter), and synced before the caller may count
 * them as done.  One per flow; several may append to the same file.
 */
#ifndef DISAGENT_DEADLETTER_H
#define DISAGENT_DEADLETTER_H

#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

struct deadletter;

/* The dead-letter file at path (borrowed; conf_deadletter_path gives the
 * agent's).  The file is opened on the first write. */
struct deadletter *deadletter_new(const char *path);
void		 deadletter_free(struct deadletter *);
const char	*deadletter_path(const struct deadletter *);

/*
 * Append the record (data, len) of file at offset, refused with code and
 * msg, for flow, and fdatasync.  0, or a negative errno (logged; the caller
 * keeps the record and retries).
 */
int		 deadletter_write(struct deadletter *, const char *flow,
		    const char *file, uint64_t offset, const char *code,
		    const char *msg, const void *data, size_t len) WARN_UNUSED;

#endif
