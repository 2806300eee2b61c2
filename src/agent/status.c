/*
 * `disagent status`: a read-only report built from the configuration, the
 * state file (through registry_peek, which never sets files aside or
 * writes) and the last-error gauges of the metrics file.  Each tracked file
 * is stat()ed now, so "behind" is the current size minus the committed
 * offset.  A file no longer at its path (deleted, or rotated to a name the
 * pattern does not match) that a running agent still holds open is
 * measured through that descriptor (/proc/PID/fd, when this user may look);
 * one that is not open counts what the state file says followed its
 * offset when it was saved; either way its bytes are behind.  Matching
 * files the state file does not know and this user cannot open are listed
 * as unreadable, naming the error.  The process environment gets
 * placeholder credentials for the configuration check only, because
 * reading offsets must not require the secret key.
 */
#include "config.h"

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/status.h"
#include "base/escape.h"
#include "base/metrics.h"
#include "base/pattern.h"
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
	uint64_t	 saved_size;	/* the state file's size (0: none) */
	bool		 complete;	/* a whole file waiting for cleanup */
	char		*cursor;	/* a journal flow's position */
	bool		 has_size;	/* size is known */
	uint64_t	 size;
	uint64_t	 behind;
	int		 open_err;	/* not in the state: cannot be opened */
	const char	*note;		/* "" or "(missing)" ... */
};

/* A regular file a running agent holds open. */
struct held {
	uint64_t	 dev;
	uint64_t	 ino;
	uint64_t	 size;
};

struct report {
	FILE			*out;
	const char		*metrics;	/* metricsFile, or NULL */
	struct row		*rows;
	size_t			 nrows;
	struct metrics_error	*errs;
	size_t			 nerrs;
	struct held		*held;		/* read on first need */
	size_t			 nheld;
	bool			 held_read;
	long			 agent;		/* pid holding the state file */
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
	w->saved_size = e->size;
	w->complete = reg_done(e) != NULL;
	if (reg_cursor(e) != NULL)
		w->cursor = xstrdup(reg_cursor(e));
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

/* --- files a running agent holds open ------------------------------------ */

static void
add_held(struct report *r, const struct stat *st)
{
	struct held	*h;

	r->held = xrealloc(r->held, (r->nheld + 1) * sizeof(*r->held));
	h = &r->held[r->nheld++];
	h->dev = (uint64_t)st->st_dev;
	h->ino = (uint64_t)st->st_ino;
	h->size = (uint64_t)st->st_size;
}

static bool
is_agent(const char *pid)
{
	char	 path[64], comm[32];
	FILE	*fp;
	bool	 yes = false;

	snprintf(path, sizeof(path), "/proc/%s/comm", pid);
	fp = fopen(path, "re");
	if (fp == NULL)
		return false;
	if (fgets(comm, sizeof(comm), fp) != NULL)
		yes = strcmp(comm, "disagent\n") == 0;
	fclose(fp);
	return yes;
}

/*
 * The regular files the agent running with this state file holds open (if
 * this user may look): only that agent's, found by the pid it wrote in the
 * state file's lock.  Another agent on the host (another configuration, a
 * test beside it) may hold a file that reuses the inode of one of ours.
 */
static void
read_held(struct report *r)
{
	struct dirent	*f;
	struct stat	 st;
	DIR		*fds;
	char		 pid[24], path[320];

	r->held_read = true;
	if (r->agent <= 0 || r->agent == (long)getpid())
		return;
	snprintf(pid, sizeof(pid), "%ld", r->agent);
	if (!is_agent(pid))
		return;
	snprintf(path, sizeof(path), "/proc/%s/fd", pid);
	fds = opendir(path);	/* EACCES: another user's agent */
	if (fds == NULL)
		return;
	while ((f = readdir(fds)) != NULL) {
		snprintf(path, sizeof(path), "/proc/%s/fd/%s", pid,
		    f->d_name);
		if (f->d_name[0] != '.' && stat(path, &st) == 0 &&
		    S_ISREG(st.st_mode))
			add_held(r, &st);
	}
	closedir(fds);
}

static const struct held *
held_file(struct report *r, uint64_t dev, uint64_t ino)
{
	size_t	 i;

	if (!r->held_read)
		read_held(r);
	for (i = 0; i < r->nheld; i++)
		if (r->held[i].dev == dev && r->held[i].ino == ino)
			return &r->held[i];
	return NULL;
}

/*
 * w's file is no longer at its path (why: "deleted", "replaced"): measured
 * through a running agent's descriptor, else by what the state file says
 * followed its offset; bytes not delivered are behind either way.
 */
static void
measure_gone(struct report *r, struct row *w, bool deleted)
{
	const struct held *h = held_file(r, w->dev, w->ino);

	if (h != NULL) {
		w->has_size = true;
		w->size = h->size;
		w->behind = h->size > w->offset ? h->size - w->offset : 0;
		w->note = deleted ? "(deleted; still open, being read)" :
		    "(rotated away; still open, being read)";
		return;
	}
	if (w->saved_size > w->offset) {
		w->has_size = true;
		w->size = w->saved_size;
		w->behind = w->saved_size - w->offset;
		w->note = deleted ? "(missing; size as last saved)" :
		    "(replaced; size as last saved)";
		return;
	}
	w->note = deleted ? "(missing)" : "(replaced)";
}

/* Size and bytes behind of the file now at the row's path. */
static void
measure(struct report *r, struct row *w)
{
	struct stat	 st;

	w->note = "";
	if (w->cursor != NULL)
		return;		/* a journal's position: no file */
	if (w->open_err != 0) {
		w->note = "(unreadable)";
		return;
	}
	if (stat(w->path, &st) == -1) {
		if (w->complete)
			w->note = "(delivered; cleaned up)";
		else
			measure_gone(r, w, true);
		return;
	}
	if ((uint64_t)st.st_dev != w->dev || (uint64_t)st.st_ino != w->ino) {
		measure_gone(r, w, false);
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

/* A file's row; its path escaped (escape.h): names are anyone's. */
static void
print_row(FILE *out, const struct row *w)
{
	char	 s[24] = "-", b[24] = "-";
	char	*path = esc_new(w->path);

	if (w->has_size) {
		snprintf(s, sizeof(s), "%" PRIu64, w->size);
		snprintf(b, sizeof(b), "%" PRIu64, w->behind);
	}
	if (w->open_err != 0)
		fprintf(out, "  %14s %14s %14s  %s (unreadable: %s)\n", "-",
		    "-", "-", path, strerror(w->open_err));
	else
		fprintf(out, "  %14" PRIu64 " %14s %14s  %s%s%s\n", w->offset,
		    s, b, path, w->note[0] != '\0' ? " " : "", w->note);
	free(path);
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
		fprintf(r->out, "  last error: %s %s (", ESC(e->code),
		    ESC(e->message));
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
	fprintf(r->out, "\n[flow:%s] %s: journal %s%s%s\n", ESC(fc->name),
	    what, fc->journal_dir[0] != '\0' ? ESC(fc->journal_dir) :
	    "(system)", fc->journal_match[0] != '\0' ? ", journalMatch = " :
	    "", ESC(fc->journal_match));
	status_journal(r->out, fc, cursor_of(r, fc->name));
	print_held(r, fc);
	print_error(r, fc->name);
}

/* One flow: a summary line, its last error, then its files. */
static void
print_flow(const struct report *r, const struct conf_flow *fc,
    const char *name, const char *what)
{
	size_t		 i, n = 0, done = 0, bad = 0;
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
		bad += r->rows[i].open_err != 0;
		done += r->rows[i].complete;
		behind += r->rows[i].behind;
	}
	fprintf(r->out, "\n[flow:%s] %s: %zu file%s, %" PRIu64 " bytes "
	    "behind", ESC(name), what, n, n == 1 ? "" : "s", behind);
	if (bad > 0)
		fprintf(r->out, ", %zu unreadable", bad);
	fputc('\n', r->out);
	print_held(r, fc);
	if (bad > 0)
		fprintf(r->out, "  error: %zu matching file%s cannot be "
		    "opened (the rows marked unreadable); the agent cannot "
		    "send %s\n", bad, bad == 1 ? "" : "s",
		    bad == 1 ? "it" : "them");
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
			what = xasprintf("stream id %s%s", ESC(f->stream_id),
			    f->enable ? "" : " (disabled)");
		else
			what = xasprintf("stream %s%s", ESC(f->stream),
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

	r->agent = registry_lock_holder(c->checkpoint_file);
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
	return 0;
}

/* --- matching files the state file does not know --------------------------- */

struct walk {
	struct report		*r;
	const struct conf_flow	*fc;
	const char		*pattern;
};

static bool
known(const struct report *r, const char *flow, const struct stat *st)
{
	size_t	 i;

	for (i = 0; i < r->nrows; i++)
		if (r->rows[i].dev == (uint64_t)st->st_dev &&
		    r->rows[i].ino == (uint64_t)st->st_ino &&
		    strcmp(r->rows[i].flow, flow) == 0)
			return true;
	return false;
}

/* A matching file: listed when it is new to the state and cannot be read. */
static void
check_file(struct walk *k, const char *path, const struct stat *st)
{
	struct report	*r = k->r;
	struct row	*w;
	int		 fd, err;

	if (!conf_flow_matches(k->fc, path) || known(r, k->fc->name, st))
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd >= 0) {
		close(fd);
		return;
	}
	err = errno;
	r->rows = xrealloc(r->rows, (r->nrows + 1) * sizeof(*r->rows));
	w = &r->rows[r->nrows++];
	memset(w, 0, sizeof(*w));
	w->flow = xstrdup(k->fc->name);
	w->path = xstrdup(path);
	w->dev = (uint64_t)st->st_dev;
	w->ino = (uint64_t)st->st_ino;
	w->open_err = err;
}

static void	walk_dir(struct walk *, const char *, int);

static void
walk_entry(struct walk *k, const char *path, int depth)
{
	struct stat	 st;

	if (stat(path, &st) != 0)
		return;
	if (S_ISREG(st.st_mode))
		check_file(k, path, &st);
	else if (S_ISDIR(st.st_mode) && depth < 32 &&
	    pattern_dir_may_match(k->pattern, path))
		walk_dir(k, path, depth + 1);
}

/* The directories a scan of the flow walks (watcher.c), as this user. */
static void
walk_dir(struct walk *k, const char *dir, int depth)
{
	struct dirent	*de;
	DIR		*d;
	char		*path;

	d = opendir(dir);
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		path = strcmp(dir, "/") == 0 ? xasprintf("/%s", de->d_name) :
		    xasprintf("%s/%s", dir, de->d_name);
		walk_entry(k, path, depth);
		free(path);
	}
	closedir(d);
}

static void
find_unreadable(struct report *r, const struct conf *c)
{
	struct walk	 k;
	char		*pat, *base;
	size_t		 i;

	for (i = 0; i < c->nflows; i++) {
		if (!c->flows[i].enable || c->flows[i].source == SOURCE_JOURNAL)
			continue;
		pat = pattern_recursive(c->flows[i].file_pattern,
		    c->flows[i].recursive);
		base = pattern_literal_base(pat);
		k.r = r;
		k.fc = &c->flows[i];
		k.pattern = pat;
		walk_dir(&k, base, 0);
		free(base);
		free(pat);
	}
}

/* Every row measured now, in the order they are shown. */
static void
measure_rows(struct report *r)
{
	size_t	 i;

	if (r->nrows > 0)
		qsort(r->rows, r->nrows, sizeof(*r->rows), row_cmp);
	for (i = 0; i < r->nrows; i++)
		measure(r, &r->rows[i]);
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
		fprintf(stderr, "disagent status: %s\n", ESC(err));
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
	find_unreadable(&r, c);
	measure_rows(&r);
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
	free(r.held);
	metrics_errors_free(r.errs, r.nerrs);
	conf_free(c);
	return rc;
}
