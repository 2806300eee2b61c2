/*
 * The DIS Java SDK's password encryption (EncryptUtils.gen and dec), the
 * one format behind the DIS Agent's encrypted agent.yml values (conf/cred.c)
 * and the SDK's per-record data.encrypt.enabled (records/reccodec.c).
 *
 * A sealed value is ASCII: the lowercase hex of the UTF-8 text
 * "saltHex::ivHex::ctHex", where key = PBKDF2-HMAC-SHA1(password, salt,
 * 1000 iterations, 128 bits) and ct = AES-128-CBC/PKCS#5(key, iv, plain);
 * gen() draws an 8-byte salt and a 16-byte IV.  Opening also reads what
 * the SDK's tag_release_1.3.15 wrote (a 16-byte salt, PBKDF2-HMAC-SHA256
 * with 10000 iterations, AES-256-GCM with the IV as nonce and the tag after
 * ct), and hex of either case, as the SDK does.  libcrypto stays in here.
 *
 * struct pwcrypt holds a password and the keys derived from it, so that
 * records sealed under one salt cost one PBKDF2, not one each: sealing
 * keeps a random salt for PWCRYPT_SALT_USES records (a random IV each),
 * and opening remembers the last few salts it met.  The password and the
 * keys are zeroed when it is freed.
 */
#ifndef DISAGENT_PWCRYPT_H
#define DISAGENT_PWCRYPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

#define PWCRYPT_SALT_LEN	8	/* what gen() writes */
#define PWCRYPT_IV_LEN		16
#define PWCRYPT_KEY_LEN		16	/* AES-128 */
#define PWCRYPT_SALT_USES	4096	/* records sealed under one salt */

struct pwcrypt;

/* A sealer and opener for password[len] (copied); new. */
struct pwcrypt	*pwcrypt_new(const char *password, size_t len);
/* Zero the password and the keys, and free; NULL is fine. */
void		 pwcrypt_free(struct pwcrypt *);

/* key = PBKDF2-HMAC-SHA1(password, salt, 1000 iterations), 128 bits. */
int		 pwcrypt_derive(const char *password, size_t pwlen,
		    const uint8_t *salt, size_t saltlen,
		    uint8_t key[PWCRYPT_KEY_LEN]) WARN_UNUSED;

/* Characters of the sealed text of n bytes (168 for n < 16, then +64
 * per 16 bytes). */
size_t		 pwcrypt_sealed_len(size_t n);
/* The most bytes whose sealed text takes at most cap characters; 0 when
 * not even an empty value fits (then nothing fits: sealed_len(0) > cap). */
size_t		 pwcrypt_plain_max(size_t cap);

/*
 * Seal n bytes of plain and append the text to *out: with the given salt
 * and IV (tests, `disagent encrypt`), or with the current salt and a
 * random IV (RAND_bytes).  0, or -EIO when libcrypto fails (nothing
 * appended).
 */
int		 pwcrypt_seal_with(struct pwcrypt *, const void *plain,
		    size_t n, const uint8_t salt[PWCRYPT_SALT_LEN],
		    const uint8_t iv[PWCRYPT_IV_LEN], struct buf *out)
		    WARN_UNUSED;
int		 pwcrypt_seal(struct pwcrypt *, const void *plain, size_t n,
		    struct buf *out) WARN_UNUSED;

/*
 * Open text[n] and append the plaintext to *out, which must have room
 * for n / 4 more bytes when it holds a secret (buf_alloc_exact: it is
 * then not grown).  0; -EINVAL when text is not in the format (hex of
 * "salt::iv::ct" with a 16-byte IV and whole blocks of ct); -EBADMSG when
 * it does not decrypt: the wrong password, or a damaged value.  AES-CBC
 * padding lets about one wrong password in 256 through, as garbage (the
 * SDK has the same weakness); GCM never does.  Nothing is appended on
 * failure.
 */
int		 pwcrypt_open(struct pwcrypt *, const char *text, size_t n,
		    struct buf *out) WARN_UNUSED;

#endif
