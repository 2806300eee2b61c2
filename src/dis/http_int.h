/*
 * The HTTP client's inside, shared by http.c (curl multi on libuv) and
 * httpreq.c (one request's easy handle).  Nothing else includes it.
 */
#ifndef DISAGENT_HTTP_INT_H
#define DISAGENT_HTTP_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <curl/curl.h>
#include <uv.h>

#include "base/closer.h"
#include "base/util.h"
#include "dis/http.h"

#define DEFAULT_MAX_RESPONSE	(1024 * 1024)
#define IDLE_EASY_MAX		16	/* easy handles kept for reuse */

struct http_sock {
	uv_poll_t		 poll;
	struct http		*h;
	curl_socket_t		 fd;
	int			 events;	/* UV_READABLE|UV_WRITABLE on */
	bool			 assigned;	/* curl watches fd through it */
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
	uv_idle_t		 asap;		/* curl's 0 ms timeout: this loop pass */
	bool			 cork_next;	/* that pass sends a body of
						   several TLS records */
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
	struct http_sock	*socks;		/* pollers not yet closing: one
						   per socket, from its first
						   announce to its close */
	unsigned long		 pollers_made;	/* sock_new() calls */
	unsigned long		 poll_restarts;	/* uv_poll_start/stop calls */
	CURL			*idle[IDLE_EASY_MAX];
	size_t			 nidle;
	struct closer		 closer;	/* the pollers and timer
						   being closed */
	bool			 closing;
	void			(*closed)(void *);
	void			*closed_arg;
	unsigned long		 poll_errors;
	unsigned long		 multi_rebuilds;
};

/* Set up r's easy handle (its header list included) for req on h; 0 or a
 * negative errno. */
int	httpreq_setopts(struct http *, struct http_req *,
	    const struct http_request *);
/* CURLOPT_CLOSESOCKETFUNCTION (clientp: the struct http): the socket's
 * poller goes, then the socket. */
int	http_close_socket(void *, curl_socket_t);
/* What r's transfer ended with (rc), for its done callback. */
void	httpreq_response(struct http_response *, struct http_req *, CURLcode);

#endif
