/*
 * Regular expressions: PCRE2 patterns compiled once, with PCRE2's JIT where
 * the platform gives it executable memory and with its interpreter where
 * not (MemoryDenyWriteExecute=yes, SELinux's execmem, no JIT support); a
 * subject too deep for the JIT's stack is matched again by the
 * interpreter, which has more.  For the multi-line pattern (framer.c), the
 * LOGTOJSON patterns (logparse.c), the record filters and the key checks.
 * The only file that includes <pcre2.h>.
 */
#ifndef DISAGENT_RE_H
#define DISAGENT_RE_H

#include <stdbool.h>
#include <stddef.h>

struct re;

/* re_new() flags. */
#define RE_UTF		0x01	/* UTF-8; a subject's invalid UTF-8 only
				   fails to match what it breaks (PCRE2 >=
				   10.34; before, the whole subject) */
#define RE_UTF_VALID	0x02	/* UTF-8, and every subject is valid UTF-8:
				   not checked */
#define RE_WHOLE	0x04	/* anchored at both ends of the subject */

/* Why a pattern does not compile. */
struct re_error {
	char	 msg[160];	/* PCRE2's message */
	size_t	 offset;	/* where in the pattern */
};

/*
 * Compile pattern with flags into *out (new; re_free it).  0, or -EINVAL
 * with *err filled.
 */
int		 re_new(const char *pattern, unsigned flags, struct re **out,
		    struct re_error *err);

/* Whether pattern compiles with flags (nothing kept); 0 or -EINVAL. */
int		 re_check(const char *pattern, unsigned flags,
		    struct re_error *err);

void		 re_free(struct re *);

/*
 * Match s[0..n): 1 when it matches, 0 when not, or a negative PCRE2 error
 * (the match limit of a pathological pattern, ...) for re_strerror().
 */
int		 re_match(struct re *, const char *s, size_t n);

/*
 * After a match: the start and end offsets of the whole match and of each
 * group (2 * (1 + re_groups()) of them; an unset group's are SIZE_MAX).
 * Borrowed: valid until the next re_match() or re_free().
 */
const size_t	*re_spans(const struct re *);

/* The number of capturing groups. */
size_t		 re_groups(const struct re *);

/* Whether the pattern runs as JIT-compiled code. */
bool		 re_jit(const struct re *);

/* PCRE2's message for a negative re_match() result, into buf; buf. */
const char	*re_strerror(int rc, char *buf, size_t len);

#endif
