/*
 * Helpers shared by the Check suites (testutil.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "base/util.h"

int
tu_run(Suite *s)
{
	SRunner	*sr;
	int	 failed;

	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed > 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

void
tu_tmpdir(char *out, size_t len, const char *name)
{
	const char	*tmp = getenv("TMPDIR");

	snprintf(out, len, "%s/%s.XXXXXX", tmp != NULL && tmp[0] != '\0' ?
	    tmp : "/tmp", name);
	ck_assert_msg(mkdtemp(out) != NULL, "mkdtemp %s: %s", out,
	    strerror(errno));
}

static int
chmod_dir(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)f;
	if (type == FTW_D || type == FTW_DNR)
		(void)chmod(path, (st->st_mode & 07777) | 0700);
	return 0;
}

static int
remove_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)st;
	(void)f;
	if (type == FTW_DP)
		return rmdir(path) == 0 ? 0 : errno;
	return unlink(path) == 0 ? 0 : errno;
}

void
tu_rmtree(const char *dir)
{
	int	 rc;

	/* Pre-order pass first: a directory a test made unreadable must be
	 * opened again before its entries can be removed. */
	(void)chmod(dir, 0700);
	(void)nftw(dir, chmod_dir, 16, FTW_PHYS);
	rc = nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	ck_assert_msg(rc == 0, "removing %s: %s", dir, strerror(rc));
}

void
tu_path(char *out, size_t len, const char *dir, const char *name)
{
	int	 n = snprintf(out, len, "%s/%s", dir, name);

	ck_assert_msg(n > 0 && (size_t)n < len, "path too long: %s/%s", dir,
	    name);
}

char *
tu_slurp(const char *path, size_t *len)
{
	FILE	*fp;
	char	*p;
	long	 n;

	fp = fopen(path, "rb");
	ck_assert_msg(fp != NULL, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(fseek(fp, 0, SEEK_END), 0);
	n = ftell(fp);
	ck_assert_int_ge(n, 0);
	rewind(fp);
	p = xmalloc((size_t)n + 1);
	ck_assert_uint_eq(fread(p, 1, (size_t)n, fp), (size_t)n);
	p[n] = '\0';
	fclose(fp);
	if (len != NULL)
		*len = (size_t)n;
	return p;
}

char *
tu_data(const char *name, size_t *len)
{
	char		 p[PATH_MAX];
	const char	*top = getenv("top_srcdir");
	const char	*slash;

	if (top != NULL)
		snprintf(p, sizeof(p), "%s/tests/data/%s", top, name);
	else {
		slash = strrchr(__FILE__, '/');
		snprintf(p, sizeof(p), "%.*s/data/%s",
		    slash == NULL ? 1 : (int)(slash - __FILE__),
		    slash == NULL ? "." : __FILE__, name);
	}
	return tu_slurp(p, len);
}

void
tu_write(const char *path, const void *data, size_t n)
{
	int	 fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(write_all(fd, data, n), 0);
	ck_assert_int_eq(close(fd), 0);
}

void
tu_write_str(const char *path, const char *text)
{
	tu_write(path, text, strlen(text));
}

struct watchdog {
	uv_timer_t	 timer;
	uv_prepare_t	 prepare;
	const bool	*done;
	bool		 fired;
	int		 open;		/* handles not yet closed */
};

static void
on_watchdog(uv_timer_t *t)
{
	struct watchdog	*w = container_of(t, struct watchdog, timer);

	w->fired = true;
	uv_stop(t->loop);
}

/*
 * Just before the loop would block: once done, stop, so that the poll
 * does not wait for the next timer.  (libuv before 1.45 runs due timers
 * at the start of an iteration and then polls: a condition a timer met
 * there was otherwise followed by a wait for the next timer, and by what
 * that timer did.)
 */
static void
on_prepare(uv_prepare_t *p)
{
	struct watchdog	*w = container_of(p, struct watchdog, prepare);

	if (*w->done)
		uv_stop(p->loop);
}

static void
on_watchdog_closed(uv_handle_t *h)
{
	struct watchdog	*w = h->data;

	if (--w->open == 0)
		free(w);
}

bool
tu_run_until(uv_loop_t *loop, const bool *done, unsigned ms)
{
	struct watchdog	*w = xcalloc(1, sizeof(*w));

	w->done = done;
	uv_timer_init(loop, &w->timer);
	uv_prepare_init(loop, &w->prepare);
	uv_timer_start(&w->timer, on_watchdog, ms, 0);
	uv_prepare_start(&w->prepare, on_prepare);
	while (!*done && !w->fired)
		if (uv_run(loop, UV_RUN_ONCE) == 0 && !*done)
			break;
	/* Closed by the caller's next run of the loop (or tu_loop_close):
	 * nothing else runs before the caller looks at what is done. */
	w->timer.data = w;
	w->prepare.data = w;
	w->open = 2;
	uv_close((uv_handle_t *)&w->timer, on_watchdog_closed);
	uv_close((uv_handle_t *)&w->prepare, on_watchdog_closed);
	return *done;
}

static void
close_left(uv_handle_t *h, void *arg)
{
	int	*n = arg;

	if (uv_is_closing(h))
		return;
	fprintf(stderr, "tu_loop_close: a %s handle was left open\n",
	    uv_handle_type_name(uv_handle_get_type(h)));
	(*n)++;
	uv_close(h, NULL);
}

void
tu_loop_close(uv_loop_t *loop)
{
	int	 left = 0;

	(void)uv_run(loop, UV_RUN_NOWAIT);
	uv_walk(loop, close_left, &left);
	while (uv_run(loop, UV_RUN_NOWAIT) != 0)
		;
	ck_assert_int_eq(uv_loop_close(loop), 0);
	ck_assert_msg(left == 0, "%d handle(s) left open", left);
}

char *
tu_put_reply(const char *codes, int part, int seq0)
{
	struct buf	 b;
	char		 tok[32];
	const char	*p = codes;
	int		 n, failed = 0, i = 0;

	buf_init(&b);
	buf_addstr(&b, "{\"records\":[");
	while (sscanf(p, "%31s%n", tok, &n) == 1) {
		p += n;
		if (strcmp(tok, "-") == 0)
			buf_printf(&b, "%s{\"partition_id\":"
			    "\"shardId-%010d\",\"sequence_number\":"
			    "\"%d\"}", i ? "," : "", part, seq0 + i);
		else {
			buf_printf(&b, "%s{\"error_code\":\"%s\","
			    "\"error_message\":\"failed with %s\"}",
			    i ? "," : "", tok, tok);
			failed++;
		}
		i++;
	}
	buf_printf(&b, "],\"failed_record_count\":%d}", failed);
	return b.data;
}
