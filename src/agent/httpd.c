/*
 * The agent's HTTP server (httpd.h), on libmicrohttpd.
 *
 * Why this shape.  The health verdict is about the loop, so it cannot be
 * made by the loop alone: a stuck loop would answer nothing, not "503".
 * So MHD runs on threads of its own, one per connection
 * (MHD_USE_THREAD_PER_CONNECTION, at most CONN_LIMIT of them), and every
 * request's thread asks the loop for the page -- it queues the request
 * and wakes the loop with uv_async_send -- and waits for the answer on a
 * condition variable, until the oldest request the loop has not answered
 * is healthStallSeconds old.  "The loop turns" is thus "the loop answers
 * within healthStallSeconds", measured only when someone asks: an idle
 * loop asleep in epoll_wait answers at once and is healthy, and nothing
 * runs on either side while nobody asks (no timer, no snapshot, no
 * timestamp to keep fresh).  The pages are made on the loop, which owns
 * the data (the metrics renderer the metrics file uses, the files of each
 * flow), so nothing is shared with the threads but the queue.  A thread
 * per connection rather than one polling thread with suspended
 * connections: a request may wait for the loop, and MHD has no timer that
 * would end a suspended one when the loop never comes back.
 *
 * Bounds: CONN_LIMIT connections (more are refused by MHD), CONN_TIMEOUT_S
 * idle seconds per connection (a slow client is cut off), CONN_MEMORY
 * bytes for a request's headers (more: 431), a small thread stack, and
 * CLOSE_GRACE_MS for the replies in hand to go out at a close.
 * MHD parses HTTP; a malformed request gets its 400 from MHD and never
 * reaches the loop.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>
#include <uv.h>

#include "agent/httpd.h"
#include "base/listenaddr.h"
#include "base/log.h"
#include "base/mhdlib.h"
#include "base/util.h"

#define CONN_LIMIT	HTTPD_MAX_CONNECTIONS
#define CONN_TIMEOUT_S	10
#define CONN_MEMORY	(32 * 1024)
#define THREAD_STACK	(256 * 1024)
#define BACKLOG		16
#define CLOSE_GRACE_MS	1000	/* for the last replies to go out */

#define PROM_TYPE	"text/plain; version=0.0.4; charset=utf-8"

/* libmicrohttpd's functions (mhdlib.h): set by the first httpd_new. */
static const struct mhdlib *M;

/* One request waiting for the loop; on its thread's stack. */
struct job {
	enum httpd_page	 page;
	struct buf	 out;
	int		 status;
	bool		 done;		/* the loop answered */
	struct job	*next;
};

struct httpd {
	uv_async_t	 async;		/* wakes the loop: requests queued */
	struct MHD_Daemon *mhd;
	httpd_page_cb	 page;
	void		*arg;
	char		*addr;
	pthread_mutex_t	 mu;		/* guards what follows */
	pthread_cond_t	 cv;		/* a job done, or closing */
	struct job	*head;		/* queued, not answered */
	struct job	**tail;
	uint64_t	 asked_ms;	/* when the loop was first woken for
					   what it has not answered; 0: none */
	int		 stall_s;
	int		 answering;	/* requests not yet completed */
	bool		 closing;
};

static uint64_t
now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* --- on the loop -------------------------------------------------------- */

static void
on_async(uv_async_t *a)
{
	struct httpd	*h = container_of(a, struct httpd, async);
	struct job	*j;

	pthread_mutex_lock(&h->mu);
	h->asked_ms = 0;
	while ((j = h->head) != NULL) {
		h->head = j->next;
		j->status = h->page(j->page, &j->out, h->arg);
		j->done = true;
	}
	h->tail = &h->head;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
}

/* --- on a connection's thread ------------------------------------------- */

static void
unqueue(struct httpd *h, struct job *j)
{
	struct job	**pp;

	for (pp = &h->head; *pp != NULL; pp = &(*pp)->next)
		if (*pp == j) {
			*pp = j->next;
			if (h->tail == &j->next)
				h->tail = pp;
			return;
		}
}

/* Have the loop make j's page; 503 and why when it does not answer in
 * time or the server closes. */
static void
ask_loop(struct httpd *h, struct job *j)
{
	struct timespec	 ts;
	uint64_t	 now, deadline;

	pthread_mutex_lock(&h->mu);
	if (!h->closing) {
		j->next = NULL;
		*h->tail = j;
		h->tail = &j->next;
		now = now_ms();
		if (h->asked_ms == 0)
			h->asked_ms = now;
		uv_async_send(&h->async);
		deadline = h->asked_ms + (uint64_t)h->stall_s * 1000;
		while (!j->done && !h->closing && now < deadline) {
			ts.tv_sec = (time_t)(deadline / 1000);
			ts.tv_nsec = (long)(deadline % 1000) * 1000000;
			(void)pthread_cond_timedwait(&h->cv, &h->mu, &ts);
			now = now_ms();
		}
	}
	if (!j->done) {
		unqueue(h, j);
		j->status = MHD_HTTP_SERVICE_UNAVAILABLE;
		buf_reset(&j->out);
		if (h->closing)
			buf_addstr(&j->out, "the HTTP server is closing (a stop, "
			    "or a reload that moved it)\n");
		else
			buf_printf(&j->out, "the agent's event loop has not "
			    "answered for %d s (healthStallSeconds)\n",
			    h->stall_s);
	}
	pthread_mutex_unlock(&h->mu);
}

static enum MHD_Result
respond(struct MHD_Connection *c, int status, const char *type,
    const char *body, size_t len, bool allow)
{
	struct MHD_Response	*r;
	enum MHD_Result		 ret;

	r = M->create_response_from_buffer(len, (void *)(uintptr_t)body,
	    MHD_RESPMEM_MUST_COPY);
	if (r == NULL)
		return MHD_NO;
	(void)M->add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	(void)M->add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL,
	    "no-store");
	if (allow)
		(void)M->add_response_header(r, MHD_HTTP_HEADER_ALLOW,
		    "GET, HEAD");
	ret = M->queue_response(c, (unsigned)status, r);
	M->destroy_response(r);
	return ret;
}

static int
page_of(const char *url, enum httpd_page *p)
{
	if (strcmp(url, "/healthz") == 0)
		*p = HTTPD_HEALTH;
	else if (strcmp(url, "/metrics") == 0)
		*p = HTTPD_METRICS;
	else if (strcmp(url, "/status") == 0)
		*p = HTTPD_STATUS;
	else
		return -1;
	return 0;
}

static const char *const page_types[] = {
	[HTTPD_HEALTH] = "text/plain; charset=utf-8",
	[HTTPD_METRICS] = PROM_TYPE,
	[HTTPD_STATUS] = "application/json",
};

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *c, const char *url,
    const char *method, const char *version, const char *upload,
    size_t *upload_size, void **con_cls)
{
	static const char not_allowed[] = "only GET and HEAD\n";
	static const char not_found[] =
	    "not found: GET /healthz, /metrics or /status\n";
	struct httpd		*h = cls;
	struct job		 j;
	enum MHD_Result		 ret;

	(void)version;
	(void)upload;
	(void)upload_size;
	if (*con_cls == NULL) {
		/* Until on_completed: httpd_close waits for its reply. */
		*con_cls = h;
		pthread_mutex_lock(&h->mu);
		h->answering++;
		pthread_mutex_unlock(&h->mu);
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return respond(c, MHD_HTTP_METHOD_NOT_ALLOWED, page_types[0],
		    not_allowed, sizeof(not_allowed) - 1, true);
	memset(&j, 0, sizeof(j));
	if (page_of(url, &j.page) != 0)
		return respond(c, MHD_HTTP_NOT_FOUND, page_types[0],
		    not_found, sizeof(not_found) - 1, false);
	buf_init(&j.out);
	ask_loop(h, &j);
	ret = respond(c, j.status, j.status == MHD_HTTP_OK ?
	    page_types[j.page] : page_types[0], j.out.data, j.out.len, false);
	buf_cleanup(&j.out);
	return ret;
}

/* A request's reply went out, or MHD gave up on it. */
static void
on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
    enum MHD_RequestTerminationCode why)
{
	struct httpd	*h = cls;

	(void)c;
	(void)why;
	if (*con_cls == NULL)
		return;
	*con_cls = NULL;
	pthread_mutex_lock(&h->mu);
	h->answering--;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
}

/* --- the server --------------------------------------------------------- */

static struct MHD_Daemon *
start_mhd(struct httpd *h, int fd)
{
	return M->start_daemon(MHD_USE_THREAD_PER_CONNECTION |
	    MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, 0, NULL, NULL,
	    on_request, h,
	    MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONN_LIMIT,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONN_TIMEOUT_S,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY,
	    MHD_OPTION_THREAD_STACK_SIZE, (size_t)THREAD_STACK,
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
	    MHD_OPTION_END);
}

static void
sync_init(struct httpd *h)
{
	pthread_condattr_t	 ca;

	pthread_mutex_init(&h->mu, NULL);
	pthread_condattr_init(&ca);
	/* The deadlines are monotonic: a clock step changes nothing. */
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&h->cv, &ca);
	pthread_condattr_destroy(&ca);
}

/* The memory goes here, once the loop lets go of the handle. */
static void
on_closed(uv_handle_t *hd)
{
	struct httpd	*h = container_of((uv_async_t *)hd, struct httpd,
	    async);

	pthread_cond_destroy(&h->cv);
	pthread_mutex_destroy(&h->mu);
	free(h->addr);
	free(h);
}

struct httpd *
httpd_new(uv_loop_t *loop, const char *addr, int stall_s,
    httpd_page_cb page, void *arg, int *err)
{
	struct httpd	*h;
	char		 why[256];
	int		 fd, r;

	/* conf_load has loaded it already when httpListen is set. */
	if (M == NULL && (M = mhdlib_get(why, sizeof(why))) == NULL) {
		log_error("%s: %s", __func__, why);
		*err = -ELIBACC;
		return NULL;
	}
	fd = listenaddr_listen(addr, BACKLOG);
	if (fd < 0) {
		*err = fd;
		return NULL;
	}
	h = xcalloc(1, sizeof(*h));
	h->page = page;
	h->arg = arg;
	h->addr = xstrdup(addr);
	h->stall_s = stall_s;
	h->tail = &h->head;
	sync_init(h);
	/* Before MHD's threads start: the first request sends on it. */
	r = uv_async_init(loop, &h->async, on_async);
	if (r != 0) {
		close(fd);
		pthread_cond_destroy(&h->cv);
		pthread_mutex_destroy(&h->mu);
		free(h->addr);
		free(h);
		*err = r;
		return NULL;
	}
	h->mhd = start_mhd(h, fd);
	if (h->mhd == NULL) {
		/* fd is left open: whether MHD closed it is not said. */
		uv_close((uv_handle_t *)&h->async, on_closed);
		*err = -EIO;
		return NULL;
	}
	return h;
}

void
httpd_set_stall(struct httpd *h, int stall_s)
{
	pthread_mutex_lock(&h->mu);
	h->stall_s = stall_s;
	pthread_mutex_unlock(&h->mu);
}

const char *
httpd_addr(const struct httpd *h)
{
	return h->addr;
}

size_t
httpd_queued(struct httpd *h)
{
	struct job	*j;
	size_t		 n = 0;

	pthread_mutex_lock(&h->mu);
	for (j = h->head; j != NULL; j = j->next)
		n++;
	pthread_mutex_unlock(&h->mu);
	return n;
}

void
httpd_close(struct httpd *h)
{
	struct timespec	 ts;
	uint64_t	 deadline;

	if (h == NULL)
		return;
	pthread_mutex_lock(&h->mu);
	h->closing = true;
	pthread_cond_broadcast(&h->cv);
	/*
	 * Those waiting for the loop were just woken and answer 503; MHD's
	 * stop shuts every connection's socket down before their threads
	 * could send that, so wait (a little: a reload waits too) until
	 * the requests in hand have gone out.
	 */
	deadline = now_ms() + CLOSE_GRACE_MS;
	while (h->answering > 0 && now_ms() < deadline) {
		ts.tv_sec = (time_t)(deadline / 1000);
		ts.tv_nsec = (long)(deadline % 1000) * 1000000;
		(void)pthread_cond_timedwait(&h->cv, &h->mu, &ts);
	}
	pthread_mutex_unlock(&h->mu);
	M->stop_daemon(h->mhd);
	uv_close((uv_handle_t *)&h->async, on_closed);
}
