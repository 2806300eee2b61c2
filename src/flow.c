/*
 * A flow: files matching filePattern -> tailers -> batches -> sink.
 *
 * Reading is pulled, never pushed: pump() reads from readable tailers only
 * while the flow has room (a batch being filled and fewer than
 * maxInFlightRequests batches out).  When the window is full, reading stops;
 * the files are the buffer, so memory stays flat during any outage (R11).
 * inotify (uv_fs_event) only cuts latency; the periodic rescan is what
 * correctness rests on (R8).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <zlib.h>

#include "conf.h"
#include "deadletter.h"
#include "flow.h"
#include "metrics.h"
#include "log.h"
#include "registry.h"
#include "sink.h"
#include "tailer.h"
#include "watcher.h"

#define PUMP_BUDGET	(8u * 1024 * 1024)	/* bytes per loop turn */
#define READ_CHUNK	(256u * 1024)
#define EVENT_DELAY_MS	10			/* coalesce fs events */

/* A new file whose head is that of a live file: maybe a copytruncate copy
 * taken before the truncation; it waits up to COPY_WAIT_MS for it. */
struct deferred {
	uint64_t	 dev;
	uint64_t	 ino;
	uint64_t	 since_ms;
};

#define COPY_MIN_HEAD	64	/* heads shorter than this prove nothing */
#define COPY_WAIT_MS	3000
#define NOT_A_COPY	UINT64_MAX
#define COPY_WAIT	(UINT64_MAX - 1)

struct flow {
	uv_loop_t	*loop;
	const struct conf *conf;
	const struct conf_flow *fc;
	struct registry	*reg;
	struct sink	*sink;
	struct deadletter *dlq;		/* records that can never go */
	struct watcher	*watcher;
	struct framer	*fr;		/* record framing options, compiled */
	char		 fr_err[256];
	struct tailer	*reading;	/* the tailer being framed */
	struct tailer	*tailers;
	size_t		 nopen;		/* tailers with a descriptor */
	size_t		 max_open;	/* maxOpenFiles, within RLIMIT_NOFILE */
	bool		 first_scan;
	bool		 warned_fds;
	struct deferred	 deferred[8];	/* maybe copies, waiting */
	bool		 warned_dir;
	struct tailer	*cursor;	/* round-robin position */
	struct batch	*cur;		/* being filled */
	struct batch	*out;		/* submitted, not done */
	struct readbuf	 rb;		/* read window */
	struct buf	 key;		/* partition key being built */
	struct mem_budget *mem;
	bool		 once;
	bool		 stopping;
	bool		 blocked;	/* window full */
	bool		 cancelled;
	bool		 pump_scheduled;
	uv_timer_t	 rescan_timer;
	uv_timer_t	 age_timer;
	uv_timer_t	 pump_timer;
	uv_timer_t	 quiet_timer;	/* multi-line flush, last line */
	int		 open_handles;
	struct flow_stats st;
	flow_cb		 cb;
	void		*arg;
};

static void	pump(struct flow *);
static void	balance_fds(struct flow *);
static void	schedule_pump(struct flow *);

/* --- partition keys (spec section 8) ------------------------------------ */

static void
md5_hex(const void *data, size_t len, char out[33])
{
	unsigned char	 md[16];
	unsigned int	 n = 0;
	int		 i;

	EVP_Digest(data, len, md, &n, EVP_md5(), NULL);
	for (i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

/* Decimal digits of v, without printf: this runs for every record. */
static void
add_uint(struct buf *b, unsigned v)
{
	char	 d[12];
	size_t	 i = sizeof(d);

	do
		d[--i] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	buf_add(b, d + i, sizeof(d) - i);
}

/* Expand partitionKeyOption for one record into key. */
static void
partition_key(const struct flow *f, const struct tailer *t, const char *data,
    size_t len, struct buf *key)
{
	const char	*list = f->fc->partition_key_option, *base;
	char		 tok[64], hex[33];

	buf_reset(key);
	/* The default, on every record: no tokenising. */
	if (strcmp(list, "RANDOM_INT") == 0) {
		add_uint(key, (unsigned)(rand_u64() % 1000000));
		return;
	}
	while (list_next(&list, tok, sizeof(tok))) {
		if (key->len > 0)
			buf_addc(key, ',');
		if (strcmp(tok, "RANDOM_INT") == 0)
			add_uint(key, (unsigned)(rand_u64() % 1000000));
		else if (strcmp(tok, "RANDOM_DOUBLE") == 0)
			buf_printf(key, "%.6f", rand_unit() * 1e6);
		else if (strcmp(tok, "FILE_NAME") == 0) {
			base = strrchr(t->path, '/');
			buf_addstr(key, base ? base + 1 : t->path);
		} else if (strcmp(tok, "DETERMINISTIC") == 0) {
			md5_hex(data, len, hex);
			buf_addstr(key, hex);
		} else
			buf_addstr(key, tok);
	}
}

/* --- batches and the window --------------------------------------------- */

static void
outstanding_add(struct flow *f, struct batch *b)
{
	b->flow_prev = NULL;
	b->flow_next = f->out;
	if (f->out != NULL)
		f->out->flow_prev = b;
	f->out = b;
}

static void
outstanding_remove(struct flow *f, struct batch *b)
{
	if (b->flow_prev != NULL)
		b->flow_prev->flow_next = b->flow_next;
	else
		f->out = b->flow_next;
	if (b->flow_next != NULL)
		b->flow_next->flow_prev = b->flow_prev;
	b->flow_next = b->flow_prev = NULL;
}

/* Hand the current batch to the sink if the window allows; false if not. */
static bool
flush_cur(struct flow *f)
{
	struct batch	*b = f->cur;

	if (b == NULL || b->nrecs == 0)
		return true;
	if (sink_pending(f->sink) >= sink_window(f->sink))
		return false;
	f->cur = NULL;
	uv_timer_stop(&f->age_timer);
	outstanding_add(f, b);
	sink_submit(f->sink, b);
	return true;
}

static void
on_age_timer(uv_timer_t *t)
{
	struct flow	*f = container_of(t, struct flow, age_timer);

	if (!flush_cur(f))
		f->blocked = true;
}

static bool
batch_full(const struct flow *f, const struct batch *b, size_t len)
{
	return b->nrecs >= (size_t)f->fc->max_buffer_records ||
	    (b->nrecs > 0 && b->data.len + len > sink_request_cap(f->sink));
}

static struct batch_seg *
seg_for(struct batch *b, struct tailer *t)
{
	size_t	 i;

	for (i = b->nsegs; i > 0; i--)
		if (b->segs[i - 1].tailer == t)
			return &b->segs[i - 1];
	return NULL;
}

/* tailer_record_cb: add one record, or refuse it when the window is full. */
static int
on_record(void *arg, const char *data, size_t len, uint64_t start_off,
    uint64_t end_off)
{
	struct flow	*f = arg;
	struct tailer	*t = f->reading;
	struct batch_seg *sg;

	if (f->cur != NULL && batch_full(f, f->cur, len) && !flush_cur(f)) {
		f->blocked = true;
		return 1;
	}
	/* The memory budget (R11): stop reading, the file keeps the data.
	 * A flow holding nothing may always take a record, so no flow
	 * starves. */
	if (f->mem->used >= f->mem->limit &&
	    ((f->cur != NULL && f->cur->nrecs > 0) ||
	    sink_pending(f->sink) > 0)) {
		f->blocked = true;
		return 1;
	}
	if (f->cur == NULL) {
		f->cur = batch_new(f->loop, f->mem);
		f->cur->created_ms = mono_ms();
		uv_timer_start(&f->age_timer, on_age_timer,
		    (uint64_t)f->fc->max_buffer_age_ms, 0);
	}
	sg = seg_for(f->cur, t);
	if (sg == NULL) {
		if (f->cur->nsegs == f->cur->capsegs) {
			f->cur->capsegs = f->cur->capsegs ?
			    f->cur->capsegs * 2 : 4;
			f->cur->segs = xrealloc(f->cur->segs,
			    f->cur->capsegs * sizeof(*f->cur->segs));
		}
		sg = &f->cur->segs[f->cur->nsegs++];
		sg->tailer = t;
		sg->wm_id = wm_push(&t->wm, end_off);
	} else
		wm_extend(&t->wm, sg->wm_id, end_off);
	partition_key(f, t, data, len, &f->key);
	batch_add(f->cur, data, len, f->key.data ? f->key.data : "",
	    (uint16_t)(sg - f->cur->segs), start_off);
	f->st.records_parsed++;
	f->st.bytes_parsed += len;
	return 0;
}

/*
 * The current batch, if it is due (full, its age timer fired, or the flow
 * stopping), goes out when the window has room; if not, the flow stays
 * blocked so that the next completion tries again.  Clearing the block
 * without this left a due batch waiting for a record that, at the end of a
 * file, never comes: its age timer had fired already.
 */
static void
retry_cur(struct flow *f)
{
	if (f->cur != NULL && (f->stopping || batch_full(f, f->cur, 0) ||
	    !uv_is_active((uv_handle_t *)&f->age_timer)) && !flush_cur(f))
		f->blocked = true;
}

/* --- commit ------------------------------------------------------------- */

static void
commit(struct flow *f, struct tailer *t)
{
	tailer_refresh_fingerprint(t);
	registry_set(f->reg, f->fc->name, t->dev, t->ino, t->fp_crc,
	    t->fp_len, t->path, t->wm.committed);
}

static void
on_batch_done(struct batch *b, void *arg)
{
	struct flow	*f = arg;
	size_t		 i;

	for (i = 0; i < b->nsegs; i++) {
		if (wm_ack(&b->segs[i].tailer->wm, b->segs[i].wm_id))
			commit(f, b->segs[i].tailer);
		tailer_trim(b->segs[i].tailer);
	}
	outstanding_remove(f, b);
	batch_free(b);
	if (f->blocked || f->stopping) {
		f->blocked = false;
		retry_cur(f);
	}
	pump(f);
	f->cb(f, FLOW_PROGRESS, NULL, f->arg);
}

static void
on_halt(const char *reason, void *arg)
{
	struct flow	*f = arg;

	f->cb(f, FLOW_HALTED, reason, f->arg);
}

/* --- reading ------------------------------------------------------------ */

static bool
readable(const struct flow *f, struct tailer *t)
{
	uint64_t	 end = t->size;

	if (f->once && t->target < end)
		end = t->target;
	return end > t->read_off;
}

/*
 * A file whose commit watermark has this many ranges waiting (in flight, or
 * acknowledged behind one that is not) is not read further until the oldest
 * is acknowledged: what a crash can make us send twice stays bounded by
 * about this many batches per file (lessons R3).
 */
static bool
held(const struct flow *f, const struct tailer *t)
{
	return wm_pending(&t->wm) >= 2 * (size_t)f->fc->max_in_flight + 2;
}

static struct tailer *
next_readable(struct flow *f)
{
	struct tailer	*t, *start;

	if (f->tailers == NULL)
		return NULL;
	start = f->cursor ? f->cursor : f->tailers;
	t = start;
	do {
		if (t->fd >= 0 && readable(f, t) && !t->stalled &&
		    !held(f, t) && !t->truncate_pending) {
			f->cursor = t->next ? t->next : f->tailers;
			return t;
		}
		t = t->next ? t->next : f->tailers;
	} while (t != start);
	return NULL;
}

/* --- records that wait for quiet ---------------------------------------- */

static bool
waits_for_quiet(const struct flow *f, const struct tailer *t)
{
	return t->fd >= 0 && (framer_pending(&t->fs) ||
	    (f->fc->miss_last_delimiter && t->stalled &&
	    t->read_off < t->size));
}

/*
 * A file that stopped growing: send its pending multi-line record after
 * multiLineFlushMillis, and (isMissLastRecordDelimiter) its last line
 * without delimiter after maxFileCheckingMillis.  now = 0: at once (--once
 * at the end of the data).
 */
static void
flush_quiet(struct flow *f, struct tailer *t, uint64_t now)
{
	uint64_t	 quiet = now - t->active_ms;

	f->reading = t;
	if (f->fc->miss_last_delimiter && t->stalled && t->read_off < t->size &&
	    (now == 0 || quiet >= (uint64_t)f->fc->max_file_checking_ms)) {
		if (tailer_read_last(t, f->fr, &f->rb,
		    sink_record_cap(f->sink), on_record, f) != 0)
			return;
	}
	if (framer_pending(&t->fs) &&
	    (now == 0 || quiet >= (uint64_t)f->fc->multiline_flush_ms) &&
	    framer_flush(f->fr, &t->fs, on_record, f) != 0)
		return;		/* refused: the window is full; next tick */
}

static void
on_quiet_timer(uv_timer_t *h)
{
	struct flow	*f = container_of(h, struct flow, quiet_timer);
	struct tailer	*t;
	bool		 more = false;
	uint64_t	 now = mono_ms();

	for (t = f->tailers; t != NULL && !f->blocked; t = t->next) {
		if (!waits_for_quiet(f, t))
			continue;
		flush_quiet(f, t, now);
		more = more || waits_for_quiet(f, t);
	}
	if (!more && !f->blocked)
		uv_timer_stop(h);
}

static void
arm_quiet_timer(struct flow *f)
{
	struct tailer	*t;
	uint64_t	 ms;

	if (f->once || uv_is_active((uv_handle_t *)&f->quiet_timer))
		return;
	for (t = f->tailers; t != NULL; t = t->next)
		if (waits_for_quiet(f, t))
			break;
	if (t == NULL)
		return;
	ms = (uint64_t)MIN(f->fc->multiline_flush_ms,
	    f->fc->max_file_checking_ms) / 2;
	uv_timer_start(&f->quiet_timer, on_quiet_timer, MAX(ms, 50),
	    MAX(ms, 50));
}

static void
pump(struct flow *f)
{
	struct tailer	*t = NULL;
	size_t		 budget = PUMP_BUDGET;
	uint64_t	 cut;
	bool		 skipping;
	long		 n;

	if (f->stopping || f->cancelled)
		return;
	while (budget > 0 && !f->blocked) {
		t = next_readable(f);
		if (t == NULL && f->nopen < f->st.files_tracked) {
			balance_fds(f);		/* parked files wait */
			t = next_readable(f);
		}
		if (t == NULL)
			break;
		f->reading = t;
		cut = t->fs.truncated;
		skipping = t->fs.skipping;
		n = tailer_read(t, f->fr, &f->rb, READ_CHUNK,
		    sink_record_cap(f->sink), on_record, f);
		f->st.records_truncated += t->fs.truncated - cut;
		/* The tail of a truncated line is done once its newline is
		 * read: commit past it, so a restart does not start inside
		 * the line (R10). */
		if ((skipping || t->fs.truncated != cut) && !t->fs.skipping &&
		    wm_skip_to(&t->wm, t->read_off))
			commit(f, t);
		if (n < 0) {
			log_warn("%s: read error: %s; will retry", t->path,
			    strerror((int)-n));
			t->stalled = true;
			continue;
		}
		if (n == 0 && !f->blocked)
			t->stalled = true;  /* only a partial line */
		budget -= MIN(budget, (size_t)n);
	}
	if (f->once && t == NULL && !f->blocked)
		for (t = f->tailers; t != NULL && !f->blocked; t = t->next)
			if (waits_for_quiet(f, t))
				flush_quiet(f, t, 0);
	arm_quiet_timer(f);
	if (budget == 0 && !f->blocked)
		schedule_pump(f);
	else if (next_readable(f) == NULL && f->cur != NULL &&
	    (f->once || f->stopping))
		(void)flush_cur(f);
	if (f->once)
		f->cb(f, FLOW_PROGRESS, NULL, f->arg);
}

static void
on_pump_timer(uv_timer_t *t)
{
	struct flow	*f = container_of(t, struct flow, pump_timer);

	f->pump_scheduled = false;
	pump(f);
}

static void
schedule_pump(struct flow *f)
{
	if (f->pump_scheduled)
		return;
	f->pump_scheduled = true;
	uv_timer_start(&f->pump_timer, on_pump_timer, 0, 0);
}

/* --- finding files ------------------------------------------------------ */

static struct tailer *
find_by_id(struct flow *f, uint64_t dev, uint64_t ino)
{
	struct tailer	*t;

	for (t = f->tailers; t != NULL; t = t->next)
		if (t->dev == dev && t->ino == ino)
			return t;
	return NULL;
}

/* Whether the file at path starts with the head the registry remembers. */
static bool
same_head(const char *path, const struct reg_entry *e, uint64_t size)
{
	uint32_t	 crc;
	int		 fd;
	bool		 same = false;

	if (e->fp_len > size)
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0) {
		same = tailer_fingerprint(fd, e->fp_len, &crc) == 0 &&
		    crc == e->fp_crc;
		close(fd);
	}
	return same;
}

/*
 * Where a newly seen file starts: its committed offset when the registry
 * knows this exact file (same dev, inode and head fingerprint, R5), else 0;
 * or its end for initialPosition = END_OF_FILE on the first scan, or when
 * it was not modified for ignoreNotUpdatedFileSeconds.
 */
static uint64_t
start_offset(struct flow *f, const char *path, const struct stat *st,
    bool first)
{
	struct reg_entry *e;
	uint64_t	 size = (uint64_t)st->st_size;

	e = registry_find(f->reg, f->fc->name, (uint64_t)st->st_dev,
	    (uint64_t)st->st_ino);
	if (e != NULL) {
		if (!same_head(path, e, size)) {
			log_info("%s: inode %ju now holds another file; "
			    "reading it from 0", path, (uintmax_t)st->st_ino);
			return 0;
		}
		if (e->offset <= size)
			return e->offset;
		log_warn("%s: shorter (%ju) than its committed offset (%ju): "
		    "truncated while stopped; reading from 0", path,
		    (uintmax_t)size, (uintmax_t)e->offset);
		return 0;
	}
	if (first && f->fc->initial_position == POS_END_OF_FILE)
		return size;
	if (f->fc->ignore_older_s > 0 &&
	    st->st_mtime < wall_s() - f->fc->ignore_older_s) {
		log_info("%s: not modified for %lld s or more; only lines "
		    "written from now on are read", path,
		    f->fc->ignore_older_s);
		return size;
	}
	return 0;
}

static size_t
open_count(const struct flow *f)
{
	return f->nopen;
}

/*
 * Committed offsets follow a delimiter, except after the kept head of a
 * truncated line (and a last line sent without delimiter).  Resuming inside
 * a line means the head was sent before a stop: skip to the line's end.
 */
static bool
resumes_inside_line(const struct flow *f, const struct tailer *t)
{
	char	 c;
	int	 fd = t->fd;

	if (t->read_off == 0 || fd < 0 || f->fc->miss_last_delimiter)
		return false;
	if (pread(fd, &c, 1, (off_t)t->read_off - 1) != 1)
		return false;
	return (unsigned char)c != (unsigned char)conf_delimiter(
	    f->fc->record_delimiter);
}

static void
link_tailer(struct flow *f, struct tailer *t)
{
	framer_state_init(&t->fs, f->fr, t->read_off == 0);
	if (resumes_inside_line(f, t)) {
		log_info("%s: resuming inside a truncated line at offset %ju; "
		    "skipping to its end", t->path, (uintmax_t)t->read_off);
		t->fs.skipping = true;
	}
	if (f->once)
		t->target = t->size;
	t->seen = true;
	t->active_ms = mono_ms();
	t->next = f->tailers;
	f->tailers = t;
	f->st.files_tracked++;
	if (t->fd >= 0)
		f->nopen++;
}

static bool
head_is(const unsigned char *head, size_t n, uint32_t len, uint32_t crc)
{
	return len >= COPY_MIN_HEAD && len <= n &&
	    (uint32_t)crc32(crc32(0L, Z_NULL, 0), head, len) == crc;
}

/*
 * Whether a new file is a copy of a tracked one (logrotate copytruncate
 * with a copy the pattern matches, R6): its head is the head the tracked
 * file had before its last truncation -> read the copy from where the
 * original had got to; its head is the tracked file's current head -> the
 * truncation has not happened yet: wait for it (COPY_WAIT).
 */
static uint64_t
copy_offset(struct flow *f, const char *path, const struct stat *st)
{
	unsigned char	*head;
	struct tailer	*t;
	ssize_t		 n;
	uint64_t	 off = NOT_A_COPY;
	int		 fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return NOT_A_COPY;
	head = xmalloc((size_t)f->fc->header_bytes);
	n = pread(fd, head, (size_t)f->fc->header_bytes, 0);
	close(fd);
	for (t = f->tailers; t != NULL && n > 0; t = t->next) {
		if (t->dev == (uint64_t)st->st_dev &&
		    t->ino == (uint64_t)st->st_ino)
			continue;
		if (head_is(head, (size_t)n, t->prev_fp_len, t->prev_fp_crc)) {
			off = MIN(t->prev_end, (uint64_t)st->st_size);
			log_info("%s is a copy of %s taken before its truncation "
			    "(copytruncate); reading it from offset %ju", path,
			    t->path, (uintmax_t)off);
			break;
		}
		if (!t->gone && head_is(head, (size_t)n, t->fp_len, t->fp_crc))
			off = COPY_WAIT;
	}
	free(head);
	return off;
}

/* Whether to hold a possible copy back for now (COPY_WAIT_MS at most). */
static bool
defer_copy(struct flow *f, const struct stat *st)
{
	struct deferred	*d, *free_slot = NULL;
	uint64_t	 now = mono_ms();
	size_t		 i;

	for (i = 0; i < ARRAY_SIZE(f->deferred); i++) {
		d = &f->deferred[i];
		if (d->dev == (uint64_t)st->st_dev &&
		    d->ino == (uint64_t)st->st_ino)
			return now - d->since_ms < COPY_WAIT_MS;
		if (free_slot == NULL && (d->since_ms == 0 ||
		    now - d->since_ms > 10 * COPY_WAIT_MS))
			free_slot = d;
	}
	if (free_slot == NULL)
		return false;
	free_slot->dev = (uint64_t)st->st_dev;
	free_slot->ino = (uint64_t)st->st_ino;
	free_slot->since_ms = now;
	return true;
}

static void
track(struct flow *f, const char *path, const struct stat *st, bool first,
    bool gone)
{
	struct tailer	*t;
	uint64_t	 off, copy = NOT_A_COPY;
	uint32_t	 fp = (uint32_t)f->fc->header_bytes;

	if (!first && !gone && registry_find(f->reg, f->fc->name,
	    (uint64_t)st->st_dev, (uint64_t)st->st_ino) == NULL)
		copy = copy_offset(f, path, st);
	if (copy == COPY_WAIT && defer_copy(f, st))
		return;		/* the next scan decides */
	off = copy < COPY_WAIT ? copy : start_offset(f, path, st, first);
	if (open_count(f) >= f->max_open)
		t = tailer_new_parked(path, st, off, fp);
	else
		t = tailer_open(path, st, off, fp);
	if (t == NULL) {
		log_warn("%s: cannot open: %s; will retry", path,
		    strerror(errno));
		return;
	}
	t->gone = gone;
	t->gone_size = UINT64_MAX;
	link_tailer(f, t);
	log_info("[%s] tracking %s (inode %ju) from offset %ju%s%s",
	    f->fc->name, path, (uintmax_t)t->ino, (uintmax_t)off,
	    gone ? " (rotated away; reading it to the end)" : "",
	    t->fd < 0 ? " (parked: maxOpenFiles)" : "");
	if (t->fd >= 0)
		commit(f, t);
}

/* The file was truncated or rewritten in place: read it again from 0. */
static void
restart_at_zero(struct flow *f, struct tailer *t, const char *why)
{
	log_warn("%s: %s; reading from 0", t->path, why);
	t->prev_fp_crc = t->fp_crc;
	t->prev_fp_len = t->fp_len;
	t->prev_end = t->read_off;
	t->read_off = 0;
	readbuf_forget(&f->rb);
	t->stalled = false;
	framer_state_cleanup(&t->fs);
	framer_state_init(&t->fs, f->fr, true);
	f->st.truncations++;
	wm_reset(&t->wm, 0);
	t->fp_len = 0;
	tailer_refresh_fingerprint(t);
	commit(f, t);
}

/* Re-check a tracked file's size; note growth and in-place truncation
 * (copytruncate: smaller than the read offset, or a new head, R6). */
static void
refresh(struct flow *f, struct tailer *t)
{
	uint64_t	 old = t->size;
	bool		 truncated;

	if (t->fd < 0)
		return;
	(void)tailer_poll(t, &truncated);
	if (t->size != old) {
		t->stalled = false;
		t->active_ms = mono_ms();
	}
	/* A new head means the file was truncated and written again, maybe
	 * past the old offset before we looked (R6): a 512-byte pread per
	 * change is cheap next to missing that. */
	if (!truncated && (t->truncate_pending || (t->size != old &&
	    tailer_head_changed(t))))
		truncated = true;
	if (!truncated)
		return;
	if (wm_pending(&t->wm) > 0) {
		t->truncate_pending = true;
		return;		/* after the in-flight ranges settle */
	}
	t->truncate_pending = false;
	restart_at_zero(f, t, "truncated or rewritten in place "
	    "(copytruncate?)");
}

static void
on_found(void *arg, const char *path, const struct stat *st)
{
	struct flow	*f = arg;
	struct tailer	*t;

	t = find_by_id(f, (uint64_t)st->st_dev, (uint64_t)st->st_ino);
	if (t == NULL) {
		track(f, path, st, f->first_scan, false);
		return;
	}
	t->seen = true;
	if (t->gone) {
		log_info("%s (inode %ju) is back at %s", t->path,
		    (uintmax_t)t->ino, path);
		t->gone = false;
	}
	if (strcmp(t->path, path) != 0) {
		log_info("%s: renamed to %s", t->path, path);
		free(t->path);
		t->path = xstrdup(path);
	}
	if (t->fd < 0)
		t->size = (uint64_t)st->st_size;
}

/*
 * First scan only: a file the registry knows for this flow that no longer
 * matches the pattern (rotated away while the agent was stopped, e.g.
 * app.log -> app.log.1) but still has bytes after its committed offset is
 * read to its end.
 */
static void
on_other(void *arg, const char *path, const struct stat *st)
{
	struct flow	*f = arg;
	struct reg_entry *e;
	struct tailer	*t;

	t = find_by_id(f, (uint64_t)st->st_dev, (uint64_t)st->st_ino);
	if (t != NULL) {
		/* A parked file rotated to a name the pattern does not
		 * match: follow it, so what it grew before the rename is
		 * still read. */
		if (t->fd < 0 && strcmp(t->path, path) != 0) {
			free(t->path);
			t->path = xstrdup(path);
			t->size = (uint64_t)st->st_size;
		}
		return;
	}
	if (!f->first_scan)
		return;
	e = registry_find(f->reg, f->fc->name, (uint64_t)st->st_dev,
	    (uint64_t)st->st_ino);
	if (e == NULL || e->offset >= (uint64_t)st->st_size ||
	    !same_head(path, e, (uint64_t)st->st_size))
		return;
	track(f, path, st, false, true);
}

/*
 * A file no longer at any matching path (rotated away or deleted) is read
 * to its end through the open descriptor, and closed only once every byte
 * is committed and it stopped growing (R1, R7).
 */
static bool
finished(struct flow *f, struct tailer *t)
{
	bool	 done;

	done = t->gone && wm_pending(&t->wm) == 0 &&
	    (t->stalled || !readable(f, t)) && t->size == t->gone_size;
	t->gone_size = t->size;
	return done;
}

static void
unlink_tailer(struct flow *f, struct tailer **pp, struct tailer *t)
{
	*pp = t->next;
	if (f->cursor == t)
		f->cursor = NULL;
	if (t->fd >= 0)
		f->nopen--;
	f->st.files_tracked--;
	tailer_free(t);
}

static void
drop_finished(struct flow *f)
{
	struct tailer	**pp, *t;

	for (pp = &f->tailers; (t = *pp) != NULL;) {
		if (!finished(f, t)) {
			pp = &t->next;
			continue;
		}
		if (t->read_off < t->size)
			log_warn("%s: closed with %ju bytes after the last "
			    "newline not shipped", t->path,
			    (uintmax_t)(t->size - t->read_off));
		log_info("[%s] finished %s (inode %ju) at offset %ju",
		    f->fc->name, t->path, (uintmax_t)t->ino,
		    (uintmax_t)t->wm.committed);
		/* The entry stays (until checkpointTimeToLiveDays): a file
		 * moved away and back resumes instead of starting over. */
		f->st.files_done++;
		unlink_tailer(f, pp, t);
	}
}

/* An idle file: at its path, fully read and committed, nothing pending. */
static bool
idle(const struct flow *f, struct tailer *t)
{
	return t->fd >= 0 && !t->gone && wm_pending(&t->wm) == 0 &&
	    (t->stalled || !readable(f, t));
}

/*
 * Keep open descriptors within maxOpenFiles: park the idle files that were
 * quiet longest, and open parked files that have bytes to read while there
 * is room.  Files with bytes not yet delivered stay open.
 */
static void
balance_fds(struct flow *f)
{
	struct tailer	*t, *oldest;
	size_t		 max = f->max_open, wanting = 0;
	size_t		 target;
	int		 rc;

	for (t = f->tailers; t != NULL; t = t->next)
		if (t->fd < 0 && (readable(f, t) || t->gone))
			wanting++;
	target = max - MIN(wanting, max);
	while (open_count(f) > target) {
		oldest = NULL;
		for (t = f->tailers; t != NULL; t = t->next)
			if (idle(f, t) && (oldest == NULL ||
			    t->active_ms < oldest->active_ms))
				oldest = t;
		if (oldest == NULL)
			break;
		tailer_park(oldest);
		f->nopen--;
	}
	for (t = f->tailers; t != NULL && open_count(f) < max; t = t->next) {
		if (t->fd >= 0 || (!readable(f, t) && !t->gone))
			continue;
		rc = tailer_reopen(t);
		if (rc == 0) {
			f->nopen++;
			t->stalled = false;
			commit(f, t);
		} else if (rc == -ESTALE) {
			/* Its path holds another file now; the next scan
			 * finds that one, and this identity is gone. */
			t->gone = true;
			t->size = t->read_off;
		}
	}
	if (open_count(f) > max && !f->warned_fds) {
		log_warn("[%s] %zu files with bytes to deliver are open, more "
		    "than maxOpenFiles = %zu", f->fc->name, open_count(f),
		    f->max_open);
		f->warned_fds = true;
	}
}

/* Reconcile the tracked set with the file system: the source of truth. */
static void
scan(struct flow *f, bool first)
{
	struct tailer	*t;

	f->first_scan = first;
	/* Truncations first: a copytruncate copy found by the walk is then
	 * recognised by the original's previous head. */
	for (t = f->tailers; t != NULL; t = t->next) {
		t->seen = false;
		if (t->truncate_pending || t->fd >= 0)
			refresh(f, t);
	}
	if (watcher_scan(f->watcher, on_found, on_other, f) == 0 &&
	    !f->warned_dir) {
		log_warn("[%s] cannot read directory %s: %s; will retry",
		    f->fc->name, watcher_base(f->watcher), strerror(errno));
		f->warned_dir = true;
	}
	f->first_scan = false;
	for (t = f->tailers; t != NULL; t = t->next) {
		if (!t->seen && !t->gone) {
			t->gone = true;
			t->gone_size = UINT64_MAX;
			log_info("%s (inode %ju) is gone from its path; "
			    "reading it to the end", t->path,
			    (uintmax_t)t->ino);
		}
	}
	drop_finished(f);
	balance_fds(f);
}

static void
on_rescan_timer(uv_timer_t *h)
{
	struct flow	*f = container_of(h, struct flow, rescan_timer);

	scan(f, false);
	pump(f);
}

static void
on_fs_event(void *arg, const char *dir, const char *name, int events)
{
	struct flow	*f = arg;
	struct tailer	*t;
	size_t		 n = strlen(dir);

	/* A write to a tracked file: just read it.  Anything else (a new
	 * name, a rename, a deletion): rescan soon, coalescing bursts. */
	if (name != NULL && (events & UV_CHANGE) && !(events & UV_RENAME)) {
		for (t = f->tailers; t != NULL; t = t->next) {
			if (t->gone || t->fd < 0 ||
			    strncmp(t->path, dir, n) != 0 ||
			    t->path[n] != '/' ||
			    strcmp(t->path + n + 1, name) != 0)
				continue;
			refresh(f, t);
			pump(f);
			return;
		}
	}
	if (!f->stopping)
		uv_timer_start(&f->rescan_timer, on_rescan_timer,
		    EVENT_DELAY_MS, (uint64_t)f->fc->rescan_interval_ms);
}

/* --- lifecycle ---------------------------------------------------------- */

/* Descriptors kept for everything but tailed files: connections (at most
 * 16), the state, dead-letter and metrics files, inotify, libuv's own. */
#define FD_RESERVE	128

/*
 * maxOpenFiles, lowered when the flows' files together would take the
 * descriptors the connections need: with the soft RLIMIT_NOFILE of 1024
 * that systemd gives services, 1,024 open files left no socket for DIS,
 * and nothing was sent.  main() raises the soft limit to the hard one
 * first, so this bites only where the hard limit is low.
 */
static size_t
open_file_budget(const struct conf *conf, const struct conf_flow *fc)
{
	struct rlimit	 rl;
	size_t		 i, nflows = 0, share;

	for (i = 0; i < conf->nflows; i++)
		if (conf->flows[i].enable)
			nflows++;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return (size_t)fc->max_open_files;
	share = rl.rlim_cur > FD_RESERVE + 8 * MAX(nflows, 1) ?
	    (size_t)(rl.rlim_cur - FD_RESERVE) / MAX(nflows, 1) : 8;
	if ((size_t)fc->max_open_files <= share)
		return (size_t)fc->max_open_files;
	log_warn("[%s] maxOpenFiles = %lld leaves no descriptors for the "
	    "connections (open-file limit %llu over %zu flows); using %zu",
	    fc->name, fc->max_open_files, (unsigned long long)rl.rlim_cur,
	    nflows, share);
	return share;
}

struct flow *
flow_new(uv_loop_t *loop, const struct conf *conf, const struct conf_flow *fc,
    struct disapi *api, struct registry *reg, struct mem_budget *mem,
    bool once, flow_cb cb, void *arg)
{
	struct flow	*f;
	struct framer_opts fo;

	f = xcalloc(1, sizeof(*f));
	f->loop = loop;
	f->conf = conf;
	f->fc = fc;
	f->max_open = open_file_budget(conf, fc);
	f->reg = reg;
	f->mem = mem;
	f->once = once;
	f->cb = cb;
	f->arg = arg;
	buf_init(&f->rb.b);
	buf_init(&f->key);
	f->dlq = deadletter_new(conf);
	f->sink = sink_new(loop, api, conf, fc, mem, f->dlq, on_batch_done,
	    on_halt, f);
	uv_timer_init(loop, &f->rescan_timer);
	uv_timer_init(loop, &f->age_timer);
	uv_timer_init(loop, &f->pump_timer);
	uv_timer_init(loop, &f->quiet_timer);
	f->open_handles = 4;
	framer_opts_from_flow(fc, &fo);
	if (framer_new(&fo, &f->fr, f->fr_err, sizeof(f->fr_err)) != 0)
		f->fr = NULL;
	return f;
}

int
flow_start(struct flow *f)
{
	char	 err[256];

	if (f->fr == NULL) {
		log_error("[%s] %s", f->fc->name, f->fr_err);
		return -EINVAL;
	}
	f->watcher = watcher_new(f->loop, f->fc, f->once ? NULL : on_fs_event,
	    f, err, sizeof(err));
	if (f->watcher == NULL) {
		log_error("[%s] %s", f->fc->name, err);
		return -EINVAL;
	}
	sink_start(f->sink);
	scan(f, true);
	if (!f->once)
		uv_timer_start(&f->rescan_timer, on_rescan_timer,
		    (uint64_t)f->fc->rescan_interval_ms,
		    (uint64_t)f->fc->rescan_interval_ms);
	pump(f);
	return 0;
}

void
flow_stop(struct flow *f)
{
	f->stopping = true;
	uv_timer_stop(&f->rescan_timer);
	uv_timer_stop(&f->pump_timer);
	if (!flush_cur(f))
		f->blocked = true;
}

bool
flow_idle(const struct flow *f)
{
	return (f->cur == NULL || f->cur->nrecs == 0) &&
	    sink_pending(f->sink) == 0;
}

bool
flow_drained(const struct flow *f)
{
	struct tailer	*t;

	if (!flow_idle(f) || f->pump_scheduled)
		return false;
	for (t = f->tailers; t != NULL; t = t->next)
		if ((readable(f, t) && !t->stalled) || waits_for_quiet(f, t))
			return false;
	return true;
}

const char *
flow_name(const struct flow *f)
{
	return f->fc->name;
}

void
flow_stats(const struct flow *f, struct flow_stats *out)
{
	const struct sink_stats *ss = sink_stats(f->sink);
	struct tailer	*t;

	*out = f->st;
	out->records_sent = ss->records_sent;
	out->bytes_sent = ss->bytes_sent;
	out->records_failed = ss->records_failed;
	out->records_retried = ss->records_retried;
	out->records_dead = ss->records_dead;
	out->throttled = ss->throttled;
	out->paused = sink_paused(f->sink);
	out->bytes_behind = 0;
	for (t = f->tailers; t != NULL; t = t->next)
		if (t->size > t->wm.committed)
			out->bytes_behind += t->size - t->wm.committed;
}

void
flow_metrics(const struct flow *f, struct metrics_flow *out)
{
	struct flow_stats	 st;

	flow_stats(f, &st);
	*out = *sink_metrics(f->sink);
	out->name = f->fc->name;
	out->stream = f->fc->stream_id[0] != '\0' ? f->fc->stream_id :
	    f->fc->stream;
	out->records_read = st.records_parsed;
	out->bytes_read = st.bytes_parsed;
	out->records_sent = st.records_sent;
	out->bytes_sent = st.bytes_sent;
	out->records_retried = st.records_retried;
	out->records_dead_lettered = st.records_dead;
	out->bytes_behind = st.bytes_behind;
	out->files_tracked = st.files_tracked;
	out->paused = st.paused;
}

void
flow_kick(struct flow *f)
{
	if (!f->blocked || f->stopping)
		return;
	f->blocked = false;
	retry_cur(f);
	pump(f);
}

void
flow_touch(struct flow *f)
{
	struct tailer	*t;

	for (t = f->tailers; t != NULL; t = t->next)
		commit(f, t);
}

void
flow_cancel(struct flow *f)
{
	struct batch	*b;

	f->cancelled = true;
	f->stopping = true;
	uv_timer_stop(&f->rescan_timer);
	uv_timer_stop(&f->pump_timer);
	uv_timer_stop(&f->age_timer);
	uv_timer_stop(&f->quiet_timer);
	watcher_free(f->watcher);
	f->watcher = NULL;
	for (b = f->out; b != NULL; b = b->flow_next)
		uv_timer_stop(&b->retry_timer);
	(void)sink_take_pending(f->sink);
}

static void
flow_handle_closed(uv_handle_t *h)
{
	struct flow	*f = h->data;

	if (--f->open_handles > 0)
		return;
	buf_cleanup(&f->rb.b);
	buf_cleanup(&f->key);
	framer_free(f->fr);
	deadletter_free(f->dlq);
	free(f);
}

void
flow_free(struct flow *f)
{
	struct tailer	*t;
	struct batch	*b;

	if (f == NULL)
		return;
	flow_cancel(f);
	while ((b = f->out) != NULL) {
		outstanding_remove(f, b);
		batch_free(b);
	}
	batch_free(f->cur);
	f->cur = NULL;
	while ((t = f->tailers) != NULL) {
		f->tailers = t->next;
		tailer_free(t);
	}
	sink_free(f->sink);
	f->rescan_timer.data = f;
	f->age_timer.data = f;
	f->pump_timer.data = f;
	f->quiet_timer.data = f;
	uv_close((uv_handle_t *)&f->quiet_timer, flow_handle_closed);
	uv_close((uv_handle_t *)&f->rescan_timer, flow_handle_closed);
	uv_close((uv_handle_t *)&f->age_timer, flow_handle_closed);
	uv_close((uv_handle_t *)&f->pump_timer, flow_handle_closed);
}
