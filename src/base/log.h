/*
 * Leveled logging to stderr.  Levels are syslog priorities so that, under
 * systemd, a "<N>" prefix lets journald keep them.  Macros check the level
 * before formatting and are safe in if/else (do { } while (0)).
 */
#ifndef DISAGENT_LOG_H
#define DISAGENT_LOG_H

#include <stdbool.h>

#include "base/util.h"

enum log_level {
	LOG_LVL_ERROR = 3,
	LOG_LVL_WARN = 4,
	LOG_LVL_INFO = 6,
	LOG_LVL_DEBUG = 7,
};

extern int	log_level;

/* journal: prefix lines with "<N>" instead of a timestamp. */
void	log_setup(int level, bool journal);
/* Parse "ERROR", "WARN", "INFO", "DEBUG" (any case); -1 if unknown. */
int	log_level_parse(const char *);
void	log_write(int level, const char *func, const char *fmt, ...)
	    PRINTFLIKE(3, 4);
_Noreturn void fatalx(const char *fmt, ...) PRINTFLIKE(1, 2);

#define log_at(lvl, ...)						\
	do {								\
		if (log_level >= (lvl))					\
			log_write((lvl), __func__, __VA_ARGS__);	\
	} while (0)
#define log_error(...)	log_at(LOG_LVL_ERROR, __VA_ARGS__)
#define log_warn(...)	log_at(LOG_LVL_WARN, __VA_ARGS__)
#define log_info(...)	log_at(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...)	log_at(LOG_LVL_DEBUG, __VA_ARGS__)

#endif
