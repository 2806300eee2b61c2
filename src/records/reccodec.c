/*
 * Per-record snappy and encryption (reccodec.h): libsnappy's C API and
 * wire/pwcrypt, in the SDK's order.  Scratch space for the snappy block
 * is kept between records unless a large record grew it.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <snappy-c.h>

#include "records/reccodec.h"
#include "wire/pwcrypt.h"

#define KEEP_BYTES	(64u * 1024)	/* scratch kept between records */

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

	if (cap <= snappy_max_compressed_length(0))
		return 0;
	n = (cap - 32) / 7 * 6;
	while (snappy_max_compressed_length(n + 1) <= cap)
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
	size_t	 len = snappy_max_compressed_length(n);

	buf_reset(b);
	buf_reserve_exact(b, len);
	if (snappy_compress(data, n, b->data, &len) != SNAPPY_OK)
		return -EIO;
	b->len = len;
	b->data[len] = '\0';
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
	if (snappy_uncompressed_length(data, n, &len) != SNAPPY_OK)
		return -EILSEQ;
	if (len > max)
		return -EFBIG;
	buf_reserve_exact(out, len);
	if (snappy_uncompress(data, n, out->data, &len) != SNAPPY_OK) {
		buf_reset(out);
		return -EILSEQ;
	}
	out->len = len;
	out->data[len] = '\0';
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
