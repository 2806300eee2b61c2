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
 * Run the agent with *confp, read from path, until it stops.  SIGHUP reads
 * path again and, when valid, replaces *confp (the old one is freed); the
 * caller frees *confp after the call.  Returns the process exit code: 0
 * after a clean stop or a complete --once run, 1 when --once could not
 * deliver or start-up failed.
 */
int	agent_run(struct conf **confp, const char *path, bool once);

#endif
