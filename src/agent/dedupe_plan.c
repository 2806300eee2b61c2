/*
 * What the restart's read looks for (dedupe_int.h): per stream of the
 * flows whose partition keys carry record ids, the files whose records
 * may be in it -- every entry of the state file, and every file of the
 * flow's pattern now that the state file does not name yet, since a file
 * first seen after the last save (the one a rotation just made, being
 * written when the host went down) was read from 0 by the crashed run
 * and its records carry ids of its identity -- each as the file parts of
 * the ids its records may carry.
 */
#include "config.h"

#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/dedupe.h"
#include "agent/dedupe_int.h"
#include "base/log.h"
#include "base/util.h"
#include "conf/conf.h"
#include "tail/tailer.h"
#include "files/watcher.h"
#include "tail/zsource.h"
#include "records/keyid.h"
#include "records/partkey.h"
#include "state/registry.h"

static bool
flow_reads_back(const struct conf_flow *fc)
{
	struct partkey	*pk;
	bool		 ids;

	pk = partkey_new(fc->partition_key_option);
	ids = partkey_carries_id(pk);
	partkey_free(pk);
	return ids;
}

/* The state file's name of fc's stream: "NAME", or "id:ID". */
static void
stream_key(const struct conf_flow *fc, char *out, size_t len)
{
	if (fc->stream_id[0] != '\0')
		snprintf(out, len, "id:%s", fc->stream_id);
	else
		snprintf(out, len, "%s", fc->stream);
}

struct collect {
	struct dd_stream *st;
	const struct conf_flow *fc;
	const struct hash_key *agent;
	struct registry	*reg;
	size_t		 nnew;		/* files the state does not name */
	bool		 whole;		/* a file moved, gone or spooled */
	const char	*was;		/* its name in the state file, when
					   this start renamed it, or NULL */
};

/*
 * The whole head of e's file as it is now, into *crc, when the file at
 * its path is still e's (device, inode, the head e saved) and has hb
 * bytes.
 */
static bool
whole_head(const struct reg_entry *e, uint32_t hb, uint32_t *crc)
{
	struct stat	 st;
	uint32_t	 c;

	if (stat(e->path, &st) != 0 || (uint64_t)st.st_dev != e->dev ||
	    (uint64_t)st.st_ino != e->ino || (uint64_t)st.st_size < hb)
		return false;
	if (tailer_head_crc(e->path, e->fp_len, &c) != 0 || c != e->fp_crc)
		return false;
	return tailer_head_crc(e->path, hb, crc) == 0;
}

/*
 * Whether e's file can have records on their way: its bytes past the
 * committed offset the state file saved are what the crashed run may have
 * sent.  None when the file at e's path is e's, with its head, and ends at
 * that offset (1).  When it is elsewhere or gone (or e is a spool file's),
 * which of the flow's files it is cannot be told (-1: the whole flow is
 * held).
 */
static int
maybe_sent(const struct reg_entry *e)
{
	struct stat	 st;
	uint32_t	 c;

	if (reg_spool(e) != NULL || stat(e->path, &st) != 0 ||
	    (uint64_t)st.st_dev != e->dev || (uint64_t)st.st_ino != e->ino)
		return -1;
	if (zsource_name_compressed(e->path) ||
	    (uint64_t)st.st_size != e->offset)
		return 1;
	if (e->fp_len > 0 && (tailer_head_crc(e->path, e->fp_len, &c) != 0 ||
	    c != e->fp_crc))
		return 1;
	return 0;
}

/* The file parts of the ids a file of fc may have given its records:
 * with its whole head (crc of hb bytes) once it had them, and without. */
static struct dd_file *
add_files(struct dd_stream *st, const struct collect *c, uint64_t dev,
    uint64_t ino, bool full, uint32_t crc, uint64_t offset, bool held)
{
	struct dd_file	*f = NULL;
	uint32_t	 hb = (uint32_t)c->fc->header_bytes;
	int		 i;

	/* The ids of records within the first headerBytesLength bytes of a
	 * file that was shorter then leave the head out.  A flow renamed
	 * at this start: the run before gave its ids the old name. */
	for (i = full ? 0 : 1; i < (c->was != NULL ? 4 : 2); i++) {
		if (i == 2 && !full)
			continue;
		st->files = xrealloc(st->files, (st->nfiles + 1) * sizeof(*f));
		f = &st->files[st->nfiles++];
		memset(f, 0, sizeof(*f));
		f->fid = keyid_file(c->agent, i < 2 ? c->fc->name : c->was,
		    dev, ino, i % 2 == 0, crc, hb);
		f->flow = c->fc->name;
		f->dev = dev;
		f->ino = ino;
		f->offset = offset;
		f->below = i % 2 == 0 ? UINT64_MAX : hb;
		f->held = held;
	}
	return f;
}

static void
collect_file(const struct reg_entry *e, void *arg)
{
	struct collect	*c = arg;
	uint32_t	 hb = (uint32_t)c->fc->header_bytes, crc = e->fp_crc;
	bool		 full = e->fp_len == hb;
	int		 sent;

	if (strcmp(e->flow, c->fc->name) != 0)
		return;
	/* A short head saved: the file may have grown a whole one since,
	 * which the ids of its later records carry (flow.c, key_file). */
	if (!full)
		full = whole_head(e, hb, &crc);
	sent = maybe_sent(e);
	if (sent < 0)
		c->whole = true;
	(void)add_files(c->st, c, e->dev, e->ino, full, crc, e->offset,
	    sent != 0);
}

/*
 * A file of fc's pattern now that the state file does not name: first
 * seen after the last save (a file rotation made), read from 0 by the
 * crashed run, which may have sent its records.  Its ids are those of its
 * identity now (device, inode, head); a record found makes it an entry at
 * offset 0 (dedupe.c, take), so that the flow reads it from there and
 * skips what landed.
 */
static void
on_candidate(void *arg, const char *path, const struct stat *sb)
{
	struct collect	*c = arg;
	struct dd_stream *st = c->st;
	uint32_t	 hb = (uint32_t)c->fc->header_bytes, crc, len;
	size_t		 i, first = st->nfiles;

	if (!S_ISREG(sb->st_mode) || sb->st_size == 0 ||
	    registry_find(c->reg, c->fc->name, (uint64_t)sb->st_dev,
	    (uint64_t)sb->st_ino) != NULL)
		return;
	len = (uint32_t)MIN((uint64_t)sb->st_size, (uint64_t)hb);
	if (tailer_head_crc(path, len, &crc) != 0)
		return;
	(void)add_files(st, c, (uint64_t)sb->st_dev, (uint64_t)sb->st_ino,
	    len == hb, crc, 0, true);
	for (i = first; i < st->nfiles; i++) {
		st->files[i].path = xstrdup(path);
		st->files[i].fp_crc = crc;
		st->files[i].fp_len = len;
	}
	c->nnew++;
}

/* The files of fc's pattern now that the state file does not name. */
static void
collect_new(struct dedupe *d, struct collect *c)
{
	struct watcher	*w;
	char		 err[256];

	if (c->fc->source == SOURCE_JOURNAL)
		return;
	w = watcher_new(d->loop, c->fc, NULL, NULL, err, sizeof(err));
	if (w == NULL)
		return;		/* the flow says why when it starts */
	(void)watcher_scan_now(w, on_candidate, c);
	watcher_free(w);
	if (c->nnew > 0)
		log_info("[%s] restart after a crash: %zu file%s the state "
		    "file does not name yet (first seen after its last save) "
		    "%s looked for too", c->fc->name, c->nnew,
		    c->nnew == 1 ? "" : "s", c->nnew == 1 ? "is" : "are");
}

static int
file_cmp(const void *a, const void *b)
{
	const struct dd_file *x = a, *y = b;

	return x->fid < y->fid ? -1 : x->fid > y->fid;
}

const struct dd_file *
dedupe_find_file(const struct dd_stream *st, uint64_t fid)
{
	size_t	 lo = 0, hi = st->nfiles, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (st->files[mid].fid < fid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < st->nfiles && st->files[lo].fid == fid ?
	    &st->files[lo] : NULL;
}

static void
add_held(struct dedupe *d, const char *flow, uint64_t dev, uint64_t ino)
{
	struct dd_held	*h;

	d->held = xrealloc(d->held, (d->nheld + 1) * sizeof(*h));
	h = &d->held[d->nheld++];
	h->dev = dev;
	h->ino = ino;
	h->flow = flow;
}

/*
 * What of fc the read holds (its files st->files[from..]): the files
 * whose records may be on their way, or all of them when which cannot be
 * told (c->whole; a whole-file flow, which hands files out by itself).
 */
static void
hold_flow(struct dedupe *d, const struct collect *c, size_t from)
{
	struct dd_stream *st = c->st;
	bool		 whole = c->whole || !c->fc->file_appendable;
	size_t		 i, n = 0;

	/* A file's ids are side by side (add_files): it is added once. */
	for (i = from; i < st->nfiles; i++) {
		if (whole)
			st->files[i].held = true;
		else if (st->files[i].held && (i == from ||
		    st->files[i].dev != st->files[i - 1].dev ||
		    st->files[i].ino != st->files[i - 1].ino)) {
			add_held(d, c->fc->name, st->files[i].dev,
			    st->files[i].ino);
			n++;
		}
	}
	if (whole && st->nfiles > from) {
		add_held(d, c->fc->name, 0, 0);
		d->nwhole++;
		st->nheld++;
		log_info("[%s] restart after a crash: a file the state file "
		    "names is no longer at its path (moved, gone, or spooled) "
		    "or the flow sends whole files: which of its files have "
		    "records on their way cannot be told, so the flow waits "
		    "for the whole read", c->fc->name);
	}
	st->nheld += n;
}

static int
held_cmp(const void *a, const void *b)
{
	const struct dd_held *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

bool
dedupe_holds(void *arg, const char *flow, uint64_t dev, uint64_t ino)
{
	const struct dedupe *d = arg;
	size_t		 lo = 0, hi = d->nheld, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (d->held[mid].dev < dev || (d->held[mid].dev == dev &&
		    d->held[mid].ino < ino))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < d->nheld && d->held[lo].dev == dev &&
	    d->held[lo].ino == ino; lo++)
		if (strcmp(d->held[lo].flow, flow) == 0)
			return true;
	return false;
}

/* The stream of key in d, added when new. */
static struct dd_stream *
stream_of(struct dedupe *d, const char *key, bool by_id, bool copy)
{
	struct dd_stream *st;
	size_t		 i;

	for (i = 0; i < d->nstreams; i++)
		if (strcmp(d->streams[i].key, key) == 0)
			return &d->streams[i];
	d->streams = xrealloc(d->streams, (d->nstreams + 1) * sizeof(*st));
	st = &d->streams[d->nstreams++];
	memset(st, 0, sizeof(*st));
	st->d = d;
	if (copy)
		key = st->own_key = xstrdup(key);
	st->key = key;
	st->by_id = by_id;
	return st;
}

/*
 * The flows that write records with ids, grouped by stream, each with its
 * files; a flow whose keys cannot carry ids is named (its in-flight
 * records are sent again).  The streams' keys point into run.
 */
void
dedupe_plan(struct dedupe *d, const struct reg_run *run)
{
	const struct conf_flow *fc;
	const struct reg_stream *rs;
	struct collect	 c;
	char		 key[128];
	size_t		 i, first;

	for (i = 0; i < d->conf->nflows; i++) {
		fc = &d->conf->flows[i];
		/* A journal flow's records carry no id: it resends what
		 * it sent after its last saved cursor. */
		if (!fc->enable || fc->source == SOURCE_JOURNAL)
			continue;
		if (!flow_reads_back(fc)) {
			log_info("[%s] restart after a crash: "
			    "partitionKeyOption = %s gives its records no id, "
			    "so what it sent after the last save is sent again",
			    fc->name, fc->partition_key_option);
			continue;
		}
		stream_key(fc, key, sizeof(key));
		rs = reg_run_stream(run, key);
		if ((rs == NULL || rs->n == 0) && d->since_ms == 0) {
			log_info("[%s] restart after a crash: the state file "
			    "has no sequence numbers of stream [%s], so what "
			    "was sent after the last save is sent again",
			    fc->name, key);
			continue;
		}
		c.st = stream_of(d, rs != NULL ? rs->name : key,
		    fc->stream_id[0] != '\0', rs == NULL);
		c.fc = fc;
		c.agent = &d->agent;
		c.reg = d->reg;
		c.nnew = 0;
		c.whole = false;
		c.was = registry_flow_desc(d->reg, fc->name) != NULL ?
		    registry_flow_desc(d->reg, fc->name)->was : NULL;
		first = c.st->nfiles;
		registry_each(d->reg, collect_file, &c);
		collect_new(d, &c);
		hold_flow(d, &c, first);
	}
	if (d->nheld > 1)
		qsort(d->held, d->nheld, sizeof(*d->held), held_cmp);
	for (i = 0; i < d->nstreams; i++)
		if (d->streams[i].nfiles > 1)
			qsort(d->streams[i].files, d->streams[i].nfiles,
			    sizeof(*d->streams[i].files), file_cmp);
}

