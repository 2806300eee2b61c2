/*
 * What other layers take from a flow's keys, derived in one place: the
 * framing options the agent's flows and `disagent verify` share, the
 * processing chain's options the flows and the check of the file share, the
 * dead-letter file's path and the spool's, and which files a flow picks.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/pattern.h"
#include "conf/conf.h"
#include "conf/ctrconf.h"
#include "records/ctrlog.h"
#include "records/chain.h"

void
conf_framer_opts(const struct conf_flow *fc, struct framer_opts *out)
{
	memset(out, 0, sizeof(*out));
	out->delim = conf_delimiter(fc->record_delimiter);
	out->keep_delim = fc->keep_delimiter;
	out->strip_cr = fc->strip_cr;
	out->skip_empty = fc->skip_empty;
	out->multiline = fc->multiline_pattern;
	out->preset = fc->multiline_preset;
	out->encoding = fc->file_encoding;
	out->skip_header = (unsigned long)fc->skip_header_lines;
	if (fc->source != SOURCE_CONTAINERS)
		return;
	/* containerFormat's words are auto, cri, docker: CTRLOG_AUTO on. */
	out->container = CTRLOG_AUTO + fc->ctr_format;
	out->streams = fc->ctr_streams == 0 ? CTRLOG_ALL :
	    1u << (fc->ctr_streams - 1);
	out->ctr_record = fc->ctr_record;
}

void
conf_chain_opts(const struct conf *c, const struct conf_flow *fc,
    struct chain_opts *out)
{
	memset(out, 0, sizeof(*out));
	out->flow = fc->name;
	out->conv = &fc->conv;
	out->delim = conf_delimiter(fc->record_delimiter);
	out->keep_delim = fc->keep_delimiter;
	out->include = fc->line_include;
	out->exclude = fc->line_exclude;
	out->partition_key = fc->partition_key_option;
	out->codec = (struct reccodec_opts){ c->data_compress, c->data_encrypt,
	    c->data_password };
	out->bytes_per_s = (uint64_t)fc->max_bytes_per_s;
	out->records_per_s = (uint64_t)fc->max_records_per_s;
}

/* set, or name in the directory of checkpointFile: new. */
static char *
beside_checkpoint(const struct conf *c, const char *set, const char *name)
{
	const char	*slash;

	if (set[0] != '\0')
		return xstrdup(set);
	slash = strrchr(c->checkpoint_file, '/');
	if (slash == NULL)
		return xstrdup(name);
	return xasprintf("%.*s/%s", (int)(slash - c->checkpoint_file),
	    c->checkpoint_file, name);
}

char *
conf_deadletter_path(const struct conf *c)
{
	return beside_checkpoint(c, c->dead_letter_file, "deadletter.jsonl");
}

char *
conf_spool_dir(const struct conf *c)
{
	return beside_checkpoint(c, c->spool_dir, "spool");
}

bool
conf_flow_matches(const struct conf_flow *fc, const char *path)
{
	char		*pat;
	const char	*glob, *name = strrchr(path, '/');
	bool		 ok;

	if (fc->source == SOURCE_JOURNAL)
		return false;
	if (fc->source == SOURCE_CONTAINERS && !ctrconf_picks(fc, path))
		return false;
	pat = pattern_recursive(fc->file_pattern, fc->recursive);
	glob = strrchr(pat, '/');
	ok = pattern_match(pat, path) &&
	    !pattern_skipped_name(glob ? glob + 1 : pat, name ? name + 1 : path,
	    fc->file_suffix) && !pattern_excluded(fc->exclude_pattern, path);
	free(pat);
	return ok;
}

/* Whether s is unset or empty. */
static bool
unset(const char *s)
{
	return s == NULL || s[0] == '\0';
}

/* Whether two optional strings are the same (unset is ""). */
static bool
same(const char *a, const char *b)
{
	return strcmp(a != NULL ? a : "", b != NULL ? b : "") == 0;
}

bool
conf_flows_may_overlap(const struct conf_flow *a, const struct conf_flow *b)
{
	return a != b && a->enable && b->enable &&
	    a->source != SOURCE_JOURNAL && b->source != SOURCE_JOURNAL &&
	    same(a->stream, b->stream) && same(a->stream_id, b->stream_id) &&
	    unset(a->line_include) && unset(a->line_exclude) &&
	    unset(b->line_include) && unset(b->line_exclude);
}

const struct conf_flow *
conf_flow_shipped_before(const struct conf *c, const struct conf_flow *fc,
    const char *path)
{
	size_t	 i;

	/* (A flow of another conf: a reload's, or a test's.) */
	if (c == NULL || c->nflows == 0 || fc < &c->flows[0] ||
	    fc >= &c->flows[c->nflows])
		return NULL;
	for (i = 0; &c->flows[i] != fc; i++)
		if (conf_flows_may_overlap(&c->flows[i], fc) &&
		    conf_flow_matches(&c->flows[i], path))
			return &c->flows[i];
	return NULL;
}
