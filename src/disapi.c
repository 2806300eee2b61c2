/*
 * Signed DIS API calls (dis-api.md section 6): Content-Type, Host,
 * X-Project-Id and X-Sdk-Date (plus X-Security-Token with temporary keys and
 * the caller's extra headers) are signed and sent exactly as signed; the
 * query string in the URL is the canonical one.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "disapi.h"

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
	disapi_submit_fn submit;	/* NULL: http_submit */
	void		*submit_ctx;
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

/* Zero a secret before freeing it: it must not linger in freed memory. */
static void
secret_free(char *s)
{
	if (s == NULL)
		return;
	explicit_bzero(s, strlen(s));
	free(s);
}

struct disapi *
disapi_new(struct http *http, const struct conf *conf)
{
	struct disapi	*d;
	const char	*ep = conf->endpoint;
	size_t		 n = strlen(ep);

	while (n > 0 && ep[n - 1] == '/')
		n--;
	d = xcalloc(1, sizeof(*d));
	d->http = http;
	d->conf = conf;
	d->base = xstrndup(ep, n);
	d->host = host_of(ep);
	d->prefix = xasprintf("/v2/%s/", conf->project_id);
	disapi_set_keys(d, conf->ak, conf->sk, NULL);
	return d;
}

void
disapi_free(struct disapi *d)
{
	if (d == NULL)
		return;
	secret_free(d->ak);
	secret_free(d->sk);
	secret_free(d->token);
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

/* Header lines "Name: value" of hdrs plus Authorization, into lines. */
static size_t
header_lines(const struct sign_header *hdrs, size_t n, const char *auth,
    char **lines)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		lines[i] = xasprintf("%s: %s", hdrs[i].name, hdrs[i].value);
	lines[n] = xasprintf("Authorization: %s", auth);
	return n + 1;
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
	int		 rc;

	signer_date(wall_s(), date);
	buf_init(&path);
	buf_init(&url);
	buf_init(&auth);
	buf_printf(&path, "%s%s", d->prefix, c->path);
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
	buf_printf(&url, "%s%s", d->base, path.data);
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
	rc = d->submit != NULL ? d->submit(d->submit_ctx, &req, cb, arg) :
	    http_submit(d->http, &req, cb, arg);
	for (i = 0; i < nlines; i++)
		secret_free(lines[i]);	/* X-Security-Token is one */
out:
	buf_cleanup(&path);
	buf_cleanup(&url);
	buf_cleanup(&auth);
	return rc;
}
