/*
 * Unit tests for metrics: the exact exposition text of a small snapshot,
 * label escaping, histogram buckets, the overflow of the code and status
 * tables, the atomic replacement of the file (and its errors), and reading
 * the last-error gauges back.  An independent line checker below validates
 * the text format itself: every line is a HELP or TYPE comment or a
 * "name{labels} value" sample of the family declared just before it.
 */
#include "config.h"

#include <sys/stat.h>

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/metrics.h"
#include "base/util.h"
#include "testutil.h"

static char	 dir[256];
static char	 mpath[PATH_MAX];	/* dir/disagent.prom */

static void
setup(void)
{
	tu_tmpdir(dir, sizeof(dir), "check_metrics");
	tu_path(mpath, sizeof(mpath), dir, "disagent.prom");
}

static void
teardown(void)
{
	tu_rmtree(dir);
}

/* A flow with every kind of value set; name and stream borrowed. */
static void
sample_flow(struct metrics_flow *f, const char *name, const char *stream)
{
	memset(f, 0, sizeof(*f));
	f->name = name;
	f->stream = stream;
	f->records_read = 10;
	f->bytes_read = 700;
	f->records_sent = 8;
	f->bytes_sent = 560;
	f->records_retried = 2;
	f->replies_unacknowledged = 3;
	f->files_unreadable = 1;
	f->records_dead_lettered = 1;
	f->records_filtered = 9;
	f->journal_gaps = 1;
	f->journal_entries_lost = 12;
	f->records_unmatched[0] = 3;	/* deadletter */
	f->records_unmatched[1] = 1;	/* raw */
	f->bytes_lost[LOST_GONE] = 1234;
	f->bytes_behind = 140;
	f->files_tracked = 2;
	f->files_done = 4;
	f->files_cleaned = 3;
	f->cleanup_failures = 1;
	f->whole_pending = 5;
	f->whole_in_progress = 6;
	f->whole_cleanup_pending = 7;
	f->whole_cleanup_failing = 1;
	f->paused = true;
	f->rate_limited = true;
	metrics_count_failed(f, "DIS.4303", 2);
	metrics_count_failed(f, "DIS.4200", 1);
	metrics_count_request(f, 200);
	metrics_count_request(f, 200);
	metrics_count_request(f, 0);
	metrics_observe_latency(&f->latency, 0.02);
	metrics_observe_latency(&f->latency, 0.3);
	metrics_set_error(f, "DIS.4301", "Stream does not exist.",
	    1700000000);
}

static void
sample_snapshot(struct metrics_snapshot *s, const struct metrics_flow *f,
    size_t n)
{
	memset(s, 0, sizeof(*s));
	s->flows = f;
	s->nflows = n;
	s->memory_in_use = 4096;
	s->memory_limit = 67108864;
	s->uptime_s = 12.5;
	s->version = "0.1.0";
}

static char *
render(const struct metrics_snapshot *s)
{
	struct buf	 b;

	buf_init(&b);
	metrics_render(s, &b);
	return b.data;
}

/* --- an independent checker of the text format ------------------------- */

static bool
is_name(const char *s, size_t n)
{
	size_t	 i;

	if (n == 0 || !(s[0] == '_' || s[0] == ':' ||
	    (s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
		return false;
	for (i = 1; i < n; i++)
		if (!(s[i] == '_' || s[i] == ':' ||
		    (s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

/* {a="..",b=".."} at *pp; escapes limited to \\ \" \n. */
static bool
check_labels(const char **pp)
{
	const char	*p = *pp, *start;

	if (*p != '{')
		return true;
	p++;
	while (*p != '}') {
		start = p;
		while (*p != '=' && *p != '\0')
			p++;
		if (!is_name(start, (size_t)(p - start)) || *p++ != '=' ||
		    *p++ != '"')
			return false;
		for (; *p != '"'; p++) {
			if (*p == '\0' || (unsigned char)*p < 0x20)
				return false;
			if (*p == '\\' && (p[1] == '\\' || p[1] == '"' ||
			    p[1] == 'n'))
				p++;
			else if (*p == '\\')
				return false;
		}
		p++;
		if (*p == ',')
			p++;
		else if (*p != '}')
			return false;
	}
	*pp = p + 1;
	return true;
}

static bool
check_value(const char *p)
{
	char	*end;

	if (strcmp(p, "+Inf") == 0 || strcmp(p, "-Inf") == 0 ||
	    strcmp(p, "NaN") == 0)
		return true;
	strtod(p, &end);
	return end != p && *end == '\0' && strchr("+-0123456789", *p);
}

/* Whether sample name n belongs to family fam of type type. */
static bool
in_family(const char *n, size_t len, const char *fam, const char *type)
{
	size_t	 fl = strlen(fam);
	const char *suf;

	if (len == fl && strncmp(n, fam, fl) == 0)
		return strcmp(type, "histogram") != 0;
	if (strcmp(type, "histogram") != 0 || len <= fl ||
	    strncmp(n, fam, fl) != 0)
		return false;
	suf = n + fl;
	return (len - fl == 7 && strncmp(suf, "_bucket", 7) == 0) ||
	    (len - fl == 4 && strncmp(suf, "_sum", 4) == 0) ||
	    (len - fl == 6 && strncmp(suf, "_count", 6) == 0);
}

/*
 * Check the whole text; returns the number of samples, or fails the test
 * naming the line.  Families are declared once, HELP then TYPE; counters
 * end in _total; no sample (name and labels) appears twice.
 */
static int
check_exposition(const char *text)
{
	char	*copy, *line, *save, *p, fam[128] = "", type[16] = "";
	char	*fams[64], *seen[512];
	size_t	 nfams = 0, nseen = 0, i;
	int	 samples = 0, want_type = 0;

	copy = xstrdup(text);
	ck_assert_msg(text[0] != '\0' && text[strlen(text) - 1] == '\n',
	    "text must end with a newline");
	ck_assert_msg(strstr(text, "\n\n") == NULL, "empty line");
	for (line = strtok_r(copy, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "# HELP ", 7) == 0) {
			ck_assert_msg(!want_type, "HELP twice: %s", line);
			p = strchr(line + 7, ' ');
			ck_assert_msg(p != NULL && p[1] != '\0', "%s", line);
			ck_assert_msg(is_name(line + 7, (size_t)(p - line - 7)),
			    "%s", line);
			snprintf(fam, sizeof(fam), "%.*s", (int)(p - line - 7),
			    line + 7);
			for (i = 0; i < nfams; i++)
				ck_assert_msg(strcmp(fams[i], fam) != 0,
				    "family %s declared twice", fam);
			ck_assert_uint_lt(nfams, ARRAY_SIZE(fams));
			fams[nfams++] = xstrdup(fam);
			want_type = 1;
			continue;
		}
		if (strncmp(line, "# TYPE ", 7) == 0) {
			ck_assert_msg(want_type, "TYPE without HELP: %s", line);
			p = line + 7 + strlen(fam);
			ck_assert_msg(strncmp(line + 7, fam, strlen(fam)) ==
			    0 && *p == ' ', "TYPE of another family: %s", line);
			ck_assert_msg(strcmp(p + 1, "counter") == 0 ||
			    strcmp(p + 1, "gauge") == 0 ||
			    strcmp(p + 1, "histogram") == 0, "%s", line);
			snprintf(type, sizeof(type), "%s", p + 1);
			if (strcmp(type, "counter") == 0)
				ck_assert_msg(strlen(fam) > 6 && strcmp(fam +
				    strlen(fam) - 6, "_total") == 0,
				    "counter %s lacks _total", fam);
			want_type = 0;
			continue;
		}
		ck_assert_msg(line[0] != '#', "stray comment: %s", line);
		ck_assert_msg(!want_type && fam[0] != '\0',
		    "sample outside a family: %s", line);
		p = line;
		while (*p != '{' && *p != ' ' && *p != '\0')
			p++;
		ck_assert_msg(is_name(line, (size_t)(p - line)), "%s", line);
		ck_assert_msg(in_family(line, (size_t)(p - line), fam, type),
		    "sample of another family (%s): %s", fam, line);
		ck_assert_msg(check_labels((const char **)&p), "labels: %s",
		    line);
		ck_assert_msg(*p == ' ' && check_value(p + 1), "value: %s",
		    line);
		*p = '\0';
		for (i = 0; i < nseen; i++)
			ck_assert_msg(strcmp(seen[i], line) != 0,
			    "duplicate sample %s", line);
		ck_assert_uint_lt(nseen, ARRAY_SIZE(seen));
		seen[nseen++] = xstrdup(line);
		samples++;
	}
	ck_assert_msg(!want_type, "last HELP has no TYPE");
	for (i = 0; i < nseen; i++)
		free(seen[i]);
	for (i = 0; i < nfams; i++)
		free(fams[i]);
	free(copy);
	return samples;
}

/* --- tests ------------------------------------------------------------- */

static const char expected_small[] =
"# HELP disagent_build_info Version of the running agent.\n"
"# TYPE disagent_build_info gauge\n"
"disagent_build_info{version=\"0.1.0\"} 1\n"
"# HELP disagent_uptime_seconds Seconds since the agent started.\n"
"# TYPE disagent_uptime_seconds gauge\n"
"disagent_uptime_seconds 12.5\n"
"# HELP disagent_memory_in_use_bytes Bytes of record buffers held, counted "
"against the memory budget.\n"
"# TYPE disagent_memory_in_use_bytes gauge\n"
"disagent_memory_in_use_bytes 4096\n"
"# HELP disagent_memory_limit_bytes The memory budget in bytes; 0 means no "
"limit.\n"
"# TYPE disagent_memory_limit_bytes gauge\n"
"disagent_memory_limit_bytes 67108864\n"
"# HELP disagent_records_read_total Records read (parsed) from the flow's "
"files.\n"
"# TYPE disagent_records_read_total counter\n"
"disagent_records_read_total{flow=\"app\",stream=\"s1\"} 10\n"
"# HELP disagent_bytes_read_total Bytes of records read from the flow's "
"files.\n"
"# TYPE disagent_bytes_read_total counter\n"
"disagent_bytes_read_total{flow=\"app\",stream=\"s1\"} 700\n"
"# HELP disagent_records_sent_total Records acknowledged by DIS.\n"
"# TYPE disagent_records_sent_total counter\n"
"disagent_records_sent_total{flow=\"app\",stream=\"s1\"} 8\n"
"# HELP disagent_bytes_sent_total Bytes of records acknowledged by DIS.\n"
"# TYPE disagent_bytes_sent_total counter\n"
"disagent_bytes_sent_total{flow=\"app\",stream=\"s1\"} 560\n"
"# HELP disagent_records_retried_total Records sent again after a "
"failure.\n"
"# TYPE disagent_records_retried_total counter\n"
"disagent_records_retried_total{flow=\"app\",stream=\"s1\"} 2\n"
"# HELP disagent_records_dead_lettered_total Records DIS rejected for good, "
"written to the dead-letter file.\n"
"# TYPE disagent_records_dead_lettered_total counter\n"
"disagent_records_dead_lettered_total{flow=\"app\",stream=\"s1\"} 1\n"
"# HELP disagent_records_filtered_total Records left out by "
"lineIncludePattern or lineExcludePattern; their offsets are committed like "
"those of records sent.\n"
"# TYPE disagent_records_filtered_total counter\n"
"disagent_records_filtered_total{flow=\"app\",stream=\"s1\"} 9\n"
"# HELP disagent_container_lines_malformed_total source = containers: "
"lines in neither the CRI nor the Docker format, sent as they are (one "
"warning per file).\n"
"# TYPE disagent_container_lines_malformed_total counter\n"
"disagent_container_lines_malformed_total{flow=\"app\",stream=\"s1\"} 0\n"
"# HELP disagent_container_partials_joined_total source = containers: "
"records joined from a runtime's partial lines (a line longer than its "
"16 KiB or 8 KiB cut).\n"
"# TYPE disagent_container_partials_joined_total counter\n"
"disagent_container_partials_joined_total{flow=\"app\",stream=\"s1\"} 0\n"
"# HELP disagent_journal_gaps_total Times a journal flow's last delivered "
"entry was no longer in the journal (rotated away before the entries after "
"it were read).\n"
"# TYPE disagent_journal_gaps_total counter\n"
"disagent_journal_gaps_total{flow=\"app\",stream=\"s1\"} 1\n"
"# HELP disagent_journal_entries_lost_total Journal entries known to have "
"been rotated away before they were read (of all units: journalMatch may "
"not have selected them).\n"
"# TYPE disagent_journal_entries_lost_total counter\n"
"disagent_journal_entries_lost_total{flow=\"app\",stream=\"s1\"} 12\n"
"# HELP disagent_replies_unacknowledged_total PutRecords replies with HTTP "
"200 that acknowledged no record (not a PutRecords reply, such as an HTML "
"page or truncated JSON, or one for another number of records); each "
"request was sent again whole.\n"
"# TYPE disagent_replies_unacknowledged_total counter\n"
"disagent_replies_unacknowledged_total{flow=\"app\",stream=\"s1\"} 3\n"
"# HELP disagent_backlog_bytes Bytes in the flow's files not yet "
"acknowledged by DIS: how far tailing is behind.\n"
"# TYPE disagent_backlog_bytes gauge\n"
"disagent_backlog_bytes{flow=\"app\",stream=\"s1\"} 140\n"
"# HELP disagent_files_tracked Files the flow is reading.\n"
"# TYPE disagent_files_tracked gauge\n"
"disagent_files_tracked{flow=\"app\",stream=\"s1\"} 2\n"
"# HELP disagent_files_unreadable Files the flow's pattern matches that the "
"agent cannot open (permissions, an unreadable compression); each is "
"logged once, is the flow's last error, and is tried again at every "
"rescan.\n"
"# TYPE disagent_files_unreadable gauge\n"
"disagent_files_unreadable{flow=\"app\",stream=\"s1\"} 1\n"
"# HELP disagent_files_completed_total Files read to their end and fully "
"delivered: rotated-away files closed, whole files acknowledged.\n"
"# TYPE disagent_files_completed_total counter\n"
"disagent_files_completed_total{flow=\"app\",stream=\"s1\"} 4\n"
"# HELP disagent_files_cleaned_up_total Delivered files deleted, moved or "
"renamed (deletePolicy, fileMoveToDir, fileSuffix, "
"deleteAfterDeliverySeconds).\n"
"# TYPE disagent_files_cleaned_up_total counter\n"
"disagent_files_cleaned_up_total{flow=\"app\",stream=\"s1\"} 3\n"
"# HELP disagent_cleanup_failures_total Attempts to delete, move or rename "
"a delivered file that failed; each is retried at the next rescan.\n"
"# TYPE disagent_cleanup_failures_total counter\n"
"disagent_cleanup_failures_total{flow=\"app\",stream=\"s1\"} 1\n"
"# HELP disagent_whole_files_pending Whole files (isFileAppendable = false) "
"waiting to stay unchanged for maxFileCheckingMillis.\n"
"# TYPE disagent_whole_files_pending gauge\n"
"disagent_whole_files_pending{flow=\"app\",stream=\"s1\"} 5\n"
"# HELP disagent_whole_files_in_progress Whole files being read or waiting "
"for acknowledgements.\n"
"# TYPE disagent_whole_files_in_progress gauge\n"
"disagent_whole_files_in_progress{flow=\"app\",stream=\"s1\"} 6\n"
"# HELP disagent_whole_files_cleanup_pending Whole files delivered and "
"saved as such, waiting for their cleanup.\n"
"# TYPE disagent_whole_files_cleanup_pending gauge\n"
"disagent_whole_files_cleanup_pending{flow=\"app\",stream=\"s1\"} 7\n"
"# HELP disagent_whole_files_cleanup_failing Of those, the files whose last "
"cleanup attempt failed.\n"
"# TYPE disagent_whole_files_cleanup_failing gauge\n"
"disagent_whole_files_cleanup_failing{flow=\"app\",stream=\"s1\"} 1\n"
"# HELP disagent_flow_paused 1 while the flow is halted and waits for the "
"operator (see the last error), else 0.\n"
"# TYPE disagent_flow_paused gauge\n"
"disagent_flow_paused{flow=\"app\",stream=\"s1\"} 1\n"
"# HELP disagent_flow_rate_limited 1 while the flow reads no faster than "
"maxBytesPerSecond or maxRecordsPerSecond let it (the rest waits in its "
"files), else 0.\n"
"# TYPE disagent_flow_rate_limited gauge\n"
"disagent_flow_rate_limited{flow=\"app\",stream=\"s1\"} 1\n"
"# HELP disagent_records_unmatched_total Lines LOGTOJSON could not parse, "
"by what was done with them (LOGTOJSON.unmatched).\n"
"# TYPE disagent_records_unmatched_total counter\n"
"disagent_records_unmatched_total{flow=\"app\",stream=\"s1\",action=\"deadletter\"} 3\n"
"disagent_records_unmatched_total{flow=\"app\",stream=\"s1\",action=\"raw\"} 1\n"
"disagent_records_unmatched_total{flow=\"app\",stream=\"s1\",action=\"drop\"} 0\n"
"# HELP disagent_bytes_lost_total Bytes of log files that could not be "
"delivered: the file went before it was read and no compressed successor "
"holds them (gone), it is compressed in a format the agent cannot read "
"(unreadable), or it was deleted while open and its rest did not fit the "
"spool at a stop (spool), or it was truncated in place before it was read "
"(truncated).\n"
"# TYPE disagent_bytes_lost_total counter\n"
"disagent_bytes_lost_total{flow=\"app\",stream=\"s1\",reason=\"gone\"} 1234\n"
"disagent_bytes_lost_total{flow=\"app\",stream=\"s1\",reason=\"unreadable\"} 0\n"
"disagent_bytes_lost_total{flow=\"app\",stream=\"s1\",reason=\"spool\"} 0\n"
"disagent_bytes_lost_total{flow=\"app\",stream=\"s1\",reason=\"truncated\"} 0\n"
"# HELP disagent_records_failed_total Records DIS reported as failed, by "
"error code: sent again when the code is retriable "
"(records.retriable.error.code), else dead-lettered.\n"
"# TYPE disagent_records_failed_total counter\n"
"disagent_records_failed_total{flow=\"app\",stream=\"s1\",code=\"DIS.4200\"} 1\n"
"disagent_records_failed_total{flow=\"app\",stream=\"s1\",code=\"DIS.4303\"} 2\n"
"# HELP disagent_requests_total DIS requests (PutRecords, and "
"DescribeStream before the first and while paused) by HTTP status; status "
"0 is a transport error or timeout.\n"
"# TYPE disagent_requests_total counter\n"
"disagent_requests_total{flow=\"app\",stream=\"s1\",status=\"0\"} 1\n"
"disagent_requests_total{flow=\"app\",stream=\"s1\",status=\"200\"} 2\n"
"# HELP disagent_request_duration_seconds Round-trip time of PutRecords "
"requests, in seconds.\n"
"# TYPE disagent_request_duration_seconds histogram\n"
"disagent_request_duration_seconds_bucket{flow=\"app\",stream=\"s1\",le=\"0.005\"} 0\n"
"disagent_request_duration_seconds_bucket{flow=\"app\",stream=\"s1\",le=\"0.01\"} 0\n"
"disagent_request_duration_seconds_bucket{flow=\"app\",stream=\"s1\",le=\"0.025\"} 1\n"
"disagent_request_duration_seconds_bucket{flow=\"app\",stream=\"s1\",le=\"0.05\"} 1\n"
"disagent_request_duration_seconds_bucket{flow=\"app\",stream=\"s1\",le=\"0.1\"} 1\n"
"disagent_request_duration_seconds_bucket{flow=\"app\",stream=\"s1\",le=\"0.25\"} 1\n"
"disagent_request_duration_seconds_bucket{flow=\"app\",stream=\"s1\",le=\"0.5\"} 2\n"
"disagent_request_duration_seconds_bucket{flow=\"app\",stream=\"s1\",le=\"1\"} 2\n"
"disagent_request_duration_seconds_bucket{flow=\"app\",stream=\"s1\",le=\"2.5\"} 2\n"
"disagent_request_duration_seconds_bucket{flow=\"app\",stream=\"s1\",le=\"5\"} 2\n"
"disagent_request_duration_seconds_bucket{flow=\"app\",stream=\"s1\",le=\"10\"} 2\n"
"disagent_request_duration_seconds_bucket{flow=\"app\",stream=\"s1\",le=\"+Inf\"} 2\n"
"disagent_request_duration_seconds_sum{flow=\"app\",stream=\"s1\"} 0.32\n"
"disagent_request_duration_seconds_count{flow=\"app\",stream=\"s1\"} 2\n"
"# HELP disagent_last_error_info The latest error of each flow that had "
"one: its code and message.\n"
"# TYPE disagent_last_error_info gauge\n"
"disagent_last_error_info{flow=\"app\",code=\"DIS.4301\",message=\"Stream "
"does not exist.\"} 1\n"
"# HELP disagent_last_error_timestamp_seconds When the latest error of the "
"flow happened, in seconds since the epoch.\n"
"# TYPE disagent_last_error_timestamp_seconds gauge\n"
"disagent_last_error_timestamp_seconds{flow=\"app\"} 1700000000\n";

START_TEST(small_snapshot_renders_exact_text)
{
	struct metrics_flow	 f;
	struct metrics_snapshot	 s;
	char			*text;

	sample_flow(&f, "app", "s1");
	sample_snapshot(&s, &f, 1);
	text = render(&s);
	ck_assert_str_eq(text, expected_small);
	ck_assert_int_eq(check_exposition(text), 55);
	free(text);
}
END_TEST

START_TEST(label_values_are_escaped)
{
	struct metrics_flow	 f;
	struct metrics_snapshot	 s;
	char			*text;

	sample_flow(&f, "a\"b\\c\nd", "t\x01u\xff\xc3\xa9");
	sample_snapshot(&s, &f, 1);
	s.version = "1.0\"";
	metrics_set_error(&f, "E\"1", "bad \\ \"x\"\r\nnext", 1);
	text = render(&s);
	ck_assert_ptr_nonnull(strstr(text, "disagent_records_sent_total{"
	    "flow=\"a\\\"b\\\\c\\nd\",stream=\"t u?\xc3\xa9\"} 8\n"));
	ck_assert_ptr_nonnull(strstr(text,
	    "disagent_build_info{version=\"1.0\\\"\"} 1\n"));
	/* metrics_set_error already made CR and LF blanks. */
	ck_assert_ptr_nonnull(strstr(text, "disagent_last_error_info{"
	    "flow=\"a\\\"b\\\\c\\nd\",code=\"E\\\"1\","
	    "message=\"bad \\\\ \\\"x\\\"  next\"} 1\n"));
	check_exposition(text);
	free(text);
}
END_TEST

/* The line of family name with label le="le". */
static uint64_t
bucket_of(const char *text, const char *le)
{
	char		 key[128];
	const char	*p;

	snprintf(key, sizeof(key), ",le=\"%s\"} ", le);
	p = strstr(text, key);
	ck_assert_msg(p != NULL, "no bucket %s", le);
	return strtoull(p + strlen(key), NULL, 10);
}

START_TEST(histogram_buckets_are_cumulative_with_sum_and_count)
{
	static const char *const le[] = { "0.005", "0.01", "0.025", "0.05",
	    "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "+Inf" };
	static const uint64_t want[] = { 2, 3, 3, 3, 3, 3, 4, 4, 4, 4, 5, 6 };
	struct metrics_flow	 f;
	struct metrics_snapshot	 s;
	char			*text;
	size_t			 i;

	memset(&f, 0, sizeof(f));
	f.name = "h";
	f.stream = "s";
	metrics_observe_latency(&f.latency, 0.005);	/* le is inclusive */
	metrics_observe_latency(&f.latency, -1);	/* counts as 0 */
	metrics_observe_latency(&f.latency, 0.0051);
	metrics_observe_latency(&f.latency, 0.5);
	metrics_observe_latency(&f.latency, 10);
	metrics_observe_latency(&f.latency, 11);	/* only +Inf */
	metrics_observe_latency(&f.latency, NAN);	/* ignored */
	ck_assert_uint_eq(f.latency.count, 6);
	ck_assert_uint_eq(f.latency.bucket[METRICS_NBUCKETS - 1], 1);
	sample_snapshot(&s, &f, 1);
	text = render(&s);
	for (i = 0; i < ARRAY_SIZE(le); i++)
		ck_assert_uint_eq(bucket_of(text, le[i]), want[i]);
	ck_assert_ptr_nonnull(strstr(text, "disagent_request_duration_seconds"
	    "_sum{flow=\"h\",stream=\"s\"} 21.5101\n"));
	ck_assert_ptr_nonnull(strstr(text, "disagent_request_duration_seconds"
	    "_count{flow=\"h\",stream=\"s\"} 6\n"));
	check_exposition(text);
	free(text);
}
END_TEST

START_TEST(code_and_status_tables_overflow_into_other)
{
	struct metrics_flow	 f;
	struct metrics_snapshot	 s;
	char			 code[16], *text;
	int			 i;

	memset(&f, 0, sizeof(f));
	f.name = "o";
	f.stream = "s";
	for (i = 0; i < 12; i++) {
		snprintf(code, sizeof(code), "DIS.%d", 5000 + i);
		metrics_count_failed(&f, code, 1);
		metrics_count_request(&f, 500 + i);
	}
	metrics_count_failed(&f, "DIS.5000", 10);	/* has a slot */
	metrics_count_failed(&f, "other", 100);		/* is the slot */
	metrics_count_request(&f, 500);
	ck_assert_uint_eq(f.nfailed, METRICS_NCODES);
	ck_assert_uint_eq(f.nrequests, METRICS_NSTATUS);
	sample_snapshot(&s, &f, 1);
	text = render(&s);
	ck_assert_ptr_nonnull(strstr(text, "code=\"DIS.5000\"} 11\n"));
	ck_assert_ptr_nonnull(strstr(text, "code=\"DIS.5006\"} 1\n"));
	ck_assert_ptr_null(strstr(text, "code=\"DIS.5007\""));
	ck_assert_ptr_nonnull(strstr(text, "code=\"other\"} 105\n"));
	ck_assert_ptr_nonnull(strstr(text, "status=\"500\"} 2\n"));
	ck_assert_ptr_nonnull(strstr(text, "status=\"506\"} 1\n"));
	ck_assert_ptr_null(strstr(text, "status=\"507\""));
	/* "other" sorts after the numbers. */
	ck_assert_ptr_nonnull(strstr(text, "status=\"506\"} 1\n"
	    "disagent_requests_total{flow=\"o\",stream=\"s\",status=\"other\"}"
	    " 5\n"));
	check_exposition(text);
	free(text);
}
END_TEST

START_TEST(many_flows_give_a_valid_exposition)
{
	struct metrics_flow	 f[3];
	struct metrics_snapshot	 s;
	char			*text;

	sample_flow(&f[0], "a", "s1");
	sample_flow(&f[1], "b", "s2");
	memset(&f[2], 0, sizeof(f[2]));	/* no error, no traffic */
	f[2].name = "c";
	f[2].stream = "s3";
	sample_snapshot(&s, f, 3);
	text = render(&s);
	/* 4 agent-wide, 24 plain x 3, unmatched 3 x 3, lost 4 x 3, codes
	 * 2+2, statuses 2+2, 14 x 3, 2+2. */
	ck_assert_int_eq(check_exposition(text),
	    4 + 72 + 9 + 12 + 4 + 4 + 42 + 4);
	free(text);
}
END_TEST

START_TEST(write_file_replaces_the_file_by_rename)
{
	struct metrics_flow	 f;
	struct metrics_snapshot	 s;
	struct stat		 st;
	char			 link_path[PATH_MAX * 2], tmp[PATH_MAX * 2];
	char			*text, *got;
	mode_t			 old;

	snprintf(link_path, sizeof(link_path), "%s/old-link", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", mpath);
	sample_flow(&f, "app", "s1");
	sample_snapshot(&s, &f, 1);
	old = umask(077);
	ck_assert_int_eq(metrics_write_file(mpath, &s), 0);
	umask(old);
	ck_assert_int_eq(stat(mpath, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0644);
	ck_assert_int_eq(access(tmp, F_OK), -1);
	got = tu_slurp(mpath, NULL);
	ck_assert_str_eq(got, expected_small);
	free(got);
	/* A reader holding the old file keeps seeing all of the old text. */
	ck_assert_int_eq(link(mpath, link_path), 0);
	f.records_sent = 9;
	ck_assert_int_eq(metrics_write_file(mpath, &s), 0);
	got = tu_slurp(link_path, NULL);
	ck_assert_str_eq(got, expected_small);
	free(got);
	got = tu_slurp(mpath, NULL);
	text = render(&s);
	ck_assert_str_eq(got, text);
	ck_assert_ptr_nonnull(strstr(got, "stream=\"s1\"} 9\n"));
	free(text);
	free(got);
}
END_TEST

START_TEST(write_file_failure_returns_negative_errno_and_keeps_old_file)
{
	struct metrics_flow	 f;
	struct metrics_snapshot	 s;
	char			 p[PATH_MAX * 2], tmp[PATH_MAX * 2];
	char			*got;

	sample_flow(&f, "app", "s1");
	sample_snapshot(&s, &f, 1);
	snprintf(p, sizeof(p), "%s/no-such-dir/disagent.prom", dir);
	ck_assert_int_eq(metrics_write_file(p, &s), -ENOENT);
	ck_assert_int_eq(metrics_write_file(mpath, &s), 0);
	/* path.tmp cannot be created: the old file stays whole. */
	snprintf(tmp, sizeof(tmp), "%s.tmp", mpath);
	ck_assert_int_eq(mkdir(tmp, 0700), 0);
	f.records_sent = 99;
	ck_assert_int_eq(metrics_write_file(mpath, &s), -EISDIR);
	got = tu_slurp(mpath, NULL);
	ck_assert_str_eq(got, expected_small);
	free(got);
	ck_assert_int_eq(rmdir(tmp), 0);
	if (geteuid() != 0) {	/* root ignores directory permissions */
		ck_assert_int_eq(chmod(dir, 0500), 0);
		ck_assert_int_eq(metrics_write_file(mpath, &s), -EACCES);
		ck_assert_int_eq(chmod(dir, 0700), 0);
	}
}
END_TEST

START_TEST(last_errors_are_read_back_from_the_file)
{
	struct metrics_flow	 f[3];
	struct metrics_snapshot	 s;
	struct metrics_error	*e;
	size_t			 n;

	sample_flow(&f[0], "a", "s1");
	metrics_set_error(&f[0], "DIS.4301", "say \"no\" \\ twice", 1700000001);
	memset(&f[1], 0, sizeof(f[1]));
	f[1].name = "quiet";
	f[1].stream = "s2";
	sample_flow(&f[2], "c", "s3");
	metrics_set_error(&f[2], "HTTP.0", "", 5);
	sample_snapshot(&s, f, 3);
	ck_assert_int_eq(metrics_write_file(mpath, &s), 0);
	ck_assert_int_eq(metrics_read_errors(mpath, &e, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(e[0].flow, "a");
	ck_assert_str_eq(e[0].code, "DIS.4301");
	ck_assert_str_eq(e[0].message, "say \"no\" \\ twice");
	ck_assert_int_eq(e[0].time, 1700000001);
	ck_assert_str_eq(e[1].flow, "c");
	ck_assert_str_eq(e[1].code, "HTTP.0");
	ck_assert_str_eq(e[1].message, "");
	ck_assert_int_eq(e[1].time, 5);
	metrics_errors_free(e, n);
}
END_TEST

START_TEST(reading_errors_skips_junk_and_reports_a_missing_file)
{
	struct metrics_error	*e;
	FILE			*fp;
	size_t			 n;

	ck_assert_int_eq(metrics_read_errors(mpath, &e, &n), -ENOENT);
	ck_assert_ptr_null(e);
	ck_assert_uint_eq(n, 0);
	fp = fopen(mpath, "w");
	ck_assert_ptr_nonnull(fp);
	fputs("disagent_last_error_info{flow=\"x\",code=\"C\"} 1\n"
	    "disagent_last_error_info{flow=\"y\",code=\"C\",message=\"m} 1\n"
	    "disagent_last_error_info{flow=\"z\",code=\"C\","
	    "message=\"a\\nb\"}\n"
	    "disagent_last_error_info{flow=\"w\",code=\"C\",message=\"a\\nb\"}"
	    " 1\n"
	    "disagent_last_error_timestamp_seconds{flow=\"w\"} 42 1700000\n"
	    "disagent_last_error_timestamp_seconds{flow=\"v\"} 43\n", fp);
	fclose(fp);
	ck_assert_int_eq(metrics_read_errors(mpath, &e, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(e[0].flow, "w");
	ck_assert_str_eq(e[0].message, "a\nb");
	ck_assert_int_eq(e[0].time, 42);
	metrics_errors_free(e, n);
}
END_TEST

static Suite *
metrics_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("metrics");
	tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, small_snapshot_renders_exact_text);
	tcase_add_test(tc, label_values_are_escaped);
	tcase_add_test(tc, histogram_buckets_are_cumulative_with_sum_and_count);
	tcase_add_test(tc, code_and_status_tables_overflow_into_other);
	tcase_add_test(tc, many_flows_give_a_valid_exposition);
	tcase_add_test(tc, write_file_replaces_the_file_by_rename);
	tcase_add_test(tc,
	    write_file_failure_returns_negative_errno_and_keeps_old_file);
	tcase_add_test(tc, last_errors_are_read_back_from_the_file);
	tcase_add_test(tc,
	    reading_errors_skips_junk_and_reports_a_missing_file);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(metrics_suite());
}
