/*
 * agent.ini -> struct conf.  Everything about a key lives in one row of the
 * declarative table conf_keys[] (conf_keys.c): its section, name, type,
 * bounds or allowed words, default, where it is stored, whether it is
 * required or secret, and its help text.  The table drives parsing,
 * defaults, validation (conf_check.c, conf_store.c, conf_finish.c), the
 * commented sample file and the man page entries (conf_doc.c).
 *
 * inih does the tokenising, fed by our own line reader because Debian's
 * libinih has a 200-byte line buffer (longer lines would be split and
 * misparsed), passes no line numbers to the handler and does not report
 * section headers.  So the reader counts lines, rejects over-long ones,
 * tracks [sections] itself and strips leading blanks (which also turns off
 * inih's multi-line continuation: an indented key stays a key).  The first
 * error by line number wins and reading stops there.  Errors name the file
 * and line; the value of a secret key is never part of a message.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <iconv.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <ini.h>

#include "base/log.h"
#include "base/util.h"
#include "conf/cleanconf.h"
#include "conf/conf.h"
#include "conf/conf_int.h"
#include "conf/cred.h"
#include "records/logparse.h"

static void	stash_wipe(struct parse *);

/* Whether a name read from the file is safe and useful to echo. */
static bool
showable(const char *name)
{
	return conf_charset_ok(name, ALNUM "_.-", NAME_SHOW_MAX);
}

static struct sect *
cur_sect(struct parse *p)
{
	return p->cur == CUR_AGENT ? &p->agent : &p->flows[p->cur];
}

static void *
cur_base(struct parse *p)
{
	if (p->cur == CUR_AGENT)
		return p->conf;
	return &p->conf->flows[p->cur];
}

/* "[agent]" or "[flow:NAME]" for the current section. */
static const char *
cur_label(struct parse *p, char *buf, size_t len)
{
	if (p->cur == CUR_AGENT)
		return "[agent]";
	snprintf(buf, len, "[flow:%s]", p->conf->flows[p->cur].name);
	return buf;
}

/* Edit distance of a and b, ignoring case, capped at cap + 1. */
static size_t
distance(const char *a, const char *b, size_t cap)
{
	size_t	 la = strlen(a), lb = strlen(b), i, j, prev, cur, best;
	size_t	 row[NAME_SHOW_MAX + 2];

	if (la > NAME_SHOW_MAX || lb > NAME_SHOW_MAX ||
	    (la > lb ? la - lb : lb - la) > cap)
		return cap + 1;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		best = row[0];
		for (j = 1; j <= lb; j++) {
			cur = row[j];
			row[j] = MIN(MIN(row[j] + 1, row[j - 1] + 1), prev +
			    (tolower((unsigned char)a[i - 1]) !=
			    tolower((unsigned char)b[j - 1])));
			prev = cur;
			best = MIN(best, row[j]);
		}
		if (best > cap)
			return cap + 1;
	}
	return row[lb];
}

/* The known key of sect closest to name (2 edits at most), or NULL. */
static const struct key *
nearest_key(enum ksect sect, const char *name)
{
	const struct key *k, *best = NULL;
	size_t		 d, bestd = 3;

	if (strlen(name) < 4)
		return NULL;
	for (k = conf_keys; k < conf_keys + conf_nkeys; k++) {
		if (k->sect != sect)
			continue;
		d = distance(name, k->name, 2);
		if (d < bestd) {
			bestd = d;
			best = k;
		}
	}
	return best;
}

static int
unknown_key(struct parse *p, enum ksect sect, const char *name)
{
	const struct key	*hint;
	char			 label[FLOW_NAME_MAX + 8];
	const char		*where;

	where = cur_label(p, label, sizeof(label));
	if (*name == '\0')
		return conf_fail(p, p->lineno,
		    "syntax error (no key before '=')");
	if (!showable(name))
		return conf_fail(p, p->lineno, "unknown key in %s", where);
	hint = conf_key_find(sect, name, true);
	if (hint == NULL && !conf_key_find(sect == KS_AGENT ? KS_FLOW :
	    KS_AGENT, name, false))
		hint = nearest_key(sect, name);
	if (hint != NULL)
		return conf_fail(p, p->lineno, "unknown key '%s' in %s; "
		    "did you mean '%s'?", name, where, hint->name);
	if (conf_key_find(sect == KS_AGENT ? KS_FLOW : KS_AGENT, name, false))
		return conf_fail(p, p->lineno, "unknown key '%s' in %s; it "
		    "belongs in %s", name, where,
		    sect == KS_AGENT ? "a [flow:NAME] section" : "[agent]");
	return conf_fail(p, p->lineno, "unknown key '%s' in %s", name, where);
}

/* inih's handler: one "name = value" line of the current section. */
static int
on_key(void *user, const char *section, const char *name, const char *value)
{
	struct parse		*p = user;
	const struct key	*k;
	struct sect		*s;
	char			 why[LINE_BUF];
	char			 label[FLOW_NAME_MAX + 8];
	int			 rc;

	if (p->failed)
		return 0;
	if (p->cur == CUR_NONE) {
		if (showable(name))
			conf_fail(p, p->lineno, "key '%s' is outside any "
			    "section", name);
		else
			conf_fail(p, p->lineno, "key outside any section");
		return 0;
	}
	k = conf_key_find(p->cur == CUR_AGENT ? KS_AGENT : KS_FLOW, name,
	    false);
	if (k == NULL) {
		unknown_key(p, p->cur == CUR_AGENT ? KS_AGENT : KS_FLOW, name);
		return 0;
	}
	s = cur_sect(p);
	if (s->keyline[k - conf_keys] != 0) {
		conf_fail(p, p->lineno, "duplicate key '%s' in %s (first at "
		    "line %d)",
		    k->name, cur_label(p, label, sizeof(label)),
		    s->keyline[k - conf_keys]);
		return 0;
	}
	s->keyline[k - conf_keys] = p->lineno;
	if (p->stash_line == p->lineno)
		value = p->stash.data != NULL ? p->stash.data : "";
	rc = conf_key_store(cur_base(p), k, value, why, sizeof(why));
	stash_wipe(p);
	if (rc != 0) {
		conf_fail(p, p->lineno, "%s", why);
		return 0;
	}
	return 1;
}

static int
begin_agent(struct parse *p)
{
	if (p->dropin)
		return conf_fail(p, p->lineno, "[agent] is not allowed in a "
		    "drop-in, which holds [flow:NAME] sections only; the "
		    "[agent] section is at %s:%d", p->agent.path,
		    p->agent.line);
	if (p->agent.line != 0)
		return conf_fail(p, p->lineno, "duplicate section [agent] "
		    "(first at line %d)", p->agent.line);
	p->agent.path = p->path;
	p->agent.line = p->lineno;
	p->cur = CUR_AGENT;
	return 0;
}

static int
begin_flow(struct parse *p, const char *name)
{
	struct conf	*c = p->conf;
	struct conf_flow *f;
	char		 shown[LINE_BUF];
	size_t		 i;

	if (!conf_charset_ok(name, ALNUM "_.-", FLOW_NAME_MAX))
		return conf_fail(p, p->lineno, "bad flow name '%s' (1-%d "
		    "letters, digits, '_', '.' or '-')",
		    conf_sanitize(name, shown, sizeof(shown)), FLOW_NAME_MAX);
	for (i = 0; i < c->nflows; i++) {
		if (strcmp(c->flows[i].name, name) != 0)
			continue;
		if (strcmp(c->flows[i].file, p->path) == 0)
			return conf_fail(p, p->lineno, "duplicate section "
			    "[flow:%s] (first at line %d)", name,
			    c->flows[i].line);
		return conf_fail(p, p->lineno, "duplicate section [flow:%s] "
		    "(first at %s:%d)", name, c->flows[i].file,
		    c->flows[i].line);
	}
	c->flows = xrealloc(c->flows, (c->nflows + 1) * sizeof(*c->flows));
	p->flows = xrealloc(p->flows, (c->nflows + 1) * sizeof(*p->flows));
	f = &c->flows[c->nflows];
	memset(f, 0, sizeof(*f));
	memset(&p->flows[c->nflows], 0, sizeof(*p->flows));
	p->flows[c->nflows].keyline = xcalloc(conf_nkeys, sizeof(int));
	p->cur = (int)c->nflows;
	c->nflows++;		/* now conf_free sees it, zeroed */
	f->name = xstrdup(name);
	f->file = c->files[c->nfiles - 1];
	f->line = p->lineno;
	p->flows[p->cur].path = f->file;
	p->flows[p->cur].line = p->lineno;
	conf_apply_defaults(f, KS_FLOW);
	return 0;
}

static int
begin_unknown(struct parse *p, const char *name)
{
	char	 shown[LINE_BUF];

	conf_sanitize(name, shown, sizeof(shown));
	if (strcasecmp(name, "agent") == 0)
		return conf_fail(p, p->lineno, "unknown section [%s]; did you "
		    "mean [agent]?", shown);
	if (strncasecmp(name, "flow:", 5) == 0)
		return conf_fail(p, p->lineno, "unknown section [%s]; did you "
		    "mean [flow:%s]?", shown, shown + 5);
	return conf_fail(p, p->lineno, "unknown section [%s] (expected [agent] "
	    "or [flow:NAME])", shown);
}

/*
 * A line starting with '['.  inih takes the name up to the first ']' and
 * ignores the rest of the line; we insist on nothing but a comment there.
 */
static int
begin_section(struct parse *p, char *s)
{
	char	*end, *rest;

	end = strchr(s, ']');
	if (end == NULL) {
		/* inih fails this line; later errors lose to it. */
		if (p->syntax_line == 0) {
			p->syntax_line = p->lineno;
			p->syntax_why = "missing ']' in section header";
		}
		return 0;
	}
	*end = '\0';
	for (rest = end + 1; *rest == ' ' || *rest == '\t'; rest++)
		continue;
	if (*rest != '\0' && *rest != ';' && *rest != '#')
		return conf_fail(p, p->lineno, "unexpected text after section "
		    "header");
	s++;
	if (strcmp(s, "agent") == 0)
		return begin_agent(p);
	if (strncmp(s, "flow:", 5) == 0)
		return begin_flow(p, s + 5);
	return begin_unknown(p, s);
}

/*
 * Read one line into p->line without its "\n" or "\r\n".  Returns its
 * length (which may exceed what was kept), or -1 at the end of the file.
 */
static long
fetch_line(struct parse *p)
{
	size_t	 n = 0, keep = sizeof(p->line) - 1;
	int	 c;

	while ((c = getc(p->fp)) != EOF && c != '\n') {
		if (n < keep)
			p->line[n] = (char)c;
		n++;
	}
	if (c == EOF && ferror(p->fp)) {
		conf_fail(p, 0, "%s", strerror(errno));
		return -1;
	}
	if (c == EOF && n == 0)
		return -1;
	if (n > 0 && n <= keep && p->line[n - 1] == '\r')
		n--;
	p->line[MIN(n, keep)] = '\0';
	return (long)n;
}

/*
 * A line too long for inih: if it sets a KF_LONG key of the current
 * section, parse it here as inih would (name up to '=' or ':', the value
 * without blanks around it and without a ';' comment after a blank) and
 * hand inih a blank line in its place.  false: not such a line.
 */
static bool
long_line(struct parse *p, size_t n, char *str)
{
	const struct key	*k;
	char			*s, *eq, *v, *e;

	if (n > LONG_LINE_MAX || p->cur < 0 || memchr(p->line, '\0', n))
		return false;
	s = p->line + strspn(p->line, " \t");
	eq = s + strcspn(s, "=:");
	if (*eq == '\0')
		return false;
	for (e = eq; e > s && (e[-1] == ' ' || e[-1] == '\t'); e--)
		continue;
	*e = '\0';
	k = conf_key_find(KS_FLOW, s, false);
	if (k == NULL || !(k->flags & KF_LONG))
		return false;	/* an error follows: the line may stay cut */
	v = eq + 1;
	for (e = v; *e != '\0'; e++)
		if (*e == ';' && e > v && (e[-1] == ' ' || e[-1] == '\t')) {
			*e = '\0';
			break;
		}
	v += strspn(v, " \t");
	e = v + strlen(v);
	while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	on_key(p, "", s, v);
	str[0] = '\0';
	return true;
}

static void
stash_wipe(struct parse *p)
{
	if (p->stash.data != NULL)
		explicit_bzero(p->stash.data, p->stash.cap);
	buf_reset(&p->stash);
	p->stash_line = 0;
}

/* The key of line s ("name = value") when its value is to be stashed. */
static const struct key *
stash_key(struct parse *p, const char *s)
{
	const struct key *k;
	char		 name[NAME_SHOW_MAX + 1];
	size_t		 n;

	if (p->cur != CUR_AGENT || *s == '[' || *s == ';' || *s == '#')
		return NULL;
	n = strcspn(s, "=:");
	if (s[n] == '\0')
		return NULL;
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	if (n == 0 || n >= sizeof(name))
		return NULL;
	memcpy(name, s, n);
	name[n] = '\0';
	k = conf_key_find(KS_AGENT, name, false);
	return k != NULL && conf_stashed(k) ? k : NULL;
}

/* The value of line s by inih's rules: an inline " ;comment" and the
 * blanks around it go. */
static void
stash_value(struct parse *p, const char *s)
{
	const char	*v = s + strcspn(s, "=:") + 1, *e;
	bool		 was_space = false;

	for (e = v; *e != '\0' && !(was_space && *e == ';'); e++)
		was_space = isspace((unsigned char)*e);
	while (v < e && isspace((unsigned char)*v))
		v++;
	while (e > v && isspace((unsigned char)e[-1]))
		e--;
	stash_wipe(p);
	buf_add(&p->stash, v, (size_t)(e - v));
	p->stash_line = p->lineno;
}

/* inih's reader: hands over one checked line at a time. */
static char *
read_line(char *str, int num, void *stream)
{
	struct parse	*p = stream;
	const struct key *k;
	size_t		 limit;
	long		 n;
	char		*s;

	if (p->failed)
		return NULL;
	n = fetch_line(p);
	if (n < 0)
		return NULL;
	p->lineno++;
	limit = MIN((size_t)num, LINE_BUF) - 1;
	k = stash_key(p, p->line + strspn(p->line, " \t"));
	if (k != NULL)
		limit = CONF_LONG_LINE;
	else if ((size_t)n > limit && long_line(p, (size_t)n, str))
		return str;
	if ((size_t)n > limit) {
		conf_fail(p, p->lineno, "line longer than %zu characters",
		    limit);
		return NULL;
	}
	if (memchr(p->line, '\0', (size_t)n) != NULL) {
		/* A NUL would silently cut the value short. */
		conf_fail(p, p->lineno, "line contains a NUL byte");
		return NULL;
	}
	s = p->line;
	if (p->lineno == 1 && strncmp(s, "\xef\xbb\xbf", 3) == 0)
		s += 3;		/* UTF-8 byte order mark */
	/* No leading blanks: inih would take the line as a continuation. */
	s += strspn(s, " \t");
	if (k != NULL) {
		stash_value(p, s);
		snprintf(str, (size_t)num, "%s =", k->name);
		explicit_bzero(p->line, sizeof(p->line));
		return str;
	}
	memcpy(str, s, strlen(s) + 1);
	if (*s == '[') {
		if (begin_section(p, s) != 0)
			return NULL;
	} else if (*s != '\0' && *s != ';' && *s != '#' &&
	    strpbrk(s, "=:") == NULL && p->syntax_line == 0) {
		p->syntax_line = p->lineno;
		p->syntax_why = "expected 'key = value'";
	}
	return str;
}

/* Fold inih's result into ours: an earlier syntax error wins. */
static int
parse_result(struct parse *p, int rc)
{
	if (rc < 0)
		return conf_fail(p, 0, "cannot parse (inih error %d)", rc);
	if (rc > 0 && (!p->failed || rc < p->errline)) {
		p->failed = false;
		if (rc == p->syntax_line)
			return conf_fail(p, rc, "syntax error (%s)",
			    p->syntax_why);
		return conf_fail(p, rc, "syntax error");
	}
	return p->failed ? -1 : 0;
}

static bool
sect_of(const char *section, enum ksect *out)
{
	if (strcmp(section, "agent") == 0)
		*out = KS_AGENT;
	else if (strcmp(section, "flow") == 0 ||
	    strncmp(section, "flow:", 5) == 0)
		*out = KS_FLOW;
	else
		return false;
	return true;
}

size_t
conf_line_max(const char *section, const char *key)
{
	const struct key	*k;
	enum ksect		 sect;

	k = sect_of(section, &sect) ? conf_key_find(sect, key, false) : NULL;
	if (k != NULL && conf_stashed(k))
		return CONF_LONG_LINE;
	return k != NULL && (k->flags & KF_LONG) ? LONG_LINE_MAX :
	    INI_LINE - 1;
}

bool
conf_key_known(const char *section, const char *key)
{
	enum ksect	 sect;

	return sect_of(section, &sect) &&
	    conf_key_find(sect, key, false) != NULL;
}

int
conf_key_check(const char *section, const char *key, const char *value,
    char *why, size_t len)
{
	const struct key	*k;
	struct conf		 c;
	struct conf_flow	 f;
	enum ksect		 sect;
	void			*base;
	int			 rc;

	k = sect_of(section, &sect) ? conf_key_find(sect, key, false) : NULL;
	if (k == NULL) {
		snprintf(why, len, "unknown key '%s'", key);
		return -ENOENT;
	}
	memset(&c, 0, sizeof(c));
	memset(&f, 0, sizeof(f));
	base = sect == KS_AGENT ? (void *)&c : (void *)&f;
	rc = conf_key_store(base, k, value, why, len);
	if (k->type == KT_STRING || k->type == KT_WORD)
		free(*str_at(base, k));
	return rc == 0 ? 0 : -EINVAL;
}

void
conf_parse_free(struct parse *p)
{
	size_t	 i;

	for (i = 0; p->flows != NULL && i < p->conf->nflows; i++)
		free(p->flows[i].keyline);
	free(p->flows);
	free(p->agent.keyline);
}

int
conf_parse_file(struct parse *p, const char *path, FILE *fp)
{
	struct conf	*c = p->conf;
	int		 rc;

	c->files = xrealloc(c->files, (c->nfiles + 1) * sizeof(*c->files));
	c->files[c->nfiles++] = xstrdup(path);
	p->path = c->files[c->nfiles - 1];
	p->fp = fp;
	p->cur = CUR_NONE;
	p->lineno = 0;
	p->syntax_line = 0;
	rc = ini_parse_stream(read_line, p, on_key, p);
	explicit_bzero(p->line, sizeof(p->line));
	stash_wipe(p);
	p->fp = NULL;
	return parse_result(p, rc);
}
