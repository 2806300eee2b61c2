/*
 * LOGTOJSON's log formats and matchPattern (logparse.h): Java regular
 * expressions translated to PCRE2 and compiled once (base/re.c).
 *
 * The built-in patterns are the DIS Agent's PatternConstants, spelt as its
 * Java source spells them and put through the same translation as a
 * user's pattern, so both paths are the one tested path.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/re.h"
#include "records/logparse.h"

/* --- the DIS Agent's PatternConstants, as Java source has them ----------- */

#define INT		"(?:[+-]?(?:[0-9]+))"
#define POSINT		"(?:[1-9][0-9]*)"
#define NONNEGINT	"(?:[0-9]+)"
#define ANYDATA		".*"
#define WORD		"\\w+"
#define NOQUOTE		"[^\"]+"
#define IP		"(?:[\\d\\.]+)"
#define HOSTNAME	"(?:[\\w\\-]+)(?:\\.(?:[\\w\\-]+))*(?:\\.?|\\b)"
#define IPORHOST	"(?:" HOSTNAME "|" IP ")"
#define URIHOST		"(?:" IPORHOST "(?::" POSINT ")?)"
#define USER		"(?:[a-zA-Z0-9._-]+)"
#define MONTHDAY	"(?:(?:0[1-9])|(?:[12][0-9])|(?:3[01])|[1-9])"
#define DAY		"(?:Mon(?:day)?|Tue(?:sday)?|Wed(?:nesday)?|" \
			"Thu(?:rsday)?|Fri(?:day)?|Sat(?:urday)?|Sun(?:day)?)"
#define MONTH		"\\b(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|" \
			"Apr(?:il)?|May|Jun(?:e)?|Jul(?:y)?|Aug(?:ust)?|" \
			"Sep(?:tember)?|Oct(?:ober)?|Nov(?:ember)?|" \
			"Dec(?:ember)?)\\b"
#define YEAR		"(?:[1-9]\\d*)"
#define HOUR		"(?:2[0123]|[01]?[0-9])"
#define MINUTE		"(?:[0-5][0-9])"
#define SECOND		"(?:(?:[0-5]?[0-9]|60)(?:[:\\.,][0-9]+)?)"
#define TIME		"(?:" HOUR ":" MINUTE ":" SECOND ")"
#define HTTPDATE	"(?:" MONTHDAY "/" MONTH "/" YEAR ":" TIME "\\s" INT ")"
#define ERRORTIMESTAMP	"(?:" DAY "\\s+" MONTH "\\s+" MONTHDAY "\\s+" TIME \
			"\\s+" YEAR ")"
#define SYSLOGTIMESTAMP	"(?:" MONTH "\\s+" MONTHDAY "\\s+" TIME ")"
#define RFC3339		"(?:\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}" \
			"(?:\\.\\d+)?)(?:Z|(?:[-+]\\d{2}:\\d{2}))"
#define SYSLOGFACILITY	"<" NONNEGINT "." NONNEGINT ">"
#define PROG		"([\\w\\._/%-]+)"
#define SYSLOGPROG	PROG "(?:\\[(" POSINT ")\\])?"
#define COMMON_LOG	"^(" IPORHOST ") (" USER ") (" USER ") \\[(" \
			HTTPDATE ")\\] \"(" NOQUOTE ")\" (" INT "|\\-) (" \
			INT "|\\-)"
#define COMBINED_LOG	COMMON_LOG " \"(" NOQUOTE ")\" \"(" NOQUOTE ")\""
#define ERROR_LOG	"^\\[(" ERRORTIMESTAMP ")\\] \\[(?:(" WORD "):)?(" \
			WORD ")\\] \\[pid (" NONNEGINT ")(?::tid (" \
			NONNEGINT "))?\\] \\[client (" URIHOST ")\\] (" \
			ANYDATA ")"
#define SYSLOG_BASE	"^(" SYSLOGTIMESTAMP ") (?:" SYSLOGFACILITY " )?(" \
			USER ") " SYSLOGPROG ": (" ANYDATA ")"
#define RFC3339_BASE	"^(" RFC3339 ") (?:" SYSLOGFACILITY " )?(" USER \
			") " SYSLOGPROG ": (" ANYDATA ")"

/* In enum logparse_format order. */
static const char *const builtin[] = {
	COMMON_LOG ".*",
	COMBINED_LOG ".*",
	ERROR_LOG,
	SYSLOG_BASE,
	RFC3339_BASE,
};

const char *const logparse_format_names[] = {
	"COMMONAPACHELOG", "COMBINEDAPACHELOG", "APACHEERRORLOG", "SYSLOG",
	"RFC3339SYSLOG", NULL,
};

static const char *const common_fields[] = {
	"host", "ident", "authuser", "datetime", "request", "response",
	"bytes", "referer", "agent",
};
static const char *const error_fields[] = {
	"timestamp", "module", "severity", "processid", "threadid", "client",
	"message",
};
static const char *const syslog_fields[] = {
	"timestamp", "hostname", "program", "processid", "message",
};

struct logparse {
	struct re	*re;
};

/* --- Java -> PCRE2 -------------------------------------------------------- */

/* Java's line terminators: '.' matches none of them. */
#define JLT		"\\n\\r\\x{85}\\x{2028}\\x{2029}"
#define JDOT		"[^" JLT "]"
#define JDOLLAR		"(?=\\r\\n\\z|[\\r\\x{85}\\x{2028}\\x{2029}]?\\z|" \
			"(?<!\\r)\\n\\z)"
#define JDOLLAR_M	"(?=[\\r\\x{85}\\x{2028}\\x{2029}]|\\z|(?<!\\r)\\n)"
#define JCARET_M	"(?!\\z)(?:(?<![\\s\\S])|(?<=[\\n\\x{85}\\x{2028}" \
			"\\x{2029}])|(?<=\\r)(?!\\n))"
/* Java's \b: letters and digits of every script (Character.isLetterOrDigit)
 * and '_' are word characters, and so are combining marks. */
#define JW		"[\\p{L}\\p{Nd}\\p{Mn}_]"
#define JBOUND		"(?:(?<=" JW ")(?!" JW ")|(?<!" JW ")(?=" JW "))"
#define JNOBOUND	"(?:(?<=" JW ")(?=" JW ")|(?<!" JW ")(?!" JW "))"

#define MAX_GROUPS	256	/* nesting of ( ) the translator tracks */

struct jflags {
	bool	 dotall;	/* s */
	bool	 multiline;	/* m */
	bool	 comments;	/* x */
};

struct tr {
	const char	*p;
	struct buf	 o;
	struct jflags	 f[MAX_GROUPS];
	int		 depth;
	bool		 in_class;
	bool		 class_start;	/* just after [ or [^ */
	char		*err;
	size_t		 errlen;
};

static int PRINTFLIKE(2, 3)
tr_fail(struct tr *t, const char *fmt, ...)
{
	va_list	 ap;

	if (t->errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(t->err, t->errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* \p{Name} of Java's POSIX classes, as PCRE2 class items. */
static const struct {
	const char	*java;
	const char	*posix;		/* inside [ ] */
	const char	*negated;	/* inside [ ], \P{Name} */
} posix_names[] = {
	{ "Lower", "[:lower:]", "[:^lower:]" },
	{ "Upper", "[:upper:]", "[:^upper:]" },
	{ "ASCII", "\\x00-\\x7f", "\\x{80}-\\x{10ffff}" },
	{ "Alpha", "[:alpha:]", "[:^alpha:]" },
	{ "Digit", "[:digit:]", "[:^digit:]" },
	{ "Alnum", "[:alnum:]", "[:^alnum:]" },
	{ "Punct", "[:punct:]", "[:^punct:]" },
	{ "Graph", "[:graph:]", "[:^graph:]" },
	{ "Print", "[:print:]", "[:^print:]" },
	{ "Blank", "[:blank:]", "[:^blank:]" },
	{ "Cntrl", "[:cntrl:]", "[:^cntrl:]" },
	{ "XDigit", "[:xdigit:]", "[:^xdigit:]" },
	{ "Space", "[:space:]", "[:^space:]" },
};

/* \p{...} or \P{...} (t->p at the 'p'). */
static int
tr_property(struct tr *t)
{
	bool		 neg = *t->p == 'P';
	const char	*name, *end;
	size_t		 n, i;

	if (t->p[1] == '\0')
		return tr_fail(t, "incomplete \\%c", t->p[0]);
	if (t->p[1] != '{') {
		buf_printf(&t->o, "\\%c%c", t->p[0], t->p[1]);
		t->p += 2;
		return 0;
	}
	name = t->p + 2;
	end = strchr(name, '}');
	if (end == NULL)
		return tr_fail(t, "unclosed \\p{");
	n = (size_t)(end - name);
	t->p = end + 1;
	for (i = 0; i < ARRAY_SIZE(posix_names); i++) {
		if (strlen(posix_names[i].java) != n ||
		    strncmp(posix_names[i].java, name, n) != 0)
			continue;
		if (!t->in_class)
			buf_addc(&t->o, '[');
		buf_addstr(&t->o, neg ? posix_names[i].negated :
		    posix_names[i].posix);
		if (!t->in_class)
			buf_addc(&t->o, ']');
		return 0;
	}
	if (n > 2 && strncmp(name, "In", 2) == 0)
		return tr_fail(t, "Unicode blocks (\\p{In...}) are not "
		    "supported");
	if (n > 4 && strncmp(name, "java", 4) == 0)
		return tr_fail(t, "\\p{java...} classes are not supported");
	if (n > 2 && strncmp(name, "Is", 2) == 0) {
		name += 2;
		n -= 2;
	}
	buf_printf(&t->o, "\\%c{%.*s}", neg ? 'P' : 'p', (int)n, name);
	return 0;
}

/* \Q...\E: copied, PCRE2 quotes the same way. */
static void
tr_quote(struct tr *t)
{
	const char	*e = strstr(t->p, "\\E");
	size_t		 n = e != NULL ? (size_t)(e - t->p) + 2 : strlen(t->p);

	buf_add(&t->o, t->p, n);
	t->p += n;
}

/* An escape, t->p just after the backslash. */
static int
tr_escape(struct tr *t)
{
	char	 c = *t->p;
	size_t	 n;

	if (c == '\0')
		return tr_fail(t, "trailing backslash");
	if (c == 'Q') {
		t->p--;
		tr_quote(t);
		return 0;
	}
	if (c == 'p' || c == 'P')
		return tr_property(t);
	if (c == 'u' && strspn(t->p + 1, "0123456789abcdefABCDEF") >= 4) {
		buf_printf(&t->o, "\\x{%.4s}", t->p + 1);
		t->p += 5;
		return 0;
	}
	if (c == '0') {
		n = strspn(t->p + 1, "01234567");
		if (n == 0)
			return tr_fail(t, "\\0 must be followed by octal "
			    "digits");
		/* Java takes three digits only when the first is 0-3. */
		n = MIN(n, t->p[1] <= '3' ? 3 : 2);
		buf_printf(&t->o, "\\o{%.*s}", (int)n, t->p + 1);
		t->p += n + 1;
		return 0;
	}
	t->p++;
	if (!t->in_class && c == 'b')
		buf_addstr(&t->o, JBOUND);
	else if (!t->in_class && c == 'B')
		buf_addstr(&t->o, JNOBOUND);
	else if (!t->in_class && c == 'Z')
		buf_addstr(&t->o, JDOLLAR);
	else
		buf_printf(&t->o, "\\%c", c);
	return 0;
}

/* Inside [ ]: Java's unions and intersections have no PCRE2 spelling. */
static int
tr_class_char(struct tr *t)
{
	char	 c = *t->p;

	if (c == '[')
		return tr_fail(t, "nested character classes ([a[b]]) are not "
		    "supported");
	if (c == '&' && t->p[1] == '&')
		return tr_fail(t, "character class intersections (&&) are not "
		    "supported");
	if (c == ']' && !t->class_start)
		t->in_class = false;
	t->class_start = false;
	buf_addc(&t->o, c);
	t->p++;
	return 0;
}

/*
 * "(?flags)" or "(?flags:" at t->p: apply to the current group or to a new
 * one.  Java's d, u and U have no PCRE2 equivalent (U means ungreedy
 * there); x becomes xx, so blanks inside [ ] are ignored as in Java.
 */
static int
tr_flags(struct tr *t, size_t n)
{
	struct jflags	 f = t->f[t->depth];
	bool		 on = true;
	size_t		 i;
	char		 c;

	for (i = 2; i < n; i++) {
		c = t->p[i];
		if (c == '-')
			on = false;
		else if (c == 's')
			f.dotall = on;
		else if (c == 'm')
			f.multiline = on;
		else if (c == 'x')
			f.comments = on;
		else if (c != 'i')
			return tr_fail(t, "the flag (?%c) is not supported", c);
	}
	for (i = 0; i < n; i++) {
		buf_addc(&t->o, t->p[i]);
		if (t->p[i] == 'x' && t->f[t->depth].comments != f.comments)
			buf_addc(&t->o, 'x');
	}
	if (t->p[n] == ':') {
		if (t->depth + 1 >= MAX_GROUPS)
			return tr_fail(t, "groups nested too deep");
		t->f[++t->depth] = f;
	} else
		t->f[t->depth] = f;
	buf_addc(&t->o, t->p[n]);
	t->p += n + 1;
	return 0;
}

static int
tr_open(struct tr *t)
{
	size_t	 n;

	if (t->p[1] == '?') {
		n = 2 + strspn(t->p + 2, "idmsuxUc-");
		if (n > 2 && (t->p[n] == ')' || t->p[n] == ':'))
			return tr_flags(t, n);
	}
	if (t->depth + 1 >= MAX_GROUPS)
		return tr_fail(t, "groups nested too deep");
	t->depth++;
	t->f[t->depth] = t->f[t->depth - 1];
	buf_addc(&t->o, '(');
	t->p++;
	return 0;
}

static int
tr_char(struct tr *t)
{
	const struct jflags *f = &t->f[t->depth];
	char	 c = *t->p;
	size_t	 n;

	if (c == '\\') {
		t->p++;
		t->class_start = false;
		return tr_escape(t);
	}
	if (t->in_class)
		return tr_class_char(t);
	if (c == '(')
		return tr_open(t);
	t->p++;
	switch (c) {
	case ')':
		if (t->depth > 0)
			t->depth--;
		buf_addc(&t->o, c);
		break;
	case '[':
		t->in_class = true;
		t->class_start = true;
		buf_addc(&t->o, c);
		if (*t->p == '^')
			buf_addc(&t->o, *t->p++);
		break;
	case '.':
		buf_addstr(&t->o, f->dotall ? "(?s:.)" : JDOT);
		break;
	case '$':
		buf_addstr(&t->o, f->multiline ? JDOLLAR_M : JDOLLAR);
		break;
	case '^':
		buf_addstr(&t->o, f->multiline ? JCARET_M : "^");
		break;
	case '#':
		buf_addc(&t->o, c);
		if (f->comments) {	/* a comment to the end of the line */
			n = strcspn(t->p, "\n");
			buf_add(&t->o, t->p, n);
			t->p += n;
		}
		break;
	default:
		buf_addc(&t->o, c);
	}
	return 0;
}

char *
logparse_translate(const char *java, char *err, size_t errlen)
{
	struct tr	 t;

	memset(&t, 0, sizeof(t));
	t.p = java;
	t.err = err;
	t.errlen = errlen;
	buf_init(&t.o);
	buf_reserve(&t.o, strlen(java) * 2);
	while (*t.p != '\0')
		if (tr_char(&t) != 0) {
			buf_cleanup(&t.o);
			return NULL;
		}
	return t.o.data;
}

/* --- compiling and matching ----------------------------------------------- */

int
logparse_new(enum logparse_format fmt, const char *java_pattern,
    struct logparse **out, char *err, size_t errlen)
{
	struct logparse	*lp;
	struct re_error	 e;
	char		*pat;
	int		 rc;

	*out = NULL;
	if (java_pattern == NULL || java_pattern[0] == '\0')
		java_pattern = builtin[fmt];
	pat = logparse_translate(java_pattern, err, errlen);
	if (pat == NULL)
		return -EINVAL;
	lp = xcalloc(1, sizeof(*lp));
	/* The lines matched are UTF-8 already (the framer converts them). */
	rc = re_new(pat, RE_UTF_VALID | RE_WHOLE, &lp->re, &e);
	free(pat);
	if (rc != 0) {
		snprintf(err, errlen, "%s (in the PCRE2 translation, at "
		    "offset %zu)", e.msg, e.offset);
		free(lp);
		return rc;
	}
	*out = lp;
	return 0;
}

void
logparse_free(struct logparse *lp)
{
	if (lp == NULL)
		return;
	re_free(lp->re);
	free(lp);
}

size_t
logparse_groups(const struct logparse *lp)
{
	return re_groups(lp->re);
}

bool
logparse_jit(const struct logparse *lp)
{
	return re_jit(lp->re);
}

size_t
logparse_fields(enum logparse_format fmt, const char *const **names)
{
	switch (fmt) {
	case LP_COMMON:
		*names = common_fields;
		return 7;
	case LP_COMBINED:
		*names = common_fields;
		return ARRAY_SIZE(common_fields);
	case LP_ERROR:
		*names = error_fields;
		return ARRAY_SIZE(error_fields);
	default:
		*names = syslog_fields;
		return ARRAY_SIZE(syslog_fields);
	}
}

bool
logparse_dash_is_null(enum logparse_format fmt)
{
	return fmt == LP_COMMON || fmt == LP_COMBINED || fmt == LP_ERROR;
}

int
logparse_match(struct logparse *lp, const char *s, size_t n,
    const size_t **spans)
{
	int	 rc;

	rc = re_match(lp->re, s, n);
	if (rc > 0)
		*spans = re_spans(lp->re);
	return rc;
}

const char *
logparse_error(int rc, char *buf, size_t len)
{
	return re_strerror(rc, buf, len);
}
