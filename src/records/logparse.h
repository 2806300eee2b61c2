/*
 * LOGTOJSON's parsers: the DIS Agent's five log formats (its
 * PatternConstants, Java regular expressions) and a user's matchPattern,
 * translated from Java's regex dialect to PCRE2 and compiled once, with JIT
 * where the platform allows executable memory.  Under systemd's
 * MemoryDenyWriteExecute=yes (disagent.service) JIT memory is refused and
 * the interpreter is used, silently: same results, slower.
 *
 * A line matches as Java's Matcher.matches() does: the whole line, with
 * Java's meaning of '.', '$', '\b' and the rest (logparse_translate).
 */
#ifndef DISAGENT_LOGPARSE_H
#define DISAGENT_LOGPARSE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"

enum logparse_format {
	LP_COMMON,		/* COMMONAPACHELOG */
	LP_COMBINED,		/* COMBINEDAPACHELOG */
	LP_ERROR,		/* APACHEERRORLOG */
	LP_SYSLOG,		/* SYSLOG (RFC 3164 timestamps) */
	LP_RFC3339,		/* RFC3339SYSLOG */
};

/* The logFormat names, in enum order, NULL-terminated. */
extern const char *const logparse_format_names[];

/* A span of a match; start == LOGPARSE_UNSET: the group took no part. */
#define LOGPARSE_UNSET	((size_t)-1)

struct logparse;

/*
 * Compile format's pattern, or java_pattern instead when it is not NULL
 * or "" (a Java regular expression, matchPattern).  *out is new (free
 * with logparse_free).  Returns 0, or -EINVAL with a message in err when
 * the pattern does not translate or compile.
 */
int	logparse_new(enum logparse_format, const char *java_pattern,
	    struct logparse **out, char *err, size_t errlen) WARN_UNUSED;
void	logparse_free(struct logparse *);

/* Capturing groups of the pattern (Java's groupCount()). */
size_t	logparse_groups(const struct logparse *);
/* Whether the pattern runs as JIT-compiled code. */
bool	logparse_jit(const struct logparse *);

/*
 * The format's field names (*names, borrowed, static) and their count:
 * what the DIS Agent's parsers name the groups of its own pattern.
 */
size_t	logparse_fields(enum logparse_format, const char *const **names);
/* Whether "-" means "no value" (null) in format: the Apache formats. */
bool	logparse_dash_is_null(enum logparse_format);

/*
 * Match the whole of s[0..n) (valid UTF-8).  Returns 1 and points *spans
 * at 2 * (groups + 1) offsets (group i from spans[2i] to spans[2i + 1],
 * group 0 the whole line), valid until the next call; 0 when the line
 * does not match; or a negative PCRE2 error (match limit, ...), which the
 * caller treats as no match with a reason (logparse_error).
 */
int	logparse_match(struct logparse *, const char *s, size_t n,
	    const size_t **spans) WARN_UNUSED;
/* The text of a negative logparse_match result, into buf. */
const char *logparse_error(int rc, char *buf, size_t len);

/*
 * Java regular expression -> the PCRE2 pattern that matches the same
 * strings, as a new string; NULL with a message in err for what PCRE2
 * cannot express (nested classes [a[b]], intersections &&, the flags d, u,
 * U).  Translated: '.' (no line terminator: \n \r U+0085 U+2028 U+2029,
 * unless (?s)), '^' and '$' and \Z (Java's line terminators), \b and \B
 * (letters and digits of any script, as Java's), \uXXXX, \0ooo, and the
 * POSIX names \p{Alpha} \p{Punct} ...; \p{IsX} as \p{X}.  The rest of the
 * syntax is the same in both.  Known gaps: (?i) folds non-ASCII letters
 * too, and (?x) ignores only blanks and tabs inside [].
 */
char	*logparse_translate(const char *java, char *err, size_t errlen);

#endif
