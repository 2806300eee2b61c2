/*
 * Unit tests for what a reload compares (conf_diff.c): two loads of the
 * same text are the same however the file is laid out; every key of the
 * table, changed alone, is found (so a key added to the table is compared
 * without a change to the comparison); a changed [agent] key is reported as
 * what it costs: a new HTTP client, the agent's own settings, or every
 * flow.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "conf/conf.h"
#include "conf/conf_int.h"
#include "testutil.h"

#define AGENT_NO_SK \
	"[agent]\n" \
	"region = cn-north-4\n" \
	"projectId = 0123456789abcdef\n" \
	"ak = AKID\n"
#define SK	"sk = Zq9SecretValue7x\n"
#define AGENT	AGENT_NO_SK SK

#define FLOW_APP \
	"[flow:app]\n" \
	"DISStream = s1\n" \
	"filePattern = /var/log/a.log\n"

#define FLOW_WEB \
	"[flow:web]\n" \
	"DISStream = s2\n" \
	"filePattern = /var/log/web/*.log\n"

static struct conf *
load(const char *text)
{
	char		 path[] = "/tmp/check_confdiff.XXXXXX";
	char		 err[512];
	struct conf	*c = NULL;
	size_t		 len = strlen(text);
	int		 fd;

	unsetenv("DIS_AK");
	unsetenv("DIS_SK");
	unsetenv("CREDENTIALS_DIRECTORY");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
	ck_assert_int_eq(close(fd), 0);
	ck_assert_msg(conf_load(path, &c, err, sizeof(err)) == 0, "%s", err);
	unlink(path);
	return c;
}

START_TEST(same_text_laid_out_differently_is_the_same)
{
	struct conf	*a, *b;

	a = load(AGENT FLOW_APP FLOW_WEB);
	b = load("; a comment\n" FLOW_WEB "\n" AGENT "\n\n" FLOW_APP);
	ck_assert_uint_eq(conf_agent_diff(a, b, NULL), 0);
	ck_assert(conf_agent_same(a, b));
	ck_assert(conf_flow_same(conf_flow_named(a, "app"),
	    conf_flow_named(b, "app")));
	ck_assert(conf_flow_same(conf_flow_named(a, "web"),
	    conf_flow_named(b, "web")));
	ck_assert_ptr_null(conf_flow_diff(conf_flow_named(a, "web"),
	    conf_flow_named(b, "web")));
	conf_free(a);
	conf_free(b);
}
END_TEST

START_TEST(a_changed_flow_names_its_key)
{
	struct conf	*a, *b;

	a = load(AGENT FLOW_APP FLOW_WEB);
	b = load(AGENT FLOW_APP "maxBufferAgeMillis = 300\n" FLOW_WEB);
	ck_assert_str_eq(conf_flow_diff(conf_flow_named(a, "app"),
	    conf_flow_named(b, "app")), "maxBufferAgeMillis");
	ck_assert(conf_flow_same(conf_flow_named(a, "web"),
	    conf_flow_named(b, "web")));
	ck_assert(conf_agent_same(a, b));
	/* Other flows, even with the same keys, are not the same flow. */
	ck_assert_str_eq(conf_flow_diff(conf_flow_named(a, "app"),
	    conf_flow_named(a, "web")), "name");
	conf_free(a);
	conf_free(b);
}
END_TEST

START_TEST(a_disabled_flow_is_not_named)
{
	struct conf	*c;

	c = load(AGENT FLOW_APP "enable = false\n" FLOW_WEB);
	ck_assert_ptr_null(conf_flow_named(c, "app"));
	ck_assert_ptr_nonnull(conf_flow_named(c, "web"));
	ck_assert_ptr_null(conf_flow_named(c, "nosuch"));
	conf_free(c);
}
END_TEST

/* Each [agent] change costs what its kind says. */
START_TEST(agent_changes_are_classified)
{
	static const struct {
		const char	*line;
		unsigned	 diff;
		const char	*first;
	} cases[] = {
		{ "sk = AnotherSecret99x\n", CONF_DIFF_CLIENT, "sk" },
		{ "endpoint = https://127.0.0.1:9\n", CONF_DIFF_CLIENT,
		  "endpoint" },
		{ "PROXY_HOST = proxy.example\n", CONF_DIFF_CLIENT,
		  "PROXY_HOST" },
		{ "sslVerify = false\n", CONF_DIFF_CLIENT, "sslVerify" },
		{ "logLevel = DEBUG\n", CONF_DIFF_AGENT, "logLevel" },
		{ "maxMemoryBytes = 8388608\n", CONF_DIFF_AGENT,
		  "maxMemoryBytes" },
		{ "spoolMaxBytes = 1024\n", CONF_DIFF_AGENT, "spoolMaxBytes" },
		{ "dedupeOnRestart = off\n", CONF_DIFF_AGENT,
		  "dedupeOnRestart" },
		{ "body.serialize.type = protobuf\n", CONF_DIFF_FLOWS,
		  "body.serialize.type" },
		{ "pausedRetrySeconds = 5\n", CONF_DIFF_FLOWS,
		  "pausedRetrySeconds" },
		/* The costliest kind names the key. */
		{ "logLevel = DEBUG\nsk = AnotherSecret99x\n",
		  CONF_DIFF_AGENT | CONF_DIFF_CLIENT, "sk" },
		{ "sk = AnotherSecret99x\ndeadLetterFile = /tmp/dl\n",
		  CONF_DIFF_CLIENT | CONF_DIFF_FLOWS, "deadLetterFile" },
	};
	struct conf	*a, *b;
	const char	*first;
	char		 text[1024];
	size_t		 i;

	a = load(AGENT FLOW_APP);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		/* A case that sets sk sets it instead of the first. */
		snprintf(text, sizeof(text), AGENT_NO_SK "%s%s" FLOW_APP,
		    strstr(cases[i].line, "sk = ") != NULL ? "" : SK,
		    cases[i].line);
		b = load(text);
		ck_assert_msg(conf_agent_diff(a, b, &first) == cases[i].diff,
		    "%s: diff %#x", cases[i].line,
		    conf_agent_diff(a, b, NULL));
		ck_assert_str_eq(first, cases[i].first);
		ck_assert(!conf_agent_same(a, b));
		/* The flows' own keys did not change. */
		ck_assert(conf_flow_same(conf_flow_named(a, "app"),
		    conf_flow_named(b, "app")));
		conf_free(b);
	}
	conf_free(a);
}
END_TEST

/* The value of a key, kept to put it back before conf_free. */
union saved {
	char		*s;
	long long	 i;
	bool		 b;
	int		 e;
};

/* Change key k of base (a struct conf or conf_flow) to another value. */
static void
change(const struct key *k, void *base, union saved *saved)
{
	static char	 other[] = "another-value";
	long long	*ip;

	switch (k->type) {
	case KT_STRING:
	case KT_WORD:
		saved->s = *str_at(base, k);
		*str_at(base, k) = other;
		return;
	case KT_INT:
		ip = int_at(base, k);
		saved->i = *ip;
		*ip = *ip < k->max ? *ip + 1 : *ip - 1;
		return;
	case KT_BOOL:
		saved->b = *bool_at(base, k);
		*bool_at(base, k) = !saved->b;
		return;
	case KT_ENUM:
		saved->e = *enum_at(base, k);
		*enum_at(base, k) = saved->e == 0 ? 1 : 0;
		return;
	}
}

static void
restore(const struct key *k, void *base, const union saved *saved)
{
	switch (k->type) {
	case KT_STRING:
	case KT_WORD:
		*str_at(base, k) = saved->s;
		return;
	case KT_INT:
		*int_at(base, k) = saved->i;
		return;
	case KT_BOOL:
		*bool_at(base, k) = saved->b;
		return;
	case KT_ENUM:
		*enum_at(base, k) = saved->e;
		return;
	}
}

/* Every key of the table, changed alone, is found: a key added to the
 * table is compared at the next reload without a change to conf_diff.c. */
START_TEST(every_key_of_the_table_is_compared)
{
	struct conf	*a, *b;
	struct conf_flow *fb;
	const struct key *k;
	const char	*first;
	union saved	 saved;
	unsigned	 want;
	size_t		 nflow = 0, nagent = 0;

	a = load(AGENT FLOW_APP);
	b = load(AGENT FLOW_APP);
	fb = &b->flows[0];
	for (k = conf_keys; k < conf_keys + conf_nkeys; k++) {
		if (k->sect == KS_FLOW) {
			change(k, fb, &saved);
			ck_assert_msg(conf_flow_diff(&a->flows[0], fb) != NULL &&
			    strcmp(conf_flow_diff(&a->flows[0], fb),
			    k->name) == 0, "%s not compared", k->name);
			ck_assert(conf_agent_same(a, b));
			restore(k, fb, &saved);
			nflow++;
		} else {
			change(k, b, &saved);
			want = k->flags & KF_RELOAD_CLIENT ? CONF_DIFF_CLIENT :
			    k->flags & KF_RELOAD_AGENT ? CONF_DIFF_AGENT :
			    CONF_DIFF_FLOWS;
			ck_assert_msg(conf_agent_diff(a, b, &first) == want &&
			    strcmp(first, k->name) == 0, "%s not compared",
			    k->name);
			ck_assert(conf_flow_same(&a->flows[0], fb));
			restore(k, b, &saved);
			nagent++;
		}
		ck_assert(conf_agent_same(a, b));
		ck_assert(conf_flow_same(&a->flows[0], fb));
	}
	ck_assert_uint_gt(nflow, 40);
	ck_assert_uint_gt(nagent, 30);
	conf_free(a);
	conf_free(b);
}
END_TEST

static Suite *
confdiff_suite(void)
{
	Suite	*s = suite_create("confdiff");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, same_text_laid_out_differently_is_the_same);
	tcase_add_test(tc, a_changed_flow_names_its_key);
	tcase_add_test(tc, a_disabled_flow_is_not_named);
	tcase_add_test(tc, agent_changes_are_classified);
	tcase_add_test(tc, every_key_of_the_table_is_compared);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(confdiff_suite());
}
