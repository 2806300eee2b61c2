/*
 * Line filters (filter.h): two patterns compiled once per flow (base/re.c:
 * PCRE2 with JIT where the platform allows it).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/re.h"
#include "base/util.h"
#include "records/filter.h"

struct filter {
	struct re	*include;	/* NULL: every record */
	struct re	*exclude;	/* NULL: none */
	int		 delim;		/* -1: none kept */
};

/* pattern into *re (NULL for ""); 0, or -EINVAL with why in err.  Records
 * are UTF-8 once framed. */
static int
compile(const char *pattern, struct re **re, char *err, size_t errlen)
{
	struct re_error	 e;

	*re = NULL;
	if (pattern == NULL || pattern[0] == '\0')
		return 0;
	if (re_new(pattern, RE_UTF, re, &e) == 0)
		return 0;
	snprintf(err, errlen, "is not a valid regular expression (%s at "
	    "offset %zu)", e.msg, e.offset);
	return -EINVAL;
}

const char *
filter_check_pattern(const char *value)
{
	static char	 why[256];
	struct re	*re;

	if (compile(value, &re, why, sizeof(why)) != 0)
		return why;
	re_free(re);
	return NULL;
}

int
filter_new(const char *include, const char *exclude, int delim,
    struct filter **out, const char **key, char *err, size_t errlen)
{
	struct filter	*f;
	const char	*bad, *name;
	char		 why[256];

	*out = NULL;
	if ((include == NULL || *include == '\0') &&
	    (exclude == NULL || *exclude == '\0'))
		return 0;
	f = xcalloc(1, sizeof(*f));
	f->delim = delim;
	name = "lineIncludePattern";
	bad = include;
	if (compile(include, &f->include, why, sizeof(why)) != 0)
		goto fail;
	name = "lineExcludePattern";
	bad = exclude;
	if (compile(exclude, &f->exclude, why, sizeof(why)) != 0)
		goto fail;
	*out = f;
	return 0;
fail:
	if (key != NULL)
		*key = name;
	snprintf(err, errlen, "%s = %s %s", name, bad, why);
	filter_free(f);
	return -EINVAL;
}

void
filter_free(struct filter *f)
{
	if (f == NULL)
		return;
	re_free(f->include);
	re_free(f->exclude);
	free(f);
}

bool
filter_pass(struct filter *f, const char *data, size_t len)
{
	if (f->delim >= 0 && len > 0 &&
	    (unsigned char)data[len - 1] == (unsigned char)f->delim)
		len--;
	/* A match that fails (PCRE2's match limit on a pathological
	 * pattern) leaves nothing out: in doubt the record is sent. */
	if (f->include != NULL && re_match(f->include, data, len) == 0)
		return false;
	return f->exclude == NULL || re_match(f->exclude, data, len) != 1;
}
