/*
 * The pure parts of the ECS metadata client (ecsmeta.h), apart from the
 * client so that they are tested and fuzzed without a loop or libcurl:
 * the securitykey reply, its expires_at, and when to fetch again.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "base/util.h"
#include "dis/ecsmeta.h"

#define RETRY_MIN_MS	1000
#define REFRESH_MAX_MS	(6ULL * 3600 * 1000)
#define SKEW_RETRY_MS	60000

void
ecsmeta_keys_clear(struct ecsmeta_keys *k)
{
	secret_free(k->ak);
	secret_free(k->sk);
	secret_free(k->token);
	memset(k, 0, sizeof(*k));
}

int
ecsmeta_parse_time(const char *s, int64_t *out)
{
	struct tm	 tm;
	int		 n = 0;

	memset(&tm, 0, sizeof(tm));
	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon,
	    &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6 ||
	    n != 19)
		return -EINVAL;
	s += n;
	if (*s == '.')
		for (s++; isdigit((unsigned char)*s); s++)
			continue;
	if (strcmp(s, "Z") != 0 || tm.tm_mon < 1 || tm.tm_mon > 12 ||
	    tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 ||
	    tm.tm_min > 59 || tm.tm_sec > 60)
		return -EINVAL;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	*out = (int64_t)timegm(&tm);
	return 0;
}

/* A header-safe value: printable ASCII, no blanks. */
static bool
token_ok(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s != '\0'; s++)
		if (!isgraph((unsigned char)*s))
			return false;
	return true;
}

int
ecsmeta_parse_session(const char *body, size_t len, char **out)
{
	size_t	 n = len;

	*out = NULL;
	while (n > 0 && isspace((unsigned char)body[n - 1]))
		n--;
	if (n == 0 || memchr(body, '\0', n) != NULL)
		return -EINVAL;
	*out = xstrndup(body, n);
	if (token_ok(*out))
		return 0;
	secret_free(*out);
	*out = NULL;
	return -EINVAL;
}

/* The string member name of o, copied; jansson's copy is wiped. */
static char *
take_string(json_t *o, const char *name)
{
	json_t	*v = json_object_get(o, name);
	char	*copy;

	if (!json_is_string(v))
		return NULL;
	copy = xstrdup(json_string_value(v));
	/* jansson frees without zeroing: wipe its copy of the secret. */
	explicit_bzero((char *)(uintptr_t)json_string_value(v),
	    json_string_length(v));
	return copy;
}

int
ecsmeta_parse(const char *body, size_t len, struct ecsmeta_keys *k)
{
	json_t		*root, *c;
	char		*when;
	int		 rc = -EINVAL;

	memset(k, 0, sizeof(*k));
	root = json_loadb(body, len, 0, NULL);
	c = json_is_object(root) ? json_object_get(root, "credential") : NULL;
	if (json_is_object(c)) {
		k->ak = take_string(c, "access");
		k->sk = take_string(c, "secret");
		k->token = take_string(c, "securitytoken");
		when = take_string(c, "expires_at");
		if (k->ak != NULL && k->sk != NULL && k->token != NULL &&
		    when != NULL && token_ok(k->ak) && token_ok(k->sk) &&
		    token_ok(k->token) &&
		    ecsmeta_parse_time(when, &k->expires_at) == 0)
			rc = 0;
		free(when);
	}
	json_decref(root);
	if (rc != 0)
		ecsmeta_keys_clear(k);
	return rc;
}

uint64_t
ecsmeta_refresh_ms(int64_t remaining_s)
{
	uint64_t	 ms;

	if (remaining_s <= 0)
		return SKEW_RETRY_MS;
	ms = (uint64_t)remaining_s * 500;
	if (ms < RETRY_MIN_MS)
		return RETRY_MIN_MS;
	return ms > REFRESH_MAX_MS ? REFRESH_MAX_MS : ms;
}
