/*
 * The DIS Java SDK's EncryptUtils format (pwcrypt.h), through libcrypto.
 * Byte for byte what tests/data/sdk-record-codecs.txt says the SDK's own
 * classes write and read: PBKDF2Coder.genHash, AESCoder and Hex, and the
 * GCM scheme of its tag_release_1.3.15 on the reading side.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "wire/pwcrypt.h"

#define ITERATIONS	1000		/* PBKDF2Coder */
#define GCM_ITERATIONS	10000		/* tag_release_1.3.15 */
#define GCM_SALT_LEN	16
#define GCM_KEY_LEN	32
#define GCM_TAG_LEN	16
#define SALT_MAX	64		/* bytes of a salt we read */
#define KEY_MAX		32
#define CACHED		4		/* salts opening remembers */
#define SEP		"::"
#define BLOCK		16

enum scheme { CBC, GCM };

struct key_slot {
	bool		 used;
	enum scheme	 scheme;
	size_t		 saltlen;
	uint8_t		 salt[SALT_MAX];
	uint8_t		 key[KEY_MAX];
};

struct pwcrypt {
	char		*pw;
	size_t		 pwlen;
	/* Sealing: the current salt and its key. */
	uint8_t		 salt[PWCRYPT_SALT_LEN];
	uint8_t		 key[PWCRYPT_KEY_LEN];
	unsigned	 uses;		/* records sealed under it */
	bool		 have_salt;
	/* Opening: the last salts seen. */
	struct key_slot	 slots[CACHED];
	size_t		 next_slot;
};

struct pwcrypt *
pwcrypt_new(const char *password, size_t len)
{
	struct pwcrypt	*c;

	c = xcalloc(1, sizeof(*c));
	c->pw = xmalloc(len + 1);
	memcpy(c->pw, password, len);
	c->pw[len] = '\0';
	c->pwlen = len;
	return c;
}

void
pwcrypt_free(struct pwcrypt *c)
{
	if (c == NULL)
		return;
	explicit_bzero(c->pw, c->pwlen);
	free(c->pw);
	explicit_bzero(c, sizeof(*c));
	free(c);
}

int
pwcrypt_derive(const char *password, size_t pwlen, const uint8_t *salt,
    size_t saltlen, uint8_t key[PWCRYPT_KEY_LEN])
{
	if (PKCS5_PBKDF2_HMAC_SHA1(password, (int)pwlen, salt, (int)saltlen,
	    ITERATIONS, PWCRYPT_KEY_LEN, key) != 1)
		return -EIO;
	return 0;
}

/* The key of scheme s for salt: derived, or remembered. */
static int
key_for(struct pwcrypt *c, enum scheme s, const uint8_t *salt,
    size_t saltlen, const uint8_t **key)
{
	struct key_slot	*k;
	size_t		 i;
	int		 ok;

	for (i = 0; i < CACHED; i++) {
		k = &c->slots[i];
		if (k->used && k->scheme == s && k->saltlen == saltlen &&
		    memcmp(k->salt, salt, saltlen) == 0) {
			*key = k->key;
			return 0;
		}
	}
	k = &c->slots[c->next_slot];
	c->next_slot = (c->next_slot + 1) % CACHED;
	if (s == CBC)
		ok = PKCS5_PBKDF2_HMAC_SHA1(c->pw, (int)c->pwlen, salt,
		    (int)saltlen, ITERATIONS, PWCRYPT_KEY_LEN, k->key);
	else
		ok = PKCS5_PBKDF2_HMAC(c->pw, (int)c->pwlen, salt,
		    (int)saltlen, GCM_ITERATIONS, EVP_sha256(), GCM_KEY_LEN,
		    k->key);
	if (ok != 1) {
		explicit_bzero(k, sizeof(*k));
		return -EIO;
	}
	k->used = true;
	k->scheme = s;
	k->saltlen = saltlen;
	memcpy(k->salt, salt, saltlen);
	*key = k->key;
	return 0;
}

/* --- hex ------------------------------------------------------------------ */

static int
hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* n hex digits (either case) of s into out[n / 2]; -EINVAL if not hex. */
static int
unhex(const char *s, size_t n, uint8_t *out)
{
	size_t	 i;
	int	 hi, lo;

	if (n % 2 != 0)
		return -EINVAL;
	for (i = 0; i < n; i += 2) {
		hi = hexval((unsigned char)s[i]);
		lo = hexval((unsigned char)s[i + 1]);
		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

/* The hex of p[n] written at o (2n characters); the end. */
static char *
tohex(const uint8_t *p, size_t n, char *o)
{
	static const char digits[] = "0123456789abcdef";
	size_t	 i;

	for (i = 0; i < n; i++) {
		*o++ = digits[p[i] >> 4];
		*o++ = digits[p[i] & 15];
	}
	return o;
}

/* --- sealing -------------------------------------------------------------- */

size_t
pwcrypt_sealed_len(size_t n)
{
	size_t	 ct = BLOCK * (n / BLOCK + 1);

	return 2 * (2 * PWCRYPT_SALT_LEN + 2 + 2 * PWCRYPT_IV_LEN + 2 +
	    2 * ct);
}

size_t
pwcrypt_plain_max(size_t cap)
{
	size_t	 fixed = 2 * PWCRYPT_SALT_LEN + 2 + 2 * PWCRYPT_IV_LEN + 2;
	size_t	 blocks;

	if (cap / 2 < fixed + 2 * BLOCK)
		return 0;
	blocks = (cap / 2 - fixed) / (2 * BLOCK);
	return blocks * BLOCK - 1;
}

/* AES-128-CBC/PKCS#5 of in[n] into out (room for n + BLOCK); its length,
 * or -EIO. */
static int
cbc_encrypt(const uint8_t *key, const uint8_t *iv, const void *in, size_t n,
    uint8_t *out)
{
	EVP_CIPHER_CTX	*ctx;
	int		 len = 0, fin = 0, ok;

	if (n > (size_t)INT32_MAX - BLOCK)
		return -EIO;
	ctx = EVP_CIPHER_CTX_new();
	if (ctx == NULL)
		return -EIO;
	ok = EVP_EncryptInit_ex(ctx, EVP_aes_128_cbc(), NULL, key, iv) == 1 &&
	    EVP_EncryptUpdate(ctx, out, &len, in, (int)n) == 1 &&
	    EVP_EncryptFinal_ex(ctx, out + len, &fin) == 1;
	EVP_CIPHER_CTX_free(ctx);
	return ok ? len + fin : -EIO;
}

/* The text for salt, iv and a key derived from salt, appended to out. */
static int
seal_key(const uint8_t *key, const uint8_t *salt, const uint8_t *iv,
    const void *plain, size_t n, struct buf *out)
{
	static const char sep[] = SEP;
	size_t		 total = pwcrypt_sealed_len(n);
	uint8_t		*ct;
	char		*o, *inner;
	size_t		 innerlen;
	int		 len;

	ct = xmalloc(n + BLOCK);
	len = cbc_encrypt(key, iv, plain, n, ct);
	if (len < 0) {
		free(ct);
		return len;
	}
	/* The inner text, then its hex straight into out. */
	innerlen = total / 2;
	inner = xmalloc(innerlen);
	o = tohex(salt, PWCRYPT_SALT_LEN, inner);
	memcpy(o, sep, 2);
	o = tohex(iv, PWCRYPT_IV_LEN, o + 2);
	memcpy(o, sep, 2);
	o = tohex(ct, (size_t)len, o + 2);
	free(ct);
	buf_reserve(out, total);
	tohex((const uint8_t *)inner, innerlen, out->data + out->len);
	free(inner);
	buf_added(out, total);
	return 0;
}

int
pwcrypt_seal_with(struct pwcrypt *c, const void *plain, size_t n,
    const uint8_t salt[PWCRYPT_SALT_LEN], const uint8_t iv[PWCRYPT_IV_LEN],
    struct buf *out)
{
	uint8_t	 key[PWCRYPT_KEY_LEN];
	int	 rc;

	rc = pwcrypt_derive(c->pw, c->pwlen, salt, PWCRYPT_SALT_LEN, key);
	if (rc == 0)
		rc = seal_key(key, salt, iv, plain, n, out);
	explicit_bzero(key, sizeof(key));
	return rc;
}

int
pwcrypt_seal(struct pwcrypt *c, const void *plain, size_t n,
    struct buf *out)
{
	uint8_t	 iv[PWCRYPT_IV_LEN];

	if (!c->have_salt || c->uses >= PWCRYPT_SALT_USES) {
		c->have_salt = false;
		if (RAND_bytes(c->salt, sizeof(c->salt)) != 1 ||
		    pwcrypt_derive(c->pw, c->pwlen, c->salt, sizeof(c->salt),
		    c->key) != 0)
			return -EIO;
		c->have_salt = true;
		c->uses = 0;
	}
	if (RAND_bytes(iv, sizeof(iv)) != 1)
		return -EIO;
	c->uses++;
	return seal_key(c->key, c->salt, iv, plain, n, out);
}

/* --- opening -------------------------------------------------------------- */

/* The "::"-separated fields of inner[n]: exactly three, none empty. */
static int
split3(const char *inner, size_t n, const char **f, size_t *len)
{
	const char	*p = inner, *end = inner + n, *q;
	int		 i;

	for (i = 0; i < 3; i++) {
		q = p;
		while (q < end && !(q + 1 < end && q[0] == ':' && q[1] == ':'))
			q++;
		if (q == p || (i < 2 && q == end) || (i == 2 && q != end))
			return -EINVAL;
		f[i] = p;
		len[i] = (size_t)(q - p);
		p = q + 2;
	}
	return 0;
}

/* AES-128-CBC/PKCS#5 decryption of ct[n] into out (room for n + BLOCK). */
static int
cbc_decrypt(const uint8_t *key, const uint8_t *iv, const uint8_t *ct,
    size_t n, uint8_t *out)
{
	EVP_CIPHER_CTX	*ctx;
	int		 len = 0, fin = 0, ok;

	ctx = EVP_CIPHER_CTX_new();
	if (ctx == NULL)
		return -EIO;
	ok = EVP_DecryptInit_ex(ctx, EVP_aes_128_cbc(), NULL, key, iv) == 1 &&
	    EVP_DecryptUpdate(ctx, out, &len, ct, (int)n) == 1 &&
	    EVP_DecryptFinal_ex(ctx, out + len, &fin) == 1;
	EVP_CIPHER_CTX_free(ctx);
	return ok ? len + fin : -EBADMSG;
}

/* AES-256-GCM of ct[n] (the tag its last 16 bytes) into out (room n). */
static int
gcm_decrypt(const uint8_t *key, const uint8_t *iv, const uint8_t *ct,
    size_t n, uint8_t *out)
{
	EVP_CIPHER_CTX	*ctx;
	uint8_t		 tag[GCM_TAG_LEN];
	int		 len = 0, fin = 0, ok;

	if (n < GCM_TAG_LEN)
		return -EBADMSG;
	memcpy(tag, ct + n - GCM_TAG_LEN, GCM_TAG_LEN);
	n -= GCM_TAG_LEN;
	ctx = EVP_CIPHER_CTX_new();
	if (ctx == NULL)
		return -EIO;
	ok = EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL) ==
	    1 && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN,
	    PWCRYPT_IV_LEN, NULL) == 1 &&
	    EVP_DecryptInit_ex(ctx, NULL, NULL, key, iv) == 1 &&
	    EVP_DecryptUpdate(ctx, out, &len, ct, (int)n) == 1 &&
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, GCM_TAG_LEN,
	    tag) == 1 &&
	    EVP_DecryptFinal_ex(ctx, out + len, &fin) == 1;
	EVP_CIPHER_CTX_free(ctx);
	return ok ? len + fin : -EBADMSG;
}

/* Decrypt salt, iv and ct into out (room for ctlen + BLOCK): GCM first
 * for a 16-byte salt (its tag tells a wrong guess for sure), then CBC. */
static int
decrypt(struct pwcrypt *c, const uint8_t *salt, size_t saltlen,
    const uint8_t *iv, const uint8_t *ct, size_t ctlen, uint8_t *out)
{
	const uint8_t	*key;
	int		 rc, n = -EBADMSG;

	if (saltlen == GCM_SALT_LEN) {
		rc = key_for(c, GCM, salt, saltlen, &key);
		if (rc != 0)
			return rc;
		n = gcm_decrypt(key, iv, ct, ctlen, out);
		if (n >= 0)
			return n;
	}
	if (ctlen % BLOCK != 0)
		return saltlen == GCM_SALT_LEN ? n : -EINVAL;
	rc = key_for(c, CBC, salt, saltlen, &key);
	return rc != 0 ? rc : cbc_decrypt(key, iv, ct, ctlen, out);
}

/* The fields of inner[n], decrypted and appended to out. */
static int
open_inner(struct pwcrypt *c, const char *inner, size_t n, struct buf *out)
{
	const char	*f[3];
	size_t		 len[3];
	uint8_t		 salt[SALT_MAX], iv[PWCRYPT_IV_LEN], *ct;
	int		 rc;

	if (split3(inner, n, f, len) != 0 || len[0] / 2 > SALT_MAX ||
	    len[1] != 2 * PWCRYPT_IV_LEN || len[2] % 2 != 0)
		return -EINVAL;
	if (unhex(f[0], len[0], salt) != 0 || unhex(f[1], len[1], iv) != 0)
		return -EINVAL;
	ct = xmalloc(len[2] / 2);
	rc = unhex(f[2], len[2], ct);
	if (rc == 0) {
		buf_reserve(out, len[2] / 2 + BLOCK);
		rc = decrypt(c, salt, len[0] / 2, iv, ct, len[2] / 2,
		    (uint8_t *)out->data + out->len);
	}
	free(ct);
	if (rc < 0) {
		/* What a failed decryption left behind. */
		if (out->data != NULL)
			explicit_bzero(out->data + out->len,
			    out->cap - out->len);
		return rc;
	}
	buf_added(out, (size_t)rc);
	return 0;
}

int
pwcrypt_open(struct pwcrypt *c, const char *text, size_t n, struct buf *out)
{
	char	*inner;
	int	 rc;

	if (n == 0 || n % 2 != 0)
		return -EINVAL;
	inner = xmalloc(n / 2);
	rc = unhex(text, n, (uint8_t *)inner);
	if (rc == 0)
		rc = open_inner(c, inner, n / 2, out);
	free(inner);
	return rc;
}
