/*
 * Unit tests for drop-in flow files (conf_dropin.c): every *.ini of
 * agent.d beside agent.ini is read after it, in name order; a drop-in
 * holds [flow:NAME] sections only; an [agent] section or a flow name used
 * twice names both places; every error names its own file and line.  Each
 * test has its own directory.
 */
#include "config.h"

#include <sys/stat.h>

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "conf/conf.h"
#include "testutil.h"

/* 7 lines: [agent] with the required keys, then one flow. */
#define AGENT_INI \
	"[agent]\n" \
	"region = cn-north-4\n" \
	"projectId = 0123456789abcdef\n" \
	"ak = AKID\n" \
	"sk = Zq9SecretValue7x\n" \
	"[flow:main]\n" \
	"DISStream = s1\n" \
	"filePattern = /var/log/main.log\n"

#define FLOW(name) \
	"[flow:" name "]\n" \
	"DISStream = s2\n" \
	"filePattern = /var/log/" name ".log\n"

static char	 dir[256];
static char	 ini[300];
static char	 dropins[300];

static void
setup(void)
{
	unsetenv("DIS_AK");
	unsetenv("DIS_SK");
	unsetenv("CREDENTIALS_DIRECTORY");
	tu_tmpdir(dir, sizeof(dir), "check_conf_dropin");
	tu_path(ini, sizeof(ini), dir, "agent.ini");
	tu_path(dropins, sizeof(dropins), dir, "agent.d");
	tu_write_str(ini, AGENT_INI);
	chmod(ini, 0600);
	ck_assert_int_eq(mkdir(dropins, 0755), 0);
}

static void
teardown(void)
{
	tu_rmtree(dir);
}

static void
dropin(const char *name, const char *text)
{
	char	 path[400];

	tu_path(path, sizeof(path), dropins, name);
	tu_write_str(path, text);
}

/* Loading fails with exactly "<dir>/" + want. */
static void
assert_fails(const char *want)
{
	struct conf	*c = NULL;
	char		 err[1024], full[1024];
	char		*w;

	ck_assert_int_eq(conf_load(ini, &c, err, sizeof(err)), -1);
	ck_assert_ptr_null(c);
	/* "@" in want stands for the test's directory. */
	full[0] = '\0';
	for (w = (char *)want; *w != '\0'; w++) {
		if (*w == '@')
			strncat(full, dir, sizeof(full) - strlen(full) - 1);
		else
			strncat(full, w, 1);
	}
	ck_assert_str_eq(err, full);
}

START_TEST(dropins_are_read_in_name_order_after_agent_ini)
{
	struct conf	*c;
	char		 err[1024], sub[400];

	dropin("b-web.ini", FLOW("web"));
	dropin("a-db.ini", "; the database's flows\n" FLOW("db") FLOW("db2"));
	dropin("c-empty.ini", "; nothing yet\n");
	/* Not drop-ins: another suffix, a hidden file, a directory. */
	dropin("web.ini.dpkg-old", FLOW("old"));
	dropin("web.conf", FLOW("conf"));
	dropin(".hidden.ini", FLOW("hidden"));
	tu_path(sub, sizeof(sub), dropins, "dir.ini");
	ck_assert_int_eq(mkdir(sub, 0755), 0);

	if (conf_load(ini, &c, err, sizeof(err)) != 0)
		ck_abort_msg("unexpected error: %s", err);
	ck_assert_uint_eq(c->nflows, 4);
	ck_assert_str_eq(c->flows[0].name, "main");
	ck_assert_str_eq(c->flows[1].name, "db");
	ck_assert_str_eq(c->flows[2].name, "db2");
	ck_assert_str_eq(c->flows[3].name, "web");
	ck_assert_uint_eq(c->nfiles, 4);
	ck_assert_str_eq(c->files[0], ini);
	ck_assert_ptr_eq(c->flows[0].file, c->files[0]);
	ck_assert_ptr_nonnull(strstr(c->files[1], "/agent.d/a-db.ini"));
	ck_assert_ptr_eq(c->flows[1].file, c->files[1]);
	ck_assert_ptr_eq(c->flows[2].file, c->files[1]);
	ck_assert_ptr_nonnull(strstr(c->files[2], "/agent.d/b-web.ini"));
	ck_assert_ptr_eq(c->flows[3].file, c->files[2]);
	ck_assert_ptr_nonnull(strstr(c->files[3], "/agent.d/c-empty.ini"));
	ck_assert_int_eq(c->flows[3].line, 1);
	conf_free(c);
}
END_TEST

START_TEST(no_dropin_directory_is_no_dropins)
{
	struct conf	*c;
	char		 err[1024];

	ck_assert_int_eq(rmdir(dropins), 0);
	if (conf_load(ini, &c, err, sizeof(err)) != 0)
		ck_abort_msg("unexpected error: %s", err);
	ck_assert_uint_eq(c->nflows, 1);
	ck_assert_uint_eq(c->nfiles, 1);
	conf_free(c);
}
END_TEST

START_TEST(agent_section_in_a_dropin_names_both_places)
{
	dropin("web.ini", FLOW("web") "\n[agent]\nregion = cn-north-1\n");
	assert_fails("@/agent.d/web.ini:5: [agent] is not allowed in a "
	    "drop-in, which holds [flow:NAME] sections only; the [agent] "
	    "section is at @/agent.ini:1");
}
END_TEST

START_TEST(flow_name_used_twice_names_both_places)
{
	dropin("web.ini", "\n" FLOW("main"));
	assert_fails("@/agent.d/web.ini:2: duplicate section [flow:main] "
	    "(first at @/agent.ini:6)");
}
END_TEST

START_TEST(flow_name_in_two_dropins_names_both_files)
{
	dropin("a.ini", FLOW("web"));
	dropin("b.ini", "; b\n; b\n" FLOW("web"));
	assert_fails("@/agent.d/b.ini:3: duplicate section [flow:web] "
	    "(first at @/agent.d/a.ini:1)");
}
END_TEST

START_TEST(errors_name_the_dropin_and_its_line)
{
	dropin("web.ini", FLOW("web") "bogusKey = 1\n");
	assert_fails("@/agent.d/web.ini:4: unknown key 'bogusKey' in "
	    "[flow:web]");
	/* The checks once every file is read name it too. */
	dropin("web.ini", "; web\n[flow:web]\nDISStream = s2\n");
	assert_fails("@/agent.d/web.ini:2: [flow:web] is missing required "
	    "key 'filePattern'");
	dropin("web.ini", FLOW("web") "retryInitialBackoffMillis = 500\n"
	    "retryMaxBackoffMillis = 100\n");
	assert_fails("@/agent.d/web.ini:5: retryMaxBackoffMillis = 100 is "
	    "less than retryInitialBackoffMillis = 500");
	dropin("web.ini", "DISStream = s2\n");
	assert_fails("@/agent.d/web.ini:1: key 'DISStream' is outside any "
	    "section");
	/* agent.ini's own errors still name agent.ini. */
	dropin("web.ini", FLOW("web"));
	tu_write_str(ini, AGENT_INI "nope = 1\n");
	assert_fails("@/agent.ini:9: unknown key 'nope' in [flow:main]");
}
END_TEST

START_TEST(flows_may_all_live_in_dropins)
{
	struct conf	*c;
	char		 err[1024];

	tu_write_str(ini, "[agent]\nregion = cn-north-4\n"
	    "projectId = 0123456789abcdef\nak = AKID\nsk = Zq9SecretValue7x\n");
	assert_fails("@/agent.ini: no [flow:NAME] section");
	dropin("web.ini", FLOW("web"));
	if (conf_load(ini, &c, err, sizeof(err)) != 0)
		ck_abort_msg("unexpected error: %s", err);
	ck_assert_uint_eq(c->nflows, 1);
	ck_assert_str_eq(c->flows[0].name, "web");
	conf_free(c);
}
END_TEST

START_TEST(dropin_directory_that_is_a_file_is_an_error)
{
	ck_assert_int_eq(rmdir(dropins), 0);
	tu_write_str(dropins, "not a directory\n");
	assert_fails("@/agent.ini: cannot read the drop-in directory "
	    "@/agent.d: Not a directory");
}
END_TEST

static Suite *
conf_dropin_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("conf_dropin");
	tc = tcase_create("dropins");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, dropins_are_read_in_name_order_after_agent_ini);
	tcase_add_test(tc, no_dropin_directory_is_no_dropins);
	tcase_add_test(tc, agent_section_in_a_dropin_names_both_places);
	tcase_add_test(tc, flow_name_used_twice_names_both_places);
	tcase_add_test(tc, flow_name_in_two_dropins_names_both_files);
	tcase_add_test(tc, errors_name_the_dropin_and_its_line);
	tcase_add_test(tc, flows_may_all_live_in_dropins);
	tcase_add_test(tc, dropin_directory_that_is_a_file_is_an_error);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(conf_dropin_suite());
}
