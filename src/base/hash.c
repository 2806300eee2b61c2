/*
 * SipHash-2-4 (hash.h), from the paper's description ("SipHash: a fast
 * short-input PRF", 2012); checked against its test vector in check_core.
 */
#include "config.h"

#include <string.h>

#include "base/hash.h"

#define ROTL(x, b)	(((x) << (b)) | ((x) >> (64 - (b))))

struct sip {
	uint64_t	 v0, v1, v2, v3;
};

static void
sip_round(struct sip *s)
{
	s->v0 += s->v1;
	s->v1 = ROTL(s->v1, 13);
	s->v1 ^= s->v0;
	s->v0 = ROTL(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = ROTL(s->v3, 16);
	s->v3 ^= s->v2;
	s->v0 += s->v3;
	s->v3 = ROTL(s->v3, 21);
	s->v3 ^= s->v0;
	s->v2 += s->v1;
	s->v1 = ROTL(s->v1, 17);
	s->v1 ^= s->v2;
	s->v2 = ROTL(s->v2, 32);
}

static void
sip_word(struct sip *s, uint64_t m)
{
	s->v3 ^= m;
	sip_round(s);
	sip_round(s);
	s->v0 ^= m;
}

/* Little-endian 64-bit load of n (<= 8) bytes. */
static uint64_t
load_le(const unsigned char *p, size_t n)
{
	uint64_t	 v = 0;
	size_t		 i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

uint64_t
hash_sip(const struct hash_key *k, const void *data, size_t n)
{
	const unsigned char *p = data;
	struct sip	 s;
	size_t		 i;

	s.v0 = k->k0 ^ 0x736f6d6570736575ULL;
	s.v1 = k->k1 ^ 0x646f72616e646f6dULL;
	s.v2 = k->k0 ^ 0x6c7967656e657261ULL;
	s.v3 = k->k1 ^ 0x7465646279746573ULL;
	for (i = 0; i + 8 <= n; i += 8)
		sip_word(&s, load_le(p + i, 8));
	sip_word(&s, load_le(p + i, n - i) | (uint64_t)(n & 0xff) << 56);
	s.v2 ^= 0xff;
	sip_round(&s);
	sip_round(&s);
	sip_round(&s);
	sip_round(&s);
	return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}
