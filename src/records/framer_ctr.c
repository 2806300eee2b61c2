/*
 * The framer's container step (framer_int.h): each line of a container
 * log file decoded (records/ctrlog.h), partial lines joined per stream
 * into the record of their last line, and the record written as the flow
 * asks (containerRecord).  Multi-line grouping, when a flow has it, comes
 * after this step, per stream (the hook is framer_ctr_line's record).
 *
 * Offsets.  A joined record starts at its first partial line and ends
 * past its last, so a restart, which reads again from the committed
 * offset, finds the whole sequence and joins it again.  stdout and stderr
 * interleave in one file, and the commit watermark (tail/watermark.h)
 * takes each record as covering everything since the record before it:
 * a record sent while the other stream's partial lines wait would let the
 * committed offset pass their start, and a restart would lose them.  Such
 * a record's end is therefore held at the start of the other stream's
 * first waiting line (and its start no later): the watermark cannot say
 * that these bytes were delivered, and a restart in that window sends
 * them again rather than lose the other stream's lines.
 */
#include "config.h"

#include <string.h>

#include "records/ctrlog.h"
#include "records/framer_int.h"

/* The start of the first waiting partial line of a stream but s, or end. */
static uint64_t
held_end(const struct framer_state *st, int s, uint64_t end)
{
	const struct framer_part *p;
	int		 i;

	if (st->pending == NULL)
		return end;
	for (i = 0; i < CTRLOG_NSTREAMS; i++) {
		p = &st->pending->part[i];
		if (i != s && p->on && p->start < end)
			end = p->start;
	}
	return end;
}

/* Has_pending and the pending start, from the parts waiting. */
static void
note_parts(struct framer_state *st)
{
	struct framer_pending *pd = st->pending;
	int		 i;

	st->has_pending = false;
	for (i = 0; i < CTRLOG_NSTREAMS; i++) {
		if (!pd->part[i].on)
			continue;
		if (!st->has_pending || pd->part[i].start < pd->start)
			pd->start = pd->part[i].start;
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

/* One record of a stream, its end held back for the other's partials. */
static int
emit(struct feed *fd, const char *time, int stream, const char *text,
    size_t len, uint64_t start, uint64_t end, bool cut)
{
	struct framer	*fr = fd->fr;

	end = held_end(fd->st, stream, end);
	start = MIN(start, end);
	if (fr->ctr_record == CTRLOG_MESSAGE)
		return framer_deliver(fd, text, len, start, end, cut);
	if (build_json(fr, fd->max, time, stream, text, len))
		cut = true;
	return framer_deliver(fd, fr->ctr_out.data, fr->ctr_out.len, start,
	    end, cut);
}

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
		buf_reset(&p->b);
		memcpy(p->time, c->time, sizeof(p->time));
	}
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
	int		 rc;

	if (had + n > fd->max) {
		cut = true;
		n = had < fd->max ? fd->max - had : 0;
	}
	buf_add(&p->b, c->text, n);
	rc = emit(fd, p->time, c->stream, p->b.data, p->b.len, p->start,
	    l->end, cut);
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
	int		 rc;

	if (ctrlog_decode(fr->ctr_fmt, l->p, l->len, &fr->ctr_text, &c) != 0) {
		/* Shipped as it is: whatever wrote it, it is data. */
		fr->ctr_raw = true;
		rc = framer_deliver(fd, l->p, l->len, MIN(l->start,
		    held_end(st, -1, l->end)), held_end(st, -1, l->end),
		    l->cut);
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
	return emit(fd, c.time, c.stream, c.text, c.len, l->start, l->end,
	    l->cut);
}

int
framer_ctr_flush(struct feed *fd)
{
	struct framer_state *st = fd->st;
	struct framer_part *p;
	int		 i, first, rc;

	/* A stream's last line never came (quiet): its partials as they are,
	 * the oldest first, so that the watermark's ends keep their order. */
	while (st->has_pending) {
		first = -1;
		for (i = 0; i < CTRLOG_NSTREAMS; i++)
			if (st->pending->part[i].on && (first < 0 ||
			    st->pending->part[i].start <
			    st->pending->part[first].start))
				first = i;
		p = &st->pending->part[first];
		rc = emit(fd, p->time, first, p->b.data, p->b.len, p->start,
		    p->end, p->cut);
		if (rc != 0)
			return rc;
		st->joined++;
		part_clear(st, first);
	}
	return 0;
}

bool
framer_record_raw(const struct framer *fr)
{
	return fr->ctr_raw;
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

	for (i = 0; i < CTRLOG_NSTREAMS; i++)
		buf_cleanup(&pd->part[i].b);
}
