/*
 * DescribeStream (sinkdesc.h): the GET of streams/NAME/, its reply parsed
 * (codec) and judged (sinkreply_classify), the retries on one timer.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/closer.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/util.h"
#include "conf/conf.h"
#include "dis/disapi.h"
#include "dis/http.h"
#include "sink/outage.h"
#include "sink/sinkdesc.h"
#include "sink/sinkreply.h"
#include "wire/codec.h"
#include "wire/codec_read.h"
#include "wire/retry.h"

#define DESCRIBE_RETRY_MS	1000

struct sinkdesc {
	struct disapi	*api;
	const struct conf *conf;
	const struct conf_flow *fc;
	struct metrics_flow *m;
	struct sinkdesc_cbs cbs;
	char		*path;		/* "streams/NAME/" */
	bool		 describing;	/* a DescribeStream is in flight */
	bool		 halted;	/* it reported a halt (the sink is
					   paused) */
	bool		 cancelled;
	unsigned	 attempt;
	struct outage	 outage;	/* failures in a row (outage.h) */
	char		 what[320];	/* "DescribeStream [STREAM]" */
	uv_timer_t	 timer;
	struct closer	 closer;	/* freed once the timer is closed */
};

static void
freed(struct closer *c)
{
	struct sinkdesc	*d = container_of(c, struct sinkdesc, closer);

	free(d->path);
	free(d);
}

struct sinkdesc *
sinkdesc_new(uv_loop_t *loop, struct disapi *api, const struct conf *conf,
    const struct conf_flow *fc, struct metrics_flow *m,
    const struct sinkdesc_cbs *cbs)
{
	struct sinkdesc	*d;

	d = xcalloc(1, sizeof(*d));
	d->api = api;
	d->conf = conf;
	d->fc = fc;
	snprintf(d->what, sizeof(d->what), "DescribeStream [%s]", fc->stream);
	d->m = m;
	d->cbs = *cbs;
	d->path = xasprintf("streams/%s/", fc->stream);
	uv_timer_init(loop, &d->timer);
	closer_init(&d->closer, freed);
	return d;
}

bool
sinkdesc_busy(const struct sinkdesc *d)
{
	return d->describing;
}

static void	describe(struct sinkdesc *);

static void
on_timer(uv_timer_t *t)
{
	describe(container_of(t, struct sinkdesc, timer));
}

static void
again(struct sinkdesc *d, uint64_t delay)
{
	uv_timer_start(&d->timer, on_timer, delay, 0);
}

static uint64_t
backoff(struct sinkdesc *d)
{
	return retry_backoff_ms(d->attempt++, DESCRIBE_RETRY_MS, 30000,
	    rand_unit());
}

static uint64_t
paused_ms(const struct sinkdesc *d)
{
	return (uint64_t)d->conf->paused_retry_s * 1000;
}

/*
 * Each partition's newest record before anything of this run can land in
 * it (the sink waits for the stream to be described before it sends).
 */
static void
seed_partitions(struct sinkdesc *d, const struct http_response *r)
{
	struct codec_stream st;
	int32_t		 part;
	size_t		 i;

	memset(&st, 0, sizeof(st));
	if (codec_parse_stream(r->body, r->bodylen, &st) == 0)
		for (i = 0; i < st.nparts; i++) {
			part = codec_partition_index(st.parts[i].id,
			    strlen(st.parts[i].id));
			if (st.parts[i].seq_next >= 0)
				d->cbs.seed(part, st.parts[i].seq_next - 1,
				    d->cbs.arg);
		}
	codec_stream_cleanup(&st);
}

/* Only the operator can fix it: the sink pauses. */
static void
halt(struct sinkdesc *d, long status, const char *code, const char *msg)
{
	d->halted = true;
	d->cbs.halt(status, code, msg, d->cbs.arg);
}

static void
describe_replied(struct sinkdesc *d, const struct http_response *r)
{
	struct stream_info si;

	if (codec_parse_describe(r->body, r->bodylen, &si) != 0) {
		log_warn("DescribeStream [%s]: unparsable reply; retrying",
		    d->fc->stream);
		metrics_set_error(d->m, "REPLY",
		    "unparsable DescribeStream reply", wall_s());
		again(d, backoff(d));
		return;
	}
	if (strcmp(si.status, "CREATING") == 0) {
		log_info("DISStream %s is CREATING; waiting", d->fc->stream);
		again(d, DESCRIBE_RETRY_MS);
		return;
	}
	if (strcmp(si.status, "RUNNING") != 0 && si.status[0] != '\0') {
		halt(d, 200, "", si.status);
		again(d, paused_ms(d));
		return;
	}
	seed_partitions(d, r);
	outage_tell_ended(&d->outage, mono_ms(), d->what);
	if (d->halted)
		log_info("DISStream %s is available again", d->fc->stream);
	d->halted = false;
	log_info("DISStream %s type is %s", d->fc->stream,
	    si.type[0] ? si.type : d->fc->stream_type);
	d->cbs.ready(si.type[0] ? si.type : d->fc->stream_type, d->cbs.arg);
}

static void
describe_failed(struct sinkdesc *d, const struct http_response *r)
{
	char		 code[32] = "", msg[160] = "", why[256];
	enum retry_action a;

	if (r->result != HTTP_OK) {
		/* DNS, connect, TLS: the most common misconfiguration. */
		metrics_set_error(d->m, "NETWORK",
		    r->error ? r->error : "error", wall_s());
		outage_tell_failed(&d->outage, mono_ms(), d->what,
		    r->error ? r->error : "error", "retrying");
		again(d, backoff(d));
		return;
	}
	(void)codec_parse_error(r->body, r->bodylen, code, sizeof(code), msg,
	    sizeof(msg));
	a = sinkreply_classify(r->status, code, disapi_renewing(d->api));
	if (a == RETRY_HALT || a == RETRY_HARD) {
		halt(d, r->status, code, msg);
		again(d, a == RETRY_HARD ? SINKREPLY_HARD_MS : paused_ms(d));
		return;
	}
	metrics_set_error(d->m, code[0] ? code : "HTTP", msg, wall_s());
	snprintf(why, sizeof(why), "HTTP %ld %s %s", r->status, code, msg);
	outage_tell_failed(&d->outage, mono_ms(), d->what, why, "retrying");
	again(d, backoff(d));
}

static void
on_done(const struct http_response *r, void *arg)
{
	struct sinkdesc	*d = arg;

	d->describing = false;
	if (r->result == HTTP_ERR_CANCELLED || d->cancelled)
		return;
	metrics_count_request(d->m, r->result == HTTP_OK ? (int)r->status :
	    0);
	if (r->result == HTTP_OK && r->status == 200)
		describe_replied(d, r);
	else
		describe_failed(d, r);
	if (d->cbs.ended != NULL)
		d->cbs.ended(d->cbs.arg);
}

static void
describe(struct sinkdesc *d)
{
	struct disapi_call c;
	int		 rc;

	if (d->cancelled || d->describing)
		return;
	memset(&c, 0, sizeof(c));
	c.method = "GET";
	c.path = d->path;
	rc = disapi_send(d->api, &c, on_done, d);
	if (rc == -EKEYEXPIRED) {
		halt(d, 0, "CREDENTIALS", disapi_key_error(d->api));
		again(d, backoff(d));
		return;
	}
	if (rc != 0) {
		log_error("DescribeStream [%s]: %s", d->fc->stream,
		    strerror(-rc));
		metrics_set_error(d->m, "SEND", strerror(-rc), wall_s());
		again(d, paused_ms(d));
		return;
	}
	d->describing = true;
}

void
sinkdesc_start(struct sinkdesc *d)
{
	describe(d);
}

void
sinkdesc_cancel(struct sinkdesc *d)
{
	d->cancelled = true;
	uv_timer_stop(&d->timer);
}

void
sinkdesc_free(struct sinkdesc *d)
{
	if (d == NULL)
		return;
	sinkdesc_cancel(d);
	closer_close(&d->closer, (uv_handle_t *)&d->timer);
	closer_release(&d->closer);
}
