/*
 * A compressed log file read as the bytes it holds decompressed: gzip
 * (logrotate's compress, also multi-member) through zlib, zstd through
 * libzstd.  Offsets are decompressed bytes, so a rotated file's committed
 * offset carries over to its compressed successor.  Reads go forward; a
 * read before the last one re-reads the tail kept from it, and one before
 * that starts the stream again.  zsource.c is the only file that
 * decompresses: with base/crc32.c (crc32 alone) the only one that includes
 * <zlib.h>, and with wire/codec.c (request bodies, compressed) the only
 * one that includes <zstd.h>.
 */
#ifndef DISAGENT_ZSOURCE_H
#define DISAGENT_ZSOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/util.h"

enum zkind {
	ZKIND_NONE,	/* not compressed (or a format we cannot read) */
	ZKIND_GZIP,
	ZKIND_ZSTD,
};

/* The format of the file at fd, by its magic bytes. */
enum zkind	 zsource_kind(int fd);
/* Whether a name ends like a compressed file's (.gz, .zst, ...). */
bool		 zsource_name_compressed(const char *name);

struct zsource;

/*
 * A source reading fd (borrowed; it must stay open) of kind.  keep: bytes
 * of the latest read kept for re-reads (a record's worth).
 */
struct zsource	*zsource_new(int fd, enum zkind kind, size_t keep);
void		 zsource_free(struct zsource *);

/*
 * Decompress the whole stream once to learn its size into *size.  0;
 * -EAGAIN when the stream ends early (still being written, or cut);
 * -EBADMSG when it is not valid.
 */
int		 zsource_size(struct zsource *, uint64_t *size) WARN_UNUSED;

/*
 * Up to len decompressed bytes from offset off into dst.  Returns the
 * number of bytes (0 at the end), or -EBADMSG / -EIO.
 */
ssize_t		 zsource_pread(struct zsource *, void *dst, size_t len,
		    uint64_t off);

/*
 * The first len decompressed bytes of the file at fd (kind) into dst:
 * their number (less at the end of a short stream), or a negative errno.
 */
ssize_t		 zsource_head(int fd, enum zkind kind, void *dst, size_t len);

#endif
