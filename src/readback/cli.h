/*
 * What the read-back commands (`disagent describe`, `read`, `verify`)
 * share: agent.ini, a loop with the HTTP and DIS clients built exactly as
 * the agent builds them (disapi_open), SIGINT/SIGTERM, the one-line error
 * messages, and the times given on their command lines.
 */
#ifndef DISAGENT_CLI_H
#define DISAGENT_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "base/util.h"

struct conf;
struct disapi;
struct http;

/* A command's session; private: use the API. */
struct cli {
	const char	*name;		/* "read", for messages */
	struct conf	*conf;
	uv_loop_t	 loop;
	struct http	*http;
	struct disapi	*api;
	uv_signal_t	 sig[2];	/* SIGINT, SIGTERM */
	uv_timer_t	 stop_timer;	/* cli_stop() takes effect here */
	bool		 watching;
	bool		 stopping;
	void		(*on_signal)(void *);
	void		*arg;
};

/*
 * Load path and set up the loop and the clients.  Returns 0, or 1 after
 * printing the configuration error ("FILE:LINE: message") to stderr.
 */
int	cli_open(struct cli *, const char *name, const char *path);

/*
 * From now on SIGINT and SIGTERM call cb(arg) (once each time), instead of
 * ending the process.
 */
void	cli_signals(struct cli *, void (*cb)(void *), void *arg);

/*
 * Stop: no more signals, and the HTTP client closes, cancelling what is in
 * flight (their callbacks run with HTTP_ERR_CANCELLED), so that uv_run()
 * returns once the command's own handles are closed.  It takes effect on
 * the next turn of the loop, so it may be called from any callback,
 * including an HTTP done callback.  Idempotent.
 */
void	cli_stop(struct cli *);

/* Run the loop until cli_stop() and every handle closed; free it all. */
void	cli_run_close(struct cli *);

/* "disagent NAME: message\n" on stderr. */
void	cli_error(const struct cli *, const char *fmt, ...) PRINTFLIKE(2, 3);

/*
 * A time of the command line into *ms (milliseconds since the epoch):
 * ISO 8601 ("2026-12-01T07:00:00Z", "2026-12-01 07:00", "2026-12-01",
 * with Z, +08:00, +0800 or +08, fractions of a second; no zone is local
 * time), or a time that long before now_ms ("10m", "-10m", "2h", "1h30m",
 * "90s", "2d"; units s, m, h, d).  Returns 0, or -EINVAL.
 */
int	cli_parse_time(const char *s, int64_t now_ms, int64_t *ms)
	    WARN_UNUSED;

/* Now, in milliseconds since the epoch. */
int64_t	cli_now_ms(void);

#endif
