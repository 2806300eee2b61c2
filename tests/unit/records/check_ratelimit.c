/*
 * Unit tests for the rate limit's token buckets (records/ratelimit.c),
 * with the time as an argument: no limit admits everything; a bucket
 * starts with a second's worth; a held flow waits for its debt plus 50 ms
 * (never less, so it cannot spin); a record larger than a second's worth
 * still goes and the next waits until it is paid for; over a long run the
 * rate stays at the limit, for bytes and for records.
 */
#include "config.h"

#include <check.h>
#include <stdint.h>

#include "records/ratelimit.h"
#include "testutil.h"

START_TEST(no_limit_admits_everything)
{
	struct ratelimit r;
	uint64_t	 wait = 0;
	int		 i;

	ratelimit_init(&r, 0, 0, 1000);
	ck_assert(!ratelimit_on(&r));
	for (i = 0; i < 100000; i++) {
		ck_assert(ratelimit_admit(&r, 1000, &wait));
		ratelimit_take(&r, 1 << 20);
	}
}
END_TEST

START_TEST(a_second_s_worth_then_a_wait_for_50_ms_more)
{
	struct ratelimit r;
	uint64_t	 wait = 0;
	int		 i;

	ratelimit_init(&r, 1000, 0, 5000);
	ck_assert(ratelimit_on(&r));
	for (i = 0; i < 10; i++) {
		ck_assert(ratelimit_admit(&r, 5000, &wait));
		ratelimit_take(&r, 100);
	}
	ck_assert(!ratelimit_admit(&r, 5000, &wait));
	ck_assert_uint_eq(wait, 51);
	/* 1 ms later 1 byte is earned: a record goes, and owes 99... */
	ck_assert(ratelimit_admit(&r, 5001, &wait));
	ratelimit_take(&r, 100);
	ck_assert(!ratelimit_admit(&r, 5001, &wait));
	ck_assert_uint_eq(wait, 150);			/* 99 owed + 50 */
	/* ... and after the wait there are 50 ms of tokens. */
	ck_assert(ratelimit_admit(&r, 5001 + 150, &wait));
}
END_TEST

START_TEST(held_flow_never_waits_less_than_50_ms)
{
	struct ratelimit r;
	uint64_t	 now = 0, wait;
	int		 i, waits = 0;

	/* Limits far above the records: each hold is the 50 ms refill. */
	ratelimit_init(&r, 0, 1000000, now);
	for (i = 0; i < 3000000; i++) {
		while (!ratelimit_admit(&r, now, &wait)) {
			ck_assert_uint_ge(wait, 50);
			now += wait;
			waits++;
		}
		ratelimit_take(&r, 10);
	}
	/* 3 s of records at 1,000,000/s, the first second's burst: about
	 * 2 s of holds, 50 ms each. */
	ck_assert_int_le(waits, 41);
	ck_assert_int_ge(waits, 39);
}
END_TEST

START_TEST(record_larger_than_the_limit_goes_and_is_paid_for)
{
	struct ratelimit r;
	uint64_t	 wait = 0;

	ratelimit_init(&r, 100, 0, 0);
	ck_assert(ratelimit_admit(&r, 0, &wait));
	ratelimit_take(&r, 1000);
	ck_assert(!ratelimit_admit(&r, 0, &wait));
	ck_assert_uint_eq(wait, 9051);		/* 900 owed, 5 more, at 100/s */
	ck_assert(!ratelimit_admit(&r, 9000, &wait));
	ck_assert(ratelimit_admit(&r, 9051, &wait));
}
END_TEST

/* Send records of len bytes as fast as r allows for ms; bytes and records
 * sent. */
static void
run(struct ratelimit *r, size_t len, uint64_t ms, uint64_t *bytes,
    uint64_t *recs)
{
	uint64_t	 now = 0, wait;

	*bytes = *recs = 0;
	while (now < ms) {
		if (!ratelimit_admit(r, now, &wait)) {
			now += wait;
			continue;
		}
		ratelimit_take(r, len);
		*bytes += len;
		(*recs)++;
	}
}

START_TEST(long_run_rate_is_the_limit)
{
	struct ratelimit r;
	uint64_t	 bytes, recs;

	/* 100 s at 20,000 B/s of 70-byte records: 2,000,000 bytes and the
	 * first second's burst, within a record. */
	ratelimit_init(&r, 20000, 0, 0);
	run(&r, 70, 100000, &bytes, &recs);
	ck_assert_uint_ge(bytes, 2000000);
	ck_assert_uint_le(bytes, 2020000 + 70);
	/* Records: 100 s at 400/s. */
	ratelimit_init(&r, 0, 400, 0);
	run(&r, 70, 100000, &bytes, &recs);
	ck_assert_uint_ge(recs, 40000);
	ck_assert_uint_le(recs, 40401);
	/* Both: the tighter one rules (10,000 B/s of 100 B is 100/s). */
	ratelimit_init(&r, 10000, 400, 0);
	run(&r, 100, 100000, &bytes, &recs);
	ck_assert_uint_ge(recs, 10000);
	ck_assert_uint_le(recs, 10101);
}
END_TEST

START_TEST(time_going_back_earns_nothing)
{
	struct ratelimit r;
	uint64_t	 wait;

	ratelimit_init(&r, 0, 1, 10000);
	ck_assert(ratelimit_admit(&r, 10000, &wait));
	ratelimit_take(&r, 1);
	ck_assert(!ratelimit_admit(&r, 5000, &wait));
	ck_assert(!ratelimit_admit(&r, 10000, &wait));
	ck_assert(ratelimit_admit(&r, 10000 + wait, &wait));
}
END_TEST

static Suite *
ratelimit_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("ratelimit");
	tc = tcase_create("core");
	tcase_add_test(tc, no_limit_admits_everything);
	tcase_add_test(tc, a_second_s_worth_then_a_wait_for_50_ms_more);
	tcase_add_test(tc, held_flow_never_waits_less_than_50_ms);
	tcase_add_test(tc, record_larger_than_the_limit_goes_and_is_paid_for);
	tcase_add_test(tc, long_run_rate_is_the_limit);
	tcase_add_test(tc, time_going_back_earns_nothing);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(ratelimit_suite());
}
