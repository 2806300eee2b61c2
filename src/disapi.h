/*
 * A signed DIS API call: the endpoint from agent.ini, the path under
 * /v2/{project_id}/, SDK-HMAC-SHA256 (DIS-scoped) over exactly what is sent,
 * and the request handed to http.  Every DIS request of the agent and of the
 * read-back commands goes through here, so the headers, the Host rule and
 * the credentials are the same everywhere.  Knows no DIS operation.
 */
#ifndef DISAGENT_DISAPI_H
#define DISAGENT_DISAPI_H

#include <stddef.h>

#include "http.h"
#include "signer.h"
#include "util.h"

struct conf;
struct disapi;

#define DISAPI_JSON	"application/json; charset=utf-8"

/*
 * A client for conf's endpoint and project over http (both borrowed; they
 * outlive it).  The keys start as conf's ak/sk (no security token).
 */
struct disapi	*disapi_new(struct http *, const struct conf *);
void		 disapi_free(struct disapi *);

/*
 * Sign with these keys from now on (copied; the previous copies are zeroed
 * before they are freed).  token (X-Security-Token, signed) may be NULL.
 */
void		 disapi_set_keys(struct disapi *, const char *ak,
		    const char *sk, const char *token);

struct disapi_call {
	const char	*method;	/* "GET", "POST" */
	const char	*path;		/* under /v2/{project_id}/: "records/" */
	const char	*query;		/* "k=v&k=v", unencoded, or NULL */
	const char	*ctype;		/* Content-Type; NULL: DISAPI_JSON */
	const void	*body;		/* borrowed until done; may be NULL */
	size_t		 bodylen;
	const struct sign_header *extra;	/* more headers, all signed */
	size_t		 nextra;		/* at most 4 */
	long		 timeout_ms;	/* 0: socketTimeOutSeconds */
	size_t		 max_response;	/* 0: 4 MiB */
};

/*
 * Sign and start the call; done(arg) is called exactly once unless this
 * returns a negative errno (nothing was sent then).
 */
int		 disapi_send(struct disapi *, const struct disapi_call *,
		    http_done_cb, void *arg) WARN_UNUSED;

/*
 * Hand every call to submit(ctx, ...) instead of http_submit: the seam a
 * test uses to capture requests and answer them (from a timer, never
 * inside submit, as http does).  submit NULL: http_submit again.
 */
typedef int	(*disapi_submit_fn)(void *ctx, const struct http_request *,
		    http_done_cb, void *arg);
void		 disapi_set_transport(struct disapi *, disapi_submit_fn submit,
		    void *ctx);

/* "host" or "host:port" as sent in Host (and signed). */
const char	*disapi_host(const struct disapi *);

#endif
