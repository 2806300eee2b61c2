/*
 * The DIS Agent's checkpoint file (spec/dis-api.md section 10a), read for
 * `disagent import-state`: the SQLite table FILE_CHECKPOINTS, one row per
 * flow and file, opened read-only (the DIS Agent may still have it open),
 * and the two texts its rows key on, the flow id "dis:STREAM:PATTERN" and
 * the fileId "(dev=HEX,ino=DEC)".  The only file of src/ that includes
 * <sqlite3.h>; the library is loaded when a file is read, not linked.
 */
#ifndef DISAGENT_DISCKPT_H
#define DISAGENT_DISCKPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

/* One row of FILE_CHECKPOINTS; the texts are "" when NULL in the file. */
struct disckpt_row {
	const char	*flow;		/* "dis:STREAM:PATTERN" */
	const char	*path;		/* as last acknowledged: may be stale */
	const char	*file_id;	/* "(dev=fe00,ino=123)" on Linux */
	int64_t		 offset;	/* after the last acknowledged record */
	int64_t		 size;		/* as of the row's file snapshot */
	int64_t		 mtime_ms;	/* lastModifiedTime */
	int64_t		 header_len;	/* bytes fingerprinted; -1: empty */
	const char	*header;	/* hex SHA-256 of those bytes */
	const char	*updated;	/* lastUpdated, UTC text */
};

/*
 * Call cb(row, arg) for each row of the checkpoint file at path, in the
 * order of its primary key (flow, fileId); the row is borrowed for the
 * call.  The file is opened read-only and never written: a DIS Agent
 * still writing it is waited for (up to 5 s per lock it holds), and a
 * file in WAL mode is read as of its last commit.  Returns 0, cb's
 * non-zero return (which stops the walk), or a negative errno with the
 * reason in err[errlen]: -ENOENT (no such file), -EACCES, -EBADMSG (not a
 * SQLite file, or no FILE_CHECKPOINTS table of the DIS Agent's shape),
 * -EBUSY (still locked after the wait, or an unfinished write that only a
 * writer may roll back), -EIO.
 */
int	 disckpt_read(const char *path,
	    int (*cb)(const struct disckpt_row *, void *), void *arg,
	    char *err, size_t errlen) WARN_UNUSED;

/*
 * The fileId Java's UnixFileKey prints, "(dev=" lowercase hex st_dev
 * ",ino=" decimal st_ino (a Java long: negative past 2^63) ")", into
 * *dev and *ino.  false for anything else (the Windows form
 * "UUID_millis", a bare file name).
 */
bool	 disckpt_parse_file_id(const char *, uint64_t *dev, uint64_t *ino);

/*
 * A DIS flow id "dis:STREAM:PATTERN": the stream into stream[len] and a
 * pointer into id at PATTERN.  false when id is not of that form (an
 * OBSStream flow, "obs-file:...", or a stream name that does not fit).
 */
bool	 disckpt_parse_flow(const char *id, char *stream, size_t len,
	    const char **pattern);

/*
 * How the DIS Agent writes filePattern in its flow id: "*" appended to a
 * pattern ending in "/", repeated and trailing slashes dropped (java.io.File
 * and Path), then directory + "/" + name, so a file in "/" gives "//NAME";
 * "." and ".." stay.  New string; NULL for a pattern without a directory
 * (which the DIS Agent refuses).
 */
char	*disckpt_flow_pattern(const char *pattern);

#endif
