/*
 * SipHash-2-4 (Aumasson and Bernstein): a keyed 64-bit hash of bytes.  The
 * restart's record ids use it (records/keyid.c: which agent and file sent a
 * record, and a check of its data), because the ids of other hosts must not
 * collide with ours by accident: SipHash's output looks random to anyone
 * without the key, and any change of the input changes it.
 */
#ifndef DISAGENT_HASH_H
#define DISAGENT_HASH_H

#include <stddef.h>
#include <stdint.h>

struct hash_key {
	uint64_t	 k0, k1;
};

/* SipHash-2-4 of the n bytes at p under key k. */
uint64_t	 hash_sip(const struct hash_key *k, const void *p, size_t n);

/*
 * A 64-bit mix of v (splitmix64's finaliser): a bijection, cheap, for
 * values that need no key.
 */
static inline uint64_t
hash_mix(uint64_t v)
{
	v ^= v >> 30;
	v *= 0xbf58476d1ce4e5b9ULL;
	v ^= v >> 27;
	v *= 0x94d049bb133111ebULL;
	v ^= v >> 31;
	return v;
}

/*
 * The slot of a file's (device, inode) in an open-addressed table of cap
 * slots (a power of 2): Fibonacci hashing of the pair, its high bits.
 */
static inline size_t
hash_devino(uint64_t dev, uint64_t ino, size_t cap)
{
	uint64_t	 h = (ino ^ (dev << 32 | dev >> 32)) *
	    0x9E3779B97F4A7C15ULL;

	return (size_t)(h >> 17) & (cap - 1);
}

#endif
