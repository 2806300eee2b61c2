/*
 * The agent's HTTP server (httpListen): GET /healthz, /metrics, /status,
 * served by libmicrohttpd on threads of its own, with every answer made
 * by the loop.  A request's thread hands it to the loop (uv_async_send)
 * and waits, at most until the loop has not answered for healthStallSeconds
 * -- then /healthz says 503, the loop is stalled -- so a waiting agent
 * is not woken when nobody asks, and a stuck loop is seen from outside it.
 * httpd.c says why it is built so.
 */
#ifndef DISAGENT_HTTPD_H
#define DISAGENT_HTTPD_H

#include <uv.h>

#include "base/util.h"

/* Connections served at once; more are closed as they come. */
#define HTTPD_MAX_CONNECTIONS	16

enum httpd_page {
	HTTPD_HEALTH,		/* /healthz: text, one line */
	HTTPD_METRICS,		/* /metrics: Prometheus text */
	HTTPD_STATUS,		/* /status: JSON */
};

/*
 * Made on the loop, for a request: append page's body to out and return
 * its HTTP status (200, or 503 with a one-line reason for /healthz).
 */
typedef int	(*httpd_page_cb)(enum httpd_page, struct buf *out, void *arg);

struct httpd;

/*
 * A new server listening on addr (listenaddr.h), whose pages page makes on
 * loop with arg (borrowed: they outlive it); stall_s as healthStallSeconds.
 * NULL with a negative errno in *err when it cannot listen, or -ELIBACC
 * when libmicrohttpd cannot be loaded (logged; conf_load checks it first:
 * base/mhdlib.h).
 */
struct httpd	*httpd_new(uv_loop_t *, const char *addr, int stall_s,
		    httpd_page_cb page, void *arg, int *err);
/* healthStallSeconds changed (a reload). */
void		 httpd_set_stall(struct httpd *, int stall_s);
/* The address it listens on (borrowed, valid until httpd_close). */
const char	*httpd_addr(const struct httpd *);
/* Requests waiting for the loop now: those it has not answered (a test
 * waits for one before it closes the server). */
size_t		 httpd_queued(struct httpd *);
/*
 * Stop listening, answer the requests still waiting with 503 (waiting up
 * to a second for the replies in hand to go out) and end its threads
 * (this waits for them), then close its loop handle; the memory goes in
 * the close callback.  NULL is fine.
 */
void		 httpd_close(struct httpd *);

#endif
