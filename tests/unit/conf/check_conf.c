/*
 * Unit tests for the agent.ini loader (conf.c): a good file with every key,
 * defaults and the derived endpoint, DIS_AK/DIS_SK overrides, one exact
 * "FILE:LINE: message" per class of bad file, quirks of Debian's libinih
 * (200-byte lines, multi-line continuations, inline comments), the rule that
 * the secret key never reaches a message, and the sample file and man page
 * entries that the key table generates.  Files are written with mkstemp in
 * /tmp and removed at once.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "conf/conf.h"
#include "testutil.h"

#define SECRET	"Zq9SecretValue7x"

/* 5 lines: [agent] with only the required keys. */
#define AGENT_OK \
	"[agent]\n" \
	"region = cn-north-4\n" \
	"projectId = 0123456789abcdef\n" \
	"ak = AKID\n" \
	"sk = " SECRET "\n"

/* 3 lines: [flow:app] with only the required keys. */
#define FLOW_OK \
	"[flow:app]\n" \
	"DISStream = s1\n" \
	"filePattern = /var/log/a.log\n"

static void
clear_env(void)
{
	unsetenv("DIS_AK");
	unsetenv("DIS_SK");
	unsetenv("DIS_SECURITY_TOKEN");
	unsetenv("DIS_ENCRYPT_KEY");
	unsetenv("CREDENTIALS_DIRECTORY");
}

static char *
write_tmp(const char *text)
{
	char	 path[] = "/tmp/check_conf.XXXXXX";
	size_t	 len = strlen(text);
	int	 fd;

	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
	ck_assert_int_eq(close(fd), 0);
	return xstrdup(path);
}

/* Load text; on failure err holds the message with the temp path removed. */
static int
load_text(const char *text, struct conf **c, char *err, size_t len)
{
	char	*path, *msg;
	size_t	 plen;
	int	 rc;

	path = write_tmp(text);
	err[0] = '\0';
	rc = conf_load(path, c, err, len);
	plen = strlen(path);
	if (rc != 0 && strncmp(err, path, plen) == 0) {
		msg = xstrdup(err + plen);
		snprintf(err, len, "FILE%s", msg);
		free(msg);
	}
	unlink(path);
	free(path);
	return rc;
}

static struct conf *
load_ok(const char *text)
{
	struct conf	*c = NULL;
	char		 err[512];

	if (load_text(text, &c, err, sizeof(err)) != 0)
		ck_abort_msg("unexpected error: %s", err);
	ck_assert_ptr_nonnull(c);
	return c;
}

/* text must fail with exactly want, "FILE" standing for the path. */
static void
assert_fails(const char *text, const char *want)
{
	struct conf	*c = (struct conf *)&c;	/* not NULL */
	char		 err[512];

	ck_assert_int_eq(load_text(text, &c, err, sizeof(err)), -1);
	ck_assert_ptr_null(c);
	ck_assert_str_eq(err, want);
}

/* A "key = value" line of exactly n characters (without its newline). */
static char *
line_of_len(const char *key, size_t n)
{
	struct buf	 b;
	size_t		 pad;

	buf_init(&b);
	buf_printf(&b, "%s = /", key);
	pad = n - b.len;
	while (pad-- > 0)
		buf_addc(&b, 'x');
	buf_addc(&b, '\n');
	return b.data;
}

START_TEST(good_file_sets_every_field)
{
	struct conf		*c;
	struct conf_flow	*f;
	char			 dir[256], pem[512], *text;

	tu_tmpdir(dir, sizeof(dir), "check_conf");
	tu_path(pem, sizeof(pem), dir, "ca.pem");
	tu_write_str(pem, "-----BEGIN CERTIFICATE-----\nMIIB\n"
	    "-----END CERTIFICATE-----\n");
	text = xasprintf(
	    "; a comment\n"
	    "[agent]\n"
	    "region = cn-east-3\n"
	    "projectId = proj_1\n"
	    "ak = AKID\n"
	    "sk = SKEY\n"
	    "checkpointFile = /tmp/state.json\n"
	    "caFile = %s\n"
	    "sslVerify = no\n"
	    "logLevel = debug\n"
	    "connectionTimeOutSeconds = 5\n"
	    "socketTimeOutSeconds = 3600\n"
	    "log.statusReportingPeriodSeconds = 9\n"
	    "checkpointIntervalMillis = 250\n"
	    "shutdownTimeoutMillis = 0\n"
	    "\n"
	    "[flow:app]\n"
	    "enable = off\n"
	    "DISStream = app-logs\n"
	    "streamId = 8QM3Nt9YTLOwtUVYJhO\n"
	    "streamType = advanced\n"
	    "filePattern = /var/log/app/*.log\n"
	    "initialPosition = END_OF_FILE\n"
	    "maxBufferAgeMillis = 100\n"
	    "maxBufferSizeRecords = 10000\n"
	    "maxBufferSizeBytes = 1\n"
	    "partitionKeyOption = FILE_NAME,RANDOM_INT\n"
	    "retryInitialBackoffMillis = 200\n"
	    "retryMaxBackoffMillis = 200\n"
	    "maxInFlightRequests = 64\n"
	    "rescanIntervalMillis = 3600000\n"
	    "\n"
	    "[flow:db.2]\n"
	    "DISStream = db\n"
	    "filePattern = /var/log/db.log\n", pem);
	c = load_ok(text);
	free(text);
	ck_assert_str_eq(c->region, "cn-east-3");
	ck_assert_str_eq(c->project_id, "proj_1");
	ck_assert_str_eq(c->endpoint, "https://dis.cn-east-3.myhuaweicloud.com");
	ck_assert_str_eq(c->ak, "AKID");
	ck_assert_str_eq(c->sk, "SKEY");
	ck_assert_str_eq(c->checkpoint_file, "/tmp/state.json");
	ck_assert_str_eq(c->ca_file, pem);
	ck_assert(!c->ssl_verify);
	ck_assert_str_eq(c->log_level, "DEBUG");
	ck_assert_int_eq(c->connect_timeout_s, 5);
	ck_assert_int_eq(c->socket_timeout_s, 3600);
	ck_assert_int_eq(c->status_period_s, 9);
	ck_assert_int_eq(c->checkpoint_interval_ms, 250);
	ck_assert_int_eq(c->shutdown_timeout_ms, 0);
	ck_assert_uint_eq(c->nflows, 2);

	f = &c->flows[0];
	ck_assert_str_eq(f->name, "app");
	ck_assert_int_eq(f->line, 17);
	ck_assert(!f->enable);
	ck_assert_str_eq(f->stream, "app-logs");
	ck_assert_str_eq(f->stream_id, "8QM3Nt9YTLOwtUVYJhO");
	ck_assert_str_eq(f->stream_type, "ADVANCED");
	ck_assert_str_eq(f->file_pattern, "/var/log/app/*.log");
	ck_assert_int_eq(f->initial_position, POS_END_OF_FILE);
	ck_assert_int_eq(f->max_buffer_age_ms, 100);
	ck_assert_int_eq(f->max_buffer_records, 10000);
	ck_assert_int_eq(f->max_buffer_bytes, 1);
	ck_assert_str_eq(f->partition_key_option, "FILE_NAME,RANDOM_INT");
	ck_assert_int_eq(f->retry_initial_backoff_ms, 200);
	ck_assert_int_eq(f->retry_max_backoff_ms, 200);
	ck_assert_int_eq(f->max_in_flight, 64);
	ck_assert_int_eq(f->rescan_interval_ms, 3600000);

	f = &c->flows[1];
	ck_assert_str_eq(f->name, "db.2");
	ck_assert_int_eq(f->line, 33);
	ck_assert(f->enable);
	ck_assert_str_eq(f->stream, "db");
	ck_assert_str_eq(f->stream_id, "");
	ck_assert_str_eq(f->stream_type, "COMMON");
	ck_assert_str_eq(f->file_pattern, "/var/log/db.log");
	ck_assert_int_eq(f->initial_position, POS_START_OF_FILE);
	ck_assert_int_eq(f->max_buffer_age_ms, 5000);
	ck_assert_int_eq(f->max_buffer_records, 500);
	ck_assert_int_eq(f->max_buffer_bytes, 4194304);
	ck_assert_str_eq(f->partition_key_option, "RANDOM_INT");
	ck_assert_int_eq(f->retry_initial_backoff_ms, 100);
	ck_assert_int_eq(f->retry_max_backoff_ms, 10000);
	ck_assert_int_eq(f->max_in_flight, 4);
	ck_assert_int_eq(f->rescan_interval_ms, 10000);
	conf_free(c);
	tu_rmtree(dir);
}
END_TEST

START_TEST(agent_defaults_and_derived_endpoint)
{
	struct conf	*c;

	c = load_ok(AGENT_OK FLOW_OK);
	ck_assert_str_eq(c->region, "cn-north-4");
	ck_assert_str_eq(c->endpoint, "https://dis.cn-north-4.myhuaweicloud.com");
	ck_assert_str_eq(c->sk, SECRET);
	ck_assert_str_eq(c->checkpoint_file, "/var/lib/disagent/state.json");
	ck_assert_str_eq(c->ca_file, "");
	ck_assert(c->ssl_verify);
	ck_assert_str_eq(c->log_level, "INFO");
	ck_assert_int_eq(c->connect_timeout_s, 30);
	ck_assert_int_eq(c->socket_timeout_s, 60);
	ck_assert_int_eq(c->status_period_s, 30);
	ck_assert_int_eq(c->checkpoint_interval_ms, 1000);
	ck_assert_int_eq(c->shutdown_timeout_ms, 10000);
	ck_assert_ptr_nonnull(c->path);
	ck_assert_int_eq(strncmp(c->path, "/tmp/check_conf.", 16), 0);
	ck_assert_uint_eq(c->nflows, 1);
	ck_assert_int_eq(c->flows[0].line, 6);
	conf_free(c);
}
END_TEST

START_TEST(explicit_endpoint_is_kept_without_trailing_slash)
{
	struct conf	*c;

	c = load_ok(AGENT_OK "endpoint = http://127.0.0.1:8443/\n" FLOW_OK);
	ck_assert_str_eq(c->endpoint, "http://127.0.0.1:8443");
	conf_free(c);
	assert_fails(AGENT_OK "endpoint = dis.example.com\n" FLOW_OK,
	    "FILE:6: endpoint = dis.example.com is not an http:// or "
	    "https:// URL");
	assert_fails(AGENT_OK "endpoint = https://\n" FLOW_OK,
	    "FILE:6: endpoint = https:// is not an http:// or https:// URL");
}
END_TEST

START_TEST(environment_overrides_ak_and_sk)
{
	struct conf	*c;

	setenv("DIS_AK", "ENVAK", 1);
	setenv("DIS_SK", "ENVSK", 1);
	c = load_ok(AGENT_OK FLOW_OK);
	ck_assert_str_eq(c->ak, "ENVAK");
	ck_assert_str_eq(c->sk, "ENVSK");
	conf_free(c);

	/* The file may then leave them out. */
	c = load_ok("[agent]\nregion = cn-north-4\nprojectId = p\n" FLOW_OK);
	ck_assert_str_eq(c->ak, "ENVAK");
	ck_assert_str_eq(c->sk, "ENVSK");
	conf_free(c);

	/* Only one from the environment: the other is still required. */
	unsetenv("DIS_SK");
	assert_fails("[agent]\nregion = cn-north-4\nprojectId = p\n" FLOW_OK,
	    "FILE:1: [agent] is missing required key 'sk' (or set DIS_SK, or "
	    "give the systemd credential sk)");
}
END_TEST

START_TEST(empty_environment_variable_is_ignored)
{
	struct conf	*c;

	setenv("DIS_AK", "", 1);
	setenv("DIS_SK", "", 1);
	c = load_ok(AGENT_OK FLOW_OK);
	ck_assert_str_eq(c->ak, "AKID");
	ck_assert_str_eq(c->sk, SECRET);
	conf_free(c);
	assert_fails("[agent]\nregion = cn-north-4\nprojectId = p\n" FLOW_OK,
	    "FILE:1: [agent] is missing required key 'ak' (or set DIS_AK, or "
	    "give the systemd credential ak)");
}
END_TEST

START_TEST(unknown_key_is_rejected)
{
	assert_fails(AGENT_OK "fooBar = 1\n" FLOW_OK,
	    "FILE:6: unknown key 'fooBar' in [agent]");
	assert_fails(AGENT_OK FLOW_OK "dataEncryptEnabled = x\n",
	    "FILE:9: unknown key 'dataEncryptEnabled' in [flow:app]");
}
END_TEST

/* Two flows that send one file to one stream (issue 36): refused when the
 * patterns show it, at the later flow's filePattern; a glob against a
 * glob, two streams, a line filter or a disabled flow pass. */
START_TEST(flows_sending_a_file_twice_are_refused)
{
	struct conf	*c;

	assert_fails(AGENT_OK FLOW_OK
	    "[flow:all]\nDISStream = s1\nfilePattern = /var/log/*.log\n",
	    "FILE:11: [flow:all] and [flow:app] both send /var/log/a.log to "
	    "stream s1: each line would be sent twice (remove one, or leave "
	    "the file out of one with excludePattern)");
	assert_fails(AGENT_OK
	    "[flow:x]\nDISStream = s1\nfilePattern = /v/*.log\n"
	    "[flow:y]\nDISStream = s1\nfilePattern = /v/*.log\n",
	    "FILE:11: [flow:y] and [flow:x] both send every file of /v/*.log "
	    "to stream s1: each line would be sent twice");
	c = load_ok(AGENT_OK
	    "[flow:x]\nDISStream = s1\nfilePattern = /v/*.log\n"
	    "[flow:y]\nDISStream = s1\nfilePattern = /v/a*.log\n"
	    "[flow:z]\nDISStream = s2\nfilePattern = /v/a.log\n"
	    "[flow:f]\nDISStream = s1\nfilePattern = /v/a.log\n"
	    "lineIncludePattern = ^a\n"
	    "[flow:off]\nDISStream = s1\nfilePattern = /v/a.log\n"
	    "enable = false\n"
	    "[flow:ex]\nDISStream = s1\nfilePattern = /w/*.log\n"
	    "excludePattern = b.log\n"
	    "[flow:b]\nDISStream = s1\nfilePattern = /w/b.log\n");
	ck_assert_ptr_eq(conf_flow_shipped_before(c, &c->flows[1], "/v/a1.log"),
	    &c->flows[0]);
	ck_assert_ptr_null(conf_flow_shipped_before(c, &c->flows[0],
	    "/v/a1.log"));
	ck_assert_ptr_null(conf_flow_shipped_before(c, &c->flows[2],
	    "/v/a.log"));
	conf_free(c);
}
END_TEST

START_TEST(record_keys_are_validated_with_their_line)
{
	struct conf	*c;

	assert_fails(AGENT_OK FLOW_OK "multiLineStartPattern = ^(\\d+\n",
	    "FILE:9: multiLineStartPattern = ^(\\d+ is not a valid regular "
	    "expression (missing closing parenthesis at offset 5)");
	assert_fails(AGENT_OK FLOW_OK "multiLinePreset = ruby\n",
	    "FILE:9: multiLinePreset = ruby is not a multi-line preset "
	    "(known: java, python, go)");
	assert_fails(AGENT_OK FLOW_OK "multiLineStartPattern = ^\\d\n"
	    "multiLinePreset = java\n",
	    "FILE:10: [flow:app]: multiLinePreset and multiLineStartPattern "
	    "are both set: a record starts by one rule, keep one of them");
	assert_fails(AGENT_OK "[flow:j]\nDISStream = s1\nsource = journal\n"
	    "multiLinePreset = python\n",
	    "FILE:9: [flow:j]: multiLinePreset is not used with source = "
	    "journal (it applies to files)");
	c = load_ok(AGENT_OK FLOW_OK "multiLinePreset = go\n");
	ck_assert_str_eq(c->flows[0].multiline_preset, "go");
	ck_assert_str_eq(c->flows[0].multiline_pattern, "");
	conf_free(c);
	assert_fails(AGENT_OK FLOW_OK "recordDelimiter = ab\n",
	    "FILE:9: recordDelimiter = ab is not one character (or \\n, "
	    "\\r, \\t, \\0, \\\\)");
	assert_fails(AGENT_OK FLOW_OK "fileEncoding = NO-SUCH-CHARSET\n",
	    "FILE:9: fileEncoding = NO-SUCH-CHARSET is not an encoding this "
	    "system can convert");
	assert_fails(AGENT_OK FLOW_OK "fileEncoding = UTF-16\n",
	    "FILE:9: fileEncoding = UTF-16 is not an ASCII-compatible "
	    "encoding (lines end in a one-byte newline)");
	c = load_ok(AGENT_OK FLOW_OK "recordDelimiter = \\t\n"
	    "multiLineStartPattern = ^\\d{4}-\\d{2}\nfileEncoding = GBK\n");
	ck_assert_int_eq(conf_delimiter(c->flows[0].record_delimiter), '\t');
	ck_assert_str_eq(c->flows[0].multiline_pattern, "^\\d{4}-\\d{2}");
	ck_assert_str_eq(c->flows[0].file_encoding, "GBK");
	conf_free(c);
	ck_assert_int_eq(conf_delimiter("\\n"), '\n');
	ck_assert_int_eq(conf_delimiter("|"), '|');
	ck_assert_int_eq(conf_delimiter(""), -1);
	ck_assert_int_eq(conf_delimiter("\\x"), -1);
}
END_TEST

START_TEST(data_processing_options_checked_with_their_line)
{
	struct conf	*c;
	struct buf	 b;
	const char	*eol;
	size_t		 i;
	int		 crlf;

	assert_fails(AGENT_OK FLOW_OK "dataProcessingOptions = CSVTOJSON, X\n",
	    "FILE:9: dataProcessingOptions = 'CSVTOJSON, X' has an unknown "
	    "option 'X' "
	    "(expected CSVTOJSON, LOGTOJSON, ADDMETADATA, ADDBRACKETS or "
	    "SINGLELINE)");
	assert_fails(AGENT_OK FLOW_OK "dataProcessingOptions = csvtojson\n",
	    "FILE:9: [flow:app]: CSVTOJSON.customFieldNames: is required by "
	    "CSVTOJSON");
	assert_fails(AGENT_OK FLOW_OK "dataProcessingOptions = LOGTOJSON\n"
	    "LOGTOJSON.logFormat = SYSLOG\nLOGTOJSON.customFieldNames = a\n",
	    "FILE:11: [flow:app]: LOGTOJSON.customFieldNames: 1 names, but "
	    "SYSLOG has 5 fields (set LOGTOJSON.matchPattern for other "
	    "fields)");
	assert_fails(AGENT_OK FLOW_OK "LOGTOJSON.matchPattern = (a\n",
	    "FILE:9: LOGTOJSON.matchPattern = (a does not compile: missing "
	    "closing parenthesis (in the PCRE2 translation, at offset 2)");
	assert_fails(AGENT_OK FLOW_OK "LOGTOJSON.logFormat = JSON\n",
	    "FILE:9: LOGTOJSON.logFormat = JSON is not one of "
	    "COMMONAPACHELOG, COMBINEDAPACHELOG, APACHEERRORLOG, SYSLOG, "
	    "RFC3339SYSLOG");
	assert_fails(AGENT_OK FLOW_OK "dataProcessingOptions = ADDBRACKETS\n"
	    "ADDMETADATA.metadata = {}\n",
	    "FILE:10: [flow:app]: ADDMETADATA.metadata: is set, but "
	    "ADDMETADATA is not in dataProcessingOptions");
	/* A pattern longer than inih's 199 characters: read whole, with
	 * the inline comment cut as inih cuts it; and from a file written
	 * on Windows, without the CR, as inih drops it from short lines. */
	buf_init(&b);
	for (crlf = 0; crlf < 2; crlf++) {
		eol = crlf ? "\r\n" : "\n";
		buf_reset(&b);
		buf_printf(&b, "%s%sdataProcessingOptions = LOGTOJSON%s"
		    "LOGTOJSON.logFormat = SYSLOG%sLOGTOJSON.matchPattern = (x*)",
		    AGENT_OK, FLOW_OK, eol, eol);
		for (i = 0; i < 300; i++)
			buf_addc(&b, 'y');
		buf_printf(&b, "  ; a comment%sLOGTOJSON.customFieldNames = f%s",
		    eol, eol);
		c = load_ok(b.data);
		ck_assert_uint_eq(strlen(c->flows[0].conv.log_pattern), 304);
		ck_assert_str_eq(c->flows[0].conv.log_fields, "f");
		conf_free(c);
	}
	ck_assert_uint_eq(conf_line_max("flow", "LOGTOJSON.matchPattern"),
	    4095);
	ck_assert_uint_eq(conf_line_max("flow", "filePattern"), 199);
	buf_cleanup(&b);
}
END_TEST

START_TEST(nul_byte_in_a_line_is_rejected)
{
	char		 path[] = "/tmp/check_conf_nul.XXXXXX", err[512], want[600];
	static const char text[] = "[agent]\nregion = cn-north-4\n"
	    "projectId = p\nak = a\nsk = b\n[flow:app]\n"
	    "DISStream = app\0logs\nfilePattern = /var/log/a.log\n";
	struct conf	*c = NULL;
	int		 fd;

	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, sizeof(text) - 1),
	    (ssize_t)(sizeof(text) - 1));
	close(fd);
	ck_assert_int_eq(conf_load(path, &c, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s:7: line contains a NUL byte", path);
	ck_assert_str_eq(err, want);
	unlink(path);
}
END_TEST

/* 168 characters or more: encrypted (check_cred tests the decryption). */
START_TEST(long_key_that_is_not_encrypted_is_refused)
{
	char	 text[1024], want[512], big[200];

	memset(big, 'Q', 180);
	big[180] = '\0';
	snprintf(text, sizeof(text), "[agent]\nregion = cn-north-4\n"
	    "projectId = p\nak = %s\nsk = x\n" FLOW_OK, big);
	snprintf(want, sizeof(want), "FILE:4: ak = %s is 168 characters or "
	    "more, so it must be a DIS Agent encrypted value, but it is not "
	    "hexadecimal", big);
	assert_fails(text, want);
}
END_TEST

START_TEST(unknown_key_suggests_the_right_case)
{
	assert_fails(AGENT_OK "[flow:app]\nDISStream = s1\n"
	    "filepattern = /var/log/a.log\n",
	    "FILE:8: unknown key 'filepattern' in [flow:app]; "
	    "did you mean 'filePattern'?");
	assert_fails(AGENT_OK "SslVerify = true\n" FLOW_OK,
	    "FILE:6: unknown key 'SslVerify' in [agent]; "
	    "did you mean 'sslVerify'?");
}
END_TEST

START_TEST(unknown_key_suggests_the_nearest_key)
{
	assert_fails(AGENT_OK "[flow:app]\nDISStrem = s1\n"
	    "filePattern = /var/log/a.log\n",
	    "FILE:7: unknown key 'DISStrem' in [flow:app]; "
	    "did you mean 'DISStream'?");
	assert_fails(AGENT_OK FLOW_OK "maxBufferAgeMilis = 500\n",
	    "FILE:9: unknown key 'maxBufferAgeMilis' in [flow:app]; "
	    "did you mean 'maxBufferAgeMillis'?");
	/* Nothing close: no guess. */
	assert_fails(AGENT_OK FLOW_OK "colour = blue\n",
	    "FILE:9: unknown key 'colour' in [flow:app]");
}
END_TEST

START_TEST(ca_file_must_exist_and_hold_pem_certificates)
{
	char	 text[2048], want[2048], dir[256], pem[512];

	tu_tmpdir(dir, sizeof(dir), "check_conf");
	tu_path(pem, sizeof(pem), dir, "ca.pem");
	snprintf(text, sizeof(text), AGENT_OK "caFile = %s\n" FLOW_OK, pem);
	snprintf(want, sizeof(want), "FILE:6: caFile = %s cannot be read: "
	    "No such file or directory", pem);
	assert_fails(text, want);
	tu_write_str(pem, "not a certificate\n");
	snprintf(want, sizeof(want), "FILE:6: caFile = %s holds no PEM "
	    "certificate (-----BEGIN CERTIFICATE-----) in its first 64 KiB",
	    pem);
	assert_fails(text, want);
	tu_write_str(pem, "-----BEGIN CERTIFICATE-----\nMIIB\n"
	    "-----END CERTIFICATE-----\n");
	conf_free(load_ok(text));
	tu_rmtree(dir);
}
END_TEST

START_TEST(key_in_wrong_section_names_its_section)
{
	assert_fails(AGENT_OK "filePattern = /x\n" FLOW_OK,
	    "FILE:6: unknown key 'filePattern' in [agent]; it belongs in a "
	    "[flow:NAME] section");
	assert_fails(AGENT_OK FLOW_OK "region = cn-north-4\n",
	    "FILE:9: unknown key 'region' in [flow:app]; it belongs in "
	    "[agent]");
}
END_TEST

START_TEST(integer_out_of_range_names_the_bounds)
{
	assert_fails(AGENT_OK FLOW_OK "maxBufferAgeMillis = 50\n",
	    "FILE:9: maxBufferAgeMillis = 50 is out of range (100..900000)");
	assert_fails(AGENT_OK FLOW_OK "maxBufferSizeBytes = 4194305\n",
	    "FILE:9: maxBufferSizeBytes = 4194305 is out of range "
	    "(1..4194304)");
	assert_fails(AGENT_OK "shutdownTimeoutMillis = -1\n" FLOW_OK,
	    "FILE:6: shutdownTimeoutMillis = -1 is out of range (0..600000)");
	assert_fails(AGENT_OK "connectionTimeOutSeconds = "
	    "99999999999999999999\n" FLOW_OK,
	    "FILE:6: connectionTimeOutSeconds = 99999999999999999999 is out "
	    "of range (1..600)");
	assert_fails(AGENT_OK FLOW_OK "maxInFlightRequests = 0\n",
	    "FILE:9: maxInFlightRequests = 0 is out of range (1..64)");
}
END_TEST

START_TEST(integer_with_junk_is_rejected)
{
	assert_fails(AGENT_OK FLOW_OK "maxBufferAgeMillis = 5s\n",
	    "FILE:9: maxBufferAgeMillis = 5s is not an integer");
	assert_fails(AGENT_OK FLOW_OK "maxBufferAgeMillis = 1e3\n",
	    "FILE:9: maxBufferAgeMillis = 1e3 is not an integer");
	assert_fails(AGENT_OK FLOW_OK "maxBufferAgeMillis = 0x100\n",
	    "FILE:9: maxBufferAgeMillis = 0x100 is not an integer");
	assert_fails(AGENT_OK FLOW_OK "maxBufferAgeMillis = +500\n",
	    "FILE:9: maxBufferAgeMillis = +500 is not an integer");
	assert_fails(AGENT_OK FLOW_OK "maxBufferAgeMillis = 5 000\n",
	    "FILE:9: maxBufferAgeMillis = '5 000' is not an integer");
	assert_fails(AGENT_OK FLOW_OK "maxBufferAgeMillis =\n",
	    "FILE:9: maxBufferAgeMillis = '' is not an integer");
	assert_fails(AGENT_OK FLOW_OK "maxBufferAgeMillis = -\n",
	    "FILE:9: maxBufferAgeMillis = - is not an integer");
}
END_TEST

START_TEST(booleans_accept_the_usual_words)
{
	static const char *const yes[] = { "true", "yes", "on", "1", "TRUE" };
	static const char *const no[] = { "false", "no", "off", "0", "Off" };
	struct conf	*c;
	char		 text[512];
	size_t		 i;

	for (i = 0; i < ARRAY_SIZE(yes); i++) {
		snprintf(text, sizeof(text), AGENT_OK "sslVerify = %s\n"
		    FLOW_OK "enable = %s\n", no[i], yes[i]);
		c = load_ok(text);
		ck_assert_msg(!c->ssl_verify, "%s", no[i]);
		ck_assert_msg(c->flows[0].enable, "%s", yes[i]);
		conf_free(c);
	}
	assert_fails(AGENT_OK "sslVerify = maybe\n" FLOW_OK,
	    "FILE:6: sslVerify = maybe is not a boolean "
	    "(true, false, yes, no, on, off, 1, 0)");
}
END_TEST

START_TEST(enums_take_listed_words_in_any_case)
{
	struct conf	*c;

	c = load_ok(AGENT_OK "logLevel = warn\n" FLOW_OK
	    "initialPosition = end_of_file\nstreamType = Common\n");
	ck_assert_str_eq(c->log_level, "WARN");
	ck_assert_int_eq(c->flows[0].initial_position, POS_END_OF_FILE);
	ck_assert_str_eq(c->flows[0].stream_type, "COMMON");
	conf_free(c);
	assert_fails(AGENT_OK FLOW_OK "initialPosition = MIDDLE\n",
	    "FILE:9: initialPosition = MIDDLE is not one of START_OF_FILE, "
	    "END_OF_FILE");
	assert_fails(AGENT_OK "logLevel = verbose\n" FLOW_OK,
	    "FILE:6: logLevel = verbose is not one of ERROR, WARN, INFO, "
	    "DEBUG");
	assert_fails(AGENT_OK FLOW_OK "streamType = \n",
	    "FILE:9: streamType = '' is not one of COMMON, ADVANCED");
}
END_TEST

START_TEST(agent_missing_required_key_points_at_header)
{
	assert_fails("; comment\n[agent]\nregion = cn-north-4\n"
	    "ak = a\nsk = s\n" FLOW_OK,
	    "FILE:2: [agent] is missing required key 'projectId'");
	assert_fails("[agent]\nprojectId = p\nak = a\nsk = s\n" FLOW_OK,
	    "FILE:1: [agent] is missing required key 'region'");
}
END_TEST

START_TEST(flow_missing_required_key_points_at_header)
{
	assert_fails(AGENT_OK "\n[flow:app]\nDISStream = s1\n",
	    "FILE:7: [flow:app] is missing required key 'filePattern'");
	assert_fails(AGENT_OK FLOW_OK "[flow:web]\nfilePattern = /w.log\n",
	    "FILE:9: [flow:web] is missing required key 'DISStream' "
	    "(or set streamId)");
	assert_fails(AGENT_OK "[flow:empty]\n",
	    "FILE:6: [flow:empty] is missing required key 'filePattern'");
}
END_TEST

START_TEST(stream_id_stands_in_for_stream_name)
{
	struct conf	*c;

	c = load_ok(AGENT_OK "[flow:app]\nstreamId = abc_123\n"
	    "streamType = ADVANCED\nfilePattern = /a\n");
	ck_assert_str_eq(c->flows[0].stream, "");
	ck_assert_str_eq(c->flows[0].stream_id, "abc_123");
	ck_assert_str_eq(c->flows[0].stream_type, "ADVANCED");
	conf_free(c);
	assert_fails(AGENT_OK FLOW_OK "streamId = a/b\n",
	    "FILE:9: streamId = a/b is not a valid ID (1-64 letters, digits, "
	    "'_' or '-')");
}
END_TEST

START_TEST(duplicate_flow_names_both_lines)
{
	assert_fails(AGENT_OK FLOW_OK "\n[flow:app]\nDISStream = s2\n",
	    "FILE:10: duplicate section [flow:app] (first at line 6)");
}
END_TEST

START_TEST(duplicate_agent_section_is_rejected)
{
	assert_fails(AGENT_OK FLOW_OK "[agent]\n",
	    "FILE:9: duplicate section [agent] (first at line 1)");
}
END_TEST

START_TEST(duplicate_key_names_first_line)
{
	assert_fails(AGENT_OK FLOW_OK "DISStream = s2\n",
	    "FILE:9: duplicate key 'DISStream' in [flow:app] "
	    "(first at line 7)");
	assert_fails(AGENT_OK "region = cn-east-3\n" FLOW_OK,
	    "FILE:6: duplicate key 'region' in [agent] (first at line 2)");
}
END_TEST

START_TEST(unknown_section_is_rejected)
{
	assert_fails(AGENT_OK "[general]\n" FLOW_OK,
	    "FILE:6: unknown section [general] (expected [agent] or "
	    "[flow:NAME])");
	assert_fails("[Agent]\n",
	    "FILE:1: unknown section [Agent]; did you mean [agent]?");
	assert_fails(AGENT_OK "[Flow:app]\n",
	    "FILE:6: unknown section [Flow:app]; did you mean [flow:app]?");
	assert_fails(AGENT_OK "[agent] extra\n",
	    "FILE:6: unexpected text after section header");
}
END_TEST

START_TEST(bad_flow_name_is_rejected)
{
	assert_fails(AGENT_OK "[flow:a b]\n",
	    "FILE:6: bad flow name 'a b' (1-64 letters, digits, '_', '.' or "
	    "'-')");
	assert_fails(AGENT_OK "[flow:]\n",
	    "FILE:6: bad flow name '' (1-64 letters, digits, '_', '.' or "
	    "'-')");
	assert_fails(AGENT_OK "[flow:"
	    "x234567890123456789012345678901234567890123456789012345678901234"
	    "5]\n",
	    "FILE:6: bad flow name "
	    "'x2345678901234567890123456789012345678901234567890123456789012345'"
	    " (1-64 letters, digits, '_', '.' or '-')");
}
END_TEST

START_TEST(key_outside_any_section_is_rejected)
{
	assert_fails("region = cn-north-4\n" AGENT_OK FLOW_OK,
	    "FILE:1: key 'region' is outside any section");
}
END_TEST

START_TEST(line_of_199_characters_is_the_limit)
{
	struct conf	*c;
	char		*ok, *crlf, *bad, text[1024];

	ok = line_of_len("filePattern", 199);
	ck_assert_uint_eq(strlen(ok), 200);
	snprintf(text, sizeof(text), AGENT_OK "[flow:app]\nDISStream = s\n%s",
	    ok);
	c = load_ok(text);
	ck_assert_uint_eq(strlen(c->flows[0].file_pattern), 199 - 14);
	conf_free(c);

	/* A CR before the newline is not counted. */
	crlf = xasprintf("%.199s\r\n", ok);
	snprintf(text, sizeof(text), AGENT_OK "[flow:app]\nDISStream = s\n%s",
	    crlf);
	c = load_ok(text);
	ck_assert_uint_eq(strlen(c->flows[0].file_pattern), 199 - 14);
	conf_free(c);

	bad = line_of_len("filePattern", 200);
	snprintf(text, sizeof(text), AGENT_OK "[flow:app]\nDISStream = s\n%s",
	    bad);
	assert_fails(text, "FILE:8: line longer than 199 characters");
	/* Also without a final newline. */
	bad[200] = '\0';
	snprintf(text, sizeof(text), AGENT_OK "[flow:app]\n%s", bad);
	assert_fails(text, "FILE:7: line longer than 199 characters");
	free(ok);
	free(crlf);
	free(bad);
}
END_TEST

START_TEST(syntax_errors_name_the_line)
{
	assert_fails(AGENT_OK "garbage\n" FLOW_OK,
	    "FILE:6: syntax error (expected 'key = value')");
	assert_fails("[agent\n" FLOW_OK,
	    "FILE:1: syntax error (missing ']' in section header)");
	assert_fails(AGENT_OK "foo ; a=b\n" FLOW_OK, "FILE:6: syntax error");
	assert_fails(AGENT_OK "= 5\n" FLOW_OK,
	    "FILE:6: syntax error (no key before '=')");
}
END_TEST

START_TEST(first_error_by_line_wins)
{
	/* inih reports a syntax error only at the end; it still wins. */
	assert_fails(AGENT_OK "garbage\nfooBar = 1\n" FLOW_OK,
	    "FILE:6: syntax error (expected 'key = value')");
	/* Reading stops at our first error. */
	assert_fails(AGENT_OK "fooBar = 1\ngarbage\n" FLOW_OK,
	    "FILE:6: unknown key 'fooBar' in [agent]");
	/* A broken header beats the errors of the keys below it. */
	assert_fails(AGENT_OK "[flow:x\nDISStream = s\n" FLOW_OK,
	    "FILE:6: syntax error (missing ']' in section header)");
}
END_TEST

START_TEST(missing_file_gives_strerror)
{
	struct conf	*c = (struct conf *)&c;
	char		 err[256];

	ck_assert_int_eq(conf_load("/tmp/check_conf.no-such-file", &c, err,
	    sizeof(err)), -1);
	ck_assert_ptr_null(c);
	ck_assert_str_eq(err,
	    "/tmp/check_conf.no-such-file: No such file or directory");
	ck_assert_int_eq(conf_load("/tmp", &c, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "/tmp: Is a directory");
}
END_TEST

START_TEST(missing_agent_section_is_rejected)
{
	assert_fails(FLOW_OK, "FILE: missing [agent] section");
	assert_fails("", "FILE: missing [agent] section");
	assert_fails("; only a comment\n", "FILE: missing [agent] section");
}
END_TEST

START_TEST(file_without_flows_is_rejected)
{
	assert_fails(AGENT_OK, "FILE: no [flow:NAME] section");
}
END_TEST

START_TEST(bad_stream_name_is_rejected)
{
	struct conf	*c;

	assert_fails(AGENT_OK "[flow:app]\nDISStream = bad name\n"
	    "filePattern = /a\n",
	    "FILE:7: DISStream = 'bad name' is not a valid stream name "
	    "(1-64 letters, digits, '_' or '-')");
	assert_fails(AGENT_OK "[flow:app]\nDISStream = "
	    "s2345678901234567890123456789012345678901234567890123456789012345"
	    "\nfilePattern = /a\n",
	    "FILE:7: DISStream = "
	    "s2345678901234567890123456789012345678901234567890123456789012345"
	    " is not a valid stream name (1-64 letters, digits, '_' or '-')");
	assert_fails(AGENT_OK "[flow:app]\nDISStream =\nfilePattern = /a\n",
	    "FILE:7: DISStream: must not be empty");
	c = load_ok(AGENT_OK "[flow:app]\nDISStream = "
	    "S_234567890123456789012345678901234567890123456789012345678901-4"
	    "\nfilePattern = /a\n");
	ck_assert_uint_eq(strlen(c->flows[0].stream), 64);
	conf_free(c);
}
END_TEST

START_TEST(relative_file_pattern_is_rejected)
{
	assert_fails(AGENT_OK "[flow:app]\nDISStream = s\n"
	    "filePattern = logs/*.log\n",
	    "FILE:8: filePattern = logs/*.log is not an absolute path");
}
END_TEST

START_TEST(retry_max_below_initial_blames_the_later_key)
{
	assert_fails(AGENT_OK FLOW_OK "retryInitialBackoffMillis = 500\n"
	    "retryMaxBackoffMillis = 400\n",
	    "FILE:10: retryMaxBackoffMillis = 400 is less than "
	    "retryInitialBackoffMillis = 500");
	assert_fails(AGENT_OK FLOW_OK "retryMaxBackoffMillis = 400\n"
	    "retryInitialBackoffMillis = 500\n",
	    "FILE:10: retryMaxBackoffMillis = 400 is less than "
	    "retryInitialBackoffMillis = 500");
	/* Only one set: the other is its default. */
	assert_fails(AGENT_OK FLOW_OK "retryInitialBackoffMillis = 20000\n",
	    "FILE:9: retryMaxBackoffMillis = 10000 is less than "
	    "retryInitialBackoffMillis = 20000");
}
END_TEST

START_TEST(empty_or_invalid_agent_values_are_rejected)
{
	assert_fails("[agent]\nregion =\n",
	    "FILE:2: region: must not be empty");
	assert_fails("[agent]\nregion = CN North\n",
	    "FILE:2: region = 'CN North' is not a valid region (1-64 "
	    "lower-case letters, digits or '-')");
	assert_fails("[agent]\nprojectId = a/b\n",
	    "FILE:2: projectId = a/b is not a valid ID (1-64 letters, digits, "
	    "'_' or '-')");
	assert_fails(AGENT_OK "checkpointFile =\n" FLOW_OK,
	    "FILE:6: checkpointFile: must not be empty");
	assert_fails(AGENT_OK FLOW_OK "partitionKeyOption =\n",
	    "FILE:9: partitionKeyOption: must not be empty");
	assert_fails("[agent]\nak = AK ID\n",
	    "FILE:2: ak = 'AK ID' is not a valid key (printable ASCII without "
	    "blanks)");
}
END_TEST

START_TEST(indented_keys_are_keys_not_continuations)
{
	struct conf	*c;

	/* Debian's inih would append "  filePattern = ..." to DISStream. */
	c = load_ok(AGENT_OK "[flow:app]\n  DISStream = s1\n"
	    "  filePattern = /var/log/a.log\n\t[flow:b]\n"
	    "\tDISStream = s2\n\tfilePattern = /b\n");
	ck_assert_str_eq(c->flows[0].stream, "s1");
	ck_assert_str_eq(c->flows[0].file_pattern, "/var/log/a.log");
	ck_assert_str_eq(c->flows[1].name, "b");
	ck_assert_str_eq(c->flows[1].stream, "s2");
	conf_free(c);
}
END_TEST

START_TEST(crlf_bom_and_inline_comments_are_handled)
{
	struct conf	*c;

	c = load_ok("\xef\xbb\xbf[agent]\r\nregion = cn-north-4 ; where\r\n"
	    "projectId = p\r\nak = a\r\nsk = s\r\n"
	    "caFile =   ; none\r\n"
	    "# hash comment\r\n"
	    "[flow:app] ; first flow\r\nDISStream = s1\r\n"
	    "filePattern = /a;b.log\r\npartitionKeyOption = x;y ;z\r\n");
	ck_assert_str_eq(c->region, "cn-north-4");
	ck_assert_str_eq(c->ca_file, "");
	ck_assert_str_eq(c->flows[0].file_pattern, "/a;b.log");
	ck_assert_str_eq(c->flows[0].partition_key_option, "x;y");
	ck_assert_int_eq(c->flows[0].line, 8);
	conf_free(c);
}
END_TEST

/* Each bad file names sk but its message must not contain the secret. */
START_TEST(secret_never_appears_in_messages)
{
	static const struct {
		const char	*text;
		const char	*want;
	} cases[] = {
		{ AGENT_OK FLOW_OK "sk = " SECRET "\n",
		  "FILE:9: unknown key 'sk' in [flow:app]; it belongs in "
		  "[agent]" },
		{ AGENT_OK "sk = " SECRET "\n",
		  "FILE:6: duplicate key 'sk' in [agent] (first at line 5)" },
		{ "[agent]\nSK = " SECRET "\n",
		  "FILE:2: unknown key 'SK' in [agent]; did you mean 'sk'?" },
		{ "sk = " SECRET "\n" AGENT_OK,
		  "FILE:1: key 'sk' is outside any section" },
		{ "[agent]\nsk " SECRET " = x\n", "FILE:2: unknown key in [agent]" },
		{ "[agent]\nsk " SECRET "\n",
		  "FILE:2: syntax error (expected 'key = value')" },
		{ "[agent]\nsk =\n", "FILE:2: sk: must not be empty" },
		{ "[agent]\nsk = " SECRET " x\n",
		  "FILE:2: sk: the value is not a valid key (printable ASCII "
		  "without blanks)" },
		{ "[agent]\nsk = " SECRET "\x01\n",
		  "FILE:2: sk: the value is not a valid key (printable ASCII "
		  "without blanks)" },
		{ "[agent]\nsk = " SECRET " ;\n" "region = x y\n",
		  "FILE:3: region = 'x y' is not a valid region (1-64 "
		  "lower-case letters, digits or '-')" },
	};
	struct conf	*c;
	char		 err[512], *longline, text[1024];
	size_t		 i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		c = (struct conf *)&c;
		ck_assert_int_eq(load_text(cases[i].text, &c, err,
		    sizeof(err)), -1);
		ck_assert_ptr_null(c);
		ck_assert_msg(strstr(err, SECRET) == NULL, "leak: %s", err);
		ck_assert_str_eq(err, cases[i].want);
	}

	/* A long line holding the secret (sk may be an encrypted value). */
	longline = line_of_len("sk", 230);
	memcpy(longline + 5, SECRET, strlen(SECRET));
	snprintf(text, sizeof(text), "[agent]\n%s", longline);
	assert_fails(text, "FILE:2: sk: the value is 168 characters or more, "
	    "so it must be a DIS Agent encrypted value, but it is not "
	    "hexadecimal");
	ck_assert_int_eq(load_text(text, &c, err, sizeof(err)), -1);
	ck_assert_ptr_null(strstr(err, SECRET));
	free(longline);

	/* A bad value from the environment. */
	setenv("DIS_SK", SECRET "\t", 1);
	assert_fails(AGENT_OK FLOW_OK, "FILE: sk: the value is not a valid key "
	    "(printable ASCII without blanks) (from DIS_SK)");
}
END_TEST

START_TEST(free_accepts_null_and_half_built)
{
	struct conf	*c;

	conf_free(NULL);
	c = xcalloc(1, sizeof(*c));
	c->region = xstrdup("r");
	c->flows = xcalloc(2, sizeof(*c->flows));
	c->nflows = 2;
	c->flows[0].name = xstrdup("app");
	c->flows[0].file_pattern = xstrdup("/a");
	conf_free(c);
}
END_TEST

static char *
sample_text(size_t *len)
{
	char	*data = NULL;
	FILE	*fp;

	fp = open_memstream(&data, len);
	ck_assert_ptr_nonnull(fp);
	conf_print_sample(fp);
	ck_assert_int_eq(fclose(fp), 0);
	return data;
}

START_TEST(printed_sample_loads_with_example_values)
{
	struct conf	*c;
	char		*text;
	size_t		 len;

	text = sample_text(&len);
	ck_assert_uint_eq(strlen(text), len);
	ck_assert_ptr_nonnull(strstr(text, "\n[agent]\n"));
	ck_assert_ptr_nonnull(strstr(text, "\n[flow:app]\n"));
	ck_assert_ptr_nonnull(strstr(text, "\n;maxBufferAgeMillis = 5000\n"));
	c = load_ok(text);
	ck_assert_str_eq(c->region, "cn-north-4");
	ck_assert_uint_eq(c->nflows, 1);
	ck_assert_str_eq(c->flows[0].name, "app");
	ck_assert_str_eq(c->flows[0].file_pattern, "/var/log/app/*.log");
	ck_assert_int_eq(c->flows[0].max_buffer_age_ms, 5000);
	conf_free(c);
	free(text);
}
END_TEST

/* etc/agent.ini must be exactly what the key table prints. */
START_TEST(sample_file_matches_key_table)
{
	const char	*top = getenv("top_srcdir");
	char		*want, *path, *got;
	size_t		 wlen, glen;
	FILE		*fp;

	if (top == NULL) {
		fprintf(stderr, "sample_file_matches_key_table: top_srcdir "
		    "is unset (run under make check); not compared\n");
		return;
	}
	want = sample_text(&wlen);
	path = xasprintf("%s/etc/agent.ini", top);
	fp = fopen(path, "r");
	ck_assert_msg(fp != NULL, "cannot open %s", path);
	got = xmalloc(wlen + 2);
	glen = fread(got, 1, wlen + 1, fp);
	fclose(fp);
	ck_assert_msg(glen == wlen && memcmp(got, want, wlen) == 0,
	    "%s differs from conf_print_sample(); regenerate it", path);
	free(got);
	free(path);
	free(want);
}
END_TEST

START_TEST(sample_file_loads)
{
	const char	*top = getenv("top_srcdir");
	struct conf	*c = NULL;
	char		*path, err[512];

	if (top == NULL) {
		fprintf(stderr, "sample_file_loads: top_srcdir is unset "
		    "(run under make check); not loaded\n");
		return;
	}
	path = xasprintf("%s/etc/agent.ini", top);
	if (conf_load(path, &c, err, sizeof(err)) != 0)
		ck_abort_msg("%s", err);
	ck_assert_str_eq(c->endpoint,
	    "https://dis.cn-north-4.myhuaweicloud.com");
	ck_assert_str_eq(c->flows[0].stream, "my-stream");
	conf_free(c);
	free(path);
}
END_TEST

/* Every key of the sample has a man page entry, and nothing else does. */
START_TEST(man_entries_match_sample_keys)
{
	char	*sample, *man = NULL, *line, *save, *eq, want[128];
	size_t	 len, mlen, nkeys = 0, ntp = 0;
	FILE	*fp;
	char	*p;

	sample = sample_text(&len);
	fp = open_memstream(&man, &mlen);
	conf_print_man(fp);
	ck_assert_int_eq(fclose(fp), 0);
	ck_assert_ptr_nonnull(strstr(man, ".SS [agent]\n"));
	ck_assert_ptr_nonnull(strstr(man, ".SS [flow:NAME]\n"));
	/* One sentence per line, none over 72 columns. */
	ck_assert_ptr_nonnull(strstr(man, "\n.B maxBufferAgeMillis\n"
	    "Longest time a record waits to be sent, in milliseconds.\n"
	    "Range 100..900000.\nDefault: 5000.\n"));
	for (line = strtok_r(sample, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == ';' && line[1] != ' ' && line[1] != '\0')
			line++;		/* ";key = default" */
		eq = strstr(line, " =");
		if (line[0] == ';' || line[0] == '[' || eq == NULL)
			continue;
		snprintf(want, sizeof(want), "\n.TP\n.B %.*s\n",
		    (int)(eq - line), line);
		ck_assert_msg(strstr(man, want) != NULL, "no entry: %s", want);
		nkeys++;
	}
	for (p = man; (p = strstr(p, ".TP\n")) != NULL; p++)
		ntp++;
	ck_assert_uint_eq(nkeys, 108);
	ck_assert_uint_eq(ntp, nkeys);
	free(sample);
	free(man);
}
END_TEST

/* The table answers for single keys too (used by --import-yml). */
START_TEST(single_keys_are_known_and_checked_by_the_table)
{
	char	 why[256];

	ck_assert(conf_key_known("agent", "metricsFile"));
	ck_assert(conf_key_known("flow", "DISStream"));
	ck_assert(conf_key_known("flow:app", "maxBufferAgeMillis"));
	ck_assert(!conf_key_known("agent", "DISStream"));
	ck_assert(!conf_key_known("agent", "metricsfile"));
	ck_assert(!conf_key_known("agent", "useHttpGzip"));
	ck_assert(!conf_key_known("nosuch", "region"));
	ck_assert_int_eq(conf_key_check("agent", "metricsIntervalMillis",
	    "5000", why, sizeof(why)), 0);
	ck_assert_int_eq(conf_key_check("agent", "metricsIntervalMillis",
	    "999", why, sizeof(why)), -EINVAL);
	ck_assert_str_eq(why, "metricsIntervalMillis = 999 is out of range "
	    "(1000..600000)");
	ck_assert_int_eq(conf_key_check("agent", "metricsFile", "rel.prom",
	    why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(conf_key_check("flow", "initialPosition",
	    "end_of_file", why, sizeof(why)), 0);
	ck_assert_int_eq(conf_key_check("flow", "enable", "maybe", why,
	    sizeof(why)), -EINVAL);
	ck_assert_int_eq(conf_key_check("agent", "sk", "a b", why,
	    sizeof(why)), -EINVAL);
	ck_assert_ptr_null(strstr(why, "a b"));
	ck_assert_int_eq(conf_key_check("flow", "nope", "1", why,
	    sizeof(why)), -ENOENT);
}
END_TEST

/* httpListen: a numeric address and a port, IPv6 in brackets. */
START_TEST(http_listen_takes_numeric_addresses_and_ports)
{
	static const char *const good[] = {
		"127.0.0.1:2020", "0.0.0.0:1", "[::1]:2020", "[::]:65535",
	};
	static const struct { const char *v, *why; } bad[] = {
		{ "localhost:2020", "not a numeric IPv4 address" },
		{ "127.0.0.1", "has no :PORT" },
		{ "2020", "no :PORT" },
		{ ":2020", "no address before :PORT" },
		{ "127.0.0.1:0", "has a port that is not a number from 1 to 65535" },
		{ "127.0.0.1:65536", "from 1 to 65535" },
		{ "127.0.0.1:20x", "from 1 to 65535" },
		{ "::1:2020", "not a numeric IPv4 address" },
		{ "[::1]2020", "not [IPV6]:PORT" },
		{ "[127.0.0.1]:2020", "not a numeric IPv6 address" },
	};
	char	 why[256];
	size_t	 i;

	for (i = 0; i < ARRAY_SIZE(good); i++)
		ck_assert_msg(conf_key_check("agent", "httpListen", good[i],
		    why, sizeof(why)) == 0, "%s: %s", good[i], why);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ck_assert_msg(conf_key_check("agent", "httpListen", bad[i].v,
		    why, sizeof(why)) == -EINVAL, "%s accepted", bad[i].v);
		ck_assert_msg(strstr(why, bad[i].why) != NULL, "%s: %s",
		    bad[i].v, why);
	}
	ck_assert_int_eq(conf_key_check("agent", "healthStallSeconds", "0",
	    why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(conf_key_check("agent", "healthStallSeconds",
	    "3600", why, sizeof(why)), 0);
}
END_TEST

static Suite *
conf_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("conf");

	tc = tcase_create("load");
	tcase_add_checked_fixture(tc, clear_env, clear_env);
	tcase_add_test(tc, good_file_sets_every_field);
	tcase_add_test(tc, agent_defaults_and_derived_endpoint);
	tcase_add_test(tc, explicit_endpoint_is_kept_without_trailing_slash);
	tcase_add_test(tc, environment_overrides_ak_and_sk);
	tcase_add_test(tc, empty_environment_variable_is_ignored);
	tcase_add_test(tc, booleans_accept_the_usual_words);
	tcase_add_test(tc, enums_take_listed_words_in_any_case);
	tcase_add_test(tc, stream_id_stands_in_for_stream_name);
	tcase_add_test(tc, indented_keys_are_keys_not_continuations);
	tcase_add_test(tc, crlf_bom_and_inline_comments_are_handled);
	tcase_add_test(tc, free_accepts_null_and_half_built);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_checked_fixture(tc, clear_env, clear_env);
	tcase_add_test(tc, unknown_key_is_rejected);
	tcase_add_test(tc, flows_sending_a_file_twice_are_refused);
	tcase_add_test(tc, unknown_key_suggests_the_right_case);
	tcase_add_test(tc, key_in_wrong_section_names_its_section);
	tcase_add_test(tc, unknown_key_suggests_the_nearest_key);
	tcase_add_test(tc, ca_file_must_exist_and_hold_pem_certificates);
	tcase_add_test(tc, integer_out_of_range_names_the_bounds);
	tcase_add_test(tc, integer_with_junk_is_rejected);
	tcase_add_test(tc, agent_missing_required_key_points_at_header);
	tcase_add_test(tc, flow_missing_required_key_points_at_header);
	tcase_add_test(tc, duplicate_flow_names_both_lines);
	tcase_add_test(tc, duplicate_agent_section_is_rejected);
	tcase_add_test(tc, duplicate_key_names_first_line);
	tcase_add_test(tc, unknown_section_is_rejected);
	tcase_add_test(tc, bad_flow_name_is_rejected);
	tcase_add_test(tc, key_outside_any_section_is_rejected);
	tcase_add_test(tc, line_of_199_characters_is_the_limit);
	tcase_add_test(tc, syntax_errors_name_the_line);
	tcase_add_test(tc, first_error_by_line_wins);
	tcase_add_test(tc, missing_file_gives_strerror);
	tcase_add_test(tc, missing_agent_section_is_rejected);
	tcase_add_test(tc, file_without_flows_is_rejected);
	tcase_add_test(tc, bad_stream_name_is_rejected);
	tcase_add_test(tc, relative_file_pattern_is_rejected);
	tcase_add_test(tc, record_keys_are_validated_with_their_line);
	tcase_add_test(tc, data_processing_options_checked_with_their_line);
	tcase_add_test(tc, long_key_that_is_not_encrypted_is_refused);
	tcase_add_test(tc, nul_byte_in_a_line_is_rejected);
	tcase_add_test(tc, retry_max_below_initial_blames_the_later_key);
	tcase_add_test(tc, empty_or_invalid_agent_values_are_rejected);
	tcase_add_test(tc, secret_never_appears_in_messages);
	suite_add_tcase(s, tc);

	tc = tcase_create("generated");
	tcase_add_checked_fixture(tc, clear_env, clear_env);
	tcase_add_test(tc, printed_sample_loads_with_example_values);
	tcase_add_test(tc, sample_file_matches_key_table);
	tcase_add_test(tc, sample_file_loads);
	tcase_add_test(tc, man_entries_match_sample_keys);
	tcase_add_test(tc, single_keys_are_known_and_checked_by_the_table);
	tcase_add_test(tc, http_listen_takes_numeric_addresses_and_ports);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(conf_suite());
}
