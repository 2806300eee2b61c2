/*
 * The state file's format, apart from where it lives and which generation
 * is used (registry.c): reading a file into a table and writing a table.
 * Version 2, written since issue 11, is JSON Lines: a header line, then one
 * entry a line, each parsed on its own so loading holds one entry's JSON
 * tree at a time.  Version 1, the single JSON document earlier releases
 * wrote, is still read (statefile_v1.c) so an upgrade resumes every file.
 */
#ifndef DISAGENT_STATEFILE_H
#define DISAGENT_STATEFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

#define STATEFILE_VERSION	2	/* what statefile_write writes */

struct atomicfile;
struct json_t;
struct reg_table;

/*
 * Read the state file at path into t (emptied first) and the version of
 * its format into *version.  0; -ENOENT when missing; -EBADMSG when it does
 * not parse or validate (logged with the reason, t left empty); another
 * negative errno when it cannot be read (logged).
 */
int	 statefile_read(const char *path, struct reg_table *t, int *version)
	    WARN_UNUSED;

/*
 * Write t in version 2 to af, entries ordered by flow, dev, ino.  Returns
 * 0 or af's first error (-EMSGSIZE for an entry too long to be read back).
 */
int	 statefile_write(struct atomicfile *af, const struct reg_table *t)
	    WARN_UNUSED;

/* --- shared by the two readers -------------------------------------- */

/*
 * The entry object o (borrowed) into t: NULL, or why it is not a valid
 * entry (static text; t unchanged).
 */
const char *statefile_entry(struct json_t *o, struct reg_table *t);

/* s is exactly 8 lowercase hex digits; their value into *out. */
bool	 statefile_hex32(const char *s, uint32_t *out);

/*
 * A version 1 document of len bytes into t (empty): 0, or -EBADMSG with
 * the reason in why[whylen] (t then holds what was read so far).
 */
int	 statefile_v1_parse(const char *text, size_t len, struct reg_table *t,
	    char *why, size_t whylen);

#endif
