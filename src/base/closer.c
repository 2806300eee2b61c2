/*
 * Deferred freeing (closer.h): a count of the callbacks an object still
 * owes, and its free once the last one came after its owner let go.
 */
#include "config.h"

#include "base/closer.h"
#include "base/log.h"

void
closer_init(struct closer *c, void (*freed)(struct closer *))
{
	c->pending = 1;
	c->released = false;
	c->freed = freed;
}

void
closer_hold(struct closer *c)
{
	c->pending++;
}

bool
closer_drop(struct closer *c)
{
	if (c->pending == 0)
		fatalx("%s: nothing was held", __func__);
	if (--c->pending > 0)
		return false;
	c->freed(c);
	return true;
}

static void
on_closed(uv_handle_t *h)
{
	(void)closer_drop(h->data);
}

void
closer_close(struct closer *c, uv_handle_t *h)
{
	closer_hold(c);
	h->data = c;
	uv_close(h, on_closed);
}

void
closer_release(struct closer *c)
{
	if (c->released)
		fatalx("%s: released twice", __func__);
	c->released = true;
	(void)closer_drop(c);
}

bool
closer_released(const struct closer *c)
{
	return c->released;
}
