/*
 * The DIS Agent's proxy keys (PROXY_HOST, PROXY_PORT, PROXY_PROTOCOL,
 * PROXY_USERNAME, PROXY_PASSWORD, NON_PROXY_HOSTS) turned into what http
 * takes: a proxy URL, credentials and libcurl's list of hosts reached
 * directly.  String work only; http.c sets the curl options.
 */
#ifndef DISAGENT_PROXY_H
#define DISAGENT_PROXY_H

#include "http.h"
#include "util.h"

struct conf;

/* NULL when host is a host name or an IP address; else why not. */
const char	*proxy_check_host(const char *host);

/*
 * NON_PROXY_HOSTS (the DIS SDK's Java patterns separated by '|', commas
 * accepted too; '*' stands for any characters, matched without case) as
 * libcurl's NOPROXY list, appended to out.  A pattern without '*' stays
 * (libcurl also matches the hosts under a domain name), "*.example.com"
 * becomes ".example.com" (the domain and every host in it), "10.1.*" the
 * CIDR range 10.1.0.0/16, and "*" every host.  Any other use of '*' cannot
 * be expressed: -EINVAL, with the pattern named in why.
 */
int		 proxy_noproxy(const char *patterns, struct buf *out, char *why,
		    size_t whylen) WARN_UNUSED;

/* What proxy_init fills in; private: use the API. */
struct proxy_strings {
	char		*url;
	struct buf	 noproxy;
};

/*
 * Point opts at the proxy of c (nothing when PROXY_HOST is empty: libcurl
 * then honours https_proxy and no_proxy), with strings held in ps, and log
 * it once (without the password).  ps must outlive the use of opts.
 */
void		 proxy_init(struct proxy_strings *ps, const struct conf *c,
		    struct http_opts *opts);
/* Free what proxy_init made. */
void		 proxy_cleanup(struct proxy_strings *ps);

#endif
