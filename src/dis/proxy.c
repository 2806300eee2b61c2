/*
 * The proxy keys as libcurl options for http_new: the URL, credentials
 * and the NOPROXY list (conf/proxyconf.c translates NON_PROXY_HOSTS).
 */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "conf/conf.h"
#include "conf/proxyconf.h"
#include "dis/proxy.h"

void
proxy_init(struct proxy_strings *ps, const struct conf *c,
    struct http_opts *opts)
{
	const char	*h = c->proxy_host;
	char		 why[128];
	bool		 v6;

	memset(ps, 0, sizeof(*ps));
	buf_init(&ps->noproxy);
	if (h[0] == '\0')
		return;
	v6 = strchr(h, ':') != NULL && h[0] != '[';
	ps->url = xasprintf("%s://%s%s%s:%lld", c->proxy_protocol,
	    v6 ? "[" : "", h, v6 ? "]" : "", c->proxy_port);
	opts->proxy = ps->url;
	/* http_new copies them (and zeroes its copy of the password). */
	if (c->proxy_username[0] != '\0') {
		opts->proxy_user = c->proxy_username;
		opts->proxy_password = c->proxy_password;
	}
	/* conf_load checked the patterns: this cannot fail. */
	if (proxy_noproxy(c->non_proxy_hosts, &ps->noproxy, why,
	    sizeof(why)) == 0 && ps->noproxy.len > 0)
		opts->noproxy = ps->noproxy.data;
	log_info("requests to DIS go through the proxy %s%s%s%s%s", ps->url,
	    opts->proxy_user != NULL ? " as user " : "",
	    opts->proxy_user != NULL ? opts->proxy_user : "",
	    opts->noproxy != NULL ? "; not for " : "",
	    opts->noproxy != NULL ? opts->noproxy : "");
}

void
proxy_cleanup(struct proxy_strings *ps)
{
	free(ps->url);
	buf_cleanup(&ps->noproxy);
	memset(ps, 0, sizeof(*ps));
}
