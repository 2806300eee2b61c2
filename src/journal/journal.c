/*
 * The systemd journal reader (journal.h): sd-journal on a libuv loop,
 * its functions loaded with the first journal flow (sdjournal.h).
 *
 * The journal's fd (inotify on the journal directories) is watched by a
 * uv_poll, and sd_journal_get_timeout (set only where inotify does not
 * work, such as network file systems) by a one-shot timer re-armed after
 * every sd_journal_process; between wake-ups nothing runs.  sd_journal_get_fd
 * is called right after opening, as sd-journal asks, so no change between
 * the open and the first poll is missed; an entry appended while the flow
 * does not read stays in the journal, and the next read finds it.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/closer.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/util.h"
#include "conf/conf.h"
#include "conf/journalconf.h"
#include "journal/jformat.h"
#include "journal/journal.h"
#include "journal/sdjournal.h"

/* Fields are read up to this size (the largest request): a larger one is
 * cut, and so is the record. */
#define DATA_THRESHOLD	(4u * 1024 * 1024 + 1)

struct journal {
	uv_loop_t	*loop;
	const struct conf_flow *fc;
	struct metrics_flow *m;
	sd_journal	*j;
	journal_cb	 cb;
	void		*arg;
	bool		 keep_delim;
	bool		 once;
	bool		 have;		/* an entry is peeked at */
	bool		 checking;	/* the first entry after a seek to the
					   committed cursor */
	char		*saved;		/* that cursor */
	bool		 woken;		/* a change, and no entry read since */
	char		*again;		/* re-read from this entry: skip it */
	/* The entry peeked at. */
	char		*cursor;
	uint64_t	 realtime;
	bool		 none;		/* no MESSAGE */
	bool		 cut;
	char		 name[128];
	struct buf	 rec;
	struct buf	 scratch;	/* copies of its fields */
	struct jfield	*fields;
	size_t		 nfields;
	size_t		 capfields;
	/* Watching (not with --once). */
	bool		 watching;	/* poll and timer initialised */
	uv_poll_t	 poll;
	uv_timer_t	 timer;
	struct closer	 closer;	/* they are being closed */
};

static const char *
what(const struct conf_flow *fc)
{
	return fc->journal_dir[0] != '\0' ? fc->journal_dir :
	    "the system journal";
}

/* libsystemd's functions, once a journal is opened (sdj_get). */
static const struct sdj	*S;

/* --- opening ------------------------------------------------------------ */

static int
add_term(void *arg, const char *term)
{
	return S->add_match(arg, term, 0);
}

static int
add_alternative(void *arg)
{
	return S->add_disjunction(arg);
}

/* The journal of fc with its matches into *out; 0 or -errno (err). */
static int
open_journal(const struct conf_flow *fc, sd_journal **out, char *err,
    size_t errlen)
{
	struct journalconf_match_cbs cbs = { add_term, add_alternative, NULL };
	char		 why[160];
	int		 r;

	*out = NULL;
	if (S == NULL && (S = sdj_get(err, errlen)) == NULL)
		return -ELIBACC;
	if (fc->journal_dir[0] != '\0')
		r = S->open_directory(out, fc->journal_dir, 0);
	else
		r = S->open(out, SD_JOURNAL_LOCAL_ONLY);
	if (r < 0) {
		snprintf(err, errlen, "cannot open %s: %s", what(fc),
		    strerror(-r));
		return r;
	}
	cbs.arg = *out;
	r = journalconf_match(fc->journal_match, &cbs, why, sizeof(why));
	if (r == -EINVAL)
		snprintf(err, errlen, "journalMatch = %s: %s", fc->journal_match,
		    why);
	else if (r < 0)
		snprintf(err, errlen, "journalMatch = %s: %s", fc->journal_match,
		    strerror(-r));
	if (r == 0)
		r = S->set_data_threshold(*out, DATA_THRESHOLD);
	if (r < 0) {
		S->close(*out);
		*out = NULL;
	}
	return r;
}

/* --- watching ----------------------------------------------------------- */

static void	arm_timer(struct journal *);
static void	release(struct closer *);

/* A wake-up: let sd-journal see what changed, and tell the owner. */
static void
process(struct journal *jr)
{
	int	 r;

	r = S->process(jr->j);
	if (r < 0)
		log_warn("[%s] %s: sd_journal_process: %s", jr->fc->name,
		    what(jr->fc), strerror(-r));
	arm_timer(jr);
	if (r != SD_JOURNAL_NOP) {
		jr->woken = true;
		jr->cb(jr->arg);
	}
}

static void
on_poll(uv_poll_t *h, int status, int events)
{
	struct journal	*jr = container_of(h, struct journal, poll);

	(void)events;
	if (status < 0)
		log_warn("[%s] %s: poll: %s", jr->fc->name, what(jr->fc),
		    uv_strerror(status));
	process(jr);
}

static void
on_timer(uv_timer_t *h)
{
	process(container_of(h, struct journal, timer));
}

/* sd_journal_get_timeout: an absolute CLOCK_MONOTONIC time, or none. */
static void
arm_timer(struct journal *jr)
{
	struct timespec	 ts;
	uint64_t	 t, now, ms;

	if (!jr->watching)
		return;
	if (S->get_timeout(jr->j, &t) < 0 || t == UINT64_MAX) {
		uv_timer_stop(&jr->timer);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
	/* At least 1 ms: libuv before 1.48 can spin on a 0 ms timer. */
	ms = t > now ? (t - now + 999) / 1000 : 1;
	uv_timer_start(&jr->timer, on_timer, MAX(ms, 1), 0);
}

struct journal *
journal_open(uv_loop_t *loop, const struct conf_flow *fc, bool keep_delim,
    struct metrics_flow *m, bool once, journal_cb cb, void *arg, char *err,
    size_t errlen)
{
	struct journal	*jr;
	int		 fd;

	jr = xcalloc(1, sizeof(*jr));
	jr->loop = loop;
	jr->fc = fc;
	jr->m = m;
	jr->keep_delim = keep_delim;
	jr->once = once;
	jr->cb = cb;
	jr->arg = arg;
	buf_init(&jr->rec);
	buf_init(&jr->scratch);
	closer_init(&jr->closer, release);
	if (open_journal(fc, &jr->j, err, errlen) < 0)
		goto fail;
	if (once)
		return jr;
	/* Right after opening: sd-journal sets up its inotify watches
	 * here, and what changes after it wakes the poll. */
	fd = S->get_fd(jr->j);
	if (fd < 0) {
		snprintf(err, errlen, "cannot watch %s: %s", what(fc),
		    strerror(-fd));
		goto fail;
	}
	uv_poll_init(loop, &jr->poll, fd);
	uv_timer_init(loop, &jr->timer);
	jr->watching = true;
	return jr;
fail:
	if (jr->j != NULL)
		S->close(jr->j);
	buf_cleanup(&jr->rec);
	buf_cleanup(&jr->scratch);
	free(jr);
	return NULL;
}

/* --- positions ---------------------------------------------------------- */

/* Seek to the end: *start is the cursor of the last entry, if any. */
static int
seek_end(struct journal *jr, char **start)
{
	int	 r;

	if ((r = S->seek_tail(jr->j)) < 0)
		return r;
	/* On the last entry, so that the next one read is a new one. */
	r = S->previous(jr->j);
	if (r > 0)
		r = S->get_cursor(jr->j, start);
	return r < 0 ? r : 0;
}

int
journal_start(struct journal *jr, const char *cursor, char **start)
{
	int	 r;

	*start = NULL;
	if (cursor != NULL) {
		r = S->seek_cursor(jr->j, cursor);
		jr->checking = true;
		free(jr->saved);
		jr->saved = xstrdup(cursor);
	} else if (jr->fc->initial_position == POS_END_OF_FILE)
		r = seek_end(jr, start);
	else
		r = S->seek_head(jr->j);
	if (r < 0) {
		log_error("[%s] %s: cannot seek to %s: %s", jr->fc->name,
		    what(jr->fc), cursor != NULL ? cursor : "the start",
		    strerror(-r));
		return r;
	}
	if (jr->watching) {
		uv_poll_start(&jr->poll, UV_READABLE, on_poll);
		arm_timer(jr);
	}
	return 0;
}

void
journal_stop(struct journal *jr)
{
	if (!jr->watching)
		return;
	uv_poll_stop(&jr->poll);
	uv_timer_stop(&jr->timer);
}

/* The handles closed (or there were none): the memory goes, and the fd
 * with it -- it is sd-journal's, closed once the poll no longer uses it. */
static void
release(struct closer *c)
{
	struct journal	*jr = container_of(c, struct journal, closer);

	S->close(jr->j);
	free(jr->saved);
	free(jr->again);
	free(jr->cursor);
	free(jr->fields);
	buf_cleanup(&jr->rec);
	buf_cleanup(&jr->scratch);
	free(jr);
}

void
journal_free(struct journal *jr)
{
	if (jr == NULL)
		return;
	if (jr->watching) {
		journal_stop(jr);
		closer_close(&jr->closer, (uv_handle_t *)&jr->poll);
		closer_close(&jr->closer, (uv_handle_t *)&jr->timer);
	}
	closer_release(&jr->closer);
}

/* --- the gap of a cursor rotated away ----------------------------------- */

static void
utc(uint64_t usec, char *out, size_t len)
{
	struct tm	 tm;
	time_t		 t = (time_t)(usec / 1000000);

	if (usec == 0 || gmtime_r(&t, &tm) == NULL ||
	    strftime(out, len, "%Y-%m-%d %H:%M:%S UTC", &tm) == 0)
		snprintf(out, len, "an unknown time");
}

/*
 * The first entry after the committed one is read, and the committed one
 * is no longer in the journal: say what was lost, once, and count it.
 */
static void
report_gap(struct journal *jr)
{
	struct jcursor	 from;
	uint64_t	 lost = 0;
	char		 t1[40], t2[40];
	int		 known;

	known = jcursor_gap(jr->saved, jr->cursor, &lost);
	if (known == 1 && lost == 0)
		return;		/* only the committed entry itself went */
	jr->m->journal_gaps++;
	if (!jcursor_parse(jr->saved, &from))
		from.realtime = 0;
	utc(from.realtime, t1, sizeof(t1));
	utc(jr->realtime, t2, sizeof(t2));
	if (known == 1) {
		jr->m->journal_entries_lost += lost;
		log_warn("[%s] %s: the last entry delivered (%s, %s) is no "
		    "longer in the journal: %" PRIu64 " entries after it "
		    "(counting those journalMatch does not select) were "
		    "rotated away unread, up to %s; going on from there",
		    jr->fc->name, what(jr->fc), t1, jr->saved, lost, t2);
	} else
		log_warn("[%s] %s: the last entry delivered (%s, %s) is no "
		    "longer in the journal, whose files were replaced: "
		    "entries logged between then and %s may be lost; going "
		    "on from there", jr->fc->name, what(jr->fc), t1,
		    jr->saved, t2);
}

/* --- entries ------------------------------------------------------------ */

/* Copy every field of the current entry (up to about limit bytes). */
static void
collect_fields(struct journal *jr, size_t limit)
{
	const void	*d;
	const char	*p, *eq;
	size_t		 len, i, off;

	buf_reset(&jr->scratch);
	jr->nfields = 0;
	S->restart_data(jr->j);
	while (jr->scratch.len < limit &&
	    S->enumerate_data(jr->j, &d, &len) > 0) {
		eq = memchr(d, '=', len);
		if (eq == NULL)
			continue;
		if (jr->nfields == jr->capfields) {
			jr->capfields = jr->capfields ? jr->capfields * 2 : 32;
			jr->fields = xrealloc(jr->fields,
			    jr->capfields * sizeof(*jr->fields));
		}
		/* Offsets for now: the scratch buffer may move. */
		jr->fields[jr->nfields].nlen = (size_t)(eq - (const char *)d);
		jr->fields[jr->nfields].vlen = len - jr->fields[jr->nfields].nlen
		    - 1;
		jr->fields[jr->nfields].name = (const char *)jr->scratch.len;
		jr->nfields++;
		buf_add(&jr->scratch, d, len);
	}
	for (i = 0; i < jr->nfields; i++) {
		off = (size_t)jr->fields[i].name;
		p = jr->scratch.data + off;
		jr->fields[i].name = p;
		jr->fields[i].value = p + jr->fields[i].nlen + 1;
	}
}

/* The value of field name (without "NAME="), or NULL. */
static const char *
get_field(struct journal *jr, const char *name, size_t *len)
{
	const void	*d;
	size_t		 n = strlen(name) + 1, l;

	if (S->get_data(jr->j, name, &d, &l) < 0 || l < n)
		return NULL;
	*len = l - n;
	return (const char *)d + n;
}

static void
set_name(struct journal *jr)
{
	static const char *const names[] = {
		"_SYSTEMD_UNIT", "SYSLOG_IDENTIFIER", "_COMM", NULL
	};
	const char	*v = NULL;
	size_t		 i, len = 0;

	for (i = 0; names[i] != NULL && v == NULL; i++)
		v = get_field(jr, names[i], &len);
	if (v == NULL || len == 0) {
		v = "journal";
		len = 7;
	}
	len = MIN(len, sizeof(jr->name) - 1);
	memcpy(jr->name, v, len);
	jr->name[len] = '\0';
	/* A name for partition keys and metadata: no NUL inside. */
	for (i = 0; i < len; i++)
		if (jr->name[i] == '\0')
			jr->name[i] = '?';
}

/* The record of the current entry, at most max bytes. */
static int
build(struct journal *jr, size_t max)
{
	struct jentry	 e;
	const char	*msg;
	size_t		 len = 0, room = max - (jr->keep_delim && max > 1);
	int		 r;

	free(jr->cursor);
	jr->cursor = NULL;
	if ((r = S->get_cursor(jr->j, &jr->cursor)) < 0 ||
	    (r = S->get_realtime_usec(jr->j, &jr->realtime)) < 0)
		return r;
	set_name(jr);
	jr->none = false;
	jr->cut = false;
	buf_reset(&jr->rec);
	if (jr->fc->journal_format == JFMT_MESSAGE) {
		msg = get_field(jr, "MESSAGE", &len);
		jr->none = msg == NULL;
		jr->cut = len > room && !jr->none;
		if (msg != NULL)
			buf_add(&jr->rec, msg, MIN(len, room));
	} else {
		collect_fields(jr, 2 * max + 4096);
		e.cursor = jr->cursor;
		e.realtime = jr->realtime;
		if (S->get_monotonic_usec(jr->j, &e.monotonic,
		    NULL) < 0)
			e.monotonic = 0;
		if (jr->fc->journal_format == JFMT_JSON)
			jformat_json(jr->fields, jr->nfields, &e, room,
			    &jr->rec, &jr->cut);
		else
			jformat_short(jr->fields, jr->nfields, &e, room,
			    &jr->rec, &jr->cut);
	}
	if (jr->keep_delim && !jr->none)
		buf_addc(&jr->rec, '\n');
	return 0;
}

/*
 * A change woke the flow and it found no entry: read again from where it
 * is.  The writer links an entry into the file's list (the header counts
 * it) before its fields' lists; a reader with a match that looks between
 * the two finds nothing for its match, and sd-journal, which remembers
 * the header's count as read, finds nothing more in that file until the
 * count grows again -- after the next entry logged, which for a quiet
 * unit may be never.  A seek forgets that count.  The entry the flow is
 * on is found again first, and skipped.
 */
static int
reread(struct journal *jr)
{
	char	*at = NULL;

	free(jr->again);
	jr->again = NULL;
	if (S->get_cursor(jr->j, &at) >= 0) {
		jr->again = at;
		return S->seek_cursor(jr->j, at);
	}
	/* On no entry yet: from the committed cursor, else the head (what
	 * the match selects now all came after the start). */
	if (jr->checking)
		return S->seek_cursor(jr->j, jr->saved);
	return S->seek_head(jr->j);
}

/* Move to the next entry to send: 1, 0 (none now), or -errno. */
static int
next_entry(struct journal *jr)
{
	int	 r;

	for (;;) {
		r = S->next(jr->j);
		if (r == 0 && jr->woken) {
			jr->woken = false;
			if ((r = reread(jr)) < 0)
				return r;
			continue;
		}
		if (r <= 0)
			return r;
		jr->woken = false;
		if (jr->again != NULL) {
			r = S->test_cursor(jr->j, jr->again);
			free(jr->again);
			jr->again = NULL;
			if (r > 0)
				continue;
		}
		if (!jr->checking)
			return 1;
		jr->checking = false;
		/* The committed entry itself: it was delivered. */
		if (S->test_cursor(jr->j, jr->saved) > 0)
			continue;
		free(jr->cursor);
		jr->cursor = NULL;
		if ((r = S->get_cursor(jr->j, &jr->cursor)) < 0 ||
		    (r = S->get_realtime_usec(jr->j,
		    &jr->realtime)) < 0)
			return r;
		report_gap(jr);
		return 1;
	}
}

int
journal_peek(struct journal *jr, size_t max_record, struct journal_entry *e)
{
	int	 r;

	while (!jr->have) {
		r = next_entry(jr);
		if (r == 0)
			return 0;
		if (r < 0) {
			log_error("[%s] %s: cannot read the next entry: %s",
			    jr->fc->name, what(jr->fc), strerror(-r));
			return r;
		}
		/* An entry that cannot be read would stop the flow for
		 * good if it were tried again: it is skipped, and counted. */
		if ((r = build(jr, max_record)) < 0) {
			log_error("[%s] %s: skipping an entry that cannot be "
			    "read: %s", jr->fc->name, what(jr->fc),
			    strerror(-r));
			jr->m->journal_entries_lost++;
			continue;
		}
		jr->have = true;
	}
	e->data = jr->none ? NULL : jr->rec.data != NULL ? jr->rec.data : "";
	e->len = jr->rec.len;
	e->cut = jr->cut;
	e->name = jr->name;
	e->cursor = jr->cursor;
	e->realtime = jr->realtime;
	return 1;
}

void
journal_take(struct journal *jr)
{
	jr->have = false;
}

/* --- status ------------------------------------------------------------- */

int
journal_position(const struct conf_flow *fc, const char *cursor,
    uint64_t cap, struct journal_position *out, char *err, size_t errlen)
{
	struct jcursor	 c;
	sd_journal	*j;
	int		 r;

	memset(out, 0, sizeof(*out));
	if ((r = open_journal(fc, &j, err, errlen)) < 0)
		return r;
	if (cursor != NULL) {
		if (jcursor_parse(cursor, &c))
			out->at = c.realtime;
		r = S->seek_cursor(j, cursor);
		if (r >= 0 && (r = S->next(j)) > 0 &&
		    S->test_cursor(j, cursor) <= 0) {
			out->gone = true;
			out->behind = 1;
		}
	} else if (fc->initial_position == POS_END_OF_FILE)
		r = 1;		/* the first start reads from then on */
	else
		r = S->seek_head(j);
	while (r >= 0 && (cursor != NULL ||
	    fc->initial_position != POS_END_OF_FILE) && !out->more && (r = S->next(j)) > 0)
		out->more = ++out->behind > cap;
	if (out->more)
		out->behind = cap;
	if (r >= 0 && (r = S->seek_tail(j)) >= 0 &&
	    (r = S->previous(j)) > 0)
		r = S->get_realtime_usec(j, &out->newest);
	S->close(j);
	if (r < 0)
		snprintf(err, errlen, "cannot read %s: %s", what(fc),
		    strerror(-r));
	return r < 0 ? r : 0;
}
