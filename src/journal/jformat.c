/*
 * Journal entries as records, and cursors (jformat.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/escape.h"
#include "base/jackson.h"
#include "journal/jformat.h"

const char *
jformat_get(const struct jfield *f, size_t n, const char *name, size_t *len)
{
	size_t	 i, nl = strlen(name);

	for (i = 0; i < n; i++)
		if (f[i].nlen == nl && memcmp(f[i].name, name, nl) == 0) {
			*len = f[i].vlen;
			return f[i].value;
		}
	return NULL;
}

/* --- JSON ---------------------------------------------------------------- */

/* Printable UTF-8, as journalctl decides between a string and bytes. */
static bool
printable(const char *v, size_t n)
{
	const unsigned char *s = (const unsigned char *)v;
	size_t		 i = 0, k;

	while (i < n) {
		if (s[i] < 0x20 && s[i] != '\t' && s[i] != '\n')
			return false;
		if (s[i] == 0x7f || (k = esc_utf8_len(s + i, n - i)) == 0)
			return false;
		i += k;
	}
	return true;
}

static void
json_value(struct jw *w, const char *v, size_t n)
{
	char	 num[8];
	size_t	 i;

	if (printable(v, n)) {
		jw_string(w, v, n);
		return;
	}
	jw_array(w);
	for (i = 0; i < n; i++) {
		jw_item(w);
		snprintf(num, sizeof(num), "%u", (unsigned char)v[i]);
		jw_raw(w, num, strlen(num));
	}
	jw_end_array(w);
}

static bool
same_name(const struct jfield *a, const struct jfield *b)
{
	return a->nlen == b->nlen && memcmp(a->name, b->name, a->nlen) == 0;
}

/* Field i's values: one as a string, more as an array of them. */
static void
json_field(struct jw *w, const struct jfield *f, size_t n, size_t i)
{
	size_t	 j, count = 0;

	for (j = i; j < n; j++)
		count += same_name(&f[i], &f[j]);
	jw_key(w, f[i].name, f[i].nlen);
	if (count == 1) {
		json_value(w, f[i].value, f[i].vlen);
		return;
	}
	jw_array(w);
	for (j = i; j < n; j++)
		if (same_name(&f[i], &f[j])) {
			jw_item(w);
			json_value(w, f[j].value, f[j].vlen);
		}
	jw_end_array(w);
}

static void
json_number_string(struct jw *w, const char *key, uint64_t v)
{
	char	 s[24];

	snprintf(s, sizeof(s), "%ju", (uintmax_t)v);
	jw_key(w, key, strlen(key));
	jw_string(w, s, strlen(s));
}

void
jformat_json(const struct jfield *f, size_t n, const struct jentry *e,
    size_t max, struct buf *out, bool *cut)
{
	struct jw	 w;
	size_t		 i, j;
	bool		 seen;

	buf_reset(out);
	jw_init(&w, out, false, max);
	jw_object(&w);
	jw_key(&w, "__CURSOR", 8);
	jw_string(&w, e->cursor, strlen(e->cursor));
	json_number_string(&w, "__REALTIME_TIMESTAMP", e->realtime);
	json_number_string(&w, "__MONOTONIC_TIMESTAMP", e->monotonic);
	for (i = 0; i < n; i++) {
		for (j = 0, seen = false; j < i && !seen; j++)
			seen = same_name(&f[i], &f[j]);
		if (!seen)
			json_field(&w, f, n, i);
	}
	jw_end_object(&w);
	*cut = w.cut;
}

/* --- SHORT --------------------------------------------------------------- */

/* A field's value as a decimal number, or 0. */
static uint64_t
field_number(const struct jfield *f, size_t n, const char *name)
{
	const char	*v;
	char		 s[24];
	size_t		 len;

	v = jformat_get(f, n, name, &len);
	if (v == NULL || len == 0 || len >= sizeof(s))
		return 0;
	memcpy(s, v, len);
	s[len] = '\0';
	return strtoull(s, NULL, 10);
}

static void
add_field(struct buf *b, const struct jfield *f, size_t n, const char *a,
    const char *b_name)
{
	const char	*v;
	size_t		 len;

	v = jformat_get(f, n, a, &len);
	if (v == NULL && b_name != NULL)
		v = jformat_get(f, n, b_name, &len);
	if (v != NULL)
		buf_add(b, v, len);
}

void
jformat_short(const struct jfield *f, size_t n, const struct jentry *e,
    size_t max, struct buf *out, bool *cut)
{
	struct tm	 tm;
	time_t		 t;
	uint64_t	 usec;
	size_t		 len;
	char		 ts[32];

	buf_reset(out);
	usec = field_number(f, n, "_SOURCE_REALTIME_TIMESTAMP");
	if (usec == 0)
		usec = e->realtime;
	t = (time_t)(usec / 1000000);
	if (localtime_r(&t, &tm) == NULL ||
	    strftime(ts, sizeof(ts), "%b %d %H:%M:%S", &tm) == 0)
		snprintf(ts, sizeof(ts), "%ju", (uintmax_t)(usec / 1000000));
	buf_printf(out, "%s ", ts);
	add_field(out, f, n, "_HOSTNAME", NULL);
	buf_addc(out, ' ');
	add_field(out, f, n, "SYSLOG_IDENTIFIER", "_COMM");
	if (jformat_get(f, n, "SYSLOG_PID", &len) != NULL ||
	    jformat_get(f, n, "_PID", &len) != NULL) {
		buf_addc(out, '[');
		add_field(out, f, n, "SYSLOG_PID", "_PID");
		buf_addc(out, ']');
	}
	buf_addstr(out, ": ");
	add_field(out, f, n, "MESSAGE", NULL);
	*cut = out->len > max;
	if (*cut)
		out->len = max;
}

/* --- cursors ------------------------------------------------------------- */

/* The value of part c ("s", "i", "t") of cursor, into v[len]. */
static bool
cursor_part(const char *cursor, char c, char *v, size_t len)
{
	const char	*p = cursor;
	size_t		 n;

	while (p != NULL && *p != '\0') {
		n = strcspn(p, ";");
		if (p[0] == c && p[1] == '=' && n - 2 < len) {
			memcpy(v, p + 2, n - 2);
			v[n - 2] = '\0';
			return n > 2;
		}
		p = p[n] == ';' ? p + n + 1 : NULL;
	}
	return false;
}

static bool
hex64(const char *s, uint64_t *out)
{
	char	*end;

	if (*s == '\0' || strspn(s, "0123456789abcdefABCDEF") != strlen(s))
		return false;
	*out = strtoull(s, &end, 16);
	return *end == '\0';
}

bool
jcursor_parse(const char *cursor, struct jcursor *out)
{
	char	 v[40];

	memset(out, 0, sizeof(*out));
	return cursor_part(cursor, 's', out->seqnum_id,
	    sizeof(out->seqnum_id)) &&
	    cursor_part(cursor, 'i', v, sizeof(v)) && hex64(v, &out->seqnum) &&
	    cursor_part(cursor, 't', v, sizeof(v)) && hex64(v, &out->realtime);
}

int
jcursor_gap(const char *from, const char *to, uint64_t *lost)
{
	struct jcursor	 a, b;

	if (!jcursor_parse(from, &a) || !jcursor_parse(to, &b))
		return -1;
	if (strcmp(a.seqnum_id, b.seqnum_id) != 0)
		return 0;
	*lost = b.seqnum > a.seqnum + 1 ? b.seqnum - a.seqnum - 1 : 0;
	return 1;
}
