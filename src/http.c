/*
 * The HTTP client: libcurl's multi interface driven by a libuv loop.  One
 * long-lived CURLM per client pools connections for keep-alive; curl tells
 * us which sockets to watch (a uv_poll_t each, struct http_sock) and when to
 * wake it up (one uv_timer_t).  Every socket_action is followed by draining
 * curl_multi_info_read, and finished transfers are reported from
 * http_finish(), outside any curl callback, so done callbacks may submit
 * again.  Memory of a uv handle is freed only in its close callback.  This
 * is the only file that includes <curl/curl.h>.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <uv.h>

#include "http.h"
#include "log.h"
#include "util.h"

#define DEFAULT_MAX_RESPONSE	(1024 * 1024)
#define IDLE_EASY_MAX		16	/* easy handles kept for reuse */

struct http_sock {
	uv_poll_t		 poll;
	struct http		*h;
	curl_socket_t		 fd;
	struct http_sock	*next;
	struct http_sock	**prevp;
};

struct http_req {
	CURL			*easy;
	struct curl_slist	*headers;	/* owned, outlives transfer */
	struct buf		 body;		/* response body */
	size_t			 max_response;
	bool			 toobig;
	bool			 wipe;		/* the body holds secrets */
	http_done_cb		 done;
	void			*arg;
	struct http_req		*next;
	struct http_req		**prevp;
	char			 errbuf[CURL_ERROR_SIZE];
};

struct http {
	uv_loop_t		*loop;
	CURLM			*multi;
	uv_timer_t		 timer;
	int			 running;
	char			*ca_file;
	bool			 ssl_verify;
	char			*proxy;		/* NULL: libcurl's default */
	char			*proxy_user;
	char			*proxy_password;	/* zeroed before free */
	char			*noproxy;
	long			 max_host_connections;
	struct http_req		*reqs;		/* in flight */
	size_t			 ninflight;
	struct http_sock	*socks;		/* pollers not yet closing */
	CURL			*idle[IDLE_EASY_MAX];
	size_t			 nidle;
	size_t			 npending_close;
	bool			 closing;
	void			(*closed)(void *);
	void			*closed_arg;
	unsigned long		 poll_errors;
	unsigned long		 multi_rebuilds;
};

static void	http_drive(struct http *, curl_socket_t, int);
static void	on_poll(uv_poll_t *, int, int);
static void	on_timer(uv_timer_t *);

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
	if (r->wipe && r->body.data != NULL)
		explicit_bzero(r->body.data, r->body.cap);
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
	if (h->proxy_password != NULL)
		explicit_bzero(h->proxy_password, strlen(h->proxy_password));
	free(h->proxy_password);
	free(h->noproxy);
	free(h);
}

static void
http_maybe_done(struct http *h)
{
	if (!h->closing || h->npending_close > 0)
		return;
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
	h->npending_close--;
	http_maybe_done(h);
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
	s->h->npending_close++;
	uv_close((uv_handle_t *)&s->poll, on_sock_closed);
}

/* Close the pollers curl did not announce REMOVE for. */
static void
sock_close_all(struct http *h)
{
	while (h->socks != NULL)
		sock_close(h->socks);
}

/* CURLMOPT_SOCKETFUNCTION: no multi calls here except curl_multi_assign. */
static int
on_curl_socket(CURL *easy, curl_socket_t fd, int what, void *userp,
    void *socketp)
{
	struct http		*h = userp;
	struct http_sock	*s = socketp;
	int			 events = 0, rc;

	if (what == CURL_POLL_REMOVE) {
		if (s != NULL)
			sock_close(s);
		return 0;
	}
	if (s == NULL) {
		/*
		 * A fresh poller each time: after REMOVE curl may announce
		 * a pooled fd again.  On failure the transfer ends by its
		 * own timeout; -1 would abort every transfer.
		 */
		s = sock_new(h, fd);
		if (s == NULL)
			return 0;
		curl_multi_assign(h->multi, fd, s);
	}
	if (what & CURL_POLL_IN)
		events |= UV_READABLE;
	if (what & CURL_POLL_OUT)
		events |= UV_WRITABLE;
	if (events == 0)
		rc = uv_poll_stop(&s->poll);
	else
		rc = uv_poll_start(&s->poll, events, on_poll);
	if (rc != 0)
		log_error("fd=%d: uv_poll_start: %s", (int)fd,
		    uv_strerror(rc));
	return 0;
}

/* CURLMOPT_TIMERFUNCTION: one-shot, each call replaces the previous one. */
static int
on_curl_timer(CURLM *multi, long ms, void *userp)
{
	struct http	*h = userp;

	if (ms < 0) {
		uv_timer_stop(&h->timer);
		return 0;
	}
	/* Before libuv 1.48 a 0 ms timer can busy-loop; curl never minds 1. */
	if (ms == 0 && uv_version() < ((1 << 16) | (48 << 8)))
		ms = 1;
	uv_timer_start(&h->timer, on_timer, (uint64_t)ms, 0);
	return 0;
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

	if (status < 0) {
		/* libuv stopped the poller; let curl fail the connection. */
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

/* CURLOPT_WRITEFUNCTION: collect the body up to the request's cap. */
static size_t
on_write(char *ptr, size_t size, size_t nmemb, void *userp)
{
	struct http_req	*r = userp;
	size_t		 n = size * nmemb;

	if (n > r->max_response - r->body.len) {
		r->toobig = true;
		return 0;	/* curl ends the transfer: CURLE_WRITE_ERROR */
	}
	buf_add(&r->body, ptr, n);
	return n;
}

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

static enum http_result
map_result(CURLcode rc, bool toobig)
{
	switch (rc) {
	case CURLE_OK:
		return HTTP_OK;
	case CURLE_WRITE_ERROR:
		return toobig ? HTTP_ERR_TOOBIG : HTTP_ERR_OTHER;
	case CURLE_FILESIZE_EXCEEDED:
		return HTTP_ERR_TOOBIG;
	case CURLE_OPERATION_TIMEDOUT:
		return HTTP_ERR_TIMEOUT;
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
		return HTTP_ERR_CONNECT;
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CRL_BADFILE:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
	case CURLE_SSL_INVALIDCERTSTATUS:
	case CURLE_USE_SSL_FAILED:
#if LIBCURL_VERSION_NUM >= 0x074d00
	case CURLE_SSL_CLIENTCERT:
#endif
		return HTTP_ERR_TLS;
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_WEIRD_SERVER_REPLY:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return HTTP_ERR_NETWORK;
	default:
		return HTTP_ERR_OTHER;
	}
}

/*
 * A proxy that wants (other) credentials answers CONNECT with 407 (some,
 * like tinyproxy 1.11 for a wrong password, with 401: only the proxy can
 * answer a CONNECT) and curl fails the transfer: report 407 as the status,
 * as a proxy in front of a plain-HTTP endpoint does, so that it is
 * classified as the proxy's refusal instead of being retried blind.
 */
static void
proxy_refused(struct http_response *resp, struct http_req *r, CURLcode rc)
{
	long	 code = 0;

	if (rc == CURLE_OK || curl_easy_getinfo(r->easy,
	    CURLINFO_HTTP_CONNECTCODE, &code) != CURLE_OK ||
	    (code != 407 && code != 401))
		return;
	resp->result = HTTP_OK;
	resp->status = 407;
}

/* Everything the done callback sees; read before the handle is removed. */
static void
response_fill(struct http_response *resp, struct http_req *r, CURLcode rc)
{
	curl_off_t	 us = 0;
	long		 status = 0;

	memset(resp, 0, sizeof(*resp));
	resp->result = map_result(rc, r->toobig);
	(void)curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
	(void)curl_easy_getinfo(r->easy, CURLINFO_TOTAL_TIME_T, &us);
	resp->status = status;
	resp->seconds = (double)us / 1e6;
	resp->body = r->body.data != NULL ? r->body.data : "";
	resp->bodylen = r->body.len;
	proxy_refused(resp, r, rc);
	if (resp->result == HTTP_ERR_TOOBIG)
		snprintf(r->errbuf, sizeof(r->errbuf),
		    "response body over %zu bytes", r->max_response);
	else if (rc != CURLE_OK && r->errbuf[0] == '\0')
		snprintf(r->errbuf, sizeof(r->errbuf), "%s",
		    curl_easy_strerror(rc));
	if (resp->result != HTTP_OK)
		resp->error = r->errbuf;
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
	response_fill(&resp, r, rc);
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
	return h;

fail:
	if (h->multi != NULL)
		curl_multi_cleanup(h->multi);
	http_free(h);
	return NULL;
}

/* Copy the caller's headers; an empty "Expect:" disables 100-continue. */
static void
req_headers(struct http_req *r, const struct http_request *req)
{
	struct curl_slist	*l;
	size_t			 i;

	for (i = 0; i <= req->nheaders; i++) {
		l = curl_slist_append(r->headers,
		    i < req->nheaders ? req->headers[i] : "Expect:");
		if (l == NULL)
			fatalx("req_headers: out of memory");
		r->headers = l;
	}
}

#define SETOPT(c, e, opt, val)						\
	do {								\
		if ((c) == CURLE_OK)					\
			(c) = curl_easy_setopt((e), (opt), (val));	\
	} while (0)

static CURLcode
req_set_method(CURL *e, const struct http_request *req)
{
	CURLcode	 c = CURLE_OK;
	const char	*method = req->method;

	if (method == NULL)
		method = req->body != NULL ? "POST" : "GET";
	if (strcmp(method, "GET") == 0) {
		SETOPT(c, e, CURLOPT_HTTPGET, 1L);
		return c;
	}
	/* Never NULL: curl would read the body from stdin. */
	SETOPT(c, e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->bodylen);
	SETOPT(c, e, CURLOPT_POSTFIELDS, req->body != NULL ? req->body : "");
	if (strcmp(method, "POST") != 0)
		SETOPT(c, e, CURLOPT_CUSTOMREQUEST, method);
	return c;
}

/* The proxy settings; without any, curl reads https_proxy and no_proxy. */
static CURLcode
req_set_proxy(struct http *h, CURL *e)
{
	CURLcode	 c = CURLE_OK;

	if (h->proxy == NULL)
		return c;
	SETOPT(c, e, CURLOPT_PROXY, h->proxy);
	SETOPT(c, e, CURLOPT_PROXY_SSL_VERIFYPEER, h->ssl_verify ? 1L : 0L);
	SETOPT(c, e, CURLOPT_PROXY_SSL_VERIFYHOST, h->ssl_verify ? 2L : 0L);
	if (h->noproxy != NULL)
		SETOPT(c, e, CURLOPT_NOPROXY, h->noproxy);
	if (h->proxy_user == NULL)
		return c;
	/* Basic, Digest or NTLM, whichever the proxy offers. */
	SETOPT(c, e, CURLOPT_PROXYAUTH, (long)CURLAUTH_ANY);
	SETOPT(c, e, CURLOPT_PROXYUSERNAME, h->proxy_user);
	SETOPT(c, e, CURLOPT_PROXYPASSWORD, h->proxy_password);
	return c;
}

static int
req_setopts(struct http *h, struct http_req *r, const struct http_request *req)
{
	CURL		*e = r->easy;
	CURLcode	 c = CURLE_OK;

	SETOPT(c, e, CURLOPT_URL, req->url);
	SETOPT(c, e, CURLOPT_PRIVATE, r);
	SETOPT(c, e, CURLOPT_NOSIGNAL, 1L);
#if LIBCURL_VERSION_NUM >= 0x075500
	SETOPT(c, e, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	SETOPT(c, e, CURLOPT_PROTOCOLS,
	    (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	if (req->connect_timeout_ms > 0)
		SETOPT(c, e, CURLOPT_CONNECTTIMEOUT_MS,
		    req->connect_timeout_ms);
	if (req->timeout_ms > 0)
		SETOPT(c, e, CURLOPT_TIMEOUT_MS, req->timeout_ms);
	SETOPT(c, e, CURLOPT_TCP_KEEPALIVE, 1L);
	SETOPT(c, e, CURLOPT_HTTPHEADER, r->headers);
	SETOPT(c, e, CURLOPT_WRITEFUNCTION, on_write);
	SETOPT(c, e, CURLOPT_WRITEDATA, r);
	SETOPT(c, e, CURLOPT_ERRORBUFFER, r->errbuf);
	/* Refuse early when Content-Length already says too big. */
	SETOPT(c, e, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)r->max_response);
	SETOPT(c, e, CURLOPT_SSL_VERIFYPEER, h->ssl_verify ? 1L : 0L);
	SETOPT(c, e, CURLOPT_SSL_VERIFYHOST, h->ssl_verify ? 2L : 0L);
	if (h->ca_file != NULL)
		SETOPT(c, e, CURLOPT_CAINFO, h->ca_file);
	if (c == CURLE_OK)
		c = req_set_proxy(h, e);
	if (c == CURLE_OK)
		c = req_set_method(e, req);
	if (c != CURLE_OK) {
		log_error("curl_easy_setopt: %s", curl_easy_strerror(c));
		return UV_EINVAL;
	}
	return 0;
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
	r->easy = easy_get(h);
	if (r->easy == NULL) {
		log_error("curl_easy_init failed");
		rc = UV_ENOMEM;
		goto fail;
	}
	req_headers(r, req);
	rc = req_setopts(h, r, req);
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

static void
on_timer_closed(uv_handle_t *handle)
{
	struct http	*h = container_of(handle, struct http, timer);

	h->npending_close--;
	http_maybe_done(h);
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
	h->npending_close++;
	uv_close((uv_handle_t *)&h->timer, on_timer_closed);
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
