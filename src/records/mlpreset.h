/*
 * Multi-line presets (multiLinePreset = java | python | go): the rules that
 * keep a stack trace in the record of its first line, as small state
 * machines over PCRE2 patterns.  They follow the semantics of Fluent Bit's
 * built-in multiline parsers, whose test vectors they pass
 * (tests/unit/records/check_mlpreset.c); the patterns are ours.
 *
 * Pure: no I/O, no clock, no buffers.  The caller frames lines (without
 * their delimiter), keeps the record being built and its flush timer, and
 * owns one struct mlpreset_state per key whose lines must not mix (a file,
 * or a container's stream): for each line it asks mlpreset_line() what the
 * line does, acts on the answer, and only then stores the next state, so a
 * line whose action failed (a refused record) can be asked about again.
 *
 * A struct mlpreset is compiled once per flow and used from one thread:
 * matching writes into its compiled patterns' match data.
 */
#ifndef DISAGENT_MLPRESET_H
#define DISAGENT_MLPRESET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

struct mlpreset;

/* The names mlpreset_new() knows, for messages: "java, python, go". */
#define MLPRESET_NAMES	"java, python, go"

/*
 * Per-key state, owned by the caller (embed it; a few bytes).  Zero, or
 * mlpreset_state_init(), is "no record open".
 */
struct mlpreset_state {
	uint8_t		 at;		/* the machine's state; 0: idle */
};

/* What one line does to the record being built. */
enum mlpreset_verdict {
	MLPRESET_ALONE,	/* close the open record, if any; this line is a
			   record of its own */
	MLPRESET_START,	/* close the open record, if any; this line starts
			   a new one */
	MLPRESET_JOIN,	/* the line joins the open record */
	MLPRESET_LAST,	/* the line joins the open record, which is then
			   complete: close it right after this line */
};

/*
 * Compile the preset called name ("java", "python", "go"; case matters)
 * into *out (new; mlpreset_free() it).  0, or -EINVAL with a message in
 * err (errlen bytes, may be 0) naming the known presets.
 */
int	mlpreset_new(const char *name, struct mlpreset **out, char *err,
	    size_t errlen) WARN_UNUSED;
/* Free a preset (NULL is fine). */
void	mlpreset_free(struct mlpreset *);
/* Its name, as given to mlpreset_new(). */
const char *mlpreset_name(const struct mlpreset *);

/* No record open: the state after a flush by time, or of a new key. */
void	mlpreset_state_init(struct mlpreset_state *);
/* Whether, in this state, a record is open (the caller holds one). */
bool	mlpreset_state_open(const struct mlpreset_state *);

/*
 * What the line p[0..n) (without its delimiter; any bytes, not only valid
 * UTF-8) does, in state *cur; *next receives the state to store once the
 * caller has acted on the verdict (cur and next may be the same).  JOIN
 * and LAST are only returned when *cur is open; after ALONE and LAST,
 * *next is idle, after START and JOIN it is open.  A line that does not
 * continue the open record is never the start of a new one unless it
 * matches the preset's start rule as well (see docs/agent.ini.5.in).
 */
enum mlpreset_verdict mlpreset_line(const struct mlpreset *,
	    const struct mlpreset_state *cur, const char *p, size_t n,
	    struct mlpreset_state *next);

#endif
