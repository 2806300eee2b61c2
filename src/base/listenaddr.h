/*
 * A listening address as agent.ini gives it (httpListen): "A.B.C.D:PORT"
 * or "[IPV6]:PORT", numeric only (no names: a listener must not depend on
 * the resolver), the socket the agent listens on, and the bind -t tries.
 * No SO_REUSEPORT: a second process on the same port fails to bind
 * instead of sharing its connections.
 */
#ifndef DISAGENT_LISTENADDR_H
#define DISAGENT_LISTENADDR_H

#include <sys/socket.h>

#include "base/util.h"

/* Parse s into *ss (and its length into *len).  NULL, or why it is not an
 * address (static text that follows "httpListen = VALUE "). */
const char	*listenaddr_parse(const char *s, struct sockaddr_storage *ss,
		    socklen_t *len);

/*
 * A new listening socket (close-on-exec, non-blocking, backlog) on s:
 * the descriptor, or a negative errno (a bad address is -EINVAL).
 */
int		 listenaddr_listen(const char *s, int backlog) WARN_UNUSED;

/* Whether s can be listened on now: 0 or a negative errno (the socket is
 * closed again at once). */
int		 listenaddr_probe(const char *s) WARN_UNUSED;

#endif
