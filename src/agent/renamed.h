/*
 * A flow renamed in agent.ini ([flow:app] to [flow:web]) with the same
 * DISStream (or streamId) and filePattern is the same flow: it carries the
 * positions of its old name on instead of sending every file again.  The
 * state file says what each flow read (registry_describe_flow), so a
 * restart can tell; a reload pairs the removed and the added flow
 * (reload.c) and renames the entries when the successor takes over.
 * Renamed with another stream or pattern, the new flow starts from
 * initialPosition, as before, with a WARN naming both.
 */
#ifndef DISAGENT_RENAMED_H
#define DISAGENT_RENAMED_H

#include <stdbool.h>

struct conf;
struct conf_flow;
struct registry;

/* Whether fc reads what a flow of stream and pattern (as
 * renamed_describe writes them) read. */
bool	renamed_same(const struct conf_flow *fc, const char *stream,
	    const char *pattern);
/* Whether a and b, of two configurations, read the same files for the
 * same stream (a rename at a reload). */
bool	renamed_pair(const struct conf_flow *a, const struct conf_flow *b);

/*
 * At start, after the state file is loaded: a flow of c without entries
 * takes those of a flow of the state file that c no longer has and that
 * read the same stream and pattern (logged); then every flow of c is
 * described in reg.
 */
void	renamed_at_start(struct registry *reg, const struct conf *c);

/* The flows of c described in reg (a reload's). */
void	renamed_describe(struct registry *reg, const struct conf *c);

/* At a reload, before from's successor to starts: its entries moved. */
void	renamed_carry(struct registry *reg, const char *from,
	    const struct conf_flow *to);

#endif
