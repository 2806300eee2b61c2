/*
 * JSON as the DIS Agent writes it: its converters hand a Map to Jackson's
 * ObjectMapper (jackson-databind 2.x, default settings), either its default
 * writer (COMPACT) or writerWithDefaultPrettyPrinter() (PRETTYPRINT), and
 * consumers of its streams see exactly those bytes.  jansson formats
 * differently (spaces, escapes), so this is our own small writer.
 *
 * What Jackson does, and so this writer:
 * - strings: '"' and '\\' escaped with a backslash; \b \t \n \f \r; other
 *   characters below U+0020 as \u00XX with upper-case hex; everything
 *   else, '/', DEL, U+2028 and all non-ASCII included, as is (UTF-8);
 * - COMPACT: no blanks at all: {"k":"v","n":null};
 * - PRETTYPRINT (DefaultPrettyPrinter): an object's members one per line,
 *   indented two spaces per object level, "k" : v; arrays on one line,
 *   [ 1, 2 ], adding no indentation level; empty ones as { } and [ ];
 *   "\n" line ends (the system line separator on Linux); no final newline;
 * - doubles as Java's Double.toString (1.5, 100.0, 1.0E10, 1.0E-4),
 *   NaN and infinities as the strings "NaN", "Infinity", "-Infinity".
 *
 * A struct jw writes into a caller's struct buf, at most limit bytes: what
 * would go past it is dropped and cut is set, so output driven by a record
 * stays bounded whatever the record holds.
 */
#ifndef DISAGENT_JACKSON_H
#define DISAGENT_JACKSON_H

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"

#define JW_MAX_DEPTH	32	/* nested objects and arrays */

struct jw {
	struct buf	*b;		/* borrowed */
	size_t		 limit;		/* b->len never goes past it */
	bool		 cut;		/* bytes were dropped at limit */
	bool		 pretty;
	int		 depth;		/* open objects and arrays */
	int		 level;		/* open objects (the indentation) */
	unsigned	 count[JW_MAX_DEPTH + 1];	/* members so far */
	bool		 is_array[JW_MAX_DEPTH + 1];
};

/* Start writing into b (appending), at most limit bytes in all. */
void	jw_init(struct jw *, struct buf *b, bool pretty, size_t limit);
/* What is written goes inside depth open objects of a larger document
 * (indented as such); right after jw_init. */
void	jw_nest(struct jw *, int depth);
/* The object jw_raw() just wrote was left open after its first members
 * (members of them): more go into it, then jw_end_object(). */
void	jw_reopen_object(struct jw *, unsigned members);

/* Raw bytes (numbers, true, already rendered JSON). */
void	jw_raw(struct jw *, const char *, size_t);
/* A JSON string of n bytes of valid UTF-8, escaped as Jackson does. */
void	jw_string(struct jw *, const char *s, size_t n);

/* Open an object; then jw_key() and a value for each member; close. */
void	jw_object(struct jw *);
void	jw_key(struct jw *, const char *k, size_t n);
void	jw_end_object(struct jw *);
/* Open an array; then jw_item() before each value; close. */
void	jw_array(struct jw *);
void	jw_item(struct jw *);
void	jw_end_array(struct jw *);

/* A double as Java's Double.toString writes it (into b, no limit). */
void	jackson_double(struct buf *b, double);

/*
 * Parse the JSON text json (one value: what ADDMETADATA.metadata holds)
 * and write it through w as Jackson writes the same value.  Integers keep
 * their digits ("-0" becomes "0": Java has no negative integer zero);
 * other numbers go through jackson_double.  When leave_open is true and
 * the value is an object, its closing brace is not written: members can
 * be added and jw_end_object() closes it; reserved (NULL-terminated, may
 * be NULL) names the keys those members will have, which the object must
 * not have itself.  Returns 0, or -EINVAL with a message in err: not
 * JSON, trailing text, invalid UTF-8 or escapes, nesting deeper than
 * JW_MAX_DEPTH, a duplicate or reserved key.
 */
int	jackson_render(struct jw *, const char *json, bool leave_open,
	    const char *const *reserved, char *err, size_t errlen)
	    WARN_UNUSED;

/*
 * Parse json, a JSON array of strings, into *out (a new array of *n new
 * strings).  Returns 0, or -EINVAL with a message in err (not such an
 * array, a string holding NUL).
 */
int	jackson_string_array(const char *json, char ***out, size_t *n,
	    char *err, size_t errlen) WARN_UNUSED;

/* Whether json is one JSON value that jackson_render accepts. */
bool	jackson_valid(const char *json, char *err, size_t errlen);

/* The first byte of json's value ('{', '[', '"', ...) or 0 if blank. */
int	jackson_kind(const char *json);

#endif
