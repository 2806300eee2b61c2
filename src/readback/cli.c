/*
 * The read-back commands' session (cli.h): configuration, loop, clients,
 * signals and time arguments.  The agent's own logging stays on stderr at
 * WARN, so the commands' output on stdout is only what they print.
 */
#include "config.h"

#include <sys/time.h>

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/escape.h"
#include "base/log.h"
#include "conf/conf.h"
#include "dis/disapi.h"
#include "dis/http.h"
#include "readback/cli.h"

#define MAX_CONNECTIONS	8

int
cli_open(struct cli *c, const char *name, const char *path)
{
	char	 err[1024];
	int	 level;

	memset(c, 0, sizeof(*c));
	c->name = name;
	if (conf_load(path, &c->conf, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", ESC(err));
		return 1;
	}
	level = log_level_parse(c->conf->log_level);
	log_setup(level == LOG_LVL_DEBUG ? level : LOG_LVL_WARN, false);
	/* libcurl runs with CURLOPT_NOSIGNAL, and a reader that went away
	 * (`| head`) shows as EPIPE on stdout. */
	signal(SIGPIPE, SIG_IGN);
	rand_seed((uint64_t)cli_now_ms());
	if (http_global_init() != 0)
		fatalx("cannot initialise libcurl");
	if (uv_loop_init(&c->loop) != 0)
		fatalx("cannot set up the event loop");
	uv_timer_init(&c->loop, &c->stop_timer);
	c->api = disapi_open(&c->loop, c->conf, MAX_CONNECTIONS, &c->http);
	return 0;
}

static void
on_sig(uv_signal_t *s, int signum)
{
	struct cli	*c = s->data;

	(void)signum;
	if (c->on_signal != NULL)
		c->on_signal(c->arg);
}

void
cli_signals(struct cli *c, void (*cb)(void *), void *arg)
{
	static const int signums[2] = { SIGINT, SIGTERM };
	size_t		 i;

	c->on_signal = cb;
	c->arg = arg;
	if (c->watching || c->stopping)
		return;
	for (i = 0; i < ARRAY_SIZE(c->sig); i++) {
		uv_signal_init(&c->loop, &c->sig[i]);
		c->sig[i].data = c;
		uv_signal_start(&c->sig[i], on_sig, signums[i]);
	}
	c->watching = true;
}

static void
http_closed(void *arg)
{
	struct cli	*c = arg;

	c->http = NULL;
}

static void
on_stop_timer(uv_timer_t *t)
{
	struct cli	*c = container_of(t, struct cli, stop_timer);
	size_t		 i;

	for (i = 0; c->watching && i < ARRAY_SIZE(c->sig); i++)
		uv_close((uv_handle_t *)&c->sig[i], NULL);
	c->watching = false;
	uv_close((uv_handle_t *)t, NULL);
	http_close(c->http, http_closed, c);
}

void
cli_stop(struct cli *c)
{
	if (c->stopping)
		return;
	c->stopping = true;
	uv_timer_start(&c->stop_timer, on_stop_timer, 0, 0);
}

void
cli_run_close(struct cli *c)
{
	uv_run(&c->loop, UV_RUN_DEFAULT);
	cli_stop(c);
	uv_run(&c->loop, UV_RUN_DEFAULT);
	if (uv_loop_close(&c->loop) != 0)
		log_warn("cli: handles left open on the loop");
	disapi_free(c->api);
	conf_free(c->conf);
	http_global_cleanup();
}

/* Escaped as a whole (escape.h), as the log is: its texts are DIS's
 * replies, names and records. */
void
cli_error(const struct cli *c, const char *fmt, ...)
{
	va_list	 ap;
	char	 msg[2048], out[4096];
	int	 n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	(void)esc_cpy(out, sizeof(out), msg, n < 0 ? 0 :
	    MIN((size_t)n, sizeof(msg) - 1), 0);
	fprintf(stderr, "disagent %s: %s\n", c->name, out);
}

int64_t
cli_now_ms(void)
{
	struct timeval	 tv;

	gettimeofday(&tv, NULL);
	return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

/* "1h30m", "-10m", "90s": the length in ms into *ms; false if not that. */
static bool
parse_ago(const char *s, int64_t *ms)
{
	int64_t	 total = 0, n, unit;
	char	*end;

	if (*s == '-' || *s == '+')
		s++;
	if (*s == '\0')
		return false;
	while (*s != '\0') {
		if (!isdigit((unsigned char)*s))
			return false;
		errno = 0;
		n = strtoll(s, &end, 10);
		if (errno != 0 || n > 100000000)
			return false;
		switch (*end) {
		case 's': unit = 1000; break;
		case 'm': unit = 60000; break;
		case 'h': unit = 3600000; break;
		case 'd': unit = 86400000; break;
		default: return false;
		}
		total += n * unit;
		s = end + 1;
	}
	*ms = total;
	return true;
}

/* n decimal digits at *s into *v; advances *s. */
static bool
digits(const char **s, int n, int *v)
{
	int	 i;

	*v = 0;
	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)(*s)[i]))
			return false;
		*v = *v * 10 + ((*s)[i] - '0');
	}
	*s += n;
	return true;
}

/* "Z", "+08:00", "+0800", "+08" into *off (seconds east); false if bad. */
static bool
parse_zone(const char *s, long *off)
{
	int	 sign, h, m = 0;

	if ((s[0] == 'Z' || s[0] == 'z') && s[1] == '\0') {
		*off = 0;
		return true;
	}
	if (s[0] != '+' && s[0] != '-')
		return false;
	sign = s[0] == '-' ? -1 : 1;
	s++;
	if (!digits(&s, 2, &h))
		return false;
	if (*s == ':')
		s++;
	if (*s != '\0' && !digits(&s, 2, &m))
		return false;
	if (*s != '\0' || h > 23 || m > 59)
		return false;
	*off = sign * (h * 3600L + m * 60L);
	return true;
}

/* The time of day of an ISO 8601 string, after the date, into tm and
 * *frac_ms; the rest (the zone) into *rest. */
static bool
parse_clock(const char *s, struct tm *tm, int *frac_ms, const char **rest)
{
	int	 scale = 100;

	if (*s != 'T' && *s != 't' && *s != ' ') {
		*rest = s;
		return true;
	}
	s++;
	if (!digits(&s, 2, &tm->tm_hour) || *s++ != ':' ||
	    !digits(&s, 2, &tm->tm_min))
		return false;
	if (*s == ':') {
		s++;
		if (!digits(&s, 2, &tm->tm_sec))
			return false;
		if (*s == '.' || *s == ',')
			for (s++; isdigit((unsigned char)*s); s++, scale /= 10)
				*frac_ms += (*s - '0') * scale;
	}
	*rest = s;
	return tm->tm_hour <= 23 && tm->tm_min <= 59 && tm->tm_sec <= 60;
}

static bool
parse_iso(const char *s, int64_t *ms)
{
	struct tm	 tm;
	const char	*rest;
	int		 frac = 0;
	long		 off;
	time_t		 t;

	memset(&tm, 0, sizeof(tm));
	if (!digits(&s, 4, &tm.tm_year) || *s++ != '-' ||
	    !digits(&s, 2, &tm.tm_mon) || *s++ != '-' ||
	    !digits(&s, 2, &tm.tm_mday) || tm.tm_mon < 1 || tm.tm_mon > 12 ||
	    tm.tm_mday < 1 || tm.tm_mday > 31 ||
	    !parse_clock(s, &tm, &frac, &rest))
		return false;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	if (*rest == '\0') {
		tm.tm_isdst = -1;
		t = mktime(&tm);
	} else if (parse_zone(rest, &off))
		t = timegm(&tm) - off;
	else
		return false;
	if (t == (time_t)-1)
		return false;
	*ms = (int64_t)t * 1000 + frac;
	return true;
}

int
cli_parse_time(const char *s, int64_t now_ms, int64_t *ms)
{
	int64_t	 ago;

	if (parse_ago(s, &ago)) {
		*ms = now_ms - ago;
		return 0;
	}
	return parse_iso(s, ms) ? 0 : -EINVAL;
}
