/*
 * partitionKeyOption (dis-api.md section 8): a comma list, each token
 * expanded per record and the results joined with ",": RANDOM_INT
 * (0..999999), RANDOM_DOUBLE ([0, 1e6) with six decimals), FILE_NAME (the
 * base name), DETERMINISTIC (hex MD5 of the record); any other token is
 * literal.  The list is parsed once per flow.
 */
#ifndef DISAGENT_PARTKEY_H
#define DISAGENT_PARTKEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

struct partkey;

struct partkey	*partkey_new(const char *option);
void		 partkey_free(struct partkey *);
/* The key of one record of file path into *out (replaced). */
void		 partkey_make(const struct partkey *, const char *path,
		    const void *data, size_t len, struct buf *out);

/*
 * Whether the keys can carry a record id (keyid.h): the option has a
 * RANDOM_INT, whose number carries no meaning a consumer could rely on.
 * The other tokens do (a file name, a hash of the data, a literal), so a
 * key without RANDOM_INT stays as configured and carries no id.
 */
bool		 partkey_carries_id(const struct partkey *);
/*
 * partkey_make, with the first RANDOM_INT replaced by the id of the record
 * at offset off of the file whose id part is file (keyid_file).  Without
 * a RANDOM_INT it is partkey_make.
 */
void		 partkey_make_id(const struct partkey *, const char *path,
		    const void *data, size_t len, uint64_t file, uint64_t off,
		    struct buf *out);

#endif
