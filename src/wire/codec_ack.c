/*
 * The common PutRecords reply -- every record acknowledged -- checked
 * without building a jansson tree (which cost a fifth of the agent's CPU
 * on a backlog; codec.h).  A strict scanner: well-formed JSON, "records"
 * an array of exactly n objects, and no record with an "error_code" that
 * is anything but "".  Anything else, or any doubt, returns false and the
 * full parser (codec.c) decides.  The partitions a reply names are
 * compared, not parsed, after the first (struct codec_part_cache, which
 * the protobuf reply's parser uses too).
 */
#include "config.h"

#include <ctype.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "base/util.h"
#include "wire/codec.h"

struct scan {
	const char	*p;
	const char	*end;
};

static inline void
sc_ws(struct scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' ||
	    *s->p == '\r' || *s->p == '\t'))
		s->p++;
}

static inline bool
sc_char(struct scan *s, char c)
{
	sc_ws(s);
	if (s->p >= s->end || *s->p != c)
		return false;
	s->p++;
	return true;
}

/*
 * The first byte at or after p, before end, that ends a run of plain
 * string characters: '"', '\\' or a control character.  end when none.
 * Sixteen bytes per step with SSE2 (every x86-64 has it): the replies to a
 * backlog are ~65 bytes per record and this loop reads all of them.
 */
static inline const char *
sc_plain_run(const char *p, const char *end)
{
#ifdef __SSE2__
	const __m128i	 quote = _mm_set1_epi8('"');
	const __m128i	 bslash = _mm_set1_epi8('\\');
	const __m128i	 ctl = _mm_set1_epi8(0x1f);
	__m128i		 v, hit;
	unsigned	 m;

	for (; end - p >= 16; p += 16) {
		v = _mm_loadu_si128((const __m128i *)(const void *)p);
		/* v <= 0x1f unsigned  <=>  max(v, 0x1f) == 0x1f */
		hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote),
		    _mm_cmpeq_epi8(v, bslash)),
		    _mm_cmpeq_epi8(_mm_max_epu8(v, ctl), ctl));
		/* The high bit: a byte of a UTF-8 sequence. */
		m = (unsigned)_mm_movemask_epi8(hit) |
		    (unsigned)_mm_movemask_epi8(v);
		if (m != 0)
			return p + __builtin_ctz(m);
	}
#endif
	for (; p < end; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x80 ||
		    *p == '"' || *p == '\\')
			return p;
	return end;
}

/* A string; its raw (still escaped) text in *str, *n. */
static bool
sc_string(struct scan *s, const char **str, size_t *n)
{
	const char	*p, *end = s->end;

	if (!sc_char(s, '"'))
		return false;
	*str = p = s->p;
	for (;;) {
		p = sc_plain_run(p, end);
		if (p >= end || *p != '\\')
			break;
		/* An escape of one character; \u (surrogates) and anything
		 * else jansson decides. */
		if (end - p < 2 || strchr("\"\\/bfnrt", p[1]) == NULL ||
		    p[1] == '\0')
			return false;
		p += 2;
	}
	if (p >= end || *p != '"')
		return false;	/* unterminated, a control character, or
				   UTF-8 for jansson to check */
	*n = (size_t)(p - *str);
	s->p = p + 1;
	return true;
}

/*
 * A number in JSON's grammar, -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)?, small
 * enough that jansson cannot refuse it as too big (at most 15 digits
 * before the point, an exponent of at most 2 digits).
 */
static bool
sc_digits(struct scan *s, size_t min, size_t max)
{
	size_t	 n = 0;

	while (s->p < s->end && isdigit((unsigned char)*s->p) && n <= max) {
		s->p++;
		n++;
	}
	return n >= min && n <= max;
}

static bool
sc_number(struct scan *s)
{
	if (s->p < s->end && *s->p == '-')
		s->p++;
	if (s->p < s->end && *s->p == '0')
		s->p++;
	else if (s->p >= s->end || *s->p < '1' || *s->p > '9' ||
	    !sc_digits(s, 1, 15))
		return false;
	if (s->p < s->end && *s->p == '.') {
		s->p++;
		if (!sc_digits(s, 1, 64))
			return false;
	}
	if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
		s->p++;
		if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
			s->p++;
		if (!sc_digits(s, 1, 2))
			return false;
	}
	return true;
}

static bool	sc_value(struct scan *, int depth);

static bool
sc_word(struct scan *s, const char *w)
{
	size_t	 n = strlen(w);

	if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n) != 0)
		return false;
	s->p += n;
	return true;
}

static bool
sc_members(struct scan *s, char open, char close, int depth)
{
	const char	*k;
	size_t		 n;

	if (!sc_char(s, open))
		return false;
	if (sc_char(s, close))
		return true;
	do {
		if (open == '{' && (!sc_string(s, &k, &n) || !sc_char(s, ':')))
			return false;
		if (!sc_value(s, depth + 1))
			return false;
	} while (sc_char(s, ','));
	return sc_char(s, close);
}

static bool
sc_value(struct scan *s, int depth)
{
	const char	*str;
	size_t		 n;

	sc_ws(s);
	if (s->p >= s->end || depth > 32)
		return false;
	switch (*s->p) {
	case '{':
		return sc_members(s, '{', '}', depth);
	case '[':
		return sc_members(s, '[', ']', depth);
	case '"':
		return sc_string(s, &str, &n);
	case 't':
		return sc_word(s, "true");
	case 'f':
		return sc_word(s, "false");
	case 'n':
		return sc_word(s, "null");
	default:
		return sc_number(s);
	}
}

static bool
key_is(const char *k, size_t n, const char *want)
{
	return n == strlen(want) && memcmp(k, want, n) == 0;
}

/* a[0..n-1] == b[0..n-1], a word at a time (ids of about 18 bytes). */
static inline bool
same_bytes(const char *a, const char *b, size_t n)
{
	uint64_t	 x, y;
	size_t		 i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y)
			return false;
	}
	for (; i < n; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/* An id of 17..24 bytes ("shardId-0000000003" is 18) as three words that
 * cover it exactly: bytes 0..7, 8..15 and the last 8. */
static inline void
id_words(const char *v, size_t vn, uint64_t w[3])
{
	memcpy(&w[0], v, 8);
	memcpy(&w[1], v + 8, 8);
	memcpy(&w[2], v + vn - 8, 8);
}

int32_t
codec_cached_partition(struct codec_part_cache *c, const char *v, size_t vn)
{
	uint64_t	 w[3];
	unsigned	 i;
	int32_t		 p;
	bool		 words = vn > 16 && vn <= 24;

	if (words) {
		id_words(v, vn, w);
		for (i = 0; i < c->n; i++)
			if (c->len[i] == vn && c->w[i][0] == w[0] &&
			    c->w[i][1] == w[1] && c->w[i][2] == w[2])
				return c->part[i];
	} else
		for (i = 0; i < c->n; i++)
			if (c->len[i] == vn && same_bytes(c->text[i], v, vn))
				return c->part[i];
	p = codec_partition_index(v, vn);
	i = c->n < 4 ? c->n++ : c->next++ % 4;
	c->text[i] = v;
	c->len[i] = vn;
	c->part[i] = p;
	if (words)
		memcpy(c->w[i], w, sizeof(w));
	return p;
}

/* Which key of a record object: 1 error_code, 2 partition_id, 3
 * sequence_number, 0 any other (constant-size compares, inlined). */
static inline int
record_key(const char *k, size_t kn)
{
	switch (kn) {
	case 10:
		return memcmp(k, "error_code", 10) == 0 ? 1 : 0;
	case 12:
		return memcmp(k, "partition_id", 12) == 0 ? 2 : 0;
	case 15:
		return memcmp(k, "sequence_number", 15) == 0 ? 3 : 0;
	default:
		return 0;
	}
}

/* A record's partition_id or sequence_number (the latter parsed later,
 * only where it counts: codec_last_seqs). */
static bool
sc_where(struct scan *s, bool part, struct codec_result *res,
    struct codec_part_cache *c)
{
	const char	*v, *q;
	size_t		 vn;

	if (*s->p != '"')
		return sc_value(s, 3);
	v = s->p + 1;
	q = sc_plain_run(v, s->end);
	if (q >= s->end || *q != '"')	/* an escape (DIS writes none): */
		return sc_string(s, &v, &vn);	/* unknown */
	s->p = q + 1;
	vn = (size_t)(q - v);
	if (part)
		res->partition = codec_cached_partition(c, v, vn);
	else {
		res->seq_at = v;
		res->seq_len = (uint32_t)vn;
	}
	return true;
}

void
codec_last_seqs(struct codec_result *res, size_t n)
{
	uint64_t	 seen = 0;
	size_t		 i;
	int32_t		 p;

	for (i = n; i > 0; i--) {
		p = res[i - 1].partition;
		if (p < 0 || res[i - 1].seq_at == NULL)
			continue;
		if (p < 64 && (seen & (UINT64_C(1) << p)) != 0)
			continue;
		if (p < 64)
			seen |= UINT64_C(1) << p;
		res[i - 1].seq = codec_seq_value(res[i - 1].seq_at,
		    res[i - 1].seq_len);
	}
}

/*
 * The record DIS writes for an acknowledged one, byte for byte:
 * {"partition_id":"ID","sequence_number":"DIGITS"} with an ID of plain
 * characters.  Read with three compares and two short scans, not key by
 * key; true when s->p holds exactly that (then past it), false for
 * anything else (s->p unmoved: the general reader decides, and reads
 * this shape the same).
 */
static inline bool
sc_record_dis(struct scan *s, struct codec_result *res,
    struct codec_part_cache *c)
{
	static const char	 kpart[] = "{\"partition_id\":\"";
	static const char	 kseq[] = "\",\"sequence_number\":\"";
	const char		*v = s->p + sizeof(kpart) - 1, *q, *d;

	if (s->end - s->p < (ptrdiff_t)(sizeof(kpart) + sizeof(kseq)) ||
	    memcmp(s->p, kpart, sizeof(kpart) - 1) != 0)
		return false;
	q = sc_plain_run(v, s->end);
	if (q == v || s->end - q < (ptrdiff_t)sizeof(kseq) + 2 ||
	    memcmp(q, kseq, sizeof(kseq) - 1) != 0)
		return false;
	d = q + sizeof(kseq) - 1;
	while (d < s->end && *d >= '0' && *d <= '9')
		d++;
	if (d == q + sizeof(kseq) - 1 || s->end - d < 2 || d[0] != '"' ||
	    d[1] != '}')
		return false;
	res->partition = codec_cached_partition(c, v, (size_t)(q - v));
	res->seq_at = q + sizeof(kseq) - 1;
	res->seq_len = (uint32_t)(d - res->seq_at);
	s->p = d + 2;
	return true;
}

/* One record object: true when it carries no non-empty error_code; its
 * partition and sequence number into *res. */
static bool
sc_record_ok(struct scan *s, struct codec_result *res, struct codec_part_cache *c)
{
	const char	*k, *v;
	size_t		 kn, vn;

	res->partition = -1;
	res->seq = -1;
	res->seq_at = NULL;
	sc_ws(s);
	if (sc_record_dis(s, res, c))
		return true;
	if (!sc_char(s, '{'))
		return false;
	if (sc_char(s, '}'))
		return true;
	do {
		if (!sc_string(s, &k, &kn) || !sc_char(s, ':') ||
		    memchr(k, '\\', kn) != NULL)
			return false;	/* escaped key names: let jansson decide */
		sc_ws(s);
		if (s->p >= s->end)
			return false;
		switch (record_key(k, kn)) {
		case 1:
			if (!sc_string(s, &v, &vn) || vn != 0)
				return false;
			break;
		case 2:
		case 3:
			if (!sc_where(s, kn == 12, res, c))
				return false;
			break;
		default:
			if (!sc_value(s, 3))
				return false;
		}
	} while (sc_char(s, ','));
	return sc_char(s, '}');
}

bool
codec_all_acknowledged(const char *body, size_t len, struct codec_result *res,
    size_t n)
{
	struct scan	 s = { body, body + len };
	struct codec_part_cache c;
	const char	*k;
	size_t		 kn, count = 0;
	bool		 seen = false;

	c.n = c.next = 0;
	if (!sc_char(&s, '{') || sc_char(&s, '}'))
		return false;
	do {
		if (!sc_string(&s, &k, &kn) || !sc_char(&s, ':'))
			return false;
		if (!key_is(k, kn, "records")) {
			if (!sc_value(&s, 1))
				return false;
			continue;
		}
		if (seen || !sc_char(&s, '['))
			return false;
		seen = true;
		if (!sc_char(&s, ']')) {
			do {
				if (count == n ||
				    !sc_record_ok(&s, &res[count], &c))
					return false;
				count++;
			} while (sc_char(&s, ','));
			if (!sc_char(&s, ']'))
				return false;
		}
	} while (sc_char(&s, ','));
	if (!sc_char(&s, '}'))
		return false;
	sc_ws(&s);
	if (s.p != s.end || !seen || count != n)
		return false;
	codec_last_seqs(res, n);
	return true;
}
