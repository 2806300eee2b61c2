/*
 * libFuzzer target for the ECS metadata service's replies
 * (ecsmeta_parse.c): the input is a response body, parsed as the
 * securitykey reply and as the session token of PUT api/token, and, as a
 * NUL-terminated string, as an expires_at time.  Checked against
 * ecsmeta.h: keys on 0 have an access key, secret and security token of
 * printable ASCII without blanks; on -EINVAL nothing is handed out (the
 * same for the session token); the renewal
 * delay for any remaining time is within 1 s .. 6 h.  The seed corpus is
 * the replies of tests/ecs_metadata.py, the test metadata service.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "dis/ecsmeta.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define REFRESH_MAX_MS	(6ULL * 3600 * 1000)

static void
check_token(const char *s)
{
	if (s == NULL || *s == '\0')
		abort();
	for (; *s != '\0'; s++)
		if (!isgraph((unsigned char)*s))
			abort();
}

static void
check_refresh(int64_t remaining)
{
	uint64_t	 ms = ecsmeta_refresh_ms(remaining);

	if (ms < 1000 || ms > REFRESH_MAX_MS)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ecsmeta_keys	 k;
	char			*body, *text, *session = (char *)1;
	int64_t			 t;

	/* Exactly size bytes, as from the network: no NUL after them. */
	body = malloc(size ? size : 1);
	if (body == NULL)
		abort();
	memcpy(body, data, size);
	memset(&k, 0xa5, sizeof(k));
	if (ecsmeta_parse(body, size, &k) == 0) {
		check_token(k.ak);
		check_token(k.sk);
		check_token(k.token);
		check_refresh(k.expires_at - 1790000000);
		ecsmeta_keys_clear(&k);
	} else if (k.ak != NULL || k.sk != NULL || k.token != NULL)
		abort();
	if (ecsmeta_parse_session(body, size, &session) == 0) {
		check_token(session);
		secret_free(session);
	} else if (session != NULL)
		abort();
	text = xstrndup(body, size);
	if (ecsmeta_parse_time(text, &t) == 0)
		check_refresh(t);
	free(text);
	if (size >= sizeof(t)) {
		memcpy(&t, data, sizeof(t));
		check_refresh(t);
	}
	free(body);
	return 0;
}
