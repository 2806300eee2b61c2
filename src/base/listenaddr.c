/*
 * Listening addresses (listenaddr.h): parsing "host:port" with a numeric
 * IPv4 or bracketed IPv6 host, and binding it.
 */
#include "config.h"

#include <sys/socket.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/listenaddr.h"

/* The port after the host: digits only, 1..65535. */
static int
parse_port(const char *s)
{
	char	*end;
	long	 v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < 1 || v > 65535)
		return -1;
	return (int)v;
}

const char *
listenaddr_parse(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in	*in4 = (struct sockaddr_in *)(void *)ss;
	struct sockaddr_in6	*in6 = (struct sockaddr_in6 *)(void *)ss;
	char			 host[INET6_ADDRSTRLEN + 1];
	const char		*colon, *end;
	size_t			 n;
	int			 port;

	memset(ss, 0, sizeof(*ss));
	if (s[0] == '[') {
		end = strchr(s, ']');
		if (end == NULL || end[1] != ':')
			return "is not [IPV6]:PORT";
		colon = end + 1;
		s++;
	} else {
		colon = strrchr(s, ':');
		if (colon == NULL)
			return "has no :PORT (an address and a port: "
			    "127.0.0.1:2020 or [::1]:2020)";
		end = colon;
	}
	n = (size_t)(end - s);
	if (n == 0 || n >= sizeof(host))
		return "has no address before :PORT";
	memcpy(host, s, n);
	host[n] = '\0';
	port = parse_port(colon + 1);
	if (port < 0)
		return "has a port that is not a number from 1 to 65535";
	if (end != colon) {
		if (inet_pton(AF_INET6, host, &in6->sin6_addr) != 1)
			return "is not a numeric IPv6 address";
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*in6);
		return NULL;
	}
	if (inet_pton(AF_INET, host, &in4->sin_addr) != 1)
		return "is not a numeric IPv4 address (IPv6 goes in brackets: "
		    "[::1]:2020)";
	in4->sin_family = AF_INET;
	in4->sin_port = htons((uint16_t)port);
	*len = sizeof(*in4);
	return NULL;
}

/* A socket bound to s (listen: and listening): the fd or -errno. */
static int
bound(const char *s, int backlog)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len;
	int			 fd, on = 1, r;

	if (listenaddr_parse(s, &ss, &len) != NULL)
		return -EINVAL;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0);
	if (fd < 0)
		return -errno;
	/* SO_REUSEADDR: connections in TIME_WAIT do not hold the port; a
	 * listening socket still does (the probe fails against it). */
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0 ||
	    (ss.ss_family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6,
	    IPV6_V6ONLY, &on, sizeof(on)) != 0) ||
	    bind(fd, (struct sockaddr *)&ss, len) != 0 ||
	    (backlog > 0 && listen(fd, backlog) != 0)) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

int
listenaddr_listen(const char *s, int backlog)
{
	return bound(s, backlog > 0 ? backlog : 1);
}

int
listenaddr_probe(const char *s)
{
	int	 fd;

	/* Bound, never listening: no connection may land on the probe. */
	fd = bound(s, 0);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}
