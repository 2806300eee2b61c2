/*
 * libFuzzer target for the protobuf PutRecords reply (pbuf.c).  The input,
 * minus its first byte, is a PutRecordsResult body; the first byte picks n,
 * the number of records the request held (0..64).  Checked against pbuf.h:
 * pbuf_parse_put returns a failed count within 0..n, equal to the entries
 * with a non-empty code, or -EBADMSG; writes res[0..n-1] only (ASan sees
 * more) with NUL-terminated strings; and pbuf_put_entries agrees
 * with it: a reply parse_put takes for n holds n entries, and a reply that
 * holds k entries parses for k.  The seed corpus is the test endpoint's own
 * replies (tests/fuzz/make_corpus.py).
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/pbuf.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define MAX_N	64

static void
check_text(const char *s, size_t size)
{
	if (memchr(s, '\0', size) == NULL)
		abort();
}

static int
parse(const char *body, size_t len, size_t n)
{
	struct codec_result	*res;
	size_t			 i;
	int			 rc, failed = 0;

	res = malloc(n ? n * sizeof(*res) : 1);
	if (res == NULL)
		abort();
	memset(res, 0xa5, n * sizeof(*res));
	rc = pbuf_parse_put(body, len, res, n);
	if (rc != -EBADMSG && (rc < 0 || (size_t)rc > n))
		abort();
	if (rc >= 0) {
		for (i = 0; i < n; i++) {
			check_text(res[i].code, sizeof(res[i].code));
			check_text(res[i].message, sizeof(res[i].message));
			failed += res[i].code[0] != '\0';
		}
		if (failed != rc)
			abort();
	}
	free(res);
	return rc;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	*body;
	size_t	 n, len;
	int	 rc, k;

	if (size == 0)
		return 0;
	n = data[0] % (MAX_N + 1);
	len = size - 1;
	/* Exactly len bytes, as from the network: no NUL after them. */
	body = malloc(len ? len : 1);
	if (body == NULL)
		abort();
	memcpy(body, data + 1, len);
	rc = parse(body, len, n);
	k = pbuf_put_entries(body, len);
	if (k != -EBADMSG && k < 0)
		abort();
	if (rc >= 0 && k != (int)n)
		abort();
	if (k >= 0 && k <= 4096 && parse(body, len, (size_t)k) < 0)
		abort();
	free(body);
	return 0;
}
