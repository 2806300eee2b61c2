/*
 * Failed requests told once, then once a minute, then at the end
 * (outage.h).
 */
#include "config.h"

#include <inttypes.h>
#include <string.h>

#include "base/log.h"
#include "sink/outage.h"

enum outage_say
outage_failed(struct outage *o, uint64_t now_ms, uint64_t *unsaid)
{
	o->failed++;
	*unsaid = ++o->unsaid;
	if (o->since_ms == 0) {
		/* 0 means none: a clock at 0 still starts one. */
		o->since_ms = now_ms > 0 ? now_ms : 1;
		o->last_said_ms = now_ms;
		o->unsaid = 0;
		return OUTAGE_FIRST;
	}
	if (now_ms - o->last_said_ms < OUTAGE_SUMMARY_MS)
		return OUTAGE_QUIET;
	o->last_said_ms = now_ms;
	o->unsaid = 0;
	return OUTAGE_SUMMARY;
}

uint64_t
outage_count(const struct outage *o)
{
	return o->failed;
}

uint64_t
outage_ms(const struct outage *o, uint64_t now_ms)
{
	if (o->since_ms == 0 || now_ms < o->since_ms)
		return 0;
	return now_ms - o->since_ms;
}

bool
outage_ended(struct outage *o, uint64_t now_ms, uint64_t *failed,
    uint64_t *ms)
{
	bool	 ended = o->since_ms != 0;

	*failed = o->failed;
	*ms = outage_ms(o, now_ms);
	memset(o, 0, sizeof(*o));
	return ended;
}

void
outage_tell_failed(struct outage *o, uint64_t now_ms, const char *what,
    const char *why, const char *then)
{
	uint64_t	 n;

	switch (outage_failed(o, now_ms, &n)) {
	case OUTAGE_FIRST:
		log_warn("%s failed: %s; %s", what, why, then);
		break;
	case OUTAGE_SUMMARY:
		log_warn("%s: %" PRIu64 " more request%s failed in the last "
		    "minute, %" PRIu64 " since the first %" PRIu64 " s ago; the "
		    "last: %s; still retrying", what, n, n == 1 ? "" : "s",
		    outage_count(o), outage_ms(o, now_ms) / 1000, why);
		break;
	default:
		log_debug("%s failed: %s; %s", what, why, then);
		break;
	}
}

void
outage_tell_ended(struct outage *o, uint64_t now_ms, const char *what)
{
	uint64_t	 failed, ms;

	if (outage_ended(o, now_ms, &failed, &ms))
		log_info("%s works again, after %" PRIu64 " failed request%s "
		    "over %" PRIu64 ".%01" PRIu64 " s", what, failed,
		    failed == 1 ? "" : "s", ms / 1000, ms % 1000 / 100);
}
