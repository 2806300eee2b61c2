/*
 * The download side of the DIS wire format (spec/dis-api.md sections 5
 * and 10), for the read-back commands: DescribeStream pages with their
 * partitions, GetCursor and GetRecords replies, base64 decoding, the
 * JSON line `disagent read --format json` prints, and the apps and
 * checkpoints of consumers (bodies and replies).  Part of the codec
 * module, which parses DIS's replies with jansson so that its callers
 * need not.
 */
#ifndef DISAGENT_CODEC_READ_H
#define DISAGENT_CODEC_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"
#include "wire/codec.h"

/* One partition of a DescribeStream reply. */
struct codec_partition {
	char	 id[40];		/* "shardId-0000000000" */
	char	 status[16];		/* ACTIVE, DELETED, EXPIRED, ... */
	char	 hash_range[64];	/* "[0 : 9223372036854775807]" */
	char	 seq_range[64];		/* "[first : next]", "" absent */
	int64_t	 seq_first;		/* oldest record; -1 unknown */
	int64_t	 seq_next;		/* the next record's number; -1 unknown */
};

/* A stream as DescribeStream pages describe it. */
struct codec_stream {
	struct stream_info	 info;	/* status, type, id, writable count */
	long			 retention_hours;	/* -1: absent */
	long			 readable_partitions;	/* -1: absent */
	bool			 has_more;	/* has_more_partitions */
	struct codec_partition	*parts;	/* every page so far, in order */
	size_t			 nparts;
};

/*
 * Parse one DescribeStream page into *st: the stream fields (as
 * codec_parse_describe, plus retention_period, readable_partition_count
 * and has_more_partitions) replace the previous ones, and the page's
 * partitions are appended to st->parts.  Start with a zeroed *st and free
 * it with codec_stream_cleanup().  "sequence_number_range" is
 * "[first : next]", next being the number the next record will get (the
 * newest is next - 1); seq_first and seq_next are -1 when it is absent or
 * does not parse.  Returns 0, or -EBADMSG when the page is not such JSON,
 * a partition lacks partition_id or status, or a field is too long (*st
 * keeps the earlier pages then).
 */
int	codec_parse_stream(const char *body, size_t len,
	    struct codec_stream *st) WARN_UNUSED;
void	codec_stream_cleanup(struct codec_stream *);
/* *dst a copy of *src, its own parts; free it with codec_stream_cleanup. */
void	codec_stream_copy(struct codec_stream *dst,
	    const struct codec_stream *src);

/*
 * Parse a GetCursor reply {"partition_cursor":"..."}: *cursor is new (free
 * it).  Returns 0, or -EBADMSG when there is no non-empty string cursor.
 */
int	codec_parse_cursor(const char *body, size_t len, char **cursor)
	    WARN_UNUSED;

/* One record of a GetRecords reply; the strings are borrowed from it. */
struct codec_record {
	int64_t		 seq;		/* sequence_number */
	const char	*seq_text;	/* as sent ("1024") */
	const char	*key;		/* partition_key, NULL when absent */
	const char	*data64;	/* data: base64 as sent */
	size_t		 data64_len;
	long long	 timestamp;	/* ms since the epoch; -1 absent */
	const char	*timestamp_type;	/* NULL when absent */
};

struct codec_records;

/*
 * Parse a GetRecords reply: {"records":[...],"next_partition_cursor":C}.
 * Every record is checked first: an object whose sequence_number is a
 * decimal string in 0..INT64_MAX and whose data is a string
 * of well-formed padded base64; partition_key, timestamp and
 * timestamp_type are optional.  *out is new (codec_records_free).
 * Returns 0, or -EBADMSG when anything is malformed (*out is NULL then).
 */
int	codec_parse_records(const char *body, size_t len,
	    struct codec_records **out) WARN_UNUSED;
size_t	codec_records_count(const struct codec_records *);
/* Record i (< count) into *out, borrowed until codec_records_free(). */
void	codec_records_get(const struct codec_records *, size_t i,
	    struct codec_record *out);
/* next_partition_cursor, or NULL when it is null or absent (borrowed). */
const char *codec_records_next(const struct codec_records *);
void	codec_records_free(struct codec_records *);

/* The value of a base64 digit (url: the URL-safe alphabet, - and _), or
 * -1. */
int	codec_base64_digit(unsigned char c, bool url);

/*
 * Decode n bytes of padded base64 and append them to *out.  Returns 0, or
 * -EBADMSG (nothing appended) when the text is not well-formed.
 */
int	codec_base64_decode(const char *in, size_t n, struct buf *out)
	    WARN_UNUSED;

/*
 * The JSON line of a record read from partition, appended to *out with its
 * newline: {"partition":P,"sequence_number":"N","partition_key":K,
 * "timestamp":T,"timestamp_type":Y,"data":"<base64>"}, without the keys
 * the record lacks.
 */
void	codec_record_json(struct buf *out, const char *partition,
	    const struct codec_record *);

/* --- apps and checkpoints (section 10) ---------------------------------- */

/* The longest app name and checkpoint metadata DIS takes. */
#define CODEC_APP_NAME_MAX	200
#define CODEC_METADATA_MAX	1000	/* characters */

/* Whether s is an app name DIS takes: 1-200 of [A-Za-z0-9_-]. */
bool	codec_app_name_ok(const char *s);

/* CreateApp's body {"app_name":NAME}, appended to *out. */
void	codec_app_body(struct buf *out, const char *app);

/*
 * CommitCheckpoint's body, appended to *out: {"app_name","checkpoint_type":
 * "LAST_READ","stream_name","partition_id","sequence_number":"N"} and
 * "metadata" when it is not NULL.
 */
void	codec_checkpoint_body(struct buf *out, const char *app,
	    const char *stream, const char *partition, int64_t seq,
	    const char *metadata);

/*
 * A GetCheckpoint reply {"sequence_number":"N","metadata":M}: *seq is N,
 * -1 when the app has committed none (DIS says "-1"; a string or a
 * number); *metadata (new, or NULL) the metadata when it is a non-empty
 * string.  0, or -EBADMSG.
 */
int	codec_parse_checkpoint(const char *body, size_t len, int64_t *seq,
	    char **metadata) WARN_UNUSED;

/* One app of a ListApps page. */
struct codec_app {
	char		 name[CODEC_APP_NAME_MAX + 1];
	char		 id[64];
	long long	 created_ms;	/* create_time; -1 absent */
	char		*streams;	/* commit_checkpoint_stream_names,
					   comma-separated; new, "" none */
};

struct codec_apps {
	struct codec_app *apps;
	size_t		 napps;
	bool		 has_more;	/* has_more_app */
};

/*
 * Parse a ListApps page {"has_more_app","apps":[...],"total_number"},
 * appending its apps to *out (start zeroed; free with
 * codec_apps_cleanup).  0, or -EBADMSG (*out keeps the earlier pages).
 */
int	codec_parse_apps(const char *body, size_t len, struct codec_apps *out)
	    WARN_UNUSED;
void	codec_apps_cleanup(struct codec_apps *);

#endif
