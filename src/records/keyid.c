/*
 * Record ids (keyid.h): 72 bits, file << 32 | offset, through a three-round
 * Feistel permutation of two 36-bit halves, as 12 base64url characters,
 * most significant first.
 */
#include "config.h"

#include <string.h>

#include "base/util.h"
#include "records/keyid.h"
#include "wire/codec_read.h"

#define HALF_BITS	36
#define HALF_MASK	((UINT64_C(1) << HALF_BITS) - 1)
#define ROUNDS		3

static const char	b64url[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
static const uint64_t	round_key[ROUNDS] = {
	0xc2b2ae3d27d4eb4fULL, 0x165667b19e3779f9ULL, 0x27d4eb2f165667c5ULL,
};
/* Fixed: the data check must give the same value on every host. */
static const struct hash_key data_key = {
	0x6469736167656e74ULL, 0x7265636f72642031ULL,
};
static const struct hash_key agent_salt = {
	0x6469736167656e74ULL, 0x6167656e74206964ULL,
};

/* One multiply: its top 36 bits depend on every bit of half.  Whitening
 * only (the ids need no secrecy), for every record sent. */
static inline uint64_t
round_fn(uint64_t half, int i)
{
	return ((half ^ round_key[i]) * 0x9e3779b97f4a7c15ULL) >> 28;
}

static void
put_be(unsigned char *p, uint64_t v, int n)
{
	while (n-- > 0) {
		p[n] = (unsigned char)v;
		v >>= 8;
	}
}

void
keyid_agent(const char *machine_id, const char *hostname,
    const char *state_path, struct hash_key *out)
{
	size_t		 a = strlen(machine_id), b = strlen(hostname);
	size_t		 c = strlen(state_path);
	unsigned char	 buf[1024];
	size_t		 n = 0;

	/* Each part NUL-ended, cut to what fits (a path is mostly short). */
	a = MIN(a, 256);
	b = MIN(b, 256);
	c = MIN(c, sizeof(buf) - a - b - 3);
	memcpy(buf + n, machine_id, a);
	n += a;
	buf[n++] = 0;
	memcpy(buf + n, hostname, b);
	n += b;
	buf[n++] = 0;
	memcpy(buf + n, state_path, c);
	n += c;
	buf[n++] = 0;
	out->k0 = hash_sip(&agent_salt, buf, n);
	buf[n++] = 1;
	out->k1 = hash_sip(&agent_salt, buf, n);
}

uint64_t
keyid_file(const struct hash_key *agent, const char *flow, uint64_t dev,
    uint64_t ino, bool fp_full, uint32_t fp_crc, uint32_t fp_len)
{
	unsigned char	 buf[64 + 24];
	size_t		 n = MIN(strlen(flow), 64);

	memcpy(buf, flow, n);
	put_be(buf + n, dev, 8);
	put_be(buf + n + 8, ino, 8);
	put_be(buf + n + 16, fp_full ? fp_crc : 0, 4);
	put_be(buf + n + 20, fp_full ? fp_len : 0, 4);
	return hash_sip(agent, buf, n + 24) & KEYID_FILE_MASK;
}

/* The two base64url characters of each 12-bit value. */
static char	pairs[4096][2];

static void
make_pairs(void)
{
	int	 i;

	for (i = 4095; i >= 0; i--) {
		pairs[i][0] = b64url[i >> 6];
		pairs[i][1] = b64url[i & 63];
	}
}

void
keyid_encode(uint64_t file, uint64_t off, char out[KEYID_LEN])
{
	uint64_t	 hi, lo, t;
	int		 i;

	/* 72 bits: file (40) and off (32), as two 36-bit halves. */
	hi = (file & KEYID_FILE_MASK) >> 4;
	lo = (file & 0xf) << 32 | (off & 0xffffffffULL);
	for (i = 0; i < ROUNDS; i++) {
		t = lo;
		lo = hi ^ round_fn(lo, i);
		hi = t;
	}
	if (pairs[0][0] == '\0')
		make_pairs();
	/* Two characters (12 bits) at a time: this runs for every record. */
	memcpy(out, pairs[hi >> 24 & 0xfff], 2);
	memcpy(out + 2, pairs[hi >> 12 & 0xfff], 2);
	memcpy(out + 4, pairs[hi & 0xfff], 2);
	memcpy(out + 6, pairs[lo >> 24 & 0xfff], 2);
	memcpy(out + 8, pairs[lo >> 12 & 0xfff], 2);
	memcpy(out + 10, pairs[lo & 0xfff], 2);
}

bool
keyid_decode(const char *s, size_t n, uint64_t *file, uint32_t *off32)
{
	uint64_t	 hi = 0, lo = 0, t;
	int		 i, v, w;

	if (n != KEYID_LEN)
		return false;
	for (i = 0; i < 6; i++) {
		v = codec_base64_digit((unsigned char)s[i], true);
		w = codec_base64_digit((unsigned char)s[6 + i], true);
		if (v < 0 || w < 0)
			return false;
		hi = hi << 6 | (uint64_t)v;
		lo = lo << 6 | (uint64_t)w;
	}
	for (i = ROUNDS - 1; i >= 0; i--) {
		t = hi;
		hi = lo ^ round_fn(hi, i);
		lo = t;
	}
	*file = hi << 4 | lo >> 32;
	*off32 = (uint32_t)lo;
	return true;
}

bool
keyid_find(const char *key, size_t n, uint64_t *file, uint32_t *off32)
{
	const char	*p = key, *end = key + n, *comma;

	while (p <= end) {
		comma = memchr(p, ',', (size_t)(end - p));
		if (comma == NULL)
			comma = end;
		if (keyid_decode(p, (size_t)(comma - p), file, off32))
			return true;
		p = comma + 1;
	}
	return false;
}

uint64_t
keyid_data(const void *data, size_t len)
{
	return hash_sip(&data_key, data, len);
}
