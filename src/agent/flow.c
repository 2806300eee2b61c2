/*
 * A flow: the pump that reads its files into batches, and the window of
 * batches the sink has out.
 *
 * Reading is pulled, never pushed: pump() reads from readable tailers only
 * while the window is open -- a batch being filled, fewer batches out than
 * the sink's window, and memory under the budget.  When it closes, reading
 * stops and the files are the buffer, so memory stays flat during any outage
 * (R11).  It opens again on an event, never by polling: a request ending
 * (the sink's ended callback) for a full window, the agent's kick after
 * another flow freed memory for the budget.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "agent/flow.h"
#include "base/closer.h"
#include "base/log.h"
#include "base/metrics.h"
#include "conf/conf.h"
#include "files/files.h"
#include "files/tailer.h"
#include "records/convert.h"
#include "records/deadletter.h"
#include "records/framer.h"
#include "records/partkey.h"
#include "records/reccodec.h"
#include "sink/batch.h"
#include "sink/sink.h"

#define PUMP_BUDGET	(8u * 1024 * 1024)	/* bytes per loop turn */
#define READ_CHUNK	(256u * 1024)

/*
 * Where a flow is in its life, changed only in set_state():
 *
 *   RUNNING --(--once: all delivered, reported)--> DRAINED
 *      |                                              |
 *      +---- flow_stop --> STOPPING <-- flow_stop ----+
 *      +--- flow_cancel -> CANCELLED <- flow_cancel (any)
 *
 * STOPPING reads no more but still sends what is batched; CANCELLED does
 * nothing at all any more.  It never goes back.
 */
enum flow_state {
	FLOW_RUNNING,
	FLOW_DRAINED,
	FLOW_STOPPING,
	FLOW_CANCELLED,
};

/* Whether the pump may take records. */
enum window {
	WINDOW_OPEN,
	WINDOW_FULL,		/* the sink has its window of batches out */
	WINDOW_MEMORY,		/* all flows hold maxMemoryBytes */
};

struct flow {
	uv_loop_t	*loop;
	const struct conf *conf;
	const struct conf_flow *fc;
	struct sink	*sink;
	struct files	*files;
	struct deadletter *dlq;		/* records that can never go */
	struct framer	*fr;		/* record framing options, compiled */
	struct convert	*conv;		/* dataProcessingOptions; NULL: none */
	struct buf	 conv_out;	/* the converted record */
	struct reccodec	*codec;		/* data.compress/encrypt; NULL: none */
	struct buf	 codec_out;	/* the record as it goes on the wire */
	struct partkey	*pk;
	char		 err[256];	/* why flow_start fails */
	struct tailer	*reading;	/* the tailer being framed */
	struct batch	*cur;		/* being filled */
	struct readbuf	 rb;		/* read window */
	struct buf	 key;		/* partition key being built */
	struct tailer_quiet quiet;	/* when records waiting for quiet go */
	struct mem_budget *mem;
	struct metrics_flow m;		/* the flow's counters */
	enum window	 window;
	enum flow_state	 state;
	bool		 once;
	uv_timer_t	 age_timer;
	uv_timer_t	 pump_timer;
	uv_timer_t	 quiet_timer;	/* multi-line flush, last line */
	struct closer	 closer;	/* the timers being closed */
	flow_cb		 cb;
	void		*arg;
};

static void	pump(struct flow *);
static void	flow_freed(struct closer *);

static const char *const window_names[] = { "open", "full", "memory" };
static const char *const state_names[] = { "running", "drained",
    "stopping", "cancelled" };

/* The one place the state changes; only ever forward. */
static void
set_state(struct flow *f, enum flow_state st)
{
	if (st <= f->state)
		return;
	log_debug("[%s] %s -> %s", f->fc->name, state_names[f->state],
	    state_names[st]);
	f->state = st;
}

/* No more reading: stopping or cancelled. */
static bool
stopping(const struct flow *f)
{
	return f->state >= FLOW_STOPPING;
}

/* The one place the window changes. */
static void
set_window(struct flow *f, enum window w)
{
	if (f->window == w)
		return;
	log_debug("[%s] window %s -> %s", f->fc->name,
	    window_names[f->window], window_names[w]);
	f->window = w;
}

/* --- batches and the window --------------------------------------------- */

/* Hand the current batch to the sink if the window allows; false if not. */
static bool
flush_cur(struct flow *f)
{
	struct batch	*b = f->cur;

	if (b == NULL || b->nrecs == 0)
		return true;
	if (!sink_has_room(f->sink))
		return false;
	f->cur = NULL;
	uv_timer_stop(&f->age_timer);
	sink_submit(f->sink, b);
	return true;
}

static void
on_age_timer(uv_timer_t *t)
{
	struct flow	*f = container_of(t, struct flow, age_timer);

	if (!flush_cur(f))
		set_window(f, WINDOW_FULL);
}

/* Full, with room left for the records waiting in the sink to resend,
 * which ride in this batch's request (sink_riders). */
static bool
batch_full(const struct flow *f, const struct batch *b, size_t len)
{
	size_t	 rbytes, riders = sink_riders(f->sink, &rbytes);

	return b->nrecs + riders >= (size_t)f->fc->max_buffer_records ||
	    (b->nrecs > 0 &&
	    b->data.len + rbytes + len > sink_request_cap(f->sink));
}

/* The memory budget (R11): a flow holding nothing may always take a
 * record, so no flow starves. */
static bool
over_budget(const struct flow *f)
{
	return f->mem->used >= f->mem->limit &&
	    ((f->cur != NULL && f->cur->nrecs > 0) ||
	    sink_pending(f->sink) > 0);
}

/*
 * The most bytes of a record before the per-record codecs, so that what
 * goes on the wire stays under the stream's record cap: the framer and
 * the chain cut records to this.
 */
static size_t
record_cap(const struct flow *f)
{
	return reccodec_plain_cap(f->codec, sink_record_cap(f->sink));
}

/* framer_cb: add one record, or refuse it when the window is closed. */
static int
on_record(void *arg, const char *data, size_t len, uint64_t start_off,
    uint64_t end_off)
{
	struct flow	*f = arg;
	struct tailer	*t = f->reading;
	size_t		 read_len = len;
	bool		 cut = false;
	int		 seg;

	/* A record the chain does not send (dead-lettered, dropped) is done:
	 * the committed offset still moves past its bytes. */
	if (f->conv != NULL) {
		if (!convert_record(f->conv, data, len, tailer_path(t),
		    start_off, record_cap(f), &f->conv_out, &cut)) {
			if (tailer_skip_to(t, end_off))
				files_commit(f->files, t);
			f->m.records_read++;
			f->m.bytes_read += len;
			return 0;
		}
		data = f->conv_out.data;
		len = f->conv_out.len;
	}
	/* The key is made from the record itself (DETERMINISTIC hashes
	 * it), as the DIS Agent does before the SDK encodes it. */
	partkey_make(f->pk, tailer_path(t), data, len, &f->key);
	if (f->codec != NULL) {
		/* libcrypto failing to encrypt leaves nothing safe to send;
		 * nothing is committed, so a restart sends it again. */
		if (reccodec_encode(f->codec, data, len, &f->codec_out) != 0)
			fatalx("[%s] cannot encode a record of %s at offset "
			    "%" PRIu64 " (data.compress.enabled, "
			    "data.encrypt.enabled)", f->fc->name,
			    tailer_path(t), start_off);
		data = f->codec_out.data;
		len = f->codec_out.len;
	}
	if (f->cur != NULL && batch_full(f, f->cur, len) && !flush_cur(f)) {
		set_window(f, WINDOW_FULL);
		return 1;
	}
	if (over_budget(f)) {
		set_window(f, WINDOW_MEMORY);
		return 1;
	}
	if (f->cur == NULL) {
		f->cur = batch_new(f->mem);
		uv_timer_start(&f->age_timer, on_age_timer,
		    (uint64_t)f->fc->max_buffer_age_ms, 0);
	}
	seg = batch_seg_of(f->cur, tailer_id(t));
	if (seg < 0)
		seg = batch_add_seg(f->cur, tailer_id(t), tailer_path(t),
		    tailer_push(t, end_off));
	else
		tailer_extend(t, f->cur->segs[seg].range, end_off);
	batch_add(f->cur, data, len, f->key.data ? f->key.data : "",
	    (uint16_t)seg, start_off);
	f->m.records_read++;
	f->m.bytes_read += read_len;
	f->m.records_truncated += cut;
	return 0;
}

/*
 * The current batch, if it is due (full, its age timer fired, or the flow
 * stopping), goes out when the window has room; if not, the window stays
 * full so that the next request's end tries again.  Opening the window
 * without this left a due batch waiting for a record that, at the end of a
 * file, never comes: its age timer had fired already.
 */
static void
retry_cur(struct flow *f)
{
	if (f->cur != NULL && (stopping(f) || batch_full(f, f->cur, 0) ||
	    !uv_is_active((uv_handle_t *)&f->age_timer)) && !flush_cur(f))
		set_window(f, WINDOW_FULL);
}

/* The sink handed b back: acknowledged ranges move the commit. */
static void
on_batch_done(struct batch *b, bool delivered, void *arg)
{
	struct flow	*f = arg;
	size_t		 i;

	if (delivered && f->state != FLOW_CANCELLED)
		for (i = 0; i < b->nsegs; i++)
			files_ack(f->files, b->segs[i].file, b->segs[i].range);
	batch_free(b);
}

/* --once: report the moment everything is delivered, once. */
static void
check_drained(struct flow *f)
{
	if (!f->once || f->state != FLOW_RUNNING || !flow_drained(f))
		return;
	set_state(f, FLOW_DRAINED);
	f->cb(f, FLOW_SETTLED, NULL, f->arg);
}

/* A request ended: the window may have room, memory may be free. */
static void
on_request_ended(void *arg)
{
	struct flow	*f = arg;

	if (f->state == FLOW_CANCELLED)
		return;
	if (f->window == WINDOW_FULL ||
	    (f->window == WINDOW_MEMORY && !over_budget(f)))
		set_window(f, WINDOW_OPEN);
	if (f->window == WINDOW_OPEN)
		retry_cur(f);
	pump(f);
	check_drained(f);
	f->cb(f, FLOW_SETTLED, NULL, f->arg);
}

static void
on_halt(const char *reason, void *arg)
{
	struct flow	*f = arg;

	f->cb(f, FLOW_HALTED, reason, f->arg);
}

/* --- records that wait for quiet ---------------------------------------- */

struct quiet_pass {
	struct flow	*f;
	uint64_t	 now;	/* 0: at once */
	bool		 more;	/* something still waits */
};

static bool
flush_one(struct tailer *t, void *arg)
{
	struct quiet_pass *q = arg;
	struct flow	*f = q->f;
	struct tailer_quiet quiet = f->quiet;
	uint64_t	 now = q->now;

	if (f->window != WINDOW_OPEN)
		return false;
	if (!tailer_waits_for_quiet(t, f->quiet.miss_last))
		return true;
	if (!f->fc->file_appendable) {
		/* A whole file is complete up to its size when ready: what
		 * waits at its end goes at once, nothing before its end
		 * goes early, and nothing after it is read. */
		if (tailer_readable(t) && !tailer_stalled(t))
			return true;
		quiet.miss_last = tailer_readable(t);
		now = 0;
	}
	f->reading = t;
	(void)tailer_flush_quiet(t, f->fr, &f->rb, record_cap(f),
	    now, &quiet, on_record, f);
	q->more = q->more || tailer_waits_for_quiet(t, f->quiet.miss_last);
	return true;
}

static void
flush_quiet(struct flow *f, uint64_t now, bool *more)
{
	struct quiet_pass q = { f, now, false };

	files_each_open(f->files, flush_one, &q);
	if (more != NULL)
		*more = q.more;
}

static void
on_quiet_timer(uv_timer_t *h)
{
	struct flow	*f = container_of(h, struct flow, quiet_timer);
	bool		 more;

	flush_quiet(f, mono_ms(), &more);
	if (!more && f->window == WINDOW_OPEN)
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
arm_quiet_timer(struct flow *f)
{
	struct quiet_find q = { f->quiet.miss_last, false };
	uint64_t	 ms;

	if (f->once || uv_is_active((uv_handle_t *)&f->quiet_timer))
		return;
	files_each_open(f->files, find_waiting, &q);
	if (!q.found)
		return;
	ms = MIN(f->quiet.flush_ms, f->quiet.last_ms) / 2;
	uv_timer_start(&f->quiet_timer, on_quiet_timer, MAX(ms, 50),
	    MAX(ms, 50));
}

/* --- the pump ----------------------------------------------------------- */

static size_t
hold(const struct flow *f)
{
	/* What a crash can make us send twice stays bounded by about this
	 * many batches per file (lessons R3). */
	return (size_t)f->fc->max_in_flight + 1;
}

static void	schedule_pump(struct flow *);

/* Read until the window closes, nothing is left, or the turn's budget is
 * spent; whether nothing was left to read (a file held back by its ranges
 * in flight has something left: --once must not flush a batch that its
 * next read fills). */
static bool
read_some(struct flow *f, size_t *budget)
{
	struct tailer_read r;
	struct tailer	*t;
	long		 n;

	while (*budget > 0 && f->window == WINDOW_OPEN) {
		t = files_next_readable(f->files, hold(f));
		if (t == NULL)
			return !files_held(f->files, hold(f));
		f->reading = t;
		n = tailer_read(t, f->fr, &f->rb, READ_CHUNK,
		    record_cap(f), on_record, f, &r);
		f->m.records_truncated += r.truncated;
		files_read_done(f->files, t, n, f->window != WINDOW_OPEN,
		    r.committed);
		if (n > 0)
			*budget -= MIN(*budget, (size_t)n);
	}
	return false;
}

static void
pump(struct flow *f)
{
	size_t		 budget = PUMP_BUDGET;
	bool		 all_read;

	if (stopping(f))
		return;
	all_read = read_some(f, &budget);
	if ((f->once || !f->fc->file_appendable) && all_read &&
	    f->window == WINDOW_OPEN)
		flush_quiet(f, 0, NULL);
	arm_quiet_timer(f);
	if (budget == 0 && f->window == WINDOW_OPEN)
		schedule_pump(f);
	else if (all_read && f->once && !flush_cur(f))
		set_window(f, WINDOW_FULL);
	check_drained(f);
}

static void
on_pump_timer(uv_timer_t *t)
{
	pump(container_of(t, struct flow, pump_timer));
}

static void
schedule_pump(struct flow *f)
{
	if (!uv_is_active((uv_handle_t *)&f->pump_timer))
		uv_timer_start(&f->pump_timer, on_pump_timer, 0, 0);
}

static void
on_readable(void *arg)
{
	pump(arg);
}

/* --- lifecycle ---------------------------------------------------------- */

/*
 * The processing chain, the framer and the files of the flow; 0, or -1
 * with the reason in f->err (flow_start reports it).
 */
static int
reading_new(struct flow *f, const struct conf *conf,
    const struct conf_flow *fc, struct registry *reg)
{
	struct framer_opts fo;

	conf_framer_opts(fc, &fo);
	if (convert_new(&fc->conv, fo.delim, fc->keep_delimiter, f->dlq,
	    fc->name, &f->conv, NULL, f->err, sizeof(f->err)) != 0)
		return -1;
	if (f->conv != NULL) {
		if (convert_regex_jit(f->conv) >= 0)
			log_info("[%s] LOGTOJSON matches %s", fc->name,
			    convert_regex_jit(f->conv) ? "with PCRE2's JIT" :
			    "in PCRE2's interpreter (no JIT: no executable "
			    "memory, as under MemoryDenyWriteExecute=yes, or no "
			    "JIT support)");
		convert_count_into(f->conv, f->m.records_unmatched);
		/* The chain sees records with their delimiter, as the DIS
		 * Agent's converters do, and drops it itself. */
		fo.keep_delim = fo.keep_delim ||
		    convert_keeps_delimiter(f->conv);
	}
	if (framer_new(&fo, &f->fr, f->err, sizeof(f->err)) != 0)
		return -1;
	f->files = files_new(f->loop, conf, fc, reg, f->fr, &f->m, f->once,
	    on_readable, f, f->err, sizeof(f->err));
	return f->files != NULL ? 0 : -1;
}

struct flow *
flow_new(uv_loop_t *loop, const struct conf *conf, const struct conf_flow *fc,
    struct disapi *api, struct registry *reg, struct mem_budget *mem,
    bool once, flow_cb cb, void *arg)
{
	struct sink_cbs	 cbs = { on_batch_done, on_request_ended, on_halt, NULL,
	    once };
	struct flow	*f;
	char		*dlq_path;

	f = xcalloc(1, sizeof(*f));
	f->loop = loop;
	f->conf = conf;
	f->fc = fc;
	f->mem = mem;
	f->once = once;
	f->cb = cb;
	f->arg = arg;
	f->m.name = fc->name;
	f->m.stream = fc->stream_id[0] != '\0' ? fc->stream_id : fc->stream;
	/* Whole files: the last record goes without a delimiter too. */
	f->quiet.miss_last = fc->miss_last_delimiter || !fc->file_appendable;
	f->quiet.last_ms = (uint64_t)fc->max_file_checking_ms;
	f->quiet.flush_ms = (uint64_t)fc->multiline_flush_ms;
	readbuf_init(&f->rb);
	buf_init(&f->key);
	f->pk = partkey_new(fc->partition_key_option);
	dlq_path = conf_deadletter_path(conf);
	f->dlq = deadletter_new(dlq_path);
	free(dlq_path);
	cbs.arg = f;
	f->sink = sink_new(loop, api, conf, fc, f->dlq, &f->m, &cbs);
	uv_timer_init(loop, &f->age_timer);
	uv_timer_init(loop, &f->pump_timer);
	uv_timer_init(loop, &f->quiet_timer);
	closer_init(&f->closer, flow_freed);
	buf_init(&f->conv_out);
	buf_init(&f->codec_out);
	f->codec = reccodec_new(&(struct reccodec_opts){ conf->data_compress,
	    conf->data_encrypt, conf->data_password });
	(void)reading_new(f, conf, fc, reg);	/* flow_start reports */
	return f;
}

int
flow_start(struct flow *f)
{
	if (f->files == NULL) {
		log_error("[%s] %s", f->fc->name, f->err);
		return -EINVAL;
	}
	sink_start(f->sink);
	files_start(f->files);
	pump(f);
	return 0;
}

void
flow_stop(struct flow *f)
{
	set_state(f, FLOW_STOPPING);
	if (f->files != NULL)
		files_stop(f->files);
	uv_timer_stop(&f->pump_timer);
	if (!flush_cur(f))
		set_window(f, WINDOW_FULL);
}

bool
flow_quiet(const struct flow *f)
{
	return sink_inflight(f->sink) == 0;
}

size_t
flow_inflight(const struct flow *f)
{
	return sink_inflight(f->sink);
}

bool
flow_drained(const struct flow *f)
{
	if ((f->cur != NULL && f->cur->nrecs > 0) ||
	    sink_pending(f->sink) > 0 ||
	    uv_is_active((const uv_handle_t *)&f->pump_timer))
		return false;
	return f->files == NULL || files_all_read(f->files, f->quiet.miss_last);
}

const char *
flow_name(const struct flow *f)
{
	return f->fc->name;
}

const struct metrics_flow *
flow_metrics(struct flow *f)
{
	if (f->files != NULL)
		files_gauges(f->files, &f->m);
	f->m.paused = sink_state(f->sink) == SINK_PAUSED;
	return &f->m;
}

void
flow_kick(struct flow *f)
{
	if (f->window != WINDOW_MEMORY || stopping(f) || over_budget(f))
		return;
	set_window(f, WINDOW_OPEN);
	retry_cur(f);
	pump(f);
}

void
flow_saved(struct flow *f)
{
	if (f->files != NULL && !stopping(f))
		files_saved(f->files);
}

void
flow_touch(struct flow *f)
{
	if (f->files != NULL)
		files_touch(f->files);
}

void
flow_cancel(struct flow *f)
{
	set_state(f, FLOW_CANCELLED);
	if (f->files != NULL)
		files_stop(f->files);
	uv_timer_stop(&f->pump_timer);
	uv_timer_stop(&f->age_timer);
	uv_timer_stop(&f->quiet_timer);
	sink_cancel(f->sink);
}

/* The last timer closed: the memory goes. */
static void
flow_freed(struct closer *c)
{
	struct flow	*f = container_of(c, struct flow, closer);

	readbuf_cleanup(&f->rb);
	buf_cleanup(&f->key);
	framer_free(f->fr);
	convert_free(f->conv);
	buf_cleanup(&f->conv_out);
	reccodec_free(f->codec);
	buf_cleanup(&f->codec_out);
	partkey_free(f->pk);
	deadletter_free(f->dlq);
	free(f);
}

void
flow_free(struct flow *f)
{
	if (f == NULL)
		return;
	flow_cancel(f);
	batch_free(f->cur);
	f->cur = NULL;
	sink_free(f->sink);
	files_free(f->files);
	closer_close(&f->closer, (uv_handle_t *)&f->quiet_timer);
	closer_close(&f->closer, (uv_handle_t *)&f->age_timer);
	closer_close(&f->closer, (uv_handle_t *)&f->pump_timer);
	closer_release(&f->closer);
}

/* --- transitions -------------------------------------------------------- */

const struct conf *
flow_conf(const struct flow *f)
{
	return f->conf;
}

const struct conf_flow *
flow_fc(const struct flow *f)
{
	return f->fc;
}

bool
flow_ready(const struct flow *f)
{
	return sink_state(f->sink) == SINK_READY;
}

struct files_handover *
flow_hand_over(struct flow *f)
{
	return f->files != NULL ? files_hand_over(f->files) : NULL;
}

void
flow_adopt(struct flow *f, struct files_handover *h)
{
	size_t	 n;

	if (f->files == NULL) {
		files_handover_free(h);
		return;
	}
	n = files_adopt(f->files, h);
	if (n > 0)
		log_info("[%s] reading on %zu open file%s of the flow it "
		    "replaces", f->fc->name, n, n == 1 ? "" : "s");
}

void
flow_spool(struct flow *f, struct spool *sp)
{
	if (f->files != NULL)
		files_spool(f->files, sp);
}
