/*
 * Token buckets (ratelimit.h).
 */
#include "config.h"

#include "records/ratelimit.h"

/* What a held flow waits for beyond its debt: 50 ms of tokens. */
#define REFILL_MS	50

void
ratelimit_init(struct ratelimit *r, uint64_t bytes_per_s,
    uint64_t records_per_s, uint64_t now_ms)
{
	int	 i;

	r->rate[RATE_BYTES] = (double)bytes_per_s;
	r->rate[RATE_RECORDS] = (double)records_per_s;
	for (i = 0; i < RATE_NBUCKETS; i++)
		r->tokens[i] = r->rate[i];
	r->last_ms = now_ms;
}

bool
ratelimit_on(const struct ratelimit *r)
{
	return r->rate[RATE_BYTES] > 0 || r->rate[RATE_RECORDS] > 0;
}

/* Tokens earned since the last count, up to a second's worth. */
static void
refill(struct ratelimit *r, uint64_t now_ms)
{
	double	 dt;
	int	 i;

	if (now_ms <= r->last_ms)
		return;
	dt = (double)(now_ms - r->last_ms) / 1000.0;
	r->last_ms = now_ms;
	for (i = 0; i < RATE_NBUCKETS; i++) {
		if (r->rate[i] <= 0)
			continue;
		r->tokens[i] += r->rate[i] * dt;
		if (r->tokens[i] > r->rate[i])
			r->tokens[i] = r->rate[i];
	}
}

bool
ratelimit_admit(struct ratelimit *r, uint64_t now_ms, uint64_t *wait_ms)
{
	double	 need;
	uint64_t ms, most = 0;
	int	 i;

	refill(r, now_ms);
	for (i = 0; i < RATE_NBUCKETS; i++) {
		if (r->rate[i] <= 0 || r->tokens[i] > 0)
			continue;
		/* The debt, and 50 ms worth on top, in whole milliseconds. */
		need = -r->tokens[i] + r->rate[i] * REFILL_MS / 1000.0;
		ms = (uint64_t)(need * 1000.0 / r->rate[i]) + 1;
		if (ms > most)
			most = ms;
	}
	if (most == 0)
		return true;
	*wait_ms = most;
	return false;
}

void
ratelimit_take(struct ratelimit *r, size_t len)
{
	if (r->rate[RATE_BYTES] > 0)
		r->tokens[RATE_BYTES] -= (double)len;
	if (r->rate[RATE_RECORDS] > 0)
		r->tokens[RATE_RECORDS] -= 1;
}
