/*
 * How a run of failed requests is told (an outage of the endpoint, a
 * network cut, a string of 5xx): the first failure in full, then one
 * summary line a minute with the count, then one line when a request
 * succeeds again.  A WARN per failed request said the same thing ~50
 * times in 30 s and buried everything else.  The decisions are pure (the
 * caller passes the monotonic time; tests/unit/sink/check_sinkreply.c
 * runs them on a made-up clock); outage_tell_* write the lines with them.
 * struct outage is embedded in its owner (the sink, its DescribeStream)
 * and zeroed to start.
 */
#ifndef DISAGENT_OUTAGE_H
#define DISAGENT_OUTAGE_H

#include <stdbool.h>
#include <stdint.h>

#define OUTAGE_SUMMARY_MS	60000

/* private: use the API */
struct outage {
	uint64_t	 since_ms;	/* its first failure; 0: none going on */
	uint64_t	 last_said_ms;	/* the last line about it */
	uint64_t	 failed;	/* failed requests, all of it */
	uint64_t	 unsaid;	/* of those, since the last line */
};

enum outage_say {
	OUTAGE_FIRST,		/* the first failure: say it in full */
	OUTAGE_QUIET,		/* one more: debug level at most */
	OUTAGE_SUMMARY,		/* a minute since the last line: say the count */
};

/*
 * One more failed request at now_ms: what to say.  *unsaid is set to the
 * failed requests since the last line, this one included (the count an
 * OUTAGE_SUMMARY line gives).
 */
enum outage_say	 outage_failed(struct outage *, uint64_t now_ms,
		    uint64_t *unsaid);
/* Failed requests so far, and for how long (ms at now_ms); 0, 0: none. */
uint64_t	 outage_count(const struct outage *);
uint64_t	 outage_ms(const struct outage *, uint64_t now_ms);
/*
 * A request succeeded at now_ms: true when that ends an outage, whose
 * count of failed requests and length in ms go to *failed and *ms (for
 * the recovery line).  No outage goes on afterwards either way.
 */
bool		 outage_ended(struct outage *, uint64_t now_ms,
		    uint64_t *failed, uint64_t *ms);
/*
 * The lines.  what names the request ("PutRecords to [s1]"); why is what
 * happened ("HTTP 503 DIS.5000 System error."), then what is done about
 * it ("retrying in 400 ms").  The first failure is a WARN in full, one a
 * minute later a WARN with the count and the last why, the others DEBUG
 * lines; the end of an outage is an INFO line with its count and length.
 */
void		 outage_tell_failed(struct outage *, uint64_t now_ms,
		    const char *what, const char *why, const char *then);
void		 outage_tell_ended(struct outage *, uint64_t now_ms,
		    const char *what);

#endif
