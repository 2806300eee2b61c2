/*
 * stderr logger: "2026-11-30 05:59:00.123 INFO  [func] message" on a
 * terminal or file, "<6>[func] message" under journald.  One write(2) per
 * line so lines from a dying process are never interleaved mid-line.  The
 * message is escaped (escape.h) as it is written: it carries file names,
 * stream names and reply bodies, and a newline among them would start a
 * line of its own, which journald takes at its "<N>" for an entry of any
 * priority; an ESC would drive the terminal of whoever reads the log.  So
 * no call site escapes, and no message can hold a line break.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "base/escape.h"
#include "base/log.h"

int		log_level = LOG_LVL_INFO;
static bool	log_journal;

void
log_setup(int level, bool journal)
{
	log_level = level;
	log_journal = journal;
}

int
log_level_parse(const char *s)
{
	if (strcasecmp(s, "ERROR") == 0)
		return LOG_LVL_ERROR;
	if (strcasecmp(s, "WARN") == 0 || strcasecmp(s, "WARNING") == 0)
		return LOG_LVL_WARN;
	if (strcasecmp(s, "INFO") == 0)
		return LOG_LVL_INFO;
	if (strcasecmp(s, "DEBUG") == 0)
		return LOG_LVL_DEBUG;
	return -1;
}

static const char *
level_name(int level)
{
	switch (level) {
	case LOG_LVL_ERROR:
		return "ERROR";
	case LOG_LVL_WARN:
		return "WARN ";
	case LOG_LVL_INFO:
		return "INFO ";
	default:
		return "DEBUG";
	}
}

static void __attribute__((format(printf, 3, 0)))
log_vwrite(int level, const char *func, const char *fmt, va_list ap)
{
	char		 body[4096], line[8192];
	size_t		 n;
	int		 r;
	struct timeval	 tv;
	struct tm	 tm;

	if (log_journal) {
		r = snprintf(line, sizeof(line), "<%d>[%s] ", level, func);
	} else {
		gettimeofday(&tv, NULL);
		localtime_r(&tv.tv_sec, &tm);
		r = snprintf(line, sizeof(line),
		    "%04d-%02d-%02d %02d:%02d:%02d.%03d %s [%s] ",
		    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		    tm.tm_min, tm.tm_sec, (int)(tv.tv_usec / 1000),
		    level_name(level), func);
	}
	n = r < 0 ? 0 : MIN((size_t)r, sizeof(line) - 1);
	r = vsnprintf(body, sizeof(body), fmt, ap);
	n += esc_cpy(line + n, sizeof(line) - n, body,
	    r < 0 ? 0 : MIN((size_t)r, sizeof(body) - 1), 0);
	line[n++] = '\n';
	/* Best effort: nowhere to report a failed write of the log. */
	if (write(STDERR_FILENO, line, n) < 0)
		return;
}

void
log_write(int level, const char *func, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	log_vwrite(level, func, fmt, ap);
	va_end(ap);
}

_Noreturn void
fatalx(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LVL_ERROR, "fatal", fmt, ap);
	va_end(ap);
	exit(2);
}
