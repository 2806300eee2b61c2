/*
 * Private to base/escape.c and base/escbuf.c.
 */
#ifndef BASE_ESCAPE_INT_H
#define BASE_ESCAPE_INT_H

#include <stddef.h>

/*
 * What the character at s (n bytes left) becomes: *out (size 16) and its
 * length *outlen, or NULL in *out's place when it passes as it is; returns
 * how many input bytes it takes.
 */
size_t	esc_piece(const unsigned char *s, size_t n, unsigned flags, char *out,
	    size_t *outlen);

#endif
