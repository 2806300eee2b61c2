/*
 * Retry policy, as pure functions: full-jitter exponential backoff and the
 * classification of DIS replies (spec/dis-api.md section 4) into what the
 * sink does next.  No clock, no randomness of its own: callers pass both.
 */
#ifndef DISAGENT_RETRY_H
#define DISAGENT_RETRY_H

#include <stdbool.h>
#include <stdint.h>

/* What to do with a whole request after its reply or transport error. */
enum retry_action {
	RETRY_NONE,	/* 200 with a parsable body: look at each record */
	RETRY_REQUEST,	/* resend the whole request after backoff */
	RETRY_SLOW,	/* throttled request: backoff at least 1 s */
	RETRY_HALT,	/* credentials/permission/stream: pause, alert, probe */
	RETRY_HARD,	/* client IP blacklisted: back off for minutes */
	RETRY_SPLIT,	/* too large or invalid: halve the batch */
};

/*
 * Full-jitter backoff for the attempt-th retry (0 = first): a delay drawn
 * uniformly (u in [0, 1)) from [0, min(max_ms, initial_ms * 2^attempt)].
 */
uint64_t	retry_backoff_ms(unsigned attempt, uint64_t initial_ms,
		    uint64_t max_ms, double u);

/*
 * Classify a request-level outcome: status is the HTTP status (0 for a
 * transport error, which is always RETRY_REQUEST) and code the DIS error code
 * from the body ("" when none).
 */
enum retry_action retry_classify(long status, const char *code);

/*
 * What the operator should check after a request paused by status and code
 * (a static string: "check ak/sk and the clock (X-Sdk-Date)", ...).
 */
const char	*retry_halt_hint(long status, const char *code);

/* Human name of an action, for logs. */
const char	*retry_action_name(enum retry_action);

/*
 * Whether a per-record error code is retried: true when it contains one of
 * the comma-separated substrings of list (default "DIS.4303,DIS.5"), as the
 * DIS SDK matches them.
 */
bool		retry_record_retriable(const char *code, const char *list);

#endif
