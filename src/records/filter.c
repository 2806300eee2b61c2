/*
 * Line filters (filter.h): two PCRE2 patterns compiled once per flow, with
 * JIT where the platform allows it, and one match data block for both.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "base/log.h"
#include "records/filter.h"

struct filter {
	pcre2_code		*include;	/* NULL: every record */
	pcre2_code		*exclude;	/* NULL: none */
	pcre2_match_data	*md;
	int			 delim;		/* -1: none kept */
};

/* Records are UTF-8 once framed. */
static uint32_t
compile_flags(void)
{
#ifdef PCRE2_MATCH_INVALID_UTF
	return PCRE2_UTF | PCRE2_MATCH_INVALID_UTF;
#else
	/* PCRE2 < 10.34: invalid UTF-8 in a record makes the match fail. */
	return PCRE2_UTF;
#endif
}

/* pattern into *re (NULL for ""); 0, or -EINVAL with why in err. */
static int
compile(const char *pattern, pcre2_code **re, char *err, size_t errlen)
{
	PCRE2_UCHAR	 msg[120];
	PCRE2_SIZE	 off;
	int		 ec;

	*re = NULL;
	if (pattern == NULL || pattern[0] == '\0')
		return 0;
	*re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
	    compile_flags(), &ec, &off, NULL);
	if (*re == NULL) {
		pcre2_get_error_message(ec, msg, sizeof(msg));
		snprintf(err, errlen, "is not a valid regular expression (%s "
		    "at offset %zu)", (const char *)msg, (size_t)off);
		return -EINVAL;
	}
	/* Without JIT (no executable memory, as under
	 * MemoryDenyWriteExecute=yes) the interpreter is used. */
	(void)pcre2_jit_compile(*re, PCRE2_JIT_COMPLETE);
	return 0;
}

const char *
filter_check_pattern(const char *value)
{
	static char	 why[256];
	pcre2_code	*re;

	if (compile(value, &re, why, sizeof(why)) != 0)
		return why;
	pcre2_code_free(re);
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
	/* Only whether a pattern matches is asked: one pair is enough. */
	f->md = pcre2_match_data_create(1, NULL);
	if (f->md == NULL)
		fatalx("%s: out of memory", __func__);
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
	pcre2_match_data_free(f->md);
	pcre2_code_free(f->include);
	pcre2_code_free(f->exclude);
	free(f);
}

static bool
matches(struct filter *f, pcre2_code *re, const char *data, size_t len)
{
	return pcre2_match(re, (PCRE2_SPTR)data, len, 0, 0, f->md, NULL) >= 0;
}

bool
filter_pass(struct filter *f, const char *data, size_t len)
{
	if (f->delim >= 0 && len > 0 &&
	    (unsigned char)data[len - 1] == (unsigned char)f->delim)
		len--;
	if (f->include != NULL && !matches(f, f->include, data, len))
		return false;
	return f->exclude == NULL || !matches(f, f->exclude, data, len);
}
