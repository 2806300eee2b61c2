/*
 * CRC-32 as zlib's crc32() and gzip compute it (the ISO-HDLC polynomial):
 * the fingerprints of files' heads and tails, the state file's checksum.
 * The one wrapper of zlib's crc32, so that only the modules that compress
 * or decompress include <zlib.h>.
 */
#ifndef DISAGENT_CRC32_H
#define DISAGENT_CRC32_H

#include <stddef.h>
#include <stdint.h>

#define CRC32_INIT	0u	/* the crc of no bytes */

/* crc (of the bytes before) followed by the n bytes at p. */
uint32_t	 crc32_update(uint32_t crc, const void *p, size_t n);

/* The crc of the n bytes at p: crc32_update(CRC32_INIT, p, n). */
uint32_t	 crc32_of(const void *p, size_t n);

#endif
