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
#include <stdint.h>

#include "base/util.h"
#include "dis/http.h"
#include "wire/signer.h"

struct conf;
struct disapi;

#define DISAPI_JSON	"application/json; charset=utf-8"

/*
 * A client for conf's endpoint and project over http (both borrowed; they
 * outlive it).  The keys start as conf's ak, sk and security.token (none
 * with credentialSource = ecs-metadata, until disapi_set_keys).
 */
struct disapi	*disapi_new(struct http *, const struct conf *);
void		 disapi_free(struct disapi *);

/*
 * The HTTP client for conf on loop (caFile, sslVerify and every other
 * transport option agent.ini has), at most max_conns connections per host
 * (0: curl's default), into *httpp, and a DIS client on it (returned).
 * Both are new; the agent and the read-back commands build theirs here, so
 * they reach DIS the same way.  Fatal when curl cannot be set up.
 */
struct disapi	*disapi_open(uv_loop_t *, const struct conf *, long max_conns,
		    struct http **httpp);
/* disapi_open's HTTP client alone (new). */
struct http	*disapi_http_new(uv_loop_t *, const struct conf *,
		    long max_conns);

/*
 * A reload changed the endpoint, the keys, the proxy or the CA: calls from
 * now on go to conf's endpoint and project over http, signed with conf's
 * keys (conf and http borrowed; they outlive d).  Calls already on the
 * wire finish on the client they were sent on, with their reply as usual;
 * one that client cancels (closed under it) reaches its callback as
 * HTTP_ERR_NETWORK, so the caller sends it again, on the new client --
 * never as HTTP_ERR_CANCELLED, which callers take for their own stop.
 * Returns the previous client: the caller closes it once http_inflight
 * is 0 (or at its deadline), and frees d only after that close is done.
 */
struct http	*disapi_rebind(struct disapi *, struct http *,
		    const struct conf *);

/*
 * Sign with these keys from now on (copied; the previous copies are zeroed
 * before they are freed).  token (X-Security-Token, signed) may be NULL.
 */
void		 disapi_set_keys(struct disapi *, const char *ak,
		    const char *sk, const char *token);

/*
 * Temporary keys: from mono_ms() == deadline on (0: never) there are no
 * valid keys, as before the first disapi_set_keys with a non-empty ak.
 * Then disapi_send fails with -EKEYEXPIRED, nothing is sent, and
 * disapi_key_error says why: the text of the last disapi_set_key_error
 * (copied; NULL clears it), or a generic one.
 */
void		 disapi_set_expiry(struct disapi *, uint64_t deadline);
void		 disapi_set_key_error(struct disapi *, const char *why);
const char	*disapi_key_error(const struct disapi *);

/*
 * cb(arg) whenever DIS answers HTTP 401 or 441 (authentication), before the
 * caller's done callback sees the reply; NULL: none.  cb returns whether
 * new keys are being fetched because of it: disapi_renewing is true from
 * then until the next disapi_set_keys or disapi_set_key_error.
 */
void		 disapi_on_auth_failure(struct disapi *, bool (*cb)(void *),
		    void *arg);
bool		 disapi_renewing(const struct disapi *);

/*
 * What this run learnt of the endpoint and protobuf PutRecords bodies
 * (body.serialize.type = auto), for every flow: it acknowledged one
 * (disapi_protobuf_taken), or refused one (disapi_protobuf_refused, which
 * logs why at INFO, the first time only).  disapi_protobuf_ok: none was
 * refused; *taken (when not NULL): one was acknowledged.
 */
void		 disapi_protobuf_taken(struct disapi *);
void		 disapi_protobuf_refused(struct disapi *, const char *why);
bool		 disapi_protobuf_ok(const struct disapi *, bool *taken);

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
 * returns a negative errno (nothing was sent then): -EKEYEXPIRED when there
 * are no valid keys (disapi_key_error), or http_submit's error.
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
