/*
 * The restart's read (dedupe.h).  One reader per partition
 * (dis/partread.h): after the saved sequence number to its end, or past
 * the time the crashed run's requests could land; at most MAX_ACTIVE
 * partitions at once.  A record of ours is noted in its file's registry
 * entry; a reader that fails ends its stream's read (fall back to
 * resending).  The partitions of a stream the state cannot name are
 * probed first.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/dedupe.h"
#include "agent/dedupe_int.h"
#include "base/closer.h"
#include "base/hash.h"
#include "base/log.h"
#include "base/notify.h"
#include "conf/conf.h"
#include "dis/disapi.h"
#include "dis/http.h"
#include "dis/partread.h"
#include "tail/tailer.h"
#include "records/keyid.h"
#include "records/partkey.h"
#include "state/registry.h"
#include "wire/codec.h"
#include "wire/codec_read.h"

#define MAX_ACTIVE	8		/* partitions read at once */
#define POLL_MS		300		/* at the end, before land_by */
#define MAX_RESPONSE	(64 * 1024 * 1024)

static void	start_parts(struct dedupe *);
static void	on_finished(uv_timer_t *);

/* Free d and its streams (nothing refers to them any more). */
static void
destroy(struct closer *c)
{
	struct dedupe	*d = container_of(c, struct dedupe, closer);
	struct dd_stream *st;
	size_t		 i, j;

	for (i = 0; i < d->nstreams; i++) {
		st = &d->streams[i];
		for (j = 0; j < st->nparts; j++)
			partread_cleanup(&st->parts[j].r);
		free(st->parts);
		for (j = 0; j < st->nfiles; j++)
			free(st->files[j].path);
		free(st->files);
		free(st->probed);
		free(st->own_key);
	}
	free(d->streams);
	free(d->held);
	free(d);
}

/* A request of d ended.  False when d is gone (or going). */
static bool
unref(struct dedupe *d)
{
	return !closer_drop(&d->closer) && !d->freed;
}

static void	on_part_record(void *, const struct codec_record *,
		    struct buf *);
static void	on_part_end(void *, const char *);

/*
 * Part j of st: partition part, read after floor, or from the time the
 * crashed run started when the state has none (then true).
 */
static bool
make_part(struct dd_stream *st, size_t j, int32_t part, int64_t floor)
{
	struct dd_part	*p = &st->parts[j];
	struct dedupe	*d = st->d;
	struct partread_opts o;

	p->st = st;
	p->part = part;
	o.param = st->by_id ? "stream-id" : "stream-name";
	o.stream = st->by_id ? st->key + 3 : st->key;
	o.part = part;
	o.after = floor == REG_SEQ_NONE ? -1 : floor;
	o.at_ms = floor == REG_SEQ_NONE ? d->since_ms : -1;
	o.past_ms = d->until_ms;
	o.wait_until = d->wait_until;
	o.poll_ms = POLL_MS;
	partread_init(&p->r, d->loop, d->api, &d->closer, &o,
	    &(struct partread_cbs){ on_part_record, on_part_end, p });
	return floor == REG_SEQ_NONE;
}

/*
 * Turn the planned streams into partition readers.  A stream whose
 * partitions the state cannot all name (the floors of a streamId come
 * from acknowledgements only, and there may be none yet) has them probed
 * first: until then it counts as one partition left.
 */
static void
make_parts(struct dedupe *d, const struct reg_run *run)
{
	const struct reg_stream *rs;
	struct dd_stream *st;
	size_t		 i, j;

	for (i = 0; i < d->nstreams; i++) {
		st = &d->streams[i];
		rs = reg_run_stream(run, st->key);
		if (st->nheld == 0) {
			/* Every file ended at its saved offset: nothing of
			 * the stream's flows can be on its way. */
			log_info("restart read of stream [%s]: not needed, "
			    "no file of its flows has bytes past the offset "
			    "the state file saved (nothing was in flight)",
			    st->key);
			continue;
		}
		if (d->since_ms > 0 && (st->by_id || rs == NULL ||
		    rs->n == 0)) {
			st->probing = true;
			st->left = 1;
			d->left++;
			continue;
		}
		st->parts = xcalloc(rs->n, sizeof(*st->parts));
		st->nparts = st->left = rs->n;
		d->left += rs->n;
		for (j = 0; j < rs->n; j++)
			(void)make_part(st, j, rs->seq[j].part,
			    rs->seq[j].last);
	}
}

/* --- the end of a part, of a stream ------------------------------------ */

static void
stream_done(struct dd_stream *st)
{
	struct dedupe	*d = st->d;
	double		 s = (double)(mono_ms() - d->t0) / 1000.0;

	if (st->failed)
		return;		/* said so already */
	log_info("restart read of stream [%s]: %zu partition%s, %" PRIu64
	    " records read in %.2f s after the sequence numbers the state "
	    "file kept (%.2f s of it waiting at the end for requests of the "
	    "crashed run that could still land); %" PRIu64 " of them sent by "
	    "this agent before the crash, not sent again", st->key,
	    st->nparts, st->nparts == 1 ? "" : "s", st->read, s,
	    (double)d->waited_ms / 1000.0, st->ours);
}

static void
on_finished(uv_timer_t *t)
{
	struct dedupe	*d = container_of(t, struct dedupe, deadline);

	if (d->nheld > 0)
		log_info("the restart's read is over after %.2f s: the %zu "
		    "file%s and %zu flow%s it held are read now, skipping the "
		    "records found to have landed", (double)(mono_ms() - d->t0) / 1000.0,
		    d->nheld - d->nwhole, d->nheld - d->nwhole == 1 ? "" : "s",
		    d->nwhole, d->nwhole == 1 ? "" : "s");
	if (d->done != NULL)
		d->done(d->done_arg);
}

/* One of st's partitions (or its probe) is done. */
static void
left_less(struct dd_stream *st)
{
	struct dedupe	*d = st->d;

	d->left--;
	if (--st->left == 0)
		stream_done(st);
	start_parts(d);
	/* The end is told from the loop, not from within a reply. */
	if (d->left == 0 && !d->freed)
		uv_timer_start(&d->deadline, on_finished, 0, 0);
}

static void
part_done(struct dd_part *p)
{
	struct dedupe	*d = p->st->d;

	if (p->state == DD_DONE)
		return;
	if (p->state == DD_ACTIVE)
		d->active--;
	p->state = DD_DONE;
	d->waited_ms = MAX(d->waited_ms, partread_waited_ms(&p->r));
	partread_stop(&p->r);
	left_less(p->st);
}

/*
 * Give up on the stream: what was found stays found (those records did
 * land); the rest of what the crashed run sent is sent again.
 */
static void
stream_fail(struct dd_stream *st, const char *why)
{
	size_t	 i;

	if (st->failed)
		return;
	log_info("restart read of stream [%s]: %s; what was sent after the "
	    "last save and not found (%" PRIu64 " found so far) is sent "
	    "again", st->key, why, st->ours);
	st->failed = true;
	if (st->probing) {
		st->probing = false;
		left_less(st);
	}
	for (i = 0; i < st->nparts; i++)
		part_done(&st->parts[i]);
}

/* --- reading the partitions ------------------------------------------- */

static const char *
stream_param(const struct dd_stream *st)
{
	return st->by_id ? "stream-id" : "stream-name";
}

static const char *
stream_value(const struct dd_stream *st)
{
	return st->by_id ? st->key + 3 : st->key;
}

static void
start_parts(struct dedupe *d)
{
	struct dd_part	*p;
	size_t		 i, j;

	if (d->freed)
		return;
	for (i = 0; i < d->nstreams && d->active < MAX_ACTIVE; i++)
		for (j = 0; j < d->streams[i].nparts &&
		    d->active < MAX_ACTIVE; j++) {
			p = &d->streams[i].parts[j];
			if (p->state != DD_QUEUED)
				continue;
			p->state = DD_ACTIVE;
			d->active++;
			partread_start(&p->r);
		}
}

/* partread_cbs: a record read back; one of ours is noted for its file. */
static void
on_part_record(void *arg, const struct codec_record *rec, struct buf *data)
{
	struct dd_part	*p = arg;
	struct dd_stream *st = p->st;
	const struct dd_file *f;
	struct reg_entry *e;
	uint64_t	 fid, off;
	uint32_t	 off32;

	st->read++;
	/* A file not held has nothing on its way: its records here are
	 * acknowledged ones, or this run's. */
	if (rec->key == NULL ||
	    !keyid_find(rec->key, strlen(rec->key), &fid, &off32) ||
	    (f = dedupe_find_file(st, fid)) == NULL || !f->held)
		return;
	buf_reset(data);
	if (codec_base64_decode(rec->data64, rec->data64_len, data) != 0)
		return;
	e = registry_find(st->d->reg, f->flow, f->dev, f->ino);
	/* A file the state file did not name: its entry from now on, at
	 * offset 0, where the crashed run began it. */
	if (e == NULL && f->path != NULL)
		e = registry_set(st->d->reg, f->flow, f->dev, f->ino,
		    f->fp_crc, f->fp_len, f->path, 0);
	if (e == NULL)
		return;
	off = keyid_offset(off32, f->offset);
	if (off >= f->below)
		return;
	registry_add_found(e, off, keyid_data(data->data, data->len),
	    (uint32_t)data->len);
	st->ours++;
}

/* partread_cbs: the partition is read past the landing bound, or the
 * stream is given up on. */
static void
on_part_end(void *arg, const char *fail)
{
	struct dd_part	*p = arg;

	if (fail != NULL)
		stream_fail(p->st, fail);
	else
		part_done(p);
}

/* --- the partitions of a stream the state cannot name ----------------- */

#define MAX_PROBE	1024		/* partitions probed, at most */

static void	on_probe(const struct http_response *, void *);

static void
probe_next(struct dd_stream *st)
{
	struct disapi_call c;
	struct dedupe	*d = st->d;
	struct buf	 q;
	char		 why[160];
	int		 rc;

	buf_init(&q);
	buf_printf(&q, "%s=%s&partition-id=shardId-%010" PRId32
	    "&cursor-type=AT_TIMESTAMP&timestamp=%" PRId64, stream_param(st),
	    stream_value(st), st->probe, d->since_ms);
	memset(&c, 0, sizeof(c));
	c.method = "GET";
	c.path = "cursors/";
	c.query = q.data;
	c.max_response = MAX_RESPONSE;
	rc = disapi_send(d->api, &c, on_probe, st);
	buf_cleanup(&q);
	if (rc == 0) {
		closer_hold(&d->closer);
		return;
	}
	snprintf(why, sizeof(why), "cannot send cursors/: %s",
	    rc == -EKEYEXPIRED ? disapi_key_error(d->api) : strerror(-rc));
	stream_fail(st, why);
}

/* Every partition of st is known: read each, after its floor where the
 * state has one, else from the time the crashed run started. */
static void
probe_over(struct dd_stream *st)
{
	const struct reg_stream *rs = reg_run_stream(st->d->run, st->key);
	struct dedupe	*d = st->d;
	size_t		 j, n = 0;

	st->parts = xcalloc(st->nprobed + 1, sizeof(*st->parts));
	st->nparts = st->nprobed;
	st->left += st->nparts;
	d->left += st->nparts;
	for (j = 0; j < st->nparts; j++) {
		n += make_part(st, j, st->probed[j], rs != NULL ?
		    reg_stream_get(rs, st->probed[j]) : REG_SEQ_NONE);
	}
	log_info("restart read of stream [%s]: %zu partition%s, %zu of them "
	    "without a sequence number in the state file (none acknowledged "
	    "there yet): read from the time the crashed run started, less "
	    "%d s for the clocks", st->key, st->nparts,
	    st->nparts == 1 ? "" : "s", n, DEDUPE_SKEW_MS / 1000);
	st->probing = false;
	left_less(st);		/* the probe's place */
}

static void
on_probe(const struct http_response *r, void *arg)
{
	struct dd_stream *st = arg;
	char		 code[32] = "", msg[160] = "", why[320];

	if (!unref(st->d) || !st->probing)
		return;
	if (r->result == HTTP_OK && r->status == 200) {
		st->probed = xrealloc(st->probed, (st->nprobed + 1) *
		    sizeof(*st->probed));
		st->probed[st->nprobed++] = st->probe;
	}
	if (r->result == HTTP_OK && r->status == 400)
		(void)codec_parse_error(r->body, r->bodylen, code,
		    sizeof(code), msg, sizeof(msg));
	/* Past the last partition: all are known.  An expired one is not
	 * read (nothing can land there). */
	if (strcmp(code, "DIS.4302") == 0 || st->probe + 1 >= MAX_PROBE) {
		probe_over(st);
		start_parts(st->d);
		return;
	}
	if ((r->result == HTTP_OK && r->status == 200) ||
	    strcmp(code, "DIS.4319") == 0) {
		st->probe++;
		probe_next(st);
		return;
	}
	snprintf(why, sizeof(why), "its partitions could not be listed "
	    "(GetCursor of partition %" PRId32 ": %s %ld %s %s)", st->probe,
	    r->result != HTTP_OK ? (r->error ? r->error : "error") : "HTTP",
	    r->status, code, msg);
	stream_fail(st, why);
}

static void
probe_all(struct dedupe *d)
{
	size_t	 i;

	for (i = 0; i < d->nstreams; i++)
		if (d->streams[i].probing)
			probe_next(&d->streams[i]);
}

/* --- lifetime ----------------------------------------------------------- */

/* Whether the state asks for a read at all; logs why not. */
static bool
wanted(const struct conf *conf, const struct reg_run *run, size_t nentries)
{
	if (run == NULL) {
		if (nentries > 0)
			log_info("the state file has no run information (an "
			    "earlier release wrote it): records sent after "
			    "its last save are sent again");
		return false;
	}
	if (run->clean) {
		log_info("the previous run made a clean stop: acknowledged "
		    "records are not sent again, nothing to read back");
		return false;
	}
	if (strcmp(conf->dedupe_on_restart, "off") == 0) {
		log_info("the previous run did not stop cleanly; "
		    "dedupeOnRestart = off: what it sent after its last save "
		    "is sent again");
		return false;
	}
	return true;
}

/*
 * Until when a request of the crashed run may land: the lease of its last
 * save (no request went out that the state on disk did not cover), and no
 * later than socketTimeOutSeconds after this start, since that run was
 * gone before this one took the state file's lock.
 */
static int64_t
land_by(const struct conf *conf, const struct reg_run *run)
{
	return MIN(run->land_by_ms, wall_ms() + conf->socket_timeout_s * 1000);
}

static void
on_deadline(uv_timer_t *t)
{
	struct dedupe	*d = container_of(t, struct dedupe, deadline);
	size_t		 i;
	char		 why[64];

	snprintf(why, sizeof(why), "not read within %.0f s",
	    (double)(mono_ms() - d->t0) / 1000.0);
	for (i = 0; i < d->nstreams; i++)
		if (d->streams[i].left > 0)
			stream_fail(&d->streams[i], why);
}

struct dedupe *
dedupe_start(uv_loop_t *loop, struct disapi *api, const struct conf *conf,
    struct registry *reg, const struct hash_key *agent,
    void (*done)(void *), void *arg)
{
	const struct reg_run *run = registry_run(reg);
	struct dedupe	*d;
	uint64_t	 total;
	char		 ext[64];

	if (!wanted(conf, run, registry_count(reg)))
		return NULL;
	d = xcalloc(1, sizeof(*d));
	d->loop = loop;
	d->api = api;
	d->conf = conf;
	d->reg = reg;
	d->agent = *agent;
	d->t0 = mono_ms();
	d->until_ms = run->land_by_ms + DEDUPE_SKEW_MS;
	d->run = run;
	if (run->started_ms > DEDUPE_SKEW_MS)
		d->since_ms = run->started_ms - DEDUPE_SKEW_MS;
	d->wait_until = land_by(conf, run);
	d->done = done;
	d->done_arg = arg;
	log_info("the previous run did not stop cleanly (a crash, or "
	    "requests left on the wire); reading back what it sent after its "
	    "last save (up to %" PRId64 " ms after it)",
	    run->land_by_ms - run->saved_ms);
	uv_timer_init(loop, &d->deadline);
	closer_init(&d->closer, destroy);
	dedupe_plan(d, run);
	make_parts(d, run);
	if (d->left == 0) {
		dedupe_free(d);
		return NULL;
	}
	if (d->wait_until > wall_ms())
		log_info("a request of the previous run may still land for "
		    "%.1f s (its last save's lease, %lld s of "
		    "socketTimeOutSeconds after this start): the read waits "
		    "that long at each partition's end; the flows start once "
		    "it is there, and only the %zu file%s and %zu flow%s whose "
		    "records may be on their way wait for its end",
		    (double)(d->wait_until - wall_ms()) / 1000.0,
		    conf->socket_timeout_s, d->nheld - d->nwhole,
		    d->nheld - d->nwhole == 1 ? "" : "s", d->nwhole,
		    d->nwhole == 1 ? "" : "s");
	total = DEDUPE_MAX_MS + (uint64_t)MAX(d->wait_until - wall_ms(), 0);
	uv_timer_start(&d->deadline, on_deadline, total, 0);
	/* READY=1 comes after the read: systemd's start timeout (90 s by
	 * default) must cover it, the wait for late requests included. */
	snprintf(ext, sizeof(ext), "EXTEND_TIMEOUT_USEC=%" PRIu64,
	    (total + 10000) * 1000);
	(void)notify_send(ext);
	(void)notify_status("reading back what the previous run sent before "
	    "its crash (up to %" PRIu64 " s)", total / 1000);
	probe_all(d);
	start_parts(d);
	return d;
}

bool
dedupe_done(const struct dedupe *d)
{
	return d == NULL || d->left == 0;
}

bool
dedupe_ready(const struct dedupe *d)
{
	const struct dd_part *p;
	size_t		 i, j;

	for (i = 0; d != NULL && i < d->nstreams; i++) {
		if (d->streams[i].probing)
			return false;
		for (j = 0; j < d->streams[i].nparts; j++) {
			p = &d->streams[i].parts[j];
			if (p->state != DD_DONE && !partread_at_end(&p->r))
				return false;
		}
	}
	return true;
}

void
dedupe_free(struct dedupe *d)
{
	struct dd_stream *st;
	size_t		 i, j;

	if (d == NULL)
		return;
	d->freed = true;	/* nothing starts any more */
	for (i = 0; i < d->nstreams; i++)
		if (d->streams[i].left > 0)
			stream_fail(&d->streams[i], "stopped before it was read");
	/* The close callbacks, and the replies of requests still on the
	 * wire (the http client cancels them), release the rest. */
	closer_close(&d->closer, (uv_handle_t *)&d->deadline);
	for (i = 0; i < d->nstreams; i++) {
		st = &d->streams[i];
		for (j = 0; j < st->nparts; j++)
			partread_close(&st->parts[j].r);
	}
	closer_release(&d->closer);
}
