/*
 * PCRE2 behind re.h: compile, the JIT and its fallback, matching with the
 * interpreter when the JIT's stack is too small.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "base/log.h"
#include "base/re.h"
#include "base/util.h"

struct re {
	pcre2_code		*code;
	pcre2_match_data	*md;
	uint32_t		 match_opts;
	uint32_t		 groups;
	bool			 jit;
};

static uint32_t
compile_opts(unsigned flags)
{
	uint32_t	 o = 0;

	if (flags & RE_UTF_VALID)
		o |= PCRE2_UTF;
	else if (flags & RE_UTF) {
#ifdef PCRE2_MATCH_INVALID_UTF
		o |= PCRE2_UTF | PCRE2_MATCH_INVALID_UTF;
#else
		/* PCRE2 < 10.34: invalid UTF-8 makes the match fail. */
		o |= PCRE2_UTF;
#endif
	}
	/* At compile time, so that JIT runs it: JIT does not take these two
	 * at match time. */
	if (flags & RE_WHOLE)
		o |= PCRE2_ANCHORED | PCRE2_ENDANCHORED;
	return o;
}

static pcre2_code *
compile(const char *pattern, unsigned flags, struct re_error *err)
{
	pcre2_code	*code;
	PCRE2_SIZE	 off;
	int		 ec;

	code = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
	    compile_opts(flags), &ec, &off, NULL);
	if (code == NULL) {
		pcre2_get_error_message(ec, (PCRE2_UCHAR *)err->msg,
		    sizeof(err->msg));
		err->offset = (size_t)off;
	}
	return code;
}

int
re_check(const char *pattern, unsigned flags, struct re_error *err)
{
	pcre2_code	*code = compile(pattern, flags, err);

	if (code == NULL)
		return -EINVAL;
	pcre2_code_free(code);
	return 0;
}

int
re_new(const char *pattern, unsigned flags, struct re **out,
    struct re_error *err)
{
	struct re	*re;

	*out = NULL;
	re = xcalloc(1, sizeof(*re));
	re->code = compile(pattern, flags, err);
	if (re->code == NULL) {
		free(re);
		return -EINVAL;
	}
	if (flags & RE_UTF_VALID)
		re->match_opts = PCRE2_NO_UTF_CHECK;
	(void)pcre2_pattern_info(re->code, PCRE2_INFO_CAPTURECOUNT,
	    &re->groups);
	/* Without executable memory (MemoryDenyWriteExecute, SELinux) or
	 * JIT support this fails, and pcre2_match interprets instead. */
	re->jit = pcre2_jit_compile(re->code, PCRE2_JIT_COMPLETE) == 0;
	re->md = pcre2_match_data_create_from_pattern(re->code, NULL);
	if (re->md == NULL)
		fatalx("%s: out of memory", __func__);
	*out = re;
	return 0;
}

void
re_free(struct re *re)
{
	if (re == NULL)
		return;
	pcre2_match_data_free(re->md);
	pcre2_code_free(re->code);
	free(re);
}

int
re_match(struct re *re, const char *s, size_t n)
{
	int	 rc;

	rc = pcre2_match(re->code, (PCRE2_SPTR)s, n, 0, re->match_opts,
	    re->md, NULL);
	/* A subject too deep for the JIT's stack: the interpreter has more. */
	if (rc == PCRE2_ERROR_JIT_STACKLIMIT)
		rc = pcre2_match(re->code, (PCRE2_SPTR)s, n, 0,
		    re->match_opts | PCRE2_NO_JIT, re->md, NULL);
	if (rc == PCRE2_ERROR_NOMATCH)
		return 0;
	return rc < 0 ? rc : 1;
}

const size_t *
re_spans(const struct re *re)
{
	return pcre2_get_ovector_pointer(re->md);
}

size_t
re_groups(const struct re *re)
{
	return re->groups;
}

bool
re_jit(const struct re *re)
{
	return re->jit;
}

const char *
re_strerror(int rc, char *buf, size_t len)
{
	PCRE2_UCHAR	 msg[120];

	pcre2_get_error_message(rc, msg, sizeof(msg));
	snprintf(buf, len, "%s", (const char *)msg);
	return buf;
}
