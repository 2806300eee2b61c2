/*
 * The record framer: turns the bytes of one file into records.  It is pure
 * and stateful: the caller reads bytes (tailer.c) and hands them over with
 * their file offset; the framer calls back once per record with the record's
 * data and the exact file offsets it covers, and says how many bytes it
 * consumed.  Bytes it did not consume (a partial last line) are offered
 * again later with more appended; the framer never buffers them.
 *
 * What it implements, per flow: a one-byte record delimiter, optionally kept
 * at the end of the data; CR stripping before '\n'; skipping empty records;
 * skipping the first lines of a file read from its start; multi-line
 * records that begin at a line matching a PCRE2 pattern; conversion of
 * records from the file's encoding to UTF-8; and a record size cap, with a
 * line that runs past it emitted truncated and the rest of it discarded
 * without buffering.
 *
 * A struct framer holds the compiled configuration and is shared by all
 * files of a flow (one thread).  A struct framer_state is per file: the
 * tailer feeds an idle one from the stack and keeps one out of line only
 * while it is not idle (tailer.c).
 */
#ifndef DISAGENT_FRAMER_H
#define DISAGENT_FRAMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"
#include "records/mlpreset.h"

struct framer_opts {
	int		 delim;		/* record delimiter byte, 0..255 */
	bool		 keep_delim;	/* isRemainRecordDelimiter */
	bool		 strip_cr;	/* stripCarriageReturn ('\n' only) */
	bool		 skip_empty;	/* skipEmptyLines */
	const char	*multiline;	/* NULL or "": one line, one record */
	const char	*preset;	/* NULL or "", or multiLinePreset */
	const char	*encoding;	/* NULL or "UTF-8": no conversion */
	unsigned long	 skip_header;	/* skipHeaderLines */
	/*
	 * Container log files (records/ctrlog.h): container is an enum
	 * ctrlog_format, CTRLOG_NONE (0) for other files.  Each line is
	 * decoded, lines of streams not in the mask streams (0: all) are
	 * dropped, partial lines are joined per stream, and the record is
	 * ctr_record (enum ctrlog_record) of the text.
	 */
	int		 container;
	unsigned	 streams;
	int		 ctr_record;
};

struct framer;
struct framer_pending;

/*
 * Per-file framing state.  Visible so that the tailer can hold it; use the
 * API, except for reading the counters.  The multi-line record being
 * assembled lives in its own allocation, made by the first one.
 */
struct framer_state {
	struct framer_pending *pending;	/* NULL until multi-line needs it */
	unsigned long	 header_left;	/* header lines still to skip */
	bool		 has_pending;	/* a multi-line record is pending */
	bool		 skipping;	/* discarding a runaway line's tail */
	struct mlpreset_state mlp;	/* the preset's, idle without one */

	/* Counters, only ever incremented. */
	uint64_t	 truncated;	/* records cut to max_record */
	uint64_t	 header_skipped; /* header lines not sent */
	uint64_t	 empty_skipped;	/* empty records not sent */
	uint64_t	 invalid;	/* undecodable byte sequences replaced */
	uint64_t	 malformed;	/* container lines of no known format */
	uint64_t	 joined;	/* container records joined from
					   partial lines */
};

/*
 * Called for each record.  data (borrowed, valid until the callback returns)
 * holds len bytes, len <= max_record.  start is the file offset of the
 * record's first byte; end is the offset just past the last byte it
 * consumed (its delimiter, or the part kept of a truncated line).  Return
 * 0 to take the record, non-zero to refuse it: a refused record is not
 * consumed and will be offered again.
 */
typedef int	(*framer_cb)(void *arg, const char *data, size_t len,
		    uint64_t start, uint64_t end);

/*
 * Compile opts into *out (new; free with framer_free()).  The strings in
 * opts are copied or compiled, not kept.
 *
 * The multi-line pattern is PCRE2 (close to Java's regex syntax) and is
 * matched anywhere in each line without its delimiter, like Java's find():
 * write "^..." to match at the start of a line.  For UTF-8 files it is
 * matched as UTF-8 (invalid sequences never match a character); for other
 * encodings it is matched against the file's raw bytes, so it should be
 * ASCII.  strip_cr only applies when the delimiter is '\n'.
 *
 * A preset (records/mlpreset.h) replaces the pattern: it decides which
 * lines start, continue and end a record.  Setting both is refused.
 *
 * Returns 0, or -EINVAL with a message in err (errlen bytes, may be 0) when
 * the pattern does not compile, the preset is unknown or both are set, the encoding cannot be converted to UTF-8,
 * or delim is out of range.
 */
int	framer_new(const struct framer_opts *, struct framer **out, char *err,
	    size_t errlen) WARN_UNUSED;
/* Free a framer (NULL is fine).  Its states must be cleaned up first. */
void	framer_free(struct framer *);
/* The record delimiter byte. */
int	framer_delim(const struct framer *);

/*
 * Bytes currently held by the framer's own scratch buffers (not counting
 * pending multi-line records, which are in the states).
 */
size_t	framer_memory(const struct framer *);

/*
 * Initialise a file's state for a framer.  from_start: the file is read
 * from offset 0, so its first skip_header lines are skipped.
 */
void	framer_state_init(struct framer_state *, const struct framer *,
	    bool from_start);
/* Release a state's memory, dropping any pending record. */
void	framer_state_cleanup(struct framer_state *);
/* Bytes a state holds for its pending multi-line record (0 when none). */
size_t	framer_state_memory(const struct framer_state *);
/* Discard what comes up to the next delimiter (read inside a line). */
void	framer_state_skip_line(struct framer_state *);

/*
 * Frame p[0..n), the file's bytes at offsets base..base+n, calling cb for
 * each record (possibly many times).  Returns the number of bytes consumed;
 * the caller offers the rest again, at base plus that, once it has more.
 *
 * Only whole delimited lines are consumed, except for runaway lines.  A
 * line longer than max_record bytes (without its delimiter) is framed as
 * its first max_record bytes, a truncated line ending at its start +
 * max_record, and the rest of it, up to and including its delimiter, is
 * consumed and discarded: at once when the delimiter is in p[0..n),
 * otherwise in this call (all of p) and the following ones, without being
 * buffered.  The records do not depend on how the file is cut into calls,
 * but the caller must offer at least max_record + 1 bytes whenever the
 * file has them, or a runaway line stalls.  max_record must be > 0.
 *
 * In multi-line mode, a line matching the pattern starts a record and the
 * following lines that do not match are joined to it with the delimiter;
 * the record is kept in the state (consumed) until the next start line or
 * framer_flush().  Lines before the first start line, or after a flush, are
 * records of their own.  With a preset, a line that neither continues the
 * pending record nor starts one sends it and is a record of its own, and a
 * line that ends a trace (python's exception line) sends it at once.  A
 * pending record holds at most max_record bytes:
 * further bytes are dropped and the record counted as truncated.
 *
 * Records are converted to UTF-8 when an encoding is set.  Framing stops at
 * the first refused record: the return value then stops at its first line
 * (for a multi-line record, at the start line that completed it).
 */
size_t	framer_feed(struct framer *, struct framer_state *, const char *p,
	    size_t n, uint64_t base, size_t max_record, framer_cb cb,
	    void *arg) WARN_UNUSED;

/*
 * isMissLastRecordDelimiter: the file has not grown for a while, so
 * p[0..n) (what framer_feed() left: a last line without delimiter) is a
 * complete line ending at base + n.  It is framed like any line, except
 * that there is no delimiter to strip a CR before or to keep (and when
 * n > max_record it is cut as in framer_feed()).  The tail of a runaway
 * line is discarded.  In
 * multi-line mode it joins or starts the pending record, which
 * framer_flush() sends.  Returns 0 when all n bytes were consumed, or cb's
 * non-zero when it refused a record (nothing consumed).
 */
int	framer_feed_last(struct framer *, struct framer_state *, const char *p,
	    size_t n, uint64_t base, size_t max_record, framer_cb cb,
	    void *arg) WARN_UNUSED;

/*
 * Multi-line mode, after multiLineFlushMillis without new lines: send the
 * pending record, if any.  Returns 0, or cb's non-zero (the record stays
 * pending).
 */
int	framer_flush(struct framer *, struct framer_state *, framer_cb cb,
	    void *arg) WARN_UNUSED;

/*
 * Container flows, asked from the callback: the record is a line in no
 * container format, shipped as it is (not the json record).
 */
bool	framer_record_raw(const struct framer *);
/*
 * Container flows, asked from the callback: the record's start and end
 * are held back before the other stream's waiting lines (records/
 * framer_ctr.c), and its own bytes, none of another stream's between
 * them, are [*start, *end) of the file.  False when the call's start and
 * end are the record's, or when its bytes are not contiguous (lines of the
 * other stream came between its lines): then it has no identity of its
 * own past the held end.
 */
bool	framer_record_held(const struct framer *, uint64_t *start,
	    uint64_t *end);
/* Container flows whose records are json (containerRecord = json). */
bool	framer_container_json(const struct framer *);

/* A multi-line record is waiting for its end. */
bool	framer_pending(const struct framer_state *);
/* The file offset where the pending record starts (when there is one). */
uint64_t framer_pending_start(const struct framer_state *);

#endif
