/*
 * The service manager notification protocol (sd_notify(3)) without
 * libsystemd: one datagram of "VAR=value" lines to the AF_UNIX socket named
 * by $NOTIFY_SOCKET.  Outside systemd (the variable unset) every call is a
 * no-op that succeeds, so callers need no "are we under systemd" checks.
 */
#ifndef DISAGENT_NOTIFY_H
#define DISAGENT_NOTIFY_H

#include <stdint.h>

#include "base/util.h"

/*
 * Send state (one or more "VAR=value" lines joined by '\n') as one datagram
 * to $NOTIFY_SOCKET: an absolute path, or an abstract socket written with a
 * leading '@'.  Returns 0 when sent or when the variable is unset or empty;
 * otherwise a negative errno (-EAFNOSUPPORT for an address that is neither,
 * -ENAMETOOLONG, or what socket/sendto failed with), logged as a warning.
 */
int		 notify_send(const char *state);

/* "READY=1": start-up is complete. */
int		 notify_ready(void);

/*
 * "RELOADING=1\nMONOTONIC_USEC=<CLOCK_MONOTONIC in microseconds>", the
 * form Type=notify-reload (systemd 253+) requires; older managers ignore
 * the second line.  Follow it with notify_ready() when the reload is done.
 */
int		 notify_reloading(void);

/* "STOPPING=1": shutdown has begun. */
int		 notify_stopping(void);

/*
 * "STATUS=<text>", the one-line status systemctl status shows.  Newlines
 * in the formatted text become blanks.
 */
int		 notify_status(const char *fmt, ...) PRINTFLIKE(1, 2);

/* "WATCHDOG=1": keep-alive ping for WatchdogSec=. */
int		 notify_watchdog(void);

/*
 * The watchdog interval in microseconds from $WATCHDOG_USEC, or 0 when the
 * watchdog is off: the variable unset, not a positive decimal number, or
 * $WATCHDOG_PID set to a process other than this one.  Ping at half of it.
 */
uint64_t	 notify_watchdog_usec(void);

#endif
