/*
 * One request of the HTTP client (http_int.h): its easy handle's options
 * (method, headers, body, timeouts, TLS, proxy), the response body within
 * its cap, and the outcome mapped to enum http_result.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <uv.h>

#include "base/log.h"
#include "base/util.h"
#include "dis/http.h"
#include "dis/http_int.h"

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
void
httpreq_response(struct http_response *resp, struct http_req *r, CURLcode rc)
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

/*
 * curl's upload buffer for a body of n bytes: 64 KiB (its default) up to
 * UPLOAD_BUFFER_MAX, the least power of two n fits in.  curl copies the
 * body into it, and each in-flight request's handle keeps its buffer, so
 * a buffer a 1.4 MB body fits in (a COMMON stream's 1 MiB of records)
 * held a second copy of every in-flight body: the long-lines bench row
 * peaked 1.1 MiB higher with 2 MiB than with 256 KiB, at the same CPU
 * (six writes of 256 KiB cost what one of 1.4 MB does).
 */
#define UPLOAD_BUFFER_MAX	(256 * 1024)

static size_t
upload_buffer(size_t n)
{
	size_t	 sz = 64 * 1024;

	while (sz < n && sz < UPLOAD_BUFFER_MAX)
		sz *= 2;
	return sz;
}

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
#if LIBCURL_VERSION_NUM >= 0x073e00
	/*
	 * A body above 64 KiB goes out of curl's upload buffer, one buffer
	 * per pass of the loop: with the default 64 KiB, a 120 KiB backlog
	 * request took two passes, and two epoll_ctl calls, a wait and a
	 * short TLS record more.  A buffer the body fits in sends it with one
	 * write (up to UPLOAD_BUFFER_MAX).  curl 7.88 (Debian 12's) frees the
	 * buffer whenever this is set, so it is allocated again for every
	 * request whatever its size; a power of two gives the allocator the
	 * same few sizes to reuse.
	 */
	SETOPT(c, e, CURLOPT_UPLOAD_BUFFERSIZE, (long)upload_buffer(req->bodylen));
#endif
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

int
httpreq_setopts(struct http *h, struct http_req *r,
    const struct http_request *req)
{
	CURL		*e = r->easy;
	CURLcode	 c = CURLE_OK;

	req_headers(r, req);
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
	SETOPT(c, e, CURLOPT_CLOSESOCKETFUNCTION, http_close_socket);
	SETOPT(c, e, CURLOPT_CLOSESOCKETDATA, h);
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

