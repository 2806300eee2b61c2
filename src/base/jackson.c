/*
 * Jackson's JSON output, byte for byte (see jackson.h): a bounded writer
 * and Java's Double.toString.  jackson_parse.c reads JSON values.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jackson.h"

static const char hex[] = "0123456789ABCDEF";

void
jw_init(struct jw *w, struct buf *b, bool pretty, size_t limit)
{
	memset(w, 0, sizeof(*w));
	w->b = b;
	w->pretty = pretty;
	w->limit = limit;
	buf_reserve(b, 0);
}

/*
 * Append n bytes, or as many as the limit leaves, cut back to the start of
 * a UTF-8 character so that a truncated record stays valid text.
 */
static void
add(struct jw *w, const char *p, size_t n)
{
	size_t	 room;

	if (w->cut)
		return;		/* a truncated record is a prefix */
	room = w->b->len < w->limit ? w->limit - w->b->len : 0;
	if (n > room) {
		w->cut = true;
		n = room;
		while (n > 0 && ((unsigned char)p[n] & 0xc0) == 0x80)
			n--;
	}
	if (n > 0)
		buf_add(w->b, p, n);
}

void
jw_raw(struct jw *w, const char *p, size_t n)
{
	add(w, p, n);
}

static void
addc(struct jw *w, char c)
{
	if (!w->cut && w->b->len < w->limit)
		buf_addc(w->b, c);
	else
		w->cut = true;
}

void
jw_string(struct jw *w, const char *s, size_t n)
{
	const unsigned char	*p = (const unsigned char *)s;
	char			 e[6] = { '\\', 'u', '0', '0', 0, 0 };
	size_t			 i, run = 0;

	addc(w, '"');
	for (i = 0; i < n && !w->cut; i++) {
		if (p[i] >= 0x20 && p[i] != '"' && p[i] != '\\')
			continue;
		add(w, s + run, i - run);
		run = i + 1;
		switch (p[i]) {
		case '"': add(w, "\\\"", 2); break;
		case '\\': add(w, "\\\\", 2); break;
		case '\b': add(w, "\\b", 2); break;
		case '\t': add(w, "\\t", 2); break;
		case '\n': add(w, "\\n", 2); break;
		case '\f': add(w, "\\f", 2); break;
		case '\r': add(w, "\\r", 2); break;
		default:
			e[4] = hex[p[i] >> 4];
			e[5] = hex[p[i] & 0xf];
			add(w, e, sizeof(e));
		}
	}
	if (!w->cut)
		add(w, s + run, n - run);
	addc(w, '"');
}

static void
indent(struct jw *w)
{
	int	 i;

	addc(w, '\n');
	for (i = 0; i < w->level; i++)
		add(w, "  ", 2);
}

static void
open(struct jw *w, char c, bool array)
{
	addc(w, c);
	w->depth++;
	w->count[w->depth] = 0;
	w->is_array[w->depth] = array;
	if (!array)
		w->level++;
}

void
jw_object(struct jw *w)
{
	open(w, '{', false);
}

void
jw_nest(struct jw *w, int depth)
{
	w->depth = MIN(depth, JW_MAX_DEPTH);
	w->level = w->depth;
}

void
jw_reopen_object(struct jw *w, unsigned members)
{
	w->depth++;		/* as open(): the parser bounds the depth */
	w->level++;
	w->count[w->depth] = members;
	w->is_array[w->depth] = false;
}

void
jw_key(struct jw *w, const char *k, size_t n)
{
	if (w->count[w->depth]++ > 0)
		addc(w, ',');
	if (w->pretty)
		indent(w);
	jw_string(w, k, n);
	if (w->pretty)
		add(w, " : ", 3);
	else
		addc(w, ':');
}

void
jw_end_object(struct jw *w)
{
	unsigned	 n = w->count[w->depth--];

	w->level--;
	if (w->pretty && n == 0)
		addc(w, ' ');
	else if (w->pretty)
		indent(w);
	addc(w, '}');
}

void
jw_array(struct jw *w)
{
	open(w, '[', true);
}

void
jw_item(struct jw *w)
{
	if (w->count[w->depth]++ > 0)
		addc(w, ',');
	if (w->pretty)
		addc(w, ' ');
}

void
jw_end_array(struct jw *w)
{
	w->depth--;
	if (w->pretty)
		addc(w, ' ');
	addc(w, ']');
}

/* --- Double.toString ------------------------------------------------------ */

/*
 * The shortest decimal digits that read back as d (> 0, finite), without
 * trailing zeros, into digits; returns the exponent of the first digit.
 * Java's FloatingDecimal (JDK 8 to 18) is not always the shortest: 1e23
 * is 9.999999999999999E22 there, the smallest subnormal 4.9E-324; JDK 19
 * and later print the shortest, as here.
 */
static int
shortest(double d, char digits[20])
{
	char	 tmp[40], *e;
	int	 p, n = 0, i;

	for (p = 1; p <= 17; p++) {
		snprintf(tmp, sizeof(tmp), "%.*e", p - 1, d);
		if (strtod(tmp, NULL) == d)
			break;
	}
	e = strchr(tmp, 'e');
	/* tmp is "D.DDDe+XX" (the point in any locale is one byte). */
	for (i = 0; tmp + i < e; i++)
		if (tmp[i] >= '0' && tmp[i] <= '9')
			digits[n++] = tmp[i];
	while (n > 1 && digits[n - 1] == '0')
		n--;
	digits[n] = '\0';
	return atoi(e + 1);
}

void
jackson_double(struct buf *b, double d)
{
	char	 dig[20];
	int	 x, n, i;

	if (isnan(d)) {
		buf_addstr(b, "\"NaN\"");
		return;
	}
	if (isinf(d)) {
		buf_addstr(b, d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
		return;
	}
	if (signbit(d))
		buf_addc(b, '-');
	d = fabs(d);
	if (d == 0) {
		buf_addstr(b, "0.0");
		return;
	}
	x = shortest(d, dig);
	n = (int)strlen(dig);
	if (d >= 1e-3 && d < 1e7) {
		if (x < 0) {
			buf_addstr(b, "0.");
			for (i = -1; i > x; i--)
				buf_addc(b, '0');
			buf_addstr(b, dig);
			return;
		}
		for (i = 0; i <= x; i++)
			buf_addc(b, i < n ? dig[i] : '0');
		buf_addc(b, '.');
		if (n > x + 1)
			buf_addstr(b, dig + x + 1);
		else
			buf_addc(b, '0');
		return;
	}
	buf_addc(b, dig[0]);
	buf_addc(b, '.');
	buf_addstr(b, n > 1 ? dig + 1 : "0");
	buf_printf(b, "E%d", x);
}
