/*
 * What a restart and a transition ask of a flow (flow.h): the agent key
 * of its record ids, what it delivered past its committed offsets and its
 * stream's floors for the state file, whether a stop is clean; its
 * configuration, its open files for a successor, its spool.
 */
#include "config.h"

#include <stdlib.h>

#include "agent/acked.h"
#include "agent/flow.h"
#include "agent/flow_int.h"
#include "agent/source.h"
#include "agent/source_files.h"
#include "base/log.h"
#include "conf/conf.h"
#include "files/files.h"
#include "records/chain.h"
#include "sink/sink.h"

/* --- what a restart needs ---------------------------------------------- */

/* The files-only part of f's source: NULL without one, or the journal. */
static struct source_files *
files_of(const struct flow *f)
{
	return f->src != NULL ? source_files(f->src) : NULL;
}

void
flow_each_file(const struct flow *f, source_file_fn fn, void *arg)
{
	if (files_of(f) != NULL)
		source_files_each(files_of(f), fn, arg);
}

void
flow_set_agent_key(struct flow *f, const struct hash_key *k)
{
	if (k != NULL)
		f->agent_key = *k;
	chain_set_ids(f->chain, k != NULL);
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

	if (files_of(f) == NULL)
		return;
	sink_each(f->sink, acked_add_batch, &l);
	acked_sort(&l);
	source_files_publish(files_of(f), l.v, l.n);
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
	return files_of(f) != NULL && source_files_restart_pending(files_of(f));
}

void
flow_release(struct flow *f)
{
	if (files_of(f) != NULL)
		source_files_release(files_of(f));
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
	return files_of(f) != NULL ? source_files_hand_over(files_of(f)) : NULL;
}

void
flow_adopt(struct flow *f, struct files_handover *h)
{
	size_t	 n;

	/* A flow that reads no files now (the journal, or none at all)
	 * has no use for its predecessor's files. */
	if (files_of(f) == NULL) {
		files_handover_free(h);
		return;
	}
	n = source_files_adopt(files_of(f), h);
	if (n > 0)
		log_info("[%s] reading on %zu open file%s of the flow it "
		    "replaces", f->fc->name, n, n == 1 ? "" : "s");
}

void
flow_spool(struct flow *f, struct spool *sp)
{
	if (files_of(f) != NULL)
		source_files_spool(files_of(f), sp);
}
