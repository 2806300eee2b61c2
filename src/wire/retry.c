/*
 * Backoff and reply classification.  The table in retry_classify() is the
 * error table of spec/dis-api.md section 4; every row has a unit test.
 * Nothing here ever says "drop": every outcome is some kind of retry.
 */
#include "config.h"

#include <string.h>

#include "base/util.h"
#include "wire/retry.h"

uint64_t
retry_backoff_ms(unsigned attempt, uint64_t initial_ms, uint64_t max_ms,
    double u)
{
	uint64_t	 cap;

	cap = initial_ms;
	while (attempt-- > 0 && cap < max_ms)
		cap *= 2;
	if (cap > max_ms)
		cap = max_ms;
	if (u < 0)
		u = 0;
	if (u >= 1)
		u = 0.999999;
	return (uint64_t)((double)(cap + 1) * u);
}

static bool
code_is(const char *code, const char *want)
{
	return strcmp(code, want) == 0;
}

static enum retry_action
classify_400(const char *code)
{
	if (code_is(code, "DIS.4303") || code_is(code, "DIS.4305"))
		return RETRY_SLOW;
	if (code_is(code, "DIS.4309"))
		return RETRY_HARD;
	if (code_is(code, "DIS.4200") || code_is(code, "DIS.4300"))
		return RETRY_SPLIT;
	/* 4117 project, 4301 stream, 4205 not running, 4201/4302/4319 bad
	 * partition, and anything unknown: a configuration problem. */
	return RETRY_HALT;
}

enum retry_action
retry_classify(long status, const char *code)
{
	if (code == NULL)
		code = "";
	if (status == 0)
		return RETRY_REQUEST;
	if (status == 200)
		return RETRY_NONE;
	if (status == 400)
		return classify_400(code);
	if (status == 401 || status == 410)
		return RETRY_HALT;
	if (status == 403)
		return code[0] == '\0' ? RETRY_HARD : RETRY_HALT;
	if (status == 413)
		return RETRY_SPLIT;
	if (status == 429)
		return RETRY_SLOW;
	if (status == 441)
		return RETRY_HALT;
	if (status >= 500 && status <= 599)
		return RETRY_REQUEST;
	if (status == 408)
		return RETRY_REQUEST;
	return RETRY_HALT;
}

const char *
retry_action_name(enum retry_action a)
{
	switch (a) {
	case RETRY_NONE:
		return "none";
	case RETRY_REQUEST:
		return "retry";
	case RETRY_SLOW:
		return "throttled";
	case RETRY_HALT:
		return "halt";
	case RETRY_HARD:
		return "blacklisted";
	case RETRY_SPLIT:
		return "split";
	}
	return "?";
}

bool
retry_record_retriable(const char *code, const char *list)
{
	char	 tok[64];

	if (list == NULL)
		list = "DIS.4303,DIS.5";
	while (list_next(&list, tok, sizeof(tok)))
		if (strstr(code, tok) != NULL)
			return true;
	return false;
}

/* The 441s (DIS.4100-4112, dis-api.md section 4) by what they name. */
static const char *
auth_hint(const char *code)
{
	if (code_is(code, "DIS.4111"))
		return "check region: the request is signed for it, and the "
		    "endpoint serves another (the Invalid Region header)";
	if (code_is(code, "DIS.4103") || code_is(code, "DIS.4104") ||
	    code_is(code, "DIS.4105"))
		return "check the clock (X-Sdk-Date)";
	if (code_is(code, "DIS.4106") || code_is(code, "DIS.4107"))
		return "check ak: DIS does not know it (deleted, or expired "
		    "temporary keys?)";
	return "check ak/sk and the clock (X-Sdk-Date)";
}

const char *
retry_halt_hint(long status, const char *code)
{
	if (code == NULL)
		code = "";
	if (status == 441)
		return auth_hint(code);
	if (status == 401)
		return "check ak/sk and the clock (X-Sdk-Date)";
	if (status == 403 && code[0] == '\0')
		return "the gateway refuses this client (IP blacklisted?)";
	if (status == 403)
		return "check the IAM permissions of the credentials for DIS";
	if (strcmp(code, "DIS.4309") == 0)
		return "client IP blacklisted after too many failures; "
		    "backing off for 30 minutes";
	if (strcmp(code, "DIS.4117") == 0)
		return "check projectId";
	if (strcmp(code, "DIS.4301") == 0 || status == 410)
		return "check that DISStream exists in this region/project";
	if (status == 407)
		return "the proxy wants other credentials: check "
		    "PROXY_USERNAME and PROXY_PASSWORD (or https_proxy)";
	return "check the configuration";
}
