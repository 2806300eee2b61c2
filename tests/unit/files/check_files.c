/*
 * Unit tests for the files module (files.c) on a real loop with temp files:
 * where a file found by the first scan starts (the registry offset, 0, its
 * end), copytruncate in place (shorter, and rewritten past the old size,
 * only once the in-flight ranges are acknowledged), a copytruncate copy the
 * pattern matches, a registry entry whose inode now holds another file, a
 * rename, a file gone from its path, parked descriptors under maxOpenFiles,
 * held ranges and a file that cannot be opened.
 *
 * The flow is played by the test: it reads what files_next_readable hands
 * out with tailer_read, gives every record its own range and acknowledges
 * the ranges when the case says so.  watchMode = POLL, so scans run only at
 * files_start and on the rescan timer, and the readable callback (called
 * after each timer scan and nothing else) counts them: a case waits for
 * "one more scan" with a watchdog, never for a time.  (A case that watches
 * with INOTIFY and a rescan an hour apart sees the scans events and holds
 * ask for.)
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uv.h>
#include <zlib.h>

#include "base/log.h"
#include "base/metrics.h"
#include "base/util.h"
#include "conf/conf.h"
#include "files/files.h"
#include "tail/tailer.h"
#include "records/framer.h"
#include "state/registry.h"
#include "testutil.h"

#define WATCHDOG_MS	10000
#define MAX_RECS	256
#define MAX_PENDING	256
#define NOBODY		65534

/* One record the test read, and its range. */
struct rec {
	char		 file[32];	/* base name of the tailer's path */
	char		 data[64];
	uint64_t	 off;
	uint64_t	 tid;		/* its tailer */
};

struct pend {
	uint64_t	 id;		/* tailer id */
	uint64_t	 range;
};

static struct {
	uv_loop_t	 loop;
	char		 dir[256];
	struct conf	*conf;
	struct conf_flow *fc;
	struct registry	*reg;
	struct framer	*fr;
	struct metrics_flow m;
	struct files	*fs;
	struct readbuf	 rb;
	struct tailer	*reading;
	bool		 one;		/* take one record per read */
	size_t		 taken;		/* records taken by this read */
	struct rec	 recs[MAX_RECS];
	size_t		 nrecs;
	struct pend	 pend[MAX_PENDING];
	size_t		 npend;
	unsigned	 scans;		/* rescan timer scans */
	unsigned	 want_scans;
	bool		 done;
	bool		 count_fds;	/* watch the descriptors as it reads */
	size_t		 max_fds;	/* most descriptors seen open */
	int		 saved_stderr;
	char		 err_path[PATH_MAX];
} h;

/* --- fixture ------------------------------------------------------------ */

static void
setup(void)
{
	memset(&h, 0, sizeof(h));
	h.saved_stderr = -1;
	ck_assert_int_eq(uv_loop_init(&h.loop), 0);
	tu_tmpdir(h.dir, sizeof(h.dir), "check_files");
	buf_init(&h.rb.b);
}

static void
teardown(void)
{
	files_free(h.fs);
	readbuf_forget(&h.rb);
	buf_cleanup(&h.rb.b);
	framer_free(h.fr);
	registry_free(h.reg);
	conf_free(h.conf);
	tu_loop_close(&h.loop);
	tu_rmtree(h.dir);
}

static void
path_of(char *out, size_t len, const char *name)
{
	tu_path(out, len, h.dir, name);
}

/*
 * Load a flow for DIR/pattern (POLL, rescans every 100 ms, unless the
 * extra flow lines say otherwise) with the extra flow lines, its framer
 * and an empty registry; files_new comes later, so that a case can set up
 * files, registry entries and limits first.
 */
static void
flow_conf(const char *pattern, const char *extra)
{
	struct framer_opts fo;
	char		 ini[PATH_MAX], state[PATH_MAX], err[512], *text;

	path_of(ini, sizeof(ini), "agent.ini");
	path_of(state, sizeof(state), "state");
	text = xasprintf("[agent]\nregion = cn-north-4\nprojectId = p1\n"
	    "ak = AK\nsk = SK\ncheckpointFile = %s\n"
	    "[flow:app]\nDISStream = s1\nfilePattern = %s/%s\n%s%s%s",
	    state, h.dir, pattern,
	    strstr(extra, "watchMode") ? "" : "watchMode = POLL\n",
	    strstr(extra, "rescanIntervalMillis") ? "" :
	    "rescanIntervalMillis = 100\n", extra);
	tu_write_str(ini, text);
	free(text);
	ck_assert_msg(conf_load(ini, &h.conf, err, sizeof(err)) == 0, "%s",
	    err);
	h.fc = &h.conf->flows[0];
	memset(&fo, 0, sizeof(fo));
	fo.delim = '\n';
	ck_assert_int_eq(framer_new(&fo, &h.fr, err, sizeof(err)), 0);
	h.reg = registry_new(state);
	h.m.name = h.fc->name;
	h.m.stream = h.fc->stream;
}

static void	on_readable(void *);

/* files_new and the first scan. */
static void
start(void)
{
	char	 err[512];

	h.fs = files_new(&h.loop, h.conf, h.fc, h.reg, h.fr, &h.m, false,
	    on_readable, NULL, err, sizeof(err));
	ck_assert_msg(h.fs != NULL, "%s", err);
	files_start(h.fs);
}

/* --- scans -------------------------------------------------------------- */

/* After each rescan timer scan (POLL: nothing else calls it). */
static void
on_readable(void *arg)
{
	(void)arg;
	h.scans++;
	h.done = h.scans >= h.want_scans;
}

/* Run the loop until n more rescans have happened. */
static void
wait_scans(unsigned n)
{
	h.want_scans = h.scans + n;
	h.done = false;
	ck_assert_msg(tu_run_until(&h.loop, &h.done, WATCHDOG_MS),
	    "no rescan in %d ms (%u of %u)", WATCHDOG_MS, h.scans,
	    h.want_scans);
}

/* --- descriptors -------------------------------------------------------- */

/* Descriptors of this process open on files in the test directory. */
static size_t
open_fds(void)
{
	char		 link[PATH_MAX], target[PATH_MAX];
	struct dirent	*de;
	size_t		 n = 0, dlen = strlen(h.dir);
	ssize_t		 len;
	DIR		*d;

	d = opendir("/proc/self/fd");
	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL) {
		snprintf(link, sizeof(link), "/proc/self/fd/%s", de->d_name);
		len = readlink(link, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		if (strncmp(target, h.dir, dlen) == 0 && target[dlen] == '/' &&
		    strstr(target, ".log") != NULL)
			n++;
	}
	closedir(d);
	if (n > h.max_fds)
		h.max_fds = n;
	return n;
}

/* --- the test's flow ---------------------------------------------------- */

static int
on_record(void *arg, const char *data, size_t len, uint64_t start,
    uint64_t end)
{
	struct rec	*r;
	const char	*slash;

	(void)arg;
	if (h.one && h.taken > 0)
		return 1;	/* refused: offered again */
	ck_assert_uint_lt(h.nrecs, MAX_RECS);
	ck_assert_uint_lt(h.npend, MAX_PENDING);
	r = &h.recs[h.nrecs++];
	slash = strrchr(tailer_path(h.reading), '/');
	snprintf(r->file, sizeof(r->file), "%s", slash + 1);
	snprintf(r->data, sizeof(r->data), "%.*s", (int)len, data);
	r->off = start;
	r->tid = tailer_id(h.reading);
	h.pend[h.npend].id = tailer_id(h.reading);
	h.pend[h.npend++].range = tailer_push(h.reading, end);
	h.taken++;
	return 0;
}

/* Read t once as the flow's pump does. */
static void
read_one(struct tailer *t)
{
	struct tailer_read r;
	long		 n;

	h.reading = t;
	h.taken = 0;
	n = tailer_read(t, h.fr, &h.rb, 65536, 65536, on_record, NULL, &r);
	files_read_done(h.fs, t, n, h.one && h.taken > 0 && n >= 0,
	    r.committed);
	if (h.count_fds)
		(void)open_fds();
}

static void
ack_all(void)
{
	size_t	 i;

	for (i = 0; i < h.npend; i++)
		files_ack(h.fs, h.pend[i].id, h.pend[i].range);
	h.npend = 0;
}

/* Read everything readable (hold: ranges a file may have in flight);
 * ack: acknowledge each read's ranges at once, as a fast sink would. */
static void
read_all(size_t hold, bool ack)
{
	struct tailer	*t;
	int		 guard;

	for (guard = 0; guard < 1000; guard++) {
		t = files_next_readable(h.fs, hold);
		if (h.count_fds)
			(void)open_fds();
		if (t == NULL)
			return;
		read_one(t);
		if (ack)
			ack_all();
	}
	ck_abort_msg("files_next_readable never ran dry");
}

static int
rec_cmp(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	int		 c = strcmp(x->file, y->file);

	if (c != 0)
		return c;
	return x->off < y->off ? -1 : x->off > y->off;
}

/*
 * The records read since the last call, by file then offset, as
 * "file:data@offset" separated by blanks.  Valid until the next call.
 */
static const char *
took(void)
{
	static struct buf out;
	size_t		 i;

	qsort(h.recs, h.nrecs, sizeof(h.recs[0]), rec_cmp);
	buf_cleanup(&out);
	buf_init(&out);
	buf_addstr(&out, "");
	for (i = 0; i < h.nrecs; i++)
		buf_printf(&out, "%s%s:%s@%ju", i ? " " : "", h.recs[i].file,
		    h.recs[i].data, (uintmax_t)h.recs[i].off);
	h.nrecs = 0;
	return out.data;
}

/* --- files and the registry --------------------------------------------- */

static void
write_file(const char *name, const char *text)
{
	char	 p[PATH_MAX];

	path_of(p, sizeof(p), name);
	tu_write_str(p, text);
}

static void
append_file(const char *name, const char *text)
{
	char	 p[PATH_MAX];
	int	 fd;

	path_of(p, sizeof(p), name);
	fd = open(p, O_WRONLY | O_APPEND | O_CLOEXEC);
	ck_assert_msg(fd >= 0, "%s: %s", p, strerror(errno));
	ck_assert_int_eq(write_all(fd, text, strlen(text)), 0);
	ck_assert_int_eq(close(fd), 0);
}

static void
path_of_unlink(const char *name)
{
	char	 p[PATH_MAX];

	path_of(p, sizeof(p), name);
	ck_assert_int_eq(unlink(p), 0);
}

static void
rename_file(const char *from, const char *to)
{
	char	 a[PATH_MAX], b[PATH_MAX];

	path_of(a, sizeof(a), from);
	path_of(b, sizeof(b), to);
	ck_assert_int_eq(rename(a, b), 0);
}

static void
stat_file(const char *name, struct stat *st)
{
	char	 p[PATH_MAX];

	path_of(p, sizeof(p), name);
	ck_assert_int_eq(stat(p, st), 0);
}

/* The registry entry of the file now at name, or NULL. */
static struct reg_entry *
entry_of(const char *name)
{
	struct stat	 st;

	stat_file(name, &st);
	return registry_find(h.reg, "app", (uint64_t)st.st_dev,
	    (uint64_t)st.st_ino);
}

static uint64_t
committed_of(const char *name)
{
	struct reg_entry *e = entry_of(name);

	ck_assert_msg(e != NULL, "no registry entry for %s", name);
	return e->offset;
}

/* A registry entry for the file at name: head = crc32 of head. */
static void
remember(const char *name, const char *head, uint64_t offset)
{
	struct stat	 st;
	char		 p[PATH_MAX], tmp[PATH_MAX];
	uint32_t	 crc;
	int		 fd;

	stat_file(name, &st);
	path_of(p, sizeof(p), name);
	path_of(tmp, sizeof(tmp), "head.tmp");
	tu_write_str(tmp, head);
	fd = open(tmp, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(tailer_fingerprint(fd, (uint32_t)strlen(head),
	    &crc), 0);
	close(fd);
	ck_assert_int_eq(unlink(tmp), 0);
	registry_set(h.reg, "app", (uint64_t)st.st_dev, (uint64_t)st.st_ino,
	    crc, (uint32_t)strlen(head), p, offset);
}

static void
gauges(void)
{
	files_gauges(h.fs, &h.m);
}

/* Files tracked now, and finished so far. */
static void
expect_files(uint64_t tracked, uint64_t done)
{
	gauges();
	ck_assert_uint_eq(h.m.files_tracked, tracked);
	ck_assert_uint_eq(h.m.files_done, done);
}

/*
 * The usual start: a flow for *.log, a.log holding text, the first scan
 * and one read of it (ack: acknowledged at once); what it read must be
 * want (unless NULL).
 */
static void
a_log_read(const char *text, bool ack, const char *want)
{
	flow_conf("*.log", "");
	write_file("a.log", text);
	start();
	read_all(100, ack);
	if (want != NULL)
		ck_assert_str_eq(took(), want);
}

/* --- where a file starts ------------------------------------------------ */

START_TEST(first_scan_resumes_at_registry_offset_else_from_zero)
{
	flow_conf("*.log", "");
	write_file("a.log", "l1\nl2\nl3\n");
	write_file("b.log", "b1\n");
	remember("a.log", "l1\nl2\nl3\n", 3);
	start();
	gauges();
	ck_assert_uint_eq(h.m.files_tracked, 2);
	ck_assert_uint_eq(h.m.bytes_behind, 6 + 3);
	read_all(100, true);
	ck_assert_str_eq(took(), "a.log:l2@3 a.log:l3@6 b.log:b1@0");
	ck_assert_uint_eq(committed_of("a.log"), 9);
	ck_assert_uint_eq(committed_of("b.log"), 3);
	gauges();
	ck_assert_uint_eq(h.m.bytes_behind, 0);
}
END_TEST

START_TEST(first_scan_end_of_file_skips_what_is_there)
{
	flow_conf("*.log", "initialPosition = END_OF_FILE\n");
	write_file("a.log", "old1\nold2\n");
	start();
	read_all(100, true);
	ck_assert_str_eq(took(), "");
	ck_assert_uint_eq(committed_of("a.log"), 10);
	append_file("a.log", "new1\n");
	/* A file that appears after the first scan is new: from 0. */
	write_file("b.log", "b1\n");
	wait_scans(1);
	read_all(100, true);
	ck_assert_str_eq(took(), "a.log:new1@10 b.log:b1@0");
}
END_TEST

START_TEST(registry_inode_holding_another_file_reads_from_zero)
{
	flow_conf("*.log", "");
	write_file("a.log", "new1\nnew2\n");
	/* The same (dev, inode) held "old1\n..." when the agent stopped. */
	remember("a.log", "old1\n", 5);
	start();
	read_all(100, true);
	ck_assert_str_eq(took(), "a.log:new1@0 a.log:new2@5");
	ck_assert_uint_eq(committed_of("a.log"), 10);
	ck_assert_uint_eq(entry_of("a.log")->fp_len, 10);
}
END_TEST

/* --- copytruncate ------------------------------------------------------- */

START_TEST(copytruncate_in_place_reads_again_from_zero)
{
	a_log_read("l1\nl2\nl3\n", true, "a.log:l1@0 a.log:l2@3 a.log:l3@6");
	write_file("a.log", "n1\n");	/* O_TRUNC: the same inode */
	wait_scans(1);
	ck_assert_uint_eq(h.m.truncations, 1);
	ck_assert_uint_eq(committed_of("a.log"), 0);
	read_all(100, true);
	ck_assert_str_eq(took(), "a.log:n1@0");
	ck_assert_uint_eq(committed_of("a.log"), 3);
	wait_scans(1);
	ck_assert_uint_eq(h.m.truncations, 1);
}
END_TEST

START_TEST(truncated_and_refilled_past_old_size_reads_from_zero)
{
	a_log_read("aaaa\n", true, "a.log:aaaa@0");
	/* Truncated and written again before a scan looked: larger than
	 * before, only its head tells. */
	write_file("a.log", "bbbbbbbb\ncccc\n");
	wait_scans(1);
	ck_assert_uint_eq(h.m.truncations, 1);
	read_all(100, true);
	ck_assert_str_eq(took(), "a.log:bbbbbbbb@0 a.log:cccc@9");
	ck_assert_uint_eq(committed_of("a.log"), 14);
}
END_TEST

START_TEST(truncation_waits_for_in_flight_ranges)
{
	a_log_read("l1\nl2\n", false, "a.log:l1@0 a.log:l2@3");
	write_file("a.log", "n1\n");
	wait_scans(2);
	/* Two ranges of the old content are still in flight. */
	ck_assert_uint_eq(h.m.truncations, 0);
	ck_assert_ptr_null(files_next_readable(h.fs, 100));
	ack_all();
	ck_assert_uint_eq(committed_of("a.log"), 6);
	ck_assert_ptr_null(files_next_readable(h.fs, 100));
	wait_scans(1);
	ck_assert_uint_eq(h.m.truncations, 1);
	read_all(100, true);
	ck_assert_str_eq(took(), "a.log:n1@0");
	ck_assert_uint_eq(committed_of("a.log"), 3);
}
END_TEST

/* 32 bytes each */
#define LINE(n)	"line-" #n " xxxxxxxxxxxxxxxxxxxxxxxx\n"

START_TEST(copytruncate_copy_resumes_where_the_original_was)
{
	flow_conf("*.log*", "");
	write_file("a.log", LINE(1) LINE(2) LINE(3));
	start();
	read_all(100, true);
	ck_assert_uint_eq(h.nrecs, 3);
	(void)took();
	/* logrotate copytruncate: a line more, then copy, then truncate,
	 * all between two scans. */
	append_file("a.log", LINE(4));
	write_file("a.log.1", LINE(1) LINE(2) LINE(3) LINE(4));
	write_file("a.log", "");
	wait_scans(1);
	ck_assert_uint_eq(h.m.truncations, 1);
	read_all(100, true);
	ck_assert_str_eq(took(), "a.log.1:" "line-4 xxxxxxxxxxxxxxxxxxxxxxxx"
	    "@96");
	ck_assert_uint_eq(committed_of("a.log.1"), 128);
	append_file("a.log", "fresh\n");
	wait_scans(1);
	read_all(100, true);
	ck_assert_str_eq(took(), "a.log:fresh@0");
	gauges();
	ck_assert_uint_eq(h.m.files_tracked, 2);
}
END_TEST

/*
 * The copy found while cp still writes it (R6): empty, or fewer bytes than
 * a fingerprint that are the start of the original's head.  It must not be
 * read from 0 as a new file: it waits until it can be told a copy.
 */
static void
copy_seen_short(const char *so_far)
{
	flow_conf("*.log*", "");
	write_file("a.log", LINE(1) LINE(2) LINE(3));
	start();
	read_all(100, true);
	ck_assert_uint_eq(h.nrecs, 3);
	(void)took();
	append_file("a.log", LINE(4));
	write_file("a.log.1", so_far);
	wait_scans(1);
	read_all(100, true);
	ck_assert_str_eq(took(), "a.log:" "line-4 xxxxxxxxxxxxxxxxxxxxxxxx"
	    "@96");
	expect_files(1, 0);		/* a.log.1 is held back */
	/* The rest of the copy, then the truncation. */
	append_file("a.log.1", LINE(1) LINE(2) LINE(3) LINE(4) + strlen(so_far));
	write_file("a.log", "");
	wait_scans(1);
	ck_assert_uint_eq(h.m.truncations, 1);
	read_all(100, true);
	ck_assert_str_eq(took(), "");
	ck_assert_uint_eq(committed_of("a.log.1"), 128);
	expect_files(2, 0);
	append_file("a.log.1", "after\n");
	append_file("a.log", "fresh\n");
	wait_scans(1);
	read_all(100, true);
	ck_assert_str_eq(took(), "a.log:fresh@0 a.log.1:after@128");
}

START_TEST(copy_seen_empty_waits_for_its_bytes)
{
	copy_seen_short("");
}
END_TEST

START_TEST(copy_seen_with_a_few_bytes_waits_for_the_rest)
{
	copy_seen_short("line-1 xxx");
}
END_TEST

/*
 * A copy found after the truncation but still shorter than what was read
 * of the original: what it gets next was read already, so it is not read
 * from its size then but from where the original had got to.
 */
START_TEST(copy_still_written_after_truncation_starts_at_the_original_end)
{
	flow_conf("*.log*", "headerBytesLength = 64\n");
	write_file("a.log", LINE(1) LINE(2) LINE(3) LINE(4));
	start();
	read_all(100, true);
	ck_assert_uint_eq(h.nrecs, 4);
	(void)took();
	append_file("a.log", LINE(5));
	write_file("a.log.1", LINE(1) LINE(2));
	write_file("a.log", "");
	wait_scans(1);
	ck_assert_uint_eq(h.m.truncations, 1);
	read_all(100, true);
	ck_assert_str_eq(took(), "");
	append_file("a.log.1", LINE(3) LINE(4) LINE(5));
	wait_scans(1);
	read_all(100, true);
	ck_assert_str_eq(took(), "a.log.1:" "line-5 xxxxxxxxxxxxxxxxxxxxxxxx"
	    "@128");
	ck_assert_uint_eq(committed_of("a.log.1"), 160);
}
END_TEST

/*
 * The cost of the hold for new files that are no copies: one that starts
 * otherwise is read at once; one whose line is the start of another file's
 * head (a create rotation whose first line is the old file's) is only
 * delayed -- read whole once it stopped changing for 3 s, the scan for that
 * asked for by the hold (rescans are an hour apart here), not spun for.
 */
START_TEST(new_file_starting_like_another_is_only_delayed)
{
	unsigned	 scans, guard;

	flow_conf("*.log*",
	    "watchMode = INOTIFY\nrescanIntervalMillis = 3600000\n");
	write_file("a.log", LINE(1) LINE(2) LINE(3));
	start();
	read_all(100, true);
	(void)took();
	write_file("b.log", "other\n");
	write_file("c.log", LINE(1));
	wait_scans(1);
	read_all(100, true);
	ck_assert_str_eq(took(), "b.log:other@0");
	expect_files(2, 0);		/* c.log is held back */
	scans = h.scans;
	for (guard = 0; guard < 10; guard++) {
		gauges();
		if (h.m.files_tracked == 3)
			break;
		wait_scans(1);
	}
	ck_assert_uint_eq(h.m.files_tracked, 3);
	ck_assert_uint_le(h.scans - scans, 3);
	read_all(100, true);
	ck_assert_str_eq(took(), "c.log:" "line-1 xxxxxxxxxxxxxxxxxxxxxxxx"
	    "@0");
}
END_TEST

/* A file held back that is deleted before it is told: its descriptor
 * kept its bytes, and they are read. */
START_TEST(held_file_deleted_is_read_to_its_end)
{
	flow_conf("*.log*", "");
	write_file("a.log", LINE(1) LINE(2) LINE(3));
	start();
	read_all(100, true);
	(void)took();
	write_file("b.log", LINE(1));
	wait_scans(1);
	expect_files(1, 0);
	append_file("b.log", "own\n");
	path_of_unlink("b.log");
	wait_scans(1);
	read_all(100, true);
	ck_assert_str_eq(took(), "b.log:" "line-1 xxxxxxxxxxxxxxxxxxxxxxxx"
	    "@0 b.log:own@32");
}
END_TEST

/* --- renames and gone files --------------------------------------------- */

START_TEST(rename_keeps_the_offset)
{
	struct reg_entry *e;
	struct tailer	*t;
	uint64_t	 id;
	char		 p[PATH_MAX];

	a_log_read("l1\nl2\n", true, NULL);
	id = h.recs[0].tid;
	ck_assert_str_eq(took(), "a.log:l1@0 a.log:l2@3");
	rename_file("a.log", "b.log");
	append_file("b.log", "l3\n");
	wait_scans(1);
	t = files_find(h.fs, id);
	ck_assert_ptr_nonnull(t);
	path_of(p, sizeof(p), "b.log");
	ck_assert_str_eq(tailer_path(t), p);
	read_all(100, true);
	ck_assert_str_eq(took(), "b.log:l3@6");
	e = entry_of("b.log");
	ck_assert_ptr_nonnull(e);
	ck_assert_str_eq(e->path, p);
	ck_assert_uint_eq(e->offset, 9);
	wait_scans(1);
	expect_files(1, 0);
}
END_TEST

START_TEST(gone_file_is_finished_a_scan_after_it_is_committed)
{
	flow_conf("*.log", "");
	write_file("a.log", "l1\nl2\n");
	write_file("b.log", "b1\n");
	start();
	read_all(100, false);
	ck_assert_str_eq(took(), "a.log:l1@0 a.log:l2@3 b.log:b1@0");
	ack_all();
	/* Committed, then rotated away: gone at the next scan, finished at
	 * the one after (it did not grow in between). */
	rename_file("a.log", "a.log.1");
	wait_scans(1);
	expect_files(2, 0);
	wait_scans(1);
	expect_files(1, 1);
	/* The entry stays: a file moved back resumes. */
	ck_assert_uint_eq(committed_of("a.log.1"), 6);
}
END_TEST

START_TEST(gone_file_with_ranges_in_flight_stays_until_acknowledged)
{
	a_log_read("l1\nl2\n", false, "a.log:l1@0 a.log:l2@3");
	rename_file("a.log", "a.log.1");
	wait_scans(3);
	expect_files(1, 0);
	ack_all();
	wait_scans(1);
	expect_files(0, 1);
	ck_assert_uint_eq(committed_of("a.log.1"), 6);
}
END_TEST

START_TEST(gone_file_that_grows_is_read_to_its_end)
{
	a_log_read("l1\n", true, "a.log:l1@0");
	rename_file("a.log", "a.log.1");
	wait_scans(1);
	/* The writer still holds it open. */
	append_file("a.log.1", "l2\n");
	wait_scans(1);
	expect_files(1, 0);
	/* Not read yet (the flow's window is closed, say): quiet since the
	 * last scan, but bytes are left, so it stays. */
	wait_scans(1);
	expect_files(1, 0);
	read_all(100, true);
	/* Read under the name it was tracked at. */
	ck_assert_str_eq(took(), "a.log:l2@3");
	wait_scans(1);
	expect_files(0, 1);
	ck_assert_uint_eq(committed_of("a.log.1"), 6);
}
END_TEST

/* --- the log and privileges ----------------------------------------- */

/* Take root's privileges away, so that file modes apply (or give them
 * back); nothing to do for another user. */
static void
as_nobody(bool on)
{
	if (getuid() != 0)
		return;
	if (on) {
		ck_assert_int_eq(setegid(NOBODY), 0);
		ck_assert_int_eq(seteuid(NOBODY), 0);
	} else {
		ck_assert_int_eq(seteuid(0), 0);
		ck_assert_int_eq(setegid(0), 0);
	}
}

/* stderr (the log) into DIR/stderr until capture_end. */
static void
capture_begin(void)
{
	int	 fd;

	path_of(h.err_path, sizeof(h.err_path), "stderr");
	fd = open(h.err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	h.saved_stderr = dup(STDERR_FILENO);
	ck_assert_int_ge(h.saved_stderr, 0);
	ck_assert_int_eq(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	close(fd);
}

/* What the log said since capture_begin (new). */
static char *
capture_end(void)
{
	ck_assert_int_eq(dup2(h.saved_stderr, STDERR_FILENO), STDERR_FILENO);
	close(h.saved_stderr);
	h.saved_stderr = -1;
	return tu_slurp(h.err_path, NULL);
}

static size_t
count_of(const char *text, const char *what)
{
	size_t		 n = 0;
	const char	*p;

	for (p = text; (p = strstr(p, what)) != NULL; p += strlen(what))
		n++;
	return n;
}

/* --- descriptors and holds ---------------------------------------------- */

START_TEST(parked_descriptors_stay_within_max_open_files)
{
	const char	*names[] = { "a", "b", "c", "d", "e" };
	char		 name[16], text[32];
	size_t		 i;

	flow_conf("*.log", "");
	h.fc->max_open_files = 2;
	h.count_fds = true;
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(name, sizeof(name), "%s.log", names[i]);
		snprintf(text, sizeof(text), "%s1\n%s2\n", names[i], names[i]);
		write_file(name, text);
	}
	start();
	ck_assert_uint_le(open_fds(), 2);
	read_all(100, true);
	ck_assert_str_eq(took(), "a.log:a1@0 a.log:a2@3 b.log:b1@0 b.log:b2@3 "
	    "c.log:c1@0 c.log:c2@3 d.log:d1@0 d.log:d2@3 e.log:e1@0 "
	    "e.log:e2@3");
	ck_assert_uint_le(h.max_fds, 2);
	/* Idle: every file fully read and committed. */
	wait_scans(2);
	ck_assert_uint_le(open_fds(), 2);
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(name, sizeof(name), "%s.log", names[i]);
		snprintf(text, sizeof(text), "%s3\n", names[i]);
		append_file(name, text);
	}
	/* The parked ones are reopened as they grew, two at a time. */
	wait_scans(1);
	read_all(100, true);
	ck_assert_str_eq(took(), "a.log:a3@6 b.log:b3@6 c.log:c3@6 "
	    "d.log:d3@6 e.log:e3@6");
	ck_assert_uint_le(h.max_fds, 2);
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(name, sizeof(name), "%s.log", names[i]);
		ck_assert_uint_eq(committed_of(name), 9);
	}
	gauges();
	ck_assert_uint_eq(h.m.files_tracked, 5);
	ck_assert_uint_eq(h.m.bytes_behind, 0);
}
END_TEST

static bool
note_open(struct tailer *t, void *arg)
{
	char	*names = arg;

	strcat(names, strrchr(tailer_path(t), '/') + 1);
	strcat(names, " ");
	return true;
}

/* The one of a.log b.log c.log that is not open (parked). */
static const char *
parked_one(void)
{
	static char	 names[64];
	const char	*all[] = { "a.log", "b.log", "c.log" };
	size_t		 i;

	names[0] = '\0';
	files_each_open(h.fs, note_open, names);
	for (i = 0; i < ARRAY_SIZE(all); i++)
		if (strstr(names, all[i]) == NULL)
			return all[i];
	ck_abort_msg("all open: %s", names);
	return NULL;
}

START_TEST(parked_file_deleted_with_bytes_unread_is_given_up_loudly)
{
	char		 p[PATH_MAX], *log;
	const char	*gone;

	flow_conf("*.log", "");
	h.fc->max_open_files = 2;
	write_file("a.log", "a1\n");
	write_file("b.log", "b1\n");
	write_file("c.log", "c1\n");
	start();
	/* The two open ones have ranges in flight: no descriptor for the
	 * third, whose bytes wait. */
	read_all(100, false);
	ck_assert_uint_eq(h.nrecs, 2);
	(void)took();
	capture_begin();	/* first: its file must not take the inode */
	gone = parked_one();
	path_of(p, sizeof(p), gone);
	ck_assert_int_eq(unlink(p), 0);
	wait_scans(1);
	/* A descriptor frees: it is tried, given up, and finished once it
	 * stayed so for a scan. */
	ack_all();
	wait_scans(3);
	log = capture_end();
	/* Its 3 bytes cannot be read any more, and no compressed
	 * successor holds them: said, counted, and the file is finished
	 * instead of tracked (and behind) for ever. */
	expect_files(2, 1);
	ck_assert_uint_eq(h.m.bytes_behind, 0);
	ck_assert_uint_eq(h.m.bytes_lost[LOST_GONE], 3);
	ck_assert_msg(strstr(log, "is gone with 3 bytes after its committed "
	    "offset that could not be delivered") != NULL, "%s", log);
	ck_assert_uint_eq(count_of(log, "could not be delivered"), 1);
	free(log);
	read_all(100, true);
	ck_assert_str_eq(took(), "");
}
END_TEST

/*
 * The flow's directory is not there at start (a mount not up yet): its
 * files are not "gone while the agent was stopped".  Nothing is counted
 * lost, the registry keeps them, and once the directory is back they
 * resume from their committed offsets.
 */
START_TEST(first_scan_without_its_directory_loses_nothing)
{
	char	 d[PATH_MAX], away[PATH_MAX];

	flow_conf("logs/*.log", "");
	path_of(d, sizeof(d), "logs");
	path_of(away, sizeof(away), "logs.away");
	ck_assert_int_eq(mkdir(d, 0755), 0);
	write_file("logs/a.log", "l1\nl2\nl3\n");
	remember("logs/a.log", "l1\nl2\nl3\n", 3);
	entry_of("logs/a.log")->size = 9;	/* 6 bytes not delivered */
	ck_assert_int_eq(rename(d, away), 0);
	capture_begin();
	start();
	wait_scans(2);
	ck_assert_uint_eq(h.m.bytes_lost[LOST_GONE], 0);
	ck_assert_uint_eq(registry_count(h.reg), 1);
	ck_assert_int_eq(rename(away, d), 0);
	wait_scans(2);
	free(capture_end());
	read_all(100, true);
	ck_assert_str_eq(took(), "a.log:l2@3 a.log:l3@6");
	ck_assert_uint_eq(h.m.bytes_lost[LOST_GONE], 0);
	ck_assert_uint_eq(committed_of("logs/a.log"), 9);
}
END_TEST

/* --- compressed successors ---------------------------------------------- */

enum gz_shape { GZ_WHOLE, GZ_NO_TRAILER, GZ_BAD_CRC };

/* name: text gzip-compressed, whole, still being written (no trailer
 * yet), or damaged (a wrong crc32 in its trailer). */
static void
write_gz(const char *name, const char *text, enum gz_shape shape)
{
	unsigned char	 out[4096];
	z_stream	 z;
	size_t		 n;
	char		 p[PATH_MAX];
	int		 fd;

	memset(&z, 0, sizeof(z));
	ck_assert_int_eq(deflateInit2(&z, 6, Z_DEFLATED, 31, 8,
	    Z_DEFAULT_STRATEGY), Z_OK);
	z.next_in = (unsigned char *)(uintptr_t)text;
	z.avail_in = (uInt)strlen(text);
	z.next_out = out;
	z.avail_out = sizeof(out);
	ck_assert_int_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
	n = sizeof(out) - z.avail_out;
	deflateEnd(&z);
	if (shape == GZ_NO_TRAILER)
		n -= 8;
	else if (shape == GZ_BAD_CRC)
		out[n - 8] ^= 0xff;
	path_of(p, sizeof(p), name);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write_all(fd, out, n), 0);
	ck_assert_int_eq(close(fd), 0);
}

/* Ten lines "line-000N\n", 100 bytes: a head the successor search takes. */
#define TEN_LINES	"line-0001\nline-0002\nline-0003\nline-0004\n" \
	"line-0005\nline-0006\nline-0007\nline-0008\nline-0009\n" \
	"line-0010\n"

/*
 * app.log known to the registry, 3 of its 10 lines delivered, gone while
 * the agent was stopped: compressed into app.log.1.gz (shape), which the
 * walk of the directory finds.  The log is captured from here: its file,
 * made after the unlink, would take app.log's inode and look like it.
 */
static void
gone_into_gz(const char *gz_text, enum gz_shape shape)
{
	flow_conf("*.log", "");
	write_file("app.log", TEN_LINES);
	remember("app.log", TEN_LINES, 30);
	entry_of("app.log")->size = 100;
	write_gz("app.log.1.gz", gz_text, shape);
	capture_begin();
	path_of_unlink("app.log");
}

START_TEST(successor_still_compressed_is_followed_once_whole)
{
	gone_into_gz(TEN_LINES, GZ_NO_TRAILER);
	start();
	wait_scans(2);
	/* Not lost: the successor is waited for, and the entry kept. */
	ck_assert_uint_eq(h.m.bytes_lost[LOST_GONE], 0);
	ck_assert_uint_eq(h.m.bytes_lost[LOST_UNREADABLE], 0);
	ck_assert_uint_eq(registry_count(h.reg), 1);
	write_gz("app.log.1.gz", TEN_LINES, GZ_WHOLE);
	wait_scans(2);
	free(capture_end());
	read_all(100, true);
	ck_assert_str_eq(took(), "app.log.1.gz:line-0004@30 "
	    "app.log.1.gz:line-0005@40 app.log.1.gz:line-0006@50 "
	    "app.log.1.gz:line-0007@60 app.log.1.gz:line-0008@70 "
	    "app.log.1.gz:line-0009@80 app.log.1.gz:line-0010@90");
	ck_assert_uint_eq(h.m.bytes_lost[LOST_GONE], 0);
}
END_TEST

/*
 * A parked file compressed away (nothing left at its path), first in the
 * tracked list: the successor it is followed into is tracked while the
 * list is walked, and must not be dropped with it.
 */
START_TEST(parked_file_compressed_away_is_read_on_in_its_successor)
{
	flow_conf("*.log", "");
	h.fc->max_open_files = 1;
	write_file("a.log", "a1\n");
	start();
	read_all(100, true);
	(void)took();
	/* b.log, tracked last (the head of the list), read, then parked
	 * for a.log's new line. */
	write_file("b.log", "line-0001\nline-0002\nline-0003\nline-0004\n"
	    "line-0005\nline-0006\nline-0007\n");
	wait_scans(1);
	read_all(100, true);
	ck_assert_uint_eq(h.nrecs, 7);
	(void)took();
	append_file("a.log", "a2\n");
	wait_scans(1);
	read_all(100, true);
	ck_assert_str_eq(took(), "a.log:a2@3");
	h.count_fds = true;
	ck_assert_uint_eq(open_fds(), 1);	/* a.log's: b.log is parked */
	h.count_fds = false;
	write_gz("b.log.1.gz", TEN_LINES, GZ_WHOLE);
	path_of_unlink("b.log");
	wait_scans(2);
	read_all(100, true);
	ck_assert_str_eq(took(), "b.log.1.gz:line-0008@70 "
	    "b.log.1.gz:line-0009@80 b.log.1.gz:line-0010@90");
	ck_assert_uint_eq(h.m.bytes_lost[LOST_GONE], 0);
}
END_TEST

START_TEST(damaged_successor_is_counted_lost_once)
{
	static char	 text[100 + 300 * 10 + 1];
	struct stat	 st;
	char		*log;
	int		 i;

	/* Damaged after its head: the head matches, reading it fails. */
	strcpy(text, TEN_LINES);
	for (i = 0; i < 300; i++)
		snprintf(text + 100 + i * 10, 11, "more-%04d\n", i);
	gone_into_gz(text, GZ_BAD_CRC);
	stat_file("app.log.1.gz", &st);
	start();
	wait_scans(2);
	log = capture_end();
	/* Counted once, as unreadable, not also as gone. */
	ck_assert_uint_eq(h.m.bytes_lost[LOST_UNREADABLE],
	    (uint64_t)st.st_size);
	ck_assert_uint_eq(h.m.bytes_lost[LOST_GONE], 0);
	ck_assert_msg(strstr(log, "no compressed copy") == NULL, "%s", log);
	ck_assert_msg(strstr(log, "app.log.1.gz") != NULL, "%s", log);
	free(log);
	ck_assert_uint_eq(registry_count(h.reg), 0);
}
END_TEST

/* a.log b.log c.log, each "<x>1\n", read and committed: one is parked. */
static const char *
three_files_one_parked(void)
{
	flow_conf("*.log", "");
	h.fc->max_open_files = 2;
	write_file("a.log", "a1\n");
	write_file("b.log", "b1\n");
	write_file("c.log", "c1\n");
	start();
	read_all(100, true);
	ck_assert_str_eq(took(), "a.log:a1@0 b.log:b1@0 c.log:c1@0");
	return parked_one();
}

START_TEST(parked_file_rewritten_in_place_is_read_again_from_zero)
{
	const char	*x = three_files_one_parked();
	char		 want[64];

	/* copytruncate while parked, and written past the old size before
	 * a scan looked: the same inode at its path, another head. */
	write_file(x, "zz1\nzz2\n");
	wait_scans(1);
	read_all(100, true);
	snprintf(want, sizeof(want), "%s:zz1@0 %s:zz2@4", x, x);
	ck_assert_str_eq(took(), want);
	ck_assert_uint_eq(h.m.truncations, 1);
	ck_assert_uint_eq(committed_of(x), 8);
	wait_scans(2);
	gauges();
	ck_assert_uint_eq(h.m.files_tracked, 3);
	ck_assert_uint_eq(h.m.bytes_behind, 0);
}
END_TEST

START_TEST(parked_file_truncated_below_its_offset_is_read_again_from_zero)
{
	const char	*x = three_files_one_parked();
	char		 want[64];

	/* Shorter than the offset read: nothing after it to read, but the
	 * line written since must not wait until it passes that offset. */
	write_file(x, "n\n");
	wait_scans(2);
	read_all(100, true);
	snprintf(want, sizeof(want), "%s:n@0", x);
	ck_assert_str_eq(took(), want);
	ck_assert_uint_eq(h.m.truncations, 1);
	ck_assert_uint_eq(committed_of(x), 2);
}
END_TEST

START_TEST(file_at_hold_ranges_is_skipped)
{
	struct tailer	*x, *y, *t;

	flow_conf("*.log", "");
	write_file("a.log", "a1\na2\n");
	write_file("b.log", "b1\nb2\n");
	start();
	h.one = true;
	x = files_next_readable(h.fs, 1);
	ck_assert_ptr_nonnull(x);
	read_one(x);
	/* x has one range in flight: with hold 1 only the other file. */
	y = files_next_readable(h.fs, 1);
	ck_assert_ptr_nonnull(y);
	ck_assert_ptr_ne(x, y);
	read_one(y);
	ck_assert_ptr_null(files_next_readable(h.fs, 1));
	t = files_next_readable(h.fs, 2);
	ck_assert(t == x || t == y);
	/* Acknowledging x's range lets it read again. */
	files_ack(h.fs, h.pend[0].id, h.pend[0].range);
	ck_assert_ptr_eq(files_next_readable(h.fs, 1), x);
	ck_assert_uint_eq(h.nrecs, 2);
	ck_assert_uint_eq(tailer_pending(x), 0);
	ck_assert_uint_eq(tailer_pending(y), 1);
	ck_assert_uint_eq(tailer_read_off(x), 3);
}
END_TEST

/* --- open failures ------------------------------------------------------ */

START_TEST(unreadable_file_is_reported_once)
{
	char	 p[PATH_MAX], *log;

	flow_conf("*.log", "");
	write_file("a.log", "a1\n");
	write_file("s.log", "s1\n");
	path_of(p, sizeof(p), "s.log");
	ck_assert_int_eq(chmod(p, 0), 0);
	ck_assert_int_eq(chmod(h.dir, 0755), 0);
	capture_begin();
	as_nobody(true);
	ck_assert_msg(access(h.dir, R_OK | X_OK) == 0, "%s: %s (as uid %d)",
	    h.dir, strerror(errno), (int)geteuid());
	start();
	ck_assert_uint_eq(h.m.open_errors, 1);
	wait_scans(3);
	ck_assert_uint_eq(h.m.open_errors, 1);
	read_all(100, true);
	ck_assert_str_eq(took(), "a.log:a1@0");
	as_nobody(false);
	ck_assert_int_eq(chmod(p, 0644), 0);
	as_nobody(true);
	wait_scans(1);
	read_all(100, true);
	as_nobody(false);
	log = capture_end();
	ck_assert_str_eq(took(), "s.log:s1@0");
	ck_assert_uint_eq(h.m.open_errors, 1);
	ck_assert_uint_eq(count_of(log, "s.log: cannot open"), 1);
	ck_assert_uint_eq(count_of(log,
	    "s.log: cannot open: Permission denied"), 1);
	ck_assert_uint_eq(count_of(log, "s.log: no longer failing to open"), 1);
	free(log);
}
END_TEST

static Suite *
files_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("files");
	tc = tcase_create("lifecycle");
	tcase_add_checked_fixture(tc, setup, teardown);
	/* Our watchdog, not Check's timer, should catch a hang. */
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc,
	    first_scan_resumes_at_registry_offset_else_from_zero);
	tcase_add_test(tc, first_scan_end_of_file_skips_what_is_there);
	tcase_add_test(tc, registry_inode_holding_another_file_reads_from_zero);
	tcase_add_test(tc, copytruncate_in_place_reads_again_from_zero);
	tcase_add_test(tc,
	    truncated_and_refilled_past_old_size_reads_from_zero);
	tcase_add_test(tc, truncation_waits_for_in_flight_ranges);
	tcase_add_test(tc, copytruncate_copy_resumes_where_the_original_was);
	tcase_add_test(tc, copy_seen_empty_waits_for_its_bytes);
	tcase_add_test(tc, copy_seen_with_a_few_bytes_waits_for_the_rest);
	tcase_add_test(tc,
	    copy_still_written_after_truncation_starts_at_the_original_end);
	tcase_add_test(tc, new_file_starting_like_another_is_only_delayed);
	tcase_add_test(tc, held_file_deleted_is_read_to_its_end);
	tcase_add_test(tc, rename_keeps_the_offset);
	tcase_add_test(tc, gone_file_is_finished_a_scan_after_it_is_committed);
	tcase_add_test(tc,
	    gone_file_with_ranges_in_flight_stays_until_acknowledged);
	tcase_add_test(tc, gone_file_that_grows_is_read_to_its_end);
	tcase_add_test(tc, parked_descriptors_stay_within_max_open_files);
	tcase_add_test(tc,
	    parked_file_deleted_with_bytes_unread_is_given_up_loudly);
	tcase_add_test(tc,
	    parked_file_rewritten_in_place_is_read_again_from_zero);
	tcase_add_test(tc,
	    parked_file_truncated_below_its_offset_is_read_again_from_zero);
	tcase_add_test(tc, file_at_hold_ranges_is_skipped);
	tcase_add_test(tc, first_scan_without_its_directory_loses_nothing);
	tcase_add_test(tc, successor_still_compressed_is_followed_once_whole);
	tcase_add_test(tc,
	    parked_file_compressed_away_is_read_on_in_its_successor);
	tcase_add_test(tc, damaged_successor_is_counted_lost_once);
	tcase_add_test(tc, unreadable_file_is_reported_once);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	log_setup(LOG_LVL_INFO, false);
	return tu_run(files_suite());
}
