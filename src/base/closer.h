/*
 * Deferred freeing of an object that holds libuv handles or awaits
 * callbacks (requests in flight, a client closing): the object embeds a
 * struct closer, and its memory goes in the callback of the last of them,
 * never before (libuv's rule: a handle's memory is released only in its
 * close callback or after).  The shape of libuv's src/fs-poll.c, which
 * frees its context in the timer's close callback unless a stat is still
 * in flight, and then in the stat's callback.
 *
 * A closer counts what must still call back, plus one for the owner until
 * closer_release().  Typical use:
 *
 *	closer_init(&x->closer, x_freed);	in x_new
 *	closer_hold(&x->closer);		a request sent
 *	if (closer_drop(&x->closer)) return;	in its callback: x is gone
 *	closer_close(&x->closer, &x->timer);	in x_free, each handle
 *	closer_release(&x->closer);		then the owner lets go
 *
 * x_freed(c) is called once, when the count reaches 0, and frees
 * container_of(c, struct x, closer).  A handle whose memory is not x's
 * (one allocated per socket or per directory) has its own close callback
 * that frees it: closer_hold() before its uv_close(), closer_drop() at the
 * end of that callback.
 */
#ifndef DISAGENT_CLOSER_H
#define DISAGENT_CLOSER_H

#include <stdbool.h>

#include <uv.h>

/* Embedded; private: use the API. */
struct closer {
	unsigned	 pending;	/* callbacks owed, +1 until released */
	bool		 released;
	void		(*freed)(struct closer *);
};

/* Start counting: only the owner holds c. */
void	closer_init(struct closer *, void (*freed)(struct closer *));

/* One more callback owed (a request sent, a handle being closed). */
void	closer_hold(struct closer *);

/*
 * That callback came: true when it was the last one after
 * closer_release(), and the owner is freed (do not touch it again).
 */
bool	closer_drop(struct closer *);

/*
 * uv_close(h) with a close callback that drops c; h->data is taken for
 * c.  For handles embedded in the owner.
 */
void	closer_close(struct closer *, uv_handle_t *);

/*
 * The owner is done with it: freed now when nothing is owed, else in the
 * last callback.  Once only.
 */
void	closer_release(struct closer *);

/* Whether closer_release() was called (the owner is going away). */
bool	closer_released(const struct closer *);

#endif
