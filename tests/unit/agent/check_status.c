/*
 * Unit tests for status: a temp configuration, a state file written by the
 * registry itself (registry_save) for real log files, and a metrics file
 * written by metrics_write_file; status_main's output is compared line for
 * line.  Also: no state file yet, a corrupt state file with a good .bak
 * (used, and nothing on disk changes), both corrupt, a bad configuration,
 * and a configuration without credentials.
 */
#include "config.h"

#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/status.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/util.h"
#include "state/registry.h"
#include "testutil.h"

static char	 dir[256];
static char	 conf_path[PATH_MAX];
static char	 state_path[PATH_MAX];
static char	 prom_path[PATH_MAX];

static void
setup(void)
{
	tu_tmpdir(dir, sizeof(dir), "check_status");
	tu_path(conf_path, sizeof(conf_path), dir, "agent.ini");
	tu_path(state_path, sizeof(state_path), dir, "state.json");
	tu_path(prom_path, sizeof(prom_path), dir, "disagent.prom");
	unsetenv("DIS_AK");
	unsetenv("DIS_SK");
	log_setup(0, false);	/* the registry's complaints are expected */
}

static void
teardown(void)
{
	tu_rmtree(dir);
}

/* The configuration: flows app (2 files) and web (by id, disabled). */
static void
write_conf(bool with_metrics, bool with_credentials)
{
	char	*text;

	text = xasprintf("[agent]\n"
	    "region = cn-north-1\n"
	    "projectId = 0123456789abcdef0123456789abcdef\n"
	    "%s"
	    "checkpointFile = %s\n"
	    "%s%s%s"
	    "\n[flow:app]\n"
	    "DISStream = s1\n"
	    "filePattern = %s/*.log\n"
	    "\n[flow:web]\n"
	    "enable = false\n"
	    "streamId = ID42\n"
	    "filePattern = %s/*.txt\n",
	    with_credentials ? "ak = AK\nsk = SK\n" : "", state_path,
	    with_metrics ? "metricsFile = " : "",
	    with_metrics ? prom_path : "", with_metrics ? "\n" : "", dir,
	    dir);
	tu_write_str(conf_path, text);
	free(text);
}

/* A log file of size bytes; its (dev, ino) into *st. */
static void
make_log(const char *name, size_t size, struct stat *st)
{
	char	 p[PATH_MAX * 2];
	char	*data;
	FILE	*fp;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	data = xmalloc(size + 1);
	memset(data, 'x', size);
	fp = fopen(p, "w");
	ck_assert_ptr_nonnull(fp);
	ck_assert_uint_eq(fwrite(data, 1, size, fp), size);
	ck_assert_int_eq(fclose(fp), 0);
	free(data);
	ck_assert_int_eq(stat(p, st), 0);
}

#define FAKE_INO	((ino_t)1 << 40)

static void
set_entry(struct registry *reg, const char *flow, const struct stat *st,
    const char *name, uint64_t off)
{
	char	 p[PATH_MAX * 2];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	registry_set(reg, flow, (uint64_t)st->st_dev, (uint64_t)st->st_ino,
	    0x1234, 512, p, off);
}

/*
 * app: a.log (40 of 100), b.log (all 100), gone.log (missing),
 * c.log (the name is another file now), d.log (10 bytes, offset 50);
 * old: a flow no longer configured.
 */
static void
write_state(void)
{
	struct registry	*reg;
	struct stat	 a, b, c, d, fake;

	make_log("a.log", 100, &a);
	make_log("b.log", 100, &b);
	make_log("c.log", 30, &c);
	make_log("d.log", 10, &d);
	reg = registry_new(state_path);
	set_entry(reg, "app", &a, "a.log", 40);
	set_entry(reg, "app", &b, "b.log", 100);
	/* Inodes no file here has, and each its own: offsets from real
	 * ones collided when c.log's inode was a.log's less one. */
	fake = a;
	fake.st_ino = FAKE_INO + 1;
	set_entry(reg, "app", &fake, "gone.log", 7);
	fake.st_ino = FAKE_INO + 2;
	set_entry(reg, "app", &fake, "c.log", 5);
	set_entry(reg, "app", &d, "d.log", 50);
	fake.st_ino = FAKE_INO + 3;
	set_entry(reg, "old", &fake, "old.log", 3);
	ck_assert_int_eq(registry_save(reg, true), 0);
	registry_free(reg);
}

static void
write_metrics(void)
{
	struct metrics_flow	 f[2];
	struct metrics_snapshot	 s;

	memset(f, 0, sizeof(f));
	f[0].name = "app";
	f[0].stream = "s1";
	metrics_set_error(&f[0], "DIS.4301", "Stream \"s1\" does not exist.",
	    1700000000);
	f[1].name = "web";
	f[1].stream = "ID42";
	memset(&s, 0, sizeof(s));
	s.flows = f;
	s.nflows = 2;
	s.version = "test";
	ck_assert_int_eq(metrics_write_file(prom_path, &s), 0);
}

/* status_main's exit code; its output in *text (new). */
static int
run_status(char **text)
{
	FILE	*fp;
	size_t	 len;
	int	 rc;

	*text = NULL;
	fp = open_memstream(text, &len);
	ck_assert_ptr_nonnull(fp);
	rc = status_main(conf_path, fp);
	ck_assert_int_eq(fclose(fp), 0);
	return rc;
}

/* Run status with stderr sent to a file; what it wrote there in *err. */
static int
run_status_err(char **text, char **err)
{
	char	 p[PATH_MAX * 2];
	int	 saved, fd, rc;
	FILE	*fp;
	long	 n;

	snprintf(p, sizeof(p), "%s/stderr", dir);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	dup2(fd, STDERR_FILENO);
	close(fd);
	rc = run_status(text);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	fp = fopen(p, "r");
	ck_assert_ptr_nonnull(fp);
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	*err = xcalloc(1, (size_t)n + 1);
	ck_assert_uint_eq(fread(*err, 1, (size_t)n, fp), (size_t)n);
	fclose(fp);
	unlink(p);
	return rc;
}

/* The exact report, with the temp dir put in where "@" stands. */
static char *
expand(const char *tmpl)
{
	struct buf	 b;

	buf_init(&b);
	for (; *tmpl != '\0'; tmpl++) {
		if (*tmpl == '@')
			buf_addstr(&b, dir);
		else
			buf_addc(&b, *tmpl);
	}
	return b.data;
}

static int
count_files(void)
{
	DIR		*d;
	struct dirent	*de;
	int		 n = 0;

	d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

START_TEST(report_lists_flows_files_and_last_error)
{
	char	*text, *want;

	write_conf(true, true);
	write_state();
	write_metrics();
	ck_assert_int_eq(run_status(&text), 0);
	want = expand(
	    "configuration: @/agent.ini\n"
	    "state file:    @/state.json (6 files)\n"
	    "metrics file:  @/disagent.prom\n"
	    "\n"
	    "[flow:app] stream s1: 5 files, 70 bytes behind\n"
	    "  last error: DIS.4301 Stream \"s1\" does not exist. "
	    "(2023-11-14 22:13:20 UTC)\n"
	    "          OFFSET           SIZE         BEHIND  PATH\n"
	    "              40            100             60  @/a.log\n"
	    "             100            100              0  @/b.log\n"
	    "               5              -              -  @/c.log "
	    "(replaced)\n"
	    "              50             10             10  @/d.log "
	    "(truncated)\n"
	    "               7              -              -  @/gone.log "
	    "(missing)\n"
	    "\n"
	    "[flow:web] stream id ID42 (disabled): 0 files, 0 bytes behind\n"
	    "\n"
	    "[flow:old] not in the configuration: 1 file, 0 bytes behind\n"
	    "          OFFSET           SIZE         BEHIND  PATH\n"
	    "               3              -              -  @/old.log "
	    "(missing)\n");
	ck_assert_str_eq(text, want);
	free(text);
	free(want);
}
END_TEST

START_TEST(no_state_file_yet_is_not_an_error)
{
	char	*text, *want;

	write_conf(true, true);
	ck_assert_int_eq(run_status(&text), 0);
	want = expand(
	    "configuration: @/agent.ini\n"
	    "state file:    @/state.json (none yet: nothing delivered)\n"
	    "metrics file:  @/disagent.prom (not written yet)\n"
	    "\n"
	    "[flow:app] stream s1: 0 files, 0 bytes behind\n"
	    "\n"
	    "[flow:web] stream id ID42 (disabled): 0 files, 0 bytes behind\n");
	ck_assert_str_eq(text, want);
	free(text);
	free(want);
}
END_TEST

START_TEST(corrupt_state_uses_the_bak_and_changes_nothing)
{
	char	*text, *want;
	int	 before;

	write_conf(false, true);
	write_state();
	/* A second save keeps the first generation as state.json.bak. */
	write_state();
	tu_write_str(state_path, "{\"version\": 1, \"crc32\": \"00000000\", "
	    "\"files\": [");
	before = count_files();
	ck_assert_int_eq(run_status(&text), 0);
	ck_assert_int_eq(count_files(), before);	/* nothing set aside */
	want = expand(
	    "configuration: @/agent.ini\n"
	    "state file:    @/state.json.bak (6 files)\n"
	    "metrics file:  none (metricsFile is not set)\n"
	    "\n"
	    "[flow:app] stream s1: 5 files, 70 bytes behind\n");
	ck_assert_msg(strncmp(text, want, strlen(want)) == 0, "got:\n%s",
	    text);
	free(text);
	free(want);
}
END_TEST

START_TEST(unreadable_state_exits_1_with_a_message)
{
	char	 bak[PATH_MAX * 2];
	char	*text, *err, *want;

	write_conf(false, true);
	snprintf(bak, sizeof(bak), "%s.bak", state_path);
	tu_write_str(state_path, "garbage");
	tu_write_str(bak, "{}");
	ck_assert_int_eq(run_status_err(&text, &err), 1);
	want = expand("disagent status: state file @/state.json and its "
	    ".bak are corrupt\n");
	ck_assert_ptr_nonnull(strstr(err, want));
	ck_assert_int_eq(count_files(), 3);	/* conf, state, .bak */
	free(want);
	free(text);
	free(err);
	/* A missing state file with a corrupt .bak is not "nothing yet". */
	unlink(state_path);
	ck_assert_int_eq(run_status_err(&text, &err), 1);
	free(text);
	free(err);
}
END_TEST

START_TEST(bad_configuration_exits_1_with_file_and_line)
{
	char	*text, *err, *want;

	tu_write_str(conf_path, "[agent]\nregion = cn-north-1\nbogus = 1\n");
	ck_assert_int_eq(run_status_err(&text, &err), 1);
	want = expand("disagent status: @/agent.ini:3: unknown key 'bogus' "
	    "in [agent]\n");
	ck_assert_str_eq(err, want);
	ck_assert_str_eq(text, "");
	free(want);
	free(text);
	free(err);
	unlink(conf_path);
	ck_assert_int_eq(run_status_err(&text, &err), 1);
	want = expand("disagent status: @/agent.ini: No such file or "
	    "directory\n");
	ck_assert_str_eq(err, want);
	free(want);
	free(text);
	free(err);
}
END_TEST

START_TEST(credentials_are_not_needed)
{
	char	*text;

	write_conf(false, false);
	ck_assert_int_eq(run_status(&text), 0);
	ck_assert_ptr_nonnull(strstr(text, "[flow:app] stream s1: 0 files"));
	ck_assert_ptr_null(getenv("DIS_AK"));
	ck_assert_ptr_null(getenv("DIS_SK"));
	free(text);
	/* Set ones are left alone. */
	setenv("DIS_AK", "mine", 1);
	ck_assert_int_eq(run_status(&text), 0);
	ck_assert_str_eq(getenv("DIS_AK"), "mine");
	ck_assert_ptr_null(getenv("DIS_SK"));
	unsetenv("DIS_AK");
	free(text);
}
END_TEST

static void
count_cb(const struct reg_entry *e, void *arg)
{
	struct buf	*b = arg;

	buf_printf(b, "%s/%" PRIu64 " ", e->flow, e->ino);
}

START_TEST(registry_each_visits_in_flow_dev_ino_order)
{
	struct registry	*reg;
	struct buf	 b;

	reg = registry_new(state_path);
	registry_set(reg, "b", 1, 5, 0, 0, "/x", 1);
	registry_set(reg, "a", 2, 1, 0, 0, "/y", 1);
	registry_set(reg, "a", 1, 9, 0, 0, "/z", 1);
	registry_set(reg, "a", 1, 3, 0, 0, "/w", 1);
	buf_init(&b);
	buf_reserve(&b, 0);
	ck_assert_uint_eq(registry_each(reg, count_cb, &b), 4);
	ck_assert_str_eq(b.data, "a/3 a/9 a/1 b/5 ");
	buf_cleanup(&b);
	registry_free(reg);
}
END_TEST

/*
 * A child named "disagent" (as the agent's comm is) that holds path open
 * until its pipe closes: what a running agent does with a file it still
 * reads.  With lock, it also holds the state file's lock with its pid in
 * it, as the agent running with that state file does (registry_lock);
 * status looks only at that agent's descriptors.  Its pid; *wfd is the
 * pipe's write end, to close to end it.
 */
static pid_t
hold_open(const char *path, bool lock, int *wfd)
{
	int	 p[2], q[2], fd, lfd, n;
	char	 c, lk[PATH_MAX * 2], pidbuf[24];
	pid_t	 pid;

	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(pipe(q), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(p[1]);
		close(q[0]);
		fd = open(path, O_RDONLY);
		(void)prctl(PR_SET_NAME, "disagent", 0, 0, 0);
		if (lock) {
			snprintf(lk, sizeof(lk), "%s.lock", state_path);
			n = snprintf(pidbuf, sizeof(pidbuf), "%ld\n",
			    (long)getpid());
			lfd = open(lk, O_RDWR | O_CREAT, 0644);
			if (lfd < 0 || flock(lfd, LOCK_EX) != 0 ||
			    pwrite(lfd, pidbuf, (size_t)n, 0) != n)
				_exit(1);
		}
		if (fd < 0 || write(q[1], "r", 1) != 1)
			_exit(1);
		(void)read(p[0], &c, 1);	/* until the parent closes */
		_exit(0);
	}
	close(p[0]);
	close(q[1]);
	ck_assert_int_eq(read(q[0], &c, 1), 1);	/* it holds the file */
	close(q[0]);
	*wfd = p[1];
	return pid;
}

/*
 * Files no longer at their path count in the bytes behind: one a running
 * agent still holds open (deleted while it reads) by its size now, one
 * nobody holds by the size the state file saved after its offset.
 */
static void
gone_files(bool lock)
{
	struct registry	*reg;
	struct reg_entry *e;
	struct stat	 h, fake;
	char		 p[PATH_MAX * 2], *text, *want;
	int		 wfd, status;
	pid_t		 pid;

	write_conf(false, true);
	make_log("held.log", 100, &h);
	reg = registry_new(state_path);
	set_entry(reg, "app", &h, "held.log", 40);
	fake = h;
	fake.st_ino = FAKE_INO + 1;
	set_entry(reg, "app", &fake, "gone.log", 7);
	e = registry_find(reg, "app", (uint64_t)fake.st_dev, FAKE_INO + 1);
	e->size = 107;
	ck_assert_int_eq(registry_save(reg, true), 0);
	registry_free(reg);
	snprintf(p, sizeof(p), "%s/held.log", dir);
	pid = hold_open(p, lock, &wfd);
	ck_assert_int_eq(unlink(p), 0);
	ck_assert_int_eq(run_status(&text), 0);
	close(wfd);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	want = expand(lock ?
	    "configuration: @/agent.ini\n"
	    "state file:    @/state.json (2 files)\n"
	    "metrics file:  none (metricsFile is not set)\n"
	    "\n"
	    "[flow:app] stream s1: 2 files, 160 bytes behind\n"
	    "          OFFSET           SIZE         BEHIND  PATH\n"
	    "               7            107            100  @/gone.log "
	    "(missing; size as last saved)\n"
	    "              40            100             60  @/held.log "
	    "(deleted; still open, being read)\n"
	    "\n"
	    "[flow:web] stream id ID42 (disabled): 0 files, 0 bytes behind\n" :
	    "configuration: @/agent.ini\n"
	    "state file:    @/state.json (2 files)\n"
	    "metrics file:  none (metricsFile is not set)\n"
	    "\n"
	    "[flow:app] stream s1: 2 files, 100 bytes behind\n"
	    "          OFFSET           SIZE         BEHIND  PATH\n"
	    "               7            107            100  @/gone.log "
	    "(missing; size as last saved)\n"
	    "              40              -              -  @/held.log "
	    "(missing)\n"
	    "\n"
	    "[flow:web] stream id ID42 (disabled): 0 files, 0 bytes behind\n");
	ck_assert_str_eq(text, want);
	free(text);
	free(want);
}

START_TEST(gone_files_still_count_their_bytes_behind)
{
	gone_files(true);
}
END_TEST

/*
 * A disagent process that does not hold this state file's lock (another
 * configuration's agent) holding the deleted file open: not ours, so the
 * file is missing, as with nobody holding it.
 */
START_TEST(held_by_another_agent_is_not_ours)
{
	gone_files(false);
}
END_TEST

static Suite *
status_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("status");
	tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, report_lists_flows_files_and_last_error);
	tcase_add_test(tc, no_state_file_yet_is_not_an_error);
	tcase_add_test(tc, gone_files_still_count_their_bytes_behind);
	tcase_add_test(tc, held_by_another_agent_is_not_ours);
	tcase_add_test(tc, corrupt_state_uses_the_bak_and_changes_nothing);
	tcase_add_test(tc, unreadable_state_exits_1_with_a_message);
	tcase_add_test(tc, bad_configuration_exits_1_with_file_and_line);
	tcase_add_test(tc, credentials_are_not_needed);
	tcase_add_test(tc, registry_each_visits_in_flow_dev_ino_order);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(status_suite());
}
