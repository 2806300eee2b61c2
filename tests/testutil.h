/*
 * What every Check suite needs: the runner, a temp directory per test, and
 * whole-file reads and writes that fail the test instead of returning
 * errors.  Linked into every unit suite, tests/unit/LAYER/check_*
 * (tests/testutil.c).
 */
#ifndef DISAGENT_TESTUTIL_H
#define DISAGENT_TESTUTIL_H

#include <stddef.h>

#include <check.h>
#include <uv.h>

/*
 * Run every test of s (CK_NORMAL) and return the exit status for main:
 * EXIT_SUCCESS when none failed.  Frees s.
 */
int	 tu_run(Suite *s);

/*
 * A new directory $TMPDIR/NAME.XXXXXX (TMPDIR defaults to /tmp) into
 * out[len]; fails the test when it cannot be made.
 */
void	 tu_tmpdir(char *out, size_t len, const char *name);

/*
 * Remove dir and everything below it (the directory is made writable
 * first, for tests that take its permissions away); fails the test when
 * anything stays.
 */
void	 tu_rmtree(const char *dir);

/* dir/name into out[len]. */
void	 tu_path(char *out, size_t len, const char *dir, const char *name);

/*
 * The whole file at path, NUL-terminated; its length into *len when len is
 * not NULL.  New (free it); fails the test when it cannot be read.
 */
char	*tu_slurp(const char *path, size_t *len);

/*
 * The fixture tests/data/NAME as tu_slurp reads it, found under
 * $top_srcdir (make check) or next to the test sources.
 */
char	*tu_data(const char *name, size_t *len);

/* Replace path with n bytes of data (mode 0644); fails the test on error. */
void	 tu_write(const char *path, const void *data, size_t n);
/* The same for a string. */
void	 tu_write_str(const char *path, const char *text);

/*
 * Run loop until *done is true or ms milliseconds have passed (a watchdog,
 * so a hang fails instead of blocking make check).  Returns whether *done
 * became true.  It returns in the loop iteration that made *done true,
 * without waiting for the next event: only timers due in that iteration
 * may still run.  Its own handles are closed by the next run of the loop.
 */
bool	 tu_run_until(uv_loop_t *loop, const bool *done, unsigned ms);

/*
 * Close every handle still open on loop, run it until they are closed, and
 * assert uv_loop_close() returns 0.  A test whose code leaked a handle
 * fails here, since the handles it left are reported by type.
 */
void	 tu_loop_close(uv_loop_t *loop);

/*
 * A 200 PutRecords reply: one word per record of the request, "-" for
 * acknowledged (on partition part, sequence number seq0 + its position)
 * or its error code ("- DIS.4303 -").  New; free() it.
 */
char	*tu_put_reply(const char *codes, int part, int seq0);

#endif
