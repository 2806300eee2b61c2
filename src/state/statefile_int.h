/*
 * Private to state/statefile*.c: one entry's JSON both ways
 * (stateentry.c), shared by the version 2 file (statefile.c).
 */
#ifndef STATE_STATEFILE_INT_H
#define STATE_STATEFILE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

struct reg_entry;

/* s as a JSON string, its non-ASCII bytes '?' when it is not UTF-8. */
json_t		*statefile_json_text(const char *s);
/* The line of one entry. */
json_t		*statefile_entry_json(const struct reg_entry *);
/* A partition number as the header writes it: decimal, no sign; -1 if
 * it is not one. */
int32_t		 statefile_part_number(const char *s);
/* o's string member key, or NULL. */
const char	*statefile_get_str(json_t *o, const char *key);
/* o's integer member key into *out: false if it is missing or not an
 * integer. */
bool		 statefile_get_int(json_t *o, const char *key,
		    json_int_t *out);

#endif
