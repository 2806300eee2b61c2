/*
 * sd_notify(3) by hand.  Each call opens a datagram socket, sends one
 * message to the address in $NOTIFY_SOCKET and closes it again: messages are
 * rare (start, reload, stop, a watchdog ping every few seconds), so holding
 * a socket open buys nothing.  An address starting with '@' is Linux's
 * abstract namespace, spelt with a leading NUL byte in sun_path and given
 * without a terminating NUL in the address length, as libsystemd does.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/notify.h"
#include "base/util.h"

/* Fill sa and *len from name; 0 or a negative errno. */
static int
notify_addr(const char *name, struct sockaddr_un *sa, socklen_t *len)
{
	size_t	 n = strlen(name);

	if (name[0] != '/' && name[0] != '@')
		return -EAFNOSUPPORT;
	if (n < 2)
		return -EINVAL;
	/* A path needs room for its NUL; an abstract name has none. */
	if (n + (name[0] == '/') > sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path, name, n);
	if (name[0] == '@')
		sa->sun_path[0] = '\0';
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n +
	    (name[0] == '/'));
	return 0;
}

static int
send_datagram(const struct sockaddr_un *sa, socklen_t salen,
    const char *state)
{
	ssize_t	 w;
	int	 fd, r = 0;

	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return -errno;
	do {
		w = sendto(fd, state, strlen(state), MSG_NOSIGNAL,
		    (const struct sockaddr *)sa, salen);
	} while (w == -1 && errno == EINTR);
	if (w == -1)
		r = -errno;
	close(fd);
	return r;
}

/* The error of the last message, 0 when it went. */
static int	 failed;

int
notify_send(const char *state)
{
	struct sockaddr_un	 sa;
	socklen_t		 salen = 0;
	const char		*name;
	int			 r;

	name = getenv("NOTIFY_SOCKET");
	if (name == NULL || *name == '\0')
		return 0;
	r = notify_addr(name, &sa, &salen);
	if (r == 0)
		r = send_datagram(&sa, salen, state);
	/* Status and watchdog messages go every second or so: a failure is
	 * said once, until it changes or notifying works again. */
	if (r < 0 && r != failed)
		log_warn("cannot notify the service manager at %s: %s (said "
		    "once until it changes)", name, strerror(-r));
	else if (r == 0 && failed != 0)
		log_info("notifying the service manager at %s works again",
		    name);
	failed = r;
	return r;
}

int
notify_ready(void)
{
	return notify_send("READY=1");
}

int
notify_reloading(void)
{
	struct timespec	 ts;
	char		 msg[64];
	uint64_t	 usec;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	usec = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
	snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%" PRIu64,
	    usec);
	return notify_send(msg);
}

int
notify_stopping(void)
{
	return notify_send("STOPPING=1");
}

int
notify_status(const char *fmt, ...)
{
	va_list	 ap;
	char	 msg[512];
	char	*p;
	int	 n;

	n = snprintf(msg, sizeof(msg), "STATUS=");
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	va_end(ap);
	/* A newline would start a new, bogus "VAR=" line. */
	for (p = msg; *p != '\0'; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return notify_send(msg);
}

int
notify_watchdog(void)
{
	return notify_send("WATCHDOG=1");
}

/* A positive decimal number and nothing else, or 0. */
static uint64_t
parse_u64(const char *s)
{
	uint64_t	 v = 0, d;
	const char	*p;

	if (s == NULL || *s == '\0')
		return 0;
	for (p = s; *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			return 0;
		d = (uint64_t)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return 0;
		v = v * 10 + d;
	}
	return v;
}

uint64_t
notify_watchdog_usec(void)
{
	const char	*pid;

	pid = getenv("WATCHDOG_PID");
	if (pid != NULL && *pid != '\0' && parse_u64(pid) != (uint64_t)getpid())
		return 0;
	return parse_u64(getenv("WATCHDOG_USEC"));
}
