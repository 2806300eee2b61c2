/*
 * The keys of source = journal, as conf/ checks them and journal/ reads
 * them: the journalMatch syntax (one parser for both), and whether this
 * host has a journal to read.  No libsystemd here: the reader is
 * journal/journal.c.
 *
 * journalMatch is a comma-separated list of alternatives (ORed), each one
 * or more FIELD=VALUE terms joined by '+' (ANDed), as sd-journal and
 * journalctl take matches: _SYSTEMD_UNIT=nginx.service+PRIORITY=0..4,
 * SYSLOG_IDENTIFIER=app.  A field is upper-case letters, digits and '_',
 * not starting with a digit; PRIORITY=A..B (0 to 7) stands for each
 * priority from A to B.  Blanks around terms are ignored; a value holds
 * no ',' or '+'.
 */
#ifndef DISAGENT_JOURNALCONF_H
#define DISAGENT_JOURNALCONF_H

#include <stdbool.h>
#include <stddef.h>

/* The words of journalFormat, in the order of enum journal_format. */
extern const char *const journalconf_formats[];
enum journal_format {
	JFMT_MESSAGE,		/* the MESSAGE field alone */
	JFMT_JSON,		/* every field, as journalctl -o json */
	JFMT_SHORT,		/* journalctl's short line */
};

/* The words of source. */
extern const char *const journalconf_sources[];

/* What journalconf_match calls for a match. */
struct journalconf_match_cbs {
	/* One term "FIELD=VALUE" (NUL-terminated, borrowed): 0 or -errno. */
	int	(*term)(void *arg, const char *term);
	/* The next alternative starts (ORed with the ones before). */
	int	(*alternative)(void *arg);
	void	*arg;
};

/*
 * Parse match (journalMatch) and hand its terms to cbs, if it is not NULL.
 * 0; -EINVAL with why in err; or a callback's error.
 */
int	journalconf_match(const char *match,
	    const struct journalconf_match_cbs *cbs, char *err, size_t errlen);

/* For the key table: NULL when value is a valid journalMatch, else why. */
const char *journalconf_check_match(const char *value);

/*
 * Whether this host has a systemd journal to read: booted with systemd
 * (/run/systemd/system, what sd_booted() checks), or journal files under
 * /run/log/journal or /var/log/journal.  false: why in why.
 */
bool	journalconf_host_has_journal(char *why, size_t whylen);

/*
 * Whether dir (journalDirectory) can be read as a journal directory:
 * false with why in why.
 */
bool	journalconf_dir_readable(const char *dir, char *why, size_t whylen);

#endif
