/*
 * Signed DIS API calls (dis-api.md section 6): Content-Type, Host,
 * X-Project-Id and X-Sdk-Date (plus X-Security-Token with temporary keys and
 * the caller's extra headers) are signed and sent exactly as signed; the
 * query string in the URL is the canonical one.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "conf/conf.h"
#include "dis/disapi.h"
#include "dis/proxy.h"

#define MIB		(1024 * 1024)
#define MAX_EXTRA	4
#define MAX_HEADERS	(5 + MAX_EXTRA)

struct disapi {
	struct http	*http;
	const struct conf *conf;
	char		*base;		/* endpoint without trailing '/' */
	char		*host;		/* Host header, signed as sent */
	char		*prefix;	/* "/v2/{project_id}/" */
	char		*ak;
	char		*sk;		/* never logged */
	char		*token;		/* X-Security-Token, or NULL */
	uint64_t	 expires;	/* mono_ms of key expiry; 0: never */
	char		*key_error;	/* why there are no valid keys */
	bool		(*auth_cb)(void *);
	void		*auth_arg;
	bool		 renewing;	/* auth_cb is fetching new keys */
	uint64_t	 keys;		/* generation: +1 at each set_keys */
	bool		 stale_reply;	/* in a done callback: refused keys
					   that were replaced meanwhile */
	disapi_submit_fn submit;	/* NULL: http_submit */
	void		*submit_ctx;
	bool		 protobuf_taken;	/* acknowledged this run */
	bool		 protobuf_refused;	/* refused this run */
};

/* A call whose reply is looked at (auth_cb, a replaced client) before
 * the caller's. */
struct call {
	struct disapi	*d;
	struct http	*http;		/* the client it was sent on */
	http_done_cb	 cb;
	void		*arg;
	uint64_t	 keys;		/* the keys' generation it was signed
					   with */
};

/* "https://h:443/x" -> "h" ; "https://h:8443" -> "h:8443" */
static char *
host_of(const char *endpoint)
{
	const char	*p, *end;
	char		*h;
	size_t		 n;
	bool		 tls;

	tls = strncmp(endpoint, "https://", 8) == 0;
	p = strstr(endpoint, "://");
	p = p ? p + 3 : endpoint;
	end = strchr(p, '/');
	n = end ? (size_t)(end - p) : strlen(p);
	h = xstrndup(p, n);
	n = strlen(h);
	if (tls && n > 4 && strcmp(h + n - 4, ":443") == 0)
		h[n - 4] = '\0';
	else if (!tls && n > 3 && strcmp(h + n - 3, ":80") == 0)
		h[n - 3] = '\0';
	return h;
}

/* Endpoint, Host, project and keys from conf. */
static void
bind_conf(struct disapi *d, struct http *http, const struct conf *conf)
{
	const char	*ep = conf->endpoint;
	size_t		 n = strlen(ep);

	while (n > 0 && ep[n - 1] == '/')
		n--;
	free(d->base);
	free(d->host);
	free(d->prefix);
	d->http = http;
	d->conf = conf;
	d->base = xstrndup(ep, n);
	d->host = host_of(ep);
	d->prefix = xasprintf("/v2/%s/", conf->project_id);
	disapi_set_keys(d, conf->ak, conf->sk, conf->security_token);
	d->expires = 0;
	free(d->key_error);
	d->key_error = NULL;
}

struct disapi *
disapi_new(struct http *http, const struct conf *conf)
{
	struct disapi	*d;

	d = xcalloc(1, sizeof(*d));
	bind_conf(d, http, conf);
	return d;
}

struct http *
disapi_http_new(uv_loop_t *loop, const struct conf *conf, long max_conns)
{
	struct http_opts ho;
	struct proxy_strings ps;
	struct http	*h;

	memset(&ho, 0, sizeof(ho));
	ho.ca_file = conf->ca_file[0] ? conf->ca_file : NULL;
	ho.ssl_verify = conf->ssl_verify;
	ho.max_host_connections = max_conns;
	proxy_init(&ps, conf, &ho);	/* PROXY_*, NON_PROXY_HOSTS */
	h = http_new(loop, &ho);
	proxy_cleanup(&ps);
	if (h == NULL)
		fatalx("cannot set up the HTTP client");
	return h;
}

struct disapi *
disapi_open(uv_loop_t *loop, const struct conf *conf, long max_conns,
    struct http **httpp)
{
	*httpp = disapi_http_new(loop, conf, max_conns);
	return disapi_new(*httpp, conf);
}

struct http *
disapi_rebind(struct disapi *d, struct http *http, const struct conf *conf)
{
	struct http	*old = d->http;

	bind_conf(d, http, conf);
	d->renewing = false;
	return old;
}

void
disapi_free(struct disapi *d)
{
	if (d == NULL)
		return;
	secret_free(d->ak);
	secret_free(d->sk);
	secret_free(d->token);
	free(d->key_error);
	free(d->base);
	free(d->host);
	free(d->prefix);
	free(d);
}

void
disapi_set_keys(struct disapi *d, const char *ak, const char *sk,
    const char *token)
{
	secret_free(d->ak);
	secret_free(d->sk);
	secret_free(d->token);
	d->ak = xstrdup(ak != NULL ? ak : "");
	d->sk = xstrdup(sk != NULL ? sk : "");
	d->token = token != NULL && token[0] != '\0' ? xstrdup(token) : NULL;
	d->renewing = false;
	d->keys++;
}

void
disapi_set_expiry(struct disapi *d, uint64_t deadline)
{
	d->expires = deadline;
}

void
disapi_set_key_error(struct disapi *d, const char *why)
{
	free(d->key_error);
	d->key_error = why != NULL ? xstrdup(why) : NULL;
	d->renewing = false;
}

const char *
disapi_key_error(const struct disapi *d)
{
	if (d->key_error != NULL)
		return d->key_error;
	return d->ak[0] == '\0' ? "no credentials yet" :
	    "the temporary credentials expired";
}

void
disapi_on_auth_failure(struct disapi *d, bool (*cb)(void *), void *arg)
{
	d->auth_cb = cb;
	d->auth_arg = arg;
}

bool
disapi_renewing(const struct disapi *d)
{
	/* A refusal of keys replaced since the request went out says
	 * nothing about the new ones: resend, as while renewing. */
	return d->renewing || d->stale_reply;
}

void
disapi_protobuf_taken(struct disapi *d)
{
	d->protobuf_taken = true;
}

void
disapi_protobuf_refused(struct disapi *d, const char *why)
{
	if (d->protobuf_refused)
		return;
	d->protobuf_refused = true;
	log_info("%s refused a protobuf PutRecords (%s): JSON bodies from "
	    "now on (body.serialize.type = auto)", d->base, why);
}

bool
disapi_protobuf_ok(const struct disapi *d, bool *taken)
{
	if (taken != NULL)
		*taken = d->protobuf_taken;
	return !d->protobuf_refused;
}

static bool
keys_valid(const struct disapi *d)
{
	return d->ak[0] != '\0' && (d->expires == 0 || mono_ms() < d->expires);
}

static void
on_call_done(const struct http_response *r, void *arg)
{
	struct call	 c = *(struct call *)arg;
	struct http_response resent;

	free(arg);
	if (r->result == HTTP_ERR_CANCELLED && c.http != c.d->http) {
		/* Its client was replaced (a reload) and closed under it:
		 * a transport failure to the caller, which sends it again,
		 * on the new client. */
		resent = *r;
		resent.result = HTTP_ERR_NETWORK;
		resent.error = "the HTTP client was replaced (reload) before "
		    "the reply; sending again";
		r = &resent;
	}
	if (r->result == HTTP_OK && (r->status == 401 || r->status == 441)) {
		if (c.keys != c.d->keys)
			c.d->stale_reply = true;
		else if (c.d->auth_cb != NULL && c.d->auth_cb(c.d->auth_arg))
			c.d->renewing = true;
	}
	c.cb(r, c.arg);
	c.d->stale_reply = false;
}

void
disapi_set_transport(struct disapi *d, disapi_submit_fn submit, void *ctx)
{
	d->submit = submit;
	d->submit_ctx = ctx;
}

const char *
disapi_host(const struct disapi *d)
{
	return d->host;
}

/* The signed headers of call c, dated date, into hdrs; their count. */
static size_t
headers(const struct disapi *d, const struct disapi_call *c,
    const char *date, struct sign_header *hdrs)
{
	size_t	 i, n = 0;

	hdrs[n].name = "Content-Type";
	hdrs[n++].value = c->ctype != NULL ? c->ctype : DISAPI_JSON;
	hdrs[n].name = "Host";
	hdrs[n++].value = d->host;
	hdrs[n].name = "X-Project-Id";
	hdrs[n++].value = d->conf->project_id;
	hdrs[n].name = "X-Sdk-Date";
	hdrs[n++].value = date;
	if (d->token != NULL) {
		hdrs[n].name = "X-Security-Token";
		hdrs[n++].value = d->token;
	}
	for (i = 0; i < c->nextra && i < MAX_EXTRA; i++)
		hdrs[n++] = c->extra[i];
	return n;
}

/* "name: value", allocated. */
static char *
header_line(const char *name, const char *value)
{
	size_t	 nl = strlen(name), vl = strlen(value);
	char	*l = xmalloc(nl + vl + 3);

	memcpy(l, name, nl);
	memcpy(l + nl, ": ", 2);
	memcpy(l + nl + 2, value, vl + 1);
	return l;
}

/* Header lines "Name: value" of hdrs plus Authorization, into lines. */
static size_t
header_lines(const struct sign_header *hdrs, size_t n, const char *auth,
    char **lines)
{
	size_t	 i;

	/* Joined, not printf'ed: five a request. */
	for (i = 0; i < n; i++)
		lines[i] = header_line(hdrs[i].name, hdrs[i].value);
	lines[n] = header_line("Authorization", auth);
	return n + 1;
}

/* The request to the transport: http, or the test's seam. */
static int
transport(struct disapi *d, const struct http_request *req, http_done_cb cb,
    void *arg)
{
	return d->submit != NULL ? d->submit(d->submit_ctx, req, cb, arg) :
	    http_submit(d->http, req, cb, arg);
}

int
disapi_send(struct disapi *d, const struct disapi_call *c, http_done_cb cb,
    void *arg)
{
	struct sign_header hdrs[MAX_HEADERS];
	struct sign_request sr;
	struct sign_key	 key;
	struct http_request req;
	struct buf	 path, url, auth;
	char		*lines[MAX_HEADERS + 1];
	char		 date[17];
	size_t		 i, nlines;
	struct call	*call = NULL;
	int		 rc;

	if (!keys_valid(d))
		return -EKEYEXPIRED;
	signer_date(wall_s(), date);
	buf_init(&path);
	buf_init(&url);
	buf_init(&auth);
	buf_addstr(&path, d->prefix);
	buf_addstr(&path, c->path != NULL ? c->path : "");
	memset(&sr, 0, sizeof(sr));
	sr.method = c->method;
	sr.path = path.data;
	sr.query = c->query;
	sr.headers = hdrs;
	sr.nheaders = headers(d, c, date, hdrs);
	sr.body = c->body;
	sr.bodylen = c->bodylen;
	key.ak = d->ak;
	key.sk = d->sk;
	key.region = d->conf->region;
	key.service = "dis";
	rc = signer_authorization(SIGN_DIS, &key, date, &sr, &auth);
	if (rc != 0)
		goto out;
	buf_addstr(&url, d->base);
	buf_addstr(&url, path.data);
	if (c->query != NULL && c->query[0] != '\0') {
		buf_addc(&url, '?');
		signer_query(c->query, &url);
	}
	nlines = header_lines(hdrs, sr.nheaders, auth.data, lines);
	memset(&req, 0, sizeof(req));
	req.method = c->method;
	req.url = url.data;
	req.headers = (const char *const *)lines;
	req.nheaders = nlines;
	req.body = c->body;
	req.bodylen = c->bodylen;
	req.connect_timeout_ms = d->conf->connect_timeout_s * 1000;
	req.timeout_ms = c->timeout_ms > 0 ? c->timeout_ms :
	    d->conf->socket_timeout_s * 1000;
	req.max_response = c->max_response > 0 ? c->max_response : 4 * MIB;
	call = xmalloc(sizeof(*call));
	call->d = d;
	call->http = d->http;
	call->cb = cb;
	call->arg = arg;
	call->keys = d->keys;
	rc = transport(d, &req, on_call_done, call);
	if (rc != 0)
		free(call);
	for (i = 0; i < nlines; i++)
		secret_free(lines[i]);	/* X-Security-Token is one */
out:
	buf_cleanup(&path);
	buf_cleanup(&url);
	buf_cleanup(&auth);
	return rc;
}
