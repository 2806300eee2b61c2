/*
 * What a flow's batches acknowledged, as bytes of their files: the
 * records done in a batch and those of the batches it absorbed, gathered
 * for the source (a save's spans, a batch handed back undelivered).
 */
#ifndef DISAGENT_ACKED_H
#define DISAGENT_ACKED_H

#include <stddef.h>

struct batch;
struct files_acked;

/* Owned by the caller: start { NULL, 0, 0 }, free(v) when done. */
struct acked_list {
	struct files_acked *v;
	size_t		 n;
	size_t		 cap;
};

/* Add what batch b (arg is a struct acked_list) acknowledged; a
 * sink_each() callback. */
void	acked_add_batch(const struct batch *b, void *arg);
/* Sort by file, then start. */
void	acked_sort(struct acked_list *);

#endif
