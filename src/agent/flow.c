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
 * What a restart and a transition ask of a flow is flow_restart.c.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "agent/acked.h"
#include "agent/flow.h"
#include "agent/flow_int.h"
#include "agent/source.h"
#include "agent/source_files.h"
#include "base/log.h"
#include "conf/conf.h"
#include "records/chain.h"
#include "state/registry.h"
#include "sink/sink.h"

#define PUMP_BUDGET	(8u * 1024 * 1024)	/* bytes per loop turn */

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

	if (b == NULL || batch_nrecs(b) == 0)
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

	return batch_nrecs(b) + riders >= (size_t)f->fc->max_buffer_records ||
	    (batch_nrecs(b) > 0 &&
	    batch_bytes(b) + rbytes + len > sink_request_cap(f->sink));
}

/* The memory budget (R11): a flow holding nothing may always take a
 * record, so no flow starves. */
static bool
over_budget(const struct flow *f)
{
	return f->mem->used >= f->mem->limit &&
	    ((f->cur != NULL && batch_nrecs(f->cur) > 0) ||
	    sink_pending(f->sink) > 0);
}

/* chain_cbs: the file part of a record's id, under the agent's key. */
static bool
chain_id_file(void *arg, const struct chain_rec *cr, uint64_t *kid,
    bool *fixed)
{
	struct flow	*f = arg;

	struct source_files *sf = source_files(f->src);

	return sf != NULL && source_files_id_file(sf, cr->ctx, &f->agent_key,
	    kid, fixed);
}

/*
 * The most bytes of a record before the per-record codecs, so that what
 * goes on the wire stays under the stream's record cap: the framer and
 * the chain cut records to this.
 */
static size_t
record_cap(const struct flow *f)
{
	return chain_plain_cap(f->chain, sink_record_cap(f->sink));
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
 * The rate limit did not let the record in (the chain refused it): the
 * window holds until the refill timer opens it (a held flow sleeps: the
 * timer is its only wake-up, at most every 50 ms).
 */
static int
rate_holds(struct flow *f, const struct chain_out *o)
{
	f->held_ms = o->held_ms;
	set_window(f, WINDOW_RATE);
	uv_timer_start(&f->rate_timer, on_rate_timer, o->wait_ms, 0);
	return 1;
}

/*
 * A record the flow does not send (left out by a line filter,
 * dead-lettered or dropped by the chain) is done: the committed offset
 * still moves past its bytes.
 */
static int
skip_record(struct flow *f, const struct source_rec *r, bool filtered)
{
	source_skip(f->src, r);
	f->m.records_read++;
	f->m.bytes_read += r->len;
	f->m.records_filtered += filtered;
	return 0;
}

/* Whether the window takes a record of len bytes more: the batch being
 * filled has room (or goes out), and memory is under the budget. */
static bool
window_takes(struct flow *f, size_t len)
{
	if (f->cur != NULL && batch_full(f, f->cur, len) && !flush_cur(f)) {
		set_window(f, WINDOW_FULL);
		return false;
	}
	if (over_budget(f)) {
		set_window(f, WINDOW_MEMORY);
		return false;
	}
	return true;
}

/* r, as the chain made it (o), into the batch being filled. */
static void
batch_record(struct flow *f, const struct source_rec *r,
    const struct chain_out *o)
{
	int		 seg;
	uint64_t	 range;

	if (f->cur == NULL) {
		f->cur = batch_new(f->mem, &f->last_size);
		uv_timer_start(&f->age_timer, on_age_timer,
		    (uint64_t)f->fc->max_buffer_age_ms, 0);
	}
	/* The source extends the batch's range of the origin, or opens
	 * one (the first record of it, or a skipped one ended it). */
	seg = batch_seg_of(f->cur, r->origin);
	range = seg >= 0 ? batch_seg_range(f->cur, (size_t)seg) :
	    SOURCE_NO_RANGE;
	if (source_add(f->src, r, &range))
		seg = batch_add_seg(f->cur, r->origin, r->origin_name, range);
	batch_add(f->cur, o->data, o->len, o->key, o->klen, (uint16_t)seg,
	    r->off, r->end);
	f->pass_recs++;
	pace_record(&f->pace);
	chain_sent(f->chain, o->len);
	f->m.records_read++;
	f->m.bytes_read += r->len;
	f->m.records_truncated += o->truncated;
}

/*
 * source_cbs: add one record, or refuse it when the window is closed.
 * What a restart knows delivered the source skips before it gets here
 * (the state file's spans), or after the chain (found in the stream: the
 * data as sent, encoded; an encryption with a fresh IV never matches, so
 * such a record is sent again).
 */
static int
on_record(void *arg, const struct source_rec *r)
{
	struct flow	*f = arg;
	struct chain_out o;

	switch (chain_record(f->chain, &(struct chain_rec){ r->data, r->len,
	    r->name, r->off, r->origin, sink_record_cap(f->sink), r }, &o)) {
	case CHAIN_FILTERED:
		return skip_record(f, r, true);
	case CHAIN_DROPPED:
		return skip_record(f, r, false);
	case CHAIN_REFUSED:
		return rate_holds(f, &o);
	case CHAIN_SEND:
		break;
	}
	if (r->known && source_files_found(source_files(f->src), r, o.data,
	    o.len))
		return 0;
	if (!window_takes(f, o.len))
		return 1;
	batch_record(f, r, &o);
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
	struct source_files *sf = source_files(f->src);
	struct acked_list l = { NULL, 0, 0 };

	if (sf == NULL)		/* the journal: its cursor is all it keeps */
		return;
	acked_add_batch(b, &l);
	acked_sort(&l);
	source_files_keep_acked(sf, l.v, l.n);
	free(l.v);
}

/* The sink handed b back: acknowledged ranges move the commit. */
static void
on_batch_done(struct batch *b, bool delivered, void *arg)
{
	struct flow	*f = arg;
	size_t		 i;

	if (delivered && f->state != FLOW_CANCELLED)
		for (i = 0; i < batch_nsegs(b); i++)
			source_ack(f->src, batch_seg_file(b, i),
			    batch_seg_range(b, i));
	else if (batch_any_done(b) && f->src != NULL)
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
	return f->cur != NULL && batch_nrecs(f->cur) > 0 && f->pass_recs > 1 &&
	    batch_nrecs(f->cur) + f->pass_recs >
	    (size_t)f->fc->max_buffer_records;
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
 * The processing chain of the flow, before its sink, which borrows the
 * chain's dead-letter file.  One that does not compile leaves the reason
 * in f->err for flow_start, and the flow an empty chain that holds the
 * dead-letter file: such a flow never reads.
 */
static void
chain_make(struct flow *f, const struct conf *conf,
    const struct conf_flow *fc)
{
	struct chain_opts o;
	char		*dlq_path = conf_deadletter_path(conf);

	conf_chain_opts(conf, fc, &o);
	o.dead_letter_path = dlq_path;
	o.unmatched = f->m.records_unmatched;
	o.cbs = (struct chain_cbs){ chain_id_file, f };
	f->chain_ok = chain_new(&o, &f->chain, NULL, f->err,
	    sizeof(f->err)) == 0;
	if (!f->chain_ok && chain_new(&(struct chain_opts){ .flow = fc->name,
	    .delim = -1, .dead_letter_path = dlq_path }, &f->chain, NULL, NULL,
	    0) != 0)
		fatalx("[%s] cannot make an empty chain", fc->name);
	free(dlq_path);
}

/* The source of the flow; 0, or -1 with the reason in f->err (flow_start
 * reports it). */
static int
reading_new(struct flow *f, const struct conf *conf,
    const struct conf_flow *fc, struct registry *reg)
{
	struct source_cbs cbs = { on_record, window_open, on_readable, f };
	int		 jit;

	if (!f->chain_ok)
		return -1;
	if ((jit = chain_regex_jit(f->chain)) >= 0)
		log_info("[%s] LOGTOJSON matches %s", fc->name, jit ?
		    "with PCRE2's JIT" : "in PCRE2's interpreter (no JIT: no "
		    "executable memory, as under MemoryDenyWriteExecute=yes, "
		    "or no JIT support)");
	f->src = source_new(f->loop, conf, fc, reg, &f->m,
	    chain_keeps_delimiter(f->chain), f->once, &cbs, f->err,
	    sizeof(f->err));
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
	f->reg = reg;
	f->stream_key = fc->stream_id[0] != '\0' ?
	    xasprintf("id:%s", fc->stream_id) : xstrdup(fc->stream);
	chain_make(f, conf, fc);
	cbs.arg = f;
	f->sink = sink_new(loop, api, conf, fc, chain_deadletter(f->chain),
	    &f->m, &cbs);
	seed_sink(f);
	uv_timer_init(loop, &f->age_timer);
	uv_timer_init(loop, &f->pump_timer);
	uv_timer_init(loop, &f->rate_timer);
	closer_init(&f->closer, flow_freed);
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
	if ((f->cur != NULL && batch_nrecs(f->cur) > 0) ||
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

	chain_free(f->chain);	/* after the sink: it borrows the dead letters */
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
