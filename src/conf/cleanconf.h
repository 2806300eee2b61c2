/*
 * The whole-file and cleanup keys of a flow checked together, for
 * conf_load (and with the file system for -t, conf_load_test), and by the
 * whole-file logic at start, which only warns.
 */
#ifndef DISAGENT_CLEANCONF_H
#define DISAGENT_CLEANCONF_H

#include <stdbool.h>
#include <stddef.h>

struct conf_flow;

/* What becomes of a whole file once delivered (files/cleanup.c does it). */
enum cleanup_policy {
	CLEANUP_KEEP,		/* no policy: left in place, remembered */
	CLEANUP_RENAME,		/* fileSuffix appended */
	CLEANUP_MOVE,		/* into fileMoveToDir */
	CLEANUP_DELETE,		/* deletePolicy = immediate */
};

/* The policy of a whole-file flow, in the DIS Agent's order of keys. */
enum cleanup_policy cleanconf_policy(const struct conf_flow *);

/*
 * The whole-file keys of fc, together: isFileAppendable, deletePolicy,
 * fileMoveToDir (not a directory the pattern reads; with fs also: it
 * exists, is a directory this user may write, on the file system of the
 * pattern's directory), fileSuffix (not named by the pattern when files
 * are renamed with it), deleteAfterDeliverySeconds, initialPosition and
 * ignoreNotUpdatedFileSeconds (no meaning for whole files).  NULL, or why
 * not (static text, or why[len]), with the key at fault in *key.
 */
const char	*cleanconf_check(const struct conf_flow *fc, bool fs,
		    const char **key, char *why, size_t len);

#endif
