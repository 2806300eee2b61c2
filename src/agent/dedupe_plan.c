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

#include "agent/dedupe_int.h"
#include "base/log.h"
#include "base/util.h"
#include "conf/conf.h"
#include "files/tailer.h"
#include "files/watcher.h"
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

/* The file parts of the ids a file of fc may have given its records:
 * with its whole head (crc of hb bytes) once it had them, and without. */
static struct dd_file *
add_files(struct dd_stream *st, const struct collect *c, uint64_t dev,
    uint64_t ino, bool full, uint32_t crc, uint64_t offset)
{
	struct dd_file	*f = NULL;
	uint32_t	 hb = (uint32_t)c->fc->header_bytes;
	int		 i;

	/* The ids of records within the first headerBytesLength bytes of a
	 * file that was shorter then leave the head out. */
	for (i = full ? 0 : 1; i < 2; i++) {
		st->files = xrealloc(st->files, (st->nfiles + 1) * sizeof(*f));
		f = &st->files[st->nfiles++];
		memset(f, 0, sizeof(*f));
		f->fid = keyid_file(c->agent, c->fc->name, dev, ino, i == 0,
		    crc, hb);
		f->flow = c->fc->name;
		f->dev = dev;
		f->ino = ino;
		f->offset = offset;
		f->below = i == 0 ? UINT64_MAX : hb;
	}
	return f;
}

static void
collect_file(const struct reg_entry *e, void *arg)
{
	struct collect	*c = arg;
	uint32_t	 hb = (uint32_t)c->fc->header_bytes, crc = e->fp_crc;
	bool		 full = e->fp_len == hb;

	if (strcmp(e->flow, c->fc->name) != 0)
		return;
	/* A short head saved: the file may have grown a whole one since,
	 * which the ids of its later records carry (flow.c, key_file). */
	if (!full)
		full = whole_head(e, hb, &crc);
	(void)add_files(c->st, c, e->dev, e->ino, full, crc, e->offset);
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
	    len == hb, crc, 0);
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

	if (c->fc->source != SOURCE_FILES)
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

/* The stream of key in d, added when new. */
static struct dd_stream *
stream_of(struct dedupe *d, const char *key, bool by_id)
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
	size_t		 i;

	for (i = 0; i < d->conf->nflows; i++) {
		fc = &d->conf->flows[i];
		if (!fc->enable)
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
		if (rs == NULL || rs->n == 0) {
			log_info("[%s] restart after a crash: the state file "
			    "has no sequence numbers of stream [%s], so what "
			    "was sent after the last save is sent again",
			    fc->name, key);
			continue;
		}
		c.st = stream_of(d, rs->name, fc->stream_id[0] != '\0');
		c.fc = fc;
		c.agent = &d->agent;
		c.reg = d->reg;
		c.nnew = 0;
		registry_each(d->reg, collect_file, &c);
		collect_new(d, &c);
	}
	for (i = 0; i < d->nstreams; i++)
		if (d->streams[i].nfiles > 1)
			qsort(d->streams[i].files, d->streams[i].nfiles,
			    sizeof(*d->streams[i].files), file_cmp);
}

