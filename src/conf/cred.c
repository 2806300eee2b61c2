/*
 * The DIS Agent's encrypted configuration values, compatible with its
 * EncryptTool and the DIS Java SDK's EncryptUtils.gen/dec: salt (8 random
 * bytes) and IV (16) in hex, key = PBKDF2-HMAC-SHA1(encrypt.key, salt, 1000
 * iterations, 128 bits), AES-128-CBC with PKCS#5 padding, and the whole
 * "saltHex::ivHex::ctHex" again as lowercase hex of its UTF-8 bytes: the
 * format of wire/pwcrypt.c, which data.encrypt.enabled uses too.  Plus
 * where conf_load's credentials may come from besides agent.ini and the
 * environment: files of systemd's $CREDENTIALS_DIRECTORY.  The command
 * `disagent encrypt` is credcmd.c.
 */
#include "config.h"

#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "conf/cred.h"
#include "wire/pwcrypt.h"

#define CIPHER_MAX	(64 * 1024)	/* bytes of an encrypted value */
#define FILE_MAX	(64 * 1024)	/* bytes of a credential file */

bool
cred_decryptable(const char *name)
{
	char	 low[128];
	size_t	 i;

	if (strcmp(name, "ak") == 0 || strcmp(name, "sk") == 0 ||
	    strcmp(name, "dataPassword") == 0)
		return true;
	if (strcmp(name, "projectId") == 0)
		return false;
	for (i = 0; name[i] != '\0' && i + 1 < sizeof(low); i++)
		low[i] = (char)tolower((unsigned char)name[i]);
	low[i] = '\0';
	return strstr(low, "pwd") != NULL || strstr(low, "pass") != NULL;
}

static bool
ishex(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	    (c >= 'A' && c <= 'F');
}

bool
cred_looks_encrypted(const char *s)
{
	size_t	 n = strlen(s), i;

	if (n < CRED_CIPHER_MIN || n % 2 != 0)
		return false;
	for (i = 0; i < n; i++)
		if (!ishex((unsigned char)s[i]))
			return false;
	return true;
}

int
cred_derive(const char *password, const uint8_t *salt, size_t saltlen,
    uint8_t key[CRED_KEY_LEN])
{
	return pwcrypt_derive(password, strlen(password), salt, saltlen, key);
}

char *
cred_encrypt_with(const void *plain, size_t n, const char *password,
    const uint8_t salt[CRED_SALT_LEN], const uint8_t iv[CRED_IV_LEN])
{
	struct pwcrypt	*c;
	struct buf	 out;
	int		 rc;

	if (n > CIPHER_MAX)
		return NULL;
	c = pwcrypt_new(password, strlen(password));
	buf_init(&out);
	rc = pwcrypt_seal_with(c, plain, n, salt, iv, &out);
	pwcrypt_free(c);
	if (rc != 0) {
		buf_cleanup(&out);
		return NULL;
	}
	return out.data;
}

char *
cred_encrypt(const void *plain, size_t n, const char *password)
{
	struct pwcrypt	*c;
	struct buf	 out;
	int		 rc;

	if (n > CIPHER_MAX)
		return NULL;
	/* A new sealer's first value gets a random salt and IV: gen(). */
	c = pwcrypt_new(password, strlen(password));
	buf_init(&out);
	rc = pwcrypt_seal(c, plain, n, &out);
	pwcrypt_free(c);
	if (rc != 0) {
		buf_cleanup(&out);
		return NULL;
	}
	return out.data;
}

int
cred_decrypt(const char *text, const char *password, char **out)
{
	struct pwcrypt	*c;
	struct buf	 plain;
	size_t		 n = strlen(text);
	int		 rc;

	*out = NULL;
	if (n == 0 || n % 2 != 0 || n / 2 > 2 * CIPHER_MAX)
		return -EINVAL;
	/* Room for all of it at once: a buffer holding a secret never
	 * grows (buf_wipe). */
	buf_init(&plain);
	buf_alloc_exact(&plain, n / 4 + 1);
	c = pwcrypt_new(password, strlen(password));
	rc = pwcrypt_open(c, text, n, &plain);
	pwcrypt_free(c);
	if (rc == 0 && memchr(plain.data, '\0', plain.len) != NULL)
		rc = -EBADMSG;
	if (rc == 0)
		*out = xstrdup(plain.data);
	buf_wipe(&plain);
	return rc;
}

/* --- where the values come from ---------------------------------------- */

bool
cred_text_ok(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int		 more;

	while (*p != '\0') {
		if (*p < 0x20 || *p == 0x7f)
			return false;
		if (*p < 0x80) {
			p++;
			continue;
		}
		more = (*p & 0xe0) == 0xc0 ? 1 : (*p & 0xf0) == 0xe0 ? 2 :
		    (*p & 0xf8) == 0xf0 ? 3 : -1;
		if (more < 0 || *p == 0xc0 || *p == 0xc1)
			return false;
		for (p++; more > 0; more--, p++)
			if ((*p & 0xc0) != 0x80)
				return false;
	}
	return true;
}

static int PRINTFLIKE(3, 4)
fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

int
cred_read_file(const char *path, char **out, mode_t *mode)
{
	struct stat	 st;
	struct buf	 b;
	char		 chunk[4096];
	ssize_t		 r;
	int		 fd, rc = 0;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0)
		rc = -errno;
	else if (!S_ISREG(st.st_mode))
		rc = -EINVAL;
	if (rc != 0) {
		close(fd);
		return rc;
	}
	*mode = st.st_mode & 07777;
	buf_init(&b);
	buf_alloc_exact(&b, FILE_MAX);	/* never grown: see buf_wipe */
	while (rc == 0 && (r = read(fd, chunk, sizeof(chunk))) != 0) {
		if (r < 0 && errno != EINTR)
			rc = -errno;
		else if (r > 0 && b.len + (size_t)r > FILE_MAX)
			rc = -EFBIG;
		else if (r > 0)
			buf_add(&b, chunk, (size_t)r);
	}
	explicit_bzero(chunk, sizeof(chunk));
	close(fd);
	if (rc == 0 && memchr(b.data ? b.data : "", '\0', b.len) != NULL)
		rc = -EINVAL;
	if (rc != 0) {
		buf_wipe(&b);
		return rc;
	}
	if (b.len > 0 && b.data[b.len - 1] == '\n')
		buf_setlen(&b, b.len - 1);
	if (b.len > 0 && b.data[b.len - 1] == '\r')
		buf_setlen(&b, b.len - 1);
	*out = xstrdup(b.data != NULL ? b.data : "");
	buf_wipe(&b);
	return 0;
}

bool
cred_dir_readable(void)
{
	const char	*dir = getenv("CREDENTIALS_DIRECTORY");

	return dir == NULL || dir[0] == '\0' || access(dir, R_OK | X_OK) == 0;
}

/* Fill the values nobody set from $CREDENTIALS_DIRECTORY. */
static int
from_directory(struct cred_item *items, size_t n, char *err, size_t errlen)
{
	const char	*dir = getenv("CREDENTIALS_DIRECTORY");
	char		*file, *v;
	mode_t		 mode;
	size_t		 i;
	int		 rc;

	if (dir == NULL || dir[0] == '\0')
		return 0;
	for (i = 0; i < n; i++) {
		if (!items[i].from_dir || items[i].line != 0 ||
		    items[i].env != NULL || (*items[i].value)[0] != '\0')
			continue;
		file = xasprintf("%s/%s", dir, items[i].key);
		rc = cred_read_file(file, &v, &mode);
		if (rc == -ENOENT) {
			free(file);
			continue;
		}
		if (rc != 0) {
			fail(err, errlen, "%s: cannot read the credential: %s",
			    file, strerror(-rc));
			free(file);
			return -1;
		}
		if (mode & (S_IRGRP | S_IROTH))
			log_warn("credential %s is readable by group or others "
			    "(mode %04o)", file, (unsigned)mode);
		free(file);
		secret_free(*items[i].value);
		*items[i].value = v;
		items[i].dir_used = true;
	}
	return 0;
}

static const struct cred_item *
item_find(const struct cred_item *items, size_t n, const char *key)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (strcmp(items[i].key, key) == 0)
			return &items[i];
	return NULL;
}

/* WARN when path sets a secret others could read and use. */
static void
check_file_mode(const struct cred_item *items, size_t n, const char *path)
{
	const struct cred_item *ek = item_find(items, n, "encrypt.key");
	struct stat	 st;
	const char	*which = NULL;
	size_t		 i;

	for (i = 0; i < n && which == NULL; i++) {
		if (!items[i].secret || items[i].line == 0 ||
		    items[i].env != NULL)
			continue;
		/* A ciphertext is safe unless its key sits beside it. */
		if (items[i].decrypt && cred_looks_encrypted(*items[i].value) &&
		    (ek == NULL || ek->line == 0))
			continue;
		which = items[i].key;
	}
	if (which == NULL || stat(path, &st) != 0 || !(st.st_mode & S_IROTH))
		return;
	log_warn("%s holds the secret %s and is readable by every user "
	    "(mode %04o): chmod o-rwx %s", path, which,
	    (unsigned)(st.st_mode & 07777), path);
}

/* "FILE:LINE: key", "FILE: key (from ENV)" or "DIR/key": where v came from. */
static void
origin(const struct cred_item *it, const char *path, char *out, size_t len)
{
	const char	*dir = getenv("CREDENTIALS_DIRECTORY");

	if (it->dir_used)
		snprintf(out, len, "%s/%s", dir != NULL ? dir : "", it->key);
	else if (it->env != NULL)
		snprintf(out, len, "%s: %s (from %s)", path, it->key, it->env);
	else if (it->line > 0)
		snprintf(out, len, "%s:%d: %s", path, it->line, it->key);
	else
		snprintf(out, len, "%s: %s", path, it->key);
}

/* Decrypt one value in place with password (NULL: the built-in key). */
static int
decrypt_item(struct cred_item *it, const char *password, const char *path,
    char *err, size_t errlen)
{
	char	 where[1024], *plain = NULL;
	int	 rc;

	origin(it, path, where, sizeof(where));
	if (!cred_looks_encrypted(*it->value))
		return fail(err, errlen, "%s: the value is %d characters or "
		    "more, so it must be encrypted, but it is not hexadecimal",
		    where, CRED_CIPHER_MIN);
	rc = cred_decrypt(*it->value, password != NULL ? password :
	    CRED_DEFAULT_KEY, &plain);
	if (rc == 0 && (plain[0] == '\0' || !cred_text_ok(plain)))
		rc = -EBADMSG;	/* the wrong key can pass the padding check */
	if (rc == -EINVAL)
		return fail(err, errlen, "%s: the value is not a DIS Agent "
		    "encrypted value", where);
	if (rc != 0 && password != NULL) {
		secret_free(plain);
		return fail(err, errlen, "%s: cannot decrypt the value with "
		    "encrypt.key (a wrong key, or a damaged value)", where);
	}
	if (rc != 0) {
		secret_free(plain);
		return fail(err, errlen, "%s: cannot decrypt the value with the "
		    "DIS Agent's built-in key; set encrypt.key (or "
		    "DIS_ENCRYPT_KEY, or the credential encrypt.key)", where);
	}
	secret_free(*it->value);
	*it->value = plain;
	it->decrypted = true;
	return 0;
}

/* The plain values that did not come through conf's checks, checked. */
static int
check_items(const struct cred_item *items, size_t n, const char *path,
    char *err, size_t errlen)
{
	const char	*why;
	char		 where[1024];
	size_t		 i;

	for (i = 0; i < n; i++) {
		if (items[i].check == NULL || (!items[i].decrypted &&
		    !items[i].dir_used) || (*items[i].value)[0] == '\0')
			continue;
		why = items[i].check(*items[i].value);
		if (why == NULL)
			continue;
		origin(&items[i], path, where, sizeof(where));
		return fail(err, errlen, "%s: the value %s", where, why);
	}
	return 0;
}

int
cred_resolve(struct cred_item *items, size_t n, const char *path, char *err,
    size_t errlen)
{
	struct cred_item *ek = NULL;
	const char	*password = NULL;
	struct buf	 dflt;
	size_t		 i;
	int		 rc = 0;

	if (from_directory(items, n, err, errlen) != 0)
		return -1;
	check_file_mode(items, n, path);
	for (i = 0; i < n; i++)
		if (strcmp(items[i].key, "encrypt.key") == 0)
			ek = &items[i];
	if (ek != NULL && (*ek->value)[0] != '\0')
		password = *ek->value;
	buf_init(&dflt);
	for (i = 0; i < n && rc == 0; i++) {
		if (!items[i].decrypt ||
		    strlen(*items[i].value) < CRED_CIPHER_MIN)
			continue;
		rc = decrypt_item(&items[i], password, path, err, errlen);
		if (rc == 0 && password == NULL)
			buf_printf(&dflt, "%s%s", dflt.len ? ", " : "",
			    items[i].key);
	}
	if (rc == 0 && dflt.len > 0)
		log_warn("%s: %s decrypted with the DIS Agent's built-in key, "
		    "which is public: set encrypt.key to keep the value secret",
		    path, dflt.data);
	buf_cleanup(&dflt);
	if (rc == 0)
		rc = check_items(items, n, path, err, errlen);
	/* Nothing needs the key any more. */
	if (ek != NULL) {
		secret_free(*ek->value);
		*ek->value = xstrdup("");
	}
	return rc;
}
