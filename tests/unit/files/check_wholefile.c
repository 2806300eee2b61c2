/*
 * Whole files (isFileAppendable = false): readiness and order (pure), the
 * checks and actions of a cleanup on real files, and the state machine on
 * a real loop with real files, a real registry and files.c -- the test
 * plays the flow: it reads what files_next_readable hands out, flushes the
 * last record as the flow does, and acknowledges ranges when it chooses.
 */
#include "config.h"

#include <sys/stat.h>

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "base/metrics.h"
#include "base/util.h"
#include "conf/conf.h"
#include "files/cleanup.h"
#include "files/files.h"
#include "tail/tailer.h"
#include "files/wholefile.h"
#include "records/framer.h"
#include "state/registry.h"
#include "testutil.h"

static char	 dir[256];

static void
setup(void)
{
	tu_tmpdir(dir, sizeof(dir), "check_wholefile");
}

static void
teardown(void)
{
	tu_rmtree(dir);
}

/* --- readiness and order ---------------------------------------------- */

START_TEST(look_waits_until_unchanged_for_the_quiet_time)
{
	/* Unchanged, but not long enough: wait (at any time before). */
	ck_assert_int_eq(wholefile_look(10, 7, 10, 7, 1000, 1000, 500, true),
	    WHOLEFILE_WAIT);
	ck_assert_int_eq(wholefile_look(10, 7, 10, 7, 1000, 1499, 500, true),
	    WHOLEFILE_WAIT);
	ck_assert_int_eq(wholefile_look(10, 7, 10, 7, 1000, 1500, 500, true),
	    WHOLEFILE_READY);
	/* A clock that went back is no reason to send early. */
	ck_assert_int_eq(wholefile_look(10, 7, 10, 7, 1000, 900, 500, true),
	    WHOLEFILE_WAIT);
	/* Any change of size or mtime restarts the wait, however late. */
	ck_assert_int_eq(wholefile_look(10, 7, 11, 7, 1000, 9000, 500, true),
	    WHOLEFILE_CHANGED);
	ck_assert_int_eq(wholefile_look(10, 7, 10, 8, 1000, 9000, 500, true),
	    WHOLEFILE_CHANGED);
	ck_assert_int_eq(wholefile_look(10, 7, 9, 7, 1000, 9000, 500, true),
	    WHOLEFILE_CHANGED);
}
END_TEST

START_TEST(look_leaves_empty_files_alone_under_is_ignore_empty_data)
{
	ck_assert_int_eq(wholefile_look(0, 7, 0, 7, 0, 500, 500, true),
	    WHOLEFILE_EMPTY);
	ck_assert_int_eq(wholefile_look(0, 7, 0, 7, 0, 500, 500, false),
	    WHOLEFILE_READY);
	ck_assert_int_eq(wholefile_look(0, 7, 0, 7, 0, 499, 500, true),
	    WHOLEFILE_WAIT);
}
END_TEST

START_TEST(order_is_oldest_mtime_first_then_name)
{
	ck_assert_int_lt(wholefile_order(1, "/z", 2, "/a"), 0);
	ck_assert_int_gt(wholefile_order(3, "/a", 2, "/z"), 0);
	ck_assert_int_lt(wholefile_order(2, "/a", 2, "/b"), 0);
	ck_assert_int_eq(wholefile_order(2, "/a", 2, "/a"), 0);
}
END_TEST

/* --- cleanup on real files --------------------------------------------- */

static void
file_at(char *out, size_t len, const char *name, const char *text)
{
	tu_path(out, len, dir, name);
	if (text != NULL)
		tu_write_str(out, text);
}

static bool
exists(const char *path)
{
	struct stat	 st;

	return lstat(path, &st) == 0;
}

/* Set path's mtime to that of id (a rewrite that hides its mtime). */
static void
set_mtime(const char *path, int64_t ns)
{
	struct timespec	 ts[2];

	ts[0].tv_sec = ts[1].tv_sec = (time_t)(ns / 1000000000);
	ts[0].tv_nsec = ts[1].tv_nsec = (long)(ns % 1000000000);
	ck_assert_int_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
}

START_TEST(check_tells_same_changed_other_and_gone)
{
	struct cleanup_id id;
	char		 p[PATH_MAX], q[PATH_MAX];
	int		 err;

	file_at(p, sizeof(p), "a.csv", "one\ntwo\nthree\n");
	ck_assert_int_eq(cleanup_identify(p, 4, &id), 0);
	ck_assert_uint_eq(id.size, 14);
	ck_assert_uint_eq(id.head_len, 4);
	ck_assert_uint_eq(id.tail_len, 4);
	ck_assert_int_eq(cleanup_check(p, &id, &err), CLEANUP_SAME);
	ck_assert_int_eq(err, 0);

	/* Grown. */
	tu_write_str(p, "one\ntwo\nthree\nfour\n");
	ck_assert_int_eq(cleanup_check(p, &id, &err), CLEANUP_CHANGED);
	/* Replaced under its name by another file. */
	file_at(q, sizeof(q), "b.csv", "one\ntwo\nthree\n");
	ck_assert_int_eq(rename(q, p), 0);
	ck_assert_int_eq(cleanup_check(p, &id, &err), CLEANUP_OTHER);
	/* Gone. */
	ck_assert_int_eq(unlink(p), 0);
	ck_assert_int_eq(cleanup_check(p, &id, &err), CLEANUP_GONE);
	ck_assert_int_eq(err, ENOENT);
}
END_TEST

START_TEST(check_sees_a_rewrite_of_the_same_size_and_mtime)
{
	struct cleanup_id id;
	char		 p[PATH_MAX];
	int		 fd, err;

	file_at(p, sizeof(p), "a.csv", "head-line\nmiddle\ntail-line\n");
	ck_assert_int_eq(cleanup_identify(p, 8, &id), 0);
	/* The last bytes rewritten in place, the mtime put back. */
	fd = open(p, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, "TAIL", 4, 17), 4);
	close(fd);
	set_mtime(p, id.mtime_ns);
	ck_assert_int_eq(cleanup_check(p, &id, &err), CLEANUP_CHANGED);
	/* And the first ones. */
	tu_write_str(p, "HEAD-line\nmiddle\ntail-line\n");
	set_mtime(p, id.mtime_ns);
	ck_assert_int_eq(cleanup_check(p, &id, &err), CLEANUP_CHANGED);
}
END_TEST

/* cleanup_apply on the file at p, which must be the one measured now. */
static int
apply_now(enum cleanup_policy pol, const char *p, const char *d,
    const char *suffix, char **to)
{
	struct cleanup_id id;

	memset(&id, 0, sizeof(id));
	if (lstat(p, &(struct stat){ 0 }) == 0)
		ck_assert_int_eq(cleanup_identify(p, 512, &id), 0);
	return cleanup_apply(pol, dir, p, &id, d, suffix, to);
}

START_TEST(apply_renames_moves_deletes_and_never_replaces)
{
	char	 p[PATH_MAX], q[PATH_MAX], d[PATH_MAX], *to, *text;

	file_at(p, sizeof(p), "a.csv", "a\n");
	ck_assert_int_eq(apply_now(CLEANUP_KEEP, p, "", "", &to), 0);
	ck_assert_ptr_null(to);
	ck_assert(exists(p));

	/* A rename never replaces what is in the way. */
	file_at(q, sizeof(q), "a.csv.DONE", "other\n");
	ck_assert_int_eq(apply_now(CLEANUP_RENAME, p, "", ".DONE", &to),
	    -EEXIST);
	ck_assert_ptr_null(to);
	ck_assert(exists(p));
	text = tu_slurp(q, NULL);
	ck_assert_str_eq(text, "other\n");
	free(text);
	ck_assert_int_eq(unlink(q), 0);
	ck_assert_int_eq(apply_now(CLEANUP_RENAME, p, "", ".DONE", &to), 0);
	ck_assert_str_eq(to, q);
	free(to);
	ck_assert(!exists(p));
	ck_assert(exists(q));

	/* Nor does a move. */
	file_at(d, sizeof(d), "done", NULL);
	ck_assert_int_eq(mkdir(d, 0755), 0);
	file_at(p, sizeof(p), "b.csv", "b\n");
	file_at(q, sizeof(q), "done/b.csv", "in the way\n");
	ck_assert_int_eq(apply_now(CLEANUP_MOVE, p, d, "", &to), -EEXIST);
	ck_assert(exists(p));
	ck_assert_int_eq(unlink(q), 0);
	ck_assert_int_eq(apply_now(CLEANUP_MOVE, p, d, "", &to), 0);
	ck_assert_str_eq(to, q);
	free(to);
	ck_assert(!exists(p));
	text = tu_slurp(q, NULL);
	ck_assert_str_eq(text, "b\n");
	free(text);

	ck_assert_int_eq(apply_now(CLEANUP_DELETE, q, "", "", &to), 0);
	ck_assert_ptr_null(to);
	ck_assert(!exists(q));
	ck_assert_int_eq(apply_now(CLEANUP_DELETE, q, "", "", &to),
	    -ENOENT);
}
END_TEST

START_TEST(remove_if_same_spares_a_file_that_changed)
{
	struct cleanup_id id;
	char		 p[PATH_MAX];

	file_at(p, sizeof(p), "app.log.1", "x\ny\n");
	ck_assert_int_eq(cleanup_identify(p, 512, &id), 0);
	tu_write_str(p, "x\ny\nz\n");
	ck_assert_int_eq(cleanup_remove_if_same(dir, p, &id), -ESTALE);
	ck_assert(exists(p));
	ck_assert_int_eq(cleanup_identify(p, 512, &id), 0);
	ck_assert_int_eq(cleanup_remove_if_same(dir, p, &id), 0);
	ck_assert(!exists(p));
}
END_TEST

/* --- cleanup that cannot be turned against the host --------------------- */

static char	 swap_with[PATH_MAX];	/* renamed over the path by the hook */
static int	 swaps;

static void
swap_hook(const char *path)
{
	swaps++;
	ck_assert_int_eq(rename(swap_with, path), 0);
}

/*
 * The file replaced by another between the check and the act (the hook
 * runs in that window): the newcomer is neither deleted, moved nor
 * renamed, whatever the policy.
 */
START_TEST(file_swapped_during_the_check_is_left_alone)
{
	static const enum cleanup_policy pols[] = {
		CLEANUP_DELETE, CLEANUP_MOVE, CLEANUP_RENAME,
	};
	struct cleanup_id id;
	char		 p[PATH_MAX], d[PATH_MAX], *to, *text;
	size_t		 i;

	file_at(d, sizeof(d), "done", NULL);
	ck_assert_int_eq(mkdir(d, 0755), 0);
	cleanup_test_hook = swap_hook;
	for (i = 0; i < ARRAY_SIZE(pols); i++) {
		file_at(p, sizeof(p), "a.csv", "delivered\n");
		ck_assert_int_eq(cleanup_identify(p, 512, &id), 0);
		file_at(swap_with, sizeof(swap_with), "other", "not sent\n");
		swaps = 0;
		ck_assert_int_eq(cleanup_apply(pols[i], dir, p, &id, d, ".DONE",
		    &to), -ESTALE);
		ck_assert_int_eq(swaps, 1);
		ck_assert_ptr_null(to);
		text = tu_slurp(p, NULL);
		ck_assert_str_eq(text, "not sent\n");
		free(text);
	}
	cleanup_test_hook = NULL;
	/* Without a swap the same call acts. */
	ck_assert_int_eq(cleanup_identify(p, 512, &id), 0);
	ck_assert_int_eq(cleanup_apply(CLEANUP_DELETE, dir, p, &id, d, "",
	    &to), 0);
	ck_assert(!exists(p));
}
END_TEST

/*
 * A symbolic link in the watched directory: deleting it removes the link
 * and never its target; a link to another file than the one delivered is
 * left alone.
 */
START_TEST(link_is_deleted_never_its_target)
{
	struct cleanup_id id;
	char		 t[PATH_MAX], l[PATH_MAX], o[PATH_MAX], w[PATH_MAX];
	char		*to;

	file_at(w, sizeof(w), "watched", NULL);
	ck_assert_int_eq(mkdir(w, 0755), 0);
	file_at(t, sizeof(t), "target.csv", "precious\n");
	file_at(o, sizeof(o), "other.csv", "other\n");
	file_at(l, sizeof(l), "watched/link.csv", NULL);
	ck_assert_int_eq(symlink(t, l), 0);
	/* What the flow sent through the link: the target's identity. */
	ck_assert_int_eq(cleanup_identify(l, 512, &id), 0);
	/* The link now points elsewhere: not the file sent. */
	ck_assert_int_eq(unlink(l), 0);
	ck_assert_int_eq(symlink(o, l), 0);
	ck_assert_int_eq(cleanup_apply(CLEANUP_DELETE, w, l, &id, "", "",
	    &to), -ESTALE);
	ck_assert(exists(l));
	ck_assert_int_eq(unlink(l), 0);
	ck_assert_int_eq(symlink(t, l), 0);
	ck_assert_int_eq(cleanup_apply(CLEANUP_DELETE, w, l, &id, "", "",
	    &to), 0);
	ck_assert(!exists(l));
	ck_assert(exists(t));
	ck_assert(exists(o));
}
END_TEST

/*
 * No symbolic link is followed out of place: a directory below the
 * pattern's base turned into a link to elsewhere (where a file of the
 * same identity lives, as after the real directory was renamed there),
 * and a fileMoveToDir that is a link.
 */
START_TEST(links_below_the_base_and_as_move_dir_are_not_followed)
{
	struct cleanup_id id;
	char		 base[PATH_MAX], sub[PATH_MAX], p[PATH_MAX];
	char		 away[PATH_MAX], moved[PATH_MAX], done[PATH_MAX];
	char		 real[PATH_MAX], *to;

	file_at(base, sizeof(base), "logs", NULL);
	ck_assert_int_eq(mkdir(base, 0755), 0);
	file_at(sub, sizeof(sub), "logs/sub", NULL);
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	file_at(p, sizeof(p), "logs/sub/a.csv", "a\n");
	ck_assert_int_eq(cleanup_identify(p, 512, &id), 0);
	/* logs/sub moves away and a link takes its place. */
	file_at(away, sizeof(away), "elsewhere", NULL);
	ck_assert_int_eq(rename(sub, away), 0);
	ck_assert_int_eq(symlink(away, sub), 0);
	ck_assert_int_eq(cleanup_apply(CLEANUP_DELETE, base, p, &id, "", "",
	    &to), -ELOOP);
	file_at(moved, sizeof(moved), "elsewhere/a.csv", NULL);
	ck_assert(exists(moved));
	/* The base itself may be a link: the operator configured it. */
	ck_assert_int_eq(cleanup_apply(CLEANUP_DELETE, sub, p, &id, "", "",
	    &to), 0);
	ck_assert(!exists(moved));

	/* fileMoveToDir a link: nothing moves through it. */
	file_at(p, sizeof(p), "logs/b.csv", "b\n");
	ck_assert_int_eq(cleanup_identify(p, 512, &id), 0);
	file_at(real, sizeof(real), "real-done", NULL);
	ck_assert_int_eq(mkdir(real, 0755), 0);
	file_at(done, sizeof(done), "done", NULL);
	ck_assert_int_eq(symlink(real, done), 0);
	ck_assert_int_eq(cleanup_apply(CLEANUP_MOVE, base, p, &id, done, "",
	    &to), -ELOOP);
	ck_assert(exists(p));
	ck_assert_int_eq(cleanup_apply(CLEANUP_MOVE, base, p, &id, real, "",
	    &to), 0);
	free(to);
	ck_assert(!exists(p));
}
END_TEST

/* --- the state machine -------------------------------------------------- */

#define MAX_PEND	64

/* A flow of one whole-file flow, played by the test. */
struct rig {
	uv_loop_t	 loop;
	char		 in[PATH_MAX];		/* dir/in: the pattern's */
	char		 ini[PATH_MAX];
	char		 state[PATH_MAX];
	struct conf	*conf;
	struct framer	*fr;
	struct registry	*reg;
	struct metrics_flow m;
	struct files	*fs;
	struct readbuf	 rb;
	struct tailer	*cur;
	struct {
		uint64_t	 tid, range;
	}		 pend[MAX_PEND];	/* read, not acknowledged */
	size_t		 npend;
	char		 last[64];		/* the last record read */
	size_t		 records;
	size_t		 readable;		/* callbacks */
};

static int
on_rec(void *arg, const char *data, size_t len, uint64_t start, uint64_t end)
{
	struct rig	*r = arg;

	(void)start;
	ck_assert_uint_lt(r->npend, MAX_PEND);
	r->pend[r->npend].tid = tailer_id(r->cur);
	r->pend[r->npend].range = tailer_push(r->cur, end);
	r->npend++;
	snprintf(r->last, sizeof(r->last), "%.*s", (int)len, data);
	r->records++;
	return 0;
}

static void
on_readable(void *arg)
{
	((struct rig *)arg)->readable++;
}

static bool
flush_one(struct tailer *t, void *arg)
{
	struct rig	*r = arg;
	struct tailer_quiet q = { tailer_readable(t), 0, 0 };

	/* As flow.c does for whole files: at the end, at once. */
	if (tailer_readable(t) && !tailer_stalled(t))
		return true;
	r->cur = t;
	(void)tailer_flush_quiet(t, r->fr, &r->rb, 1 << 20, 0, &q, on_rec, r);
	return true;
}

/* Read everything files hands out, like the pump. */
static void
pump(struct rig *r)
{
	struct tailer_read rd;
	struct tailer	*t;
	long		 n;

	while ((t = files_next_readable(r->fs, 8)) != NULL) {
		r->cur = t;
		n = tailer_read(t, r->fr, &r->rb, 65536, 1 << 20, on_rec, r,
		    &rd);
		files_read_done(r->fs, t, n, false, rd.committed);
	}
	files_each_open(r->fs, flush_one, r);
}

static void
ack_all(struct rig *r)
{
	size_t	 i;

	for (i = 0; i < r->npend; i++)
		files_ack(r->fs, r->pend[i].tid, r->pend[i].range);
	r->npend = 0;
}

static void
rig_open(struct rig *r)
{
	struct framer_opts fo = { .delim = '\n' };
	char		 err[512];

	ck_assert_int_eq(uv_loop_init(&r->loop), 0);
	ck_assert_int_eq(conf_load(r->ini, &r->conf, err, sizeof(err)), 0);
	ck_assert_int_eq(framer_new(&fo, &r->fr, err, sizeof(err)), 0);
	r->reg = registry_new(r->state);
	ck_assert_int_eq(registry_load(r->reg), 0);
	memset(&r->m, 0, sizeof(r->m));
	r->m.name = r->conf->flows[0].name;
	buf_init(&r->rb.b);
	r->fs = files_new(&r->loop, r->conf, &r->conf->flows[0], r->reg,
	    r->fr, &r->m, false, on_readable, r, err, sizeof(err));
	ck_assert_ptr_nonnull(r->fs);
	files_start(r->fs);
}

/* A rig over dir/in/ *.csv (the files must be written by the caller). */
static void
rig_new(struct rig *r, const char *extra)
{
	FILE	*fp;

	memset(r, 0, sizeof(*r));
	tu_path(r->in, sizeof(r->in), dir, "in");
	(void)mkdir(r->in, 0755);
	tu_path(r->ini, sizeof(r->ini), dir, "agent.ini");
	tu_path(r->state, sizeof(r->state), dir, "state.json");
	fp = fopen(r->ini, "w");
	ck_assert_ptr_nonnull(fp);
	fprintf(fp, "[agent]\nregion = cn-north-1\nprojectId = p1\n"
	    "ak = AK\nsk = SK\ncheckpointFile = %s\n\n[flow:w]\n"
	    "DISStream = s1\nfilePattern = %s/*.csv\nisFileAppendable = "
	    "false\nmaxFileCheckingMillis = 100\nrescanIntervalMillis = 100\n"
	    "watchMode = POLL\n%s", r->state, r->in, extra);
	fclose(fp);
	rig_open(r);
}

static void
rig_close(struct rig *r)
{
	files_free(r->fs);
	tu_loop_close(&r->loop);
	registry_free(r->reg);
	framer_free(r->fr);
	conf_free(r->conf);
	buf_cleanup(&r->rb.b);
}

/* Run the loop until pred(r), within 10 s. */
struct waiter {
	uv_timer_t	 t;
	struct rig	*r;
	bool		 (*pred)(struct rig *);
	bool		 done;
};

static void
on_poll(uv_timer_t *h)
{
	struct waiter	*w = container_of(h, struct waiter, t);

	if (w->pred(w->r))
		w->done = true;
}

static void
wait_until(struct rig *r, bool (*pred)(struct rig *), const char *what)
{
	struct waiter	 w = { .r = r, .pred = pred };

	uv_timer_init(&r->loop, &w.t);
	uv_timer_start(&w.t, on_poll, 0, 10);
	ck_assert_msg(tu_run_until(&r->loop, &w.done, 10000),
	    "timed out waiting for %s", what);
	uv_close((uv_handle_t *)&w.t, NULL);
	(void)uv_run(&r->loop, UV_RUN_NOWAIT);
}

/* A ready file is tracked (files also calls readable after each scan). */
static bool
was_readable(struct rig *r)
{
	files_gauges(r->fs, &r->m);
	return r->readable > 0 && r->m.files_tracked > 0;
}

static struct reg_entry *
entry_for(struct rig *r, const char *path)
{
	struct stat	 st;

	if (stat(path, &st) != 0)
		return NULL;
	return registry_find(r->reg, "w", (uint64_t)st.st_dev,
	    (uint64_t)st.st_ino);
}

static char	 a_csv[PATH_MAX], a_done[PATH_MAX];

static bool
a_complete(struct rig *r)
{
	struct reg_entry *e = entry_for(r, a_csv);

	return e != NULL && reg_done(e) != NULL;
}

static bool
a_renamed(struct rig *r)
{
	(void)r;
	return !exists(a_csv) && exists(a_done);
}

static bool
a_pending_again(struct rig *r)
{
	files_gauges(r->fs, &r->m);
	return r->m.whole_pending == 1;
}

static void
names(struct rig *r)
{
	tu_path(a_csv, sizeof(a_csv), r->in, "a.csv");
	tu_path(a_done, sizeof(a_done), r->in, "a.csv.COMPLETED");
}

START_TEST(machine_sends_when_quiet_and_cleans_up_after_the_save)
{
	struct rig	 r;
	struct reg_entry *e;

	rig_new(&r, "");
	names(&r);
	tu_write_str(a_csv, "1\n2\n3");		/* no final delimiter */
	wait_until(&r, was_readable, "a.csv to be ready");
	pump(&r);
	ck_assert_uint_eq(r.records, 3);
	ck_assert_str_eq(r.last, "3");
	e = entry_for(&r, a_csv);
	ck_assert_ptr_nonnull(e);
	ck_assert(reg_done(e) == NULL);		/* nothing acknowledged */

	ack_all(&r);
	wait_until(&r, a_complete, "a.csv marked complete");
	e = entry_for(&r, a_csv);
	ck_assert_uint_eq(e->offset, 5);
	/* Delivered, but the state file does not say so yet: it stays. */
	uv_run(&r.loop, UV_RUN_NOWAIT);
	ck_assert(exists(a_csv));
	ck_assert(!exists(a_done));
	files_gauges(r.fs, &r.m);
	ck_assert_uint_eq(r.m.whole_in_progress, 1);

	ck_assert_int_eq(registry_save(r.reg, false), 0);
	files_saved(r.fs);
	wait_until(&r, a_renamed, "a.csv renamed");
	ck_assert_uint_eq(registry_count(r.reg), 0);
	ck_assert_uint_eq(r.m.files_done, 1);
	ck_assert_uint_eq(r.m.files_cleaned, 1);
	ck_assert_uint_eq(r.records, 3);
	rig_close(&r);
}
END_TEST

START_TEST(machine_never_cleans_up_a_file_that_changed)
{
	struct rig	 r;
	struct reg_entry *e;

	rig_new(&r, "");
	names(&r);
	tu_write_str(a_csv, "1\n2");		/* its last record: "2" */
	wait_until(&r, was_readable, "a.csv to be ready");
	pump(&r);
	ack_all(&r);
	wait_until(&r, a_complete, "a.csv marked complete");
	/* Appended to after it was sent whole. */
	tu_write_str(a_csv, "1\n23\n");
	ck_assert_int_eq(registry_save(r.reg, false), 0);
	files_saved(r.fs);
	wait_until(&r, a_pending_again, "a.csv pending again");
	ck_assert(exists(a_csv));
	ck_assert(!exists(a_done));
	e = entry_for(&r, a_csv);
	ck_assert(reg_done(e) == NULL);
	ck_assert_uint_eq(e->offset, 3);
	/* Once quiet again, only what it gained is read, as a record of its
	 * own: the "2" before it went as the last record already. */
	wait_until(&r, was_readable, "a.csv ready again");
	pump(&r);
	ck_assert_uint_eq(r.records, 3);
	ck_assert_str_eq(r.last, "3");
	ack_all(&r);
	wait_until(&r, a_complete, "a.csv complete again");
	ck_assert_int_eq(registry_save(r.reg, false), 0);
	files_saved(r.fs);
	wait_until(&r, a_renamed, "a.csv renamed");
	rig_close(&r);
}
END_TEST

START_TEST(machine_cleans_up_a_durable_file_at_start_without_reading_it)
{
	struct rig	 r;

	rig_new(&r, "");
	names(&r);
	tu_write_str(a_csv, "1\n2\n");
	wait_until(&r, was_readable, "a.csv to be ready");
	pump(&r);
	ack_all(&r);
	wait_until(&r, a_complete, "a.csv marked complete");
	ck_assert_int_eq(registry_save(r.reg, false), 0);
	/* A crash before the cleanup: files_saved never came. */
	rig_close(&r);

	rig_open(&r);
	r.records = 0;
	wait_until(&r, a_renamed, "a.csv renamed at start");
	files_gauges(r.fs, &r.m);
	ck_assert_uint_eq(r.m.files_tracked, 0);	/* nothing was read */
	ck_assert_uint_eq(r.m.files_done, 0);
	ck_assert_uint_eq(r.records, 0);
	ck_assert_uint_eq(r.m.files_cleaned, 1);
	ck_assert_uint_eq(registry_count(r.reg), 0);
	rig_close(&r);
}
END_TEST

static bool
failed_once(struct rig *r)
{
	return r->m.cleanup_failures > 0;
}

static bool
failed_twice(struct rig *r)
{
	return r->m.cleanup_failures > 1;
}

START_TEST(machine_retries_a_failed_cleanup_at_every_rescan)
{
	struct rig	 r;
	uint64_t	 failures;

	rig_new(&r, "");
	names(&r);
	tu_write_str(a_csv, "1\n");
	/* What a rename must not replace. */
	tu_write_str(a_done, "in the way\n");
	wait_until(&r, was_readable, "a.csv to be ready");
	pump(&r);
	ack_all(&r);
	wait_until(&r, a_complete, "a.csv marked complete");
	ck_assert_int_eq(registry_save(r.reg, false), 0);
	files_saved(r.fs);
	wait_until(&r, failed_once, "the cleanup to fail");
	failures = r.m.cleanup_failures;
	ck_assert_str_eq(r.m.last_error_code, "CLEANUP");
	ck_assert_ptr_nonnull(strstr(r.m.last_error_message,
	    "File exists: cannot rename "));
	files_gauges(r.fs, &r.m);
	ck_assert_uint_eq(r.m.whole_cleanup_failing, 1);
	ck_assert(exists(a_csv));
	/* Tried again at a later rescan, failing again while in the way. */
	wait_until(&r, failed_twice, "the cleanup to be retried");
	ck_assert(exists(a_csv));
	failures = r.m.cleanup_failures;
	ck_assert_int_eq(unlink(a_done), 0);
	wait_until(&r, a_renamed, "a.csv renamed at a later rescan");
	ck_assert_uint_ge(r.m.cleanup_failures, failures);
	ck_assert_uint_eq(r.records, 1);	/* nothing read again */
	rig_close(&r);
}
END_TEST

static Suite *
wholefile_suite(void)
{
	Suite	*s = suite_create("wholefile");
	TCase	*tc;

	tc = tcase_create("readiness");
	tcase_add_test(tc, look_waits_until_unchanged_for_the_quiet_time);
	tcase_add_test(tc,
	    look_leaves_empty_files_alone_under_is_ignore_empty_data);
	tcase_add_test(tc, order_is_oldest_mtime_first_then_name);
	suite_add_tcase(s, tc);

	tc = tcase_create("cleanup");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, check_tells_same_changed_other_and_gone);
	tcase_add_test(tc, check_sees_a_rewrite_of_the_same_size_and_mtime);
	tcase_add_test(tc, apply_renames_moves_deletes_and_never_replaces);
	tcase_add_test(tc, remove_if_same_spares_a_file_that_changed);
	tcase_add_test(tc, file_swapped_during_the_check_is_left_alone);
	tcase_add_test(tc, link_is_deleted_never_its_target);
	tcase_add_test(tc,
	    links_below_the_base_and_as_move_dir_are_not_followed);
	suite_add_tcase(s, tc);

	tc = tcase_create("machine");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc,
	    machine_sends_when_quiet_and_cleans_up_after_the_save);
	tcase_add_test(tc, machine_never_cleans_up_a_file_that_changed);
	tcase_add_test(tc,
	    machine_cleans_up_a_durable_file_at_start_without_reading_it);
	tcase_add_test(tc, machine_retries_a_failed_cleanup_at_every_rescan);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(wholefile_suite());
}
