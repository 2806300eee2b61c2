/*
 * The agent's HTTP server (agent/httpd.h) on a real loop and real sockets:
 * a loop that turns answers every page its callback makes, with the right
 * status and content type, 404 and 405 besides; a loop that does not turn
 * (the test never runs it) is answered 503 by the server's own threads
 * once healthStallSeconds pass -- the reason the server does not run in
 * the loop -- and closing answers a request still waiting.  Every run
 * ends with uv_loop_close() == 0.
 */
#include "config.h"

#include <sys/socket.h>

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <uv.h>

#include "agent/httpd.h"
#include "base/util.h"
#include "testutil.h"

static char	 addr[64];
static int	 port;

/* A port nothing listens on now. */
static void
pick_port(void)
{
	struct sockaddr_in	 in;
	socklen_t		 len = sizeof(in);
	int			 fd;

	fd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&in, 0, sizeof(in));
	in.sin_family = AF_INET;
	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&in, sizeof(in)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&in, &len), 0);
	port = ntohs(in.sin_port);
	close(fd);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
}

/* "METHOD PATH" over HTTP/1.0: the whole reply, new. */
static char *
request(const char *method, const char *path)
{
	struct sockaddr_in	 in;
	struct buf		 b;
	char			 chunk[4096];
	ssize_t			 n;
	int			 fd;

	fd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&in, 0, sizeof(in));
	in.sin_family = AF_INET;
	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	in.sin_port = htons((uint16_t)port);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&in, sizeof(in)), 0);
	n = snprintf(chunk, sizeof(chunk), "%s %s HTTP/1.0\r\n\r\n", method,
	    path);
	/* A server that closes at once (over its limit) may reset it. */
	(void)send(fd, chunk, (size_t)n, MSG_NOSIGNAL);
	buf_init(&b);
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		buf_add(&b, chunk, (size_t)n);
	close(fd);
	return b.data != NULL ? b.data : xstrdup("");
}

static int
status_of(const char *reply)
{
	int	 st = 0;

	(void)sscanf(reply, "HTTP/1.%*d %d", &st);
	return st;
}

static int	 pages_made;

static int
page(enum httpd_page p, struct buf *out, void *arg)
{
	(void)arg;
	pages_made++;
	switch (p) {
	case HTTPD_HEALTH:
		buf_addstr(out, "ok\n");
		return 200;
	case HTTPD_METRICS:
		buf_addstr(out, "disagent_up 1\n");
		return 200;
	case HTTPD_STATUS:
		buf_addstr(out, "{\"flows\": []}\n");
		return 200;
	}
	return 500;
}

/* --- a loop that turns -------------------------------------------------- */

struct client {
	uv_async_t	 done_async;
	bool		 done;
	char		*reply[6];
};

static void
on_done(uv_async_t *a)
{
	struct client	*c = container_of(a, struct client, done_async);

	c->done = true;
}

static void *
client_main(void *arg)
{
	struct client	*c = arg;

	c->reply[0] = request("GET", "/healthz");
	c->reply[1] = request("GET", "/metrics");
	c->reply[2] = request("GET", "/status");
	c->reply[3] = request("GET", "/nope");
	c->reply[4] = request("POST", "/healthz");
	c->reply[5] = request("HEAD", "/healthz");
	uv_async_send(&c->done_async);
	return NULL;
}

START_TEST(turning_loop_answers_every_page)
{
	uv_loop_t	 loop;
	struct httpd	*h;
	struct client	 c;
	pthread_t	 th;
	int		 err = 0, i;

	ck_assert_int_eq(uv_loop_init(&loop), 0);
	memset(&c, 0, sizeof(c));
	pages_made = 0;
	uv_async_init(&loop, &c.done_async, on_done);
	h = httpd_new(&loop, addr, 5, page, NULL, &err);
	ck_assert_msg(h != NULL, "httpd_new: %d", err);
	ck_assert_int_eq(pthread_create(&th, NULL, client_main, &c), 0);
	ck_assert(tu_run_until(&loop, &c.done, 20000));
	pthread_join(th, NULL);
	ck_assert_int_eq(status_of(c.reply[0]), 200);
	ck_assert_ptr_nonnull(strstr(c.reply[0], "\r\n\r\nok\n"));
	ck_assert_int_eq(status_of(c.reply[1]), 200);
	ck_assert_ptr_nonnull(strstr(c.reply[1],
	    "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
	ck_assert_ptr_nonnull(strstr(c.reply[1], "disagent_up 1\n"));
	ck_assert_int_eq(status_of(c.reply[2]), 200);
	ck_assert_ptr_nonnull(strstr(c.reply[2], "application/json"));
	ck_assert_int_eq(status_of(c.reply[3]), 404);
	ck_assert_int_eq(status_of(c.reply[4]), 405);
	ck_assert_ptr_nonnull(strstr(c.reply[4], "Allow: GET, HEAD\r\n"));
	ck_assert_int_eq(status_of(c.reply[5]), 200);
	ck_assert_ptr_null(strstr(c.reply[5], "\r\n\r\nok"));
	/* The loop made healthz twice (GET, HEAD), metrics, status. */
	ck_assert_int_eq(pages_made, 4);
	for (i = 0; i < 6; i++)
		free(c.reply[i]);
	httpd_close(h);
	uv_close((uv_handle_t *)&c.done_async, NULL);
	tu_loop_close(&loop);
}
END_TEST

/* --- a loop that does not turn ------------------------------------------ */

static uint64_t
ms_now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

START_TEST(stalled_loop_is_503_after_the_stall)
{
	uv_loop_t	 loop;
	struct httpd	*h;
	uint64_t	 t0;
	char		*r;
	int		 err = 0;

	ck_assert_int_eq(uv_loop_init(&loop), 0);
	pages_made = 0;
	h = httpd_new(&loop, addr, 1, page, NULL, &err);
	ck_assert_msg(h != NULL, "httpd_new: %d", err);
	/* The loop is never run: it is stalled. */
	t0 = ms_now();
	r = request("GET", "/healthz");
	ck_assert_int_eq(status_of(r), 503);
	ck_assert_ptr_nonnull(strstr(r, "event loop has not answered for 1 s"));
	ck_assert_uint_ge(ms_now() - t0, 900);
	free(r);
	/* Still stalled: the next request is answered at once. */
	t0 = ms_now();
	r = request("GET", "/metrics");
	ck_assert_int_eq(status_of(r), 503);
	ck_assert_uint_lt(ms_now() - t0, 900);
	free(r);
	ck_assert_int_eq(pages_made, 0);
	httpd_close(h);
	tu_loop_close(&loop);
}
END_TEST

/* --- closing ------------------------------------------------------------ */

static char	*waiting_reply;

static void *
waiting_client(void *arg)
{
	(void)arg;
	waiting_reply = request("GET", "/healthz");
	return NULL;
}

START_TEST(close_answers_a_waiting_request)
{
	uv_loop_t	 loop;
	struct httpd	*h;
	pthread_t	 th;
	uint64_t	 t0;
	int		 err = 0;

	ck_assert_int_eq(uv_loop_init(&loop), 0);
	h = httpd_new(&loop, addr, 3600, page, NULL, &err);
	ck_assert_msg(h != NULL, "httpd_new: %d", err);
	waiting_reply = NULL;
	ck_assert_int_eq(pthread_create(&th, NULL, waiting_client, NULL), 0);
	/* The loop never runs: the request stays queued until the close. */
	t0 = ms_now();
	while (httpd_queued(h) == 0) {
		ck_assert_msg(ms_now() - t0 < 30000, "the request never came");
		usleep(10 * 1000);
	}
	t0 = ms_now();
	httpd_close(h);		/* returns once its threads ended */
	pthread_join(th, NULL);
	ck_assert_uint_lt(ms_now() - t0, 10000);
	ck_assert_int_eq(status_of(waiting_reply), 503);
	ck_assert_ptr_nonnull(strstr(waiting_reply, "closing"));
	free(waiting_reply);
	tu_loop_close(&loop);
}
END_TEST

START_TEST(an_address_in_use_is_an_error)
{
	uv_loop_t	 loop;
	struct httpd	*h;
	int		 err = 0, fd;
	struct sockaddr_in in;

	ck_assert_int_eq(uv_loop_init(&loop), 0);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&in, 0, sizeof(in));
	in.sin_family = AF_INET;
	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	in.sin_port = htons((uint16_t)port);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&in, sizeof(in)), 0);
	ck_assert_int_eq(listen(fd, 1), 0);
	h = httpd_new(&loop, addr, 1, page, NULL, &err);
	ck_assert_ptr_null(h);
	ck_assert_int_eq(err, -EADDRINUSE);
	close(fd);
	tu_loop_close(&loop);
}
END_TEST

/* A socket connected to the server, sending nothing. */
static int
idle_connection(void)
{
	struct sockaddr_in	 in;
	int			 fd;

	fd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&in, 0, sizeof(in));
	in.sin_family = AF_INET;
	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	in.sin_port = htons((uint16_t)port);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&in, sizeof(in)), 0);
	return fd;
}

/*
 * HTTPD_MAX_CONNECTIONS idle clients take every place: the next one is
 * closed unanswered; once they go, requests are answered again (503 here:
 * the loop is not run, which is all the same to the count).
 */
START_TEST(connections_beyond_the_limit_are_closed)
{
	uv_loop_t	 loop;
	struct httpd	*h;
	int		 fds[HTTPD_MAX_CONNECTIONS], err = 0, i, st = 0;
	uint64_t	 t0;
	char		*r;

	ck_assert_int_eq(uv_loop_init(&loop), 0);
	h = httpd_new(&loop, addr, 1, page, NULL, &err);
	ck_assert_msg(h != NULL, "httpd_new: %d", err);
	for (i = 0; i < HTTPD_MAX_CONNECTIONS; i++)
		fds[i] = idle_connection();
	r = request("GET", "/healthz");
	ck_assert_str_eq(r, "");
	free(r);
	for (i = 0; i < HTTPD_MAX_CONNECTIONS; i++)
		close(fds[i]);
	/* Their threads see them go soon after: wait for it. */
	for (t0 = ms_now(); st == 0 && ms_now() - t0 < 20000; ) {
		r = request("GET", "/healthz");
		st = status_of(r);
		free(r);
		if (st == 0)
			usleep(10 * 1000);
	}
	ck_assert_int_eq(st, 503);
	httpd_close(h);
	tu_loop_close(&loop);
}
END_TEST

static void
setup(void)
{
	pick_port();
}

static Suite *
httpd_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("httpd");
	tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, turning_loop_answers_every_page);
	tcase_add_test(tc, stalled_loop_is_503_after_the_stall);
	tcase_add_test(tc, close_answers_a_waiting_request);
	tcase_add_test(tc, an_address_in_use_is_an_error);
	tcase_add_test(tc, connections_beyond_the_limit_are_closed);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(httpd_suite());
}
