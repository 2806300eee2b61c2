/*
 * The multi-line presets (see mlpreset.h): each is a table of rules, a rule
 * being "in these states, a line matching this pattern joins the record
 * and moves to that state".  State 0 is idle: the rules that apply in it
 * start a record.  In an open state, the rules that apply in it are tried
 * in table order and the first that matches continues the record; when
 * none does, the start rules are tried, and a line that matches none of
 * them either is a record of its own and closes the trace before it.  A
 * rule whose target state is one where only start rules apply (or idle)
 * ends its record: nothing can continue it.
 *
 * The lines are matched as bytes, without their delimiter; the patterns
 * are ASCII and say "$" where Fluent Bit's, which see the line with its
 * newline, say "[\r\n]".
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/re.h"
#include "records/mlpreset.h"

#define IDLE		0
#define BIT(s)		(1u << (s))
#define MAX_RULES	10

/* One row of a preset's table. */
struct rule_def {
	unsigned	 from;		/* BIT() of each state it applies in */
	const char	*pattern;
	uint8_t		 to;
};

struct preset_def {
	const char		*name;
	struct rule_def		 rules[MAX_RULES];	/* ends at pattern NULL */
};

/*
 * Java (and what prints like it: Kotlin, Scala, C#'s exceptions, V8's):
 * a line naming an exception or error followed by ':' or the end of the
 * line starts; then frames ("at ..."), "Caused by:" and "Suppressed:"
 * sections, "... N more" and blank lines right after a message.  "nested
 * exception is:" (Spring) ends the record: the nested exception's own line
 * starts the next one.
 */
enum { J_EXC = 1, J_FRAMES, J_NESTED };
static const struct preset_def java = { "java", {
	{ BIT(IDLE) | BIT(J_NESTED),
	    "(?<=.)(?:Exception|Error|Throwable|V8 errors stack trace)"
	    "(?::|\\r?$)",
	    J_EXC },
	{ BIT(J_EXC), "^[\\t ]*nested exception is:", J_NESTED },
	{ BIT(J_EXC), "^\\r?$", J_EXC },
	{ BIT(J_EXC) | BIT(J_FRAMES), "^[\\t ]+(?:eval )?at ", J_FRAMES },
	{ BIT(J_EXC) | BIT(J_FRAMES),
	    "^[\\t ]+--- End of inner exception stack trace ---\\r?$",
	    J_FRAMES },
	{ BIT(J_EXC) | BIT(J_FRAMES), "^--- End of stack trace from previous "
	    "location where exception was thrown ---\\r?$", J_FRAMES },
	{ BIT(J_EXC) | BIT(J_FRAMES), "^[\\t ]*(?:Caused by|Suppressed):",
	    J_EXC },
	{ BIT(J_EXC) | BIT(J_FRAMES),
	    "^[\\t ]*\\.\\.\\. \\d+ (?:more|common frames omitted)", J_FRAMES },
	{ 0, NULL, 0 },
} };

/*
 * Python: "Traceback (most recent call last):" starts; then pairs of an
 * indented "File ..." line and the source line under it (any line with a
 * non-blank character), until the exception's line, "Name: message" or
 * "package.Name: message", which ends the record.
 */
enum { P_FRAMES = 1, P_CODE };
static const struct preset_def python = { "python", {
	{ BIT(IDLE), "^Traceback \\(most recent call last\\):\\r?$", P_FRAMES },
	{ BIT(P_FRAMES), "^[\\t ]+File ", P_CODE },
	{ BIT(P_CODE), "[^\\t ]", P_FRAMES },
	{ BIT(P_FRAMES), "^(?:[^\\s.():]+\\.)*[^\\s.():]+:", IDLE },
	{ 0, NULL, 0 },
} };

/*
 * Go: "panic: " (or net/http's "http: panic serving") starts; then an
 * optional "[signal ...]" line, a blank line, and goroutines: a
 * "goroutine N [state]:" line and pairs of a call ("pkg.func(...)" or
 * "created by ...") and its indented "file:line" line, goroutines being
 * separated by blank lines.
 */
enum { G_PANIC = 1, G_SIGNAL, G_GOROUTINE, G_CALL, G_FILE };
static const struct preset_def go = { "go", {
	{ BIT(IDLE), "(?<!\\w)panic: ", G_PANIC },
	{ BIT(IDLE), "http: panic serving", G_GOROUTINE },
	{ BIT(G_PANIC) | BIT(G_SIGNAL) | BIT(G_CALL), "^\\r?$", G_GOROUTINE },
	{ BIT(G_PANIC), "^\\[signal ", G_SIGNAL },
	{ BIT(G_GOROUTINE), "^goroutine \\d+ \\[[^\\]]+\\]:\\r?$", G_CALL },
	{ BIT(G_CALL), "^(?:[^\\s.:]+\\.)*[^\\s.():]+\\(|^created by ",
	    G_FILE },
	{ BIT(G_FILE), "^\\s", G_CALL },
	{ 0, NULL, 0 },
} };

static const struct preset_def *const presets[] = { &java, &python, &go };

struct mlpreset {
	const struct preset_def	*def;
	size_t			 nrules;
	struct re		*re[MAX_RULES];
	bool			 ends[MAX_RULES];	/* closes its record */
};

/* Can only a start rule follow state s?  Then a rule leading there ends. */
static bool
ends_in(const struct preset_def *d, uint8_t s)
{
	const struct rule_def	*r;

	if (s == IDLE)
		return true;
	for (r = d->rules; r->pattern != NULL; r++)
		if ((r->from & BIT(s)) && !(r->from & BIT(IDLE)))
			return false;
	return true;
}

int
mlpreset_new(const char *name, struct mlpreset **out, char *err,
    size_t errlen)
{
	const struct preset_def	*d = NULL;
	struct mlpreset		*mp;
	struct re_error		 e;
	size_t			 i;

	*out = NULL;
	for (i = 0; i < sizeof(presets) / sizeof(presets[0]); i++)
		if (name != NULL && strcmp(name, presets[i]->name) == 0)
			d = presets[i];
	if (d == NULL) {
		snprintf(err, errlen, "unknown multi-line preset \"%s\" "
		    "(known: " MLPRESET_NAMES ")", name != NULL ? name : "");
		return -EINVAL;
	}
	mp = xcalloc(1, sizeof(*mp));
	mp->def = d;
	for (i = 0; d->rules[i].pattern != NULL; i++) {
		if (re_new(d->rules[i].pattern, 0, &mp->re[i], &e) != 0) {
			/* Our own tables: a bug, but say which. */
			snprintf(err, errlen, "multi-line preset %s, rule %zu: "
			    "%s at offset %zu", d->name, i, e.msg, e.offset);
			mlpreset_free(mp);
			return -EINVAL;
		}
		mp->nrules = i + 1;
		mp->ends[i] = ends_in(d, d->rules[i].to);
	}
	*out = mp;
	return 0;
}

void
mlpreset_free(struct mlpreset *mp)
{
	size_t	 i;

	if (mp == NULL)
		return;
	for (i = 0; i < mp->nrules; i++)
		re_free(mp->re[i]);
	free(mp);
}

const char *
mlpreset_name(const struct mlpreset *mp)
{
	return mp->def->name;
}

void
mlpreset_state_init(struct mlpreset_state *st)
{
	st->at = IDLE;
}

bool
mlpreset_state_open(const struct mlpreset_state *st)
{
	return st->at != IDLE;
}

/* The first rule, among those applying in state s (start rules or not),
 * that matches; -1 when none.  Match errors count as no match. */
static int
find(const struct mlpreset *mp, uint8_t s, bool start, const char *p,
    size_t n)
{
	const struct rule_def	*r;
	size_t			 i;

	for (i = 0; i < mp->nrules; i++) {
		r = &mp->def->rules[i];
		if (!(r->from & BIT(s)) || ((r->from & BIT(IDLE)) != 0) != start)
			continue;
		if (re_match(mp->re[i], p, n) > 0)
			return (int)i;
	}
	return -1;
}

enum mlpreset_verdict
mlpreset_line(const struct mlpreset *mp, const struct mlpreset_state *cur,
    const char *p, size_t n, struct mlpreset_state *next)
{
	int	 i;

	if (cur->at != IDLE) {
		i = find(mp, cur->at, false, p, n);
		if (i >= 0) {
			next->at = mp->ends[i] ? IDLE : mp->def->rules[i].to;
			return mp->ends[i] ? MLPRESET_LAST : MLPRESET_JOIN;
		}
	}
	i = find(mp, IDLE, true, p, n);
	if (i < 0 || mp->ends[i]) {
		/* A start that nothing can continue is a record of its own. */
		next->at = IDLE;
		return MLPRESET_ALONE;
	}
	next->at = mp->def->rules[i].to;
	return MLPRESET_START;
}
