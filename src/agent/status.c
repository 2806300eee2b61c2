/*
 * `disagent status`: a read-only report built from the configuration, the
 * state file (through registry_peek, which never sets files aside or
 * writes) and the last-error gauges of the metrics file.  Each tracked file
 * is stat()ed now, so "behind" is the current size minus the committed
 * offset; a path that is missing, or that names a different inode than the
 * one the offset belongs to, shows no size.  The process environment gets
 * placeholder credentials for the configuration check only, because
 * reading offsets must not require the secret key.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/status.h"
#include "base/metrics.h"
#include "base/util.h"
#include "conf/conf.h"
#include "state/registry.h"

/* One tracked file, copied out of the registry, and measured now. */
struct row {
	char		*flow;
	char		*path;
	uint64_t	 dev;
	uint64_t	 ino;
	uint64_t	 offset;
	bool		 complete;	/* a whole file waiting for cleanup */
	char		*cursor;	/* a journal flow's position */
	bool		 has_size;	/* path still names this file */
	uint64_t	 size;
	uint64_t	 behind;
	const char	*note;		/* "" or "(missing)" ... */
};

struct report {
	FILE			*out;
	const char		*metrics;	/* metricsFile, or NULL */
	struct row		*rows;
	size_t			 nrows;
	struct metrics_error	*errs;
	size_t			 nerrs;
};

static void
collect(const struct reg_entry *e, void *arg)
{
	struct report	*r = arg;
	struct row	*w;

	r->rows = xrealloc(r->rows, (r->nrows + 1) * sizeof(*r->rows));
	w = &r->rows[r->nrows++];
	memset(w, 0, sizeof(*w));
	w->flow = xstrdup(e->flow);
	w->path = xstrdup(e->path);
	w->dev = e->dev;
	w->ino = e->ino;
	w->offset = e->offset;
	w->complete = e->done != NULL;
	if (e->cursor != NULL)
		w->cursor = xstrdup(e->cursor);
}

static int
row_cmp(const void *a, const void *b)
{
	const struct row	*x = a, *y = b;
	int			 c;

	c = strcmp(x->flow, y->flow);
	if (c == 0)
		c = strcmp(x->path, y->path);
	if (c == 0 && x->ino != y->ino)
		c = x->ino < y->ino ? -1 : 1;
	return c;
}

/* Size and bytes behind of the file now at the row's path. */
static void
measure(struct row *w)
{
	struct stat	 st;

	w->note = "";
	if (w->cursor != NULL)
		return;		/* a journal's position: no file */
	if (stat(w->path, &st) == -1) {
		w->note = w->complete ? "(delivered; cleaned up)" : "(missing)";
		return;
	}
	if ((uint64_t)st.st_dev != w->dev || (uint64_t)st.st_ino != w->ino) {
		w->note = "(replaced)";
		return;
	}
	w->has_size = true;
	w->size = (uint64_t)st.st_size;
	if (w->complete && w->size == w->offset) {
		w->note = "(delivered; cleanup pending)";
		return;
	}
	if (w->size >= w->offset) {
		w->behind = w->size - w->offset;
		return;
	}
	/* Truncated in place: the agent reads it again from the start. */
	w->note = "(truncated)";
	w->behind = w->size;
}

static void
print_row(FILE *out, const struct row *w)
{
	char	 s[24] = "-", b[24] = "-";

	if (w->has_size) {
		snprintf(s, sizeof(s), "%" PRIu64, w->size);
		snprintf(b, sizeof(b), "%" PRIu64, w->behind);
	}
	fprintf(out, "  %14" PRIu64 " %14s %14s  %s%s%s\n", w->offset, s, b,
	    w->path, w->note[0] != '\0' ? " " : "", w->note);
}

static void
print_time(FILE *out, int64_t t)
{
	struct tm	 tm;
	time_t		 tt = (time_t)t;
	char		 s[64];

	if (t <= 0 || gmtime_r(&tt, &tm) == NULL) {
		fputs("time unknown", out);
		return;
	}
	strftime(s, sizeof(s), "%Y-%m-%d %H:%M:%S UTC", &tm);
	fputs(s, out);
}

static void
print_error(const struct report *r, const char *flow)
{
	const struct metrics_error	*e;
	size_t				 i;

	for (i = 0; i < r->nerrs; i++) {
		e = &r->errs[i];
		if (strcmp(e->flow, flow) != 0)
			continue;
		fprintf(r->out, "  last error: %s %s (", e->code, e->message);
		print_time(r->out, e->time);
		fputs(")\n", r->out);
	}
}

/* A flow the metrics file says its rate limit holds. */
static void
print_held(const struct report *r, const struct conf_flow *fc)
{
	double	 v;

	if (fc == NULL || r->metrics == NULL ||
	    (fc->max_bytes_per_s == 0 && fc->max_records_per_s == 0) ||
	    metrics_read_gauge(r->metrics, "disagent_flow_rate_limited",
	    fc->name, &v) != 0 || v != 1)
		return;
	fputs("  held by its rate limit (", r->out);
	if (fc->max_bytes_per_s > 0)
		fprintf(r->out, "maxBytesPerSecond = %lld%s",
		    fc->max_bytes_per_s, fc->max_records_per_s > 0 ? ", " : "");
	if (fc->max_records_per_s > 0)
		fprintf(r->out, "maxRecordsPerSecond = %lld",
		    fc->max_records_per_s);
	fputs("): it reads no faster, the rest waits\n", r->out);
}

/* The committed cursor of the journal flow name, or NULL. */
static const char *
cursor_of(const struct report *r, const char *name)
{
	size_t	 i;

	for (i = 0; i < r->nrows; i++)
		if (r->rows[i].cursor != NULL &&
		    strcmp(r->rows[i].flow, name) == 0)
			return r->rows[i].cursor;
	return NULL;
}

/* A journal flow: where it is and how far behind, its last error. */
static void
print_journal_flow(const struct report *r, const struct conf_flow *fc,
    const char *what)
{
	fprintf(r->out, "\n[flow:%s] %s: journal %s%s%s\n", fc->name, what,
	    fc->journal_dir[0] != '\0' ? fc->journal_dir : "(system)",
	    fc->journal_match[0] != '\0' ? ", journalMatch = " : "",
	    fc->journal_match);
	status_journal(r->out, fc, cursor_of(r, fc->name));
	print_held(r, fc);
	print_error(r, fc->name);
}

/* One flow: a summary line, its last error, then its files. */
static void
print_flow(const struct report *r, const struct conf_flow *fc,
    const char *name, const char *what)
{
	size_t		 i, n = 0, done = 0;
	uint64_t	 behind = 0;

	if (fc != NULL && fc->source == SOURCE_JOURNAL) {
		print_journal_flow(r, fc, what);
		return;
	}
	for (i = 0; i < r->nrows; i++) {
		if (strcmp(r->rows[i].flow, name) != 0 ||
		    r->rows[i].cursor != NULL)
			continue;
		n++;
		done += r->rows[i].complete;
		behind += r->rows[i].behind;
	}
	fprintf(r->out, "\n[flow:%s] %s: %zu file%s, %" PRIu64 " bytes "
	    "behind\n", name, what, n, n == 1 ? "" : "s", behind);
	print_held(r, fc);
	if (done > 0)
		fprintf(r->out, "  %zu whole file%s delivered, waiting for "
		    "cleanup (deletePolicy, fileMoveToDir, fileSuffix)\n",
		    done, done == 1 ? "" : "s");
	print_error(r, name);
	if (n == 0)
		return;
	fprintf(r->out, "  %14s %14s %14s  %s\n", "OFFSET", "SIZE", "BEHIND",
	    "PATH");
	for (i = 0; i < r->nrows; i++)
		if (strcmp(r->rows[i].flow, name) == 0 &&
		    r->rows[i].cursor == NULL)
			print_row(r->out, &r->rows[i]);
}

static bool
configured(const struct conf *c, const char *flow)
{
	size_t	 i;

	for (i = 0; i < c->nflows; i++)
		if (strcmp(c->flows[i].name, flow) == 0)
			return true;
	return false;
}

static void
print_flows(const struct report *r, const struct conf *c)
{
	const struct conf_flow	*f;
	char			*what;
	size_t			 i;

	for (i = 0; i < c->nflows; i++) {
		f = &c->flows[i];
		if (f->stream_id[0] != '\0')
			what = xasprintf("stream id %s%s", f->stream_id,
			    f->enable ? "" : " (disabled)");
		else
			what = xasprintf("stream %s%s", f->stream,
			    f->enable ? "" : " (disabled)");
		print_flow(r, f, f->name, what);
		free(what);
	}
	/* Rows are sorted by flow: print each unknown flow once. */
	for (i = 0; i < r->nrows; i++) {
		if (configured(c, r->rows[i].flow) || (i > 0 &&
		    strcmp(r->rows[i].flow, r->rows[i - 1].flow) == 0))
			continue;
		print_flow(r, NULL, r->rows[i].flow,
		    "not in the configuration");
	}
}

/* The state file into r->rows; prints the "state file:" line.  0 or -1. */
static int
read_state(struct report *r, const struct conf *c)
{
	struct registry	*reg;
	bool		 from_bak;
	size_t		 i, njournal = 0;
	int		 rc;

	reg = registry_new(c->checkpoint_file);
	rc = registry_peek(reg, &from_bak);
	if (rc == 0 || rc == -ENOENT)
		registry_each(reg, collect, r);
	registry_free(reg);
	if (rc == -EBADMSG) {
		fprintf(stderr, "disagent status: state file %s and its .bak "
		    "are corrupt\n", c->checkpoint_file);
		return -1;
	}
	if (rc != 0 && rc != -ENOENT) {
		fprintf(stderr, "disagent status: cannot read state file %s: "
		    "%s\n", c->checkpoint_file, strerror(-rc));
		return -1;
	}
	for (i = 0; i < r->nrows; i++)
		njournal += r->rows[i].cursor != NULL;
	fprintf(r->out, "state file:    %s", c->checkpoint_file);
	if (rc == -ENOENT)
		fputs(" (none yet: nothing delivered)\n", r->out);
	else if (njournal == 0)
		fprintf(r->out, "%s (%zu file%s)\n", from_bak ? ".bak" : "",
		    r->nrows, r->nrows == 1 ? "" : "s");
	else
		fprintf(r->out, "%s (%zu file%s, %zu journal position%s)\n",
		    from_bak ? ".bak" : "", r->nrows - njournal,
		    r->nrows - njournal == 1 ? "" : "s", njournal,
		    njournal == 1 ? "" : "s");
	if (r->nrows > 0)
		qsort(r->rows, r->nrows, sizeof(*r->rows), row_cmp);
	for (i = 0; i < r->nrows; i++)
		measure(&r->rows[i]);
	return 0;
}

/* Last errors from metricsFile; prints the "metrics file:" line. */
static void
read_metrics(struct report *r, const struct conf *c)
{
	int	 rc;

	if (c->metrics_file[0] == '\0') {
		fputs("metrics file:  none (metricsFile is not set)\n", r->out);
		return;
	}
	r->metrics = c->metrics_file;
	rc = metrics_read_errors(c->metrics_file, &r->errs, &r->nerrs);
	if (rc == 0)
		fprintf(r->out, "metrics file:  %s\n", c->metrics_file);
	else if (rc == -ENOENT)
		fprintf(r->out, "metrics file:  %s (not written yet)\n",
		    c->metrics_file);
	else
		fprintf(r->out, "metrics file:  %s (%s)\n", c->metrics_file,
		    strerror(-rc));
}

/* Without the credentials, which status does not use. */
static int
load_conf(const char *path, struct conf **c)
{
	char	 err[1024];
	int	 rc;

	rc = conf_load_opts(path, CONF_NO_CREDENTIALS, c, err, sizeof(err));
	if (rc != 0)
		fprintf(stderr, "disagent status: %s\n", err);
	return rc;
}

int
status_main(const char *conf_path, FILE *out)
{
	struct report	 r;
	struct conf	*c;
	size_t		 i;
	int		 rc = 1;

	memset(&r, 0, sizeof(r));
	r.out = out;
	if (load_conf(conf_path, &c) != 0)
		return 1;
	fprintf(out, "configuration: %s\n", conf_path);
	if (read_state(&r, c) != 0)
		goto done;
	read_metrics(&r, c);
	print_flows(&r, c);
	rc = fflush(out) == 0 ? 0 : 1;
done:
	for (i = 0; i < r.nrows; i++) {
		free(r.rows[i].flow);
		free(r.rows[i].path);
		free(r.rows[i].cursor);
	}
	free(r.rows);
	metrics_errors_free(r.errs, r.nerrs);
	conf_free(c);
	return rc;
}
