/*
 * dataProcessingOptions: the DIS Agent's record processing chain, byte for
 * byte.  A flow's options are compiled once (convert_new) into a chain
 * that turns each framed record into the bytes to upload (convert_record).
 *
 * What the DIS Agent 1.2.4 does, and so this chain (its processing/ and
 * tailing/ code): the record, with its trailing delimiter, goes through
 * the options in list order.  CSVTOJSON, LOGTOJSON and ADDMETADATA each
 * take one trailing "\n" off, convert, and put it back; ADDBRACKETS wraps
 * the record as it is, "{" + record + "}"; SINGLELINE does nothing.  The
 * result then loses a last byte equal to the delimiter unless
 * isRemainRecordDelimiter keeps it.  Text is decoded as Java does (each
 * invalid UTF-8 sequence becomes U+FFFD) and JSON written as Jackson does
 * (jackson.h); values are strings, "-" is null in the Apache formats.
 *
 * Where the DIS Agent loses data this chain does better: a line LOGTOJSON
 * cannot parse goes, by LOGTOJSON.unmatched, to the dead-letter file
 * (default), up unconverted, or is dropped as the DIS Agent drops it;
 * each is counted, with one WARN a minute.  ADDMETADATA.fields adds the
 * host name, file path, file name, offset or time beside the static
 * metadata.  Output is capped at the stream's record limit.
 */
#ifndef DISAGENT_CONVERT_H
#define DISAGENT_CONVERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

/* The keys of one flow, as agent.ini has them (struct conf_flow.conv). */
struct convert_opts {
	char	*options;	/* dataProcessingOptions */
	char	*csv_fields;	/* CSVTOJSON.customFieldNames */
	char	*csv_delimiter;	/* CSVTOJSON.delimiter (escapes allowed) */
	char	*csv_json;	/* CSVTOJSON.jsonFormat */
	char	*log_format;	/* LOGTOJSON.logFormat */
	char	*log_pattern;	/* LOGTOJSON.matchPattern (Java regex) */
	char	*log_fields;	/* LOGTOJSON.customFieldNames */
	char	*log_json;	/* LOGTOJSON.jsonFormat */
	char	*log_unmatched;	/* LOGTOJSON.unmatched */
	char	*meta_metadata;	/* ADDMETADATA.metadata (a JSON value) */
	char	*meta_fields;	/* ADDMETADATA.fields */
	char	*meta_json;	/* ADDMETADATA.jsonFormat */
};

/* Allowed words, NULL-terminated, for the key table. */
extern const char *const convert_json_words[];		/* COMPACT, ... */
extern const char *const convert_unmatched_words[];	/* deadletter, ... */

/* What LOGTOJSON.unmatched does with a line, in words order. */
enum convert_unmatched {
	CONVERT_DEADLETTER,
	CONVERT_RAW,
	CONVERT_DROP,
	CONVERT_NUNMATCHED
};

/*
 * Checks of single values for the key table: NULL when value is fine,
 * else why not (a static string, valid until the next call).
 */
const char	*convert_check_options(const char *value);
const char	*convert_check_names(const char *value);
const char	*convert_check_delimiter(const char *value);
const char	*convert_check_log_format(const char *value);
const char	*convert_check_pattern(const char *value);
const char	*convert_check_metadata(const char *value);
const char	*convert_check_meta_fields(const char *value);

struct convert;
struct deadletter;

/*
 * Compile a flow's options: delim is its record delimiter byte, keep its
 * isRemainRecordDelimiter; dlq (borrowed, may be NULL: unmatched lines
 * that would go there are sent raw) receives unmatched lines for the flow
 * named flow (borrowed).  *out is NULL when the chain does nothing (no
 * options, or SINGLELINE only), else new (free with convert_free).
 * Returns 0, or -EINVAL with "KEY: message" in err and the key at fault
 * in *key (static; dataProcessingOptions for a missing key): an unknown
 * option, a missing required key, a key set for an option not in the
 * list, field names that do not fit the format or the pattern's groups,
 * a pattern that does not compile, metadata that fields cannot extend.
 */
int		 convert_new(const struct convert_opts *, int delim, bool keep,
		    struct deadletter *dlq, const char *flow,
		    struct convert **out, const char **key, char *err,
		    size_t errlen) WARN_UNUSED;
void		 convert_free(struct convert *);

/*
 * The framer must keep the delimiter at the end of each record: the chain
 * sees records as the DIS Agent's converters do and drops it itself.
 */
bool		 convert_keeps_delimiter(const struct convert *);

/*
 * How LOGTOJSON's pattern runs: 1 under PCRE2's JIT, 0 in its interpreter
 * (no JIT support, or no executable memory: MemoryDenyWriteExecute=yes,
 * SELinux), -1 when the chain has no LOGTOJSON.
 */
int		 convert_regex_jit(const struct convert *);

enum convert_result {
	CONVERT_SEND,		/* out holds the bytes to send */
	CONVERT_UNMATCHED,	/* LOGTOJSON could not parse the line */
};

/*
 * The pure chain: convert the record data[0..len) of the file path at
 * offset (for ADDMETADATA.fields) into out (reset first; reused: its
 * memory is trimmed when a record made it large), at most max bytes
 * (*truncated tells whether it was cut).  CONVERT_UNMATCHED leaves the
 * reason in why.  No I/O, nothing counted.
 */
enum convert_result convert_apply(struct convert *, const char *data,
		    size_t len, const char *path, uint64_t offset, size_t max,
		    struct buf *out, bool *truncated, char *why, size_t whylen);

/*
 * One framed record of a flow: convert it and dispose of an unmatched
 * line by LOGTOJSON.unmatched (dead-letter file, synced; counted; one WARN
 * a minute).  Returns true when out holds bytes to send (the converted
 * record, or the raw line for "raw" and when the dead-letter file cannot
 * be written), false when the record is done without being sent: the
 * caller must still move the file's committed offset past it.
 */
bool		 convert_record(struct convert *, const char *data,
		    size_t len, const char *path, uint64_t offset, size_t max,
		    struct buf *out, bool *truncated);

/* What LOGTOJSON.unmatched does with a line the chain cannot parse. */
enum convert_unmatched convert_unmatched_action(const struct convert *);
/*
 * What is sent for a line LOGTOJSON cannot parse when it goes up
 * unconverted (LOGTOJSON.unmatched = raw): the line as read, without the
 * delimiter the framer kept for the chain, cut to max.
 */
void		 convert_raw_line(const struct convert *, const char *data,
		    size_t len, size_t max, struct buf *out, bool *truncated);

/*
 * Count unmatched lines into counts[CONVERT_NUNMATCHED] (borrowed: the
 * flow's counter set, struct metrics_flow) instead of the chain's own.
 */
void		 convert_count_into(struct convert *, uint64_t *counts);

/* Unmatched lines so far, by action (enum convert_unmatched). */
void		 convert_counts(const struct convert *,
		    uint64_t out[CONVERT_NUNMATCHED]);

/* Tests: the clock of ADDMETADATA's timestamp, wall milliseconds. */
void		 convert_set_clock(struct convert *, int64_t (*)(void));
/* Tests: the host name of ADDMETADATA's hostname. */
void		 convert_set_hostname(struct convert *, const char *);

#endif
