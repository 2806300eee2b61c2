/*
 * A flow's files as its source (source.h): the tailers files.h hands out,
 * read into the flow's read window and framed into records by the flow's
 * framer, and what waits for a file to be quiet -- a pending multi-line
 * record (multiLineFlushMillis), a last line without delimiter
 * (isMissLastRecordDelimiter), the end of a whole file -- sent by a timer,
 * or at once by --once at the end of the data.  A record's watermark
 * position is its end offset in its file.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "agent/source.h"
#include "agent/source_files.h"
#include "base/closer.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/util.h"
#include "conf/conf.h"
#include "conf/ctrconf.h"
#include "files/files.h"
#include "tail/skipplan.h"
#include "tail/tailer.h"
#include "records/framer.h"
#include "records/keyid.h"

#define READ_CHUNK	(256u * 1024)

struct source_files {
	struct source	 src;		/* the interface */
	const struct conf_flow *fc;
	struct files	*files;
	struct framer	*fr;		/* record framing options, compiled */
	struct readbuf	 rb;		/* read window */
	struct tailer	*reading;	/* the tailer being framed */
	struct tailer_quiet quiet;	/* when records waiting for quiet go */
	struct metrics_flow *m;
	struct source_cbs cbs;
	bool		 once;
	size_t		 max_record;	/* of the read under way */
	uv_timer_t	 quiet_timer;	/* multi-line flush, last line */
	struct closer	 closer;	/* the timer being closed */
	uint64_t	 kid_tailer;	/* the file part of the ids of */
	uint32_t	 kid_fplen;	/* this tailer at this fingerprint */
	uint64_t	 kid_file;
	bool		 skipped;	/* a record was skipped as known
					   delivered (skip_known, sf_add) */
	/* source = containers, json records: each file's metadata members
	 * (conf/ctrconf.h), found once a file, by tailer id. */
	struct sf_meta	*meta;
	size_t		 nmeta, meta_last;
	struct buf	 rec;		/* a record with them */
};

/* A file's metadata members, json (ctrconf_meta_json). */
struct sf_meta {
	uint64_t	 tailer;
	char		*json;
};

/* Forget them all past this many files; each is found again on use. */
#define META_KEEP	4096

static struct source_files *
sf_of(struct source *s)
{
	return container_of(s, struct source_files, src);
}

static const struct source_files *
csf_of(const struct source *s)
{
	return container_of(s, const struct source_files, src);
}

static bool
is_open(const struct source_files *sf)
{
	return sf->cbs.open(sf->cbs.arg);
}

static void
meta_clear(struct source_files *sf)
{
	size_t	 i;

	for (i = 0; i < sf->nmeta; i++)
		free(sf->meta[i].json);
	free(sf->meta);
	sf->meta = NULL;
	sf->nmeta = 0;
}

/* The metadata members of t's container ("" when its path names none). */
static const char *
meta_of(struct source_files *sf, struct tailer *t)
{
	struct ctrconf_meta m;
	struct buf	 b;
	size_t		 i;
	char		*json;

	/* Records come a file at a time: the last one found first. */
	if (sf->meta_last < sf->nmeta &&
	    sf->meta[sf->meta_last].tailer == tailer_id(t))
		return sf->meta[sf->meta_last].json;
	for (i = sf->nmeta; i > 0; i--)
		if (sf->meta[i - 1].tailer == tailer_id(t)) {
			sf->meta_last = i - 1;
			return sf->meta[i - 1].json;
		}
	if (sf->nmeta == META_KEEP)
		meta_clear(sf);
	buf_init(&b);
	if (ctrconf_meta_of(sf->fc->ctr_dir, tailer_path(t), &m))
		ctrconf_meta_json(&m, &b);
	json = xstrndup(b.data != NULL ? b.data : "", b.len);
	buf_cleanup(&b);
	sf->meta = xrealloc(sf->meta, (sf->nmeta + 1) * sizeof(*sf->meta));
	sf->meta[sf->nmeta].tailer = tailer_id(t);
	sf->meta[sf->nmeta].json = json;
	sf->meta_last = sf->nmeta;
	return sf->meta[sf->nmeta++].json;
}

/* A container json record with its file's metadata before its '}'. */
static void
with_meta(struct source_files *sf, struct source_rec *r)
{
	const char	*meta;

	if (!framer_container_json(sf->fr) || framer_record_raw(sf->fr) ||
	    r->len == 0 || r->data[r->len - 1] != '}')
		return;
	meta = meta_of(sf, sf->reading);
	if (meta[0] == '\0')
		return;
	buf_reset(&sf->rec);
	buf_add(&sf->rec, r->data, r->len - 1);
	buf_addstr(&sf->rec, meta);
	buf_addc(&sf->rec, '}');
	r->data = sf->rec.data;
	r->len = sf->rec.len;
}

static void	skip_known(struct source_files *, const struct source_rec *,
		    bool found);

/*
 * framer_cb: one record of the tailer being framed, to the flow -- unless
 * a restart knows it delivered: inside the acknowledged spans the state
 * file kept, it is skipped here and the flow never sees it.  One the
 * restart's read found in the stream is known only by its data as sent,
 * which the flow's chain makes: the flow asks (source_files_found).
 */
static int
on_framed(void *arg, const char *data, size_t len, uint64_t start,
    uint64_t end)
{
	struct source_files *sf = arg;
	struct tailer	*t = sf->reading;
	struct skipplan	*plan = tailer_plan(t);
	struct source_rec r;

	r.data = data;
	r.len = len;
	r.name = r.origin_name = tailer_path(t);
	r.origin = tailer_id(t);
	r.off = start;
	r.end = r.commit = end;
	/* A record held back has an identity of its own past the held end:
	 * its bytes, for the ids, the spans and what a restart skips. */
	(void)framer_record_held(sf->fr, &r.off, &r.end);
	r.at = t;
	r.known = plan != NULL;
	with_meta(sf, &r);
	if (plan != NULL && skipplan_acked_from(plan, r.commit, r.off,
	    r.end)) {
		skip_known(sf, &r, false);
		return 0;
	}
	return sf->cbs.record(sf->cbs.arg, &r);
}

/* --- records that wait for quiet ---------------------------------------- */

struct quiet_pass {
	struct source_files *sf;
	uint64_t	 now;	/* 0: at once */
	bool		 more;	/* something still waits */
};

static bool
flush_one(struct tailer *t, void *arg)
{
	struct quiet_pass *q = arg;
	struct source_files *sf = q->sf;
	struct tailer_quiet quiet = sf->quiet;
	uint64_t	 now = q->now;

	if (!is_open(sf))
		return false;
	if (!tailer_waits_for_quiet(t, sf->quiet.miss_last))
		return true;
	if (!sf->fc->file_appendable) {
		/* A whole file is complete up to its size when ready: what
		 * waits at its end goes at once, nothing before its end
		 * goes early, and nothing after it is read. */
		if (tailer_readable(t) && !tailer_stalled(t))
			return true;
		quiet.miss_last = tailer_readable(t);
		now = 0;
	}
	sf->reading = t;
	(void)tailer_flush_quiet(t, sf->fr, &sf->rb, sf->max_record, now,
	    &quiet, on_framed, sf);
	q->more = q->more || tailer_waits_for_quiet(t, sf->quiet.miss_last);
	return true;
}

static void
flush_quiet(struct source_files *sf, uint64_t now, bool *more)
{
	struct quiet_pass q = { sf, now, false };

	files_each_open(sf->files, flush_one, &q);
	if (more != NULL)
		*more = q.more;
}

static void
on_quiet_timer(uv_timer_t *h)
{
	struct source_files *sf = container_of(h, struct source_files,
	    quiet_timer);
	bool		 more;

	flush_quiet(sf, mono_ms(), &more);
	if (!more && is_open(sf))
		uv_timer_stop(h);
}

struct quiet_find {
	bool	 miss_last;
	bool	 found;
};

static bool
find_waiting(struct tailer *t, void *arg)
{
	struct quiet_find *q = arg;

	q->found = tailer_waits_for_quiet(t, q->miss_last);
	return !q->found;
}

static void
arm_quiet_timer(struct source_files *sf)
{
	struct quiet_find q = { sf->quiet.miss_last, false };
	uint64_t	 ms;

	if (sf->once || uv_is_active((uv_handle_t *)&sf->quiet_timer))
		return;
	files_each_open(sf->files, find_waiting, &q);
	if (!q.found)
		return;
	ms = MIN(sf->quiet.flush_ms, sf->quiet.last_ms) / 2;
	uv_timer_start(&sf->quiet_timer, on_quiet_timer, MAX(ms, 50),
	    MAX(ms, 50));
}

/* --- reading ------------------------------------------------------------ */

static size_t
hold(const struct source_files *sf)
{
	/* What a crash can make us send twice stays bounded by about this
	 * many batches per file (lessons R3). */
	return (size_t)sf->fc->max_in_flight + 1;
}

/* Read until the flow refuses, nothing is left, or the turn's budget is
 * spent; whether nothing was left to read (a file held back by its ranges
 * in flight has something left: --once must not flush a batch that its
 * next read fills). */
static bool
read_some(struct source_files *sf, size_t *budget)
{
	struct tailer_read r;
	struct tailer	*t;
	long		 n;

	while (*budget > 0 && is_open(sf)) {
		t = files_next_readable(sf->files, hold(sf));
		if (t == NULL)
			return !files_held(sf->files, hold(sf));
		sf->reading = t;
		n = tailer_read(t, sf->fr, &sf->rb, READ_CHUNK,
		    sf->max_record, on_framed, sf, &r);
		sf->m->records_truncated += r.truncated;
		sf->m->container_malformed += r.malformed;
		sf->m->container_joined += r.joined;
		files_read_done(sf->files, t, n, !is_open(sf), r.committed);
		if (n > 0)
			*budget -= MIN(*budget, (size_t)n);
	}
	return false;
}

static bool
sf_read(struct source *s, size_t *budget, size_t max_record)
{
	struct source_files *sf = sf_of(s);
	bool		 all_read;

	sf->max_record = max_record;
	all_read = read_some(sf, budget);
	if ((sf->once || !sf->fc->file_appendable) && all_read && is_open(sf))
		flush_quiet(sf, 0, NULL);
	arm_quiet_timer(sf);
	return all_read;
}

/* --- the commit --------------------------------------------------------- */

/*
 * The batch's range of the file is extended only while it is the file's
 * newest: a record skipped as known delivered (skip_known) is a range of
 * its own, which ends it.  Until the first such skip none can have, and
 * the range is not asked.  A restart's plan moves past r.  A container
 * record held back enters the range at its held end; its own bytes are
 * noted with the range (tailer_note_held), kept once it is acknowledged.
 */
static bool
sf_add(struct source *s, const struct source_rec *r, uint64_t *range)
{
	struct source_files *sf = sf_of(s);
	bool		 opened = false;

	if (r->known)
		tailer_plan_passed(r->at, r->commit);
	if (*range != SOURCE_NO_RANGE && (!sf->skipped ||
	    *range == tailer_last_range(r->at)))
		tailer_extend(r->at, *range, r->commit);
	else {
		*range = tailer_push(r->at, r->commit);
		opened = true;
	}
	if (r->end > r->commit)
		tailer_note_held(r->at, *range, r->off, r->end);
	return opened;
}

static void
sf_skip(struct source *s, const struct source_rec *r)
{
	if (tailer_skip_to(r->at, r->commit))
		files_commit(sf_of(s)->files, r->at);
	if (r->end > r->commit)
		tailer_note_held(r->at, TAILER_HELD_DONE, r->off, r->end);
	tailer_plan_passed(r->at, r->commit);
}

/* --- what a restart knows (skipplan.h) ---------------------------------- */

/*
 * Done already (found: by the restart's read, else inside a span): a range
 * of its own, so no batch in flight takes it along (were that batch not
 * delivered, it would be sent again); counted as read and skipped.
 */
static void
skip_known(struct source_files *sf, const struct source_rec *r, bool found)
{
	sf->skipped = true;
	if (tailer_done_to(r->at, r->commit))
		files_commit(sf->files, r->at);
	if (r->end > r->commit)
		tailer_note_held(r->at, TAILER_HELD_DONE, r->off, r->end);
	tailer_plan_passed(r->at, r->commit);
	sf->m->records_read++;
	sf->m->bytes_read += r->len;
	sf->m->records_skipped[found]++;
}

bool
source_files_found(struct source_files *sf, const struct source_rec *r,
    const char *sent, size_t sentlen)
{
	struct skipplan	*plan = tailer_plan(r->at);

	if (plan == NULL || !skipplan_found_from(plan, r->commit, r->off, sent,
	    sentlen))
		return false;
	skip_known(sf, r, true);
	return true;
}

/*
 * The file part of the ids of a tailer's records (keyid.h), cached:
 * records of one file come in runs.  The head fingerprint counts once it
 * is whole, and it is made whole as soon as the file has the bytes
 * (instead of at the next commit), so that only records within its first
 * headerBytesLength bytes can carry an id without it (dedupe.c relies on
 * that to tell them from an earlier file with the same inode).
 */
bool
source_files_id_file(struct source_files *sf, const struct source_rec *r,
    const struct hash_key *k, uint64_t *file, bool *fixed)
{
	struct tailer	*t = r->at;
	uint32_t	 crc, len;

	tailer_head(t, &crc, &len);
	if (len < (uint32_t)sf->fc->header_bytes && r->end > len) {
		tailer_refresh_fingerprint(t);
		tailer_head(t, &crc, &len);
	}
	if (sf->kid_tailer != tailer_id(t) || sf->kid_fplen != len) {
		sf->kid_tailer = tailer_id(t);
		sf->kid_fplen = len;
		sf->kid_file = keyid_file(k, sf->fc->name, tailer_dev(t),
		    tailer_ino(t), len == (uint32_t)sf->fc->header_bytes, crc,
		    len);
	}
	*file = sf->kid_file;
	*fixed = len == (uint32_t)sf->fc->header_bytes;
	return true;
}

void
source_files_keep_acked(struct source_files *sf, const struct files_acked *v,
    size_t n)
{
	files_keep_acked(sf->files, v, n);
}

void
source_files_publish(struct source_files *sf, const struct files_acked *v,
    size_t n)
{
	files_publish(sf->files, v, n);
}

bool
source_files_restart_pending(struct source_files *sf)
{
	return files_restart_pending(sf->files);
}

void
source_files_release(struct source_files *sf)
{
	files_release(sf->files);
}

uint64_t
source_files_passes(const struct source_files *sf, uint64_t *gap_ms)
{
	return files_passes(sf->files, gap_ms);
}

void
source_files_pace(struct source_files *sf, uint64_t ms)
{
	files_pace(sf->files, ms);
}

static void
sf_ack(struct source *s, uint64_t origin, uint64_t range)
{
	files_ack(sf_of(s)->files, origin, range);
}

/* --- the rest of the interface ------------------------------------------ */

static int
sf_start(struct source *s)
{
	files_start(sf_of(s)->files);
	return 0;
}

static void
sf_stop(struct source *s)
{
	struct source_files *sf = sf_of(s);

	files_stop(sf->files);
	uv_timer_stop(&sf->quiet_timer);
}

static bool
sf_all_read(const struct source *s)
{
	const struct source_files *sf = csf_of(s);

	return files_all_read(sf->files, sf->quiet.miss_last);
}

static void
sf_gauges(const struct source *s, struct metrics_flow *m)
{
	files_gauges(csf_of(s)->files, m);
}

struct each_file {
	source_file_fn	 fn;
	void		*arg;
};

static void
each_tailer(const struct tailer *t, void *arg)
{
	struct each_file *e = arg;

	e->fn(tailer_path(t), tailer_committed(t), tailer_size(t), e->arg);
}

void
source_files_each(const struct source_files *sf, source_file_fn fn,
    void *arg)
{
	struct each_file e = { fn, arg };

	files_each(sf->files, each_tailer, &e);
}

static void
sf_touch(struct source *s)
{
	files_touch(sf_of(s)->files);
}

static void
sf_saved(struct source *s)
{
	files_saved(sf_of(s)->files);
}

struct files_handover *
source_files_hand_over(struct source_files *sf)
{
	return files_hand_over(sf->files);
}

size_t
source_files_adopt(struct source_files *sf, struct files_handover *h)
{
	return files_adopt(sf->files, h);
}

void
source_files_spool(struct source_files *sf, struct spool *sp)
{
	files_spool(sf->files, sp);
}

/* The timer closed: the memory goes. */
static void
sf_freed(struct closer *c)
{
	struct source_files *sf = container_of(c, struct source_files, closer);

	readbuf_cleanup(&sf->rb);
	framer_free(sf->fr);
	meta_clear(sf);
	buf_cleanup(&sf->rec);
	free(sf);
}

static void
sf_free(struct source *s)
{
	struct source_files *sf = sf_of(s);

	files_free(sf->files);
	sf->files = NULL;
	closer_close(&sf->closer, (uv_handle_t *)&sf->quiet_timer);
	closer_release(&sf->closer);
}

static const struct source_ops files_ops = {
	.start = sf_start,
	.stop = sf_stop,
	.free = sf_free,
	.read = sf_read,
	.add = sf_add,
	.skip = sf_skip,
	.ack = sf_ack,
	.all_read = sf_all_read,
	.gauges = sf_gauges,
	.touch = sf_touch,
	.saved = sf_saved,
};

struct source *
source_files_new(uv_loop_t *loop, const struct conf *conf,
    const struct conf_flow *fc, struct registry *reg, struct metrics_flow *m,
    bool keep_delim, bool once, const struct source_cbs *cbs, char *err,
    size_t errlen)
{
	struct source_files *sf;
	struct framer_opts fo;

	sf = xcalloc(1, sizeof(*sf));
	sf->src.ops = &files_ops;
	sf->src.files = sf;
	sf->fc = fc;
	sf->m = m;
	sf->cbs = *cbs;
	sf->once = once;
	/* Whole files: the last record goes without a delimiter too. */
	sf->quiet.miss_last = fc->miss_last_delimiter || !fc->file_appendable;
	sf->quiet.last_ms = (uint64_t)fc->max_file_checking_ms;
	sf->quiet.flush_ms = (uint64_t)fc->multiline_flush_ms;
	readbuf_init(&sf->rb);
	buf_init(&sf->rec);
	conf_framer_opts(fc, &fo);
	/* The chain sees records with their delimiter, as the DIS Agent's
	 * converters do, and drops it itself. */
	fo.keep_delim = fo.keep_delim || keep_delim;
	if (framer_new(&fo, &sf->fr, err, errlen) != 0)
		goto fail;
	sf->files = files_new(loop, conf, fc, reg, sf->fr, m, once,
	    cbs->readable, cbs->arg, err, errlen);
	if (sf->files == NULL)
		goto fail;
	uv_timer_init(loop, &sf->quiet_timer);
	closer_init(&sf->closer, sf_freed);
	return &sf->src;
fail:
	framer_free(sf->fr);
	readbuf_cleanup(&sf->rb);
	free(sf);
	return NULL;
}
