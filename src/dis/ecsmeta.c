/*
 * The ECS metadata service client (credentialSource = ecs-metadata), as the
 * Huawei Cloud SDKs do it (huaweicloud-sdk-go-v3 MetadataAccessor): PUT
 * /meta-data/latest/api/token with X-Metadata-Token-Ttl-Seconds for a
 * session token (a 404 or 405 means the service has none: plain GETs),
 * then GET /openstack/latest/securitykey with X-Metadata-Token, which
 * answers {"credential":{"access","secret","securitytoken","expires_at"}}.
 * A 401 to the GET asks for a new session token, once.
 *
 * One fetch at a time, driven by one timer: halfway to expires_at after a
 * success (ecsmeta_refresh_ms), with backoff after a failure, at once when
 * DIS refuses the keys.  A failure changes nothing about the keys given
 * before: they stay valid until their deadline, which disapi enforces.
 * The reply's parser and the refresh schedule are ecsmeta_parse.c's.
 *
 * What the client has is one state, each entered in set_state():
 *
 *   START --a fetch failed--> NOKEYS --keys--> KEYS
 *   START --keys--> KEYS --DIS refused them--> REFUSED --other keys--> KEYS
 *   any --ecsmeta_close--> CLOSED
 *
 * REFUSED fetches again once; the same keys again stay REFUSED, so a
 * refusal does not become a loop of fetches.  The memory goes once the
 * timer and the HTTP client are closed (base/closer.h).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/closer.h"
#include "base/log.h"
#include "dis/ecsmeta.h"
#include "dis/http.h"
#include "wire/retry.h"

#define TOKEN_PATH	"/meta-data/latest/api/token"
#define KEYS_PATH	"/openstack/latest/securitykey"
#define TOKEN_TTL_S	"21600"		/* 6 h, as the SDKs ask */
#define NO_AGENCY	"Please configure Cloud Service Agency first"
#define CONNECT_MS	3000
#define TIMEOUT_MS	5000
#define REPLY_MAX	(64 * 1024)
#define RETRY_MIN_MS	1000
#define RETRY_MAX_MS	60000
#define WARN_EVERY_MS	60000

enum step {
	STEP_IDLE,
	STEP_TOKEN,	/* PUT for a session token in flight */
	STEP_KEYS,	/* GET of the keys in flight */
};

enum em_state {
	EM_START,	/* no fetch answered yet */
	EM_NOKEYS,	/* answered: no keys (every fetch failed) */
	EM_KEYS,	/* keys given */
	EM_REFUSED,	/* keys given, then refused by DIS: fetched again */
	EM_CLOSED,	/* ecsmeta_close: no request, no callback */
};

static const char *const em_state_names[] = {
	"start", "no keys", "keys", "refused", "closed",
};

struct ecsmeta {
	struct http	*http;		/* no proxy, short timeouts */
	char		*endpoint;	/* without a trailing '/' */
	uv_timer_t	 timer;
	ecsmeta_cb	 cb;
	void		*arg;
	enum em_state	 state;
	enum step	 step;
	char		*session;	/* X-Metadata-Token; a secret */
	bool		 no_session;	/* the service has no session tokens */
	bool		 session_retried;	/* in this fetch */
	struct ecsmeta_keys keys;	/* valid in KEYS and REFUSED */
	unsigned	 failures;	/* in a row */
	uint64_t	 last_warn_ms;
	struct closer	 closer;	/* the timer and http, until closed */
};

static void	fetch(struct ecsmeta *);
static void	get_keys(struct ecsmeta *);

/* --- the client ---------------------------------------------------------- */

/* The one place the state changes. */
static void
set_state(struct ecsmeta *em, enum em_state st)
{
	if (em->state == st)
		return;
	log_debug("ECS metadata %s: %s -> %s", em->endpoint,
	    em_state_names[em->state], em_state_names[st]);
	em->state = st;
}

static bool
have_keys(const struct ecsmeta *em)
{
	return em->state == EM_KEYS || em->state == EM_REFUSED;
}

static void
on_timer(uv_timer_t *t)
{
	struct ecsmeta	*em = container_of(t, struct ecsmeta, timer);

	em->session_retried = false;
	fetch(em);
}

static void
freed(struct closer *c)
{
	struct ecsmeta	*em = container_of(c, struct ecsmeta, closer);

	free(em->endpoint);
	free(em);
}

static void
on_http_closed(void *arg)
{
	struct ecsmeta	*em = arg;

	(void)closer_drop(&em->closer);
}

struct ecsmeta *
ecsmeta_new(uv_loop_t *loop, const char *endpoint, ecsmeta_cb cb, void *arg)
{
	struct ecsmeta	*em;
	struct http_opts ho;
	size_t		 n = strlen(endpoint);

	while (n > 0 && endpoint[n - 1] == '/')
		n--;
	memset(&ho, 0, sizeof(ho));
	ho.ssl_verify = true;
	ho.proxy = "";		/* 169.254.169.254 is never behind a proxy */
	em = xcalloc(1, sizeof(*em));
	em->endpoint = xstrndup(endpoint, n);
	em->cb = cb;
	em->arg = arg;
	em->http = http_new(loop, &ho);
	if (em->http == NULL)
		fatalx("cannot set up the HTTP client for the ECS metadata "
		    "service");
	uv_timer_init(loop, &em->timer);
	closer_init(&em->closer, freed);
	return em;
}

void
ecsmeta_start(struct ecsmeta *em)
{
	em->session_retried = false;
	fetch(em);
}

bool
ecsmeta_answered(const struct ecsmeta *em)
{
	return em->state != EM_START;
}

const struct ecsmeta_keys *
ecsmeta_keys(const struct ecsmeta *em)
{
	return have_keys(em) ? &em->keys : NULL;
}

const char *
ecsmeta_endpoint(const struct ecsmeta *em)
{
	return em->endpoint;
}

void
ecsmeta_close(struct ecsmeta *em)
{
	if (em == NULL || em->state == EM_CLOSED)
		return;
	set_state(em, EM_CLOSED);
	uv_timer_stop(&em->timer);
	closer_close(&em->closer, (uv_handle_t *)&em->timer);
	ecsmeta_keys_clear(&em->keys);
	secret_free(em->session);
	em->session = NULL;
	closer_hold(&em->closer);
	http_close(em->http, on_http_closed, em);
	closer_release(&em->closer);
}

static void
fmt_time(int64_t t, char *out, size_t len)
{
	time_t		 tt = (time_t)t;
	struct tm	 tm;

	gmtime_r(&tt, &tm);
	strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The fetch failed: keep the keys, tell the owner, try again later. */
static void
failed(struct ecsmeta *em, const char *what)
{
	char		 why[512], until[32];
	uint64_t	 delay, now = mono_ms();

	em->step = STEP_IDLE;
	if (em->state == EM_START)
		set_state(em, EM_NOKEYS);
	delay = RETRY_MIN_MS + retry_backoff_ms(em->failures++, RETRY_MIN_MS,
	    RETRY_MAX_MS, rand_unit());
	snprintf(why, sizeof(why), "no temporary keys from the ECS metadata "
	    "service %s: %s", em->endpoint, what);
	if (em->last_warn_ms == 0 || now - em->last_warn_ms >= WARN_EVERY_MS) {
		if (have_keys(em))
			fmt_time(em->keys.expires_at, until, sizeof(until));
		log_warn("%s; %s%s; trying again in %" PRIu64 " ms", why,
		    have_keys(em) ? "the current keys stay in use until " :
		    "delivery waits for keys", have_keys(em) ? until : "",
		    delay);
		em->last_warn_ms = now;
	}
	uv_timer_start(&em->timer, on_timer, delay, 0);
	em->cb(NULL, why, em->arg);
}

static bool
same_keys(const struct ecsmeta_keys *a, const struct ecsmeta_keys *b)
{
	return a->ak != NULL && b->ak != NULL && strcmp(a->ak, b->ak) == 0 &&
	    strcmp(a->sk, b->sk) == 0 && strcmp(a->token, b->token) == 0;
}

/* New keys k (stolen): keep them, tell the owner, schedule the renewal. */
static void
succeeded(struct ecsmeta *em, struct ecsmeta_keys *k)
{
	int64_t		 remaining = k->expires_at - wall_s();
	uint64_t	 next = ecsmeta_refresh_ms(remaining);
	char		 until[32];
	bool		 same = have_keys(em) && same_keys(&em->keys, k);

	em->step = STEP_IDLE;
	k->deadline = remaining > 0 ? mono_ms() + (uint64_t)remaining * 1000 :
	    0;
	fmt_time(k->expires_at, until, sizeof(until));
	if (remaining <= 0)
		log_warn("the ECS metadata service gave keys that expired at "
		    "%s by this host's clock: check the clock", until);
	else if (!same || em->failures > 0)
		log_info("temporary keys from the ECS metadata service %s, "
		    "valid until %s; renewing in %" PRIu64 " s", em->endpoint,
		    until, next / 1000);
	/* The same keys again: their refusal is already handled. */
	set_state(em, same && em->state == EM_REFUSED ? EM_REFUSED : EM_KEYS);
	ecsmeta_keys_clear(&em->keys);
	em->keys = *k;
	memset(k, 0, sizeof(*k));
	em->failures = 0;
	em->last_warn_ms = 0;
	uv_timer_start(&em->timer, on_timer, next, 0);
	em->cb(&em->keys, NULL, em->arg);
}

static void
http_failure(const struct http_response *r, const char *op, char *out,
    size_t len)
{
	char	 body[101];
	size_t	 i, n;

	if (r->result != HTTP_OK) {
		snprintf(out, len, "%s: %s", op, r->error ? r->error : "error");
		return;
	}
	n = MIN(r->bodylen, sizeof(body) - 1);
	for (i = 0; i < n; i++)
		body[i] = isprint((unsigned char)r->body[i]) ? r->body[i] : ' ';
	body[n] = '\0';
	snprintf(out, len, "%s: HTTP %ld%s%s", op, r->status, n ? " " : "",
	    body);
}

static int
submit(struct ecsmeta *em, const char *method, const char *path,
    const char *header, http_done_cb cb)
{
	struct http_request req;
	char		*url;
	int		 rc;

	url = xasprintf("%s%s", em->endpoint, path);
	memset(&req, 0, sizeof(req));
	req.method = method;
	req.url = url;
	req.headers = header != NULL ? &header : NULL;
	req.nheaders = header != NULL ? 1 : 0;
	req.connect_timeout_ms = CONNECT_MS;
	req.timeout_ms = TIMEOUT_MS;
	req.max_response = REPLY_MAX;
	req.wipe_response = true;
	rc = http_submit(em->http, &req, cb, em);
	free(url);
	return rc;
}

static void
on_keys(const struct http_response *r, void *arg)
{
	struct ecsmeta		*em = arg;
	struct ecsmeta_keys	 k;
	char			 why[256];
	bool			 agency;

	em->step = STEP_IDLE;
	if (em->state == EM_CLOSED || r->result == HTTP_ERR_CANCELLED)
		return;
	if (r->result == HTTP_OK && r->status == 200) {
		if (ecsmeta_parse(r->body, r->bodylen, &k) == 0)
			succeeded(em, &k);
		else
			failed(em, "GET " KEYS_PATH ": not the expected JSON");
		return;
	}
	agency = r->result == HTTP_OK && memmem(r->body, r->bodylen,
	    NO_AGENCY, strlen(NO_AGENCY)) != NULL;
	if (r->result == HTTP_OK && r->status == 401 && !agency &&
	    !em->session_retried) {
		/* The session token expired, or the service now wants one. */
		em->session_retried = true;
		secret_free(em->session);
		em->session = NULL;
		em->no_session = false;
		fetch(em);
		return;
	}
	http_failure(r, "GET " KEYS_PATH, why, sizeof(why));
	if (agency)
		snprintf(why, sizeof(why), "the server has no agency: %s",
		    NO_AGENCY);
	failed(em, why);
}

static void
on_token(const struct http_response *r, void *arg)
{
	struct ecsmeta	*em = arg;
	char		 why[256];

	em->step = STEP_IDLE;
	if (em->state == EM_CLOSED || r->result == HTTP_ERR_CANCELLED)
		return;
	if (r->result == HTTP_OK && (r->status == 404 || r->status == 405)) {
		em->no_session = true;
		get_keys(em);
		return;
	}
	if (r->result != HTTP_OK || r->status != 200 || r->bodylen == 0) {
		http_failure(r, "PUT " TOKEN_PATH, why, sizeof(why));
		failed(em, why);
		return;
	}
	if (ecsmeta_parse_session(r->body, r->bodylen, &em->session) != 0) {
		failed(em, "PUT " TOKEN_PATH ": not a token");
		return;
	}
	get_keys(em);
}

static void
get_keys(struct ecsmeta *em)
{
	char	*h = NULL;
	int	 rc;

	if (em->session != NULL)
		h = xasprintf("X-Metadata-Token: %s", em->session);
	em->step = STEP_KEYS;
	rc = submit(em, "GET", KEYS_PATH, h, on_keys);
	secret_free(h);
	if (rc != 0)
		failed(em, uv_strerror(rc));
}

static void
fetch(struct ecsmeta *em)
{
	int	 rc;

	if (em->state == EM_CLOSED || em->step != STEP_IDLE)
		return;
	uv_timer_stop(&em->timer);
	if (em->session != NULL || em->no_session) {
		get_keys(em);
		return;
	}
	em->step = STEP_TOKEN;
	rc = submit(em, "PUT", TOKEN_PATH,
	    "X-Metadata-Token-Ttl-Seconds: " TOKEN_TTL_S, on_token);
	if (rc != 0)
		failed(em, uv_strerror(rc));
}

bool
ecsmeta_auth_failed(struct ecsmeta *em)
{
	if (!have_keys(em))
		return false;
	if (em->state == EM_REFUSED)
		return em->step != STEP_IDLE;	/* still fetching for it */
	set_state(em, EM_REFUSED);
	log_info("DIS refused the temporary keys: fetching new ones from the "
	    "ECS metadata service now");
	em->session_retried = false;
	fetch(em);
	return em->step != STEP_IDLE;
}
