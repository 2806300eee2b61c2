/*
 * The framer's container step (framer_int.h): each line of a container
 * log file decoded (records/ctrlog.h), partial lines joined per stream
 * into the record of their last line, and the record written as the flow
 * asks (containerRecord).  With multiLinePreset, the lines so made are
 * then grouped per stream (records/mlpreset.h): stdout and stderr never
 * mix.
 *
 * Offsets.  A joined record starts at its first partial line and ends
 * past its last, so a restart, which reads again from the committed
 * offset, finds the whole sequence and joins it again.  stdout and stderr
 * interleave in one file, and the commit watermark (tail/watermark.h)
 * takes each record as covering everything since the record before it:
 * a record sent while the other stream's partial lines wait would let the
 * committed offset pass their start, and a restart would lose them.  Such
 * a record's end is therefore held at the start of the other stream's
 * first waiting line or open multi-line record (and its start no
 * later): the watermark cannot say that these bytes were delivered.
 * Its own bytes, when no other line came between its lines, are told to
 * the callback (framer_record_held): they are its identity past the held
 * end (its record id, the span kept once it is acknowledged), so that a
 * restart in that window does not send it again.  One with a gap (a
 * partial sequence or trace interleaved with the other stream's lines)
 * has none: a span of it would cover a line not delivered.
 */
#include "config.h"

#include <string.h>

#include "records/ctrlog.h"
#include "records/framer_int.h"

/* Where stream i's waiting bytes start (UINT64_MAX: none wait). */
static uint64_t
waits_from(const struct framer_pending *pd, int i)
{
	uint64_t	 at = UINT64_MAX;

	if (pd->part[i].on)
		at = pd->part[i].start;
	if (pd->ml[i].open && pd->ml[i].start < at)
		at = pd->ml[i].start;
	return at;
}

/* The start of the first waiting line of a stream but s, or end. */
static uint64_t
held_end(const struct framer_state *st, int s, uint64_t end)
{
	int		 i;

	if (st->pending == NULL)
		return end;
	for (i = 0; i < CTRLOG_NSTREAMS; i++)
		if (i != s)
			end = MIN(end, waits_from(st->pending, i));
	return end;
}

/* Has_pending and the pending start, from the lines waiting. */
static void
note_parts(struct framer_state *st)
{
	struct framer_pending *pd = st->pending;
	uint64_t	 at;
	int		 i;

	st->has_pending = false;
	for (i = 0; i < CTRLOG_NSTREAMS; i++) {
		if ((at = waits_from(pd, i)) == UINT64_MAX)
			continue;
		if (!st->has_pending || at < pd->start)
			pd->start = at;
		st->has_pending = true;
	}
}

/*
 * The json record of text[len] into fr->ctr_out, within max less the room
 * the source's metadata may take: the text is cut until it fits.
 */
static bool
build_json(struct framer *fr, size_t max, const char *time, int stream,
    const char *text, size_t len)
{
	size_t		 limit = max > 2 * CTRLOG_META_MAX ?
			    max - CTRLOG_META_MAX : max / 2;
	bool		 cut = false;

	for (;;) {
		buf_reset(&fr->ctr_out);
		ctrlog_json_record(&fr->ctr_out, time, stream, text, len);
		if (fr->ctr_out.len <= limit || len == 0)
			return cut;
		cut = true;
		len -= MIN(len, MAX(fr->ctr_out.len - limit, len / 8));
	}
}

/*
 * Deliver a record of bytes [start, end) of stream s (-1: a line in no
 * format), its start and end held back for the other streams' waiting
 * lines; a held record whose bytes are its own alone (!gap) says where
 * they are (framer_record_held).
 */
static int
deliver_held(struct feed *fd, int s, const char *data, size_t len,
    uint64_t start, uint64_t end, bool cut, bool gap)
{
	struct framer	*fr = fd->fr;
	uint64_t	 held = held_end(fd->st, s, end);
	int		 rc;

	fr->ctr_held = held < end && !gap && start < end;
	fr->ctr_start = start;
	fr->ctr_end = end;
	rc = framer_deliver(fd, data, len, MIN(start, held), held, cut);
	fr->ctr_held = false;
	return rc;
}

/* One record of a stream, its end held back for the other's partials. */
static int
emit(struct feed *fd, const char *time, int stream, const char *text,
    size_t len, uint64_t start, uint64_t end, bool cut, bool gap)
{
	struct framer	*fr = fd->fr;

	if (fr->ctr_record == CTRLOG_MESSAGE)
		return deliver_held(fd, stream, text, len, start, end, cut,
		    gap);
	if (build_json(fr, fd->max, time, stream, text, len))
		cut = true;
	return deliver_held(fd, stream, fr->ctr_out.data, fr->ctr_out.len,
	    start, end, cut, gap);
}

/* --- multiLinePreset, per stream ----------------------------------------- */

/* One line of a stream, as the preset sees it. */
struct logical {
	int		 s;
	const char	*time;
	const char	*text;
	size_t		 len;
	uint64_t	 start;
	uint64_t	 end;
	bool		 cut;
	bool		 gap;	/* other lines came between its own */
};

/* Add text to a record buffer (after '\n' when join), within max. */
static void
ml_add(struct framer_ml *m, size_t max, const struct logical *x, bool join)
{
	size_t		 n = x->len + (join ? 1 : 0);
	size_t		 left = m->b.len < max ? max - m->b.len : 0;

	if (n > left || x->cut)
		m->cut = true;
	if (join && (x->gap || x->start != m->end))
		m->gap = true;
	n = MIN(n, left);
	if (join && n > 0) {
		buf_addc(&m->b, '\n');
		n--;
	}
	buf_add(&m->b, x->text, n);
	m->end = x->end;
}

/* Send stream s's open record, if any; it is closed once taken. */
static int
ml_close(struct feed *fd, int s)
{
	struct framer_ml *m = &fd->st->pending->ml[s];
	int		 rc;

	if (!m->open)
		return 0;
	rc = emit(fd, m->time, s, m->b.data, m->b.len, m->start, m->end,
	    m->cut, m->gap);
	if (rc != 0)
		return rc;
	m->open = false;
	mlpreset_state_init(&m->at);
	if (m->b.cap > KEEP_BYTES)
		buf_cleanup(&m->b);
	else
		buf_reset(&m->b);
	note_parts(fd->st);
	return 0;
}

static void
ml_open(struct feed *fd, const struct logical *x)
{
	struct framer_ml *m = &fd->st->pending->ml[x->s];

	m->open = true;
	m->start = x->start;
	m->cut = false;
	m->gap = x->gap;
	memcpy(m->time, x->time, sizeof(m->time));
	buf_reset(&m->b);
	ml_add(m, fd->max, x, false);
	fd->st->pending->max = fd->max;
	note_parts(fd->st);
}

/* The line that ends the open record: joined, and the record sent. */
static int
ml_last(struct feed *fd, const struct logical *x)
{
	struct framer_ml *m = &fd->st->pending->ml[x->s];
	size_t		 len = m->b.len;
	uint64_t	 end = m->end;
	bool		 cut = m->cut, gap = m->gap;
	int		 rc;

	ml_add(m, fd->max, x, true);
	if ((rc = ml_close(fd, x->s)) == 0)
		return 0;
	buf_setlen(&m->b, len);		/* offered again, as it was */
	m->end = end;
	m->cut = cut;
	m->gap = gap;
	return rc;
}

/*
 * A whole line of stream x->s: a record, or (with a preset) what the
 * preset makes of it.  Its next state is stored only once the line is
 * taken, so that a refused line is judged again the same way.
 */
static int
logical(struct feed *fd, const struct logical *x)
{
	struct framer_ml *m;
	struct mlpreset_state next;
	int		 rc = 0;

	if (fd->fr->mlp == NULL)
		return emit(fd, x->time, x->s, x->text, x->len, x->start,
		    x->end, x->cut, x->gap);
	m = &framer_pending_get(fd->st)->ml[x->s];
	switch (mlpreset_line(fd->fr->mlp, &m->at, x->text, x->len, &next)) {
	case MLPRESET_ALONE:
		if ((rc = ml_close(fd, x->s)) == 0)
			rc = emit(fd, x->time, x->s, x->text, x->len,
			    x->start, x->end, x->cut, x->gap);
		break;
	case MLPRESET_START:
		if ((rc = ml_close(fd, x->s)) == 0)
			ml_open(fd, x);
		break;
	case MLPRESET_JOIN:
	case MLPRESET_LAST:
		if (!m->open) {
			mlpreset_state_init(&next);
			rc = emit(fd, x->time, x->s, x->text, x->len,
			    x->start, x->end, x->cut, x->gap);
		} else if (mlpreset_state_open(&next)) {
			ml_add(m, fd->max, x, true);
			fd->st->pending->max = fd->max;
		} else
			rc = ml_last(fd, x);
		break;
	}
	if (rc == 0)
		m->at = next;
	return rc;
}

/* --- partial lines ---------------------------------------------------------- */

/* Add a partial line's text to its stream's waiting lines, capped. */
static void
part_add(struct feed *fd, const struct ctrlog_line *c, const struct line *l)
{
	struct framer_part *p = &framer_pending_get(fd->st)->part[c->stream];
	size_t		 n = c->len;

	if (!p->on) {
		p->on = true;
		p->start = l->start;
		p->cut = false;
		p->gap = false;
		buf_reset(&p->b);
		memcpy(p->time, c->time, sizeof(p->time));
	} else if (l->start != p->end)
		p->gap = true;
	if (p->b.len + n > fd->max || l->cut) {
		p->cut = true;
		n = p->b.len < fd->max ? MIN(n, fd->max - p->b.len) : 0;
	}
	buf_add(&p->b, c->text, n);
	p->end = l->end;
	fd->st->pending->max = fd->max;
	note_parts(fd->st);
}

static void
part_clear(struct framer_state *st, int s)
{
	struct framer_part *p = &st->pending->part[s];

	p->on = false;
	if (p->b.cap > KEEP_BYTES)
		buf_cleanup(&p->b);
	else
		buf_reset(&p->b);
	note_parts(st);
}

/* The last line of a stream's partial sequence: one record of them all. */
static int
join(struct feed *fd, const struct ctrlog_line *c, const struct line *l)
{
	struct framer_part *p = &fd->st->pending->part[c->stream];
	size_t		 had = p->b.len, n = c->len;
	bool		 cut = p->cut || l->cut;
	struct logical	 x;
	int		 rc;

	if (had + n > fd->max) {
		cut = true;
		n = had < fd->max ? fd->max - had : 0;
	}
	buf_add(&p->b, c->text, n);
	x = (struct logical){ c->stream, p->time, p->b.data, p->b.len,
	    p->start, l->end, cut, p->gap || l->start != p->end };
	rc = logical(fd, &x);
	if (rc != 0) {
		buf_setlen(&p->b, had);	/* offered again, as it was */
		return rc;
	}
	fd->st->joined++;
	part_clear(fd->st, c->stream);
	return 0;
}

int
framer_ctr_line(struct feed *fd, const struct line *l)
{
	struct framer	*fr = fd->fr;
	struct framer_state *st = fd->st;
	struct ctrlog_line c;
	struct logical	 x;
	int		 rc;

	if (ctrlog_decode(fr->ctr_fmt, l->p, l->len, &fr->ctr_text, &c) != 0) {
		/* Shipped as it is: whatever wrote it, it is data. */
		fr->ctr_raw = true;
		rc = deliver_held(fd, -1, l->p, l->len, l->start, l->end,
		    l->cut, false);
		fr->ctr_raw = false;
		if (rc == 0)
			st->malformed++;
		return rc;
	}
	if (!(fr->ctr_streams & (1u << c.stream)))
		return 0;	/* containerStreams leaves it out */
	if (c.partial) {
		part_add(fd, &c, l);
		return 0;
	}
	if (st->pending != NULL && st->pending->part[c.stream].on)
		return join(fd, &c, l);
	x = (struct logical){ c.stream, c.time, c.text, c.len, l->start,
	    l->end, l->cut, false };
	return logical(fd, &x);
}

int
framer_ctr_flush(struct feed *fd)
{
	struct framer_state *st = fd->st;
	struct framer_part *p;
	struct logical	 x;
	int		 i, first, rc;

	/* Quiet: a stream's last partial line never came, or its multi-line
	 * record waits for a line that would end it.  Partials go as they
	 * are (through the preset), then the record; the stream waiting
	 * from the oldest offset first, so the watermark's ends keep their
	 * order. */
	while (st->has_pending) {
		first = 0;
		for (i = 1; i < CTRLOG_NSTREAMS; i++)
			if (waits_from(st->pending, i) <
			    waits_from(st->pending, first))
				first = i;
		p = &st->pending->part[first];
		if (p->on) {
			x = (struct logical){ first, p->time, p->b.data,
			    p->b.len, p->start, p->end, p->cut, p->gap };
			if ((rc = logical(fd, &x)) != 0)
				return rc;
			st->joined++;
			part_clear(st, first);
		}
		if ((rc = ml_close(fd, first)) != 0)
			return rc;
	}
	return 0;
}

bool
framer_record_raw(const struct framer *fr)
{
	return fr->ctr_raw;
}

bool
framer_record_held(const struct framer *fr, uint64_t *start, uint64_t *end)
{
	if (!fr->ctr_held)
		return false;
	*start = fr->ctr_start;
	*end = fr->ctr_end;
	return true;
}

bool
framer_container_json(const struct framer *fr)
{
	return fr->ctr_fmt != CTRLOG_NONE && fr->ctr_record == CTRLOG_JSON;
}

void
framer_ctr_cleanup(struct framer_pending *pd)
{
	int	 i;

	for (i = 0; i < CTRLOG_NSTREAMS; i++) {
		buf_cleanup(&pd->part[i].b);
		buf_cleanup(&pd->ml[i].b);
	}
}
