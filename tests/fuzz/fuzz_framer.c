/*
 * libFuzzer target for the record framer (records/framer.h) on container
 * log files and with the stack-trace presets: the bytes a container runtime
 * or an application writes are not ours to trust.  The first three bytes
 * pick the options:
 * - byte 0: the container format (auto, cri, docker, or none: a plain
 *   file), the preset (none, java, python, go), the record form (json or
 *   message) and the streams sent (all, stdout, stderr);
 * - byte 1: the record cap, 64 to 16,384 bytes;
 * - byte 2: the read window (1 to 4,096 bytes, above the cap as the tailer
 *   guarantees) and how often the callback refuses a record.
 * The rest is the file, fed the way the tailer feeds it (check_framer's
 * drive()), then flushed.  Checks: every record fits the cap; its offsets
 * are inside what was fed, start <= end, ends never go back; a json record
 * of a container line that was not cut is one JSON value; the framer's
 * memory stays bounded by the cap; nothing leaks.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jackson.h"
#include "base/util.h"
#include "records/ctrlog.h"
#include "records/framer.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

struct col {
	struct framer	*fr;
	size_t		 max;
	uint64_t	 fed;		/* bytes offered so far */
	uint64_t	 last_end;
	unsigned	 refuse_every;	/* 0: never */
	unsigned	 calls;
	char		 copy[16384 + 1];
};

static void
broken(const char *why, uint64_t a, uint64_t b)
{
	fprintf(stderr, "fuzz_framer: %s (%llu, %llu)\n", why,
	    (unsigned long long)a, (unsigned long long)b);
	abort();
}

static int
collect(void *arg, const char *data, size_t len, uint64_t start, uint64_t end)
{
	struct col	*c = arg;
	char		 err[128];

	if (c->refuse_every != 0 && ++c->calls % c->refuse_every == 0)
		return 1;
	if (len > c->max)
		broken("record over the cap", len, c->max);
	if (start > end)
		broken("record starts after its end", start, end);
	if (end > c->fed)
		broken("record ends past the bytes fed", end, c->fed);
	if (end < c->last_end)
		broken("record ends before the one before", end, c->last_end);
	c->last_end = end;
	if (framer_container_json(c->fr) && !framer_record_raw(c->fr) &&
	    len < c->max) {
		memcpy(c->copy, data, len);
		c->copy[len] = '\0';
		if (!jackson_valid(c->copy, err, sizeof(err))) {
			fprintf(stderr, "fuzz_framer: json record is not JSON:"
			    " %s: %.*s\n", err, (int)len, data);
			abort();
		}
	}
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int	 fmts[] = { CTRLOG_AUTO, CTRLOG_CRI,
	    CTRLOG_DOCKER, CTRLOG_NONE };
	static const char	*presets[] = { NULL, "java", "python", "go" };
	static const unsigned	 masks[] = { 0, 1u << CTRLOG_STDOUT,
	    1u << CTRLOG_STDERR, CTRLOG_ALL };
	struct framer_opts	 o = { .delim = '\n' };
	struct framer		*fr = NULL;
	struct framer_state	 st;
	struct col		 c;
	const char		*text;
	size_t			 len, off = 0, win, used, n;
	int			 tries = 0;

	if (size < 3)
		return 0;
	o.container = fmts[data[0] & 3];
	o.preset = presets[(data[0] >> 2) & 3];
	o.ctr_record = (data[0] >> 4) & 1 ? CTRLOG_MESSAGE : CTRLOG_JSON;
	o.streams = masks[(data[0] >> 5) & 3];
	if (o.container == CTRLOG_NONE) {
		o.streams = 0;
		o.ctr_record = 0;
	}
	memset(&c, 0, sizeof(c));
	c.max = 64 + (size_t)data[1] * 64;
	win = c.max + 1 + (size_t)(data[2] & 0x3f) * 64;
	c.refuse_every = data[2] >> 6;		/* 0: never, 1..3 */
	if (c.refuse_every == 1)
		c.refuse_every = 7;
	text = (const char *)data + 3;
	len = size - 3;

	if (framer_new(&o, &fr, NULL, 0) != 0)
		broken("framer_new refused valid options", data[0], 0);
	c.fr = fr;
	framer_state_init(&st, fr, true);
	while (off < len) {
		n = MIN(win, len - off);
		if (c.fed < off + n)
			c.fed = off + n;
		used = framer_feed(fr, &st, text + off, n, off, c.max,
		    collect, &c);
		if (used > n)
			broken("framer consumed more than offered", used, n);
		if (framer_state_memory(&st) > 4 * c.max + 4096 ||
		    framer_memory(fr) > 4 * c.max + 4096)
			broken("framer memory past its bound",
			    framer_state_memory(&st), framer_memory(fr));
		off += used;
		if (used == 0) {
			if (++tries > 1000)
				break;	/* a partial last line, or refusals */
		} else
			tries = 0;
	}
	tries = 0;
	while (framer_flush(fr, &st, collect, &c) != 0 && ++tries < 100)
		;
	framer_state_cleanup(&st);
	framer_free(fr);
	return 0;
}
