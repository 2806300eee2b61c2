/*
 * Unit tests for http.c.  A scripted HTTP/1.1 responder runs on a uv_tcp_t
 * in the same loop as the client (127.0.0.1, port 0), so every case drives
 * the real curl-multi-on-libuv bridge: completion, parallel transfers, a
 * timeout on the timer path, a peer reset, keep-alive reuse, submitting from
 * a done callback, the response cap, a refused connect and shutdown with
 * requests in flight.  Every loop run has a watchdog that fails the test
 * instead of hanging, and each case ends with uv_loop_close() == 0.
 */
#include "config.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <uv.h>

#include "base/log.h"
#include "base/util.h"
#include "dis/http.h"
#include "dis/http_int.h"
#include "testutil.h"

#define WATCHDOG_MS	10000
#define MAX_GOT		64
#define BIG_LEN		4096

enum script {
	SRV_OK,			/* 200, small JSON body, keep-alive */
	SRV_500,		/* 500 with a JSON error body */
	SRV_SILENT,		/* read the request, never answer */
	SRV_RESET,		/* RST right after the request */
	SRV_BIG,		/* 200, BIG_LEN bytes, Content-Length */
	SRV_BIG_CHUNKED,	/* 200, BIG_LEN bytes, chunked */
};

struct conn {
	uv_tcp_t	 tcp;
	struct server	*srv;
	struct buf	 in;
	bool		 closing;
	struct conn	*next;
	struct conn	**prevp;
};

struct server {
	uv_tcp_t	 tcp;
	uv_loop_t	*loop;
	int		 port;
	enum script	 script;
	int		 accepts;
	int		 requests;
	int		 stop_at_requests;	/* uv_stop at this count */
	bool		 saw_expect;
	struct buf	 last_head;
	struct buf	 last_body;
	struct conn	*conns;
};

struct got {
	enum http_result result;
	long		 status;
	char		 body[256];
	size_t		 bodylen;
	char		 error[256];
};

static struct {
	uv_loop_t	 loop;
	uv_timer_t	 watchdog;
	bool		 watchdog_fired;
	uv_timer_t	 settle;
	uv_tcp_t	 dead;		/* bound, never listening */
	bool		 dead_used;
	struct server	 srv;
	struct http	*http;
	char		 url[128];
	int		 ndone;
	int		 stop_at_done;	/* uv_stop when reached; 0 = no */
	struct got	 got[MAX_GOT];
	int		 nclosed;
	int		 resubmit_left;
	int		 submit_rc;	/* last http_submit from a callback */
	struct http_request req;	/* what callbacks resubmit */
} fx;

static const char ok_body[] = "{\"failed_record_count\":0,\"records\":"
    "[{\"partition_id\":\"shardId-0000000000\",\"sequence_number\":\"1\"}]}";
static const char err_body[] =
    "{\"errorCode\":\"DIS.5000\",\"message\":\"x\"}";
static const char req_body[] = "{\"stream_name\":\"s\",\"records\":"
    "[{\"data\":\"aGVsbG8=\",\"partition_key\":\"1\"}]}";
static const char *const req_headers[] = {
	"Content-Type: application/json; charset=utf-8",
	"X-Test: yes",
};
static char ok_resp[512];
static char err_resp[512];
static char big_head[256];
static char big_chunked_head[256];
static char big_body[BIG_LEN];

/* --- the scripted responder ------------------------------------------- */

static void
on_conn_closed(uv_handle_t *handle)
{
	struct conn	*c = container_of(handle, struct conn, tcp);

	buf_cleanup(&c->in);
	free(c);
}

static void
conn_close(struct conn *c, bool reset)
{
	if (c->closing)
		return;
	c->closing = true;
	if (c->next != NULL)
		c->next->prevp = c->prevp;
	*c->prevp = c->next;
	if (reset)
		ck_assert_int_eq(uv_tcp_close_reset(&c->tcp, on_conn_closed),
		    0);
	else
		uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
}

static void
on_written(uv_write_t *w, int status)
{
	free(w);
}

/* bufs point to static storage, so they outlive the write. */
static void
conn_write(struct conn *c, const char *const *parts, size_t n)
{
	uv_buf_t	 bufs[4];
	uv_write_t	*w;
	size_t		 i, len;

	ck_assert_uint_le(n, ARRAY_SIZE(bufs));
	for (i = 0; i < n; i++) {
		len = parts[i] == big_body ? BIG_LEN : strlen(parts[i]);
		bufs[i] = uv_buf_init((char *)(uintptr_t)parts[i],
		    (unsigned)len);
	}
	w = xmalloc(sizeof(*w));
	ck_assert_int_eq(uv_write(w, (uv_stream_t *)&c->tcp, bufs,
	    (unsigned)n, on_written), 0);
}

static void
conn_respond(struct conn *c)
{
	const char	*parts[4];

	switch (c->srv->script) {
	case SRV_OK:
		parts[0] = ok_resp;
		conn_write(c, parts, 1);
		break;
	case SRV_500:
		parts[0] = err_resp;
		conn_write(c, parts, 1);
		break;
	case SRV_SILENT:
		break;
	case SRV_RESET:
		conn_close(c, true);
		break;
	case SRV_BIG:
		parts[0] = big_head;
		parts[1] = big_body;
		conn_write(c, parts, 2);
		break;
	case SRV_BIG_CHUNKED:
		parts[0] = big_chunked_head;
		parts[1] = big_body;
		parts[2] = "\r\n0\r\n\r\n";
		conn_write(c, parts, 3);
		break;
	}
}

/* Record one complete request: its head and its body. */
static void
server_record(struct server *srv, const char *head, size_t hlen,
    const char *body, size_t blen)
{
	buf_reset(&srv->last_head);
	buf_add(&srv->last_head, head, hlen);
	buf_reset(&srv->last_body);
	buf_add(&srv->last_body, body, blen);
	if (strcasestr(srv->last_head.data, "\r\nExpect:") != NULL)
		srv->saw_expect = true;
	srv->requests++;
	if (srv->stop_at_requests > 0 &&
	    srv->requests == srv->stop_at_requests)
		uv_stop(srv->loop);
}

static size_t
head_content_length(const char *head)
{
	const char	*p;

	p = strcasestr(head, "\r\nContent-Length:");
	if (p == NULL)
		return 0;
	return strtoul(p + strlen("\r\nContent-Length:"), NULL, 10);
}

/* Answer every complete request buffered on c. */
static void
conn_process(struct conn *c)
{
	struct server	*srv = c->srv;
	const char	*end;
	size_t		 hlen, blen, used;

	while (!c->closing && c->in.len > 0) {
		end = memmem(c->in.data, c->in.len, "\r\n\r\n", 4);
		if (end == NULL)
			return;
		hlen = (size_t)(end - c->in.data) + 4;
		/* c->in is NUL-terminated, so the head is a C string. */
		blen = head_content_length(c->in.data);
		if (c->in.len < hlen + blen)
			return;
		server_record(srv, c->in.data, hlen, c->in.data + hlen, blen);
		used = hlen + blen;
		memmove(c->in.data, c->in.data + used, c->in.len - used);
		c->in.len -= used;
		c->in.data[c->in.len] = '\0';
		conn_respond(c);
	}
}

static void
on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *b)
{
	b->base = xmalloc(65536);
	b->len = 65536;
}

static void
on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *b)
{
	struct conn	*c = container_of(stream, struct conn, tcp);

	if (nread < 0)
		conn_close(c, false);
	else if (nread > 0) {
		buf_add(&c->in, b->base, (size_t)nread);
		conn_process(c);
	}
	free(b->base);
}

static void
on_accept(uv_stream_t *listener, int status)
{
	struct server	*srv = container_of(listener, struct server, tcp);
	struct conn	*c;

	ck_assert_int_eq(status, 0);
	c = xcalloc(1, sizeof(*c));
	c->srv = srv;
	buf_init(&c->in);
	ck_assert_int_eq(uv_tcp_init(srv->loop, &c->tcp), 0);
	ck_assert_int_eq(uv_accept(listener, (uv_stream_t *)&c->tcp), 0);
	c->next = srv->conns;
	if (c->next != NULL)
		c->next->prevp = &c->next;
	c->prevp = &srv->conns;
	srv->conns = c;
	srv->accepts++;
	ck_assert_int_eq(uv_read_start((uv_stream_t *)&c->tcp, on_alloc,
	    on_read), 0);
}

/* Bind t to 127.0.0.1 on a free port; returns the port. */
static int
bind_loopback(uv_loop_t *loop, uv_tcp_t *t)
{
	struct sockaddr_in	 sin;
	struct sockaddr_storage	 ss;
	int			 len = sizeof(ss);

	ck_assert_int_eq(uv_tcp_init(loop, t), 0);
	ck_assert_int_eq(uv_ip4_addr("127.0.0.1", 0, &sin), 0);
	ck_assert_int_eq(uv_tcp_bind(t, (struct sockaddr *)&sin, 0), 0);
	ck_assert_int_eq(uv_tcp_getsockname(t, (struct sockaddr *)&ss, &len),
	    0);
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

static void
server_start(struct server *srv, uv_loop_t *loop)
{
	srv->loop = loop;
	buf_init(&srv->last_head);
	buf_init(&srv->last_body);
	srv->port = bind_loopback(loop, &srv->tcp);
	ck_assert_int_eq(uv_listen((uv_stream_t *)&srv->tcp, 128, on_accept),
	    0);
}

static void
server_close(struct server *srv)
{
	while (srv->conns != NULL)
		conn_close(srv->conns, false);
	uv_close((uv_handle_t *)&srv->tcp, NULL);
}

/* --- client side ------------------------------------------------------- */

static void
record(const struct http_response *resp)
{
	struct got	*g;

	ck_assert_int_lt(fx.ndone, MAX_GOT);
	g = &fx.got[fx.ndone++];
	g->result = resp->result;
	g->status = resp->status;
	g->bodylen = resp->bodylen;
	ck_assert_ptr_nonnull(resp->body);
	snprintf(g->body, sizeof(g->body), "%.*s",
	    (int)MIN(resp->bodylen, sizeof(g->body) - 1), resp->body);
	if (resp->result != HTTP_OK) {
		ck_assert_ptr_nonnull(resp->error);
		snprintf(g->error, sizeof(g->error), "%s", resp->error);
	}
	if (fx.stop_at_done > 0 && fx.ndone == fx.stop_at_done)
		uv_stop(&fx.loop);
}

static void
on_done(const struct http_response *resp, void *arg)
{
	record(resp);
}

/* Records, then submits fx.req again while fx.resubmit_left > 0. */
static void	on_closed(void *);

static void
on_done_resubmit(const struct http_response *resp, void *arg)
{
	record(resp);
	if (fx.resubmit_left <= 0)
		return;
	fx.resubmit_left--;
	fx.srv.script = SRV_OK;
	fx.req.timeout_ms = 5000;
	fx.submit_rc = http_submit(fx.http, &fx.req, on_done_resubmit, NULL);
}

/* Records, and closes the client from inside its own done callback. */
static void
on_done_close(const struct http_response *resp, void *arg)
{
	struct http	*h = fx.http;

	record(resp);
	/* Cleared first: the cancelled request comes back in here. */
	fx.http = NULL;
	if (h != NULL)
		http_close(h, on_closed, &fx.nclosed);
}

static void
on_closed(void *arg)
{
	int	*n = arg;

	(*n)++;
	uv_stop(&fx.loop);
}

static struct http_request
base_req(void)
{
	struct http_request	 r;

	memset(&r, 0, sizeof(r));
	r.method = "POST";
	r.url = fx.url;
	r.headers = req_headers;
	r.nheaders = ARRAY_SIZE(req_headers);
	r.body = req_body;
	r.bodylen = strlen(req_body);
	r.connect_timeout_ms = 2000;
	r.timeout_ms = 5000;
	return r;
}

static void
on_watchdog(uv_timer_t *t)
{
	fx.watchdog_fired = true;
	uv_stop(&fx.loop);
}

/* Run the loop until uv_stop or no more handles; fail on the watchdog. */
static void
run(void)
{
	ck_assert_int_eq(uv_timer_start(&fx.watchdog, on_watchdog,
	    WATCHDOG_MS, 0), 0);
	uv_run(&fx.loop, UV_RUN_DEFAULT);
	uv_timer_stop(&fx.watchdog);
	ck_assert_msg(!fx.watchdog_fired, "watchdog: loop ran %d ms",
	    WATCHDOG_MS);
}

static void
on_settle(uv_timer_t *t)
{
	uv_stop(&fx.loop);
}

/* Keep the loop going for ms more, to catch late or extra callbacks. */
static void
run_for(uint64_t ms)
{
	ck_assert_int_eq(uv_timer_start(&fx.settle, on_settle, ms, 0), 0);
	run();
}

static void
fill_responses(void)
{
	snprintf(ok_resp, sizeof(ok_resp), "HTTP/1.1 200 OK\r\n"
	    "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
	    strlen(ok_body), ok_body);
	snprintf(err_resp, sizeof(err_resp), "HTTP/1.1 500 Internal Error\r\n"
	    "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
	    strlen(err_body), err_body);
	snprintf(big_head, sizeof(big_head), "HTTP/1.1 200 OK\r\n"
	    "Content-Length: %d\r\n\r\n", BIG_LEN);
	snprintf(big_chunked_head, sizeof(big_chunked_head), "HTTP/1.1 200 OK"
	    "\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n", BIG_LEN);
	memset(big_body, 'x', sizeof(big_body));
}

static void
setup(void)
{
	struct http_opts	 opts = { .ssl_verify = true };

	memset(&fx, 0, sizeof(fx));
	fill_responses();
	ck_assert_int_eq(uv_loop_init(&fx.loop), 0);
	ck_assert_int_eq(uv_timer_init(&fx.loop, &fx.watchdog), 0);
	/* The watchdog alone must not keep the loop alive. */
	uv_unref((uv_handle_t *)&fx.watchdog);
	ck_assert_int_eq(uv_timer_init(&fx.loop, &fx.settle), 0);
	server_start(&fx.srv, &fx.loop);
	snprintf(fx.url, sizeof(fx.url), "http://127.0.0.1:%d/v2/p/records/",
	    fx.srv.port);
	fx.http = http_new(&fx.loop, &opts);
	ck_assert_ptr_nonnull(fx.http);
}

static void
teardown(void)
{
	if (fx.http != NULL) {
		http_close(fx.http, on_closed, &fx.nclosed);
		fx.http = NULL;
	}
	server_close(&fx.srv);
	if (fx.dead_used)
		uv_close((uv_handle_t *)&fx.dead, NULL);
	run();
	run();		/* on_closed may have stopped the first run early */
	ck_assert_int_eq(fx.nclosed, 1);
	uv_close((uv_handle_t *)&fx.watchdog, NULL);
	uv_close((uv_handle_t *)&fx.settle, NULL);
	uv_run(&fx.loop, UV_RUN_DEFAULT);
	ck_assert_int_eq(uv_loop_close(&fx.loop), 0);
	buf_cleanup(&fx.srv.last_head);
	buf_cleanup(&fx.srv.last_body);
}

/* --- tests ------------------------------------------------------------- */

START_TEST(completes)
{
	struct http_request	 req = base_req();

	fx.stop_at_done = 1;
	ck_assert_int_eq(http_submit(fx.http, &req, on_done, NULL), 0);
	ck_assert_uint_eq(http_inflight(fx.http), 1);
	run();
	ck_assert_int_eq(fx.ndone, 1);
	ck_assert_int_eq(fx.got[0].result, HTTP_OK);
	ck_assert_int_eq(fx.got[0].status, 200);
	ck_assert_uint_eq(fx.got[0].bodylen, strlen(ok_body));
	ck_assert_str_eq(fx.got[0].body, ok_body);
	ck_assert_uint_eq(http_inflight(fx.http), 0);
	/* The server got our method, path, headers and body. */
	ck_assert_int_eq(strncmp(fx.srv.last_head.data,
	    "POST /v2/p/records/ HTTP/1.1\r\n", 30), 0);
	ck_assert_ptr_nonnull(strstr(fx.srv.last_head.data,
	    "\r\nX-Test: yes\r\n"));
	ck_assert_str_eq(fx.srv.last_body.data, req_body);
}
END_TEST

START_TEST(server_error_is_a_response)
{
	struct http_request	 req = base_req();

	fx.srv.script = SRV_500;
	fx.stop_at_done = 1;
	ck_assert_int_eq(http_submit(fx.http, &req, on_done, NULL), 0);
	run();
	ck_assert_int_eq(fx.ndone, 1);
	ck_assert_int_eq(fx.got[0].result, HTTP_OK);
	ck_assert_int_eq(fx.got[0].status, 500);
	ck_assert_str_eq(fx.got[0].body, err_body);
}
END_TEST

START_TEST(large_body_sent_without_expect)
{
	struct http_request	 req = base_req();
	size_t			 n = 1536 * 1024;
	char			*body;
	uint64_t		 t0;

	/* curl adds "Expect: 100-continue" to bodies over 1 MiB. */
	body = xmalloc(n);
	memset(body, 'b', n);
	req.body = body;
	req.bodylen = n;
	fx.stop_at_done = 1;
	t0 = mono_ms();
	ck_assert_int_eq(http_submit(fx.http, &req, on_done, NULL), 0);
	run();
	ck_assert_int_eq(fx.ndone, 1);
	ck_assert_int_eq(fx.got[0].result, HTTP_OK);
	ck_assert_int_eq(fx.got[0].status, 200);
	ck_assert_uint_eq(fx.srv.last_body.len, n);
	ck_assert(!fx.srv.saw_expect);
	/* No 1 s wait for a "100 Continue" that never comes. */
	ck_assert_uint_lt(mono_ms() - t0, 900);
	free(body);
}
END_TEST

START_TEST(many_parallel)
{
	struct http_request	 req = base_req();
	int			 i;

	fx.stop_at_done = 20;
	for (i = 0; i < 20; i++)
		ck_assert_int_eq(http_submit(fx.http, &req, on_done, NULL), 0);
	ck_assert_uint_eq(http_inflight(fx.http), 20);
	run();
	ck_assert_int_eq(fx.ndone, 20);
	for (i = 0; i < 20; i++) {
		ck_assert_int_eq(fx.got[i].result, HTTP_OK);
		ck_assert_int_eq(fx.got[i].status, 200);
		ck_assert_str_eq(fx.got[i].body, ok_body);
	}
	ck_assert_int_eq(fx.srv.requests, 20);
	ck_assert_uint_eq(http_inflight(fx.http), 0);
	run_for(100);
	ck_assert_int_eq(fx.ndone, 20);
}
END_TEST

START_TEST(timeout_last_transfer_reports_done)
{
	struct http_request	 req = base_req();
	uint64_t		 t0, took;

	fx.srv.script = SRV_SILENT;
	req.timeout_ms = 200;
	fx.stop_at_done = 1;
	t0 = mono_ms();
	ck_assert_int_eq(http_submit(fx.http, &req, on_done, NULL), 0);
	run();
	took = mono_ms() - t0;
	ck_assert_int_eq(fx.ndone, 1);
	ck_assert_int_eq(fx.got[0].result, HTTP_ERR_TIMEOUT);
	ck_assert_int_eq(fx.srv.requests, 1);
	ck_assert_uint_ge(took, 150);
	ck_assert_uint_lt(took, 3000);
	ck_assert_uint_eq(http_inflight(fx.http), 0);
	run_for(300);
	ck_assert_int_eq(fx.ndone, 1);
}
END_TEST

START_TEST(peer_reset_reports_error)
{
	struct http_request	 req = base_req();

	fx.srv.script = SRV_RESET;
	fx.stop_at_done = 1;
	ck_assert_int_eq(http_submit(fx.http, &req, on_done, NULL), 0);
	run();
	ck_assert_int_eq(fx.ndone, 1);
	ck_assert_int_eq(fx.got[0].result, HTTP_ERR_NETWORK);
	ck_assert_str_ne(fx.got[0].error, "");
	ck_assert_int_eq(fx.srv.requests, 1);
	run_for(100);
	ck_assert_int_eq(fx.ndone, 1);
}
END_TEST

START_TEST(sequential_keepalive)
{
	int	 i;

	fx.req = base_req();
	fx.resubmit_left = 2;
	fx.stop_at_done = 3;
	ck_assert_int_eq(http_submit(fx.http, &fx.req, on_done_resubmit,
	    NULL), 0);
	run();
	ck_assert_int_eq(fx.ndone, 3);
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(fx.got[i].result, HTTP_OK);
		ck_assert_int_eq(fx.got[i].status, 200);
	}
	ck_assert_int_eq(fx.submit_rc, 0);
	ck_assert_int_eq(fx.srv.requests, 3);
	/* One TCP connection carried all three requests. */
	ck_assert_int_eq(fx.srv.accepts, 1);
	/* ... watched by one poller, kept between requests (a fresh one
	 * per request cost 4 epoll_ctl calls and an ioctl more), whose
	 * interest changed only for the first request: a request on the
	 * kept connection asks to read, as it was left, and costs no
	 * epoll_ctl (re-registering it on each announce cost two). */
	ck_assert_uint_eq(fx.http->pollers_made, 1);
	ck_assert_uint_le(fx.http->poll_restarts, 2);
}
END_TEST

START_TEST(submit_from_done_cb)
{
	/* The first done_cb runs on the timer path (a timeout). */
	fx.req = base_req();
	fx.req.timeout_ms = 200;
	fx.srv.script = SRV_SILENT;
	fx.resubmit_left = 1;
	fx.submit_rc = -1;
	fx.stop_at_done = 2;
	ck_assert_int_eq(http_submit(fx.http, &fx.req, on_done_resubmit,
	    NULL), 0);
	run();
	ck_assert_int_eq(fx.ndone, 2);
	ck_assert_int_eq(fx.submit_rc, 0);
	ck_assert_int_eq(fx.got[0].result, HTTP_ERR_TIMEOUT);
	ck_assert_int_eq(fx.got[1].result, HTTP_OK);
	ck_assert_int_eq(fx.got[1].status, 200);
	ck_assert_str_eq(fx.got[1].body, ok_body);
	ck_assert_uint_eq(http_inflight(fx.http), 0);
}
END_TEST

START_TEST(response_too_big)
{
	struct http_request	 req = base_req();

	fx.srv.script = SRV_BIG;
	req.max_response = BIG_LEN / 4;
	fx.stop_at_done = 1;
	ck_assert_int_eq(http_submit(fx.http, &req, on_done, NULL), 0);
	run();
	ck_assert_int_eq(fx.ndone, 1);
	ck_assert_int_eq(fx.got[0].result, HTTP_ERR_TOOBIG);
	ck_assert_ptr_nonnull(strstr(fx.got[0].error, "1024"));
	ck_assert_uint_le(fx.got[0].bodylen, BIG_LEN / 4);
}
END_TEST

START_TEST(response_too_big_chunked)
{
	struct http_request	 req = base_req();

	/* No Content-Length: the cap is enforced while the body streams. */
	fx.srv.script = SRV_BIG_CHUNKED;
	req.max_response = BIG_LEN - 1;
	fx.stop_at_done = 1;
	ck_assert_int_eq(http_submit(fx.http, &req, on_done, NULL), 0);
	run();
	ck_assert_int_eq(fx.ndone, 1);
	ck_assert_int_eq(fx.got[0].result, HTTP_ERR_TOOBIG);
	ck_assert_uint_le(fx.got[0].bodylen, BIG_LEN - 1);
}
END_TEST

START_TEST(response_at_cap_is_accepted)
{
	struct http_request	 req = base_req();
	int			 i;

	req.max_response = BIG_LEN;
	fx.srv.script = SRV_BIG;
	fx.stop_at_done = 1;
	ck_assert_int_eq(http_submit(fx.http, &req, on_done, NULL), 0);
	run();
	fx.srv.script = SRV_BIG_CHUNKED;
	fx.stop_at_done = 2;
	ck_assert_int_eq(http_submit(fx.http, &req, on_done, NULL), 0);
	run();
	ck_assert_int_eq(fx.ndone, 2);
	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(fx.got[i].result, HTTP_OK);
		ck_assert_uint_eq(fx.got[i].bodylen, BIG_LEN);
	}
}
END_TEST

START_TEST(connect_refused)
{
	struct http_request	 req = base_req();
	int			 port;

	/* Bound but not listening: the port stays ours, connects get RST. */
	port = bind_loopback(&fx.loop, &fx.dead);
	fx.dead_used = true;
	snprintf(fx.url, sizeof(fx.url), "http://127.0.0.1:%d/", port);
	fx.stop_at_done = 1;
	ck_assert_int_eq(http_submit(fx.http, &req, on_done, NULL), 0);
	run();
	ck_assert_int_eq(fx.ndone, 1);
	ck_assert_int_eq(fx.got[0].result, HTTP_ERR_CONNECT);
	ck_assert_int_eq(fx.srv.accepts, 0);
}
END_TEST

START_TEST(close_with_inflight)
{
	fx.req = base_req();
	fx.srv.script = SRV_SILENT;
	fx.srv.stop_at_requests = 2;
	/* Each cancelled callback tries to submit again: refused. */
	fx.resubmit_left = 2;
	ck_assert_int_eq(http_submit(fx.http, &fx.req, on_done_resubmit,
	    NULL), 0);
	ck_assert_int_eq(http_submit(fx.http, &fx.req, on_done_resubmit,
	    NULL), 0);
	run();
	ck_assert_int_eq(fx.srv.requests, 2);
	ck_assert_uint_eq(http_inflight(fx.http), 2);
	ck_assert_int_eq(fx.ndone, 0);

	http_close(fx.http, on_closed, &fx.nclosed);
	fx.http = NULL;
	ck_assert_int_eq(fx.ndone, 2);
	ck_assert_int_eq(fx.got[0].result, HTTP_ERR_CANCELLED);
	ck_assert_int_eq(fx.got[1].result, HTTP_ERR_CANCELLED);
	ck_assert_int_eq(fx.submit_rc, UV_ECANCELED);
	ck_assert_int_eq(fx.nclosed, 0);	/* handles are still closing */
	run();
	ck_assert_int_eq(fx.nclosed, 1);
	ck_assert_int_eq(fx.ndone, 2);
	/* teardown: server closes, uv_loop_close() == 0 */
}
END_TEST

START_TEST(close_from_done_cb)
{
	struct http_request	 req = base_req();

	/* Whichever finishes first closes; the other one is cancelled. */
	ck_assert_int_eq(http_submit(fx.http, &req, on_done_close, NULL), 0);
	ck_assert_int_eq(http_submit(fx.http, &req, on_done_close, NULL), 0);
	run();
	ck_assert_ptr_null(fx.http);
	ck_assert_int_eq(fx.nclosed, 1);
	ck_assert_int_eq(fx.ndone, 2);
	ck_assert_int_eq(fx.got[0].result, HTTP_OK);
	ck_assert_int_eq(fx.got[0].status, 200);
	ck_assert_int_eq(fx.got[1].result, HTTP_ERR_CANCELLED);
}
END_TEST

static Suite *
http_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("http");
	tc = tcase_create("bridge");
	tcase_add_checked_fixture(tc, setup, teardown);
	/* Our watchdog, not Check's timer, should catch a hang. */
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, completes);
	tcase_add_test(tc, server_error_is_a_response);
	tcase_add_test(tc, large_body_sent_without_expect);
	tcase_add_test(tc, many_parallel);
	tcase_add_test(tc, timeout_last_transfer_reports_done);
	tcase_add_test(tc, peer_reset_reports_error);
	tcase_add_test(tc, sequential_keepalive);
	tcase_add_test(tc, submit_from_done_cb);
	tcase_add_test(tc, response_too_big);
	tcase_add_test(tc, response_too_big_chunked);
	tcase_add_test(tc, response_at_cap_is_accepted);
	tcase_add_test(tc, connect_refused);
	tcase_add_test(tc, close_with_inflight);
	tcase_add_test(tc, close_from_done_cb);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	int	 rc;

	/* Loopback only: no proxy from the environment. */
	unsetenv("http_proxy");
	unsetenv("HTTP_PROXY");
	unsetenv("all_proxy");
	unsetenv("ALL_PROXY");
	/* The responder may write to a connection curl already dropped. */
	signal(SIGPIPE, SIG_IGN);
	if (http_global_init() != 0)
		return EXIT_FAILURE;
	rc = tu_run(http_suite());
	http_global_cleanup();
	return rc;
}
