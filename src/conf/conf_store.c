/*
 * Values into struct conf (conf_int.h): text to numbers, booleans and
 * words as the table says, the defaults, and freeing what was stored;
 * the line a key was set at, and the first error of a load.  Calls
 * nothing else of conf/: every other file of it may call here.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/log.h"
#include "conf/cleanconf.h"
#include "conf/conf_int.h"
#include "conf/cred.h"

/* Copy s into out for a message: control and non-ASCII bytes become '?'. */
const char *
conf_sanitize(const char *s, char *out, size_t len)
{
	size_t	 i;

	for (i = 0; s[i] != '\0' && i + 1 < len; i++)
		out[i] = isprint((unsigned char)s[i]) ? s[i] : '?';
	out[i] = '\0';
	return out;
}

/*
 * Write "key = value reason" into why, quoting the value when it is empty or
 * has blanks and masking control bytes; for a secret key only
 * "key: the value reason".
 */
static int
bad_value(char *why, size_t len, const struct key *k, const char *text,
    const char *reason)
{
	char		 shown[LINE_BUF];
	const char	*q;

	if (k->flags & KF_SECRET) {
		snprintf(why, len, "%s: the value %s", k->name, reason);
		return -1;
	}
	q = text[0] == '\0' || strpbrk(text, " \t") != NULL ? "'" : "";
	snprintf(why, len, "%s = %s%s%s %s", k->name, q,
	    conf_sanitize(text, shown, sizeof(shown)), q, reason);
	return -1;
}

/* Decimal integer, optional '-', nothing else; -ERANGE on overflow. */
static int
parse_ll(const char *s, long long *out)
{
	const char	*c;
	long long	 v;

	c = *s == '-' ? s + 1 : s;
	if (*c == '\0')
		return -EINVAL;
	for (; *c != '\0'; c++)
		if (!isdigit((unsigned char)*c))
			return -EINVAL;
	errno = 0;
	v = strtoll(s, NULL, 10);
	if (errno == ERANGE)
		return -ERANGE;
	*out = v;
	return 0;
}

static int
parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };
	size_t	 i;

	for (i = 0; i < ARRAY_SIZE(yes); i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

/* Index of s in words (any case), or -1. */
static int
word_index(const char *const *words, const char *s)
{
	int	 i;

	for (i = 0; words[i] != NULL; i++)
		if (strcasecmp(words[i], s) == 0)
			return i;
	return -1;
}

void
conf_words_join(const char *const *words, const char *sep, struct buf *b)
{
	int	 i;

	for (i = 0; words[i] != NULL; i++) {
		if (i > 0)
			buf_addstr(b, sep);
		buf_addstr(b, words[i]);
	}
}

static int
store_string(void *base, const struct key *k, const char *text, char *why,
    size_t len)
{
	const char	*reason;
	char		**slot;

	if ((k->flags & KF_NONEMPTY) && *text == '\0') {
		snprintf(why, len, "%s: must not be empty", k->name);
		return -1;
	}
	if (k->check != NULL && *text != '\0') {
		reason = k->check(text);
		if (reason != NULL)
			return bad_value(why, len, k, text, reason);
	}
	slot = str_at(base, k);
	secret_free(*slot);	/* it may have held a secret */
	*slot = xstrdup(text);
	return 0;
}

static int
store_int(void *base, const struct key *k, const char *text, char *why,
    size_t len)
{
	long long	 v;
	char		 reason[96];
	int		 rc;

	rc = parse_ll(text, &v);
	if (rc == -EINVAL)
		return bad_value(why, len, k, text, "is not an integer");
	if (rc == -ERANGE || v < k->min || v > k->max) {
		snprintf(reason, sizeof(reason), "is out of range (%lld..%lld)",
		    k->min, k->max);
		return bad_value(why, len, k, text, reason);
	}
	*int_at(base, k) = v;
	return 0;
}

static int
store_word(void *base, const struct key *k, const char *text, char *why,
    size_t len)
{
	struct buf	 b;
	char		**slot;
	int		 i;

	i = word_index(k->words, text);
	if (i < 0) {
		buf_init(&b);
		buf_addstr(&b, "is not one of ");
		conf_words_join(k->words, ", ", &b);
		bad_value(why, len, k, text, b.data);
		buf_cleanup(&b);
		return -1;
	}
	if (k->type == KT_ENUM) {
		*enum_at(base, k) = i;
		return 0;
	}
	slot = str_at(base, k);
	free(*slot);
	*slot = xstrdup(k->words[i]);
	return 0;
}

/*
 * Parse text as the value of k and store it in base (a struct conf or a
 * struct conf_flow).  Returns 0, or -1 with the reason written into why.
 */
int
conf_key_store(void *base, const struct key *k, const char *text, char *why,
    size_t len)
{
	bool	 v;

	switch (k->type) {
	case KT_STRING:
		return store_string(base, k, text, why, len);
	case KT_INT:
		return store_int(base, k, text, why, len);
	case KT_BOOL:
		if (parse_bool(text, &v) != 0)
			return bad_value(why, len, k, text, "is not a boolean "
			    "(true, false, yes, no, on, off, 1, 0)");
		*bool_at(base, k) = v;
		return 0;
	case KT_ENUM:
	case KT_WORD:
		return store_word(base, k, text, why, len);
	}
	return -1;
}

/* Give every key of sect in base its default ("" for strings without). */
void
conf_apply_defaults(void *base, enum ksect sect)
{
	const struct key	*k;
	char			 why[256];

	for (k = conf_keys; k < conf_keys + conf_nkeys; k++) {
		if (k->sect != sect)
			continue;
		if (k->def == NULL) {
			*str_at(base, k) = xstrdup("");
			continue;
		}
		if (conf_key_store(base, k, k->def, why, sizeof(why)) != 0)
			fatalx("conf: bad default in key table: %s", why);
	}
}

static void
free_fields(void *base, enum ksect sect)
{
	const struct key	*k;

	for (k = conf_keys; k < conf_keys + conf_nkeys; k++) {
		if (k->sect != sect ||
		    (k->type != KT_STRING && k->type != KT_WORD))
			continue;
		if (conf_stashed(k))
			secret_free(*str_at(base, k));
		else
			free(*str_at(base, k));
	}
}

void
conf_free(struct conf *c)
{
	size_t	 i;

	if (c == NULL)
		return;
	for (i = 0; i < c->nflows; i++) {
		free(c->flows[i].name);
		free_fields(&c->flows[i], KS_FLOW);
	}
	free(c->flows);
	free_fields(c, KS_AGENT);
	free(c->path);
	for (i = 0; i < c->nfiles; i++)
		free(c->files[i]);
	free(c->files);
	free(c);
}

const struct key *
conf_key_find(enum ksect sect, const char *name, bool anycase)
{
	const struct key	*k;

	for (k = conf_keys; k < conf_keys + conf_nkeys; k++) {
		if (k->sect != sect)
			continue;
		if (anycase ? strcasecmp(k->name, name) == 0 :
		    strcmp(k->name, name) == 0)
			return k;
	}
	return NULL;
}

/* --- where a key was set, and the first error --------------------------- */

int
conf_key_line(struct sect *s, const char *name)
{
	const struct key	*k;

	k = conf_key_find(KS_FLOW, name, false);
	return k == NULL ? 0 : s->keyline[k - conf_keys];
}

/*
 * Secret and decryptable values of [agent] never pass through inih: its
 * buffer is not ours to zero, and Debian's holds 199 characters, fewer than
 * most encrypted values.  Such a line may be up to CONF_LONG_LINE long;
 * its value goes to p->stash and inih sees "name =".
 */
bool
conf_stashed(const struct key *k)
{
	return k->sect == KS_AGENT &&
	    ((k->flags & KF_SECRET) || cred_decryptable(k->name));
}

/* Record the first error; later ones are dropped.  Always returns -1. */
int
conf_fail(struct parse *p, int line, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	if (p->failed)
		return -1;
	p->failed = true;
	p->errline = line;
	if (p->errlen == 0)
		return -1;
	if (line > 0)
		n = snprintf(p->err, p->errlen, "%s:%d: ", p->path, line);
	else
		n = snprintf(p->err, p->errlen, "%s: ", p->path);
	if (n < 0 || (size_t)n >= p->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}
