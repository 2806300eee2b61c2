/*
 * The processing chain (chain.h): a flow's stages compiled once, in a list
 * that chain_record walks for each record.  The list holds the stages'
 * kinds, dispatched by a switch, so that their code is inlined in
 * chain_record: no call per stage (the chain runs for every record, and
 * a call through a pointer per stage cost 1% of a backlog's
 * instructions).  A new stage is a kind, its function, its case, and its
 * place in build().
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>

#include "base/log.h"
#include "records/chain.h"
#include "records/convert.h"
#include "records/deadletter.h"
#include "records/filter.h"
#include "records/partkey.h"
#include "records/ratelimit.h"

/* Most stages a chain has: one of each kind (chain.h lists them). */
#define MAX_STAGES	8

/* One record on its way through the stages. */
struct work {
	const struct chain_rec *rec;
	struct chain_out *out;
	const char	*data;		/* as the stages before made it */
	size_t		 len;
};

/*
 * The stages.  Each returns CHAIN_SEND to hand the record on to the next
 * one (with w->data and w->len as it left them); any other verdict ends
 * the walk.
 */
enum stage {
	STAGE_FILTER,
	STAGE_RATE,
	STAGE_CONVERT,
	STAGE_KEY,
	STAGE_CODEC,
};

struct chain {
	char		*flow;
	struct filter	*filt;		/* NULL: no line filter */
	struct ratelimit rl;
	uint64_t	(*clock)(void);	/* the rate limit's */
	struct convert	*conv;		/* NULL: no dataProcessingOptions */
	struct buf	 conv_out;	/* the converted record */
	struct partkey	*pk;
	bool		 pk_id;		/* the keys may carry record ids */
	bool		 ids;		/* ... and do (chain_set_ids) */
	bool		 kid_fixed;	/* kid_file holds for kid_origin's */
	uint64_t	 kid_origin;	/* later records (those of one file */
	uint64_t	 kid_file;	/* come in runs) */
	struct buf	 key;		/* the partition key being made */
	struct reccodec	*codec;		/* NULL: no per-record codec */
	struct buf	 codec_out;	/* the record as it goes on the wire */
	struct deadletter *dlq;
	struct chain_cbs cbs;
	enum stage	 stages[MAX_STAGES];
	size_t		 nstages;
};

/* --- the stages, in their order ----------------------------------------- */

static enum chain_verdict
stage_filter(struct chain *c, struct work *w)
{
	return filter_pass(c->filt, w->data, w->len) ? CHAIN_SEND :
	    CHAIN_FILTERED;
}

/* Admitted while the buckets have tokens; no clock is read without a
 * limit (the stage is not in the list: 5% of the CPU of a backlog). */
static enum chain_verdict
stage_rate(struct chain *c, struct work *w)
{
	uint64_t	 now = c->clock();

	if (ratelimit_admit(&c->rl, now, &w->out->wait_ms))
		return CHAIN_SEND;
	w->out->held_ms = now;
	return CHAIN_REFUSED;
}

static enum chain_verdict
stage_convert(struct chain *c, struct work *w)
{
	const struct chain_rec *r = w->rec;

	if (!convert_record(c->conv, w->data, w->len, r->name, r->off,
	    reccodec_plain_cap(c->codec, r->cap), &c->conv_out,
	    &w->out->truncated))
		return CHAIN_DROPPED;
	w->data = c->conv_out.data;
	w->len = c->conv_out.len;
	return CHAIN_SEND;
}

/* The file part of r's record id; kept while its origin's is fixed. */
static bool
record_id_file(struct chain *c, const struct chain_rec *r, uint64_t *kid)
{
	if (c->kid_fixed && c->kid_origin == r->origin) {
		*kid = c->kid_file;
		return true;
	}
	if (!c->cbs.id_file(c->cbs.arg, r, kid, &c->kid_fixed))
		return false;
	c->kid_origin = r->origin;
	c->kid_file = *kid;
	return true;
}

static enum chain_verdict
stage_key(struct chain *c, struct work *w)
{
	const struct chain_rec *r = w->rec;
	uint64_t	 kid;

	if (c->ids && record_id_file(c, r, &kid))
		partkey_make_id(c->pk, r->name, w->data, w->len, kid, r->off,
		    &c->key);
	else
		partkey_make(c->pk, r->name, w->data, w->len, &c->key);
	w->out->key = c->key.data != NULL ? c->key.data : "";
	w->out->klen = c->key.data != NULL ? c->key.len : 0;
	return CHAIN_SEND;
}

static enum chain_verdict
stage_codec(struct chain *c, struct work *w)
{
	/* libcrypto failing to encrypt leaves nothing safe to send;
	 * nothing is committed, so a restart sends it again. */
	if (reccodec_encode(c->codec, w->data, w->len, &c->codec_out) != 0)
		fatalx("[%s] cannot encode a record of %s at offset "
		    "%" PRIu64 " (data.compress.enabled, "
		    "data.encrypt.enabled)", c->flow, w->rec->name,
		    w->rec->off);
	w->data = c->codec_out.data;
	w->len = c->codec_out.len;
	return CHAIN_SEND;
}

/* --- the chain ---------------------------------------------------------- */

static void
add_stage(struct chain *c, enum stage st)
{
	if (c->nstages == MAX_STAGES)
		fatalx("chain: more than %d stages", MAX_STAGES);
	c->stages[c->nstages++] = st;
}

/* The list, in the order chain.h gives: each stage only when set. */
static void
build(struct chain *c)
{
	if (c->filt != NULL)
		add_stage(c, STAGE_FILTER);
	if (ratelimit_on(&c->rl))
		add_stage(c, STAGE_RATE);
	if (c->conv != NULL)
		add_stage(c, STAGE_CONVERT);
	add_stage(c, STAGE_KEY);
	if (c->codec != NULL)
		add_stage(c, STAGE_CODEC);
}

static enum chain_verdict
run_stage(struct chain *c, enum stage st, struct work *w)
{
	switch (st) {
	case STAGE_FILTER:
		return stage_filter(c, w);
	case STAGE_RATE:
		return stage_rate(c, w);
	case STAGE_CONVERT:
		return stage_convert(c, w);
	case STAGE_KEY:
		return stage_key(c, w);
	case STAGE_CODEC:
		return stage_codec(c, w);
	}
	fatalx("chain: stage %d", (int)st);
}

int
chain_new(const struct chain_opts *o, struct chain **out, const char **key,
    char *err, size_t errlen)
{
	struct chain	*c;
	bool		 keep;
	int		 rc;

	*out = NULL;
	c = xcalloc(1, sizeof(*c));
	c->flow = xstrdup(o->flow);
	c->cbs = o->cbs;
	c->clock = mono_ms;
	buf_init(&c->conv_out);
	buf_init(&c->key);
	buf_init(&c->codec_out);
	if (o->dead_letter_path != NULL)
		c->dlq = deadletter_new(o->dead_letter_path);
	if (o->conv != NULL && (rc = convert_new(o->conv, o->delim,
	    o->keep_delim, c->dlq, c->flow, &c->conv, key, err, errlen)) != 0)
		goto fail;
	/* The filters see the record as framed: with its delimiter when
	 * the framer keeps it, for the converters or for the key. */
	keep = o->keep_delim || (c->conv != NULL &&
	    convert_keeps_delimiter(c->conv));
	if ((rc = filter_new(o->include, o->exclude, keep ? o->delim : -1,
	    &c->filt, key, err, errlen)) != 0)
		goto fail;
	if (c->conv != NULL && o->unmatched != NULL)
		convert_count_into(c->conv, o->unmatched);
	c->pk = partkey_new(o->partition_key != NULL ? o->partition_key : "");
	c->pk_id = partkey_carries_id(c->pk);
	c->codec = reccodec_new(&o->codec);
	ratelimit_init(&c->rl, o->bytes_per_s, o->records_per_s, c->clock());
	build(c);
	*out = c;
	return 0;
fail:
	chain_free(c);
	return rc;
}

void
chain_free(struct chain *c)
{
	if (c == NULL)
		return;
	filter_free(c->filt);
	convert_free(c->conv);
	buf_cleanup(&c->conv_out);
	partkey_free(c->pk);
	buf_cleanup(&c->key);
	reccodec_free(c->codec);
	buf_cleanup(&c->codec_out);
	deadletter_free(c->dlq);
	free(c->flow);
	free(c);
}

enum chain_verdict
chain_record(struct chain *c, const struct chain_rec *r,
    struct chain_out *out)
{
	struct work	 w = { r, out, r->data, r->len };
	enum chain_verdict v;
	size_t		 i;

	out->truncated = false;
	for (i = 0; i < c->nstages; i++)
		if ((v = run_stage(c, c->stages[i], &w)) != CHAIN_SEND)
			return v;
	out->data = w.data;
	out->len = w.len;
	return CHAIN_SEND;
}

void
chain_sent(struct chain *c, size_t len)
{
	ratelimit_take(&c->rl, len);
}

size_t
chain_plain_cap(const struct chain *c, size_t cap)
{
	return reccodec_plain_cap(c->codec, cap);
}

bool
chain_keeps_delimiter(const struct chain *c)
{
	return c->conv != NULL && convert_keeps_delimiter(c->conv);
}

bool
chain_carries_id(const struct chain *c)
{
	return c != NULL && c->pk_id;
}

void
chain_set_ids(struct chain *c, bool on)
{
	c->ids = on && c->pk_id && c->cbs.id_file != NULL;
}

int
chain_regex_jit(const struct chain *c)
{
	return c->conv != NULL ? convert_regex_jit(c->conv) : -1;
}

struct deadletter *
chain_deadletter(struct chain *c)
{
	return c->dlq;
}

void
chain_set_clock(struct chain *c, uint64_t (*clock)(void))
{
	c->clock = clock;
	ratelimit_init(&c->rl, (uint64_t)c->rl.rate[RATE_BYTES],
	    (uint64_t)c->rl.rate[RATE_RECORDS], clock());
}
