/*
 * Line filters: a flow's lineIncludePattern and lineExcludePattern
 * (PCRE2), applied to each record after framing (a multi-line record is
 * one record) and before the processing chain.  A record is sent when it
 * matches the include pattern (if there is one) and not the exclude
 * pattern; each is matched anywhere in the record without its trailing
 * delimiter, as Java's find() and multiLineStartPattern do.  Records are
 * UTF-8 once framed, so the patterns are matched as UTF-8 (an invalid
 * sequence never matches a character).  A match PCRE2 gives up on (its
 * match limit, on a pathological pattern) leaves the record in: in doubt
 * it is sent.
 *
 * The filter only answers; the flow moves the committed offset past a
 * record it filters out and counts it (disagent_records_filtered_total),
 * and `disagent verify` applies the same filter to the files it checks.
 */
#ifndef DISAGENT_FILTER_H
#define DISAGENT_FILTER_H

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"

struct filter;

/*
 * Compile include and exclude (either may be NULL or "": no such test)
 * into *out: new, or NULL when neither is set.  delim is the record
 * delimiter to ignore at the end of a record (-1: none is kept).  0, or
 * -EINVAL with "KEY: message" in err and the key's name in *key (static).
 */
int		 filter_new(const char *include, const char *exclude,
		    int delim, struct filter **out, const char **key,
		    char *err, size_t errlen) WARN_UNUSED;
void		 filter_free(struct filter *);
/* Whether the record data[0..len) is sent. */
bool		 filter_pass(struct filter *, const char *data, size_t len);

/*
 * For the key table: NULL when value compiles as a filter pattern, else
 * why not (static, valid until the next call).
 */
const char	*filter_check_pattern(const char *value);

#endif
