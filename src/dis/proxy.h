/*
 * The DIS Agent's proxy keys (PROXY_HOST, PROXY_PORT, PROXY_PROTOCOL,
 * PROXY_USERNAME, PROXY_PASSWORD, NON_PROXY_HOSTS) turned into what http
 * takes: a proxy URL, credentials and libcurl's list of hosts reached
 * directly (conf/proxyconf.h checks and translates the keys).  String work
 * only; http.c sets the curl options.
 */
#ifndef DISAGENT_PROXY_H
#define DISAGENT_PROXY_H

#include "base/util.h"
#include "dis/http.h"

struct conf;

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
