/*
 * Prometheus text exposition (format 0.0.4) for node_exporter's textfile
 * collector.  Each family is written whole, HELP and TYPE first, then one
 * sample per flow (labels flow and stream, plus code, status or le where the
 * family has them), so the file parses with the collector's strict parser.
 * Label values are escaped (backslash, double quote, newline), other control
 * characters become blanks and bytes that are not UTF-8 become '?', because
 * a message from a server can hold anything.  Numbers are integers where
 * they are counts and shortest-decimal otherwise.  The file is replaced by
 * rename, so the collector never reads half of it.  metrics_read.c reads
 * the last-error gauges back.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/atomicfile.h"
#include "base/escape.h"
#include "base/metrics.h"
#include "base/util.h"

#define P	"disagent_"

static const double bounds[METRICS_NBUCKETS - 1] = {
	0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
};
static const char *const bound_text[METRICS_NBUCKETS] = {
	"0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5",
	"5", "10", "+Inf",
};

/* --- counting ---------------------------------------------------------- */

void
metrics_observe_latency(struct metrics_hist *h, double seconds)
{
	size_t	 i;

	if (isnan(seconds))
		return;
	if (seconds < 0)
		seconds = 0;
	for (i = 0; i < METRICS_NBUCKETS - 1; i++)
		if (seconds <= bounds[i])
			break;
	h->bucket[i]++;
	h->count++;
	h->sum += seconds;
}

/* Copy s into dst (size len), truncated, control characters as blanks. */
static void
copy_text(char *dst, size_t len, const char *s)
{
	size_t	 i;

	if (s == NULL)
		s = "";
	for (i = 0; s[i] != '\0' && i + 1 < len; i++)
		dst[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? ' ' :
		    s[i];
	dst[i] = '\0';
}

static size_t
find_code(const struct metrics_flow *f, const char *code)
{
	size_t	 i;

	for (i = 0; i < f->nfailed; i++)
		if (strcmp(f->failed[i].code, code) == 0)
			break;
	return i;
}

void
metrics_count_failed(struct metrics_flow *f, const char *code, uint64_t n)
{
	char	 c[METRICS_CODE_LEN];
	size_t	 i;

	copy_text(c, sizeof(c), code);
	i = find_code(f, c);
	/* Full but for the last slot: that one is "other" for the rest. */
	if (i == f->nfailed && f->nfailed >= METRICS_NCODES - 1) {
		copy_text(c, sizeof(c), "other");
		i = find_code(f, c);
	}
	if (i == f->nfailed) {
		memcpy(f->failed[i].code, c, sizeof(c));
		f->failed[i].count = 0;
		f->nfailed++;
	}
	f->failed[i].count += n;
}

static size_t
find_status(const struct metrics_flow *f, int status)
{
	size_t	 i;

	for (i = 0; i < f->nrequests; i++)
		if (f->requests[i].status == status)
			break;
	return i;
}

void
metrics_count_request(struct metrics_flow *f, int status)
{
	size_t	 i;

	if (status < 0)
		status = -1;
	i = find_status(f, status);
	if (i == f->nrequests && f->nrequests >= METRICS_NSTATUS - 1) {
		status = -1;
		i = find_status(f, status);
	}
	if (i == f->nrequests) {
		f->requests[i].status = status;
		f->requests[i].count = 0;
		f->nrequests++;
	}
	f->requests[i].count++;
}

void
metrics_set_error(struct metrics_flow *f, const char *code,
    const char *message, int64_t now_s)
{
	copy_text(f->last_error_code, sizeof(f->last_error_code), code);
	copy_text(f->last_error_message, sizeof(f->last_error_message),
	    message);
	f->last_error_time = now_s;
}

/* --- rendering --------------------------------------------------------- */

static void
add_label_value(struct buf *b, const char *v)
{
	const unsigned char	*s = (const unsigned char *)(v ? v : "");
	size_t			 n, left = strlen((const char *)s);

	while (*s != '\0') {
		if (*s == '\\')
			buf_addstr(b, "\\\\");
		else if (*s == '"')
			buf_addstr(b, "\\\"");
		else if (*s == '\n')
			buf_addstr(b, "\\n");
		else if (*s < 0x20 || *s == 0x7f)
			buf_addc(b, ' ');
		else if ((n = esc_utf8_len(s, left)) > 0) {
			buf_add(b, s, n);
			s += n;
			left -= n;
			continue;
		} else
			buf_addc(b, '?');
		s++;
		left--;
	}
}

static void
add_label(struct buf *b, const char *name, const char *value, bool first)
{
	buf_printf(b, "%s%s=\"", first ? "" : ",", name);
	add_label_value(b, value);
	buf_addc(b, '"');
}

/* name{flow="..",stream=".."[,xname="xval"]} */
static void
flow_sample(struct buf *b, const char *name, const struct metrics_flow *f,
    const char *xname, const char *xval)
{
	buf_printf(b, "%s{", name);
	add_label(b, "flow", f->name, true);
	add_label(b, "stream", f->stream, false);
	if (xname != NULL)
		add_label(b, xname, xval, false);
	buf_addstr(b, "} ");
}

/* Shortest decimal that round-trips through "%.6f": 3, 0.125, 12.5. */
static void
add_double(struct buf *b, double v)
{
	char	 s[64];
	size_t	 n;

	if (isnan(v) || isinf(v)) {
		buf_addstr(b, isnan(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf");
		return;
	}
	snprintf(s, sizeof(s), "%.6f", v);
	n = strlen(s);
	while (n > 0 && s[n - 1] == '0')
		n--;
	if (n > 0 && s[n - 1] == '.')
		n--;
	s[n] = '\0';
	buf_addstr(b, strcmp(s, "-0") == 0 ? "0" : s);
}

static void
family(struct buf *b, const char *name, const char *type, const char *help)
{
	buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* The plain per-flow numbers: one family each, in this order. */
static const struct {
	const char	*name;
	const char	*type;
	size_t		 off;
	const char	*help;
} plain[] = {
	{ P "records_read_total", "counter",
	  offsetof(struct metrics_flow, records_read),
	  "Records read (parsed) from the flow's files." },
	{ P "bytes_read_total", "counter",
	  offsetof(struct metrics_flow, bytes_read),
	  "Bytes of records read from the flow's files." },
	{ P "records_sent_total", "counter",
	  offsetof(struct metrics_flow, records_sent),
	  "Records acknowledged by DIS." },
	{ P "bytes_sent_total", "counter",
	  offsetof(struct metrics_flow, bytes_sent),
	  "Bytes of records acknowledged by DIS." },
	{ P "records_retried_total", "counter",
	  offsetof(struct metrics_flow, records_retried),
	  "Records sent again after a failure." },
	{ P "records_dead_lettered_total", "counter",
	  offsetof(struct metrics_flow, records_dead_lettered),
	  "Records DIS rejected for good, written to the dead-letter file." },
	{ P "records_filtered_total", "counter",
	  offsetof(struct metrics_flow, records_filtered),
	  "Records left out by lineIncludePattern or lineExcludePattern; "
	  "their offsets are committed like those of records sent." },
	{ P "container_lines_malformed_total", "counter",
	  offsetof(struct metrics_flow, container_malformed),
	  "source = containers: lines in neither the CRI nor the Docker "
	  "format, sent as they are (one warning per file)." },
	{ P "container_partials_joined_total", "counter",
	  offsetof(struct metrics_flow, container_joined),
	  "source = containers: records joined from a runtime's partial "
	  "lines (a line longer than its 16 KiB or 8 KiB cut)." },
	{ P "journal_gaps_total", "counter",
	  offsetof(struct metrics_flow, journal_gaps),
	  "Times a journal flow's last delivered entry was no longer in the "
	  "journal (rotated away before the entries after it were read)." },
	{ P "journal_entries_lost_total", "counter",
	  offsetof(struct metrics_flow, journal_entries_lost),
	  "Journal entries known to have been rotated away before they were "
	  "read (of all units: journalMatch may not have selected them)." },
	{ P "replies_unacknowledged_total", "counter",
	  offsetof(struct metrics_flow, replies_unacknowledged),
	  "PutRecords replies with HTTP 200 that acknowledged no record (not "
	  "a PutRecords reply, such as an HTML page or truncated JSON, or one "
	  "for another number of records); each request was sent again "
	  "whole." },
	{ P "backlog_bytes", "gauge",
	  offsetof(struct metrics_flow, bytes_behind),
	  "Bytes in the flow's files not yet acknowledged by DIS: how far "
	  "tailing is behind." },
	{ P "files_tracked", "gauge",
	  offsetof(struct metrics_flow, files_tracked),
	  "Files the flow is reading." },
	{ P "files_unreadable", "gauge",
	  offsetof(struct metrics_flow, files_unreadable),
	  "Files the flow's pattern matches that the agent cannot open "
	  "(permissions, an unreadable compression); each is logged once, "
	  "is the flow's last error, and is tried again at every rescan." },
	{ P "files_completed_total", "counter",
	  offsetof(struct metrics_flow, files_done),
	  "Files read to their end and fully delivered: rotated-away files "
	  "closed, whole files acknowledged." },
	{ P "files_cleaned_up_total", "counter",
	  offsetof(struct metrics_flow, files_cleaned),
	  "Delivered files deleted, moved or renamed (deletePolicy, "
	  "fileMoveToDir, fileSuffix, deleteAfterDeliverySeconds)." },
	{ P "cleanup_failures_total", "counter",
	  offsetof(struct metrics_flow, cleanup_failures),
	  "Attempts to delete, move or rename a delivered file that failed; "
	  "each is retried at the next rescan." },
	{ P "whole_files_pending", "gauge",
	  offsetof(struct metrics_flow, whole_pending),
	  "Whole files (isFileAppendable = false) waiting to stay unchanged "
	  "for maxFileCheckingMillis." },
	{ P "whole_files_in_progress", "gauge",
	  offsetof(struct metrics_flow, whole_in_progress),
	  "Whole files being read or waiting for acknowledgements." },
	{ P "whole_files_cleanup_pending", "gauge",
	  offsetof(struct metrics_flow, whole_cleanup_pending),
	  "Whole files delivered and saved as such, waiting for their "
	  "cleanup." },
	{ P "whole_files_cleanup_failing", "gauge",
	  offsetof(struct metrics_flow, whole_cleanup_failing),
	  "Of those, the files whose last cleanup attempt failed." },
};

static void
render_plain(const struct metrics_snapshot *s, struct buf *b)
{
	const struct metrics_flow	*f;
	size_t				 i, j;
	uint64_t			 v;

	for (i = 0; i < ARRAY_SIZE(plain); i++) {
		family(b, plain[i].name, plain[i].type, plain[i].help);
		for (j = 0; j < s->nflows; j++) {
			f = &s->flows[j];
			memcpy(&v, (const char *)f + plain[i].off, sizeof(v));
			flow_sample(b, plain[i].name, f, NULL, NULL);
			buf_printf(b, "%" PRIu64 "\n", v);
		}
	}
	family(b, P "flow_paused", "gauge", "1 while the flow is halted and "
	    "waits for the operator (see the last error), else 0.");
	for (j = 0; j < s->nflows; j++) {
		flow_sample(b, P "flow_paused", &s->flows[j], NULL, NULL);
		buf_printf(b, "%d\n", s->flows[j].paused ? 1 : 0);
	}
	family(b, P "flow_rate_limited", "gauge", "1 while the flow reads no "
	    "faster than maxBytesPerSecond or maxRecordsPerSecond let it (the "
	    "rest waits in its files), else 0.");
	for (j = 0; j < s->nflows; j++) {
		flow_sample(b, P "flow_rate_limited", &s->flows[j], NULL, NULL);
		buf_printf(b, "%d\n", s->flows[j].rate_limited ? 1 : 0);
	}
}

static int
code_cmp(const void *a, const void *b)
{
	return strcmp(((const struct metrics_code_count *)a)->code,
	    ((const struct metrics_code_count *)b)->code);
}

static int
status_cmp(const void *a, const void *b)
{
	int	 x = ((const struct metrics_status_count *)a)->status;
	int	 y = ((const struct metrics_status_count *)b)->status;

	/* "other" (-1) last. */
	if (x < 0 || y < 0)
		return (x < 0) - (y < 0);
	return (x > y) - (x < y);
}

static void
render_failed(const struct metrics_snapshot *s, struct buf *b)
{
	struct metrics_code_count	 v[METRICS_NCODES];
	const struct metrics_flow	*f;
	size_t				 i, j;

	family(b, P "records_failed_total", "counter", "Records DIS "
	    "reported as failed, by error code: sent again when the code is "
	    "retriable (records.retriable.error.code), else dead-lettered.");
	for (j = 0; j < s->nflows; j++) {
		f = &s->flows[j];
		memcpy(v, f->failed, sizeof(v));
		qsort(v, MIN(f->nfailed, METRICS_NCODES), sizeof(v[0]),
		    code_cmp);
		for (i = 0; i < f->nfailed && i < METRICS_NCODES; i++) {
			flow_sample(b, P "records_failed_total", f, "code",
			    v[i].code);
			buf_printf(b, "%" PRIu64 "\n", v[i].count);
		}
	}
}

static void
render_requests(const struct metrics_snapshot *s, struct buf *b)
{
	struct metrics_status_count	 v[METRICS_NSTATUS];
	const struct metrics_flow	*f;
	char				 st[16];
	size_t				 i, j;

	family(b, P "requests_total", "counter", "DIS requests (PutRecords, "
	    "and DescribeStream before the first and while paused) by HTTP "
	    "status; status 0 is a transport error or timeout.");
	for (j = 0; j < s->nflows; j++) {
		f = &s->flows[j];
		memcpy(v, f->requests, sizeof(v));
		qsort(v, MIN(f->nrequests, METRICS_NSTATUS), sizeof(v[0]),
		    status_cmp);
		for (i = 0; i < f->nrequests && i < METRICS_NSTATUS; i++) {
			if (v[i].status < 0)
				snprintf(st, sizeof(st), "other");
			else
				snprintf(st, sizeof(st), "%d", v[i].status);
			flow_sample(b, P "requests_total", f, "status", st);
			buf_printf(b, "%" PRIu64 "\n", v[i].count);
		}
	}
}

static void
render_latency(const struct metrics_snapshot *s, struct buf *b)
{
	const struct metrics_flow	*f;
	const char			*n = P "request_duration_seconds";
	char				 name[64];
	uint64_t			 cum;
	size_t				 i, j;

	family(b, n, "histogram", "Round-trip time of PutRecords requests, "
	    "in seconds.");
	for (j = 0; j < s->nflows; j++) {
		f = &s->flows[j];
		cum = 0;
		snprintf(name, sizeof(name), "%s_bucket", n);
		for (i = 0; i < METRICS_NBUCKETS; i++) {
			cum += f->latency.bucket[i];
			flow_sample(b, name, f, "le", bound_text[i]);
			buf_printf(b, "%" PRIu64 "\n", cum);
		}
		snprintf(name, sizeof(name), "%s_sum", n);
		flow_sample(b, name, f, NULL, NULL);
		add_double(b, f->latency.sum);
		buf_addc(b, '\n');
		snprintf(name, sizeof(name), "%s_count", n);
		flow_sample(b, name, f, NULL, NULL);
		buf_printf(b, "%" PRIu64 "\n", f->latency.count);
	}
}

static void
render_errors(const struct metrics_snapshot *s, struct buf *b)
{
	const struct metrics_flow	*f;
	size_t				 j;

	family(b, P "last_error_info", "gauge", "The latest error of each "
	    "flow that had one: its code and message.");
	for (j = 0; j < s->nflows; j++) {
		f = &s->flows[j];
		if (f->last_error_code[0] == '\0')
			continue;
		buf_addstr(b, P "last_error_info{");
		add_label(b, "flow", f->name, true);
		add_label(b, "code", f->last_error_code, false);
		add_label(b, "message", f->last_error_message, false);
		buf_addstr(b, "} 1\n");
	}
	family(b, P "last_error_timestamp_seconds", "gauge", "When the latest "
	    "error of the flow happened, in seconds since the epoch.");
	for (j = 0; j < s->nflows; j++) {
		f = &s->flows[j];
		if (f->last_error_code[0] == '\0')
			continue;
		buf_addstr(b, P "last_error_timestamp_seconds{");
		add_label(b, "flow", f->name, true);
		buf_printf(b, "} %" PRId64 "\n", f->last_error_time);
	}
}

static void
render_agent(const struct metrics_snapshot *s, struct buf *b)
{
	family(b, P "build_info", "gauge", "Version of the running agent.");
	buf_addstr(b, P "build_info{");
	add_label(b, "version", s->version, true);
	buf_addstr(b, "} 1\n");
	family(b, P "uptime_seconds", "gauge", "Seconds since the agent "
	    "started.");
	buf_addstr(b, P "uptime_seconds ");
	add_double(b, s->uptime_s);
	buf_addc(b, '\n');
	family(b, P "memory_in_use_bytes", "gauge", "Bytes of record "
	    "buffers held, counted against the memory budget.");
	buf_printf(b, P "memory_in_use_bytes %" PRIu64 "\n", s->memory_in_use);
	family(b, P "memory_limit_bytes", "gauge", "The memory budget in "
	    "bytes; 0 means no limit.");
	buf_printf(b, P "memory_limit_bytes %" PRIu64 "\n", s->memory_limit);
}

/* A per-flow counter family with one label, from an array in the flow. */
static void
render_labelled(const struct metrics_snapshot *s, struct buf *b,
    const char *name, const char *help, const char *label,
    const char *const *values, size_t n, size_t off)
{
	const uint64_t	*v;
	size_t		 i, j;

	family(b, name, "counter", help);
	for (j = 0; j < s->nflows; j++) {
		v = (const uint64_t *)(const void *)
		    ((const char *)&s->flows[j] + off);
		for (i = 0; i < n; i++) {
			flow_sample(b, name, &s->flows[j], label, values[i]);
			buf_printf(b, "%" PRIu64 "\n", v[i]);
		}
	}
}

static void
render_unmatched(const struct metrics_snapshot *s, struct buf *b)
{
	static const char *const action[] = { "deadletter", "raw", "drop" };
	static const char *const reason[] = { "gone", "unreadable", "spool",
	    "truncated" };

	render_labelled(s, b, P "records_unmatched_total", "Lines LOGTOJSON "
	    "could not parse, by what was done with them "
	    "(LOGTOJSON.unmatched).", "action", action, ARRAY_SIZE(action),
	    offsetof(struct metrics_flow, records_unmatched));
	render_labelled(s, b, P "bytes_lost_total", "Bytes of log files that "
	    "could not be delivered: the file went before it was read and no "
	    "compressed successor holds them (gone), it is compressed in a "
	    "format the agent cannot read (unreadable), or it was deleted "
	    "while open and its rest did not fit the spool at a stop "
	    "(spool), or it was truncated in place before it was read "
	    "(truncated).", "reason", reason,
	    ARRAY_SIZE(reason), offsetof(struct metrics_flow, bytes_lost));
}

void
metrics_render(const struct metrics_snapshot *s, struct buf *b)
{
	render_agent(s, b);
	render_plain(s, b);
	render_unmatched(s, b);
	render_failed(s, b);
	render_requests(s, b);
	render_latency(s, b);
	render_errors(s, b);
}

/* --- the file ---------------------------------------------------------- */


int
metrics_write_file(const char *path, const struct metrics_snapshot *s)
{
	struct buf	 b;
	int		 r;

	buf_init(&b);
	metrics_render(s, &b);
	/* The collector may run as another user; the umask must not hide
	 * it.  No fsync: the file is rewritten every few seconds. */
	r = atomicfile_replace(path, b.data, b.len, 0644,
	    ATOMICFILE_EXACT_MODE);
	buf_cleanup(&b);
	return r;
}
