/*
 * The checks and the translation of the DIS Agent's proxy keys that the
 * key table needs (PROXY_HOST, NON_PROXY_HOSTS); dis/proxy.h turns them
 * into libcurl's options.
 */
#ifndef DISAGENT_PROXYCONF_H
#define DISAGENT_PROXYCONF_H

#include <stddef.h>

#include "base/util.h"

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

#endif
