/*
 * The systemd journal as a flow reads it (source = journal): sd-journal
 * opened on the system journal or on journalDirectory, with the flow's
 * journalMatch, each entry a record in its journalFormat.  journal/ is
 * the only user of libsystemd, which sdjournal.c loads when needed.
 *
 * No thread and no busy wait: the loop waits on sd_journal_get_fd with a
 * uv_poll, and on a timer for sd_journal_get_timeout (the journal's own
 * poll interval on file systems without inotify); each wake-up is handed
 * to sd_journal_process, and when it says the journal changed (entries
 * appended, a file added or removed) the owner's callback says there may
 * be entries to read.  Reading is pulled: the owner peeks at the next
 * entry and takes it when it took the record, so an entry it refused is
 * offered again.
 *
 * Positions are sd-journal cursors.  The reader starts after the cursor
 * of the last entry committed (kept by the owner in the registry), else at
 * initialPosition: the oldest entry kept, or the end (whose cursor is then
 * the one to keep, so entries logged while the agent is stopped are not
 * skipped at the next start).  When that cursor's entry is no longer in
 * the journal (rotated away, vacuumed, the files replaced), the reader
 * goes on from the first entry after it, logs one WARN with the gap and
 * counts it (disagent_journal_gaps_total, and the entries known lost in
 * disagent_journal_entries_lost_total).
 *
 * Owns: the sd_journal handle, the poll and the timer (closed
 * asynchronously by journal_free, without calling back).
 */
#ifndef DISAGENT_JOURNAL_H
#define DISAGENT_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "base/util.h"

struct conf_flow;
struct metrics_flow;
struct journal;

/* The entry peeked at; its pointers are borrowed until the next peek. */
struct journal_entry {
	const char	*data;		/* the record (NULL: the entry has no
					   MESSAGE, nothing to send) */
	size_t		 len;
	bool		 cut;		/* cut to max_record */
	const char	*name;		/* its unit (_SYSTEMD_UNIT), else its
					   SYSLOG_IDENTIFIER, _COMM, "journal" */
	const char	*cursor;
	uint64_t	 realtime;	/* microseconds since the epoch */
};

/* The journal may have changed: there may be entries to read. */
typedef void	(*journal_cb)(void *arg);

/*
 * Open the journal of flow fc (borrowed, outlives it) with its matches.
 * keep_delim: each record ends with '\n' (isRemainRecordDelimiter, or the
 * processing chain drops it itself); m (borrowed) counts the gaps; once:
 * --once (nothing is watched).  NULL with the reason in err.
 */
struct journal	*journal_open(uv_loop_t *, const struct conf_flow *fc,
		    bool keep_delim, struct metrics_flow *m, bool once,
		    journal_cb, void *arg, char *err, size_t errlen);
/*
 * Position the reader after cursor (NULL: at initialPosition) and start
 * watching.  When it starts at the end of a journal that has entries, the
 * cursor of the last one is copied into *start (new; free it), the
 * position to keep until an entry is committed; else *start is NULL.
 * 0 or a negative errno (logged).
 */
int		 journal_start(struct journal *, const char *cursor,
		    char **start) WARN_UNUSED;
/* Stop watching (stop, reload). */
void		 journal_stop(struct journal *);
/* Close it (NULL-safe); the handles close asynchronously. */
void		 journal_free(struct journal *);

/*
 * The next entry into *e, made into a record of at most max_record bytes:
 * 1; 0 when there is none now; a negative errno (logged).  The same entry
 * until journal_take.
 */
int		 journal_peek(struct journal *, size_t max_record,
		    struct journal_entry *e) WARN_UNUSED;
/* The entry peeked at is taken: the next peek reads the one after it. */
void		 journal_take(struct journal *);

/* What `disagent status` shows of a journal flow (journal_position). */
struct journal_position {
	uint64_t	 at;		/* realtime of the committed entry; 0 */
	uint64_t	 newest;	/* realtime of the newest entry; 0 */
	uint64_t	 behind;	/* entries after it (up to the cap) */
	bool		 more;		/* more than the cap */
	bool		 gone;		/* the committed entry is no longer in
					   the journal */
};

/*
 * Open the journal of fc now, without a loop, and measure how far the
 * committed cursor (NULL: none yet, so initialPosition) is behind its
 * newest matching entry, counting at most cap entries.  0 or a negative
 * errno with the reason in err.
 */
int		 journal_position(const struct conf_flow *fc,
		    const char *cursor, uint64_t cap,
		    struct journal_position *out, char *err, size_t errlen)
		    WARN_UNUSED;

#endif
