/*
 * partitionKeyOption (dis-api.md section 8): a comma list, each token
 * expanded per record and the results joined with ",": RANDOM_INT
 * (0..999999), RANDOM_DOUBLE ([0, 1e6) with six decimals), FILE_NAME (the
 * base name), DETERMINISTIC (hex MD5 of the record); any other token is
 * literal.  The list is parsed once per flow.
 */
#ifndef DISAGENT_PARTKEY_H
#define DISAGENT_PARTKEY_H

#include <stddef.h>

#include "base/util.h"

struct partkey;

struct partkey	*partkey_new(const char *option);
void		 partkey_free(struct partkey *);
/* The key of one record of file path into *out (replaced). */
void		 partkey_make(const struct partkey *, const char *path,
		    const void *data, size_t len, struct buf *out);

#endif
