/*
 * Container log lines, pure string work: the two formats container
 * runtimes write their log files in, decoded one line at a time, and the
 * record a container flow sends built from the decoded parts.
 *
 * CRI (containerd, CRI-O, podman's k8s-file):
 *	2026-12-07T10:00:00.123456789Z stdout F the text
 * TIME, a space, the stream, a space, a tag ("F" full, "P" partial, more
 * tags after ':' ignored), a space, the text to the end of the line.
 *
 * Docker json-file:
 *	{"log":"the text\n","stream":"stdout","time":"2026-...Z"}
 * one JSON object a line; a "log" not ending in "\n" is a partial line
 * (Docker cuts lines at 16 KiB), and the "\n" is not part of the text.
 */
#ifndef DISAGENT_CTRLOG_H
#define DISAGENT_CTRLOG_H

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"

enum ctrlog_format {
	CTRLOG_NONE,		/* not a container flow */
	CTRLOG_AUTO,		/* each line, whichever it is */
	CTRLOG_CRI,
	CTRLOG_DOCKER,
};

/* containerStreams: which streams a flow sends (a mask of 1 << stream). */
enum ctrlog_stream {
	CTRLOG_STDOUT,
	CTRLOG_STDERR,
	CTRLOG_NSTREAMS,
};
#define CTRLOG_ALL	((1u << CTRLOG_STDOUT) | (1u << CTRLOG_STDERR))

/* containerRecord: the record's form. */
enum ctrlog_record {
	CTRLOG_JSON,		/* {"time","stream","log"} (+ metadata) */
	CTRLOG_MESSAGE,		/* the text alone */
};

#define CTRLOG_TIME_MAX	48	/* longest time kept, with its NUL */
/* The most bytes a file's metadata adds to a json record (the source cuts
 * it there; the framer leaves that room under the record limit). */
#define CTRLOG_META_MAX	1024

/* One decoded line. */
struct ctrlog_line {
	char		 time[CTRLOG_TIME_MAX];	/* as written, NUL-ended */
	int		 stream;	/* enum ctrlog_stream */
	bool		 partial;	/* the line goes on in the next one */
	const char	*text;		/* borrowed: the line's, or scratch */
	size_t		 len;
};

/*
 * Decode line[0..n) (without its '\n') in format fmt (CTRLOG_AUTO: a line
 * starting with '{' is Docker's, any other CRI).  text points into line
 * (CRI) or into scratch, reset and filled (Docker's unescaped text).
 * Returns 0, or -EINVAL when the line is not one of the format (then *out
 * is undefined).
 */
int	ctrlog_decode(int fmt, const char *line, size_t n, struct buf *scratch,
	    struct ctrlog_line *out) WARN_UNUSED;

/*
 * Append s[n] to b as a JSON string, quotes included: '"', '\\' and the
 * control characters escaped, each byte that is not part of valid UTF-8
 * as U+FFFD, so the result is valid JSON whatever the bytes.
 */
void	ctrlog_json_string(struct buf *b, const char *s, size_t n);

/*
 * The json record of one container line or joined line, appended to b:
 * {"time":TIME,"stream":STREAM,"log":TEXT}.  The source adds the file's
 * metadata before the closing brace (agent/source_files.c).
 */
void	ctrlog_json_record(struct buf *b, const char *time, int stream,
	    const char *text, size_t len);

/* "stdout" or "stderr". */
const char *ctrlog_stream_name(int stream);

#endif
