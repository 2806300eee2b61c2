/*
 * Text from outside (file and directory names, stream and app names, reply
 * bodies, record text) made safe to print where a control character would
 * do harm: a newline that starts a forged log line (journald reads "<3>" at
 * a line's start as a priority), an ESC that drives the reader's terminal.
 * One rule everywhere: printable ASCII and valid UTF-8 pass unchanged (a
 * Chinese file name stays readable); a newline, tab and carriage return
 * become \n, \t, \r; every other C0 control, DEL, a C1 control (U+0080 to
 * U+009F, which some terminals obey as ESC sequences) and each byte that
 * is not part of valid UTF-8 become \xNN.  A backslash is kept as it is,
 * so text that holds a literal "\n" reads the same as an escaped newline:
 * the point is that no control character reaches the output, not that the
 * text can be read back.
 */
#ifndef DISAGENT_ESCAPE_H
#define DISAGENT_ESCAPE_H

#include <stddef.h>

#include "base/util.h"

/* Newlines and tabs pass as they are: a record shown on a terminal, whose
 * lines are meant to be lines (read, as less and journalctl do). */
#define ESC_KEEP_LINES	0x01

/*
 * Length of the valid UTF-8 sequence at s, which has n bytes (n >= 1), or
 * 0 when it is not one (overlong, a surrogate, past U+10FFFF, cut short).
 */
size_t	 esc_utf8_len(const unsigned char *s, size_t n);

/* Whether any byte of s[n] would be escaped (flags: ESC_*). */
bool	 esc_needed(const void *s, size_t n, unsigned flags);

/* Append s[n] to out, escaped. */
void	 esc_buf(struct buf *out, const void *s, size_t n, unsigned flags);

/*
 * s[n] escaped into dst[len] (len >= 1), NUL-terminated, cut before the
 * first character or escape that does not fit whole.  Returns the length
 * written.
 */
size_t	 esc_cpy(char *dst, size_t len, const void *s, size_t n,
	    unsigned flags);

/* The string s escaped: new (free it). */
char	*esc_new(const char *s);

/*
 * The string s escaped into a buffer of the enclosing block (a compound
 * literal), cut at ESC_SHORT_MAX - 1 bytes: for a printf argument that is
 * short by nature (a name or id DIS returns, a code, a message written
 * into a buffer of 1 KiB).  Use esc_new for a path, which may be longer.
 */
#define ESC_SHORT_MAX	2048
#define ESC(s)	esc_str((char[ESC_SHORT_MAX]){ 0 }, ESC_SHORT_MAX, (s))
/* esc_cpy of the string s into dst[len]; returns dst. */
const char *esc_str(char *dst, size_t len, const char *s);

#endif
