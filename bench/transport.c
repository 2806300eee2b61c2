/*
 * transport: the benchmark's transport floor (bench/run, scenario
 * "transport"), the least CPU any DIS client must spend to send the agent's
 * requests over HTTPS: the requests one agent run sent, recorded by
 * `dis_ackd --record` (heads and bodies, byte for byte), sent again to
 * bench/dis_ackd over one keep-alive TLS connection, one SSL_write per
 * request (head and body lie next to each other in memory), one request at
 * a time, each reply read to its end.  Before each request it does what
 * signing needs and nothing more: the SHA-256 of the body, the canonical
 * request (dis-api.md 6.1) and its SHA-256, and the HMAC-SHA256 of the
 * string to sign with the day's key (6.2, derived once a day, as the agent
 * does); the new X-Sdk-Date and Signature are written over the recorded
 * ones, which have the same length.  The Host header is given the new port.
 * No base64, no JSON, no reading of log files: bench/run adds those from
 * bench/floor.  OpenSSL directly, no libcurl, no libuv.
 *
 * With --curl the same requests, signed the same way, go through libcurl
 * instead (one easy handle, curl_easy_perform, keep-alive; the headers the
 * agent gives curl, curl adding Host, Accept and Content-Length as for the
 * agent, so the bytes on the wire are the same; the body from
 * CURLOPT_POSTFIELDS with an upload buffer it fits in, as the agent's
 * httpreq.c): the least an agent built on libcurl spends, the figure
 * beside which the agent's own work shows.
 *
 * usage: transport --port N --ca PEM --requests FILE --sk SK --region R
 *        [--curl]
 *        (the AK is the one in the recorded Authorization headers)
 * prints: requests=N head_bytes=H body_bytes=B cpu_s=U+S user_s=U sys_s=S
 *         sign_s=T wall_s=W
 * cpu_s counts from the connect to the last reply, not the loading of FILE;
 * sign_s is the part of it spent hashing and signing (thread CPU clock).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* memmem, strcasestr */
#endif

#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>

#define SHA256_LEN	32
#define REPLY_CHUNK	(256 * 1024)
#define CANON_MAX	4096

/* One recorded request: head and body next to each other in the buffer. */
struct request {
	char	*head;		/* the head, then the body */
	size_t	 hlen;
	size_t	 blen;
	char	*date;		/* X-Sdk-Date's value in head (16 bytes) */
	char	*sig;		/* Signature='s value in head (64 bytes) */
	char	*canon;		/* canonical request up to the date */
	size_t	 canon_pre;
	char	*canon_post;	/* after the date up to the body hash */
	size_t	 canon_postlen;
};

static char		*recording;	/* the file; reqs point into it */
static struct request	*reqs;
static size_t		 nreqs;
static const char	*secret, *region;
static EVP_MD		*sha256;
static EVP_MD_CTX	*mdctx;
static EVP_MAC		*hmac;
static EVP_MAC_CTX	*macctx;	/* keyed with the day's key */
static char		 day_done[9];	/* the day of the key in macctx */
static char		 scope[128];

static void
die(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	fprintf(stderr, "transport: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	ERR_print_errors_fp(stderr);
	exit(1);
}

static void *
xmalloc(size_t n)
{
	void	*p = malloc(n);

	if (p == NULL)
		die("out of memory (%zu bytes)", n);
	return p;
}

static double
tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

static double
clock_s(clockid_t id)
{
	struct timespec	ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
hex(const unsigned char *in, size_t n, char *out)
{
	static const char	dig[] = "0123456789abcdef";
	size_t			i;

	for (i = 0; i < n; i++) {
		out[2 * i] = dig[in[i] >> 4];
		out[2 * i + 1] = dig[in[i] & 0x0f];
	}
}

/* --- the recorded requests ---------------------------------------------- */

/* The whole of path, NUL-terminated; its length in *len. */
static char *
slurp(const char *path, size_t *len)
{
	struct stat	 st;
	char		*buf;
	size_t		 got = 0;
	ssize_t		 n;
	int		 fd;

	if ((fd = open(path, O_RDONLY)) < 0 || fstat(fd, &st) != 0)
		die("%s: %s", path, strerror(errno));
	buf = xmalloc((size_t)st.st_size + 1);
	while (got < (size_t)st.st_size &&
	    (n = read(fd, buf + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)n;
	if (got != (size_t)st.st_size)
		die("%s: short read", path);
	close(fd);
	buf[got] = '\0';
	*len = got;
	return buf;
}

/* The line of head (hlen bytes) for header name, at its value; or NULL. */
static char *
header(char *head, size_t hlen, const char *name, size_t *vlen)
{
	char	*p = head, *end = head + hlen, *eol, *v;
	size_t	 n = strlen(name);

	while ((eol = memmem(p, (size_t)(end - p), "\r\n", 2)) != NULL &&
	    eol != p) {
		if ((size_t)(eol - p) > n && p[n] == ':' &&
		    strncasecmp(p, name, n) == 0) {
			v = p + n + 1;
			while (v < eol && (*v == ' ' || *v == '\t'))
				v++;
			*vlen = (size_t)(eol - v);
			while (*vlen > 0 && (v[*vlen - 1] == ' ' ||
			    v[*vlen - 1] == '\t'))
				(*vlen)--;
			return v;
		}
		p = eol + 2;
	}
	return NULL;
}

static void
put(char *buf, size_t *len, const char *s, size_t n)
{
	if (*len + n >= CANON_MAX)
		die("canonical request over %d bytes", CANON_MAX);
	memcpy(buf + *len, s, n);
	*len += n;
}

/* The canonical URI (6.1): each segment percent-encoded, a final "/". */
static void
canon_uri(char *buf, size_t *len, const char *p, size_t n)
{
	static const char	 up[] = "0123456789ABCDEF";
	char			 e[3] = { '%', 0, 0 };
	unsigned char		 c;
	size_t			 i;

	for (i = 0; i < n; i++) {
		c = (unsigned char)p[i];
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || strchr("-_.~/", c) != NULL) {
			put(buf, len, p + i, 1);
			continue;
		}
		e[1] = up[c >> 4];
		e[2] = up[c & 0x0f];
		put(buf, len, e, 3);
	}
	if (n == 0 || p[n - 1] != '/')
		put(buf, len, "/", 1);
}

/*
 * The canonical request of r without its date and body hash: method, URI,
 * query (sent in canonical form by the agent), then the signed headers
 * named in Authorization's SignedHeaders (lowercase, sorted, as sent).
 */
static void
prepare_canon(struct request *r)
{
	char	 buf[CANON_MAX], name[64];
	char	*line_end, *sp1, *sp2, *q, *names, *v, *e;
	size_t	 len = 0, nlen, vlen, pre = 0;

	line_end = memmem(r->head, r->hlen, "\r\n", 2);
	sp1 = memchr(r->head, ' ', (size_t)(line_end - r->head));
	sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(line_end - sp1 - 1)) : NULL;
	if (sp2 == NULL)
		die("bad request line in the recording");
	put(buf, &len, r->head, (size_t)(sp1 - r->head));
	put(buf, &len, "\n", 1);
	q = memchr(sp1 + 1, '?', (size_t)(sp2 - sp1 - 1));
	canon_uri(buf, &len, sp1 + 1, (size_t)((q ? q : sp2) - sp1 - 1));
	put(buf, &len, "\n", 1);
	if (q != NULL)
		put(buf, &len, q + 1, (size_t)(sp2 - q - 1));
	put(buf, &len, "\n", 1);
	names = header(r->head, r->hlen, "Authorization", &vlen);
	if (names == NULL || (names = strstr(names, "SignedHeaders=")) == NULL)
		die("no SignedHeaders in a recorded request");
	names += strlen("SignedHeaders=");
	e = names + strcspn(names, ",\r");
	for (v = names; v < e; v += nlen + 1) {
		nlen = strcspn(v, ";,\r");
		if (nlen >= sizeof(name))
			die("header name too long");
		memcpy(name, v, nlen);
		name[nlen] = '\0';
		put(buf, &len, name, nlen);
		put(buf, &len, ":", 1);
		if (strcmp(name, "x-sdk-date") == 0) {
			pre = len;	/* the date goes here */
		} else {
			if ((q = header(r->head, r->hlen, name, &vlen)) ==
			    NULL)
				die("signed header %s not sent", name);
			put(buf, &len, q, vlen);
		}
		put(buf, &len, "\n", 1);
	}
	if (pre == 0)
		die("x-sdk-date is not signed");
	put(buf, &len, "\n", 1);
	put(buf, &len, names, (size_t)(e - names));
	put(buf, &len, "\n", 1);
	r->canon = xmalloc(len);
	memcpy(r->canon, buf, len);
	r->canon_pre = pre;
	r->canon_post = r->canon + pre;
	r->canon_postlen = len - pre;
}

/* Host's value becomes host (same length: ephemeral ports have 5 digits). */
static void
set_host(struct request *r, const char *host)
{
	size_t	 vlen;
	char	*v;

	if ((v = header(r->head, r->hlen, "Host", &vlen)) == NULL)
		die("a recorded request has no Host");
	if (vlen != strlen(host))
		die("recorded Host %.*s and %s differ in length", (int)vlen, v,
		    host);
	memcpy(v, host, vlen);
}

static void
load(const char *path, const char *host)
{
	struct request	*r;
	size_t		 len, cap = 0, vlen, hl, bl;
	char		*buf, *p, *q, *end, *v;
	int		 n;

	buf = recording = slurp(path, &len);
	end = buf + len;
	for (p = buf; p < end; p = r->head + r->hlen + r->blen) {
		/* Not sscanf: glibc's runs strlen over the rest of buf. */
		hl = strtoull(p, &q, 10);
		bl = *q == ' ' ? strtoull(q + 1, &q, 10) : 0;
		if (*q != '\n' || (size_t)(end - q - 1) < hl + bl)
			die("%s: bad record at byte %zu", path,
			    (size_t)(p - buf));
		n = (int)(q + 1 - p);
		if (nreqs == cap) {
			cap = cap ? 2 * cap : 4096;
			if ((reqs = realloc(reqs, cap * sizeof(*reqs))) == NULL)
				die("out of memory");
		}
		r = &reqs[nreqs++];
		memset(r, 0, sizeof(*r));
		r->head = p + n;
		r->hlen = hl;
		r->blen = bl;
		set_host(r, host);
		if ((r->date = header(r->head, hl, "X-Sdk-Date", &vlen)) ==
		    NULL || vlen != 16)
			die("a recorded request has no X-Sdk-Date");
		v = header(r->head, hl, "Authorization", &vlen);
		if (v == NULL || (v = strstr(v, "Signature=")) == NULL ||
		    (r->sig = v + strlen("Signature=")) + 64 > r->head + hl)
			die("a recorded request has no Signature");
		prepare_canon(r);
	}
	if (nreqs == 0)
		die("%s: no requests", path);
	v = header(reqs[0].head, reqs[0].hlen, "Authorization", &vlen);
	v = strstr(v, "Credential=");
	if (v == NULL || (v = strchr(v, '/')) == NULL)
		die("no Credential in the recorded Authorization");
	/* "/yyyyMMdd/region/dis/sdk_request," gives the service */
	if (strncmp(v + 10 + strlen(region), "/dis/", 5) != 0)
		die("the recording was not signed for region %s", region);
}

/* --- signing ------------------------------------------------------------ */

static void
hmac_once(const void *key, size_t klen, const void *msg, size_t mlen,
    unsigned char out[SHA256_LEN])
{
	OSSL_PARAM	 p[2];
	EVP_MAC_CTX	*c;
	size_t		 olen;

	p[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
	    (char *)"SHA256", 0);
	p[1] = OSSL_PARAM_construct_end();
	if ((c = EVP_MAC_CTX_new(hmac)) == NULL ||
	    EVP_MAC_init(c, key, klen, p) != 1 ||
	    EVP_MAC_update(c, msg, mlen) != 1 ||
	    EVP_MAC_final(c, out, &olen, SHA256_LEN) != 1)
		die("HMAC failed");
	EVP_MAC_CTX_free(c);
}

/* The day's signing key (6.2) into macctx, when the day changed. */
static void
day_key(const char *date)
{
	unsigned char	 k[SHA256_LEN], t[SHA256_LEN];
	char		 seed[512];
	OSSL_PARAM	 p[2];

	if (memcmp(day_done, date, 8) == 0)
		return;
	memcpy(day_done, date, 8);
	snprintf(seed, sizeof(seed), "SDK%s", secret);
	hmac_once(seed, strlen(seed), date, 8, k);
	hmac_once(k, SHA256_LEN, region, strlen(region), t);
	hmac_once(t, SHA256_LEN, "dis", 3, k);
	hmac_once(k, SHA256_LEN, "sdk_request", 11, t);
	p[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
	    (char *)"SHA256", 0);
	p[1] = OSSL_PARAM_construct_end();
	if (EVP_MAC_init(macctx, t, SHA256_LEN, p) != 1)
		die("HMAC key failed");
	snprintf(scope, sizeof(scope), "%.8s/%s/dis/sdk_request", date,
	    region);
}

static void
sha256_hex(const void *p, size_t n, char out[64])
{
	unsigned char	md[SHA256_LEN];
	unsigned int	mdlen;

	if (EVP_DigestInit_ex2(mdctx, sha256, NULL) != 1 ||
	    EVP_DigestUpdate(mdctx, p, n) != 1 ||
	    EVP_DigestFinal_ex(mdctx, md, &mdlen) != 1)
		die("SHA-256 failed");
	hex(md, SHA256_LEN, out);
}

/* Date and sign r in place: X-Sdk-Date and Signature get new values. */
static void
sign(struct request *r, const char *date)
{
	char		 canon[CANON_MAX], sts[256], chash[64];
	unsigned char	 sig[SHA256_LEN];
	size_t		 clen, slen, olen;

	day_key(date);
	memcpy(r->date, date, 16);
	memcpy(canon, r->canon, r->canon_pre);
	memcpy(canon + r->canon_pre, date, 16);
	memcpy(canon + r->canon_pre + 16, r->canon_post, r->canon_postlen);
	clen = r->canon_pre + 16 + r->canon_postlen;
	sha256_hex(r->head + r->hlen, r->blen, canon + clen);
	clen += 64;
	sha256_hex(canon, clen, chash);
	slen = (size_t)snprintf(sts, sizeof(sts), "SDK-HMAC-SHA256\n%.16s\n"
	    "%s\n%.64s", date, scope, chash);
	if (EVP_MAC_init(macctx, NULL, 0, NULL) != 1 ||
	    EVP_MAC_update(macctx, (unsigned char *)sts, slen) != 1 ||
	    EVP_MAC_final(macctx, sig, &olen, SHA256_LEN) != 1)
		die("HMAC failed");
	hex(sig, SHA256_LEN, r->sig);
}

/* --- the connection ----------------------------------------------------- */

static SSL *
connect_tls(int port, const char *ca, int *fdp)
{
	struct sockaddr_in	 sin;
	SSL_CTX			*ctx;
	SSL			*ssl;
	int			 fd, one = 1;

	ctx = SSL_CTX_new(TLS_client_method());
	if (ctx == NULL || SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1)
		die("cannot load %s", ca);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	SSL_CTX_set_mode(ctx, SSL_MODE_AUTO_RETRY);
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
		die("socket: %s", strerror(errno));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons((uint16_t)port);
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0)
		die("connect to port %d: %s", port, strerror(errno));
	if ((ssl = SSL_new(ctx)) == NULL || SSL_set_fd(ssl, fd) != 1 ||
	    SSL_set1_host(ssl, "127.0.0.1") != 1 || SSL_connect(ssl) != 1)
		die("TLS handshake failed");
	SSL_CTX_free(ctx);	/* the SSL holds its own reference */
	*fdp = fd;
	return ssl;
}

static void
send_all(SSL *ssl, const char *p, size_t n)
{
	size_t	w;

	if (SSL_write_ex(ssl, p, n, &w) != 1 || w != n)
		die("SSL_write failed");
}

/* Read one reply to its end into buf (cap bytes); die unless it is a 200. */
static void
read_reply(SSL *ssl, char *buf, size_t cap)
{
	size_t	 have = 0, n, need = 0, clen;
	char	*e, *v;

	for (;;) {
		if (SSL_read_ex(ssl, buf + have, cap - 1 - have, &n) != 1)
			die("the connection ended before a reply");
		have += n;
		buf[have] = '\0';
		if (need == 0 && (e = strstr(buf, "\r\n\r\n")) != NULL) {
			if (strncmp(buf, "HTTP/1.1 200 ", 13) != 0)
				die("reply: %.40s", buf);
			v = strcasestr(buf, "\r\nContent-Length:");
			if (v == NULL || v > e)
				die("a reply without Content-Length");
			clen = strtoull(v + 17, NULL, 10);
			need = (size_t)(e + 4 - buf) + clen;
			if (need >= cap)
				die("a reply of %zu bytes", need);
		}
		if (need != 0 && have >= need)
			break;
		if (have + 1 >= cap)
			die("a reply head over %zu bytes", cap);
	}
	if (have != need)
		die("%zu bytes after a reply (no pipelining here)", have - need);
}

/* --- --curl ------------------------------------------------------------ */

/* The reply's body, read to its end and dropped (the status is checked). */
static size_t
curl_reply(char *p, size_t size, size_t n, void *arg)
{
	(void)p;
	(void)arg;
	return size * n;
}

/* The header lines of r that the agent gives curl (not the request line,
 * nor Host, Accept and Content-Length, which curl writes), and "Expect:". */
static struct curl_slist *
curl_headers(const struct request *r)
{
	static const char *const	 mine[] = { "Host:", "Accept:",
	    "Content-Length:" };
	struct curl_slist		*l = NULL;
	const char			*p, *end = r->head + r->hlen, *eol;
	char				 line[1024];
	size_t				 i, n;

	p = (const char *)memmem(r->head, r->hlen, "\r\n", 2) + 2;
	for (; (eol = memmem(p, (size_t)(end - p), "\r\n", 2)) != NULL &&
	    eol != p; p = eol + 2) {
		n = (size_t)(eol - p);
		for (i = 0; i < sizeof(mine) / sizeof(mine[0]); i++)
			if (strncasecmp(p, mine[i], strlen(mine[i])) == 0)
				break;
		if (i < sizeof(mine) / sizeof(mine[0]))
			continue;
		if (n >= sizeof(line))
			die("a recorded header of %zu bytes", n);
		memcpy(line, p, n);
		line[n] = '\0';
		if ((l = curl_slist_append(l, line)) == NULL)
			die("out of memory");
	}
	if ((l = curl_slist_append(l, "Expect:")) == NULL)
		die("out of memory");
	return l;
}

/* curl's upload buffer for a body of n bytes, as the agent's httpreq.c. */
static long
curl_upload_buffer(size_t n)
{
	size_t	 sz = 64 * 1024;

	while (sz < n && sz < 2 * 1024 * 1024)
		sz *= 2;
	return (long)sz;
}

/* r, already signed, through e; dies unless the reply is a 200. */
static void
curl_send(CURL *e, const struct request *r, int port)
{
	struct curl_slist	*h = curl_headers(r);
	const char		*sp1, *sp2;
	char			 url[1024];
	long			 code = 0;
	CURLcode		 c;

	/* The request line was checked when loading (prepare_canon). */
	sp1 = memchr(r->head, ' ', r->hlen);
	sp2 = memchr(sp1 + 1, ' ', r->hlen - (size_t)(sp1 + 1 - r->head));
	snprintf(url, sizeof(url), "https://127.0.0.1:%d%.*s", port,
	    (int)(sp2 - sp1 - 1), sp1 + 1);
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, curl_reply);
	if (strncmp(r->head, "GET ", 4) == 0)
		curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
	else {
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
		    (curl_off_t)r->blen);
		curl_easy_setopt(e, CURLOPT_UPLOAD_BUFFERSIZE,
		    curl_upload_buffer(r->blen));
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->head + r->hlen);
	}
	if ((c = curl_easy_perform(e)) != CURLE_OK)
		die("curl: %s", curl_easy_strerror(c));
	curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
	if (code != 200)
		die("reply: HTTP %ld", code);
	curl_slist_free_all(h);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "ca", required_argument, NULL, 'c' },
		{ "requests", required_argument, NULL, 'r' },
		{ "sk", required_argument, NULL, 's' },
		{ "region", required_argument, NULL, 'g' },
		{ "curl", no_argument, NULL, 'u' },
		{ NULL, 0, NULL, 0 },
	};
	struct rusage	 ru0, ru1;
	const char	*ca = NULL, *file = NULL;
	char		 host[64], date[17], *reply;
	unsigned long long hbytes = 0, bbytes = 0;
	double		 w0, sign_s = 0, t;
	time_t		 now, last = 0;
	struct tm	 tm;
	size_t		 i;
	SSL		*ssl = NULL;
	CURL		*easy = NULL;
	int		 ch, port = 0, fd = -1, use_curl = 0;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'p':
			port = atoi(optarg);
			break;
		case 'c':
			ca = optarg;
			break;
		case 'r':
			file = optarg;
			break;
		case 's':
			secret = optarg;
			break;
		case 'g':
			region = optarg;
			break;
		case 'u':
			use_curl = 1;
			break;
		default:
			die("bad arguments (see the file header)");
		}
	}
	if (port <= 0 || ca == NULL || file == NULL || secret == NULL ||
	    region == NULL)
		die("--port, --ca, --requests, --sk and --region are required");
	snprintf(host, sizeof(host), "127.0.0.1:%d", port);
	load(file, host);
	if ((sha256 = EVP_MD_fetch(NULL, "SHA256", NULL)) == NULL ||
	    (mdctx = EVP_MD_CTX_new()) == NULL ||
	    (hmac = EVP_MAC_fetch(NULL, "HMAC", NULL)) == NULL ||
	    (macctx = EVP_MAC_CTX_new(hmac)) == NULL)
		die("libcrypto has no SHA-256 or HMAC");
	reply = xmalloc(REPLY_CHUNK * 16);

	if (use_curl && (curl_global_init(CURL_GLOBAL_DEFAULT) != 0 ||
	    (easy = curl_easy_init()) == NULL))
		die("curl_easy_init failed");

	getrusage(RUSAGE_SELF, &ru0);
	w0 = clock_s(CLOCK_MONOTONIC);
	if (use_curl) {
		curl_easy_setopt(easy, CURLOPT_CAINFO, ca);
		curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(easy, CURLOPT_TCP_NODELAY, 1L);
	} else
		ssl = connect_tls(port, ca, &fd);
	for (i = 0; i < nreqs; i++) {
		t = clock_s(CLOCK_THREAD_CPUTIME_ID);
		if ((now = time(NULL)) != last) {
			gmtime_r(&now, &tm);
			strftime(date, sizeof(date), "%Y%m%dT%H%M%SZ", &tm);
			last = now;
		}
		sign(&reqs[i], date);
		sign_s += clock_s(CLOCK_THREAD_CPUTIME_ID) - t;
		if (use_curl)
			curl_send(easy, &reqs[i], port);
		else {
			send_all(ssl, reqs[i].head, reqs[i].hlen +
			    reqs[i].blen);
			read_reply(ssl, reply, REPLY_CHUNK * 16);
		}
		hbytes += reqs[i].hlen;
		bbytes += reqs[i].blen;
	}
	if (use_curl)
		curl_easy_cleanup(easy);
	else {
		SSL_shutdown(ssl);
		SSL_free(ssl);
		close(fd);
	}
	getrusage(RUSAGE_SELF, &ru1);
	if (use_curl)
		curl_global_cleanup();
	for (i = 0; i < nreqs; i++)
		free(reqs[i].canon);
	free(reqs);
	free(recording);
	free(reply);
	EVP_MAC_CTX_free(macctx);
	EVP_MAC_free(hmac);
	EVP_MD_CTX_free(mdctx);
	EVP_MD_free(sha256);
	printf("requests=%zu head_bytes=%llu body_bytes=%llu cpu_s=%.3f "
	    "user_s=%.3f sys_s=%.3f sign_s=%.3f wall_s=%.3f\n", nreqs, hbytes,
	    bbytes, tv_s(ru1.ru_utime) - tv_s(ru0.ru_utime) +
	    tv_s(ru1.ru_stime) - tv_s(ru0.ru_stime),
	    tv_s(ru1.ru_utime) - tv_s(ru0.ru_utime),
	    tv_s(ru1.ru_stime) - tv_s(ru0.ru_stime), sign_s,
	    clock_s(CLOCK_MONOTONIC) - w0);
	return 0;
}
