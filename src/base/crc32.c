/*
 * CRC-32 (crc32.h) by zlib, whose crc32() takes at most UINT_MAX bytes a
 * call.
 */
#include "config.h"

#include <limits.h>

#include <zlib.h>

#include "base/crc32.h"

uint32_t
crc32_update(uint32_t crc, const void *p, size_t n)
{
	const Bytef	*b = p;
	uLong		 c = crc;
	uInt		 k;

	while (n > 0) {
		k = n > UINT_MAX ? UINT_MAX : (uInt)n;
		c = crc32(c, b, k);
		b += k;
		n -= k;
	}
	return (uint32_t)c;
}

uint32_t
crc32_of(const void *p, size_t n)
{
	return crc32_update(CRC32_INIT, p, n);
}
