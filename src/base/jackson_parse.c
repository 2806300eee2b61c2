/*
 * A small JSON parser (jackson.h) that renders a value, ADDMETADATA.metadata,
 * through the writer of jackson.c the way Jackson would write the same Map,
 * and reads customFieldNames' JSON arrays of strings.  Strict: valid UTF-8,
 * no duplicate keys, bounded nesting.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jackson.h"

#define MAX_MEMBERS	1000	/* members of one parsed object */

/* --- parsing -------------------------------------------------------------- */

struct jp {
	const char	*p;
	struct jw	*w;		/* NULL: only check */
	char		*err;
	size_t		 errlen;
	int		 depth;
	int		 top;		/* depth of the outermost value */
	const char *const *reserved;	/* keys the top object must not have */
	struct buf	 tmp;		/* a decoded string */
};

static int PRINTFLIKE(2, 3)
bad(struct jp *jp, const char *fmt, ...)
{
	va_list	 ap;

	if (jp->errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(jp->err, jp->errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static void
skip_ws(struct jp *jp)
{
	jp->p += strspn(jp->p, " \t\r\n");
}

/* Length of the valid UTF-8 character at p, or 0. */
static size_t
utf8_len(const unsigned char *p)
{
	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		return (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (p[0] >= 0xe0 && p[0] <= 0xef) {
		if ((p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 ||
		    (p[0] == 0xe0 && p[1] < 0xa0) ||
		    (p[0] == 0xed && p[1] >= 0xa0))
			return 0;
		return 3;
	}
	if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		if ((p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 ||
		    (p[3] & 0xc0) != 0x80 || (p[0] == 0xf0 && p[1] < 0x90) ||
		    (p[0] == 0xf4 && p[1] >= 0x90))
			return 0;
		return 4;
	}
	return 0;
}

static void
put_utf8(struct buf *b, unsigned long c)
{
	char	 o[4];

	if (c < 0x80) {
		buf_addc(b, (char)c);
	} else if (c < 0x800) {
		o[0] = (char)(0xc0 | c >> 6);
		o[1] = (char)(0x80 | (c & 0x3f));
		buf_add(b, o, 2);
	} else if (c < 0x10000) {
		o[0] = (char)(0xe0 | c >> 12);
		o[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		o[2] = (char)(0x80 | (c & 0x3f));
		buf_add(b, o, 3);
	} else {
		o[0] = (char)(0xf0 | c >> 18);
		o[1] = (char)(0x80 | ((c >> 12) & 0x3f));
		o[2] = (char)(0x80 | ((c >> 6) & 0x3f));
		o[3] = (char)(0x80 | (c & 0x3f));
		buf_add(b, o, 4);
	}
}

static int
hex4(struct jp *jp, unsigned long *out)
{
	unsigned long	 v = 0;
	int		 i, c;

	for (i = 0; i < 4; i++) {
		c = (unsigned char)jp->p[i];
		if (c >= '0' && c <= '9')
			v = v * 16 + (unsigned long)(c - '0');
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			v = v * 16 + (unsigned long)((c | 0x20) - 'a' + 10);
		else
			return bad(jp, "bad \\u escape");
	}
	jp->p += 4;
	*out = v;
	return 0;
}

/* \uXXXX, a surrogate pair joined; a lone surrogate is an error. */
static int
unicode_escape(struct jp *jp)
{
	unsigned long	 c, lo;

	if (hex4(jp, &c) != 0)
		return -EINVAL;
	if (c >= 0xdc00 && c <= 0xdfff)
		return bad(jp, "lone surrogate in \\u escape");
	if (c >= 0xd800 && c <= 0xdbff) {
		if (jp->p[0] != '\\' || jp->p[1] != 'u')
			return bad(jp, "lone surrogate in \\u escape");
		jp->p += 2;
		if (hex4(jp, &lo) != 0)
			return -EINVAL;
		if (lo < 0xdc00 || lo > 0xdfff)
			return bad(jp, "lone surrogate in \\u escape");
		c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
	}
	put_utf8(&jp->tmp, c);
	return 0;
}

/* A string at jp->p ('"'), decoded into jp->tmp. */
static int
string(struct jp *jp)
{
	static const char	 from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char		*e;
	unsigned char		 c;
	size_t			 n;

	buf_reset(&jp->tmp);
	buf_reserve(&jp->tmp, 0);	/* "" too has a data pointer */
	jp->p++;
	for (;;) {
		c = (unsigned char)*jp->p;
		if (c == '"') {
			jp->p++;
			return 0;
		}
		if (c < 0x20)
			return bad(jp, c == 0 ? "unterminated string" :
			    "control character in a string");
		if (c != '\\') {
			n = utf8_len((const unsigned char *)jp->p);
			if (n == 0)
				return bad(jp, "invalid UTF-8");
			buf_add(&jp->tmp, jp->p, n);
			jp->p += n;
			continue;
		}
		jp->p++;
		if (*jp->p == 'u') {
			jp->p++;
			if (unicode_escape(jp) != 0)
				return -EINVAL;
			continue;
		}
		e = *jp->p != '\0' ? strchr(from, *jp->p) : NULL;
		if (e == NULL)
			return bad(jp, "bad escape in a string");
		buf_addc(&jp->tmp, to[e - from]);
		jp->p++;
	}
}

static size_t
digits(const char *p)
{
	return strspn(p, "0123456789");
}

static int
number(struct jp *jp)
{
	const char	*s = jp->p, *q = s;
	struct buf	 b;
	bool		 integer = true;
	size_t		 n;

	q += *q == '-';
	n = digits(q);
	if (n == 0 || (q[0] == '0' && n > 1))
		return bad(jp, "bad number");
	q += n;
	if (*q == '.') {
		integer = false;
		n = digits(++q);
		if (n == 0)
			return bad(jp, "bad number");
		q += n;
	}
	if (*q == 'e' || *q == 'E') {
		integer = false;
		q++;
		q += *q == '+' || *q == '-';
		n = digits(q);
		if (n == 0)
			return bad(jp, "bad number");
		q += n;
	}
	jp->p = q;
	if (jp->w == NULL)
		return 0;
	if (integer) {
		/* Java's integers have no negative zero. */
		if (strncmp(s, "-0", 2) == 0 && q == s + 2)
			s++;
		jw_raw(jp->w, s, (size_t)(q - s));
		return 0;
	}
	buf_init(&b);
	jackson_double(&b, strtod(s, NULL));
	jw_raw(jp->w, b.data, b.len);
	buf_cleanup(&b);
	return 0;
}

static int	value(struct jp *, bool leave_open);

/* Whether key (n bytes) is among the NUL-separated keys in seen. */
static bool
seen_key(const struct buf *seen, const char *key, size_t n)
{
	const char	*p = seen->data, *end;
	size_t		 l;

	if (seen->len == 0)
		return false;
	end = seen->data + seen->len;
	while (p < end) {
		l = strlen(p);
		if (l == n && memcmp(p, key, n) == 0)
			return true;
		p += l + 1;
	}
	return false;
}

static bool
reserved_key(const struct jp *jp)
{
	const char *const	*r;

	if (jp->reserved == NULL || jp->depth != jp->top + 1)
		return false;
	for (r = jp->reserved; *r != NULL; r++)
		if (strlen(*r) == jp->tmp.len &&
		    memcmp(*r, jp->tmp.data, jp->tmp.len) == 0)
			return true;
	return false;
}

static int
members(struct jp *jp, struct buf *seen)
{
	unsigned	 n = 0;

	for (;;) {
		skip_ws(jp);
		if (*jp->p != '"')
			return bad(jp, "expected a string key");
		if (string(jp) != 0)
			return -EINVAL;
		if (memchr(jp->tmp.data, '\0', jp->tmp.len) != NULL ||
		    seen_key(seen, jp->tmp.data, jp->tmp.len))
			return bad(jp, "duplicate or NUL key \"%.40s\"",
			    jp->tmp.data);
		if (reserved_key(jp))
			return bad(jp, "key \"%s\" is added by "
			    "ADDMETADATA.fields", jp->tmp.data);
		if (++n > MAX_MEMBERS)
			return bad(jp, "more than %d members", MAX_MEMBERS);
		buf_add(seen, jp->tmp.data, jp->tmp.len + 1);
		if (jp->w != NULL)
			jw_key(jp->w, jp->tmp.data, jp->tmp.len);
		skip_ws(jp);
		if (*jp->p++ != ':')
			return bad(jp, "expected ':'");
		if (value(jp, false) != 0)
			return -EINVAL;
		skip_ws(jp);
		if (*jp->p == '}')
			return 0;
		if (*jp->p++ != ',')
			return bad(jp, "expected ',' or '}'");
	}
}

static int
object(struct jp *jp, bool leave_open)
{
	struct buf	 seen;
	int		 rc = 0;

	jp->p++;
	if (jp->w != NULL)
		jw_object(jp->w);
	skip_ws(jp);
	buf_init(&seen);
	if (*jp->p != '}')
		rc = members(jp, &seen);
	buf_cleanup(&seen);
	if (rc != 0)
		return rc;
	jp->p++;
	if (jp->w != NULL && !leave_open)
		jw_end_object(jp->w);
	return 0;
}

static int
array(struct jp *jp)
{
	jp->p++;
	if (jp->w != NULL)
		jw_array(jp->w);
	skip_ws(jp);
	if (*jp->p != ']') {
		for (;;) {
			if (jp->w != NULL)
				jw_item(jp->w);
			if (value(jp, false) != 0)
				return -EINVAL;
			skip_ws(jp);
			if (*jp->p == ']')
				break;
			if (*jp->p++ != ',')
				return bad(jp, "expected ',' or ']'");
		}
	}
	jp->p++;
	if (jp->w != NULL)
		jw_end_array(jp->w);
	return 0;
}

static int
literal(struct jp *jp)
{
	static const char *const words[] = { "true", "false", "null" };
	size_t	 i, n;

	for (i = 0; i < ARRAY_SIZE(words); i++) {
		n = strlen(words[i]);
		if (strncmp(jp->p, words[i], n) != 0)
			continue;
		if (jp->w != NULL)
			jw_raw(jp->w, words[i], n);
		jp->p += n;
		return 0;
	}
	return bad(jp, "unexpected '%.10s'", jp->p);
}

static int
value(struct jp *jp, bool leave_open)
{
	int	 rc;

	skip_ws(jp);
	if (jp->depth >= JW_MAX_DEPTH && (*jp->p == '{' || *jp->p == '['))
		return bad(jp, "nested deeper than %d", JW_MAX_DEPTH);
	switch (*jp->p) {
	case '{':
		jp->depth++;
		rc = object(jp, leave_open);
		jp->depth--;
		return rc;
	case '[':
		jp->depth++;
		rc = array(jp);
		jp->depth--;
		return rc;
	case '"':
		if (string(jp) != 0)
			return -EINVAL;
		if (jp->w != NULL)
			jw_string(jp->w, jp->tmp.data, jp->tmp.len);
		return 0;
	case '\0':
		return bad(jp, "no value");
	default:
		if (*jp->p == '-' || (*jp->p >= '0' && *jp->p <= '9'))
			return number(jp);
		return literal(jp);
	}
}

static int
parse(struct jw *w, const char *json, bool leave_open,
    const char *const *reserved, char *err, size_t errlen)
{
	struct jp	 jp;
	int		 rc;

	memset(&jp, 0, sizeof(jp));
	jp.p = json;
	jp.w = w;
	jp.err = err;
	jp.errlen = errlen;
	buf_init(&jp.tmp);
	/* Depth counts from where the writer stands. */
	jp.depth = w != NULL ? w->depth : 0;
	jp.top = jp.depth;
	jp.reserved = reserved;
	rc = value(&jp, leave_open);
	if (rc == 0) {
		skip_ws(&jp);
		if (*jp.p != '\0')
			rc = bad(&jp, "text after the value");
	}
	buf_cleanup(&jp.tmp);
	return rc;
}

int
jackson_render(struct jw *w, const char *json, bool leave_open,
    const char *const *reserved, char *err, size_t errlen)
{
	return parse(w, json, leave_open, reserved, err, errlen);
}

bool
jackson_valid(const char *json, char *err, size_t errlen)
{
	return parse(NULL, json, false, NULL, err, errlen) == 0;
}

static void
strings_free(char **v, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int
jackson_string_array(const char *json, char ***out, size_t *n, char *err,
    size_t errlen)
{
	struct jp	 jp;
	char		**v = NULL;
	size_t		 k = 0;
	int		 rc = 0;

	memset(&jp, 0, sizeof(jp));
	jp.p = json;
	jp.err = err;
	jp.errlen = errlen;
	buf_init(&jp.tmp);
	skip_ws(&jp);
	/* Never step past the NUL: the text may end anywhere. */
	if (*jp.p != '[')
		rc = bad(&jp, "not a JSON array");
	else
		jp.p++;
	skip_ws(&jp);
	if (rc == 0 && *jp.p == ']')
		jp.p++;
	else
		while (rc == 0) {
			skip_ws(&jp);
			if (*jp.p != '"' || string(&jp) != 0) {
				rc = bad(&jp, "expected a JSON array of "
				    "strings");
				break;
			}
			if (memchr(jp.tmp.data, '\0', jp.tmp.len) != NULL) {
				rc = bad(&jp, "a name holds NUL");
				break;
			}
			v = xrealloc(v, (k + 1) * sizeof(*v));
			v[k++] = xstrndup(jp.tmp.data, jp.tmp.len);
			skip_ws(&jp);
			if (*jp.p == ']') {
				jp.p++;
				break;
			}
			if (*jp.p != ',')
				rc = bad(&jp, "expected ',' or ']'");
			else
				jp.p++;
		}
	skip_ws(&jp);
	if (rc == 0 && *jp.p != '\0')
		rc = bad(&jp, "text after the array");
	buf_cleanup(&jp.tmp);
	if (rc != 0) {
		strings_free(v, k);
		return rc;
	}
	*out = v;
	*n = k;
	return 0;
}

int
jackson_kind(const char *json)
{
	json += strspn(json, " \t\r\n");
	return (unsigned char)*json;
}
