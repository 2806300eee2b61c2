/*
 * The record processing chain (convert.h).  convert_new() turns a flow's
 * options into steps once: field names deduplicated as Java's LinkedHashMap
 * would have them, the CSV separators as a table, the log pattern compiled
 * (logparse.c), the static metadata rendered (jackson.c).  convert_apply()
 * runs the steps over two scratch buffers, each step's output bounded by
 * the record limit; nothing is allocated per record except when a buffer
 * grows, and a buffer a large record grew is trimmed afterwards.
 * convert_record() adds what a flow needs around it: the unmatched line's
 * disposal, its counters and the WARN once a minute.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "base/jackson.h"
#include "base/log.h"
#include "records/convert.h"
#include "records/convert_int.h"
#include "records/deadletter.h"
#include "records/logparse.h"

#define WARN_EVERY_MS	60000

/* U+FFFD REPLACEMENT CHARACTER, in UTF-8. */
#define REPL		"\xef\xbf\xbd"

/* --- Java's UTF-8 decoding ------------------------------------------------ */

static bool
cont(unsigned char b)
{
	return (b & 0xc0) == 0x80;
}

/*
 * Bytes of the malformed input starting at p[0] (a lead byte E0..EF or
 * F0..F4 with enough bytes after it) that Java replaces with one U+FFFD.
 */
static size_t
malformed(const unsigned char *p)
{
	if (p[0] < 0xf0)
		return ((p[0] == 0xe0 && (p[1] & 0xe0) == 0x80) ||
		    !cont(p[1])) ? 1 : 2;
	if (p[0] > 0xf4 || (p[0] == 0xf0 && (p[1] < 0x90 || p[1] > 0xbf)) ||
	    (p[0] == 0xf4 && (p[1] & 0xf0) != 0x80) || !cont(p[1]))
		return 1;
	return cont(p[2]) ? 3 : 2;
}

/*
 * One step of Java's UTF-8 decoder (String(byte[], UTF_8), JDK 8 to 17) at
 * s[i], n bytes in all: returns the bytes it takes and sets *ok when they
 * are one valid character (else they become one U+FFFD).  A sequence cut
 * short by the end of the input is one U+FFFD, however long.
 */
static size_t
java_step(const unsigned char *s, size_t i, size_t n, bool *ok)
{
	const unsigned char	*p = s + i;
	size_t			 left = n - i;
	unsigned long		 uc;

	*ok = true;
	if (p[0] < 0x80)
		return 1;
	*ok = false;
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		if (left < 2)
			return 1;
		*ok = cont(p[1]);
		return *ok ? 2 : 1;
	}
	if (p[0] >= 0xe0 && p[0] <= 0xef) {
		if (left >= 3) {
			if ((p[0] == 0xe0 && (p[1] & 0xe0) == 0x80) ||
			    !cont(p[1]) || !cont(p[2]))
				return malformed(p);
			/* A surrogate: one U+FFFD for all three. */
			*ok = !(p[0] == 0xed && p[1] >= 0xa0);
			return 3;
		}
		if (left == 2 && ((p[0] == 0xe0 && (p[1] & 0xe0) == 0x80) ||
		    !cont(p[1])))
			return 1;
		return left;
	}
	if (p[0] >= 0xf0 && p[0] <= 0xf7) {
		if (left >= 4) {
			uc = ((unsigned long)(p[0] & 0x07) << 18) |
			    ((unsigned long)(p[1] & 0x3f) << 12) |
			    ((unsigned long)(p[2] & 0x3f) << 6) | (p[3] & 0x3f);
			if (!cont(p[1]) || !cont(p[2]) || !cont(p[3]) ||
			    uc < 0x10000 || uc > 0x10ffff)
				return malformed(p);
			*ok = true;
			return 4;
		}
		if (p[0] > 0xf4 || (left >= 2 && ((p[0] == 0xf0 &&
		    (p[1] < 0x90 || p[1] > 0xbf)) || (p[0] == 0xf4 &&
		    (p[1] & 0xf0) != 0x80) || !cont(p[1]))))
			return 1;
		if (left == 3 && !cont(p[2]))
			return 2;
		return left;
	}
	return 1;
}

/* Where in p[i..n) the next malformed sequence starts (n: none), and its
 * length in *len. */
static size_t
next_malformed(const unsigned char *p, size_t i, size_t n, size_t *len)
{
	bool	 ok;

	while (i < n) {
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		*len = java_step(p, i, n, &ok);
		if (!ok)
			return i;
		i += *len;
	}
	*len = 0;
	return n;
}

size_t
convert_utf8_valid(const char *s, size_t n)
{
	size_t	 len;

	return next_malformed((const unsigned char *)s, 0, n, &len);
}

void
convert_utf8_java(const char *s, size_t n, struct buf *out)
{
	size_t	 i = 0, bad, len;

	while ((bad = next_malformed((const unsigned char *)s, i, n, &len)) <
	    n) {
		buf_add(out, s + i, bad - i);
		buf_add(out, REPL, 3);
		i = bad + len;
	}
	buf_add(out, s + i, n - i);
}

/* --- the steps ------------------------------------------------------------ */

/* The record without one trailing "\n", and whether it had one. */
static size_t
strip_nl(const char *s, size_t n, bool *nl)
{
	*nl = n > 0 && s[n - 1] == '\n';
	return n - *nl;
}

/* Length of the separator at s[i] (a CSVTOJSON delimiter char), or 0. */
static size_t
separator(const struct convert *c, const char *s, size_t i, size_t n)
{
	const unsigned char	*p = (const unsigned char *)s + i;
	size_t			 k, l;

	if (p[0] < 0x80)
		return c->csv_ascii[p[0]] ? 1 : 0;
	for (k = 0; k < c->ncsv_wide; k++) {
		l = strlen(c->csv_wide[k]);
		if (l <= n - i && memcmp(p, c->csv_wide[k], l) == 0)
			return l;
	}
	return 0;
}

/* A value: the string s[0..n), or null when s is NULL. */
static void
value(struct jw *w, const char *s, size_t n)
{
	if (s == NULL)
		jw_raw(w, "null", 4);
	else
		jw_string(w, s, n);
}

/*
 * CSVTOJSON: commons-lang3 splitPreserveAllTokens (every character of the
 * delimiter separates; "" has no token at all), then column i under name
 * i, null past the last column, extra columns dropped.
 */
static void
step_csv(struct convert *c, struct jw *w, const char *s, size_t n)
{
	struct span	*col = c->cols;
	size_t		 i, k, ncol = 0, start = 0, sep;

	for (i = 0; i < n && ncol < c->ncsv_cols; i++) {
		sep = separator(c, s, i, n);
		if (sep == 0)
			continue;
		col[ncol].p = s + start;
		col[ncol++].n = i - start;
		i += sep - 1;
		start = i + 1;
	}
	if (n > 0 && ncol < c->ncsv_cols) {
		col[ncol].p = s + start;
		col[ncol++].n = n - start;
	}
	jw_object(w);
	for (k = 0; k < c->csv.n; k++) {
		jw_key(w, c->csv.name[k], strlen(c->csv.name[k]));
		i = c->csv.src[k];
		value(w, i < ncol ? col[i].p : NULL, i < ncol ? col[i].n : 0);
	}
	jw_end_object(w);
}

/* LOGTOJSON: Matcher.matches(), then group i + 1 under name i. */
static int
step_log(struct convert *c, struct jw *w, const char *s, size_t n,
    char *why, size_t whylen)
{
	const size_t	*sp;
	size_t		 k, g, a, b;
	char		 msg[120];
	int		 rc;

	rc = logparse_match(c->lp, s, n, &sp);
	if (rc <= 0) {
		snprintf(why, whylen, "LOGTOJSON %s: %s", c->log_what,
		    rc == 0 ? "the line does not match" :
		    logparse_error(rc, msg, sizeof(msg)));
		return -1;
	}
	jw_object(w);
	for (k = 0; k < c->log.n; k++) {
		jw_key(w, c->log.name[k], strlen(c->log.name[k]));
		g = c->log.src[k] + 1;
		a = sp[2 * g];
		b = sp[2 * g + 1];
		if (a == LOGPARSE_UNSET || (c->dash_null && b - a == 1 &&
		    s[a] == '-'))
			value(w, NULL, 0);
		else
			value(w, s + a, b - a);
	}
	jw_end_object(w);
	return 0;
}

/* RFC 3339 UTC with milliseconds: 2024-05-01T12:00:00.123Z. */
static void
timestamp(struct convert *c, struct jw *w)
{
	int64_t		 ms = c->clock();
	time_t		 sec = (time_t)(ms / 1000);
	struct tm	 tm;
	char		 s[40];
	int		 n;

	gmtime_r(&sec, &tm);
	n = (int)strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
	n += snprintf(s + n, sizeof(s) - (size_t)n, ".%03dZ",
	    (int)(ms % 1000));
	jw_string(w, s, (size_t)n);
}

static void
meta_fields(struct convert *c, struct jw *w, const char *path,
    uint64_t offset)
{
	const char	*base;
	char		 num[24];
	size_t		 i;

	for (i = 0; i < c->nmeta_fields; i++) {
		jw_key(w, meta_field_names[c->meta_fields[i]],
		    strlen(meta_field_names[c->meta_fields[i]]));
		switch (c->meta_fields[i]) {
		case MF_HOSTNAME:
			jw_string(w, c->hostname, strlen(c->hostname));
			break;
		case MF_PATH:
			jw_string(w, path, strlen(path));
			break;
		case MF_FILENAME:
			base = strrchr(path, '/');
			base = base != NULL ? base + 1 : path;
			jw_string(w, base, strlen(base));
			break;
		case MF_OFFSET:
			snprintf(num, sizeof(num), "%" PRIu64, offset);
			jw_raw(w, num, strlen(num));
			break;
		case MF_TIMESTAMP:
			timestamp(c, w);
			break;
		}
	}
}

/* ADDMETADATA: {"metadata":<metadata>,"data":"<line>"}. */
static void
step_meta(struct convert *c, struct jw *w, const char *s, size_t n,
    const char *path, uint64_t offset)
{
	const struct buf *m = &c->meta;

	jw_object(w);
	jw_key(w, "metadata", 8);
	jw_raw(w, m->data, m->len);
	if (c->nmeta_fields > 0) {
		/* The rendered object was left open after its members. */
		jw_reopen_object(w, c->meta_members);
		meta_fields(c, w, path, offset);
		jw_end_object(w);
	}
	jw_key(w, "data", 4);
	jw_string(w, s, n);
	jw_end_object(w);
}

/* One step from in[0..n) into out; -1: LOGTOJSON did not match. */
static int
step(struct convert *c, const struct step *st, const char *in, size_t n,
    struct buf *out, size_t max, bool *cut, const char *path,
    uint64_t offset, char *why, size_t whylen)
{
	struct jw	 w;
	bool		 nl;
	size_t		 len;
	int		 rc = 0;

	buf_reset(out);
	jw_init(&w, out, st->pretty, max);
	if (st->kind == S_BRACKETS) {
		jw_raw(&w, "{", 1);
		jw_raw(&w, in, n);
		jw_raw(&w, "}", 1);
		*cut = *cut || w.cut;
		return 0;
	}
	len = strip_nl(in, n, &nl);
	if (st->kind == S_CSV)
		step_csv(c, &w, in, len);
	else if (st->kind == S_LOG)
		rc = step_log(c, &w, in, len, why, whylen);
	else
		step_meta(c, &w, in, len, path, offset);
	if (rc == 0 && nl)
		jw_raw(&w, "\n", 1);
	*cut = *cut || w.cut;
	return rc;
}

static void
trim(struct buf *b)
{
	if (b->cap > KEEP_BYTES)
		buf_cleanup(b);
}

enum convert_result
convert_apply(struct convert *c, const char *data, size_t len,
    const char *path, uint64_t offset, size_t max, struct buf *out,
    bool *truncated, char *why, size_t whylen)
{
	const char	*p = data;
	struct buf	*t;
	size_t		 i, n = len;
	int		 rc = 0;

	*truncated = false;
	trim(out);
	/* Java decodes first: malformed bytes become U+FFFD. */
	if (convert_utf8_valid(data, len) != len) {
		buf_reset(&c->a);
		convert_utf8_java(data, len, &c->a);
		p = c->a.data;
		n = c->a.len;
	}
	for (i = 0; i < c->nsteps && rc == 0; i++) {
		/* The last step writes into out; the others ping-pong. */
		if (i + 1 == c->nsteps)
			t = out;
		else
			t = p == c->a.data ? &c->b : &c->a;
		rc = step(c, &c->steps[i], p, n, t, max, truncated, path,
		    offset, why, whylen);
		p = t->data;
		n = t->len;
	}
	if (rc == 0 && !c->keep && out->len > 0 &&
	    (unsigned char)out->data[out->len - 1] == c->delim)
		buf_setlen(out, out->len - 1);
	trim(&c->a);
	trim(&c->b);
	return rc == 0 ? CONVERT_SEND : CONVERT_UNMATCHED;
}

/* --- a flow's records ----------------------------------------------------- */

/* The line as read, without the delimiter the framer kept for us. */
static size_t
raw_len(const struct convert *c, const char *data, size_t len)
{
	if (!c->keep && len > 0 && (unsigned char)data[len - 1] == c->delim)
		return len - 1;
	return len;
}

/* The first unmatched line logs at once, later ones once a minute. */
static void
warn_unmatched(struct convert *c, const char *path, uint64_t offset,
    const char *why, enum convert_unmatched act)
{
	static const char *const what[] = {
		"written to the dead-letter file", "sent unconverted",
		"dropped",
	};
	uint64_t	 now = mono_ms();

	c->since_warn++;
	if (c->warned && now - c->warn_ms < WARN_EVERY_MS)
		return;
	log_warn("[%s] %" PRIu64 " line%s %s (LOGTOJSON.unmatched = %s); "
	    "the last: %s at offset %" PRIu64 ": %s", c->flow, c->since_warn,
	    c->since_warn == 1 ? "" : "s", what[act],
	    convert_unmatched_words[c->unmatched], path, offset, why);
	c->warned = true;
	c->warn_ms = now;
	c->since_warn = 0;
}

bool
convert_record(struct convert *c, const char *data, size_t len,
    const char *path, uint64_t offset, size_t max, struct buf *out,
    bool *truncated)
{
	enum convert_unmatched	 act = c->unmatched;
	char			 why[200];

	if (convert_apply(c, data, len, path, offset, max, out, truncated,
	    why, sizeof(why)) == CONVERT_SEND)
		return true;
	if (act == CONVERT_DEADLETTER && (c->dlq == NULL ||
	    deadletter_write(c->dlq, c->flow, path, offset, "UNMATCHED", why,
	    data, raw_len(c, data, len)) != 0))
		act = CONVERT_RAW;	/* logged; nothing is lost */
	/* A raw line the flow refused (its batch was full) comes again:
	 * count it once. */
	if (act != CONVERT_RAW || c->last_path != path ||
	    c->last_offset != offset) {
		c->counts[act]++;
		warn_unmatched(c, path, offset, why, act);
	}
	c->last_path = act == CONVERT_RAW ? path : NULL;
	c->last_offset = offset;
	if (act != CONVERT_RAW)
		return false;
	convert_raw_line(c, data, len, max, out, truncated);
	return true;
}

void
convert_raw_line(const struct convert *c, const char *data, size_t len,
    size_t max, struct buf *out, bool *truncated)
{
	size_t	 n = raw_len(c, data, len);

	buf_reset(out);
	buf_add(out, data, MIN(n, max));
	*truncated = n > max;
}

enum convert_unmatched
convert_unmatched_action(const struct convert *c)
{
	return c->unmatched;
}

void
convert_count_into(struct convert *c, uint64_t *counts)
{
	memcpy(counts, c->counts, CONVERT_NUNMATCHED * sizeof(*counts));
	c->counts = counts;
}

void
convert_counts(const struct convert *c, uint64_t out[CONVERT_NUNMATCHED])
{
	memcpy(out, c->counts, CONVERT_NUNMATCHED * sizeof(*c->counts));
}

bool
convert_keeps_delimiter(const struct convert *c)
{
	(void)c;
	return true;
}

int
convert_regex_jit(const struct convert *c)
{
	return c->lp == NULL ? -1 : logparse_jit(c->lp);
}

void
convert_set_clock(struct convert *c, int64_t (*clock)(void))
{
	c->clock = clock;
}

void
convert_set_hostname(struct convert *c, const char *name)
{
	snprintf(c->hostname, sizeof(c->hostname), "%s", name);
}
