/*
 * Proxy settings.  The DIS Java SDK (SdkProxyRoutePlanner) splits
 * NON_PROXY_HOSTS at '|', lower-cases each pattern, turns '*' into ".*?"
 * and matches the whole host name; libcurl's NOPROXY takes host names
 * (matching the name and every host under it), IP addresses and CIDR
 * ranges.  The patterns people write, "*.example.com", "localhost",
 * "192.168.*", translate exactly or one step wider (".example.com" also
 * matches example.com itself); the rest is refused at configuration time
 * rather than silently sent through the proxy.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/proxyconf.h"

#define PATTERN_MAX	256

const char *
proxy_check_host(const char *h)
{
	size_t	 n = strlen(h);

	if (strstr(h, "://") != NULL)
		return "is a URL: give the host name only (PROXY_PROTOCOL and "
		    "PROXY_PORT say the rest)";
	if (h[0] == '[' && n > 2 && h[n - 1] == ']' &&
	    strspn(h + 1, "0123456789abcdefABCDEF:.") == n - 2)
		return NULL;
	if (strchr(h, ':') != NULL &&
	    strspn(h, "0123456789abcdefABCDEF:.") == n)
		return NULL;
	if (strspn(h, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789.-_") != n)
		return "is not a host name or an IP address";
	return NULL;
}

/* "a.b.*" with 1-3 decimal octets: the CIDR range into out. */
static bool
ipv4_prefix(const char *p, char *out, size_t len)
{
	unsigned	 oct[3];
	size_t		 n = strlen(p), i, k = 0;
	const char	*s = p;
	char		*end;
	long		 v;

	if (n < 3 || strcmp(p + n - 2, ".*") != 0)
		return false;
	while (s < p + n - 2) {
		if (k == 3 || !isdigit((unsigned char)*s))
			return false;
		v = strtol(s, &end, 10);
		if (v > 255 || end - s > 3 || (*end != '.' && end != p + n - 2))
			return false;
		oct[k++] = (unsigned)v;
		s = *end == '.' ? end + 1 : end;
	}
	if (s != p + n - 1)
		return false;
	snprintf(out, len, "%u", oct[0]);
	for (i = 1; i < 4; i++)
		snprintf(out + strlen(out), len - strlen(out), ".%u",
		    i < k ? oct[i] : 0);
	snprintf(out + strlen(out), len - strlen(out), "/%zu", k * 8);
	return true;
}

/* One pattern (lower case, trimmed) into its NOPROXY entry. */
static int
translate(const char *p, char *out, size_t len)
{
	if (strcmp(p, "*") == 0 || strchr(p, '*') == NULL) {
		snprintf(out, len, "%s", p);
		return 0;
	}
	if (strncmp(p, "*.", 2) == 0 && p[2] != '\0' &&
	    strchr(p + 2, '*') == NULL) {
		snprintf(out, len, "%s", p + 1);
		return 0;
	}
	return ipv4_prefix(p, out, len) ? 0 : -EINVAL;
}

int
proxy_noproxy(const char *patterns, struct buf *out, char *why, size_t len)
{
	const char	*s = patterns;
	char		 p[PATTERN_MAX], entry[PATTERN_MAX + 8];
	size_t		 n, i, start = out->len;

	while (*s != '\0') {
		n = strcspn(s, "|,");
		while (n > 0 && isspace((unsigned char)*s)) {
			s++;
			n--;
		}
		for (i = 0; i < n && i + 1 < sizeof(p); i++)
			p[i] = (char)tolower((unsigned char)s[i]);
		while (i > 0 && isspace((unsigned char)p[i - 1]))
			i--;
		p[i] = '\0';
		s += n + (s[n] != '\0');
		if (p[0] == '\0')
			continue;
		if (n >= sizeof(p) || translate(p, entry, sizeof(entry)) != 0) {
			snprintf(why, len, "has the pattern '%.64s', which cannot be "
			    "used: write a host name, *.domain, an IP address, "
			    "a.b.* or *", p);
			return -EINVAL;
		}
		buf_printf(out, "%s%s", out->len > start ? "," : "", entry);
	}
	return 0;
}
