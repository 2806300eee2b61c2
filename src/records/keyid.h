/*
 * Record ids in partition keys, for the restart after a crash (agent/
 * dedupe.c): with partitionKeyOption = RANDOM_INT, the random number is
 * replaced by 12 characters of base64url that carry which agent sent the
 * record from which file (40 bits: a keyed hash of the host, the state
 * file, the flow, the file's device, inode and full head fingerprint) and
 * the record's offset in that file (its low 32 bits).  The 72 bits are
 * whitened by a fixed invertible permutation, so the key text looks as
 * random as the number it replaces and MD5 (DIS's partition hash) spreads
 * the records over the partitions alike; keyid_decode undoes it.  Twelve
 * characters: at most six more than RANDOM_INT's number, so the body of a
 * request grows by at most that per record.
 *
 * The ids are exact where it matters: a record read back from the stream
 * is taken for one of ours only when its file hash is one of this agent's
 * files, its offset falls in that file's window of records not known to be
 * delivered, and its data hashes (keyid_data) to what the agent reads at
 * that offset again.  Another host's records carry another agent key, so
 * the same text at the same offset of a file with the same inode still
 * differs in its file hash (a chance of 2^-40 that it does not, and then
 * the data and offset must match too).
 */
#ifndef DISAGENT_KEYID_H
#define DISAGENT_KEYID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hash.h"

#define KEYID_LEN	12		/* characters of an id */
#define KEYID_FILE_BITS	40
#define KEYID_FILE_MASK	((UINT64_C(1) << KEYID_FILE_BITS) - 1)

/*
 * The agent's key, from what tells this agent from any other: the host
 * (machine-id, host name) and its state file (two agents on one host have
 * two state files).  machine_id and hostname may be "".
 */
void		 keyid_agent(const char *machine_id, const char *hostname,
		    const char *state_path, struct hash_key *out);

/*
 * The 40-bit file part of the ids of flow's file (dev, ino).  fp_full says
 * whether (fp_crc, fp_len) is the file's whole head fingerprint
 * (headerBytesLength bytes): a shorter one still grows, so it is left out
 * (then inode reuse and an in-place rewrite are told apart only by the
 * offset and the data).
 */
uint64_t	 keyid_file(const struct hash_key *agent, const char *flow,
		    uint64_t dev, uint64_t ino, bool fp_full, uint32_t fp_crc,
		    uint32_t fp_len);

/* The id of the record at offset off of file (40 bits) into out. */
void		 keyid_encode(uint64_t file, uint64_t off,
		    char out[KEYID_LEN]);

/*
 * Whether the n characters at s are an id; its file part and the low 32
 * bits of its offset into *file and *off32.
 */
bool		 keyid_decode(const char *s, size_t n, uint64_t *file,
		    uint32_t *off32);

/*
 * The id inside a partition key made by partkey_make_id (the key alone,
 * or one item of its comma list): true with its parts, else false.
 */
bool		 keyid_find(const char *key, size_t n, uint64_t *file,
		    uint32_t *off32);

/* The offset at or after base whose low 32 bits are off32. */
static inline uint64_t
keyid_offset(uint32_t off32, uint64_t base)
{
	return base + (uint32_t)(off32 - (uint32_t)base);
}

/* The check of a record's data: its bytes as sent. */
uint64_t	 keyid_data(const void *data, size_t len);

#endif
