/*
 * The DIS Agent's encrypted configuration values, compatible with its
 * EncryptTool and the DIS Java SDK's EncryptUtils.gen/dec: salt (8 random
 * bytes) and IV (16) in hex, key = PBKDF2-HMAC-SHA1(encrypt.key, salt, 1000
 * iterations, 128 bits), AES-128-CBC with PKCS#5 padding, and the whole
 * "saltHex::ivHex::ctHex" again as lowercase hex of its UTF-8 bytes.  Plus
 * where conf_load's credentials may come from besides agent.ini and the
 * environment: files of systemd's $CREDENTIALS_DIRECTORY.  And the command
 * `disagent encrypt`, which prompts without echo.
 */
#include "config.h"

#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "cred.h"
#include "log.h"

#define ITERATIONS	1000
#define SALT_MAX	64		/* bytes; the DIS Agent writes 8 */
#define CIPHER_MAX	(64 * 1024)	/* bytes of an encrypted value */
#define FILE_MAX	(64 * 1024)	/* bytes of a credential file */
#define SEP		"::"

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

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool
cred_looks_encrypted(const char *s)
{
	size_t	 n = strlen(s), i;

	if (n < CRED_CIPHER_MIN || n % 2 != 0)
		return false;
	for (i = 0; i < n; i++)
		if (hexval((unsigned char)s[i]) < 0)
			return false;
	return true;
}

/* n hex digits of s into out (n / 2 bytes); -EINVAL if not hex. */
static int
hex_decode(const char *s, size_t n, uint8_t *out)
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

static void
hex_encode(const uint8_t *p, size_t n, struct buf *b)
{
	static const char digits[] = "0123456789abcdef";
	size_t	 i;

	for (i = 0; i < n; i++) {
		buf_addc(b, digits[p[i] >> 4]);
		buf_addc(b, digits[p[i] & 15]);
	}
}

/* Zero a buffer that held a secret, then free it. */
static void
buf_wipe(struct buf *b)
{
	if (b->data != NULL)
		explicit_bzero(b->data, b->cap);
	buf_cleanup(b);
}

void
cred_free(char *s)
{
	if (s == NULL)
		return;
	explicit_bzero(s, strlen(s));
	free(s);
}

int
cred_derive(const char *password, const uint8_t *salt, size_t saltlen,
    uint8_t key[CRED_KEY_LEN])
{
	if (PKCS5_PBKDF2_HMAC_SHA1(password, (int)strlen(password), salt,
	    (int)saltlen, ITERATIONS, CRED_KEY_LEN, key) != 1)
		return -EIO;
	return 0;
}

/*
 * AES-128-CBC of in[n] into out (room for n + 16), PKCS#5 padding; enc
 * chooses the direction.  The output length, or -EBADMSG (bad padding:
 * the wrong key, or damaged data), -EIO (libcrypto).
 */
static int
aes_cbc(bool enc, const uint8_t key[CRED_KEY_LEN], const uint8_t *iv,
    const uint8_t *in, size_t n, uint8_t *out)
{
	EVP_CIPHER_CTX	*ctx;
	int		 len = 0, fin = 0, ok;

	ctx = EVP_CIPHER_CTX_new();
	if (ctx == NULL)
		return -EIO;
	ok = EVP_CipherInit_ex(ctx, EVP_aes_128_cbc(), NULL, key, iv,
	    enc ? 1 : 0) == 1 &&
	    EVP_CipherUpdate(ctx, out, &len, in, (int)n) == 1;
	if (ok)
		ok = EVP_CipherFinal_ex(ctx, out + len, &fin) == 1;
	EVP_CIPHER_CTX_free(ctx);
	if (!ok)
		return enc ? -EIO : -EBADMSG;
	return len + fin;
}

char *
cred_encrypt_with(const void *plain, size_t n, const char *password,
    const uint8_t salt[CRED_SALT_LEN], const uint8_t iv[CRED_IV_LEN])
{
	uint8_t		 key[CRED_KEY_LEN];
	uint8_t		*ct;
	struct buf	 inner, outer;
	int		 len;

	if (n > CIPHER_MAX || cred_derive(password, salt, CRED_SALT_LEN,
	    key) != 0)
		return NULL;
	ct = xmalloc(n + 16);
	len = aes_cbc(true, key, iv, plain, n, ct);
	explicit_bzero(key, sizeof(key));
	if (len < 0) {
		free(ct);
		return NULL;
	}
	buf_init(&inner);
	buf_init(&outer);
	hex_encode(salt, CRED_SALT_LEN, &inner);
	buf_addstr(&inner, SEP);
	hex_encode(iv, CRED_IV_LEN, &inner);
	buf_addstr(&inner, SEP);
	hex_encode(ct, (size_t)len, &inner);
	free(ct);
	hex_encode((const uint8_t *)inner.data, inner.len, &outer);
	buf_cleanup(&inner);
	return outer.data;
}

char *
cred_encrypt(const void *plain, size_t n, const char *password)
{
	uint8_t	 salt[CRED_SALT_LEN], iv[CRED_IV_LEN];

	if (RAND_bytes(salt, sizeof(salt)) != 1 ||
	    RAND_bytes(iv, sizeof(iv)) != 1)
		return NULL;
	return cred_encrypt_with(plain, n, password, salt, iv);
}

/* The three "::"-separated fields of inner, as pointers and lengths. */
static int
split3(const char *inner, const char **f, size_t *len)
{
	const char	*p = inner, *q;
	int		 i;

	for (i = 0; i < 3; i++) {
		q = i < 2 ? strstr(p, SEP) : p + strlen(p);
		if (q == NULL || q == p)
			return -EINVAL;
		f[i] = p;
		len[i] = (size_t)(q - p);
		p = q + (i < 2 ? strlen(SEP) : 0);
	}
	return strstr(f[2], SEP) != NULL ? -EINVAL : 0;
}

/* Decrypt the fields of inner with password into a new string. */
static int
decrypt_fields(const char *inner, const char *password, char **out)
{
	const char	*f[3];
	size_t		 len[3];
	uint8_t		 salt[SALT_MAX], iv[CRED_IV_LEN], key[CRED_KEY_LEN];
	uint8_t		*ct, *pt;
	int		 n, rc;

	if (split3(inner, f, len) != 0 || len[0] / 2 > SALT_MAX ||
	    len[1] != 2 * CRED_IV_LEN || len[2] % 32 != 0)
		return -EINVAL;
	if (hex_decode(f[0], len[0], salt) != 0 ||
	    hex_decode(f[1], len[1], iv) != 0)
		return -EINVAL;
	ct = xmalloc(len[2] / 2);
	pt = xmalloc(len[2] / 2 + 16);
	rc = hex_decode(f[2], len[2], ct);
	if (rc == 0)
		rc = cred_derive(password, salt, len[0] / 2, key);
	n = rc == 0 ? aes_cbc(false, key, iv, ct, len[2] / 2, pt) : rc;
	explicit_bzero(key, sizeof(key));
	free(ct);
	if (n >= 0 && memchr(pt, '\0', (size_t)n) != NULL)
		n = -EBADMSG;
	if (n >= 0) {
		*out = xmalloc((size_t)n + 1);
		memcpy(*out, pt, (size_t)n);
		(*out)[n] = '\0';
	}
	explicit_bzero(pt, len[2] / 2 + 16);
	free(pt);
	return n < 0 ? n : 0;
}

int
cred_decrypt(const char *text, const char *password, char **out)
{
	size_t	 n = strlen(text);
	char	*inner;
	int	 rc;

	*out = NULL;
	if (n == 0 || n % 2 != 0 || n / 2 > 2 * CIPHER_MAX)
		return -EINVAL;
	inner = xmalloc(n / 2 + 1);
	rc = hex_decode(text, n, (uint8_t *)inner);
	inner[n / 2] = '\0';
	if (rc == 0 && strlen(inner) != n / 2)
		rc = -EINVAL;		/* a NUL inside */
	if (rc == 0)
		rc = decrypt_fields(inner, password, out);
	free(inner);
	return rc;
}

/* --- where the values come from ---------------------------------------- */

/* Whether s is UTF-8 text without control characters. */
static bool
printable_utf8(const char *s)
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

/*
 * The contents of path (at most FILE_MAX bytes, one trailing newline
 * dropped) into *out, new.  0; -ENOENT when it does not exist; another
 * negative errno.  *mode gets its permission bits.
 */
static int
read_secret_file(const char *path, char **out, mode_t *mode)
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
		b.data[--b.len] = '\0';
	if (b.len > 0 && b.data[b.len - 1] == '\r')
		b.data[--b.len] = '\0';
	*out = xstrdup(b.data != NULL ? b.data : "");
	buf_wipe(&b);
	return 0;
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
		rc = read_secret_file(file, &v, &mode);
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
		cred_free(*items[i].value);
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
	if (rc == 0 && (plain[0] == '\0' || !printable_utf8(plain)))
		rc = -EBADMSG;	/* the wrong key can pass the padding check */
	if (rc == -EINVAL)
		return fail(err, errlen, "%s: the value is not a DIS Agent "
		    "encrypted value", where);
	if (rc != 0 && password != NULL) {
		cred_free(plain);
		return fail(err, errlen, "%s: cannot decrypt the value with "
		    "encrypt.key (a wrong key, or a damaged value)", where);
	}
	if (rc != 0) {
		cred_free(plain);
		return fail(err, errlen, "%s: cannot decrypt the value with the "
		    "DIS Agent's built-in key; set encrypt.key (or "
		    "DIS_ENCRYPT_KEY, or the credential encrypt.key)", where);
	}
	cred_free(*it->value);
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
		cred_free(*ek->value);
		*ek->value = xstrdup("");
	}
	return rc;
}

/* --- disagent encrypt --------------------------------------------------- */

static struct termios	 saved_tio;
static volatile sig_atomic_t saved_fd = -1;

/* A signal while echo is off: give the terminal back, then die of it. */
static void
on_tty_signal(int sig)
{
	if (saved_fd >= 0)
		(void)tcsetattr(saved_fd, TCSAFLUSH, &saved_tio);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void
echo_off(int fd)
{
	struct termios	 t;

	if (tcgetattr(fd, &saved_tio) != 0)
		return;
	t = saved_tio;
	t.c_lflag &= ~(tcflag_t)ECHO;
	t.c_lflag |= ECHONL;
	saved_fd = fd;
	signal(SIGINT, on_tty_signal);
	signal(SIGTERM, on_tty_signal);
	signal(SIGHUP, on_tty_signal);
	signal(SIGQUIT, on_tty_signal);
	if (tcsetattr(fd, TCSAFLUSH, &t) != 0)
		saved_fd = -1;
}

static void
echo_on(void)
{
	if (saved_fd >= 0)
		(void)tcsetattr(saved_fd, TCSANOW, &saved_tio);
	saved_fd = -1;
}

/*
 * Read from fd up to a newline (line) or the end, at most FILE_MAX bytes,
 * into b; one trailing newline is dropped.  0 or a negative errno.
 */
static int
read_fd(int fd, bool line, struct buf *b)
{
	char	 c;
	ssize_t	 r;

	for (;;) {
		r = read(fd, &c, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0 || (line && c == '\n'))
			break;
		if (b->len == FILE_MAX)
			return -EFBIG;
		buf_addc(b, c);
	}
	c = 0;
	if (b->len > 0 && b->data[b->len - 1] == '\n')
		b->data[--b->len] = '\0';
	if (b->len > 0 && b->data[b->len - 1] == '\r')
		b->data[--b->len] = '\0';
	return 0;
}

/* A line from the terminal fd without echo, after prompt. */
static int
prompt_secret(int fd, const char *prompt, struct buf *b)
{
	int	 rc;

	/* Echo off first: what is typed after the prompt never shows. */
	echo_off(fd);
	rc = write_all(fd, prompt, strlen(prompt)) != 0 ? -EIO :
	    read_fd(fd, true, b);
	echo_on();
	return rc;
}

/* The key: FILE, or typed twice at the terminal. */
static int
read_key(const char *key_file, struct buf *key)
{
	struct buf	 again;
	char		*v;
	mode_t		 mode;
	int		 fd, rc;

	if (key_file != NULL) {
		rc = read_secret_file(key_file, &v, &mode);
		if (rc != 0) {
			fprintf(stderr, "disagent encrypt: %s: %s\n", key_file,
			    strerror(-rc));
			return -1;
		}
		if (mode & (S_IRGRP | S_IROTH))
			fprintf(stderr, "disagent encrypt: warning: %s is "
			    "readable by group or others (mode %04o)\n",
			    key_file, (unsigned)mode);
		buf_addstr(key, v);
		cred_free(v);
		return 0;
	}
	fd = open("/dev/tty", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "disagent encrypt: no terminal to ask for the "
		    "key: use --key-file FILE\n");
		return -1;
	}
	buf_init(&again);
	rc = prompt_secret(fd, "encrypt.key: ", key);
	if (rc == 0)
		rc = prompt_secret(fd, "encrypt.key again: ", &again);
	close(fd);
	if (rc == 0 && (key->len != again.len ||
	    memcmp(key->data, again.data, key->len) != 0)) {
		fprintf(stderr, "disagent encrypt: the keys differ\n");
		rc = -1;
	}
	buf_wipe(&again);
	return rc == 0 ? 0 : -1;
}

/* The value: typed without echo on a terminal, or all of stdin. */
static int
read_value(struct buf *v)
{
	int	 rc;

	if (isatty(STDIN_FILENO))
		rc = prompt_secret(STDIN_FILENO, "value to encrypt: ", v);
	else
		rc = read_fd(STDIN_FILENO, false, v);
	if (rc != 0)
		fprintf(stderr, "disagent encrypt: reading the value: %s\n",
		    strerror(-rc));
	return rc;
}

static int
encrypt_usage(void)
{
	fprintf(stderr, "usage: disagent encrypt [--key-file FILE] < VALUE\n");
	return 2;
}

int
cred_encrypt_main(int argc, char **argv)
{
	struct buf	 key, value;
	const char	*key_file = NULL;
	char		*out = NULL;
	int		 rc = 1;

	if (argc == 3 && strcmp(argv[1], "--key-file") == 0)
		key_file = argv[2];
	else if (argc == 2 && strncmp(argv[1], "--key-file=", 11) == 0)
		key_file = argv[1] + 11;
	else if (argc != 1)
		return encrypt_usage();
	buf_init(&key);
	buf_init(&value);
	if (read_key(key_file, &key) != 0 || read_value(&value) != 0)
		goto out;
	if (key.len == 0 || memchr(key.data, '\0', key.len) != NULL) {
		fprintf(stderr, "disagent encrypt: the key is empty (the DIS "
		    "Agent's built-in key is public; choose your own)\n");
		goto out;
	}
	if (value.len == 0 || !printable_utf8(value.data)) {
		fprintf(stderr, "disagent encrypt: the value is empty or not "
		    "one line of text\n");
		goto out;
	}
	out = cred_encrypt(value.data, value.len, key.data);
	if (out == NULL) {
		fprintf(stderr, "disagent encrypt: libcrypto failed\n");
		goto out;
	}
	printf("%s\n", out);
	rc = fflush(stdout) == 0 ? 0 : 1;
out:
	free(out);
	buf_wipe(&key);
	buf_wipe(&value);
	return rc;
}
