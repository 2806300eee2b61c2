/*
 * Replies of the download side of DIS (codec_read.h): DescribeStream pages
 * with partitions, GetCursor, GetRecords, and the base64 decoding and JSON
 * lines the read-back commands need; apps and checkpoints.  A GetRecords
 * reply is checked whole before any record is handed out, so a caller
 * never prints half of a reply it then has to ask for again.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/log.h"
#include "wire/codec_read.h"

struct codec_records {
	json_t		*root;
	json_t		*recs;		/* borrowed from root */
	const char	*next;		/* borrowed from root, or NULL */
};

static json_t *
load(const char *body, size_t len)
{
	json_error_t	 err;

	return body != NULL ? json_loadb(body, len, 0, &err) : NULL;
}

/* Copy the string key of obj into dst[size]: 0; -EBADMSG when it is too
 * long, not a string, or absent and required. */
static int
take_str(json_t *obj, const char *key, char *dst, size_t size, bool required)
{
	json_t	*v = json_object_get(obj, key);
	size_t	 n;

	dst[0] = '\0';
	if (v == NULL || json_is_null(v))
		return required ? -EBADMSG : 0;
	if (!json_is_string(v))
		return -EBADMSG;
	n = json_string_length(v);
	if (n >= size || strlen(json_string_value(v)) != n)
		return -EBADMSG;
	memcpy(dst, json_string_value(v), n + 1);
	return 0;
}

/* The integer key of obj, or def when absent; -EBADMSG via *bad. */
static long
take_long(json_t *obj, const char *key, long def, bool *bad)
{
	json_t	*v = json_object_get(obj, key);

	if (v == NULL)
		return def;
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) > LONG_MAX) {
		*bad = true;
		return def;
	}
	return (long)json_integer_value(v);
}

/* Decimal digits s[0..n) as an int64 in 0..INT64_MAX: 0 or -EBADMSG. */
static int
parse_seq(const char *s, size_t n, int64_t *out)
{
	uint64_t v = 0;
	size_t	 i;

	if (n == 0 || n > 19)
		return -EBADMSG;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EBADMSG;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > INT64_MAX)
		return -EBADMSG;
	*out = (int64_t)v;
	return 0;
}

/* "[a : b]" (blanks optional, either may be negative) into *a, *b. */
static bool
parse_range(const char *s, int64_t *a, int64_t *b)
{
	char	*end;
	long long x, y;

	while (*s == ' ')
		s++;
	if (*s++ != '[')
		return false;
	errno = 0;
	x = strtoll(s, &end, 10);
	if (end == s || errno != 0)
		return false;
	for (s = end; *s == ' '; s++)
		;
	if (*s++ != ':')
		return false;
	y = strtoll(s, &end, 10);
	if (end == s || errno != 0)
		return false;
	for (s = end; *s == ' '; s++)
		;
	if (s[0] != ']' || s[1] != '\0')
		return false;
	*a = x;
	*b = y;
	return true;
}

static int
take_partition(json_t *p, struct codec_partition *out)
{
	memset(out, 0, sizeof(*out));
	out->seq_first = out->seq_next = -1;
	if (!json_is_object(p) ||
	    take_str(p, "partition_id", out->id, sizeof(out->id), true) != 0 ||
	    out->id[0] == '\0' ||
	    take_str(p, "status", out->status, sizeof(out->status),
	    true) != 0 ||
	    take_str(p, "hash_range", out->hash_range,
	    sizeof(out->hash_range), false) != 0 ||
	    take_str(p, "sequence_number_range", out->seq_range,
	    sizeof(out->seq_range), false) != 0)
		return -EBADMSG;
	if (!parse_range(out->seq_range, &out->seq_first, &out->seq_next) ||
	    out->seq_first < 0 || out->seq_next < out->seq_first)
		out->seq_first = out->seq_next = -1;
	return 0;
}

int
codec_parse_stream(const char *body, size_t len, struct codec_stream *st)
{
	struct codec_partition *parts = NULL;
	json_t		*root, *arr, *more;
	size_t		 i, n;
	bool		 bad = false;
	int		 rc = -EBADMSG;

	if (codec_parse_describe(body, len, &st->info) != 0)
		return -EBADMSG;
	root = load(body, len);
	arr = json_object_get(root, "partitions");
	more = json_object_get(root, "has_more_partitions");
	if (!json_is_array(arr) || (more != NULL && !json_is_boolean(more)))
		goto done;
	n = json_array_size(arr);
	parts = xcalloc(n + 1, sizeof(*parts));
	for (i = 0; i < n; i++)
		if (take_partition(json_array_get(arr, i), &parts[i]) != 0)
			goto done;
	st->retention_hours = take_long(root, "retention_period", -1, &bad);
	st->readable_partitions = take_long(root,
	    "readable_partition_count", -1, &bad);
	if (bad)
		goto done;
	st->has_more = more != NULL && json_is_true(more);
	st->parts = xrealloc(st->parts, (st->nparts + n + 1) *
	    sizeof(*st->parts));
	memcpy(st->parts + st->nparts, parts, n * sizeof(*parts));
	st->nparts += n;
	rc = 0;
done:
	free(parts);
	json_decref(root);
	return rc;
}

void
codec_stream_cleanup(struct codec_stream *st)
{
	if (st == NULL)
		return;
	free(st->parts);
	memset(st, 0, sizeof(*st));
}

void
codec_stream_copy(struct codec_stream *dst, const struct codec_stream *src)
{
	*dst = *src;
	dst->parts = xcalloc(src->nparts + 1, sizeof(*src->parts));
	if (src->nparts > 0)
		memcpy(dst->parts, src->parts, src->nparts *
		    sizeof(*src->parts));
}

int
codec_parse_cursor(const char *body, size_t len, char **cursor)
{
	json_t	*root, *c;
	int	 rc = -EBADMSG;

	*cursor = NULL;
	root = load(body, len);
	c = json_object_get(root, "partition_cursor");
	if (json_is_string(c) && json_string_length(c) > 0 &&
	    strlen(json_string_value(c)) == json_string_length(c)) {
		*cursor = xstrdup(json_string_value(c));
		rc = 0;
	}
	json_decref(root);
	return rc;
}

/* --- base64 ------------------------------------------------------------- */

int
codec_base64_digit(unsigned char c, bool url)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == (url ? '-' : '+'))
		return 62;
	if (c == (url ? '_' : '/'))
		return 63;
	return -1;
}

static int
b64val(unsigned char c)
{
	return codec_base64_digit(c, false);
}

/* Well-formed padded base64: whole quads, '=' only at the very end. */
static bool
b64_valid(const char *s, size_t n)
{
	size_t	 i, pad = 0;

	if (n % 4 != 0)
		return false;
	if (n > 0 && s[n - 1] == '=')
		pad = n > 1 && s[n - 2] == '=' ? 2 : 1;
	for (i = 0; i < n - pad; i++)
		if (b64val((unsigned char)s[i]) < 0)
			return false;
	return true;
}

int
codec_base64_decode(const char *in, size_t n, struct buf *out)
{
	uint32_t acc = 0;
	size_t	 i, bits = 0;
	int	 v;

	if (!b64_valid(in, n))
		return -EBADMSG;
	buf_reserve(out, n / 4 * 3);
	for (i = 0; i < n && in[i] != '='; i++) {
		v = b64val((unsigned char)in[i]);
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			buf_addc(out, (char)((acc >> bits) & 0xff));
		}
	}
	return 0;
}

/* --- GetRecords --------------------------------------------------------- */

/* The sequence number of a record (a decimal string): 0 or -EBADMSG. */
static int
record_seq(json_t *rec, int64_t *seq)
{
	json_t	*v = json_object_get(rec, "sequence_number");

	if (!json_is_string(v))
		return -EBADMSG;
	return parse_seq(json_string_value(v), json_string_length(v), seq);
}

static bool
record_ok(json_t *rec)
{
	json_t	*d, *k, *t, *tt;
	int64_t	 seq;

	if (!json_is_object(rec) || record_seq(rec, &seq) != 0)
		return false;
	d = json_object_get(rec, "data");
	k = json_object_get(rec, "partition_key");
	t = json_object_get(rec, "timestamp");
	tt = json_object_get(rec, "timestamp_type");
	return json_is_string(d) &&
	    b64_valid(json_string_value(d), json_string_length(d)) &&
	    (k == NULL || json_is_null(k) || json_is_string(k)) &&
	    (t == NULL || json_is_null(t) || json_is_integer(t)) &&
	    (tt == NULL || json_is_null(tt) || json_is_string(tt));
}

int
codec_parse_records(const char *body, size_t len, struct codec_records **out)
{
	struct codec_records *r;
	json_t		*root, *recs, *next;
	size_t		 i;

	*out = NULL;
	root = load(body, len);
	recs = json_object_get(root, "records");
	next = json_object_get(root, "next_partition_cursor");
	if (!json_is_array(recs) ||
	    (next != NULL && !json_is_null(next) && !json_is_string(next)))
		goto bad;
	for (i = 0; i < json_array_size(recs); i++)
		if (!record_ok(json_array_get(recs, i)))
			goto bad;
	r = xcalloc(1, sizeof(*r));
	r->root = root;
	r->recs = recs;
	r->next = json_is_string(next) && json_string_length(next) > 0 ?
	    json_string_value(next) : NULL;
	*out = r;
	return 0;
bad:
	json_decref(root);
	return -EBADMSG;
}

size_t
codec_records_count(const struct codec_records *r)
{
	return json_array_size(r->recs);
}

/* The string value of key, or NULL. */
static const char *
opt_str(json_t *obj, const char *key)
{
	json_t	*v = json_object_get(obj, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

void
codec_records_get(const struct codec_records *r, size_t i,
    struct codec_record *out)
{
	json_t	*rec = json_array_get(r->recs, i), *d, *t;

	memset(out, 0, sizeof(*out));
	(void)record_seq(rec, &out->seq);	/* checked by the parse */
	out->seq_text = opt_str(rec, "sequence_number");
	out->key = opt_str(rec, "partition_key");
	d = json_object_get(rec, "data");
	out->data64 = json_string_value(d);
	out->data64_len = json_string_length(d);
	t = json_object_get(rec, "timestamp");
	out->timestamp = json_is_integer(t) ? (long long)json_integer_value(t) :
	    -1;
	out->timestamp_type = opt_str(rec, "timestamp_type");
}

const char *
codec_records_next(const struct codec_records *r)
{
	return r->next;
}

void
codec_records_free(struct codec_records *r)
{
	if (r == NULL)
		return;
	json_decref(r->root);
	free(r);
}

void
codec_record_json(struct buf *out, const char *partition,
    const struct codec_record *rec)
{
	json_t	*o = json_object();
	char	*s;

	json_object_set_new(o, "partition", json_string(partition));
	json_object_set_new(o, "sequence_number", json_string(rec->seq_text));
	if (rec->key != NULL)
		json_object_set_new(o, "partition_key", json_string(rec->key));
	if (rec->timestamp >= 0)
		json_object_set_new(o, "timestamp",
		    json_integer(rec->timestamp));
	if (rec->timestamp_type != NULL)
		json_object_set_new(o, "timestamp_type",
		    json_string(rec->timestamp_type));
	json_object_set_new(o, "data", json_stringn(rec->data64,
	    rec->data64_len));
	s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (s == NULL)
		fatalx("codec_record_json: out of memory");
	buf_addstr(out, s);
	buf_addc(out, '\n');
	free(s);
	json_decref(o);
}

/* --- apps and checkpoints ----------------------------------------------- */

bool
codec_app_name_ok(const char *s)
{
	size_t	 n = strlen(s);

	return n >= 1 && n <= CODEC_APP_NAME_MAX && strspn(s,
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	    "_-") == n;
}

/* obj as compact JSON appended to out; steals obj. */
static void
dump_into(struct buf *out, json_t *obj)
{
	char	*s;

	s = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (s == NULL)
		fatalx("codec: out of memory");
	buf_addstr(out, s);
	free(s);
	json_decref(obj);
}

void
codec_app_body(struct buf *out, const char *app)
{
	json_t	*o = json_object();

	json_object_set_new(o, "app_name", json_string(app));
	dump_into(out, o);
}

void
codec_checkpoint_body(struct buf *out, const char *app, const char *stream,
    const char *partition, int64_t seq, const char *metadata)
{
	json_t	*o = json_object();
	char	 n[24];

	snprintf(n, sizeof(n), "%" PRId64, seq);
	json_object_set_new(o, "app_name", json_string(app));
	json_object_set_new(o, "checkpoint_type", json_string("LAST_READ"));
	json_object_set_new(o, "stream_name", json_string(stream));
	json_object_set_new(o, "partition_id", json_string(partition));
	json_object_set_new(o, "sequence_number", json_string(n));
	if (metadata != NULL)
		json_object_set_new(o, "metadata", json_string(metadata));
	dump_into(out, o);
}

int
codec_parse_checkpoint(const char *body, size_t len, int64_t *seq,
    char **metadata)
{
	json_t		*root, *v, *m;
	const char	*s;
	int		 rc = -EBADMSG;

	*seq = -1;
	*metadata = NULL;
	root = load(body, len);
	v = json_object_get(root, "sequence_number");
	if (json_is_integer(v) && json_integer_value(v) >= -1) {
		*seq = json_integer_value(v);
		rc = 0;
	} else if (json_is_string(v)) {
		s = json_string_value(v);
		if (strcmp(s, "-1") == 0 || s[0] == '\0')
			rc = 0;
		else
			rc = parse_seq(s, json_string_length(v), seq);
	}
	m = json_object_get(root, "metadata");
	if (rc == 0 && json_is_string(m) && json_string_length(m) > 0)
		*metadata = xstrndup(json_string_value(m),
		    json_string_length(m));
	json_decref(root);
	return rc;
}

/* commit_checkpoint_stream_names as "a,b" (new). */
static char *
stream_names(json_t *arr)
{
	struct buf	 b;
	size_t		 i;
	json_t		*v;

	buf_init(&b);
	buf_reserve(&b, 0);
	json_array_foreach(arr, i, v) {
		if (!json_is_string(v))
			continue;
		buf_printf(&b, "%s%s", b.len ? "," : "", json_string_value(v));
	}
	return b.data;
}

static int
take_app(json_t *o, struct codec_app *a)
{
	json_t	*v;

	memset(a, 0, sizeof(*a));
	if (!json_is_object(o) || take_str(o, "app_name", a->name,
	    sizeof(a->name), true) != 0)
		return -EBADMSG;
	v = json_object_get(o, "app_id");
	if (json_is_integer(v))
		snprintf(a->id, sizeof(a->id), "%lld",
		    (long long)json_integer_value(v));
	else if (take_str(o, "app_id", a->id, sizeof(a->id), false) != 0)
		return -EBADMSG;
	v = json_object_get(o, "create_time");
	a->created_ms = json_is_integer(v) ? json_integer_value(v) : -1;
	a->streams = stream_names(json_object_get(o,
	    "commit_checkpoint_stream_names"));
	return 0;
}

int
codec_parse_apps(const char *body, size_t len, struct codec_apps *out)
{
	json_t	*root, *arr, *v;
	size_t	 i, n;
	int	 rc = 0;

	root = load(body, len);
	arr = json_object_get(root, "apps");
	if (!json_is_array(arr)) {
		json_decref(root);
		return -EBADMSG;
	}
	n = json_array_size(arr);
	out->apps = xrealloc(out->apps, (out->napps + n + 1) *
	    sizeof(*out->apps));
	json_array_foreach(arr, i, v) {
		rc = take_app(v, &out->apps[out->napps]);
		if (rc != 0)
			break;
		out->napps++;
	}
	out->has_more = json_is_true(json_object_get(root, "has_more_app"));
	json_decref(root);
	return rc;
}

void
codec_apps_cleanup(struct codec_apps *a)
{
	size_t	 i;

	for (i = 0; i < a->napps; i++)
		free(a->apps[i].streams);
	free(a->apps);
	memset(a, 0, sizeof(*a));
}
