/*
 * The record framer (see framer.h).  Each delimited line goes through one
 * per-line step, take_line(): it skips header lines, strips a CR, and then
 * either sends the line as a record or, in multi-line mode, starts or
 * extends the state's pending record.  Every record leaves through
 * deliver(), which applies the size cap and the conversion to UTF-8 and
 * counts what was cut.  With a multi-line preset, the preset's verdict on
 * each line (records/mlpreset.c) replaces the pattern's "starts a record".  The common configuration (no pattern, no
 * conversion, headers done) bypasses the step with feed_plain(), a bare
 * memchr loop that gives the same records.
 *
 * The single-line path copies nothing: records point into the caller's
 * bytes.  Copies are made only for multi-line records (into the state),
 * converted records and the rare CR-stripped line with a kept delimiter
 * (into the framer), and every one of those buffers is bounded by the
 * record cap.
 */
#include "config.h"

#include <errno.h>
#include <iconv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/log.h"
#include "base/re.h"
#include "records/framer.h"
#include "records/framer_int.h"
#include "records/mlpreset.h"

/*
 * Make room for total bytes (+ NUL) in b, growing geometrically but never
 * past limit + 1 bytes, so that a buffer filled from a file stays within
 * the record cap.
 */
static void
room(struct buf *b, size_t total, size_t limit)
{
	size_t	 cap;

	if (total + 1 <= b->cap)
		return;
	cap = b->cap > 0 ? b->cap : 256;
	while (cap < total + 1)
		cap *= 2;
	if (cap > limit + 1)
		cap = limit + 1;
	if (cap < total + 1)
		cap = total + 1;
	buf_reserve_exact(b, cap - 1 - b->len);
}

/*
 * Convert data[0..len) to UTF-8 into fr->conv, at most max bytes and only
 * whole characters.  Undecodable bytes become U+FFFD, one per byte, and are
 * counted in *bad.  Returns true when the output was cut at max.
 */
static bool
convert(struct framer *fr, const char *data, size_t len, size_t max,
    uint64_t *bad)
{
	char	*in = (char *)data, *out;
	size_t	 il = len, ol, want;
	bool	 cut = false;

	/* Every input byte gives at most 4 output bytes (or U+FFFD). */
	want = len <= max / 4 ? MIN(4 * len + 4, max) : max;
	room(&fr->conv, want, max);
	out = fr->conv.data;
	ol = want;
	iconv(fr->cd, NULL, NULL, NULL, NULL);
	while (il > 0 && iconv(fr->cd, &in, &il, &out, &ol) == (size_t)-1) {
		if (errno == E2BIG) {
			cut = true;
			break;
		}
		/* EILSEQ, or EINVAL: a sequence cut short by the record's end. */
		(*bad)++;
		if (ol < REPLACEMENT_LEN) {
			cut = true;
			break;
		}
		memcpy(out, REPLACEMENT, REPLACEMENT_LEN);
		out += REPLACEMENT_LEN;
		ol -= REPLACEMENT_LEN;
		in++;
		il--;
	}
	if (iconv(fr->cd, NULL, NULL, &out, &ol) == (size_t)-1)
		cut = true;	/* no room to return to the initial state */
	buf_setlen(&fr->conv, want - ol);
	return cut;
}

/*
 * Hand one record to the callback, cut to the record cap and converted.
 * Counters move only when the record is taken, so a refused record that is
 * offered again is not counted twice.
 */
int
framer_deliver(struct feed *fd, const char *data, size_t len, uint64_t start,
    uint64_t end, bool cut)
{
	struct framer	*fr = fd->fr;
	uint64_t	 bad = 0;
	int		 rc;

	if (len > fd->max) {
		len = fd->max;
		cut = true;
	}
	if (fr->cd != (iconv_t)-1) {
		if (convert(fr, data, len, fd->max, &bad))
			cut = true;
		data = fr->conv.data;
		len = fr->conv.len;
	}
	rc = fd->cb(fd->arg, data, len, start, end);
	if (rc != 0)
		return rc;
	if (cut)
		fd->st->truncated++;
	fd->st->invalid += bad;
	return 0;
}

/* A line that is a record of its own. */
static int
single(struct feed *fd, const struct line *l)
{
	struct framer	*fr = fd->fr;
	struct buf	*b = &fr->scratch;

	if (l->len == 0 && fr->skip_empty) {
		fd->st->empty_skipped++;
		return 0;
	}
	if (!fr->keep_delim || !l->delim)
		return framer_deliver(fd, l->p, l->len, l->start, l->end, l->cut);
	/* p[len] is the delimiter, unless a CR was stripped; then the
	 * record is no longer contiguous, unless the cap cuts it anyway. */
	if (!l->crlf || l->len + 1 > fd->max)
		return framer_deliver(fd, l->p, l->len + 1, l->start, l->end, l->cut);
	room(b, l->len + 1, fd->max);
	memcpy(b->data, l->p, l->len);
	b->data[l->len] = (char)fr->delim;
	buf_setlen(b, l->len + 1);
	return framer_deliver(fd, b->data, b->len, l->start, l->end, l->cut);
}

/* Drop the pending record, and its memory when it grew large. */
static void
clear_pending(struct framer_state *st)
{
	struct framer_pending	*pd = st->pending;

	st->has_pending = false;
	mlpreset_state_init(&st->mlp);
	pd->cut = false;
	if (pd->b.cap > KEEP_BYTES)
		buf_cleanup(&pd->b);
	else
		buf_reset(&pd->b);
}

/* Send the pending multi-line record; it stays pending when refused. */
static int
send_pending(struct feed *fd)
{
	struct framer_state	*st = fd->st;
	struct framer_pending	*pd = st->pending;
	struct buf		*b = &pd->b;
	size_t			 len = b->len;
	bool			 cut = pd->cut;
	int			 rc;

	if (len == 0 && fd->fr->skip_empty) {
		st->empty_skipped++;
		clear_pending(st);
		return 0;
	}
	if (fd->fr->keep_delim && pd->delim) {
		/* append() left room for this byte and the NUL. */
		if (len < fd->max)
			b->data[len++] = (char)fd->fr->delim;
		else
			cut = true;
	}
	rc = framer_deliver(fd, b->data, len, pd->start, pd->end, cut);
	b->data[b->len] = '\0';
	if (rc != 0)
		return rc;
	clear_pending(st);
	return 0;
}

/*
 * Add a line to the pending record, after a delimiter when join is set.
 * Bytes past the cap are dropped (the record is marked cut); the buffer
 * never holds more than max bytes plus room for a kept delimiter.
 */
static void
append(struct feed *fd, const struct line *l, bool join)
{
	struct framer_pending	*pd = fd->st->pending;
	struct buf		*b = &pd->b;
	size_t			 n, left;

	left = b->len < fd->max ? fd->max - b->len : 0;
	n = l->len + (join ? 1 : 0);
	if (n > left || l->cut)
		pd->cut = true;
	n = MIN(n, left);
	room(b, b->len + n + 1, fd->max + 1);
	if (join && n > 0) {
		b->data[b->len++] = (char)fd->fr->delim;
		n--;
	}
	memcpy(b->data + b->len, l->p, n);
	buf_added(b, n);
	pd->end = l->end;
	pd->delim = l->delim;
	pd->max = fd->max;
}

/*
 * Does the line start a multi-line record?  Match errors (such as PCRE2's
 * match limit on a pathological pattern) count as "no": the line then
 * joins the record before it.
 */
static bool
starts_record(struct framer *fr, const struct line *l)
{
	return re_match(fr->re, l->p, l->len) > 0;
}

struct framer_pending *
framer_pending_get(struct framer_state *st)
{
	int	 i;

	if (st->pending == NULL) {
		st->pending = xcalloc(1, sizeof(*st->pending));
		buf_init(&st->pending->b);
		for (i = 0; i < CTRLOG_NSTREAMS; i++) {
			buf_init(&st->pending->part[i].b);
			buf_init(&st->pending->ml[i].b);
		}
	}
	return st->pending;
}

/* Send the pending record, if any.  Non-zero: refused, it stays. */
static int
close_pending(struct feed *fd)
{
	return fd->st->has_pending ? send_pending(fd) : 0;
}

/* A start line becomes the pending record (the last one was sent). */
static void
open_pending(struct feed *fd, const struct line *l)
{
	struct framer_state	*st = fd->st;

	(void)framer_pending_get(st);
	st->has_pending = true;
	st->pending->start = l->start;
	st->pending->cut = false;
	buf_reset(&st->pending->b);
	append(fd, l, false);
}

/* Multi-line mode: a start line sends the pending record and replaces it. */
static int
multi(struct feed *fd, const struct line *l)
{
	struct framer_state	*st = fd->st;
	int			 rc;

	if (!starts_record(fd->fr, l)) {
		if (!st->has_pending)
			return single(fd, l);
		append(fd, l, true);
		return 0;
	}
	if ((rc = close_pending(fd)) != 0)
		return rc;
	open_pending(fd, l);
	return 0;
}

/*
 * The last line of a preset's record: joined, and the record sent.  When
 * the record is refused, the line is taken out again, so that nothing has
 * changed when it is offered again.
 */
static int
join_last(struct feed *fd, const struct line *l)
{
	struct framer_pending	*pd = fd->st->pending;
	struct framer_pending	 was = *pd;
	int			 rc;

	append(fd, l, true);
	if ((rc = send_pending(fd)) == 0)
		return 0;
	buf_setlen(&pd->b, was.b.len);
	pd->b.data[pd->b.len] = '\0';
	pd->end = was.end;
	pd->delim = was.delim;
	pd->cut = was.cut;
	pd->max = was.max;
	return rc;
}

/*
 * Preset mode: the preset says what the line does.  Its next state is
 * stored only once the line is taken, so that a refused line is judged
 * again the same way (clear_pending() makes the state idle on the way).
 */
static int
preset(struct feed *fd, const struct line *l)
{
	struct framer_state	*st = fd->st;
	struct mlpreset_state	 next;
	int			 rc = 0;

	switch (mlpreset_line(fd->fr->mlp, &st->mlp, l->p, l->len, &next)) {
	case MLPRESET_ALONE:
		if ((rc = close_pending(fd)) == 0)
			rc = single(fd, l);
		break;
	case MLPRESET_START:
		if ((rc = close_pending(fd)) == 0)
			open_pending(fd, l);
		break;
	case MLPRESET_JOIN:
	case MLPRESET_LAST:
		/* The state is open only while a record is pending; were it
		 * not, the line would have nothing to join. */
		if (!st->has_pending) {
			mlpreset_state_init(&next);
			rc = single(fd, l);
		} else if (mlpreset_state_open(&next))
			append(fd, l, true);
		else
			rc = join_last(fd, l);
		break;
	}
	if (rc == 0)
		st->mlp = next;
	return rc;
}

/* The step every line goes through.  Non-zero: refused, nothing changed. */
static int
take_line(struct feed *fd, struct line *l)
{
	struct framer	*fr = fd->fr;

	if (fd->st->header_left > 0) {
		fd->st->header_left--;
		fd->st->header_skipped++;
		return 0;
	}
	if (fr->strip_cr && l->delim && l->len > 0 &&
	    l->p[l->len - 1] == '\r') {
		l->len--;
		l->crlf = true;
	}
	if (fr->ctr_fmt != CTRLOG_NONE)
		return framer_ctr_line(fd, l);
	if (fr->mlp != NULL)
		return preset(fd, l);
	if (fr->re != NULL)
		return multi(fd, l);
	return single(fd, l);
}

static void
line_init(struct line *l, const char *p, size_t len, uint64_t start,
    uint64_t end, bool delim)
{
	l->p = p;
	l->len = len;
	l->start = start;
	l->end = end;
	l->delim = delim;
	l->crlf = false;
	l->cut = false;
}

/*
 * The head of a line longer than max: the record ends after its first max
 * bytes, and the rest of the line is discarded.  This is decided on the
 * line's length alone, so the records and their offsets do not depend on
 * whether the caller's window happened to reach the delimiter.
 */
static void
line_cut(struct line *l, const char *p, uint64_t start, size_t max)
{
	line_init(l, p, max, start, start + max, false);
	l->cut = true;
}

/* Consume a runaway line's tail, up to and including its delimiter. */
static size_t
skip_tail(struct framer *fr, struct framer_state *st, const char *p, size_t n)
{
	const char	*d;

	d = memchr(p, fr->delim, n);
	if (d == NULL)
		return n;
	st->skipping = false;
	return (size_t)(d - p) + 1;
}

/*
 * The common case, one line one record, as a tight loop: no copies, and
 * the options read once.  Stops at a line it leaves to take_line() (one
 * longer than the cap, or with a kept delimiter that does not fit), at a
 * partial line, or at a refusal (*refused).  Returns the bytes consumed.
 */
static size_t
feed_plain(struct feed *fd, const char *p, size_t n, uint64_t base,
    size_t pos, bool *refused)
{
	const int	 delim = fd->fr->delim;
	const bool	 strip = fd->fr->strip_cr, skip = fd->fr->skip_empty;
	const size_t	 keep = fd->fr->keep_delim ? 1 : 0;
	const char	*d;
	size_t		 len, rl;

	while (pos < n) {
		d = memchr(p + pos, delim, n - pos);
		if (d == NULL)
			break;
		len = (size_t)(d - p) - pos;
		if (len + keep > fd->max)
			break;
		rl = len;
		if (strip && rl > 0 && p[pos + rl - 1] == '\r')
			rl--;
		if (rl == 0 && skip)
			fd->st->empty_skipped++;
		else if (fd->cb(fd->arg, p + pos, rl + keep, base + pos,
		    base + pos + len + 1) != 0) {
			*refused = true;
			break;
		}
		pos += len + 1;
	}
	return pos;
}

/* Can a line go through feed_plain()?  Not with a CR stripped before a
 * kept delimiter: that record is not contiguous in the file. */
static bool
plain(const struct framer *fr, const struct framer_state *st)
{
	return fr->re == NULL && fr->mlp == NULL && fr->cd == (iconv_t)-1 &&
	    fr->ctr_fmt == CTRLOG_NONE &&
	    st->header_left == 0 && !(fr->strip_cr && fr->keep_delim);
}

size_t
framer_feed(struct framer *fr, struct framer_state *st, const char *p,
    size_t n, uint64_t base, size_t max_record, framer_cb cb, void *arg)
{
	struct feed	 fd = { fr, st, max_record, cb, arg };
	struct line	 l;
	const char	*d;
	size_t		 pos = 0, len;
	bool		 refused = false;

	if (n == 0)
		return 0;
	if (st->skipping) {
		pos = skip_tail(fr, st, p, n);
		if (st->skipping)
			return pos;
	}
	while (pos < n) {
		if (plain(fr, st)) {
			pos = feed_plain(&fd, p, n, base, pos, &refused);
			if (refused || pos == n)
				return pos;
		}
		d = memchr(p + pos, fr->delim, n - pos);
		if (d == NULL)
			break;
		len = (size_t)(d - p) - pos;
		if (len <= max_record)
			line_init(&l, p + pos, len, base + pos,
			    base + pos + len + 1, true);
		else
			line_cut(&l, p + pos, base + pos, max_record);
		if (take_line(&fd, &l) != 0)
			return pos;
		pos += len + 1;
	}
	if (n - pos <= max_record)
		return pos;
	/* No delimiter within a whole record: frame its head, then discard
	 * the rest of the line (none of it is in p, so all of p is used). */
	line_cut(&l, p + pos, base + pos, max_record);
	if (take_line(&fd, &l) != 0)
		return pos;
	st->skipping = true;
	return n;
}

int
framer_feed_last(struct framer *fr, struct framer_state *st, const char *p,
    size_t n, uint64_t base, size_t max_record, framer_cb cb, void *arg)
{
	struct feed	 fd = { fr, st, max_record, cb, arg };
	struct line	 l;

	if (n == 0)
		return 0;
	if (st->skipping) {
		/* The end of a runaway line: discarded like the rest of it. */
		st->skipping = false;
		return 0;
	}
	if (n <= max_record)
		line_init(&l, p, n, base, base + n, false);
	else
		line_cut(&l, p, base, max_record);
	return take_line(&fd, &l);
}

int
framer_flush(struct framer *fr, struct framer_state *st, framer_cb cb,
    void *arg)
{
	struct feed	 fd = { fr, st, 0, cb, arg };

	if (!st->has_pending)
		return 0;
	fd.max = st->pending->max;
	if (fr->ctr_fmt != CTRLOG_NONE)
		return framer_ctr_flush(&fd);
	return send_pending(&fd);
}

bool
framer_pending(const struct framer_state *st)
{
	return st->has_pending;
}

uint64_t
framer_pending_start(const struct framer_state *st)
{
	return st->has_pending ? st->pending->start : 0;
}

void
framer_state_init(struct framer_state *st, const struct framer *fr,
    bool from_start)
{
	memset(st, 0, sizeof(*st));
	st->pending = NULL;
	st->header_left = from_start ? fr->skip_header : 0;
}

void
framer_state_skip_line(struct framer_state *st)
{
	st->skipping = true;
}

void
framer_state_cleanup(struct framer_state *st)
{
	if (st == NULL)
		return;
	if (st->pending != NULL) {
		buf_cleanup(&st->pending->b);
		framer_ctr_cleanup(st->pending);
	}
	free(st->pending);
	st->pending = NULL;
	st->has_pending = false;
	st->skipping = false;
	mlpreset_state_init(&st->mlp);
}

size_t
framer_state_memory(const struct framer_state *st)
{
	size_t	 n;
	int	 i;

	if (st->pending == NULL)
		return 0;
	n = st->pending->b.cap;
	for (i = 0; i < CTRLOG_NSTREAMS; i++)
		n += st->pending->part[i].b.cap + st->pending->ml[i].b.cap;
	return n;
}

static bool
is_utf8(const char *enc)
{
	return enc == NULL || enc[0] == '\0' || strcasecmp(enc, "UTF-8") == 0 ||
	    strcasecmp(enc, "UTF8") == 0;
}

/* Compile the multi-line pattern (base/re.c: JIT where it can). */
static int
compile(struct framer *fr, const char *pattern, bool utf, char *err,
    size_t errlen)
{
	struct re_error	 e;
	int		 rc;

	if (pattern == NULL || pattern[0] == '\0')
		return 0;
	rc = re_new(pattern, utf ? RE_UTF : 0, &fr->re, &e);
	if (rc != 0)
		snprintf(err, errlen, "multiLineStartPattern: %s at offset %zu",
		    e.msg, e.offset);
	return rc;
}

int
framer_new(const struct framer_opts *o, struct framer **out, char *err,
    size_t errlen)
{
	struct framer	*fr;
	bool		 utf = is_utf8(o->encoding);
	int		 rc;

	*out = NULL;
	if (o->delim < 0 || o->delim > 255) {
		snprintf(err, errlen, "record delimiter %d is not a byte",
		    o->delim);
		return -EINVAL;
	}
	fr = xcalloc(1, sizeof(*fr));
	fr->cd = (iconv_t)-1;
	fr->delim = o->delim;
	fr->keep_delim = o->keep_delim;
	fr->strip_cr = o->strip_cr && o->delim == '\n';
	fr->skip_empty = o->skip_empty;
	fr->skip_header = o->skip_header;
	fr->ctr_fmt = o->container;
	fr->ctr_streams = o->streams != 0 ? o->streams : CTRLOG_ALL;
	fr->ctr_record = o->ctr_record;
	buf_init(&fr->scratch);
	buf_init(&fr->conv);
	buf_init(&fr->ctr_text);
	buf_init(&fr->ctr_out);
	rc = compile(fr, o->multiline, utf, err, errlen);
	if (rc != 0)
		goto fail;
	if (o->preset != NULL && o->preset[0] != '\0') {
		rc = -EINVAL;
		if (fr->re != NULL) {
			snprintf(err, errlen, "multiLinePreset and "
			    "multiLineStartPattern are both set");
			goto fail;
		}
		if (mlpreset_new(o->preset, &fr->mlp, err, errlen) != 0)
			goto fail;
		rc = 0;
	}
	if (!utf) {
		fr->cd = iconv_open("UTF-8", o->encoding);
		if (fr->cd == (iconv_t)-1) {
			rc = -EINVAL;
			snprintf(err, errlen, "fileEncoding %s: cannot convert "
			    "to UTF-8: %s", o->encoding, strerror(errno));
			goto fail;
		}
	}
	*out = fr;
	return 0;
fail:
	framer_free(fr);
	return rc;
}

int
framer_delim(const struct framer *f)
{
	return f->delim;
}

void
framer_free(struct framer *fr)
{
	if (fr == NULL)
		return;
	re_free(fr->re);
	mlpreset_free(fr->mlp);
	if (fr->cd != (iconv_t)-1)
		iconv_close(fr->cd);
	buf_cleanup(&fr->scratch);
	buf_cleanup(&fr->conv);
	buf_cleanup(&fr->ctr_text);
	buf_cleanup(&fr->ctr_out);
	free(fr);
}

size_t
framer_memory(const struct framer *fr)
{
	return fr->scratch.cap + fr->conv.cap + fr->ctr_text.cap +
	    fr->ctr_out.cap;
}
