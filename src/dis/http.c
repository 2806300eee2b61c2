/*
 * The HTTP client: libcurl's multi interface driven by a libuv loop.  One
 * long-lived CURLM per client pools connections for keep-alive; curl tells
 * us which sockets to watch (a uv_poll_t each, struct http_sock) and when to
 * wake it up (one uv_timer_t).  A socket's poller lives from curl's first
 * announce of it to its close (CURLOPT_CLOSESOCKETFUNCTION), not from
 * announce to REMOVE: a pooled connection's next request finds its poller
 * and its poll interest as they were, and only a change of interest costs
 * epoll_ctl calls (uv_poll_start is a DEL and an ADD each time; a fresh
 * poller, two more and an ioctl).  Every socket_action is followed by draining
 * curl_multi_info_read, and finished transfers are reported from
 * http_finish(), outside any curl callback, so done callbacks may submit
 * again.  The pass that sends a large request corks the idle pooled
 * connections it may go on (cork_idle), so that its TLS records leave as
 * one segment.  Memory of a uv handle is freed only in its close callback,
 * and the client's once its timer and every poller are closed
 * (base/closer.h).
 * With httpreq.c (one request's easy handle) and http_int.h, which they
 * share, the only files that include <curl/curl.h>.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <curl/curl.h>
#include <uv.h>

#include "base/closer.h"
#include "base/log.h"
#include "base/util.h"
#include "dis/http.h"
#include "dis/http_int.h"


static void	http_drive(struct http *, curl_socket_t, int);
static void	on_poll(uv_poll_t *, int, int);
static void	on_timer(uv_timer_t *);
static void	on_asap(uv_idle_t *);

static void
req_link(struct http *h, struct http_req *r)
{
	r->next = h->reqs;
	if (r->next != NULL)
		r->next->prevp = &r->next;
	r->prevp = &h->reqs;
	h->reqs = r;
	h->ninflight++;
}

static void
req_unlink(struct http *h, struct http_req *r)
{
	if (r->next != NULL)
		r->next->prevp = r->prevp;
	*r->prevp = r->next;
	r->next = NULL;
	r->prevp = NULL;
	h->ninflight--;
}

static void
req_free(struct http_req *r)
{
	struct curl_slist	*l;

	if (r == NULL)
		return;
	/* Header lines may carry tokens (X-Security-Token, ...). */
	for (l = r->headers; l != NULL; l = l->next)
		explicit_bzero(l->data, strlen(l->data));
	curl_slist_free_all(r->headers);
	if (r->wipe)
		buf_wipe(&r->body);
	else
		buf_cleanup(&r->body);
	free(r);
}

/* An easy handle, recycled when one is idle (curl_easy_reset'ed). */
static CURL *
easy_get(struct http *h)
{
	if (h->nidle > 0)
		return h->idle[--h->nidle];
	return curl_easy_init();
}

/* Take back an easy handle that is no longer in the multi handle. */
static void
easy_put(struct http *h, CURL *easy)
{
	if (easy == NULL)
		return;
	if (h->closing || h->nidle == IDLE_EASY_MAX) {
		curl_easy_cleanup(easy);
		return;
	}
	/* Drop every pointer into the finished request. */
	curl_easy_reset(easy);
	h->idle[h->nidle++] = easy;
}

static void
http_free(struct http *h)
{
	free(h->ca_file);
	free(h->proxy);
	free(h->proxy_user);
	secret_free(h->proxy_password);
	free(h->noproxy);
	free(h);
}

static void
http_freed(struct closer *c)
{
	struct http	*h = container_of(c, struct http, closer);

	if (h->closed != NULL)
		h->closed(h->closed_arg);
	http_free(h);
}

static void
on_sock_closed(uv_handle_t *handle)
{
	struct http_sock	*s;
	struct http		*h;

	s = container_of(handle, struct http_sock, poll);
	h = s->h;
	free(s);
	(void)closer_drop(&h->closer);
}

static struct http_sock *
sock_new(struct http *h, curl_socket_t fd)
{
	struct http_sock	*s;
	int			 rc;

	s = xcalloc(1, sizeof(*s));
	rc = uv_poll_init_socket(h->loop, &s->poll, fd);
	if (rc != 0) {
		log_error("fd=%d: uv_poll_init_socket: %s", (int)fd,
		    uv_strerror(rc));
		free(s);
		return NULL;
	}
	s->h = h;
	s->fd = fd;
	h->pollers_made++;
	s->next = h->socks;
	if (s->next != NULL)
		s->next->prevp = &s->next;
	s->prevp = &h->socks;
	h->socks = s;
	return s;
}

/* Stop watching; the memory goes in on_sock_closed.  Never closes fd. */
static void
sock_close(struct http_sock *s)
{
	if (s->next != NULL)
		s->next->prevp = s->prevp;
	*s->prevp = s->next;
	closer_hold(&s->h->closer);
	uv_close((uv_handle_t *)&s->poll, on_sock_closed);
}

/* Close the pollers curl did not announce REMOVE for. */
static void
sock_close_all(struct http *h)
{
	while (h->socks != NULL)
		sock_close(h->socks);
}

static struct http_sock *
sock_find(struct http *h, curl_socket_t fd)
{
	struct http_sock	*s;

	for (s = h->socks; s != NULL; s = s->next)
		if (s->fd == fd)
			return s;
	return NULL;
}

/* Watch s for events (UV_READABLE|UV_WRITABLE), unless it already is. */
static void
sock_watch(struct http_sock *s, int events)
{
	int	 rc;

	if (events == s->events)
		return;
	s->h->poll_restarts++;
	if (events == 0)
		rc = uv_poll_stop(&s->poll);
	else
		rc = uv_poll_start(&s->poll, events, on_poll);
	if (rc != 0) {
		log_error("fd=%d: uv_poll_start: %s", (int)s->fd,
		    uv_strerror(rc));
		events = 0;
	}
	s->events = events;
}

/* CURLMOPT_SOCKETFUNCTION: no multi calls here except curl_multi_assign. */
static int
on_curl_socket(CURL *easy, curl_socket_t fd, int what, void *userp,
    void *socketp)
{
	struct http		*h = userp;
	struct http_sock	*s = socketp;
	int			 events = 0;

	(void)easy;
	if (what == CURL_POLL_REMOVE) {
		/* Kept, watched as it was, until the socket closes or is
		 * announced again: a pooled connection's next request. */
		if (s != NULL)
			s->assigned = false;
		return 0;
	}
	if (s == NULL) {
		/* After REMOVE curl may announce a pooled fd again.  On
		 * failure the transfer ends by its own timeout; -1 would
		 * abort every transfer. */
		s = sock_find(h, fd);
		if (s == NULL)
			s = sock_new(h, fd);
		if (s == NULL)
			return 0;
		curl_multi_assign(h->multi, fd, s);
	}
	s->assigned = true;
	if (what & CURL_POLL_IN)
		events |= UV_READABLE;
	if (what & CURL_POLL_OUT)
		events |= UV_WRITABLE;
	sock_watch(s, events);
	return 0;
}

int
http_close_socket(void *clientp, curl_socket_t fd)
{
	struct http		*h = clientp;
	struct http_sock	*s = sock_find(h, fd);

	/* The poller first: libuv removes fd from epoll on close. */
	if (s != NULL)
		sock_close(s);
	return close(fd);
}

/* CURLMOPT_TIMERFUNCTION: one-shot, each call replaces the previous one. */
static int
on_curl_timer(CURLM *multi, long ms, void *userp)
{
	struct http	*h = userp;

	uv_timer_stop(&h->timer);
	uv_idle_stop(&h->asap);
	/*
	 * "Now" runs from an idle handle, after this pass's I/O, without
	 * sleeping: a 0 ms timer can busy-loop before libuv 1.48, and the
	 * 1 ms that avoided it made every request sleep (and wake) once
	 * more (issue 25).
	 */
	if (ms == 0)
		uv_idle_start(&h->asap, on_asap);
	else if (ms > 0)
		uv_timer_start(&h->timer, on_timer, (uint64_t)ms, 0);
	return 0;
}

#ifdef TCP_CORK
/*
 * The pass after a submit sends its request on a pooled connection: each
 * idle one is corked for the pass, so that a request's TLS records (16 KiB
 * each, one send each) leave at its end as one segment, not one segment
 * and one wake-up of the peer each.  The pass ends by uncorking them, so
 * nothing waits longer than the pass.  Only for a body of more than one
 * record (CORK_BODY): a smaller request is one send anyway.  On loopback
 * at a 20 ms endpoint (bench paced-20) it cut the agent's preemptions by
 * 2/3, and its CPU by 2-7% (8 interleaved runs: 2%).  Returns how many
 * fds it corked into fds.
 */
#define CORK_MAX	16
#define CORK_BODY	(16 * 1024)	/* TLS's largest record */

static size_t
cork_idle(struct http *h, curl_socket_t *fds)
{
	struct http_sock	*s;
	size_t			 n = 0;
	int			 on = 1;

	for (s = h->socks; s != NULL && n < CORK_MAX; s = s->next)
		if (!s->assigned && setsockopt(s->fd, IPPROTO_TCP, TCP_CORK,
		    &on, sizeof(on)) == 0)
			fds[n++] = s->fd;
	return n;
}

/* A corked fd curl closed in the pass has no poller left (its number may
 * be a new socket's: uncorking that one changes nothing). */
static void
uncork(struct http *h, const curl_socket_t *fds, size_t n)
{
	size_t	 i;
	int	 off = 0;

	for (i = 0; i < n; i++)
		if (sock_find(h, fds[i]) != NULL)
			(void)setsockopt(fds[i], IPPROTO_TCP, TCP_CORK, &off,
			    sizeof(off));
}
#else
#define CORK_MAX	1
#define CORK_BODY	SIZE_MAX
#define cork_idle(h, fds)	((void)(fds), (size_t)0)
#define uncork(h, fds, n)	((void)0)
#endif

static void
on_asap(uv_idle_t *i)
{
	struct http	*h = container_of(i, struct http, asap);
	curl_socket_t	 fds[CORK_MAX];
	size_t		 n;

	uv_idle_stop(i);
	n = h->cork_next ? cork_idle(h, fds) : 0;
	h->cork_next = false;
	http_drive(h, CURL_SOCKET_TIMEOUT, 0);
	uncork(h, fds, n);
}

static void
on_timer(uv_timer_t *t)
{
	struct http	*h = container_of(t, struct http, timer);

	http_drive(h, CURL_SOCKET_TIMEOUT, 0);
}

static void
on_poll(uv_poll_t *p, int status, int events)
{
	struct http_sock	*s = container_of(p, struct http_sock, poll);
	/* Copy now: curl may announce REMOVE for s while we are in here. */
	struct http		*h = s->h;
	curl_socket_t		 fd = s->fd;
	int			 ev = 0;

	if (!s->assigned) {
		/* A pooled connection between requests: the peer closed it,
		 * or sent what nobody asked for.  curl sees it when it tries
		 * the connection next; polling on would only spin. */
		sock_watch(s, 0);
		return;
	}
	if (status < 0) {
		/* libuv stopped the poller (the next watch restarts it,
		 * whatever it asks); let curl fail the connection. */
		s->events = -1;
		h->poll_errors++;
		log_debug("fd=%d: %s", (int)fd, uv_strerror(status));
		ev = CURL_CSELECT_ERR;
	} else {
		if (events & UV_READABLE)
			ev |= CURL_CSELECT_IN;
		if (events & UV_WRITABLE)
			ev |= CURL_CSELECT_OUT;
	}
	http_drive(h, fd, ev);
}

/* The multi handle, its socket and timer callbacks on h's loop. */
static CURLM *
multi_new(struct http *h)
{
	CURLM		*m;
	CURLMcode	 mc;

	m = curl_multi_init();
	if (m == NULL) {
		log_error("curl_multi_init failed");
		return NULL;
	}
	mc = curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, on_curl_socket);
	if (mc == CURLM_OK)
		mc = curl_multi_setopt(m, CURLMOPT_SOCKETDATA, h);
	if (mc == CURLM_OK)
		mc = curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION,
		    on_curl_timer);
	if (mc == CURLM_OK)
		mc = curl_multi_setopt(m, CURLMOPT_TIMERDATA, h);
	if (mc == CURLM_OK && h->max_host_connections > 0)
		mc = curl_multi_setopt(m, CURLMOPT_MAX_HOST_CONNECTIONS,
		    h->max_host_connections);
	if (mc != CURLM_OK) {
		log_error("curl_multi_setopt: %s", curl_multi_strerror(mc));
		curl_multi_cleanup(m);
		return NULL;
	}
	return m;
}

/*
 * A transfer is done: read its results, take it out of the multi handle,
 * then report.  No curl callback is on the stack, so done may submit.
 */
static void
http_finish(struct http *h, CURL *easy, CURLcode rc)
{
	struct http_req		*r;
	struct http_response	 resp;
	char			*priv = NULL;
	CURLMcode		 mc;

	(void)curl_easy_getinfo(easy, CURLINFO_PRIVATE, &priv);
	r = (struct http_req *)(void *)priv;
	httpreq_response(&resp, r, rc);
	if (resp.result != HTTP_OK)
		log_debug("result=%d: %s", (int)resp.result, resp.error);
	mc = curl_multi_remove_handle(h->multi, easy);
	if (mc != CURLM_OK)
		log_warn("curl_multi_remove_handle: %s",
		    curl_multi_strerror(mc));
	req_unlink(h, r);
	r->easy = NULL;
	easy_put(h, easy);
	r->done(&resp, r->arg);
	req_free(r);
}

/* Take every request out of curl; returns them as a list on ->next. */
static struct http_req *
detach_all(struct http *h)
{
	struct http_req	*r, *list = NULL;

	while (h->reqs != NULL) {
		r = h->reqs;
		req_unlink(h, r);
		(void)curl_multi_remove_handle(h->multi, r->easy);
		curl_easy_cleanup(r->easy);
		r->easy = NULL;
		r->next = list;
		list = r;
	}
	return list;
}

/* Report result to every request on list, and free them. */
static void
notify_all(struct http_req *list, enum http_result result, const char *why)
{
	struct http_req		*r, *next;
	struct http_response	 resp;

	for (r = list; r != NULL; r = next) {
		next = r->next;
		memset(&resp, 0, sizeof(resp));
		resp.result = result;
		resp.error = why;
		resp.body = "";
		r->done(&resp, r->arg);
		req_free(r);
	}
}

/*
 * curl_multi_socket_action failed: that handle must not be driven again.
 * Fail what was in flight as a network error (retryable), and start over
 * with a fresh multi handle before telling anyone, so they may resubmit.
 */
static void
http_broken(struct http *h, CURLMcode mc)
{
	struct http_req	*list;

	h->multi_rebuilds++;
	log_error("curl_multi_socket_action: %s; failing %zu requests, "
	    "rebuild %lu", curl_multi_strerror(mc), h->ninflight,
	    h->multi_rebuilds);
	list = detach_all(h);
	curl_multi_cleanup(h->multi);
	h->multi = NULL;
	sock_close_all(h);
	uv_timer_stop(&h->timer);
	uv_idle_stop(&h->asap);
	h->multi = multi_new(h);
	if (h->multi == NULL)
		fatalx("http_broken: cannot rebuild the curl multi handle");
	notify_all(list, HTTP_ERR_NETWORK, "transfer aborted: curl failure");
}

static void
http_drive(struct http *h, curl_socket_t fd, int ev)
{
	CURLMsg		*m;
	CURL		*easy;
	CURLcode	 result;
	CURLMcode	 mc;
	int		 left;

	if (h->multi == NULL)
		return;
	mc = curl_multi_socket_action(h->multi, fd, ev, &h->running);
	if (mc != CURLM_OK) {
		http_broken(h, mc);
		return;
	}
	/* Drain even if running == 0: timeouts complete on the timer path. */
	for (;;) {
		if (h->closing)
			return;		/* a done callback closed us */
		m = curl_multi_info_read(h->multi, &left);
		if (m == NULL)
			break;
		if (m->msg != CURLMSG_DONE)
			continue;
		/* CURLMsg does not survive curl_multi_remove_handle. */
		easy = m->easy_handle;
		result = m->data.result;
		http_finish(h, easy, result);
	}
}

static char *
dup_or_null(const char *s)
{
	return s != NULL ? xstrdup(s) : NULL;
}

static void
copy_proxy(struct http *h, const struct http_opts *o)
{
	h->proxy = dup_or_null(o->proxy);
	h->proxy_user = dup_or_null(o->proxy_user);
	h->proxy_password = dup_or_null(o->proxy_user != NULL ?
	    o->proxy_password : NULL);
	h->noproxy = dup_or_null(o->noproxy);
}

struct http *
http_new(uv_loop_t *loop, const struct http_opts *opts)
{
	struct http	*h;
	int		 rc;

	h = xcalloc(1, sizeof(*h));
	h->loop = loop;
	h->ssl_verify = opts != NULL ? opts->ssl_verify : true;
	if (opts != NULL) {
		h->max_host_connections = opts->max_host_connections;
		if (opts->ca_file != NULL)
			h->ca_file = xstrdup(opts->ca_file);
		copy_proxy(h, opts);
	}
	h->multi = multi_new(h);
	if (h->multi == NULL)
		goto fail;
	rc = uv_timer_init(loop, &h->timer);
	if (rc != 0) {
		log_error("uv_timer_init: %s", uv_strerror(rc));
		goto fail;
	}
	(void)uv_idle_init(loop, &h->asap);	/* cannot fail */
	closer_init(&h->closer, http_freed);
	return h;

fail:
	if (h->multi != NULL)
		curl_multi_cleanup(h->multi);
	http_free(h);
	return NULL;
}

int
http_submit(struct http *h, const struct http_request *req, http_done_cb done,
    void *arg)
{
	struct http_req	*r;
	CURLMcode	 mc;
	int		 rc;

	if (h->closing)
		return UV_ECANCELED;
	if (req->url == NULL || done == NULL)
		return UV_EINVAL;
	r = xcalloc(1, sizeof(*r));
	buf_init(&r->body);
	r->done = done;
	r->arg = arg;
	r->max_response = req->max_response > 0 ? req->max_response :
	    DEFAULT_MAX_RESPONSE;
	r->wipe = req->wipe_response;
	if (r->wipe)	/* never grown, so no copy is left behind (buf_wipe) */
		buf_alloc_exact(&r->body, r->max_response);
	r->easy = easy_get(h);
	if (r->easy == NULL) {
		log_error("curl_easy_init failed");
		rc = UV_ENOMEM;
		goto fail;
	}
	rc = httpreq_setopts(h, r, req);
	if (rc != 0)
		goto fail;
	/* This arms our timer through on_curl_timer: no kick-start needed. */
	mc = curl_multi_add_handle(h->multi, r->easy);
	if (mc != CURLM_OK) {
		log_error("curl_multi_add_handle: %s",
		    curl_multi_strerror(mc));
		rc = UV_EIO;
		goto fail;
	}
	req_link(h, r);
	if (req->bodylen > CORK_BODY)
		h->cork_next = true;
	return 0;

fail:
	if (r->easy != NULL)
		curl_easy_cleanup(r->easy);
	req_free(r);
	return rc;
}

size_t
http_inflight(const struct http *h)
{
	return h->ninflight;
}

void
http_close(struct http *h, void (*closed)(void *), void *arg)
{
	struct http_req	*list;
	size_t		 i;

	if (h->closing) {
		log_error("already closing");
		return;
	}
	h->closing = true;
	h->closed = closed;
	h->closed_arg = arg;
	list = detach_all(h);
	notify_all(list, HTTP_ERR_CANCELLED, "cancelled: client closing");
	for (i = 0; i < h->nidle; i++)
		curl_easy_cleanup(h->idle[i]);
	h->nidle = 0;
	/* The timer is still alive: cleanup may call both callbacks. */
	curl_multi_cleanup(h->multi);
	h->multi = NULL;
	sock_close_all(h);
	closer_close(&h->closer, (uv_handle_t *)&h->timer);
	closer_close(&h->closer, (uv_handle_t *)&h->asap);
	closer_release(&h->closer);
}

int
http_global_init(void)
{
	CURLcode	 c;

	c = curl_global_init(CURL_GLOBAL_DEFAULT);
	if (c != CURLE_OK) {
		log_error("curl_global_init: %s", curl_easy_strerror(c));
		return UV_EIO;
	}
	return 0;
}

void
http_global_cleanup(void)
{
	curl_global_cleanup();
}
