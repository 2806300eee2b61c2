/*
 * DescribeStream for one sink (sinkdesc.c), private to sink/: the stream's
 * type and its partitions' newest sequence numbers, before the sink sends
 * anything.  Retried with backoff after network and reply errors, every
 * second while the stream is CREATING, and every pausedRetrySeconds while
 * only the operator can fix it.  What it finds goes up through the
 * callbacks the sink registers; it never calls into the sink.
 */
#ifndef DISAGENT_SINKDESC_H
#define DISAGENT_SINKDESC_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

struct conf;
struct conf_flow;
struct disapi;
struct metrics_flow;
struct sinkdesc;

struct sinkdesc_cbs {
	/* The newest record of partition part is last (-1: it is empty);
	 * for each partition, just before ready. */
	void	(*seed)(int32_t part, int64_t last, void *arg);
	/* The stream is RUNNING, of type (DIS's, else the configured
	 * one). */
	void	(*ready)(const char *type, void *arg);
	/* Only the operator can fix it: status (0: not a reply), code and
	 * msg, as the sink reports a halt.  Described again later. */
	void	(*halt)(long status, const char *code, const char *msg,
		    void *arg);
	/* A DescribeStream ended (not cancelled). */
	void	(*ended)(void *arg);
	void	*arg;
};

/* api, conf, fc and m (the flow's counters) are borrowed and outlive it;
 * cbs is copied. */
struct sinkdesc	*sinkdesc_new(uv_loop_t *, struct disapi *, const struct conf *,
		    const struct conf_flow *, struct metrics_flow *m,
		    const struct sinkdesc_cbs *);
/* Describe the stream now (unless a DescribeStream is on the wire). */
void		 sinkdesc_start(struct sinkdesc *);
/* Whether a DescribeStream is on the wire. */
bool		 sinkdesc_busy(const struct sinkdesc *);
/* No more: the retry timer stops, a reply still to come is ignored. */
void		 sinkdesc_cancel(struct sinkdesc *);
/* Cancel and free it (in its timer's close callback); nothing of it may
 * be on the wire (NULL-safe). */
void		 sinkdesc_free(struct sinkdesc *);

#endif
