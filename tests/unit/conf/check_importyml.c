/*
 * Unit tests for importyml: the fixture tests/data/agent.yml (a DIS Agent
 * configuration with two flows, an OBS flow, comments and keys this agent
 * does not have) converts to an exact agent.ini with an exact list of notes,
 * and that agent.ini passes conf_load.  Also YAML value conversion, flow
 * names, keys in the wrong section, secrets kept out of every message,
 * values agent.ini cannot hold, encrypted values and proxy keys carried
 * over, and each way the import fails with exit 1 and nothing written:
 * invalid YAML (with its line), a missing file, a file of the wrong shape,
 * duplicate keys, alias bombs.
 */
#include "config.h"

#include <sys/stat.h>

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "conf/conf.h"
#include "conf/cred.h"
#include "conf/importyml.h"
#include "testutil.h"

static char	 dir[256];
static char	 yml[PATH_MAX];		/* dir/agent.yml */
static char	 ini[PATH_MAX];		/* dir/agent.ini */

static void
setup(void)
{
	tu_tmpdir(dir, sizeof(dir), "check_importyml");
	tu_path(yml, sizeof(yml), dir, "agent.yml");
	tu_path(ini, sizeof(ini), dir, "agent.ini");
	unsetenv("DIS_AK");
	unsetenv("DIS_SK");
}

static void
teardown(void)
{
	tu_rmtree(dir);
}

/* tests/data/agent.yml. */
static char *
fixture(void)
{
	return tu_data("agent.yml", NULL);
}

/* Import yml; the exit code, what went to out and to err (new). */
static int
import(char **out, char **err)
{
	FILE	*o, *e;
	size_t	 ol, el;
	int	 rc;

	o = open_memstream(out, &ol);
	e = open_memstream(err, &el);
	ck_assert(o != NULL && e != NULL);
	rc = importyml_main(yml, o, e);
	ck_assert_int_eq(fclose(o), 0);
	ck_assert_int_eq(fclose(e), 0);
	return rc;
}

/* Import text as yml and expect success; out is also written to ini. */
static char *
import_ok(const char *text, char **err)
{
	char	*out;

	tu_write_str(yml, text);
	ck_assert_int_eq(import(&out, err), 0);
	tu_write_str(ini, out);
	return out;
}

/* tmpl with "@" replaced by the yml path, "@@" by "@" (new). */
static char *
expand(const char *tmpl)
{
	struct buf	 b;

	buf_init(&b);
	buf_reserve(&b, 0);
	for (; *tmpl != '\0'; tmpl++) {
		if (tmpl[0] == '@' && tmpl[1] == '@')
			buf_addc(&b, *tmpl++);
		else if (*tmpl == '@')
			buf_addstr(&b, yml);
		else
			buf_addc(&b, *tmpl);
	}
	return b.data;
}

/* The last line on err: what to run next, and the checkpoint file. */
#define NEXT_STEP \
	"@: next, with the DIS Agent stopped and before disagent first " \
	"starts, carry its positions over (no line lost or sent twice): " \
	"disagent import-state -c " SYSCONFDIR_AGENT_INI " "
#define NEXT_DEFAULT NEXT_STEP "DIS-AGENT-DIR/conf/dis-agent_since.db " \
	"(DIS-AGENT-DIR: the directory the DIS Agent runs in; dis-agent is " \
	"its -n name, NAME_since.db for another, since.db from older " \
	"releases)\n"

/* What ends every flow: the DIS Agent followed every link. */
#define LINKS_NOTE \
"; differs: the DIS Agent followed every symbolic link; disagent follows a\n" \
";   link only when root or the owner of what it leads to owns it, and skips\n" \
";   any other with a WARN naming it (followSymlinks = owner). followSymlinks\n" \
";   = always follows every link, as the DIS Agent did\n" \
";followSymlinks = always\n"

static const char expected_ini[] =
"; agent.ini for disagent, made by disagent --import-yml from\n"
"; @\n"
"; What could not be carried over is in comments below that say why.\n"
"; Check the result with: disagent -t -c FILE\n"
"; It holds secrets: make it readable by the agent only (chmod 600).\n"
"\n"
"[agent]\n"
"region = cn-north-4\n"
"ak = AKEXAMPLE0123456789\n"
"sk = SkExample0123456789abcdefghijklmnopqrstuv\n"
"projectId = 0123456789abcdef0123456789abcdef\n"
"endpoint = https://dis.cn-north-4.myhuaweicloud.com\n"
"connectionTimeOutSeconds = 30\n"
"socketTimeOutSeconds = 60\n"
"; not carried over: checkpointFile = "
"/opt/dis-agent/data/dis-agent_since.db\n"
";   (the DIS Agent's SQLite checkpoints: disagent keeps its own state "
"file;\n"
";   disagent import-state carries the positions over)\n"
"checkpointTimeToLiveDays = 7\n"
"; not carried over: records.retries = 20 (disagent retries without "
"limit and\n"
";   never drops records)\n"
"records.retriable.error.code = DIS.4303,DIS.5\n"
"body.serialize.type = json\n"
"body.compress.enabled = false\n"
"data.encrypt.enabled = true\n"
"data.password = p@@ssw0rd-not-to-be-shown\n"
"; dropped: useHttpGzip = true (no effect in the DIS Agent either)\n"
"log.statusReportingPeriodSeconds = 30\n"
"PROXY_HOST = proxy.example.com\n"
"PROXY_PORT = 3128\n"
"\n"
"[flow:app-logs]\n"
"DISStream = app-logs\n"
"filePattern = /var/log/app/*.log\n"
"initialPosition = START_OF_FILE\n"
"maxBufferAgeMillis = 5000\n"
"maxBufferSizeRecords = 1000\n"
"partitionKeyOption = RANDOM_INT\n"
"maxFileCheckingMillis = 500\n"
"fileEncoding = UTF-8\n"
"recordDelimiter = \\n\n"
"multiLineStartPattern = ^\\d{4}-\\d{2}-\\d{2}\n"
"; not carried over: sendingThreadSize = 1 (see maxInFlightRequests; "
"ordered\n"
";   = true sends one request at a time)\n"
LINKS_NOTE
"\n"
"[flow:nginx-access]\n"
"DISStream = nginx-access\n"
"filePattern = /var/log/nginx/access*.log\n"
"initialPosition = END_OF_FILE\n"
"maxBufferAgeMillis = 3000\n"
"enable = true\n"
"directoryRecursionEnabled = true\n"
"retryMaxBackoffMillis = 30000\n"
LINKS_NOTE
"\n"
"; not carried over: the flow at line 68 with OBSStream = "
"archive-stream\n"
";   (uploading files to OBS is not supported)\n";

static const char expected_err[] =
"@:19: not carried over: checkpointFile = "
"/opt/dis-agent/data/dis-agent_since.db (the DIS Agent's SQLite "
"checkpoints: disagent keeps its own state file; disagent import-state "
"carries the positions over)\n"
"@:21: not carried over: records.retries = 20 (disagent retries "
"without limit and never drops records)\n"
"@:29: dropped: useHttpGzip = true (no effect in the DIS Agent "
"either)\n"

"@:50: not carried over: sendingThreadSize = 1 (see "
"maxInFlightRequests; ordered = true sends one request at a time)\n"
"@:37: differs: the DIS Agent followed every symbolic link; disagent "
"follows a link only when root or the owner of what it leads to owns it, "
"and skips any other with a WARN naming it (followSymlinks = owner). "
"followSymlinks = always follows every link, as the DIS Agent did\n"

"@:68: not carried over: the flow at line 68 with OBSStream = "
"archive-stream (uploading files to OBS is not supported)\n"
"@: 4 keys not carried over, 1 dropped; each is a comment in the "
"output\n"
NEXT_STEP "/opt/dis-agent/data/dis-agent_since.db\n";

START_TEST(fixture_converts_to_the_exact_ini_and_notes)
{
	char	*text, *out, *err, *want;

	text = fixture();
	out = import_ok(text, &err);
	want = expand(expected_ini);
	ck_assert_str_eq(out, want);
	free(want);
	want = expand(expected_err);
	ck_assert_str_eq(err, want);
	/* The secrets are in the ini (sk, data.password), never in a
	 * note. */
	ck_assert_ptr_null(strstr(err, "SkExample"));
	ck_assert_ptr_null(strstr(err, "p@ssw0rd"));
	free(want);
	free(text);
	free(out);
	free(err);
}
END_TEST

START_TEST(generated_ini_passes_conf_load)
{
	struct conf	*c;
	char		*text, *out, *err, msg[1024];

	text = fixture();
	out = import_ok(text, &err);
	if (conf_load(ini, &c, msg, sizeof(msg)) != 0)
		ck_abort_msg("%s\n%s", msg, out);
	ck_assert_str_eq(c->region, "cn-north-4");
	ck_assert_str_eq(c->ak, "AKEXAMPLE0123456789");
	ck_assert_str_eq(c->checkpoint_file, "/var/lib/disagent/state.json");
	ck_assert_str_eq(c->retriable_codes, "DIS.4303,DIS.5");
	ck_assert_uint_eq(c->nflows, 2);
	ck_assert_str_eq(c->flows[0].name, "app-logs");
	ck_assert_int_eq(c->flows[0].max_buffer_records, 1000);
	ck_assert_int_eq(c->flows[0].max_file_checking_ms, 500);
	ck_assert_str_eq(c->flows[1].name, "nginx-access");
	ck_assert_str_eq(c->flows[1].file_pattern,
	    "/var/log/nginx/access*.log");
	ck_assert_int_eq(c->flows[1].initial_position, POS_END_OF_FILE);
	ck_assert(c->flows[1].enable);
	ck_assert_int_eq(c->flows[1].retry_max_backoff_ms, 30000);
	conf_free(c);
	free(text);
	free(out);
	free(err);
}
END_TEST

static const char head_nosk[] =
"; agent.ini for disagent, made by disagent --import-yml from\n"
"; @\n"
"; What could not be carried over is in comments below that say why.\n"
"; Check the result with: disagent -t -c FILE\n"
"\n";

START_TEST(values_are_read_as_yaml_1_1)
{
	char	*out, *err, *want;

	out = import_ok("region: cn-north-1\n"
	    "flows:\n"
	    "  - DISStream: s\n"
	    "    filePattern: \"/l/*.log\"\n"
	    "    enable: On\n"
	    "    maxBufferSizeRecords: +1_0\n"
	    "    maxBufferAgeMillis: 2_500\n"
	    "    partitionKeyOption: 'on'\n"
	    "  - DISStream: s\n"
	    "    filePattern: /m/*.log\n"
	    "    enable: NO\n"
	    "    initialPosition: ~\n", &err);
	want = expand(head_nosk);
	ck_assert_int_eq(strncmp(out, want, strlen(want)), 0);
	ck_assert_str_eq(out + strlen(want),
	    "[agent]\n"
	    "region = cn-north-1\n"
	    "; ak and sk are not set here: give them to the agent as DIS_AK "
	    "and DIS_SK,\n;   or as the systemd credentials ak and sk.\n"
	    "\n"
	    "[flow:s]\n"
	    "DISStream = s\n"
	    "filePattern = /l/*.log\n"
	    "enable = true\n"
	    "maxBufferSizeRecords = 10\n"
	    "maxBufferAgeMillis = 2500\n"
	    "partitionKeyOption = on\n"
	    LINKS_NOTE
	    "\n"
	    "[flow:s-2]\n"
	    "DISStream = s\n"
	    "filePattern = /m/*.log\n"
	    "enable = false\n"
	    "; empty: initialPosition (the default applies)\n"
	    LINKS_NOTE);
	free(want);
	want = expand("@:3: differs: the DIS Agent followed every symbolic "
	    "link; disagent follows a link only when root or the owner of "
	    "what it leads to owns it, and skips any other with a WARN "
	    "naming it (followSymlinks = owner). followSymlinks = always "
	    "follows every link, as the DIS Agent did\n" NEXT_DEFAULT);
	ck_assert_str_eq(err, want);
	free(want);
	free(out);
	free(err);
}
END_TEST

START_TEST(flow_names_come_from_the_stream_and_are_unique)
{
	char	*out, *err;

	out = import_ok("flows:\n"
	    "  - DISStream: 'a b/c'\n"
	    "  - streamId: ID1\n"
	    "  - DISStream: a_b_c\n"
	    "  - DISStream: a_b_c\n"
	    "  - filePattern: /x/*.log\n", &err);
	ck_assert_ptr_nonnull(strstr(out, "\n[flow:a_b_c]\n; not carried over: "
	    "DISStream = 'a b/c' is not a valid stream name (1-64\n"));
	ck_assert_ptr_nonnull(strstr(out, "\n[flow:ID1]\nstreamId = ID1\n"));
	ck_assert_ptr_nonnull(strstr(out, "\n[flow:a_b_c-2]\n"));
	ck_assert_ptr_nonnull(strstr(out, "\n[flow:a_b_c-3]\n"));
	ck_assert_ptr_nonnull(strstr(out, "\n; not carried over: the flow at "
	    "line 6 (it has no DISStream)\n"));
	ck_assert_ptr_nonnull(strstr(err, ":6: not carried over: the flow at "
	    "line 6 (it has no DISStream)\n"));
	free(out);
	free(err);
}
END_TEST

START_TEST(keys_in_the_wrong_section_or_unknown_are_noted)
{
	char	*out, *err, *want;

	out = import_ok("region: cn-north-1\n"
	    "maxBufferAgeMillis: 100\n"
	    "someFutureKey: [1, 2]\n"
	    "flows:\n"
	    "  - DISStream: s\n"
	    "    filePattern: /l/*.log\n"
	    "    region: cn-north-4\n"
	    "    maxFileCheckingMillis: 700\n"
	    "    rescanIntervalMillis: 800\n"
	    "    maxBufferAgeMillis: 5\n"
	    "    \"bad\\nkey\": 1\n", &err);
	ck_assert_ptr_nonnull(strstr(out, "region = cn-north-1\n"
	    "; not carried over: maxBufferAgeMillis = 100 (it belongs in "
	    "each\n;   [flow:NAME])\n"
	    "; not carried over: someFutureKey (a list, not a single "
	    "value)\n"));
	ck_assert_ptr_nonnull(strstr(out, "filePattern = /l/*.log\n"
	    "; not carried over: region = cn-north-4 (it belongs in [agent])\n"
	    "maxFileCheckingMillis = 700\n"
	    "rescanIntervalMillis = 800\n"
	    "; not carried over: maxBufferAgeMillis = 5 is out of range "
	    "(100..900000)\n"
	    "; not carried over: bad\\nkey = 1 (unknown to disagent, and not a "
	    "key the DIS\n;   Agent 1.2.4 reads)\n"));
	want = expand("@: 5 keys not carried over, 0 dropped; each is a "
	    "comment in the output\n");
	ck_assert_ptr_nonnull(strstr(err, want));
	free(want);
	free(out);
	free(err);
}
END_TEST

/*
 * What the DIS Agent 1.2.4 does with its own keys, carried over as such:
 * bodySerializeType is body.serialize.type (and wins over it); keys inert
 * there are dropped saying so; DIS Agent keys without an equivalent say
 * what disagent does instead; fileComparator NEWEST_FIRST is the same.
 */
START_TEST(dis_agent_keys_are_carried_as_the_dis_agent_reads_them)
{
	char	*out, *err, *want;

	out = import_ok("region: cn-north-1\n"
	    "body.serialize.type: json\n"
	    "bodySerializeType: protobuf\n"
	    "maxSendingThreads: 4\n"
	    "maxSendingThreadsPerCore: 2\n"
	    "configProviderClass: com.example.Provider\n"
	    "flows:\n"
	    "  - DISStream: s\n"
	    "    filePattern: /l/*.log\n"
	    "    resultLogLevel: INFO\n"
	    "    fileComparator: NEWEST_FIRST\n"
	    "    waitOnFullRetryQueueMillis: 100\n", &err);
	ck_assert_ptr_nonnull(strstr(out, "region = cn-north-1\n"
	    "; not carried over: body.serialize.type = json "
	    "(bodySerializeType replaces\n;   it in the DIS Agent)\n"
	    "body.serialize.type = protobuf\n"
	    "; dropped: maxSendingThreads = 4 (no effect in the DIS Agent "
	    "either: each\n;   flow's senders are sendingThreadSize threads)\n"
	    "; dropped: maxSendingThreadsPerCore = 2 (no effect in the DIS "
	    "Agent either:\n;   it only sets the default of "
	    "maxSendingThreads, which is unused)\n"
	    "; dropped: configProviderClass = com.example.Provider (no effect "
	    "in the DIS\n;   Agent either: nothing reads it)\n"));
	ck_assert_ptr_nonnull(strstr(out, "filePattern = /l/*.log\n"
	    "; not carried over: resultLogLevel = INFO (a DIS Agent key "
	    "disagent has no\n;   equivalent for: each reply is logged as "
	    "\"Put N records to [STREAM] spend\n;   Tms\" at INFO, at WARN "
	    "when records failed; logLevel says what is logged)\n"
	    "; same in disagent: fileComparator = NEWEST_FIRST (every file, a "
	    "rotated one\n;   to its end, is read in order)\n"
	    "; dropped: waitOnFullRetryQueueMillis = 100 (no effect in the "
	    "DIS Agent\n;   either: nothing reads it)\n"));
	want = expand("@: 2 keys not carried over, 4 dropped; each is a "
	    "comment in the output\n");
	ck_assert_ptr_nonnull(strstr(err, want));
	free(want);
	free(out);
	free(err);
}
END_TEST

/*
 * ignoreNotUpdatedFileSeconds as the DIS Agent reads it
 * (SourceFile.java:132): only with ignoreNotUpdatedFileEnabled: true, in
 * a recursive flow, above 0; carried then with what differs.
 */
START_TEST(ignore_not_updated_seconds_only_where_the_dis_agent_applies_it)
{
	char		*out, *err;
	const char	*p;

	out = import_ok("region: cn-north-1\n"
	    "flows:\n"
	    "  - DISStream: unset\n"
	    "    filePattern: /a/*.log\n"
	    "    ignoreNotUpdatedFileEnabled: false\n"
	    "    ignoreNotUpdatedFileSeconds: 3600\n"
	    "  - DISStream: missing\n"
	    "    filePattern: /b/*.log\n"
	    "    ignoreNotUpdatedFileSeconds: 3600\n"
	    "  - DISStream: flat\n"
	    "    filePattern: /c/*.log\n"
	    "    ignoreNotUpdatedFileSeconds: 3600\n"
	    "    ignoreNotUpdatedFileEnabled: true\n"
	    "  - DISStream: deep\n"
	    "    filePattern: /d/*.log\n"
	    "    ignoreNotUpdatedFileEnabled: true\n"
	    "    ignoreNotUpdatedFileSeconds: 3600\n"
	    "    directoryRecursionEnabled: true\n", &err);
	ck_assert_ptr_nonnull(strstr(out, "[flow:unset]\nDISStream = unset\n"
	    "filePattern = /a/*.log\n"
	    "; same in disagent: ignoreNotUpdatedFileEnabled = false (it only "
	    "switches\n;   ignoreNotUpdatedFileSeconds on or off)\n"
	    "; dropped: ignoreNotUpdatedFileSeconds = 3600 (no effect in the "
	    "DIS Agent\n;   either: only with ignoreNotUpdatedFileEnabled: "
	    "true)\n"));
	ck_assert_ptr_nonnull(strstr(out, "[flow:missing]\n"
	    "DISStream = missing\nfilePattern = /b/*.log\n"
	    "; dropped: ignoreNotUpdatedFileSeconds = 3600 (no effect in the "
	    "DIS Agent\n;   either: only with ignoreNotUpdatedFileEnabled: "
	    "true)\n"));
	ck_assert_ptr_nonnull(strstr(out, "[flow:flat]\nDISStream = flat\n"
	    "filePattern = /c/*.log\n"
	    "; dropped: ignoreNotUpdatedFileSeconds = 3600 (no effect in the "
	    "DIS Agent\n;   either: only in flows with "
	    "directoryRecursionEnabled: true)\n"));
	ck_assert_ptr_nonnull(strstr(out, "filePattern = /d/*.log\n"
	    "; same in disagent: ignoreNotUpdatedFileEnabled = true (it only "
	    "switches\n;   ignoreNotUpdatedFileSeconds on or off)\n"
	    "ignoreNotUpdatedFileSeconds = 3600\n"
	    "; differs: ignoreNotUpdatedFileSeconds = 3600: a file not "
	    "modified for that\n"));
	/* Only the recursive flow's is in the result. */
	p = strstr(out, "\nignoreNotUpdatedFileSeconds = ");
	ck_assert(p != NULL && p > strstr(out, "/d/*.log"));
	ck_assert_ptr_null(strstr(p + 1, "\nignoreNotUpdatedFileSeconds = "));
	free(out);
	free(err);
}
END_TEST

START_TEST(secret_values_never_appear_in_messages)
{
	char	*out, *err;

	out = import_ok("ak: AK\n"
	    "sk: \"secret with blank\"\n"
	    "PROXY_PASSWORD: \"hunter2 ;x\"\n"
	    "flows: []\n", &err);
	ck_assert_ptr_null(strstr(out, "secret with blank"));
	ck_assert_ptr_null(strstr(err, "secret with blank"));
	ck_assert_ptr_null(strstr(out, "hunter2"));
	ck_assert_ptr_null(strstr(err, "hunter2"));
	ck_assert_ptr_nonnull(strstr(out, "; not carried over: sk: the value "
	    "is not a valid key (printable ASCII\n;   without blanks)\n"));
	ck_assert_ptr_nonnull(strstr(out, "PROXY_PASSWORD = (hidden) (cannot "
	    "be written"));
	/* No secret in the output: no warning about it either. */
	ck_assert_ptr_null(strstr(out, "chmod 600"));
	free(out);
	free(err);
}
END_TEST

START_TEST(values_agent_ini_cannot_hold_stay_comments)
{
	struct conf	*c;
	struct buf	 y;
	char		*out, *err, *line, *save, msg[1024];
	int		 i;

	buf_init(&y);
	buf_addstr(&y, "region: cn-north-1\nak: A\nsk: B\n"
	    "projectId: P1\nflows:\n  - DISStream: s\n"
	    "    filePattern: /l/*.log\n"
	    "    partitionKeyOption: 'a ;b'\n"
	    "    streamType: |\n      COMMON\n      more\n"
	    "    unknownLongValue: ");
	for (i = 0; i < 500; i++)
		buf_addc(&y, (char)('a' + i % 26));
	/* conf's reason quotes the whole value: a 300-letter word. */
	buf_addstr(&y, "\n    initialPosition: ");
	for (i = 0; i < 300; i++)
		buf_addc(&y, (char)('a' + i % 26));
	buf_addstr(&y, "\n    streamId: ");
	for (i = 0; i < 300; i++)
		buf_addc(&y, (char)('A' + i % 26));
	buf_addstr(&y, "\n");
	out = import_ok(y.data, &err);
	ck_assert_ptr_nonnull(strstr(out, "; not carried over: "
	    "partitionKeyOption = a ;b (cannot be written in\n"
	    ";   agent.ini)\n"));
	ck_assert_ptr_nonnull(strstr(out, "; not carried over: streamType = "
	    "COMMON?more? is not one of"));
	if (conf_load(ini, &c, msg, sizeof(msg)) != 0)
		ck_abort_msg("%s\n%s", msg, out);
	conf_free(c);
	for (line = strtok_r(out, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save))
		ck_assert_uint_le(strlen(line), 199);
	buf_cleanup(&y);
	free(out);
	free(err);
}
END_TEST

START_TEST(no_flows_is_noted_but_converts)
{
	char	*out, *err, *want;

	out = import_ok("region: cn-north-1\n", &err);
	ck_assert_ptr_nonnull(strstr(out, "\n; the file has no flows: add a "
	    "[flow:NAME] section\n"));
	want = expand("@: no flows: add a [flow:NAME] section\n" NEXT_DEFAULT);
	ck_assert_str_eq(err, want);
	free(want);
	free(out);
	free(err);
}
END_TEST

/* yml holding text fails with exit 1, nothing on out, and err == msg. */
static void
assert_fails(const char *text, const char *msg)
{
	char	*out, *err, *want;

	if (text != NULL)
		tu_write_str(yml, text);
	ck_assert_int_eq(import(&out, &err), 1);
	ck_assert_str_eq(out, "");
	want = expand(msg);
	ck_assert_str_eq(err, want);
	free(want);
	free(out);
	free(err);
}

START_TEST(invalid_yaml_fails_with_its_line)
{
	assert_fails("region: cn-north-1\n"
	    "flows:\n"
	    "  - DISStream: s: t\n",
	    "@:3:17: mapping values are not allowed in this context\n");
	assert_fails("region: cn-north-1\n"
	    "flows:\n"
	    "  - DISStream: \"s\n",
	    "@:4:1: while scanning a quoted scalar: found unexpected end of "
	    "stream\n");
}
END_TEST

START_TEST(unreadable_file_fails)
{
	assert_fails(NULL, "@: No such file or directory\n");
}
END_TEST

/* Encrypted values, encrypt.key and the proxy keys come across as they
 * are, on lines longer than 199 characters; conf_load decrypts them. */
START_TEST(encrypted_values_and_proxy_keys_are_carried_over)
{
	struct conf	*c;
	struct buf	 y;
	char		*ak, *sk, *pw, *out, *err, msg[1024];

	ak = cred_encrypt("AKIDEXAMPLE000000001", 20, "k3y");
	sk = cred_encrypt("Secret-Access-Key-Of-Forty-Characters-01", 40, "k3y");
	pw = cred_encrypt("proxy-pass", 10, "k3y");
	buf_init(&y);
	buf_printf(&y, "region: cn-north-1\nprojectId: p\nak: %s\nsk: %s\n"
	    "encrypt.key: k3y\nPROXY_HOST: proxy.example.com\nPROXY_PORT: 3128"
	    "\nPROXY_PROTOCOL: https\nPROXY_USERNAME: me\nPROXY_PASSWORD: %s\n"
	    "NON_PROXY_HOSTS: \"localhost|*.internal\"\n"
	    "flows:\n  - DISStream: s1\n    filePattern: /var/log/a.log\n",
	    ak, sk, pw);
	out = import_ok(y.data, &err);
	ck_assert_ptr_nonnull(strstr(out, sk));
	ck_assert_ptr_nonnull(strstr(out, "\nencrypt.key = k3y\n"));
	ck_assert_ptr_nonnull(strstr(out, "\nNON_PROXY_HOSTS = "
	    "localhost|*.internal\n"));
	ck_assert_ptr_nonnull(strstr(out, "; encrypt.key unlocks the "
	    "encrypted values"));
	ck_assert_ptr_null(strstr(err, "k3y"));
	ck_assert_ptr_null(strstr(err, sk));
	if (conf_load(ini, &c, msg, sizeof(msg)) != 0)
		ck_abort_msg("%s\n%s", msg, out);
	ck_assert_str_eq(c->ak, "AKIDEXAMPLE000000001");
	ck_assert_str_eq(c->sk, "Secret-Access-Key-Of-Forty-Characters-01");
	ck_assert_str_eq(c->proxy_password, "proxy-pass");
	ck_assert_str_eq(c->proxy_protocol, "http");	/* as the SDK read it */
	ck_assert_int_eq(c->proxy_port, 3128);
	ck_assert_ptr_nonnull(strstr(err, "PROXY_PROTOCOL = https was http in "
	    "the DIS Agent (only HTTPS means https there): written as http"));
	conf_free(c);
	/* "HTTPS" is https there too. */
	free(out);
	free(err);
	tu_write_str(yml, "PROXY_PROTOCOL: HTTPS\nflows: []\n");
	ck_assert_int_eq(import(&out, &err), 0);
	ck_assert_ptr_nonnull(strstr(out, "\nPROXY_PROTOCOL = HTTPS\n"));
	buf_cleanup(&y);
	free(ak);
	free(sk);
	free(pw);
	free(out);
	free(err);
}
END_TEST

/*
 * The per-record codec keys: the DIS Agent's names (dataEncryptEnabled,
 * dataPassword) and the SDK's (data.encrypt.enabled, data.password,
 * data.compress.enabled) all come across, an encrypted password as it is;
 * a second spelling of a key is noted, never shown.
 */
START_TEST(record_codec_keys_are_carried_over)
{
	struct conf	*c;
	struct buf	 y;
	char		*pw, *out, *err, msg[1024];

	pw = cred_encrypt("data-Pass-1", 11, "k3y");
	buf_init(&y);
	buf_printf(&y, "region: cn-north-1\nprojectId: p\nak: a\nsk: s\n"
	    "encrypt.key: k3y\ndataEncryptEnabled: yes\ndataPassword: %s\n"
	    "data.password: second-spelling\n"
	    "data:\n  compress:\n    enabled: true\n"
	    "flows:\n  - DISStream: s1\n    filePattern: /var/log/a.log\n",
	    pw);
	out = import_ok(y.data, &err);
	ck_assert_ptr_nonnull(strstr(out, "\ndata.encrypt.enabled = true\n"));
	ck_assert_ptr_nonnull(strstr(out, "\ndata.compress.enabled = true\n"));
	ck_assert_ptr_nonnull(strstr(out, pw));
	ck_assert_ptr_nonnull(strstr(err, ":8: not carried over: "
	    "data.password = (hidden) (already set above)"));
	ck_assert_ptr_null(strstr(out, "second-spelling"));
	ck_assert_ptr_null(strstr(err, "second-spelling"));
	ck_assert_ptr_null(strstr(err, pw));
	if (conf_load(ini, &c, msg, sizeof(msg)) != 0)
		ck_abort_msg("%s\n%s", msg, out);
	ck_assert(c->data_encrypt && c->data_compress);
	ck_assert_str_eq(c->data_password, "data-Pass-1");
	conf_free(c);
	buf_cleanup(&y);
	free(pw);
	free(out);
	free(err);
}
END_TEST

START_TEST(wrong_shapes_fail)
{
	assert_fails("", "@: the file is empty\n");
	assert_fails("- a\n- b\n", "@:1: expected keys such as region and "
	    "flows at the top\n");
	assert_fails("flows:\n  DISStream: s\n", "@:2: flows is not a list\n");
	assert_fails("flows:\n  - s\n", "@:2: an element of flows is not a "
	    "mapping of keys\n");
	assert_fails("region: a\nak: b\nregion: c\nflows: []\n",
	    "@:3: duplicate key 'region' (first at line 1)\n");
	assert_fails("flows:\n  - DISStream: s\n    DISStream: t\n",
	    "@:3: duplicate key 'DISStream' (first at line 2)\n");
	assert_fails("body:\n  compress: {enabled: false}\nbody.compress.enabled: "
	    "true\n", "@:3: duplicate key 'body.compress.enabled' (first at "
	    "line 2)\n");
	assert_fails("? [a]\n: b\n", "@:1: a key must be plain text\n");
}
END_TEST

START_TEST(alias_bombs_and_deep_nesting_fail)
{
	assert_fails("a: &a {x: 1, y: 1, z: 1, w: 1, v: 1, u: 1, t: 1, s: 1}\n"
	    "b: &b {a1: *a, a2: *a, a3: *a, a4: *a, a5: *a, a6: *a, a7: *a}\n"
	    "c: &c {b1: *b, b2: *b, b3: *b, b4: *b, b5: *b, b6: *b, b7: *b}\n"
	    "d: &d {c1: *c, c2: *c, c3: *c, c4: *c, c5: *c, c6: *c, c7: *c}\n",
	    "@:1: more than 1000 keys\n");
	assert_fails("a: {b: {c: {d: {e: {f: {g: {h: {i: {j: 1}}}}}}}}}\n",
	    "@:1: mappings nested deeper than 8\n");
	/* Each flow under the cap, all of them over the total. */
	assert_fails("a: &a {x: 1, y: 1, z: 1, w: 1, v: 1, u: 1, t: 1, s: 1}\n"
	    "b: &b {a1: *a, a2: *a, a3: *a, a4: *a, a5: *a, a6: *a, a7: *a}\n"
	    "c: &c {b1: *b, b2: *b, b3: *b, b4: *b, b5: *b, b6: *b, b7: *b}\n"
	    "flows: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c,\n"
	    "  *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c,\n"
	    "  *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c,\n"
	    "  *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n",
	    "@:1: more than 20000 keys\n");
}
END_TEST

/*
 * Where the DIS Agent keeps its checkpoints: checkpointFile, or its
 * default, in the directory its start script runs it in (the parent of
 * conf/ for conf/agent.yml), or a placeholder when that is not known.
 */
START_TEST(next_step_names_the_dis_agent_checkpoint_file)
{
	char		 home[PATH_MAX], conf[PATH_MAX], y[PATH_MAX], *p, *real;
	char		 want[PATH_MAX + 32];
	const char	*how;

	tu_path(home, sizeof(home), dir, "dis-agent");
	tu_path(conf, sizeof(conf), home, "conf");
	ck_assert_int_eq(mkdir(home, 0755), 0);
	ck_assert_int_eq(mkdir(conf, 0755), 0);
	tu_path(y, sizeof(y), conf, "agent.yml");
	tu_write_str(y, "region: r\n");
	real = realpath(home, NULL);
	ck_assert_ptr_nonnull(real);
	p = importyml_checkpoint_path(y, NULL, &how);
	snprintf(want, sizeof(want), "%s/conf/dis-agent_since.db", real);
	ck_assert_str_eq(p, want);
	ck_assert_ptr_nonnull(strstr(how, "NAME_since.db"));
	free(p);
	p = importyml_checkpoint_path(y, "data/cp.db", &how);
	snprintf(want, sizeof(want), "%s/data/cp.db", real);
	ck_assert_str_eq(p, want);
	ck_assert_str_eq(how, "");
	free(p);
	p = importyml_checkpoint_path(y, "/var/cp.db", &how);
	ck_assert_str_eq(p, "/var/cp.db");
	ck_assert_str_eq(how, "");
	free(p);
	/* Not in a conf/ directory: where it runs is not known. */
	p = importyml_checkpoint_path(yml, "cp.db", &how);
	ck_assert_str_eq(p, "DIS-AGENT-DIR/cp.db");
	ck_assert_ptr_nonnull(strstr(how, "DIS-AGENT-DIR: the directory"));
	free(p);
	free(real);
}
END_TEST

static Suite *
importyml_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("importyml");
	tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, fixture_converts_to_the_exact_ini_and_notes);
	tcase_add_test(tc, generated_ini_passes_conf_load);
	tcase_add_test(tc, values_are_read_as_yaml_1_1);
	tcase_add_test(tc, flow_names_come_from_the_stream_and_are_unique);
	tcase_add_test(tc, keys_in_the_wrong_section_or_unknown_are_noted);
	tcase_add_test(tc,
	    dis_agent_keys_are_carried_as_the_dis_agent_reads_them);
	tcase_add_test(tc,
	    ignore_not_updated_seconds_only_where_the_dis_agent_applies_it);
	tcase_add_test(tc, secret_values_never_appear_in_messages);
	tcase_add_test(tc, values_agent_ini_cannot_hold_stay_comments);
	tcase_add_test(tc, no_flows_is_noted_but_converts);
	tcase_add_test(tc, invalid_yaml_fails_with_its_line);
	tcase_add_test(tc, unreadable_file_fails);
	tcase_add_test(tc, encrypted_values_and_proxy_keys_are_carried_over);
	tcase_add_test(tc, record_codec_keys_are_carried_over);
	tcase_add_test(tc, wrong_shapes_fail);
	tcase_add_test(tc, alias_bombs_and_deep_nesting_fail);
	tcase_add_test(tc, next_step_names_the_dis_agent_checkpoint_file);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(importyml_suite());
}
