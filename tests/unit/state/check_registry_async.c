/*
 * The registry's saves on the thread pool (registry_save_start): the
 * state goes to memory at once and to the disk on a worker, so the loop
 * runs while the worker waits in fsync; a change made meanwhile is not in
 * that save and leaves the registry dirty; a synchronous save and
 * registry_free wait for the save under way; a save that fails says so
 * and leaves the registry dirty.
 *
 * fsync is wrapped (-Wl,--wrap=fsync): while the gate is closed, the
 * worker's fsync waits for the case to open it, so "the loop ran while
 * the save waited for the disk" is a fact the case observes, not a race.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <uv.h>

#include "base/log.h"
#include "base/util.h"
#include "state/registry.h"
#include "testutil.h"

#define WATCHDOG_MS	10000

int	__real_fsync(int);
int	__wrap_fsync(int);

static struct {
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;
	bool		 closed;	/* fsync waits while closed */
	unsigned	 waiting;	/* fsyncs waiting at the gate */
} gate = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, 0 };

int
__wrap_fsync(int fd)
{
	pthread_mutex_lock(&gate.mu);
	gate.waiting++;
	pthread_cond_broadcast(&gate.cv);
	while (gate.closed)
		pthread_cond_wait(&gate.cv, &gate.mu);
	gate.waiting--;
	pthread_mutex_unlock(&gate.mu);
	return __real_fsync(fd);
}

static void
gate_set(bool closed)
{
	pthread_mutex_lock(&gate.mu);
	gate.closed = closed;
	pthread_cond_broadcast(&gate.cv);
	pthread_mutex_unlock(&gate.mu);
}

static unsigned
gate_waiting(void)
{
	unsigned	 n;

	pthread_mutex_lock(&gate.mu);
	n = gate.waiting;
	pthread_mutex_unlock(&gate.mu);
	return n;
}

static char	 dir[256];
static char	 spath[PATH_MAX];
static uv_loop_t loop;

static struct {
	int		 calls;
	int		 rc;
	bool		 done;
} res;

static void
on_done(int rc, void *arg)
{
	(void)arg;
	res.calls++;
	res.rc = rc;
	res.done = true;
}

static void
setup(void)
{
	tu_tmpdir(dir, sizeof(dir), "check_registry_async");
	tu_path(spath, sizeof(spath), dir, "state.json");
	ck_assert_int_eq(uv_loop_init(&loop), 0);
	memset(&res, 0, sizeof(res));
	gate_set(false);
}

static void
teardown(void)
{
	gate_set(false);
	tu_rmtree(dir);
}

static void
set_offset(struct registry *reg, uint64_t ino, uint64_t off)
{
	char	 p[64];

	snprintf(p, sizeof(p), "/var/log/app/%ju.log", (uintmax_t)ino);
	(void)registry_set(reg, "app", 2049, ino, 0x1234u, 512, p, off);
}

/* The offset of ino in the state file on disk. */
static uint64_t
offset_on_disk(uint64_t ino)
{
	struct registry	*reg = registry_new(spath);
	struct reg_entry *e;
	uint64_t	 off;

	ck_assert_int_eq(registry_load(reg), 0);
	e = registry_find(reg, "app", 2049, ino);
	ck_assert_ptr_nonnull(e);
	off = e->offset;
	registry_free(reg);
	return off;
}

/* A timer the loop fires while a save waits for the disk. */
static unsigned	 ticks;
static bool	 ticked;

static void
on_tick(uv_timer_t *t)
{
	(void)t;
	if (gate_waiting() > 0 && ++ticks >= 3)
		ticked = true;
}

START_TEST(a_background_save_leaves_the_loop_running)
{
	struct registry	*reg = registry_new(spath);
	uv_timer_t	 tick;
	uint64_t	 before, during;

	set_offset(reg, 1, 100);
	ck_assert_int_eq(registry_save(reg, false), 0);	/* a generation */
	set_offset(reg, 1, 200);
	before = registry_changes(reg);
	gate_set(true);
	ck_assert_int_eq(registry_save_start(reg, &loop, on_done, NULL), 0);
	ck_assert(registry_saving(reg));
	ck_assert(!registry_dirty(reg));
	/* The loop turns while the worker waits in fsync. */
	uv_timer_init(&loop, &tick);
	uv_timer_start(&tick, on_tick, 5, 5);
	ck_assert_msg(tu_run_until(&loop, &ticked, WATCHDOG_MS),
	    "the loop did not run while the save waited for the disk");
	ck_assert(!res.done);
	ck_assert_uint_eq(offset_on_disk(1), 100);
	/* A change now is not in this save. */
	set_offset(reg, 1, 300);
	during = registry_changes(reg);
	ck_assert(registry_dirty(reg));
	gate_set(false);
	ck_assert(tu_run_until(&loop, &res.done, WATCHDOG_MS));
	ck_assert_int_eq(res.calls, 1);
	ck_assert_int_eq(res.rc, 0);
	ck_assert(!registry_saving(reg));
	ck_assert_uint_eq(offset_on_disk(1), 200);
	ck_assert(registry_change_saved(reg, before));
	ck_assert(!registry_change_saved(reg, during));
	ck_assert(registry_dirty(reg));
	/* The generation before is kept as the .bak, as a synchronous
	 * save keeps it. */
	{
		char	 bak[PATH_MAX + 8];
		struct registry *b;

		snprintf(bak, sizeof(bak), "%s.bak", spath);
		b = registry_new(bak);
		ck_assert_int_eq(registry_load(b), 0);
		ck_assert_uint_eq(registry_find(b, "app", 2049, 1)->offset,
		    100);
		registry_free(b);
	}
	ck_assert_int_eq(registry_save(reg, false), 0);
	ck_assert_uint_eq(offset_on_disk(1), 300);
	ck_assert(registry_change_saved(reg, during));
	uv_close((uv_handle_t *)&tick, NULL);
	registry_free(reg);
	tu_loop_close(&loop);
}
END_TEST

/* Opens the gate after a while, from another thread. */
static void *
opener(void *arg)
{
	struct timespec	 ts = { 0, 50 * 1000 * 1000 };

	(void)arg;
	while (gate_waiting() == 0)
		nanosleep(&ts, NULL);
	nanosleep(&ts, NULL);
	gate_set(false);
	return NULL;
}

START_TEST(a_synchronous_save_waits_for_the_one_under_way)
{
	struct registry	*reg = registry_new(spath);
	pthread_t	 th;

	set_offset(reg, 1, 100);
	set_offset(reg, 2, 100);
	gate_set(true);
	ck_assert_int_eq(registry_save_start(reg, &loop, on_done, NULL), 0);
	set_offset(reg, 2, 500);
	ck_assert_int_eq(pthread_create(&th, NULL, opener, NULL), 0);
	/* Waits for the worker (released by opener), then writes its own:
	 * the newest state is the one on disk. */
	ck_assert_int_eq(registry_save(reg, false), 0);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	ck_assert(!registry_saving(reg));
	ck_assert(!registry_dirty(reg));
	ck_assert_uint_eq(offset_on_disk(2), 500);
	/* The background save's callback still comes, from the loop. */
	ck_assert(!res.done);
	ck_assert(tu_run_until(&loop, &res.done, WATCHDOG_MS));
	ck_assert_int_eq(res.rc, 0);
	ck_assert_uint_eq(offset_on_disk(2), 500);
	registry_free(reg);
	tu_loop_close(&loop);
}
END_TEST

START_TEST(a_failed_background_save_leaves_the_registry_dirty)
{
	char		 bad[PATH_MAX + 32];
	struct registry	*reg;

	snprintf(bad, sizeof(bad), "%s/no-such-dir/state.json", dir);
	reg = registry_new(bad);
	set_offset(reg, 1, 100);
	ck_assert_int_eq(registry_save_start(reg, &loop, on_done, NULL), 0);
	ck_assert(tu_run_until(&loop, &res.done, WATCHDOG_MS));
	ck_assert_int_eq(res.rc, -ENOENT);
	ck_assert(registry_dirty(reg));
	ck_assert(!registry_saving(reg));
	registry_free(reg);
	tu_loop_close(&loop);
}
END_TEST

/* A state the write to memory refuses (a line the reader would refuse)
 * starts nothing, says why, and stays dirty; the file stays as it was. */
START_TEST(a_save_that_cannot_be_written_starts_nothing)
{
	struct registry	*reg = registry_new(spath);
	char		*path;

	set_offset(reg, 1, 100);
	ck_assert_int_eq(registry_save(reg, false), 0);
	path = xmalloc(2 * 1024 * 1024);
	memset(path, 'a', 2 * 1024 * 1024 - 1);
	path[2 * 1024 * 1024 - 1] = '\0';
	(void)registry_set(reg, "app", 2049, 7, 0, 0, path, 1);
	free(path);
	set_offset(reg, 1, 200);
	ck_assert_int_eq(registry_save_start(reg, &loop, on_done, NULL),
	    -EMSGSIZE);
	ck_assert(!registry_saving(reg));
	ck_assert(registry_dirty(reg));
	ck_assert_uint_eq(offset_on_disk(1), 100);
	registry_free(reg);
	tu_loop_close(&loop);
	ck_assert_int_eq(res.calls, 0);
}
END_TEST

START_TEST(nothing_dirty_starts_nothing)
{
	struct registry	*reg = registry_new(spath);

	set_offset(reg, 1, 100);
	ck_assert_int_eq(registry_save(reg, false), 0);
	ck_assert_int_eq(registry_save_start(reg, &loop, on_done, NULL), 1);
	ck_assert(!registry_saving(reg));
	registry_free(reg);
	tu_loop_close(&loop);
	ck_assert_int_eq(res.calls, 0);
}
END_TEST

START_TEST(registry_free_waits_and_drops_the_callback)
{
	struct registry	*reg = registry_new(spath);
	pthread_t	 th;

	set_offset(reg, 1, 700);
	gate_set(true);
	ck_assert_int_eq(registry_save_start(reg, &loop, on_done, NULL), 0);
	ck_assert_int_eq(pthread_create(&th, NULL, opener, NULL), 0);
	registry_free(reg);		/* waits for the worker */
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	ck_assert_uint_eq(offset_on_disk(1), 700);
	/* The loop still ends the request, without the owner's callback. */
	ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
	ck_assert_int_eq(res.calls, 0);
	tu_loop_close(&loop);
}
END_TEST

static Suite *
registry_async_suite(void)
{
	Suite	*s = suite_create("registry_async");
	TCase	*tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, a_background_save_leaves_the_loop_running);
	tcase_add_test(tc, a_synchronous_save_waits_for_the_one_under_way);
	tcase_add_test(tc, a_failed_background_save_leaves_the_registry_dirty);
	tcase_add_test(tc, a_save_that_cannot_be_written_starts_nothing);
	tcase_add_test(tc, nothing_dirty_starts_nothing);
	tcase_add_test(tc, registry_free_waits_and_drops_the_callback);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(registry_async_suite());
}
