/*
 * libFuzzer target for the per-record codecs (records/reccodec.h) and the
 * EncryptUtils format under them (wire/pwcrypt.h): what `disagent read`
 * and `verify` do to every record a stream gives them.  The first byte
 * picks the codecs (bit 0 snappy, bit 1 encryption; both off: records as
 * they are) and, with bit 2, the mode:
 * - decode: the rest is a record's data as DIS gives it.  Checks: 0 with
 *   at most LIMIT bytes out, or one of the documented errors with nothing
 *   out; what decodes, encoded again, decodes to the same bytes.
 * - round trip: the rest is a record; encoded, it must decode to itself,
 *   and stay under a cap from the second byte when cut to plain_cap.
 * Nothing may crash, leak or read out of bounds.  The codecs live across
 * runs (as in `read`), so their key caches are exercised too.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "records/reccodec.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define LIMIT	(1024 * 1024)	/* bytes a record may decode to */

static struct reccodec	*codecs[4];
static struct buf	 out, wire, back;

static void
setup(void)
{
	static const char	*pw = "abc";	/* the vectors' password */
	int			 i;

	if (codecs[1] != NULL || codecs[2] != NULL)
		return;
	for (i = 1; i < 4; i++)
		codecs[i] = reccodec_new(&(struct reccodec_opts){ i & 1,
		    (i & 2) != 0, pw });
	buf_init(&out);
	buf_init(&wire);
	buf_init(&back);
}

static void
same(const struct buf *a, const void *p, size_t n)
{
	if (a->len != n || (n > 0 && memcmp(a->data, p, n) != 0))
		abort();
}

static void
decode(struct reccodec *c, const uint8_t *d, size_t n)
{
	int	 rc;

	rc = reccodec_decode(c, d, n, LIMIT, &out);
	if (rc != 0) {
		if ((rc != -EINVAL && rc != -EBADMSG && rc != -EILSEQ &&
		    rc != -EFBIG) || out.len != 0 || reccodec_strerror(rc) ==
		    NULL)
			abort();
		return;
	}
	if (out.len > LIMIT)
		abort();
	if (reccodec_encode(c, out.data, out.len, &wire) != 0 ||
	    reccodec_decode(c, wire.data, wire.len, LIMIT, &back) != 0)
		abort();
	same(&back, out.data, out.len);
}

static void
round_trip(struct reccodec *c, const uint8_t *d, size_t n, size_t cap)
{
	size_t	 plain = reccodec_plain_cap(c, cap);

	if (reccodec_encode(c, d, n, &wire) != 0 ||
	    reccodec_decode(c, wire.data, wire.len, LIMIT, &back) != 0)
		abort();
	same(&back, d, n);
	if (reccodec_encode(c, d, MIN(n, plain), &wire) != 0 ||
	    wire.len > cap)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct reccodec	*c;

	setup();
	if (size < 2)
		return 0;
	c = codecs[data[0] & 3];
	if (data[0] & 4)
		round_trip(c, data + 2, size - 2, 200 + 64u * data[1]);
	else
		decode(c, data + 1, size - 1);
	return 0;
}
