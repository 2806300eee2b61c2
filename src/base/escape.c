/*
 * Escaping of outside text for logs, status, describe and terminals
 * (escape.h).  One pass over the bytes; the sequence a character becomes
 * is decided in one function, esc_piece(), which every entry point uses
 * (those into a struct buf: escbuf.c).
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "base/escape_int.h"

size_t
esc_utf8_len(const unsigned char *s, size_t n)
{
	size_t		 len, i;
	uint32_t	 cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (len > n)
		return 0;
	cp = s[0] & (0x7f >> len);
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and code points past U+10FFFF. */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

/*
 * What the character at s (n bytes left) becomes: *out (size 16) and its
 * length *outlen, or NULL in *out's place when it passes as it is; returns
 * how many input bytes it takes.
 */
size_t
esc_piece(const unsigned char *s, size_t n, unsigned flags, char *out,
    size_t *outlen)
{
	size_t	 len;

	*outlen = 0;
	if (s[0] == '\n' || s[0] == '\t') {
		if (flags & ESC_KEEP_LINES)
			return 1;
		*outlen = 2;
		memcpy(out, s[0] == '\n' ? "\\n" : "\\t", 2);
		return 1;
	}
	if (s[0] == '\r') {
		*outlen = 2;
		memcpy(out, "\\r", 2);
		return 1;
	}
	if (s[0] < 0x20 || s[0] == 0x7f) {
		*outlen = (size_t)snprintf(out, 16, "\\x%02x", s[0]);
		return 1;
	}
	len = esc_utf8_len(s, n);
	if (len == 0) {
		*outlen = (size_t)snprintf(out, 16, "\\x%02x", s[0]);
		return 1;
	}
	/* U+0080..U+009F: C1 controls, CSI (U+009B) among them. */
	if (len == 2 && s[0] == 0xc2 && s[1] < 0xa0) {
		*outlen = (size_t)snprintf(out, 16, "\\x%02x\\x%02x", s[0],
		    s[1]);
		return 2;
	}
	return len;
}

bool
esc_needed(const void *v, size_t n, unsigned flags)
{
	const unsigned char	*s = v;
	char			 e[16];
	size_t			 i, k, elen;

	for (i = 0; i < n; i += k) {
		k = esc_piece(s + i, n - i, flags, e, &elen);
		if (elen > 0)
			return true;
	}
	return false;
}

size_t
esc_cpy(char *dst, size_t len, const void *v, size_t n, unsigned flags)
{
	const unsigned char	*s = v;
	char			 e[16];
	size_t			 i, k, elen, o = 0;

	for (i = 0; i < n; i += k) {
		k = esc_piece(s + i, n - i, flags, e, &elen);
		if (elen == 0) {
			if (o + k >= len)
				break;
			memcpy(dst + o, s + i, k);
			o += k;
			continue;
		}
		if (o + elen >= len)
			break;
		memcpy(dst + o, e, elen);
		o += elen;
	}
	dst[o] = '\0';
	return o;
}

const char *
esc_str(char *dst, size_t len, const char *s)
{
	(void)esc_cpy(dst, len, s, strlen(s), 0);
	return dst;
}
