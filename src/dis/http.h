/*
 * Asynchronous HTTP(S) over libcurl's multi interface, driven by libuv
 * (uv_poll_t per socket, one uv_timer_t).  Knows nothing about DIS.
 * Callers need no curl: only http.c, httpreq.c and their shared
 * http_int.h include <curl/curl.h>.
 */
#ifndef DISAGENT_HTTP_H
#define DISAGENT_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include <uv.h>

#include "base/util.h"

struct http;

struct http_opts {
	const char	*ca_file;	/* extra CA bundle, or NULL */
	bool		 ssl_verify;	/* peer and host verification */
	long		 max_host_connections;	/* 0 = curl default */
	/*
	 * The proxy, "http://host:port" or "https://host:port" (copied);
	 * NULL: libcurl's environment (https_proxy, no_proxy); "": none.
	 */
	const char	*proxy;
	const char	*proxy_user;	/* NULL: no proxy authentication */
	const char	*proxy_password;	/* copied; zeroed at close */
	const char	*noproxy;	/* hosts reached directly, or NULL */
};

/* Transport outcome of a request, passed to the done callback. */
enum http_result {
	HTTP_OK = 0,		/* a response arrived (any status) */
	HTTP_ERR_TIMEOUT,	/* connect or total timeout */
	HTTP_ERR_CONNECT,	/* could not connect / resolve */
	HTTP_ERR_TLS,		/* certificate or handshake */
	HTTP_ERR_NETWORK,	/* reset, closed mid-response, ... */
	HTTP_ERR_TOOBIG,	/* response body over the cap */
	HTTP_ERR_CANCELLED,	/* http_close() with the request in flight */
	HTTP_ERR_OTHER,
};

struct http_response {
	enum http_result result;
	const char	*error;		/* human text for result != HTTP_OK */
	/* HTTP status when result == HTTP_OK; 407 also when the proxy
	 * refused to open the tunnel (CONNECT: 407, or 401) for want of
	 * (other) credentials. */
	long		 status;
	const char	*body;		/* borrowed, valid during the callback */
	size_t		 bodylen;
	double		 seconds;	/* total time */
};

/*
 * Called exactly once per submitted request, never from inside a curl
 * callback, so it may submit again.
 */
typedef void	(*http_done_cb)(const struct http_response *, void *arg);

struct http_request {
	const char	*method;	/* "GET", "POST" */
	const char	*url;
	const char *const *headers;	/* "Name: value" strings */
	size_t		 nheaders;
	const void	*body;		/* borrowed: must live until done */
	size_t		 bodylen;
	long		 connect_timeout_ms;
	long		 timeout_ms;	/* whole request */
	size_t		 max_response;	/* body cap; 0 = 1 MiB */
	bool		 wipe_response;	/* zero the body before it is freed */
};

/* New client on loop; NULL on failure (logged). */
struct http	*http_new(uv_loop_t *, const struct http_opts *);

/*
 * Start a request.  Headers are copied; the body is borrowed.  Returns 0,
 * or a negative errno (then done is not called).
 */
int	http_submit(struct http *, const struct http_request *, http_done_cb,
	    void *arg) WARN_UNUSED;

/* Requests in flight. */
size_t	http_inflight(const struct http *);

/*
 * Cancel everything in flight (each done_cb gets HTTP_ERR_CANCELLED), tear
 * down curl, close the libuv handles, and call closed(arg) once every handle
 * is closed; then free.  The struct must not be used after this call.
 */
void	http_close(struct http *, void (*closed)(void *), void *arg);

/* Process-wide curl setup and teardown (main and tests call these once). */
int	http_global_init(void);
void	http_global_cleanup(void);

#endif
