/*
 * The composition root: builds the loop, the http client, the registry and
 * one flow per [flow:NAME]; wires their callbacks; runs until a signal (or,
 * with --once, until everything is delivered); shuts down in order.
 */
#ifndef DISAGENT_AGENT_H
#define DISAGENT_AGENT_H

#include <stdbool.h>

struct conf;

/*
 * Run the agent with conf (borrowed) until it stops.  Returns the process
 * exit code: 0 after a clean stop or a complete --once run, 1 when --once
 * could not deliver or start-up failed.
 */
int	agent_run(const struct conf *, bool once);

#endif
