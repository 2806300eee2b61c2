/*
 * Credentials at configuration time: the DIS Agent's encrypted values
 * (PBKDF2-HMAC-SHA1 and AES-128-CBC, the format of the DIS Java SDK's
 * EncryptUtils, in wire/pwcrypt.c), values supplied by systemd credentials
 * ($CREDENTIALS_DIRECTORY) and WARNs for secret files others can read
 * (`disagent encrypt` is credcmd.c).  Every buffer that held a secret is
 * zeroed before it is freed; no secret is ever part of a message.
 */
#ifndef DISAGENT_CRED_H
#define DISAGENT_CRED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/util.h"

/* A value this long or longer is encrypted (the DIS Agent's rule). */
#define CRED_CIPHER_MIN		168
/* The DIS Agent's EncryptTool key when encrypt.key is not set (public). */
#define CRED_DEFAULT_KEY	"9535995d-191e-4d12-a2c5-b8406f05e531"
#define CRED_SALT_LEN		8
#define CRED_IV_LEN		16
#define CRED_KEY_LEN		16

/*
 * Whether the DIS Agent decrypts the top-level key name when its value is
 * encrypted: ak, sk, dataPassword, and any name whose lower-cased form
 * contains "pwd" or "pass"; never projectId.
 */
bool	 cred_decryptable(const char *name);

/* Whether s has the shape of an encrypted value: long enough, all hex. */
bool	 cred_looks_encrypted(const char *s);

/* key = PBKDF2-HMAC-SHA1(password, salt, 1000 iterations), 128 bits. */
int	 cred_derive(const char *password, const uint8_t *salt, size_t saltlen,
	    uint8_t key[CRED_KEY_LEN]) WARN_UNUSED;

/*
 * Encrypt n bytes of plain with password, salt and iv, in the DIS Agent's
 * format: lowercase hex of "saltHex::ivHex::hex(AES-128-CBC/PKCS#5)".
 * Returns a new string, or NULL when libcrypto fails.
 */
char	*cred_encrypt_with(const void *plain, size_t n, const char *password,
	    const uint8_t salt[CRED_SALT_LEN], const uint8_t iv[CRED_IV_LEN]);
/* The same with a random salt and IV (as EncryptUtils.gen). */
char	*cred_encrypt(const void *plain, size_t n, const char *password);

/*
 * Decrypt text (the format above; hex digits of either case) with password.
 * On success *out is the new plaintext (free it with secret_free) and 0 is
 * returned; -EINVAL when text is not in the format, -EBADMSG when it does
 * not decrypt (a wrong key or a damaged value) or the plaintext holds a NUL.
 */
int	 cred_decrypt(const char *text, const char *password, char **out)
	    WARN_UNUSED;


/* False when $CREDENTIALS_DIRECTORY is set but cannot be read. */
bool	 cred_dir_readable(void);

/* One value conf_load resolves (cred_resolve). */
struct cred_item {
	const char	*key;		/* "sk", as in agent.ini */
	char		**value;	/* in struct conf; may be replaced */
	int		 line;		/* where agent.ini sets it; 0: not */
	const char	*env;		/* the variable that set it, or NULL */
	bool		 from_dir;	/* may come from $CREDENTIALS_DIRECTORY */
	bool		 secret;	/* a secret when not encrypted */
	bool		 decrypt;	/* cred_decryptable(key) */
	/* NULL or why a plain value is not valid: run on values that were
	 * decrypted or read from the directory. */
	const char	*(*check)(const char *);
	bool		 dir_used;	/* out: read from the directory */
	bool		 decrypted;	/* out */
};

/*
 * Resolve the credentials of the agent.ini at path, in order: a value that
 * neither agent.ini nor the environment sets comes from the file named
 * like its key in $CREDENTIALS_DIRECTORY when that exists (one trailing
 * newline dropped); then every value of a decryptable key that looks
 * encrypted is decrypted with the value of the item "encrypt.key" (the DIS
 * Agent's built-in key when that is empty, with a WARN), and checked again;
 * the value of "encrypt.key" is wiped afterwards.  Secret files that
 * others can read get a WARN naming their mode: path when it sets a secret
 * in the clear, credential files readable by group or others.  Returns 0,
 * or -1 with "FILE:LINE: message" (or "FILE: message") in err naming the
 * key and where its value came from, never the value.
 */
int	 cred_resolve(struct cred_item *items, size_t n, const char *path,
	    char *err, size_t errlen) WARN_UNUSED;

/*
 * The contents of path (at most 64 KiB, one trailing newline dropped) into
 * *out (new; free it with secret_free) and its permission bits into *mode.
 * 0; -ENOENT when it does not exist; another negative errno.
 */
int	 cred_read_file(const char *path, char **out, mode_t *mode)
	    WARN_UNUSED;
/* Whether s is UTF-8 text without control characters. */
bool	 cred_text_ok(const char *s);

#endif
