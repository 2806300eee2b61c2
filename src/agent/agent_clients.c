/*
 * The agent's clients (agent_int.h): the HTTP client and the DIS client
 * on it, built from the current conf; the temporary keys of
 * credentialSource = ecs-metadata, from the metadata client this keeps,
 * replaces or stops as the conf says; and the HTTP clients a reload
 * replaced, closed once their last request ended.
 */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include "agent/agent_int.h"
#include "base/log.h"
#include "conf/conf.h"
#include "dis/disapi.h"
#include "dis/ecsmeta.h"
#include "dis/http.h"

/* --- temporary keys (credentialSource = ecs-metadata) ------------------- */

static void
use_keys(struct agent *a, const struct ecsmeta_keys *k)
{
	disapi_set_keys(a->api, k->ak, k->sk, k->token);
	disapi_set_expiry(a->api, k->deadline);
	disapi_set_key_error(a->api, NULL);
}

/* New keys from the metadata service, or why there are none. */
static void
on_meta_keys(const struct ecsmeta_keys *k, const char *why, void *arg)
{
	struct agent	*a = arg;

	if (a->api == NULL)
		return;		/* between clients during a reload */
	if (k != NULL)
		use_keys(a, k);
	else
		disapi_set_key_error(a->api, why);
}

static bool
on_auth_failure(void *arg)
{
	struct agent	*a = arg;

	return a->meta != NULL && ecsmeta_auth_failed(a->meta);
}

/* Start, keep or stop the metadata client for the current conf. */
void
agent_attach_keys(struct agent *a)
{
	const struct conf *c = a->conf;
	bool		 ecs = strcmp(c->credential_source, "ecs-metadata") == 0;

	if (a->meta != NULL && (!ecs ||
	    strcmp(ecsmeta_endpoint(a->meta), c->ecs_endpoint) != 0)) {
		ecsmeta_close(a->meta);
		a->meta = NULL;
	}
	if (!ecs)
		return;
	if (a->meta == NULL) {
		a->meta = ecsmeta_new(&a->loop, c->ecs_endpoint, on_meta_keys,
		    a);
		ecsmeta_start(a->meta);
	} else if (ecsmeta_keys(a->meta) != NULL)
		use_keys(a, ecsmeta_keys(a->meta));
	disapi_on_auth_failure(a->api, on_auth_failure, a);
}

/* The HTTP client and the DIS client on it, from the current conf.  Each
 * TLS connection costs ~150 KiB; DIS accepts only so much per partition
 * anyway.  Requests beyond MAX_CONNECTIONS wait in curl's queue. */
void
agent_open_client(struct agent *a)
{
	a->api = disapi_open(&a->loop, a->conf, MAX_CONNECTIONS, &a->http);
	agent_attach_keys(a);
}

/* --- the clients a reload replaced -------------------------------------- */

static void
on_old_http_closed(void *arg)
{
	(void)arg;
}

/* A client a reload replaced goes once its last request ended. */
void
agent_close_idle_clients(struct agent *a)
{
	size_t	 i, kept = 0;

	for (i = 0; i < a->nold_http; i++) {
		if (http_inflight(a->old_http[i]) > 0) {
			a->old_http[kept++] = a->old_http[i];
			continue;
		}
		log_debug("reload: the replaced HTTP client has no request "
		    "left; closing it");
		http_close(a->old_http[i], on_old_http_closed, a);
	}
	a->nold_http = kept;
}
