/*
 * Per-record snappy and encryption (reccodec.h): libsnappy's C API and
 * wire/pwcrypt, in the SDK's order.  Scratch space for the snappy block
 * is kept between records unless a large record grew it.
 *
 * libsnappy is loaded (dlopen) the first time data.compress.enabled needs
 * it, not linked: it is C++, and libstdc++ mapped into every agent costs
 * about 0.9 MiB of RSS (its symbol tables, faulted in at load) against a
 * 20 MiB target, for a codec few flows use.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <snappy-c.h>

#include "base/log.h"

#include "records/reccodec.h"
#include "wire/pwcrypt.h"

#define KEEP_BYTES	(64u * 1024)	/* scratch kept between records */

/* The functions of snappy-c.h we use, from the library once loaded. */
static struct {
	void		*handle;
	char		 why[256];	/* why it cannot be loaded */
	snappy_status	(*compress)(const char *, size_t, char *, size_t *);
	snappy_status	(*uncompress)(const char *, size_t, char *, size_t *);
	size_t		(*max_compressed_length)(size_t);
	snappy_status	(*uncompressed_length)(const char *, size_t,
			    size_t *);
} sn;

/* dlsym name into *fn; false when it is missing. */
static bool
bind_fn(const char *name, void *fn)
{
	void	*p = dlsym(sn.handle, name);

	if (p == NULL)
		return false;
	memcpy(fn, &p, sizeof(p));	/* object to function pointer */
	return true;
}

bool
reccodec_snappy_ok(char *why, size_t len)
{
	const char	*err;

	if (sn.handle == NULL && sn.why[0] == '\0') {
		sn.handle = dlopen(SNAPPY_SONAME, RTLD_NOW | RTLD_LOCAL);
		if (sn.handle == NULL) {
			err = dlerror();
			snprintf(sn.why, sizeof(sn.why), "%s", err != NULL ?
			    err : "cannot load " SNAPPY_SONAME);
		} else if (!bind_fn("snappy_compress", &sn.compress) ||
		    !bind_fn("snappy_uncompress", &sn.uncompress) ||
		    !bind_fn("snappy_max_compressed_length",
		    &sn.max_compressed_length) ||
		    !bind_fn("snappy_uncompressed_length",
		    &sn.uncompressed_length)) {
			snprintf(sn.why, sizeof(sn.why), "%s lacks the C API "
			    "(snappy-c.h)", SNAPPY_SONAME);
			dlclose(sn.handle);
			sn.handle = NULL;
		}
	}
	if (sn.handle == NULL && why != NULL)
		snprintf(why, len, "%s", sn.why);
	return sn.handle != NULL;
}

struct reccodec {
	bool		 compress;
	struct pwcrypt	*crypt;		/* NULL: no encryption */
	struct buf	 z;		/* the snappy block */
};

struct reccodec *
reccodec_new(const struct reccodec_opts *o)
{
	struct reccodec	*c;

	if (!o->compress && !o->encrypt)
		return NULL;
	if (o->compress && !reccodec_snappy_ok(NULL, 0))
		fatalx("data.compress.enabled: %s", sn.why);
	c = xcalloc(1, sizeof(*c));
	c->compress = o->compress;
	if (o->encrypt)
		c->crypt = pwcrypt_new(o->password, strlen(o->password));
	buf_init(&c->z);
	return c;
}

void
reccodec_free(struct reccodec *c)
{
	if (c == NULL)
		return;
	pwcrypt_free(c->crypt);
	buf_cleanup(&c->z);
	free(c);
}

/* The most bytes whose snappy block is sure to fit cap. */
static size_t
snappy_plain_max(size_t cap)
{
	size_t	 n;

	if (cap <= sn.max_compressed_length(0))
		return 0;
	n = (cap - 32) / 7 * 6;
	while (sn.max_compressed_length(n + 1) <= cap)
		n++;
	return n;
}

size_t
reccodec_plain_cap(const struct reccodec *c, size_t cap)
{
	if (c == NULL)
		return cap;
	if (c->crypt != NULL)
		cap = pwcrypt_plain_max(cap);
	if (c->compress)
		cap = snappy_plain_max(cap);
	return cap;
}

static void
trim(struct buf *b)
{
	if (b->cap > KEEP_BYTES)
		buf_cleanup(b);
}

/* The snappy block of data[n] into b (reset). */
static int
compress(const void *data, size_t n, struct buf *b)
{
	size_t	 len = sn.max_compressed_length(n);

	buf_reset(b);
	buf_reserve_exact(b, len);
	if (sn.compress(data, n, b->data, &len) != SNAPPY_OK)
		return -EIO;
	buf_setlen(b, len);
	return 0;
}

int
reccodec_encode(struct reccodec *c, const void *data, size_t n,
    struct buf *out)
{
	int	 rc = 0;

	trim(out);
	buf_reset(out);
	if (c == NULL) {
		buf_add(out, data, n);
		return 0;
	}
	if (c->compress && c->crypt == NULL)
		rc = compress(data, n, out);
	else if (c->compress) {
		/* Snappy first, then the encryption of its block. */
		trim(&c->z);
		rc = compress(data, n, &c->z);
		if (rc == 0)
			rc = pwcrypt_seal(c->crypt, c->z.data, c->z.len, out);
	} else
		rc = pwcrypt_seal(c->crypt, data, n, out);
	if (rc != 0)
		buf_reset(out);
	return rc;
}

/* Uncompress the snappy block data[n] into out (reset), at most max. */
static int
uncompress(const void *data, size_t n, size_t max, struct buf *out)
{
	size_t	 len;

	buf_reset(out);
	if (sn.uncompressed_length(data, n, &len) != SNAPPY_OK)
		return -EILSEQ;
	if (len > max)
		return -EFBIG;
	buf_reserve_exact(out, len);
	if (sn.uncompress(data, n, out->data, &len) != SNAPPY_OK) {
		buf_reset(out);
		return -EILSEQ;
	}
	buf_setlen(out, len);
	return 0;
}

int
reccodec_decode(struct reccodec *c, const void *data, size_t n, size_t max,
    struct buf *out)
{
	struct buf	*t;
	int		 rc = 0;

	trim(out);
	buf_reset(out);
	if (c == NULL) {
		if (n > max)
			return -EFBIG;
		buf_add(out, data, n);
		return 0;
	}
	if (c->crypt != NULL) {
		/* Decrypted into the scratch when snappy comes next. */
		t = c->compress ? &c->z : out;
		trim(t);
		buf_reset(t);
		rc = pwcrypt_open(c->crypt, data, n, t);
		if (rc == 0 && !c->compress && t->len > max)
			rc = -EFBIG;
		data = t->data;
		n = t->len;
	}
	if (rc == 0 && c->compress)
		rc = uncompress(data, n, max, out);
	if (rc != 0)
		buf_reset(out);
	return rc;
}

const char *
reccodec_strerror(int rc)
{
	switch (rc) {
	case 0:
		return "decoded";
	case -EINVAL:
		return "not an encrypted record (data.encrypt.enabled)";
	case -EBADMSG:
		return "does not decrypt (another data.password, or damaged)";
	case -EILSEQ:
		return "does not uncompress (not snappy: data.compress.enabled)";
	case -EFBIG:
		return "too large once uncompressed";
	default:
		return "cannot be decoded";
	}
}
