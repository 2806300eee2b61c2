/*
 * `disagent status -c FILE`: what the agent has delivered, read from the
 * files it leaves behind (the state file and, when configured, the metrics
 * file), so it works whether or not the agent is running and changes
 * nothing on disk.
 */
#ifndef DISAGENT_STATUS_H
#define DISAGENT_STATUS_H

#include <stdio.h>

/*
 * Load the configuration at conf_path (credentials are not needed), read
 * the state file read-only (falling back to its .bak like the agent) and
 * the last errors from metricsFile, and print to out, per flow in
 * configuration order: the stream, the number of files and the bytes
 * behind, the last error, then one row per tracked file with its committed
 * offset, current size, bytes behind and path (marked "(missing)",
 * "(replaced)" or "(truncated)" when the file at that path is gone, is
 * another file now, or is shorter than the offset; a whole file delivered
 * and waiting for its cleanup "(delivered; cleanup pending)", with a count
 * per flow).  Entries of flows no longer configured follow.  Returns the exit code: 0, or 1 after printing
 * why to stderr when the configuration or the state file cannot be read (a
 * state file that does not exist yet is not an error).
 */
int	status_main(const char *conf_path, FILE *out);

struct conf_flow;

/*
 * The lines of a journal flow (status_journal.c): where it is (cursor,
 * borrowed, the last entry delivered; NULL: none yet) and how many
 * entries of the journal are after it now, read from the journal.
 */
void	status_journal(FILE *out, const struct conf_flow *fc,
	    const char *cursor);

#endif
