/*
 * The DIS SDK's per-record codecs (AbstractDISClient.decorateRecords):
 * data.compress.enabled replaces each record's data by its raw snappy
 * block (libsnappy), then data.encrypt.enabled with data.password by
 * EncryptUtils.gen(password, data) (wire/pwcrypt.h).  On a put the agent
 * encodes every record after the processing chain, in that order; `read`
 * and `verify` decode in the reverse order: decrypt, then uncompress.
 * Decryption gives bytes, never text: the SDK's own reader turns the bytes
 * into a Java String on the way and so loses what snappy wrote above 0x7f
 * (tests/data/sdk-record-codecs.txt); we read back what the SDK wrote.
 * libsnappy is included only here, and loaded only when a codec needs it.
 */
#ifndef DISAGENT_RECCODEC_H
#define DISAGENT_RECCODEC_H

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"

struct reccodec;

/*
 * Whether libsnappy can be used: loaded the first time (dlopen), or why
 * not into why[len] (may be NULL).  conf_load asks for
 * data.compress.enabled, so that a missing library is a configuration
 * error, not a failure at the first record.
 */
bool		 reccodec_snappy_ok(char *why, size_t len);

struct reccodec_opts {
	bool		 compress;	/* data.compress.enabled */
	bool		 encrypt;	/* data.encrypt.enabled */
	const char	*password;	/* data.password; borrowed, copied */
};

/*
 * A codec for opts (new), or NULL when it has nothing to do (neither
 * codec on); every function takes NULL as "records as they are".  Fatal
 * with compress when reccodec_snappy_ok() is false.
 */
struct reccodec	*reccodec_new(const struct reccodec_opts *);
/* Free it, zeroing the password; NULL is fine. */
void		 reccodec_free(struct reccodec *);

/*
 * The most bytes of a record whose encoding is sure to fit cap bytes (the
 * stream's record cap): cap without codecs; with encryption about a
 * quarter of it (hex of hex), with snappy cap less its worst case (1/7).
 * The agent frames and converts to this, so what goes on the wire stays
 * under the cap.
 */
size_t		 reccodec_plain_cap(const struct reccodec *, size_t cap);

/*
 * The wire bytes of data[n] into *out (reset first; its memory is kept
 * unless it grew past 64 KiB).  With no codec, a copy.  0, or -EIO when
 * libcrypto or libsnappy fails.
 */
int		 reccodec_encode(struct reccodec *, const void *data, size_t n,
		    struct buf *out) WARN_UNUSED;

/*
 * The record's data from its wire bytes data[n] into *out (reset first),
 * at most max bytes of it.  0; -EINVAL: not an encrypted value;
 * -EBADMSG: it does not decrypt (another data.password, or damaged);
 * -EILSEQ: not snappy; -EFBIG: more than max bytes uncompressed; -EIO:
 * libcrypto failed.  *out is empty on failure.
 */
int		 reccodec_decode(struct reccodec *, const void *data, size_t n,
		    size_t max, struct buf *out) WARN_UNUSED;

/* Why reccodec_decode failed with rc, for a message ("does not
 * decrypt (wrong data.password?)"). */
const char	*reccodec_strerror(int rc);

#endif
