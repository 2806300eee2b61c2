/*
 * The records of a PutRecords reply settled (sinkrecs.h): acknowledgements,
 * dead letters, and the reply's line in the log.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/metrics.h"
#include "base/util.h"
#include "records/deadletter.h"
#include "sink/batch.h"
#include "sink/putbody.h"
#include "sink/seqmark.h"
#include "sink/sinkrecs.h"
#include "sink/sinkreply.h"
#include "wire/codec.h"

/* --- dead letters ------------------------------------------------------- */

/*
 * Append record i to the dead-letter file and sync it; only then may the
 * record count as done.  Returns 0 or a negative errno (the record is then
 * kept and retried).
 */
static int
dead_letter(const struct sinkrecs *k, struct batch *b, size_t i,
    const char *code, const char *msg)
{
	struct batch_rec *r = &b->recs[i];
	int		 rc;

	rc = deadletter_write(k->dlq, k->flow, b->segs[r->seg].name,
	    r->file_off, code, msg, b->data.data + r->off, r->len);
	if (rc == 0)
		k->m->records_dead_lettered++;
	return rc;
}

/* Dead letters of one reply, for one WARN with the count by code. */
struct dead_tally {
	struct metrics_code_count codes[4];
	size_t		 ncodes;
	size_t		 n;
	size_t		 first;		/* record index of the first */
};

static void
tally(struct dead_tally *t, const char *code, size_t i)
{
	size_t	 j;

	if (t->n++ == 0)
		t->first = i;
	for (j = 0; j < t->ncodes; j++)
		if (strcmp(t->codes[j].code, code) == 0)
			break;
	if (j == t->ncodes) {
		if (t->ncodes == ARRAY_SIZE(t->codes))
			return;		/* the total still counts it */
		snprintf(t->codes[j].code, sizeof(t->codes[j].code), "%s",
		    code);
		t->codes[j].count = 0;
		t->ncodes++;
	}
	t->codes[j].count++;
}

static void
log_dead(const struct sinkrecs *k, const struct batch *b,
    const struct dead_tally *t)
{
	const struct batch_rec *r;
	struct buf	 codes;
	size_t		 j;

	if (t->n == 0)
		return;
	buf_init(&codes);
	for (j = 0; j < t->ncodes; j++)
		buf_printf(&codes, "%s%s %" PRIu64, j ? ", " : "",
		    t->codes[j].code, t->codes[j].count);
	r = &b->recs[t->first];
	log_warn("[%s] %zu record%s rejected by DIS for good (%s; the first "
	    "from %s at offset %ju): written to %s", k->flow, t->n,
	    t->n == 1 ? "" : "s", codes.data, b->segs[r->seg].name,
	    (uintmax_t)r->file_off, deadletter_path(k->dlq));
	buf_cleanup(&codes);
}

int
sinkrecs_dead_one(const struct sinkrecs *k, struct batch *b, size_t i,
    const char *code, const char *msg)
{
	struct dead_tally t;
	int		 rc;

	if ((rc = dead_letter(k, b, i, code, msg)) != 0)
		return rc;
	memset(&t, 0, sizeof(t));
	tally(&t, code, i);
	log_dead(k, b, &t);
	batch_mark_done(b, i);
	return 0;
}

/* --- a reply's records -------------------------------------------------- */

static void
log_put(struct sinkrecs *k, size_t n, size_t nfail,
    const struct codec_result *res, uint64_t ms)
{
	struct puttally	*t = &k->tally;
	uint64_t	 now;
	size_t		 i;

	if (nfail == 0) {
		now = mono_ms();
		if (now - t->sec_ms >= 1000) {
			t->sec_ms = now;
			t->lines = 0;
		}
		if (t->lines < PUT_LINES_PER_S) {
			t->lines++;
			log_info("Put %zu records to [%s] spend %" PRIu64 "ms",
			    n, k->stream, ms);
			return;
		}
		t->reqs++;
		t->recs += n;
		t->ms += ms;
		return;
	}
	for (i = 0; i < n && res[i].code[0] == '\0'; i++)
		;
	log_warn("Put %zu records to [%s] spend %" PRIu64 "ms, "
	    "currentFailedCount %zu, failure info [%s %s]", n,
	    k->stream, ms, nfail, i < n ? res[i].code : "",
	    i < n ? res[i].message : "");
}

void
sinkrecs_log_puts(struct sinkrecs *k)
{
	struct puttally	*t = &k->tally;

	if (t->reqs == 0)
		return;
	log_info("Put %zu records to [%s] spend %" PRIu64 "ms on average, in "
	    "%zu requests (more than %d a second: summed since the last such "
	    "line)", t->recs, k->stream, t->ms / t->reqs, t->reqs,
	    PUT_LINES_PER_S);
	t->reqs = t->recs = 0;
	t->ms = 0;
}

bool
sinkrecs_settle(struct sinkrecs *k, struct batch *b,
    const struct putbody_req *req, const struct sinkreply_verdict *v,
    uint64_t sent_ms, size_t *throttled)
{
	const struct codec_result *e;
	struct dead_tally dead;
	size_t		 i, j;
	bool		 retry = false;

	memset(&dead, 0, sizeof(dead));
	for (i = 0; i < req->nsent; i++) {
		j = req->sent_idx[i];
		e = &v->res[i];
		if (v->rec[i] == SINKREPLY_ACKED) {
			k->m->records_sent++;
			k->m->bytes_sent += b->recs[j].len;
			seqmark_ack(k->seq, e->partition, e->seq);
			batch_mark_done(b, j);
			continue;
		}
		metrics_count_failed(k->m, e->code, 1);
		if (v->rec[i] == SINKREPLY_REFUSED &&
		    dead_letter(k, b, j, e->code, e->message) == 0) {
			tally(&dead, e->code, j);
			batch_mark_done(b, j);
			continue;
		}
		if (v->rec[i] == SINKREPLY_REFUSED &&
		    strcmp(e->code, "DIS.4303") == 0)
			(*throttled)++;
		k->m->records_retried++;
		retry = true;
	}
	log_dead(k, b, &dead);
	log_put(k, req->nsent, v->nfail, v->res, mono_ms() - sent_ms);
	return retry;
}
