/*
 * What a journal entry becomes as a record (journalFormat), and what a
 * cursor says: pure functions of the entry's fields, for journal.c and
 * its tests.  No libsystemd here.
 *
 * JSON is journalctl -o json's object: "__CURSOR", "__REALTIME_TIMESTAMP"
 * and "__MONOTONIC_TIMESTAMP" first, then every field in the entry's
 * order, each value a string, a field that occurs more than once an array
 * of its values, and a value that is not printable UTF-8 (control
 * characters other than tab and newline, invalid sequences) an array of
 * its bytes as numbers.  SHORT is journalctl -o short's line: "Mon DD
 * HH:MM:SS HOST IDENT[PID]: MESSAGE" in local time, from
 * _SOURCE_REALTIME_TIMESTAMP when the entry has it, else its realtime;
 * IDENT is SYSLOG_IDENTIFIER or _COMM, PID SYSLOG_PID or _PID.
 */
#ifndef DISAGENT_JFORMAT_H
#define DISAGENT_JFORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

/* One FIELD=VALUE of an entry; both borrowed. */
struct jfield {
	const char	*name;
	size_t		 nlen;
	const char	*value;
	size_t		 vlen;
};

/* The entry's own values that are not fields. */
struct jentry {
	const char	*cursor;
	uint64_t	 realtime;	/* microseconds since the epoch */
	uint64_t	 monotonic;	/* microseconds since its boot */
};

/* The first value of field name in f[0..n), or NULL (its length in *len). */
const char	*jformat_get(const struct jfield *f, size_t n,
		    const char *name, size_t *len);

/*
 * The entry as journalctl -o json writes it (compact) into out (reset
 * first), at most max bytes (*cut tells whether bytes were dropped).
 */
void		 jformat_json(const struct jfield *f, size_t n,
		    const struct jentry *e, size_t max, struct buf *out,
		    bool *cut);
/* The entry as journalctl -o short writes it, without a newline. */
void		 jformat_short(const struct jfield *f, size_t n,
		    const struct jentry *e, size_t max, struct buf *out,
		    bool *cut);

/* The parts of a cursor "s=..;i=..;b=..;m=..;t=..;x=.." a gap needs. */
struct jcursor {
	char		 seqnum_id[33];	/* s= */
	uint64_t	 seqnum;	/* i=, hex */
	uint64_t	 realtime;	/* t=, hex microseconds */
};

/* Parse cursor into *out: false when a part is missing or malformed. */
bool		 jcursor_parse(const char *cursor, struct jcursor *out);

/*
 * The entries lost between the last one committed (from) and the first
 * one read after it (to), when from is no longer in the journal: 1 with
 * their number in *lost (0: none, only the committed entry went), 0 when
 * the number is unknown (the journal files were replaced: another
 * sequence), -1 when a cursor does not parse.
 */
int		 jcursor_gap(const char *from, const char *to, uint64_t *lost);

#endif
