/*
 * credentialSource = ecs-metadata: the temporary keys of the ECS server's
 * agency, from the metadata service (GET /openstack/latest/securitykey,
 * after PUT /meta-data/latest/api/token when the service offers session
 * tokens), renewed ahead of their expiry on the agent's loop through a
 * client of its own that never uses a proxy.  The keys are handed to a
 * callback and never logged or written anywhere.
 */
#ifndef DISAGENT_ECSMETA_H
#define DISAGENT_ECSMETA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "base/util.h"

struct ecsmeta;

/* A set of temporary keys; the strings are secrets. */
struct ecsmeta_keys {
	char		*ak;
	char		*sk;
	char		*token;		/* X-Security-Token */
	int64_t		 expires_at;	/* wall-clock seconds */
	uint64_t	 deadline;	/* mono_ms when they expire; 0: unknown
					   (the host clock is past expires_at) */
};

/*
 * keys: a new set (borrowed during the call); NULL when a fetch failed, why
 * saying so (the keys given before stay valid until their deadline).
 */
typedef void	(*ecsmeta_cb)(const struct ecsmeta_keys *keys,
		    const char *why, void *arg);

/* A provider for endpoint (copied), e.g. "http://169.254.169.254". */
struct ecsmeta	*ecsmeta_new(uv_loop_t *, const char *endpoint, ecsmeta_cb,
		    void *arg);
/* The first fetch, now. */
void		 ecsmeta_start(struct ecsmeta *);
/* Whether a fetch has finished (with keys or not) since the start. */
bool		 ecsmeta_answered(const struct ecsmeta *);
/* The current keys (borrowed until the next callback), or NULL. */
const struct ecsmeta_keys *ecsmeta_keys(const struct ecsmeta *);
const char	*ecsmeta_endpoint(const struct ecsmeta *);
/*
 * DIS refused the keys (401, 441): fetch again at once, once for each set
 * of keys (the service may have rotated them early).  Returns whether a
 * fetch is under way for it.
 */
bool		 ecsmeta_auth_failed(struct ecsmeta *);
/*
 * Stop: cancel the fetch in flight, close the handles; the memory goes
 * once they are closed.  No callback after this.  NULL is fine.
 */
void		 ecsmeta_close(struct ecsmeta *);

/*
 * The body of GET /openstack/latest/securitykey into *k (new strings;
 * deadline not set).  0, or -EINVAL when a field is missing or malformed.
 */
int		 ecsmeta_parse(const char *body, size_t len,
		    struct ecsmeta_keys *k) WARN_UNUSED;
/*
 * The body of PUT /meta-data/latest/api/token (len bytes, trailing blanks
 * ignored) into *out, a new secret string (secret_free it): 0, or -EINVAL
 * (*out NULL) when it is empty or not printable ASCII without blanks.
 */
int		 ecsmeta_parse_session(const char *body, size_t len,
		    char **out) WARN_UNUSED;
/* "2024-01-31T12:34:56.000000Z" (fraction optional) -> epoch seconds. */
int		 ecsmeta_parse_time(const char *s, int64_t *out) WARN_UNUSED;
/*
 * When to fetch again, in ms, for keys valid remaining_s more seconds:
 * halfway (the service renews them 10 minutes before expiry, so with
 * about an hour's keys the third fetch gets the new ones), at least 1 s
 * apart, at most 6 hours.
 */
uint64_t	 ecsmeta_refresh_ms(int64_t remaining_s);
/* Zero and free the strings of k. */
void		 ecsmeta_keys_clear(struct ecsmeta_keys *k);

#endif
