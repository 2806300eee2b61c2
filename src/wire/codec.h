/*
 * DIS wire formats: the PutRecords JSON body (written directly, base64 into
 * one reused buffer), and parsing of PutRecords, DescribeStream and error
 * replies (jansson, only here).
 */
#ifndef DISAGENT_CODEC_H
#define DISAGENT_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

/* Standard padded base64 of n bytes appended to *out (no line breaks). */
/*
 * Raw record bytes one PutRecords to a stream of type ("COMMON",
 * "ADVANCED") may carry: 1 MiB or 5 MiB (dis-api.md), at most max
 * (maxBufferSizeBytes).  A record is at most the same: the sink's record
 * cap once the stream is described, and what `disagent verify` frames to.
 */
size_t	codec_request_cap(const char *stream_type, size_t max);

void	codec_base64(const void *, size_t, struct buf *out);
/* Length of the base64 text of n bytes. */
size_t	codec_base64_len(size_t);

/*
 * PutRecords body: begin, add each record, end.  stream_id may be NULL or
 * "" (then stream_name is sent); both are JSON-escaped.  partition_key may be
 * NULL (omitted).  The result is
 * {"stream_name":"s","records":[{"data":"...","partition_key":"k"},...]}
 * or with "stream_id" in place of "stream_name" when stream_id is set.
 */
void	codec_put_begin(struct buf *out, const char *stream_name,
	    const char *stream_id);
void	codec_put_add(struct buf *out, const void *data, size_t len,
	    const char *partition_key);
/* The same with the key's length known (klen; the key NUL-terminated all
 * the same): what a batch's records are written with. */
void	codec_put_addn(struct buf *out, const void *data, size_t len,
	    const char *partition_key, size_t klen);
void	codec_put_end(struct buf *out);

/*
 * One dead-letter line, appended to *out:
 * {"time":T,"flow":"f","file":"/p","offset":N,"code":"c","message":"m",
 *  "data":"<base64>"}\n   (offset = the record's first byte in the file).
 */
void	codec_dead_letter(struct buf *out, long long time, const char *flow,
	    const char *file, unsigned long long offset, const char *code,
	    const char *message, const void *data, size_t len);

enum codec_zip {
	CODEC_ZIP_NONE,
	CODEC_ZIP_LZ4,		/* raw LZ4 block, no frame, no size prefix */
	CODEC_ZIP_ZSTD,		/* one zstd frame, level 3 */
};

/* "lz4" / "zstd" -> the enum; CODEC_ZIP_NONE for anything else. */
enum codec_zip	codec_zip_parse(const char *);
/* The Content-Encoding word of a compression ("lz4", "zstd"). */
const char	*codec_zip_name(enum codec_zip);

/*
 * Compress n bytes into *out (replacing its content), as the DIS SDK does
 * (spec section 7).  Returns 0, or -EIO when the library fails.
 */
int	codec_compress(enum codec_zip, const void *in, size_t n, struct buf *out)
	    WARN_UNUSED;

/* One entry of a PutRecords reply, by request position. */
struct codec_result {
	/* What every entry of a reply fills, in its first cache line
	 * (500 entries a reply; the message is written only on failure). */
	int32_t	partition;	/* acknowledged: where it went; -1 unknown */
	uint32_t seq_len;
	int64_t	seq;		/* its sequence_number there; -1 unknown */
	/* The parser's: the sequence number's text in the reply. */
	const char *seq_at;
	char	code[32];	/* "" = acknowledged */
	char	message[160];	/* truncated */
};

/*
 * The number of a partition id as DIS writes it ("shardId-0000000003") or
 * takes it ("3"): 3; -1 when it is neither (or above INT32_MAX).
 */
int32_t	codec_partition_index(const char *, size_t);
/* A sequence number: a decimal string in 0..INT64_MAX, else -1. */
int64_t	codec_seq_value(const char *, size_t);

/*
 * The partitions of one reply seen so far (zero n and next first): a
 * reply's records go to a few partitions, so their ids are compared, not
 * parsed, after the first.  The texts are the reply's, not copied.
 */
struct codec_part_cache {
	const char	*text[4];
	size_t		 len[4];
	int32_t		 part[4];
	uint64_t	 w[4][3];	/* ids of 17..24 bytes, as words */
	unsigned	 n, next;
};
/* codec_partition_index of v[0..vn-1], through c. */
int32_t	codec_cached_partition(struct codec_part_cache *c, const char *v,
	    size_t vn);
/*
 * A reply parser leaves the sequence numbers' texts in seq_at/seq_len:
 * parse only the last of each partition into seq (the others are lower,
 * and only a partition's highest counts, seqmark.h); the rest stay -1.
 */
void	codec_last_seqs(struct codec_result *res, size_t n);
/*
 * Whether body, the reply to a request of n records, is the common one:
 * well-formed, every record acknowledged (codec_ack.c reads it without a
 * jansson tree).  Then res[0..n-1] has their partitions and, through
 * codec_last_seqs, sequence numbers, their code and message untouched;
 * false on anything else, or any doubt, for codec_parse_put's parser.
 */
bool	codec_all_acknowledged(const char *body, size_t len,
	    struct codec_result *res, size_t n);

/*
 * Parse a 200 PutRecords reply for a request of n records into res[0..n-1].
 * Returns the number of failed records (>= 0), or -EBADMSG when the body is
 * not JSON, has no "records" array, or its length is not n (the whole request
 * must then be retried).  A record failed iff its "error_code" is a non-empty
 * string.  An acknowledged one has its partition_id and sequence_number in
 * partition and seq (-1 when absent or malformed: they only bound the
 * restart's read, never decide a delivery).  When every record is
 * acknowledged, seq is parsed only for the last record of each partition
 * in the reply (the others, lower, are -1): this runs for every request.
 */
int	codec_parse_put(const char *body, size_t len, struct codec_result *res,
	    size_t n) WARN_UNUSED;

/*
 * How many entries the "records" array of a PutRecords reply holds, when
 * it is an array of objects: what a reply codec_parse_put refused for its
 * length answered (499 for a request of 500).  -EBADMSG when the body is
 * not such JSON.
 */
int	codec_put_entries(const char *body, size_t len) WARN_UNUSED;

/*
 * Parse an error body of either shape: DIS {"errorCode","message"} or the
 * gateway's {"error_code","error_msg"}.  Sets code/message ("" when absent)
 * and returns 0, or -EBADMSG when it is not such JSON (code, message "").
 * "Such JSON" is an object with at least one of the four keys as a string.
 * Both outputs are truncated to fit and always NUL-terminated.
 */
int	codec_parse_error(const char *body, size_t len, char *code,
	    size_t codelen, char *message, size_t msglen);

struct stream_info {
	char	status[16];	/* RUNNING, CREATING, FROZEN, TERMINATING */
	char	type[16];	/* COMMON, ADVANCED */
	char	id[64];
	long	writable_partitions;
};

/*
 * Parse a DescribeStream reply; 0 or -EBADMSG.  "status" and "stream_type"
 * are required; "stream_id" ("" when absent) and "writable_partition_count"
 * (0 when absent, must be a non-negative integer) are optional.  A value
 * too long for its field is -EBADMSG, never truncated.  *out is zeroed on
 * error.
 */
int	codec_parse_describe(const char *body, size_t len,
	    struct stream_info *out) WARN_UNUSED;

#endif
