/*
 * Escaping into a struct buf (escape.h): esc_buf and esc_new, apart from
 * escape.c so that the logger's escaping (esc_cpy) needs nothing of
 * util.c, whose struct buf this uses.
 */
#include "config.h"

#include <string.h>

#include "base/escape.h"
#include "base/escape_int.h"
#include "base/util.h"

void
esc_buf(struct buf *out, const void *v, size_t n, unsigned flags)
{
	const unsigned char	*s = v;
	char			 e[16];
	size_t			 i, k, elen, from = 0;

	for (i = 0; i < n; i += k) {
		k = esc_piece(s + i, n - i, flags, e, &elen);
		if (elen == 0)
			continue;
		buf_add(out, s + from, i - from);
		buf_add(out, e, elen);
		from = i + k;
	}
	buf_add(out, s + from, n - from);
}

char *
esc_new(const char *s)
{
	struct buf	 b;

	buf_init(&b);
	esc_buf(&b, s, strlen(s), 0);
	return b.data != NULL ? b.data : xstrdup("");
}
