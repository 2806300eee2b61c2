/*
 * A flow: the pump that reads its source (its files, or the journal:
 * source.h) into batches, and the window of batches the sink has out.
 *
 * Reading is pulled, never pushed: pump() reads from the source only
 * while the window is open -- a batch being filled, fewer batches out than
 * the sink's window, and memory under the budget.  When it closes, reading
 * stops and the files are the buffer, so memory stays flat during any outage
 * (R11).  It opens again on an event, never by polling: a request ending
 * (the sink's ended callback) for a full window, the agent's kick after
 * another flow freed memory for the budget, the refill timer of a flow
 * held by its rate limit (maxBytesPerSecond, maxRecordsPerSecond).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "agent/acked.h"
#include "agent/flow.h"
#include "agent/pace.h"
#include "agent/source.h"
#include "base/closer.h"
#include "base/hash.h"
#include "base/log.h"
#include "base/metrics.h"
#include "conf/conf.h"
#include "files/files.h"
#include "records/convert.h"
#include "records/deadletter.h"
#include "records/filter.h"
#include "records/framer.h"
#include "records/keyid.h"
#include "records/partkey.h"
#include "records/ratelimit.h"
#include "records/reccodec.h"
#include "state/registry.h"
#include "sink/batch.h"
#include "sink/sink.h"

#define PUMP_BUDGET	(8u * 1024 * 1024)	/* bytes per loop turn */

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
	WINDOW_RATE,		/* held by its rate limit until a refill */
};

struct flow {
	uv_loop_t	*loop;
	const struct conf *conf;
	const struct conf_flow *fc;
	struct sink	*sink;
	struct source	*src;		/* its files, or the journal */
	struct deadletter *dlq;		/* records that can never go */
	struct filter	*filt;		/* line filters; NULL: none */
	struct convert	*conv;		/* dataProcessingOptions; NULL: none */
	struct buf	 conv_out;	/* the converted record */
	struct reccodec	*codec;		/* data.compress/encrypt; NULL: none */
	struct buf	 codec_out;	/* the record as it goes on the wire */
	struct partkey	*pk;
	struct hash_key	 agent_key;	/* keyid.h */
	uint64_t	 kid_origin;	/* the file part of the ids of */
	uint64_t	 kid_file;	/* this origin's records, for good */
	bool		 kid_fixed;
	bool		 ids;		/* the keys carry record ids */
	bool		 skipped;	/* a record was skipped: a batch's range
					   may no longer be its file's newest */
	char		*stream_key;	/* "NAME" or "id:ID" */
	struct registry	*reg;
	char		 err[256];	/* why flow_start fails */
	struct batch	*cur;		/* being filled */
	struct batch_size last_size;	/* of the last one handed on */
	size_t		 pass_recs;	/* records the pump's pass took */
	struct pace	 pace;		/* of coalesced reads */
	struct buf	 key;		/* partition key being built */
	struct mem_budget *mem;
	struct metrics_flow m;		/* the flow's counters */
	struct ratelimit rl;		/* maxBytesPerSecond, ... */
	uint64_t	 held_ms;	/* when the limit last held it */
	enum window	 window;
	enum flow_state	 state;
	bool		 once;
	uv_timer_t	 age_timer;
	uv_timer_t	 pump_timer;
	uv_timer_t	 rate_timer;	/* the refill of a flow held by its
					   rate limit */
	struct closer	 closer;	/* the timers being closed */
	flow_cb		 cb;
	void		*arg;
};

static void	pump(struct flow *);
static void	retry_cur(struct flow *);
static void	flow_freed(struct closer *);

static const char *const window_names[] = {
	"open", "full", "memory", "rate",
};

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
	batch_size_of(b, &f->last_size);
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

/* The file part of r's record id; cached while an origin's is fixed
 * (records of one file come in runs). */
static bool
record_id_file(struct flow *f, const struct source_rec *r, uint64_t *kid)
{
	if (f->kid_fixed && f->kid_origin == r->origin) {
		*kid = f->kid_file;
		return true;
	}
	if (!source_id_file(f->src, r, &f->agent_key, kid, &f->kid_fixed))
		return false;
	f->kid_origin = r->origin;
	f->kid_file = *kid;
	return true;
}

static int
skip_delivered(struct flow *f, const struct source_rec *r, size_t read_len,
    bool found)
{
	source_skip_known(f->src, r);
	f->skipped = true;
	f->m.records_read++;
	f->m.bytes_read += read_len;
	f->m.records_skipped[found]++;
	return 0;
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

/* --- the rate limit ------------------------------------------------------ */

static void
on_rate_timer(uv_timer_t *t)
{
	struct flow	*f = container_of(t, struct flow, rate_timer);

	if (f->window != WINDOW_RATE || f->state == FLOW_CANCELLED)
		return;
	set_window(f, WINDOW_OPEN);
	retry_cur(f);
	pump(f);
}

/*
 * Whether the rate limit lets the next record in; if not, the window
 * holds until the refill timer opens it (a held flow sleeps: the timer is
 * its only wake-up, at most every 50 ms).
 */
static bool
rate_admits(struct flow *f)
{
	uint64_t	 now, wait;

	/* No clock read per record when no limit is set (5% of the CPU of
	 * a backlog). */
	if (!ratelimit_on(&f->rl))
		return true;
	now = mono_ms();
	if (ratelimit_admit(&f->rl, now, &wait))
		return true;
	f->held_ms = now;
	set_window(f, WINDOW_RATE);
	uv_timer_start(&f->rate_timer, on_rate_timer, wait, 0);
	return false;
}

/*
 * A record the flow does not send (left out by a line filter,
 * dead-lettered or dropped by the chain) is done: the committed offset
 * still moves past its bytes.
 */
static void
skip_record(struct flow *f, const struct source_rec *r)
{
	source_skip(f->src, r);
	f->m.records_read++;
	f->m.bytes_read += r->len;
}

/* source_cbs: add one record, or refuse it when the window is closed. */
static int
on_record(void *arg, const struct source_rec *r)
{
	struct flow	*f = arg;
	const char	*data = r->data;
	size_t		 len = r->len, read_len = r->len;
	uint64_t	 kid;
	bool		 cut = false;
	int		 seg;

	/* Known delivered (the state file's spans): not sent again. */
	if (r->known && source_known(f->src, r, NULL, 0))
		return skip_delivered(f, r, read_len, false);
	if (f->filt != NULL && !filter_pass(f->filt, data, len)) {
		skip_record(f, r);
		f->m.records_filtered++;
		return 0;
	}
	if (!rate_admits(f))
		return 1;
	if (f->conv != NULL) {
		if (!convert_record(f->conv, data, len, r->name, r->off,
		    record_cap(f), &f->conv_out, &cut)) {
			skip_record(f, r);
			return 0;
		}
		data = f->conv_out.data;
		len = f->conv_out.len;
	}
	/* The key is made from the record itself (DETERMINISTIC hashes
	 * it), as the DIS Agent does before the SDK encodes it. */
	if (f->ids && record_id_file(f, r, &kid))
		partkey_make_id(f->pk, r->name, data, len, kid, r->off,
		    &f->key);
	else
		partkey_make(f->pk, r->name, data, len, &f->key);
	if (f->codec != NULL) {
		/* libcrypto failing to encrypt leaves nothing safe to send;
		 * nothing is committed, so a restart sends it again. */
		if (reccodec_encode(f->codec, data, len, &f->codec_out) != 0)
			fatalx("[%s] cannot encode a record of %s at offset "
			    "%" PRIu64 " (data.compress.enabled, "
			    "data.encrypt.enabled)", f->fc->name, r->name,
			    r->off);
		data = f->codec_out.data;
		len = f->codec_out.len;
	}
	/* Found in the stream: the data as sent, encoded (an encryption
	 * with a fresh IV never matches: such a record is sent again). */
	if (r->known && source_known(f->src, r, data, len))
		return skip_delivered(f, r, read_len, true);
	if (f->cur != NULL && batch_full(f, f->cur, len) && !flush_cur(f)) {
		set_window(f, WINDOW_FULL);
		return 1;
	}
	if (over_budget(f)) {
		set_window(f, WINDOW_MEMORY);
		return 1;
	}
	if (f->cur == NULL) {
		f->cur = batch_new(f->mem, &f->last_size);
		uv_timer_start(&f->age_timer, on_age_timer,
		    (uint64_t)f->fc->max_buffer_age_ms, 0);
	}
	/* A batch extends its range of the file only while that is the
	 * file's newest (a skipped record may have ended it). */
	seg = batch_seg_of(f->cur, r->origin);
	if (seg >= 0 && f->skipped &&
	    !source_is_newest(f->src, r, f->cur->segs[seg].range))
		seg = -1;
	if (seg < 0)
		seg = batch_add_seg(f->cur, r->origin, r->origin_name,
		    source_push(f->src, r));
	else
		source_extend(f->src, r, f->cur->segs[seg].range);
	batch_add(f->cur, data, len, f->key.data ? f->key.data : "",
	    f->key.data ? f->key.len : 0, (uint16_t)seg, r->off, r->end);
	f->pass_recs++;
	pace_record(&f->pace);
	if (r->known)
		source_passed(f->src, r);
	ratelimit_take(&f->rl, len);
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


/* A batch handed back undelivered: its records acknowledged so far stay
 * known (files_keep_acked), for the next save and a successor. */
static void
keep_acked(struct flow *f, const struct batch *b)
{
	struct acked_list l = { NULL, 0, 0 };

	acked_add_batch(b, &l);
	acked_sort(&l);
	source_keep_acked(f->src, l.v, l.n);
	free(l.v);
}

/* The sink handed b back: acknowledged ranges move the commit. */
static void
on_batch_done(struct batch *b, bool delivered, void *arg)
{
	struct flow	*f = arg;
	size_t		 i;

	if (delivered && f->state != FLOW_CANCELLED)
		for (i = 0; i < b->nsegs; i++)
			source_ack(f->src, b->segs[i].file, b->segs[i].range);
	else if ((b->ndone > 0 || b->nacked > 0) && f->src != NULL)
		keep_acked(f, b);
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

static void
on_sending(void *arg)
{
	struct flow	*f = arg;

	f->cb(f, FLOW_SENDING, NULL, f->arg);
}

/* --- the pump ----------------------------------------------------------- */

static void	schedule_pump(struct flow *);
static bool	next_pass_overflows(const struct flow *);

static void
pump(struct flow *f)
{
	size_t		 budget = PUMP_BUDGET;
	bool		 all_read, now = false;

	if (stopping(f))
		return;
	f->pass_recs = 0;
	pace_pump(&f->pace, f->src);
	all_read = source_read(f->src, &budget, record_cap(f));
	if (all_read)
		now = pace_read_all(&f->pace, f->src, f->fc);
	if (budget == 0 && f->window == WINDOW_OPEN)
		schedule_pump(f);
	else if (all_read && f->once && !flush_cur(f))
		set_window(f, WINDOW_FULL);
	else if (all_read && (now || next_pass_overflows(f)))
		(void)flush_cur(f);	/* else the age timer, or the next end */
	check_drained(f);
}

/*
 * Everything readable is read, and one more pass like this one would
 * overflow the current batch (reads coalesced per readCoalesceMillis come
 * in passes of a window's lines): send it now rather than a window later,
 * when the next pass fills it and its oldest record has waited two
 * windows.  Passes of a record or two (reads on events) never get here.
 */
static bool
next_pass_overflows(const struct flow *f)
{
	return f->cur != NULL && f->cur->nrecs > 0 && f->pass_recs > 1 &&
	    f->cur->nrecs + f->pass_recs > (size_t)f->fc->max_buffer_records;
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

static bool
window_open(void *arg)
{
	const struct flow *f = arg;

	return f->window == WINDOW_OPEN;
}

/* --- lifecycle ---------------------------------------------------------- */

/*
 * The processing chain and the source of the flow; 0, or -1 with the
 * reason in f->err (flow_start reports it).
 */
static int
reading_new(struct flow *f, const struct conf *conf,
    const struct conf_flow *fc, struct registry *reg)
{
	struct source_cbs cbs = { on_record, window_open, on_readable, f };
	struct framer_opts fo;
	bool		 keep;

	conf_framer_opts(fc, &fo);
	if (convert_new(&fc->conv, fo.delim, fc->keep_delimiter, f->dlq,
	    fc->name, &f->conv, NULL, f->err, sizeof(f->err)) != 0)
		return -1;
	keep = fo.keep_delim ||
	    (f->conv != NULL && convert_keeps_delimiter(f->conv));
	if (filter_new(fc->line_include, fc->line_exclude,
	    keep ? fo.delim : -1, &f->filt, NULL, f->err, sizeof(f->err)) != 0)
		return -1;
	if (f->conv != NULL) {
		if (convert_regex_jit(f->conv) >= 0)
			log_info("[%s] LOGTOJSON matches %s", fc->name,
			    convert_regex_jit(f->conv) ? "with PCRE2's JIT" :
			    "in PCRE2's interpreter (no JIT: no executable "
			    "memory, as under MemoryDenyWriteExecute=yes, or no "
			    "JIT support)");
		convert_count_into(f->conv, f->m.records_unmatched);
	}
	f->src = source_new(f->loop, conf, fc, reg, &f->m,
	    f->conv != NULL && convert_keeps_delimiter(f->conv), f->once,
	    &cbs, f->err, sizeof(f->err));
	return f->src != NULL ? 0 : -1;
}

/* What the state file says of the stream's partitions starts the sink's
 * floors (the run before saw them; nothing of this run lands below). */
static void
seed_sink(struct flow *f)
{
	const struct reg_stream *st;
	size_t		 i;

	st = reg_run_stream(registry_run(f->reg), f->stream_key);
	for (i = 0; st != NULL && i < st->n; i++)
		sink_seed(f->sink, st->seq[i].part, st->seq[i].last);
}

struct flow *
flow_new(uv_loop_t *loop, const struct conf *conf, const struct conf_flow *fc,
    struct disapi *api, struct registry *reg, struct mem_budget *mem,
    bool once, flow_cb cb, void *arg)
{
	struct sink_cbs	 cbs = { on_batch_done, on_request_ended, on_halt, NULL,
	    on_sending, once };
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
	buf_init(&f->key);
	f->pk = partkey_new(fc->partition_key_option);
	f->reg = reg;
	f->stream_key = fc->stream_id[0] != '\0' ?
	    xasprintf("id:%s", fc->stream_id) : xstrdup(fc->stream);
	dlq_path = conf_deadletter_path(conf);
	f->dlq = deadletter_new(dlq_path);
	free(dlq_path);
	cbs.arg = f;
	f->sink = sink_new(loop, api, conf, fc, f->dlq, &f->m, &cbs);
	seed_sink(f);
	uv_timer_init(loop, &f->age_timer);
	uv_timer_init(loop, &f->pump_timer);
	uv_timer_init(loop, &f->rate_timer);
	closer_init(&f->closer, flow_freed);
	ratelimit_init(&f->rl, (uint64_t)fc->max_bytes_per_s,
	    (uint64_t)fc->max_records_per_s, mono_ms());
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
	if (f->src == NULL) {
		log_error("[%s] %s", f->fc->name, f->err);
		return -EINVAL;
	}
	sink_start(f->sink);
	if (source_start(f->src) != 0)
		return -EINVAL;
	pump(f);
	return 0;
}

void
flow_stop(struct flow *f)
{
	set_state(f, FLOW_STOPPING);
	if (f->src != NULL)
		source_stop(f->src);
	uv_timer_stop(&f->pump_timer);
	if (!flush_cur(f))
		set_window(f, WINDOW_FULL);
}

bool
flow_quiet(const struct flow *f)
{
	/* A request being settled by reading is waited for too: cancelled,
	 * its records stay in doubt. */
	return sink_inflight(f->sink) == 0 && sink_settling(f->sink) == 0;
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
	return f->src == NULL || source_all_read(f->src);
}

const char *
flow_name(const struct flow *f)
{
	return f->fc->name;
}

void
flow_log_puts(struct flow *f)
{
	sink_log_puts(f->sink);
}

const struct metrics_flow *
flow_metrics(struct flow *f)
{
	if (f->src != NULL)
		source_gauges(f->src, &f->m);
	f->m.paused = sink_state(f->sink) == SINK_PAUSED;
	/* Held now, or a moment ago: a flow at its limit is held again and
	 * again, between refills. */
	f->m.rate_limited = f->window == WINDOW_RATE ||
	    (f->held_ms != 0 && mono_ms() - f->held_ms < 1000);
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
	if (f->src != NULL && !stopping(f))
		source_saved(f->src);
}

void
flow_touch(struct flow *f)
{
	if (f->src != NULL)
		source_touch(f->src);
}

void
flow_cancel(struct flow *f)
{
	set_state(f, FLOW_CANCELLED);
	if (f->src != NULL)
		source_stop(f->src);
	uv_timer_stop(&f->pump_timer);
	uv_timer_stop(&f->age_timer);
	uv_timer_stop(&f->rate_timer);
	sink_cancel(f->sink);
}

/* The last timer closed: the memory goes. */
static void
flow_freed(struct closer *c)
{
	struct flow	*f = container_of(c, struct flow, closer);

	buf_cleanup(&f->key);
	filter_free(f->filt);
	convert_free(f->conv);
	buf_cleanup(&f->conv_out);
	reccodec_free(f->codec);
	buf_cleanup(&f->codec_out);
	partkey_free(f->pk);
	deadletter_free(f->dlq);
	free(f->stream_key);
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
	source_free(f->src);
	closer_close(&f->closer, (uv_handle_t *)&f->rate_timer);
	closer_close(&f->closer, (uv_handle_t *)&f->age_timer);
	closer_close(&f->closer, (uv_handle_t *)&f->pump_timer);
	closer_release(&f->closer);
}

/* --- what a restart needs ---------------------------------------------- */

void
flow_each_file(const struct flow *f, source_file_fn fn, void *arg)
{
	if (f->src != NULL)
		source_each_file(f->src, fn, arg);
}

void
flow_set_agent_key(struct flow *f, const struct hash_key *k)
{
	if (k == NULL) {
		f->ids = false;
		return;
	}
	f->agent_key = *k;
	f->ids = partkey_carries_id(f->pk);
}

const char *
flow_stream_key(const struct flow *f)
{
	return f->stream_key;
}

void
flow_publish(struct flow *f)
{
	struct acked_list l = { NULL, 0, 0 };

	if (f->src == NULL)
		return;
	sink_each(f->sink, acked_add_batch, &l);
	acked_sort(&l);
	source_publish(f->src, l.v, l.n);
	free(l.v);
}

void
flow_floors(const struct flow *f, void (*cb)(int32_t, int64_t, void *),
    void *arg)
{
	sink_floors(f->sink, cb, arg);
}

size_t
flow_uncertain(const struct flow *f)
{
	/* Not sink_inflight: a DescribeStream on the wire sends no record,
	 * and a --once run that sent nothing stops clean.  sink_uncertain
	 * counts the PutRecords on the wire. */
	return sink_uncertain(f->sink);
}

bool
flow_restart_pending(struct flow *f)
{
	return f->src != NULL && source_restart_pending(f->src);
}

void
flow_release(struct flow *f)
{
	if (f->src != NULL)
		source_release(f->src);
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
	return f->src != NULL ? source_hand_over(f->src) : NULL;
}

void
flow_adopt(struct flow *f, struct files_handover *h)
{
	size_t	 n;

	n = source_adopt(f->src, h);
	if (n > 0)
		log_info("[%s] reading on %zu open file%s of the flow it "
		    "replaces", f->fc->name, n, n == 1 ? "" : "s");
}

void
flow_spool(struct flow *f, struct spool *sp)
{
	if (f->src != NULL)
		source_spool(f->src, sp);
}
