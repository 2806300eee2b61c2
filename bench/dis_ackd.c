/*
 * dis_ackd: a minimal ack-only DIS endpoint for the benchmark (bench/run).
 * It speaks just enough HTTPS/1.1 (keep-alive, Content-Length bodies,
 * Expect: 100-continue) to answer DescribeStream and PutRecords as fast as
 * the agent can send, so that the agent, not the endpoint, is what the
 * benchmark measures.  It verifies nothing (no signature, no project id,
 * no Base64): each PutRecords body is read fully, decompressed when it
 * carries Content-Encoding lz4 or zstd (liblz4/libzstd are loaded with
 * dlopen, so the binary links only OpenSSL), its records are counted
 * (occurrences of "data": in JSON, or field 2 of a protobuf body) and the
 * reply acknowledges that many records, spread over the partitions.  The
 * full protocol, with signature checks, is tests/dis_server.py's job.
 *
 * One thread per connection.  GET /_test/stats answers the running totals
 * as JSON (head_bytes and body_bytes: the PutRecords requests' heads, up to
 * and including the blank line, and bodies as sent); on SIGTERM or SIGINT
 * the totals are written to --stats-file.
 *
 * --record FILE appends every request but /_test/ ones to FILE as it came,
 * for bench/transport to send again: a line "HEADLEN BODYLEN\n", then the
 * head and the body, byte for byte.
 *
 * --delay-ms N answers each PutRecords N ms after it arrived in full (a
 * real service's pace: the records are counted at once, the reply waits;
 * each connection's thread sleeps, so requests on other connections are
 * not held up).
 *
 * usage: dis_ackd --cert PEM --key PEM --port-file FILE [--port N]
 *                 [--partitions 1..10] [--stream-type COMMON|ADVANCED]
 *                 [--stats-file FILE] [--record FILE] [--delay-ms N]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* memmem */
#endif

#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#define HDR_MAX		(64 * 1024)
#define BODY_MAX	(64 * 1024 * 1024)
#define READ_CHUNK	(256 * 1024)

/* What the request line and headers said. */
struct req {
	char	 method[8];
	char	 path[512];
	size_t	 hdrlen;		/* bytes up to and incl. CRLFCRLF */
	size_t	 clen;
	size_t	 rawlen;		/* x-dis-*-content-length */
	int	 enc;			/* 0 none, 1 lz4, 2 zstd */
	int	 protobuf;
	int	 expect100;
	int	 close;
};

/* One connection: its TLS stream and a growing input buffer. */
struct conn {
	SSL	*ssl;
	int	 fd;
	char	*in;
	size_t	 inlen;
	size_t	 incap;
	char	*out;			/* reply being built */
	size_t	 outlen;
	size_t	 outcap;
	char	*raw;			/* decompressed body */
	size_t	 rawcap;
};

static int	(*lz4_decompress)(const char *, char *, int, int);
static size_t	(*zstd_decompress)(void *, size_t, const void *, size_t);
static unsigned	(*zstd_is_error)(size_t);

static SSL_CTX		*ctx;
static int		 npartitions = 4;
static const char	*stream_type = "COMMON";
static volatile sig_atomic_t stopping;
static atomic_ullong	 n_requests, n_puts, n_records, n_bytes, n_conns;
static atomic_ullong	 n_head_bytes, seqno;
static FILE		*record_f;	/* --record */
static long		 delay_ms;	/* --delay-ms */
static pthread_mutex_t	 record_mu = PTHREAD_MUTEX_INITIALIZER;

static void
die(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	fprintf(stderr, "dis_ackd: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

static void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (p == NULL)
		die("out of memory (%zu bytes)", n);
	return p;
}

/* Make room for n more bytes in a buffer of (*buf, *len, *cap). */
static void
reserve(char **buf, size_t len, size_t *cap, size_t n)
{
	size_t	want = len + n + 1;

	if (want <= *cap)
		return;
	if (want < *cap * 2)
		want = *cap * 2;
	*buf = xrealloc(*buf, want);
	*cap = want;
}

static void
out_add(struct conn *c, const char *s, size_t n)
{
	reserve(&c->out, c->outlen, &c->outcap, n);
	memcpy(c->out + c->outlen, s, n);
	c->outlen += n;
}

static void
out_printf(struct conn *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
out_printf(struct conn *c, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	reserve(&c->out, c->outlen, &c->outcap, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(c->out + c->outlen, (size_t)n + 1, fmt, ap);
	va_end(ap);
	c->outlen += (size_t)n;
}

/* Load the decompressors if the libraries are there; absent is fine. */
static void
load_codecs(void)
{
	void	*h;

	if ((h = dlopen("liblz4.so.1", RTLD_NOW)) != NULL)
		*(void **)&lz4_decompress = dlsym(h, "LZ4_decompress_safe");
	if ((h = dlopen("libzstd.so.1", RTLD_NOW)) != NULL) {
		*(void **)&zstd_decompress = dlsym(h, "ZSTD_decompress");
		*(void **)&zstd_is_error = dlsym(h, "ZSTD_isError");
	}
}

/* Read more bytes into c->in; 0, or -1 on EOF or error. */
static int
fill(struct conn *c)
{
	int	n;

	reserve(&c->in, c->inlen, &c->incap, READ_CHUNK);
	n = SSL_read(c->ssl, c->in + c->inlen, READ_CHUNK);
	if (n <= 0)
		return -1;
	c->inlen += (size_t)n;
	return 0;
}

static int
send_all(struct conn *c, const char *p, size_t n)
{
	int	w;

	while (n > 0) {
		w = SSL_write(c->ssl, p, n > INT32_MAX ? INT32_MAX : (int)n);
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Case-insensitive "Name:" match at the start of a header line. */
static const char *
hdr_value(const char *line, const char *name)
{
	size_t	n = strlen(name);

	if (strncasecmp(line, name, n) != 0 || line[n] != ':')
		return NULL;
	line += n + 1;
	while (*line == ' ' || *line == '\t')
		line++;
	return line;
}

static void
parse_header(struct req *r, const char *line)
{
	const char	*v;

	if ((v = hdr_value(line, "Content-Length")) != NULL)
		r->clen = strtoull(v, NULL, 10);
	else if ((v = hdr_value(line, "Content-Encoding")) != NULL)
		r->enc = strncasecmp(v, "lz4", 3) == 0 ? 1 :
		    strncasecmp(v, "zstd", 4) == 0 ? 2 : 0;
	else if ((v = hdr_value(line, "x-dis-lz4-content-length")) != NULL ||
	    (v = hdr_value(line, "x-dis-zstd-content-length")) != NULL)
		r->rawlen = strtoull(v, NULL, 10);
	else if ((v = hdr_value(line, "Content-Type")) != NULL)
		r->protobuf = strstr(v, "protobuf") != NULL;
	else if ((v = hdr_value(line, "Expect")) != NULL)
		r->expect100 = strncasecmp(v, "100-continue", 12) == 0;
	else if ((v = hdr_value(line, "Connection")) != NULL)
		r->close = strncasecmp(v, "close", 5) == 0;
}

/* Parse the head in c->in[0..end); 0 or -1 when malformed. */
static int
parse_head(struct conn *c, size_t end, struct req *r)
{
	char	*head, *line, *next, *sp;

	memset(r, 0, sizeof(*r));
	r->hdrlen = end;
	head = c->in;
	head[end - 2] = '\0';	/* the last CRLF: lines end in CRLF or NUL */
	line = head;
	next = strstr(line, "\r\n");
	if (next != NULL)
		*next = '\0';
	if (sscanf(line, "%7s %511s", r->method, r->path) != 2)
		return -1;
	while (next != NULL) {
		line = next + 2;
		next = strstr(line, "\r\n");
		if (next != NULL)
			*next = '\0';
		parse_header(r, line);
	}
	if ((sp = strchr(r->path, '?')) != NULL)
		*sp = '\0';
	sp = r->path + strlen(r->path);
	if (sp > r->path + 1 && sp[-1] == '/')
		sp[-1] = '\0';		/* SDKJ's trailing slash */
	return r->clen > BODY_MAX ? -1 : 0;
}

/* Wait for a whole head; its length (incl. CRLFCRLF), 0 on EOF, -1 bad. */
static long
read_head(struct conn *c)
{
	char	*e;

	for (;;) {
		if (c->inlen > 0) {
			c->in[c->inlen] = '\0';
			e = strstr(c->in, "\r\n\r\n");
			if (e != NULL)
				return (long)(e - c->in) + 4;
		}
		if (c->inlen > HDR_MAX)
			return -1;
		if (fill(c) != 0)
			return 0;
	}
}

static size_t
count_json(const char *p, size_t n)
{
	static const char	 pat[] = "\"data\":";
	const char		*end = p + n, *q;
	size_t			 k = 0;

	while ((q = memmem(p, (size_t)(end - p), pat, sizeof(pat) - 1))
	    != NULL) {
		k++;
		p = q + sizeof(pat) - 1;
	}
	return k;
}

static int
varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	unsigned	shift = 0;

	*v = 0;
	while (*p < end && shift < 64) {
		*v |= (uint64_t)(**p & 0x7f) << shift;
		if ((*(*p)++ & 0x80) == 0)
			return 0;
		shift += 7;
	}
	return -1;
}

/* Occurrences of field 2 (records) at the top level; -1 if malformed. */
static long
count_protobuf(const char *buf, size_t n)
{
	const unsigned char	*p = (const unsigned char *)buf, *end = p + n;
	uint64_t		 key, v;
	long			 k = 0;

	while (p < end) {
		if (varint(&p, end, &key) != 0)
			return -1;
		switch (key & 7) {
		case 0:
			if (varint(&p, end, &v) != 0)
				return -1;
			break;
		case 1:
			p += 8;
			break;
		case 2:
			if (varint(&p, end, &v) != 0 || v > (uint64_t)(end - p))
				return -1;
			p += v;
			break;
		case 5:
			p += 4;
			break;
		default:
			return -1;
		}
		if ((key >> 3) == 2 && (key & 7) == 2)
			k++;
	}
	return p == end ? k : -1;
}

/* The plain body of a request, decompressed into c->raw when needed. */
static const char *
plain_body(struct conn *c, const struct req *r, const char *body,
    size_t *len)
{
	size_t	n;
	int	k;

	*len = r->clen;
	if (r->enc == 0)
		return body;
	if (r->rawlen > BODY_MAX)
		return NULL;
	reserve(&c->raw, 0, &c->rawcap, r->rawlen);
	if (r->enc == 1 && lz4_decompress != NULL) {
		k = lz4_decompress(body, c->raw, (int)r->clen, (int)r->rawlen);
		if (k < 0 || (size_t)k != r->rawlen)
			return NULL;
		*len = (size_t)k;
		return c->raw;
	}
	if (r->enc == 2 && zstd_decompress != NULL) {
		n = zstd_decompress(c->raw, r->rawlen, body, r->clen);
		if (zstd_is_error(n) || n != r->rawlen)
			return NULL;
		*len = n;
		return c->raw;
	}
	return NULL;
}

static void
reply_head(struct conn *c, int status, const char *type, size_t len)
{
	out_printf(c, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n"
	    "Content-Length: %zu\r\n\r\n", status,
	    status == 200 ? "OK" : status == 400 ? "Bad Request" : "Not Found",
	    type, len);
}

/* A complete JSON reply: head, then the body already in `body`. */
static void
reply_json(struct conn *c, int status, const char *body)
{
	size_t	n = strlen(body);

	reply_head(c, status, "application/json; charset=utf-8", n);
	out_add(c, body, n);
}

/* Decimal digits of v at p; returns the length. */
static size_t
u64_dec(char *p, unsigned long long v)
{
	char	tmp[24];
	size_t	n = 0, i;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	for (i = 0; i < n; i++)
		p[i] = tmp[n - 1 - i];
	return n;
}

/* Put the head for the body in out[head..outlen) in front of it. */
static void
prepend_head(struct conn *c, size_t head, const char *type)
{
	char	hbuf[160];
	size_t	body = c->outlen - head;
	int	hn;

	hn = snprintf(hbuf, sizeof(hbuf), "HTTP/1.1 200 OK\r\nContent-Type: "
	    "%s\r\nContent-Length: %zu\r\n\r\n", type, body);
	reserve(&c->out, c->outlen, &c->outcap, (size_t)hn);
	memmove(c->out + head + hn, c->out + head, body);
	memcpy(c->out + head, hbuf, (size_t)hn);
	c->outlen += (size_t)hn;
}

static void
put_reply_json(struct conn *c, size_t nrec)
{
	static const char	 a[] = "{\"partition_id\":\"shardId-";
	static const char	 b[] = "\",\"sequence_number\":\"";
	unsigned long long	 seq;
	size_t			 head, i;
	char			*o;

	seq = atomic_fetch_add(&seqno, nrec);
	head = c->outlen;
	out_printf(c, "{\"failed_record_count\":0,\"records\":[");
	for (i = 0; i < nrec; i++) {
		reserve(&c->out, c->outlen, &c->outcap, 128);
		o = c->out + c->outlen;
		if (i > 0)
			*o++ = ',';
		memcpy(o, a, sizeof(a) - 1);
		o += sizeof(a) - 1;
		memcpy(o, "000000000", 9);
		o += 9;
		*o++ = (char)('0' + (seq + i) % (unsigned)npartitions % 10);
		memcpy(o, b, sizeof(b) - 1);
		o += sizeof(b) - 1;
		o += u64_dec(o, seq + i);
		*o++ = '"';
		*o++ = '}';
		c->outlen = (size_t)(o - c->out);
	}
	out_add(c, "]}", 2);
	prepend_head(c, head, "application/json; charset=utf-8");
}

/* Append a protobuf varint-length-delimited string field. */
static void
pb_str(struct conn *c, const unsigned char tag[2], const char *s)
{
	unsigned char	hdr[3] = { tag[0], tag[1], (unsigned char)strlen(s) };

	out_add(c, (const char *)hdr, 3);
	out_add(c, s, strlen(s));
}

static void
put_reply_protobuf(struct conn *c, size_t nrec)
{
	static const unsigned char	fail0[] = { 0xa8, 0x01, 0x00 };
	static const unsigned char	rec[] = { 0xb2, 0x01 };
	static const unsigned char	shard[] = { 0xba, 0x01 };
	static const unsigned char	seqtag[] = { 0xc2, 0x01 };
	unsigned long long		seq;
	size_t				head, i;
	char				a[32], b[32];

	seq = atomic_fetch_add(&seqno, nrec);
	head = c->outlen;
	out_add(c, (const char *)fail0, sizeof(fail0));
	for (i = 0; i < nrec; i++) {
		unsigned char	len;

		snprintf(a, sizeof(a), "shardId-%010zu",
		    (size_t)((seq + i) % (unsigned)npartitions));
		snprintf(b, sizeof(b), "%llu", seq + i);
		len = (unsigned char)(3 + strlen(a) + 3 + strlen(b));
		out_add(c, (const char *)rec, 2);
		out_add(c, (const char *)&len, 1);
		pb_str(c, shard, a);
		pb_str(c, seqtag, b);
	}
	prepend_head(c, head, "application/x-protobuf; charset=utf-8");
}

static void
put_records(struct conn *c, const struct req *r, const char *body)
{
	const char	*p;
	size_t		 len;
	long		 n;

	atomic_fetch_add(&n_puts, 1);
	atomic_fetch_add(&n_bytes, r->clen);
	atomic_fetch_add(&n_head_bytes, r->hdrlen);
	p = plain_body(c, r, body, &len);
	if (p == NULL) {
		reply_json(c, 400, "{\"errorCode\":\"DIS.4200\",\"message\":"
		    "\"cannot decode the body\"}");
		return;
	}
	n = r->protobuf ? count_protobuf(p, len) : (long)count_json(p, len);
	if (n <= 0) {
		reply_json(c, 400, "{\"errorCode\":\"DIS.4202\",\"message\":"
		    "\"Empty records.\"}");
		return;
	}
	atomic_fetch_add(&n_records, (unsigned long long)n);
	if (delay_ms > 0) {
		struct timespec	 ts = { delay_ms / 1000,
		    (delay_ms % 1000) * 1000000L };

		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
	}
	if (r->protobuf)
		put_reply_protobuf(c, (size_t)n);
	else
		put_reply_json(c, (size_t)n);
}

static void
describe(struct conn *c, const char *name)
{
	char	body[1024];
	int	n;

	n = snprintf(body, sizeof(body), "{\"stream_id\":\"bench-%s\","
	    "\"stream_name\":\"%s\",\"create_time\":1700000000000,"
	    "\"retention_period\":24,\"status\":\"RUNNING\","
	    "\"stream_type\":\"%s\",\"data_type\":\"BLOB\","
	    "\"writable_partition_count\":%d,\"readable_partition_count\":%d,"
	    "\"tags\":[],\"auto_scale_enabled\":false,\"partitions\":[],"
	    "\"has_more_partitions\":false}", name, name, stream_type,
	    npartitions, npartitions);
	if (n < 0 || (size_t)n >= sizeof(body))
		reply_json(c, 400, "{\"errorCode\":\"DIS.4200\"}");
	else
		reply_json(c, 200, body);
}

static void
stats_json(char *out, size_t n)
{
	snprintf(out, n, "{\"requests\":%llu,\"put_requests\":%llu,"
	    "\"records\":%llu,\"head_bytes\":%llu,\"body_bytes\":%llu,"
	    "\"connections\":%llu}",
	    (unsigned long long)n_requests, (unsigned long long)n_puts,
	    (unsigned long long)n_records, (unsigned long long)n_head_bytes,
	    (unsigned long long)n_bytes, (unsigned long long)n_conns);
}

/* Whether r is a PutRecords request (POST /v2/{project}/records). */
static int
is_put(const struct req *r)
{
	const char	*s;

	return strcmp(r->method, "POST") == 0 &&
	    strncmp(r->path, "/v2/", 4) == 0 &&
	    (s = strstr(r->path + 4, "/records")) != NULL &&
	    (s[8] == '\0' || strcmp(s + 8, "/") == 0);
}

/* --record: append the request as it came (head copied before parsing). */
static void
record(const char *head, size_t hl, const char *body, size_t blen)
{
	int	ok;

	pthread_mutex_lock(&record_mu);
	ok = fprintf(record_f, "%zu %zu\n", hl, blen) > 0 &&
	    fwrite(head, 1, hl, record_f) == hl &&
	    fwrite(body, 1, blen, record_f) == blen;
	pthread_mutex_unlock(&record_mu);
	if (!ok)
		die("--record: %s", strerror(errno));
}

/* Route one request whose body is `body` (r->clen bytes). */
static void
route(struct conn *c, const struct req *r, const char *body)
{
	const char	*s;
	char		 buf[256];

	atomic_fetch_add(&n_requests, 1);
	if (is_put(r)) {
		put_records(c, r, body);
	} else if (strcmp(r->method, "GET") == 0 &&
	    strncmp(r->path, "/v2/", 4) == 0 &&
	    (s = strstr(r->path + 4, "/streams/")) != NULL &&
	    s[9] != '\0' && strchr(s + 9, '/') == NULL &&
	    strspn(s + 9, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789_-") == strlen(s + 9)) {
		describe(c, s + 9);
	} else if (strcmp(r->path, "/_test/stats") == 0) {
		stats_json(buf, sizeof(buf));
		reply_json(c, 200, buf);
	} else {
		reply_json(c, 404, "{\"error_code\":\"APIG.0101\","
		    "\"error_msg\":\"The API does not exist\"}");
	}
}

/* Serve one request; 0 to go on, -1 to close the connection. */
static int
serve_one(struct conn *c)
{
	struct req	 r;
	long		 hl;
	size_t		 total;
	char		*head = NULL;

	if ((hl = read_head(c)) <= 0)
		return -1;
	if (record_f != NULL) {
		head = xrealloc(NULL, (size_t)hl);	/* parsing cuts it up */
		memcpy(head, c->in, (size_t)hl);
	}
	if (parse_head(c, (size_t)hl, &r) != 0) {
		free(head);
		return -1;
	}
	if (r.expect100 && c->inlen < (size_t)hl + r.clen &&
	    send_all(c, "HTTP/1.1 100 Continue\r\n\r\n", 25) != 0)
		return -1;
	total = (size_t)hl + r.clen;
	while (c->inlen < total)
		if (fill(c) != 0) {
			free(head);
			return -1;
		}
	if (head != NULL && strncmp(r.path, "/_test/", 7) != 0)
		record(head, (size_t)hl, c->in + hl, r.clen);
	free(head);
	c->outlen = 0;
	route(c, &r, c->in + hl);
	if (send_all(c, c->out, c->outlen) != 0)
		return -1;
	/* Keep what followed (pipelining): nothing is lost. */
	memmove(c->in, c->in + total, c->inlen - total);
	c->inlen -= total;
	return r.close ? -1 : 0;
}

static void *
conn_main(void *arg)
{
	struct conn	*c = arg;

	if (SSL_accept(c->ssl) == 1)
		while (serve_one(c) == 0)
			;
	SSL_shutdown(c->ssl);
	SSL_free(c->ssl);
	close(c->fd);
	free(c->in);
	free(c->out);
	free(c->raw);
	free(c);
	return NULL;
}

static void
spawn(int fd)
{
	struct conn	*c;
	pthread_t	 t;
	pthread_attr_t	 a;
	int		 one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		die("out of memory");
	c->fd = fd;
	c->ssl = SSL_new(ctx);
	if (c->ssl == NULL || SSL_set_fd(c->ssl, fd) != 1)
		die("SSL_new failed");
	atomic_fetch_add(&n_conns, 1);
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&a, 256 * 1024);
	if (pthread_create(&t, &a, conn_main, c) != 0)
		die("pthread_create failed");
	pthread_attr_destroy(&a);
}

static int
listen_on(int port)
{
	struct sockaddr_in	sin;
	socklen_t		len = sizeof(sin);
	int			fd, one = 1;

	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		die("socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons((uint16_t)port);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
	    listen(fd, 128) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) != 0)
		die("bind/listen: %s", strerror(errno));
	return fd;
}

static void
write_file(const char *path, const char *text)
{
	char	 tmp[4096];
	FILE	*f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if ((f = fopen(tmp, "w")) == NULL)
		die("%s: %s", tmp, strerror(errno));
	fputs(text, f);
	if (fclose(f) != 0 || rename(tmp, path) != 0)
		die("%s: %s", path, strerror(errno));
}

static void
on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static void
setup_tls(const char *cert, const char *key)
{
	ctx = SSL_CTX_new(TLS_server_method());
	if (ctx == NULL ||
	    SSL_CTX_use_certificate_chain_file(ctx, cert) != 1 ||
	    SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
		ERR_print_errors_fp(stderr);
		die("cannot load %s / %s", cert, key);
	}
	SSL_CTX_set_mode(ctx, SSL_MODE_AUTO_RETRY);
}

static void
serve(int lfd)
{
	struct pollfd	pfd = { .fd = lfd, .events = POLLIN };
	int		fd;

	while (!stopping) {
		if (poll(&pfd, 1, 200) <= 0)
			continue;
		fd = accept(lfd, NULL, NULL);
		if (fd >= 0)
			spawn(fd);
	}
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cert", required_argument, NULL, 'c' },
		{ "key", required_argument, NULL, 'k' },
		{ "port", required_argument, NULL, 'p' },
		{ "port-file", required_argument, NULL, 'f' },
		{ "partitions", required_argument, NULL, 'n' },
		{ "stream-type", required_argument, NULL, 't' },
		{ "stats-file", required_argument, NULL, 's' },
		{ "record", required_argument, NULL, 'r' },
		{ "delay-ms", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	const char		*cert = NULL, *key = NULL, *pfile = NULL;
	const char		*sfile = NULL;
	struct sockaddr_in	 sin;
	socklen_t		 len = sizeof(sin);
	char			 buf[256];
	int			 ch, port = 0, lfd;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			cert = optarg;
			break;
		case 'k':
			key = optarg;
			break;
		case 'p':
			port = atoi(optarg);
			break;
		case 'f':
			pfile = optarg;
			break;
		case 'n':
			npartitions = atoi(optarg);
			break;
		case 't':
			stream_type = optarg;
			break;
		case 's':
			sfile = optarg;
			break;
		case 'd':
			delay_ms = atol(optarg);
			break;
		case 'r':
			if ((record_f = fopen(optarg, "w")) == NULL)
				die("%s: %s", optarg, strerror(errno));
			break;
		default:
			die("bad arguments (see the file header)");
		}
	}
	if (cert == NULL || key == NULL || pfile == NULL)
		die("--cert, --key and --port-file are required");
	if (npartitions < 1 || npartitions > 10)
		die("--partitions must be 1..10");
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	load_codecs();
	setup_tls(cert, key);
	lfd = listen_on(port);
	if (getsockname(lfd, (struct sockaddr *)&sin, &len) != 0)
		die("getsockname: %s", strerror(errno));
	snprintf(buf, sizeof(buf), "%d\n", ntohs(sin.sin_port));
	write_file(pfile, buf);
	serve(lfd);
	if (record_f != NULL && fclose(record_f) != 0)
		die("--record: %s", strerror(errno));
	stats_json(buf, sizeof(buf));
	if (sfile != NULL) {
		strncat(buf, "\n", sizeof(buf) - strlen(buf) - 1);
		write_file(sfile, buf);
	}
	return 0;
}
