/*
 * Unit tests for the record processing chain (convert.h, jackson.h,
 * logparse.h).  The heart is a table of records, one TCase per converter,
 * whose expected bytes come from the DIS Agent 1.2.4's own classes
 * (tests/convert_golden.inc, made by tests/golden/make_table.py): every
 * log format with a real line, lines that do not match, CRLF, custom and
 * non-ASCII delimiters, empty fields, UTF-8 and invalid UTF-8, PRETTYPRINT,
 * chains.  Then what the DIS Agent does not have and so is derived here:
 * LOGTOJSON.unmatched (a real dead-letter file), ADDMETADATA.fields, the
 * record cap, memory trimming, the configuration errors, the Java regex
 * translation, Double.toString, a non-UTF-8 fileEncoding through the
 * framer, and PCRE2 without JIT under MemoryDenyWriteExecute.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <linux/filter.h>
#include <linux/seccomp.h>

#include <check.h>

#include "base/jackson.h"
#include "base/util.h"
#include "conf/conf.h"
#include "records/convert.h"
#include "records/convert_int.h"
#include "records/deadletter.h"
#include "records/framer.h"
#include "records/logparse.h"
#include "testutil.h"

#define MAX_REC	(1u << 20)

struct golden {
	const char	*name;
	int		 delim;
	bool		 keep;
	const char	*opts[12];	/* KEY=VALUE, NULL-terminated */
	const char	*in;
	size_t		 inlen;
	const char	*out;		/* NULL: LOGTOJSON does not match */
	size_t		 outlen;
};

static const struct golden golden[] = {
#include "convert_golden.inc"
};

/* --- building chains from KEY=VALUE lists ---------------------------------- */

#include "convert_keys.h"

static struct convert *
chain(const char *const *kv, int delim, bool keep, struct deadletter *dlq)
{
	struct convert_opts	 o;
	struct convert		*c;
	const char		*key;
	char			 err[300];

	ck_assert_msg(convert_opts_from(&o, kv) == 0, "bad key");
	ck_assert_msg(convert_new(&o, delim, keep, dlq, "t", &c, &key, err,
	    sizeof(err)) == 0, "convert_new: %s", err);
	ck_assert_ptr_nonnull(c);
	return c;
}

/* --- the DIS Agent's bytes ------------------------------------------------- */

static void
run_golden(const struct golden *g)
{
	struct convert		*c = chain(g->opts, g->delim, g->keep, NULL);
	struct buf		 out;
	enum convert_result	 r;
	char			 why[200];
	bool			 cut;

	buf_init(&out);
	r = convert_apply(c, g->in, g->inlen, "/var/log/app.log", 0, MAX_REC,
	    &out, &cut, why, sizeof(why));
	if (g->out == NULL) {
		ck_assert_msg(r == CONVERT_UNMATCHED, "%s: matched: %s",
		    g->name, out.data);
		ck_assert_msg(strstr(why, "does not match") != NULL, "%s: %s",
		    g->name, why);
	} else {
		ck_assert_msg(r == CONVERT_SEND, "%s: %s", g->name, why);
		ck_assert_msg(out.len == g->outlen && memcmp(out.data, g->out,
		    out.len) == 0, "%s:\n got %s\nwant %.*s", g->name,
		    out.data, (int)g->outlen, g->out);
		ck_assert(!cut);
	}
	buf_cleanup(&out);
	convert_free(c);
}

/* Every row whose name starts with prefix (at least one). */
static void
run_prefix(const char *prefix)
{
	size_t	 i, n = 0;

	for (i = 0; i < ARRAY_SIZE(golden); i++)
		if (strncmp(golden[i].name, prefix, strlen(prefix)) == 0) {
			run_golden(&golden[i]);
			n++;
		}
	ck_assert_uint_gt(n, 0);
}

START_TEST(golden_csvtojson)
{
	run_prefix("csv_");
}
END_TEST

START_TEST(golden_logtojson)
{
	run_prefix("log_");
}
END_TEST

START_TEST(golden_addmetadata)
{
	run_prefix("meta_");
}
END_TEST

START_TEST(golden_addbrackets_singleline)
{
	run_prefix("brackets_");
	run_prefix("singleline_");
}
END_TEST

START_TEST(golden_chains)
{
	run_prefix("chain_");
}
END_TEST

/* --- what the DIS Agent does not have ------------------------------------- */

static const char *const syslog_kv[] = {
	"dataProcessingOptions=LOGTOJSON", "LOGTOJSON.logFormat=SYSLOG", NULL
};

START_TEST(unmatched_deadletter_written_and_counted)
{
	struct deadletter	*dl;
	struct convert		*c;
	struct buf		 out;
	char			 dir[256], path[PATH_MAX], *text;
	uint64_t		 n[CONVERT_NUNMATCHED];
	bool			 cut;

	tu_tmpdir(dir, sizeof(dir), "check_convert");
	tu_path(path, sizeof(path), dir, "dead.jsonl");
	dl = deadletter_new(path);
	c = chain(syslog_kv, '\n', false, dl);
	buf_init(&out);
	ck_assert(!convert_record(c, "not syslog\n", 11, "/l/a.log", 42,
	    MAX_REC, &out, &cut));
	ck_assert(convert_record(c, "Mar  7 04:02:16 h p: m\n", 23, "/l/a.log",
	    53, MAX_REC, &out, &cut));
	ck_assert_str_eq(out.data, "{\"timestamp\":\"Mar  7 04:02:16\","
	    "\"hostname\":\"h\",\"program\":\"p\",\"processid\":null,"
	    "\"message\":\"m\"}");
	convert_counts(c, n);
	ck_assert_uint_eq(n[CONVERT_DEADLETTER], 1);
	ck_assert_uint_eq(n[CONVERT_RAW] + n[CONVERT_DROP], 0);
	text = tu_slurp(path, NULL);
	/* The line as read, without its delimiter; base64 "not syslog". */
	ck_assert_msg(strstr(text, "\"flow\":\"t\",\"file\":\"/l/a.log\","
	    "\"offset\":42,\"code\":\"UNMATCHED\",\"message\":\"LOGTOJSON "
	    "SYSLOG: the line does not match\",\"data\":\"bm90IHN5c2xvZw==\"}")
	    != NULL, "%s", text);
	free(text);
	buf_cleanup(&out);
	convert_free(c);
	deadletter_free(dl);
	tu_rmtree(dir);
}
END_TEST

START_TEST(unmatched_deadletter_unwritable_sends_raw)
{
	struct deadletter	*dl;
	struct convert		*c;
	struct buf		 out;
	uint64_t		 n[CONVERT_NUNMATCHED];
	bool			 cut;

	dl = deadletter_new("/nonexistent/dir/dead.jsonl");
	c = chain(syslog_kv, '\n', false, dl);
	buf_init(&out);
	ck_assert(convert_record(c, "not syslog\n", 11, "/l/a.log", 0, MAX_REC,
	    &out, &cut));
	ck_assert_str_eq(out.data, "not syslog");
	convert_counts(c, n);
	ck_assert_uint_eq(n[CONVERT_RAW], 1);
	buf_cleanup(&out);
	convert_free(c);
	deadletter_free(dl);
}
END_TEST

START_TEST(unmatched_raw_and_drop)
{
	static const char *const raw[] = {
		"dataProcessingOptions=LOGTOJSON", "LOGTOJSON.logFormat=SYSLOG",
		"LOGTOJSON.unmatched=raw", NULL
	};
	static const char *const drop[] = {
		"dataProcessingOptions=LOGTOJSON", "LOGTOJSON.logFormat=SYSLOG",
		"LOGTOJSON.unmatched=DROP", NULL
	};
	struct convert	*c;
	struct buf	 out;
	uint64_t	 n[CONVERT_NUNMATCHED];
	bool		 cut;

	buf_init(&out);
	c = chain(raw, '\n', true, NULL);
	ck_assert(convert_record(c, "junk\n", 5, "/a", 0, MAX_REC, &out, &cut));
	ck_assert_str_eq(out.data, "junk\n");	/* isRemainRecordDelimiter */
	/* The same record offered again (its batch was full): once. */
	ck_assert(convert_record(c, "junk\n", 5, "/a", 0, MAX_REC, &out, &cut));
	convert_counts(c, n);
	ck_assert_uint_eq(n[CONVERT_RAW], 1);
	convert_free(c);
	c = chain(drop, '\n', false, NULL);
	ck_assert(!convert_record(c, "junk\n", 5, "/a", 0, MAX_REC, &out,
	    &cut));
	ck_assert(!convert_record(c, "junk2\n", 6, "/a", 5, MAX_REC, &out,
	    &cut));
	convert_counts(c, n);
	ck_assert_uint_eq(n[CONVERT_DROP], 2);
	ck_assert_uint_eq(n[CONVERT_DEADLETTER] + n[CONVERT_RAW], 0);
	convert_free(c);
	buf_cleanup(&out);
}
END_TEST

static int64_t
fixed_clock(void)
{
	return 1714564800123LL;		/* 2024-05-01T12:00:00.123Z */
}

START_TEST(meta_fields_added_beside_static_metadata)
{
	static const char *const kv[] = {
		"dataProcessingOptions=ADDMETADATA",
		"ADDMETADATA.metadata={\"app\": \"web\"}",
		"ADDMETADATA.fields=hostname, path, FILENAME, offset, timestamp",
		NULL
	};
	static const char *const none[] = {
		"dataProcessingOptions=ADDMETADATA",
		"ADDMETADATA.fields=offset", "ADDMETADATA.jsonFormat=PRETTYPRINT",
		NULL
	};
	struct convert	*c;
	struct buf	 out;
	char		 why[100];
	bool		 cut;

	buf_init(&out);
	c = chain(kv, '\n', false, NULL);
	convert_set_clock(c, fixed_clock);
	convert_set_hostname(c, "web-1");
	ck_assert(convert_apply(c, "x\n", 2, "/var/log/a\"b.log", 1234, MAX_REC,
	    &out, &cut, why, sizeof(why)) == CONVERT_SEND);
	ck_assert_str_eq(out.data, "{\"metadata\":{\"app\":\"web\","
	    "\"hostname\":\"web-1\",\"path\":\"/var/log/a\\\"b.log\","
	    "\"filename\":\"a\\\"b.log\",\"offset\":1234,"
	    "\"timestamp\":\"2024-05-01T12:00:00.123Z\"},\"data\":\"x\"}");
	convert_free(c);
	c = chain(none, '\n', false, NULL);
	ck_assert(convert_apply(c, "x\n", 2, "/a", 7, MAX_REC, &out, &cut, why,
	    sizeof(why)) == CONVERT_SEND);
	ck_assert_str_eq(out.data, "{\n  \"metadata\" : {\n    \"offset\" : 7\n"
	    "  },\n  \"data\" : \"x\"\n}");
	convert_free(c);
	buf_cleanup(&out);
}
END_TEST

START_TEST(output_capped_at_record_limit)
{
	static const char *const kv[] = {
		"dataProcessingOptions=CSVTOJSON", "CSVTOJSON.customFieldNames=a",
		NULL
	};
	struct convert	*c = chain(kv, '\n', false, NULL);
	struct buf	 out;
	char		*in, why[100];
	size_t		 i, n = 100000;
	bool		 cut;

	/* Control characters grow six-fold when escaped; "é" is cut whole. */
	in = xmalloc(n);
	for (i = 0; i < n; i++)
		in[i] = (char)(i % 2 ? 0x01 : 'x');
	buf_init(&out);
	ck_assert(convert_apply(c, in, n, "/a", 0, 4096, &out, &cut, why,
	    sizeof(why)) == CONVERT_SEND);
	ck_assert(cut);
	ck_assert_uint_le(out.len, 4096);
	ck_assert_uint_gt(out.len, 4000);
	ck_assert(strncmp(out.data, "{\"a\":\"x\\u0001x", 14) == 0);
	ck_assert(convert_apply(c, "\xc3\xa9\xc3\xa9", 4, "/a", 0, 9, &out,
	    &cut, why, sizeof(why)) == CONVERT_SEND);
	ck_assert(cut);
	ck_assert_str_eq(out.data, "{\"a\":\"\xc3\xa9");
	/* A record as large as that left no large buffer behind. */
	ck_assert_uint_le(out.cap, 64 * 1024);
	free(in);
	buf_cleanup(&out);
	convert_free(c);
}
END_TEST

/* A record far above KEEP_BYTES through every scratch buffer (a malformed
 * byte, two steps) leaves none of them that large for the next record. */
START_TEST(large_record_leaves_no_large_buffer)
{
	static const char *const kv[] = {
		"dataProcessingOptions=CSVTOJSON,ADDBRACKETS",
		"CSVTOJSON.customFieldNames=a", NULL
	};
	struct convert	*c = chain(kv, '\n', false, NULL);
	struct buf	 out;
	char		*in, why[100];
	size_t		 n = 4 * KEEP_BYTES;
	bool		 cut;

	in = xmalloc(n);
	memset(in, 'x', n);
	in[n / 2] = (char)0xff;		/* decoded into c->a first */
	buf_init(&out);
	ck_assert(convert_apply(c, in, n, "/a", 0, MAX_REC, &out, &cut, why,
	    sizeof(why)) == CONVERT_SEND);
	ck_assert(!cut);
	ck_assert_uint_gt(out.len, n);
	ck_assert(convert_apply(c, "y\n", 2, "/a", 0, MAX_REC, &out, &cut,
	    why, sizeof(why)) == CONVERT_SEND);
	/* The DIS Agent's ADDBRACKETS keeps the inner newline. */
	ck_assert_str_eq(out.data, "{{\"a\":\"y\"}\n}");
	ck_assert_uint_le(out.cap, KEEP_BYTES);
	ck_assert_uint_le(c->a.cap, KEEP_BYTES);
	ck_assert_uint_le(c->b.cap, KEEP_BYTES);
	free(in);
	buf_cleanup(&out);
	convert_free(c);
}
END_TEST

/* convert_new's errors name the key at fault. */
static const struct {
	const char	*kv[6];
	const char	*key;
	const char	*msg;
} bad_configs[] = {
	{ { "dataProcessingOptions=CSVTOJSON,FOO" }, "dataProcessingOptions",
	  "has an unknown option 'FOO'" },
	{ { "dataProcessingOptions=CSVTOJSON" }, "CSVTOJSON.customFieldNames",
	  "is required by CSVTOJSON" },
	{ { "dataProcessingOptions=LOGTOJSON" }, "LOGTOJSON.logFormat",
	  "is required by LOGTOJSON" },
	{ { "dataProcessingOptions=LOGTOJSON", "LOGTOJSON.logFormat=JSON" },
	  "LOGTOJSON.logFormat", "is not one of" },
	{ { "dataProcessingOptions=LOGTOJSON", "LOGTOJSON.logFormat=SYSLOG",
	    "LOGTOJSON.customFieldNames=a,b" }, "LOGTOJSON.customFieldNames",
	  "2 names, but SYSLOG has 5 fields" },
	{ { "dataProcessingOptions=LOGTOJSON", "LOGTOJSON.logFormat=SYSLOG",
	    "LOGTOJSON.matchPattern=(a)(b)" }, "LOGTOJSON.customFieldNames",
	  "is required with LOGTOJSON.matchPattern" },
	{ { "dataProcessingOptions=LOGTOJSON", "LOGTOJSON.logFormat=SYSLOG",
	    "LOGTOJSON.matchPattern=(a)(b)", "LOGTOJSON.customFieldNames=x" },
	  "LOGTOJSON.customFieldNames", "1 names, but LOGTOJSON.matchPattern "
	  "has 2 capturing groups" },
	{ { "dataProcessingOptions=LOGTOJSON", "LOGTOJSON.logFormat=SYSLOG",
	    "LOGTOJSON.matchPattern=(a", "LOGTOJSON.customFieldNames=x" },
	  "LOGTOJSON.matchPattern", "missing closing parenthesis" },
	{ { "dataProcessingOptions=ADDMETADATA", "ADDMETADATA.metadata={\"a\":" },
	  "ADDMETADATA.metadata", "no value" },
	{ { "dataProcessingOptions=ADDMETADATA", "ADDMETADATA.metadata=[1]",
	    "ADDMETADATA.fields=path" }, "ADDMETADATA.fields",
	  "needs ADDMETADATA.metadata to be a JSON object" },
	{ { "dataProcessingOptions=ADDMETADATA",
	    "ADDMETADATA.metadata={\"path\":1}", "ADDMETADATA.fields=path" },
	  "ADDMETADATA.metadata", "is added by ADDMETADATA.fields" },
	{ { "dataProcessingOptions=ADDMETADATA", "ADDMETADATA.fields=host" },
	  "ADDMETADATA.fields", "has an unknown field 'host'" },
	{ { "dataProcessingOptions=ADDBRACKETS",
	    "CSVTOJSON.customFieldNames=a" }, "CSVTOJSON.customFieldNames",
	  "CSVTOJSON is not in dataProcessingOptions" },
	{ { "dataProcessingOptions=CSVTOJSON", "CSVTOJSON.customFieldNames=a",
	    "CSVTOJSON.delimiter=\\x" }, "CSVTOJSON.delimiter",
	  "has an unknown escape" },
	{ { "dataProcessingOptions=CSVTOJSON", "CSVTOJSON.customFieldNames=a,,b" },
	  "CSVTOJSON.customFieldNames", "has an empty field name" },
	/* A JSON list that ends early is not read past its end (ASan). */
	{ { "dataProcessingOptions=CSVTOJSON",
	    "CSVTOJSON.customFieldNames=[\"a\"" }, "CSVTOJSON.customFieldNames",
	  "expected ',' or ']'" },
	{ { "dataProcessingOptions=CSVTOJSON", "CSVTOJSON.customFieldNames=[1]" },
	  "CSVTOJSON.customFieldNames", "expected a JSON array of strings" },
	{ { "dataProcessingOptions=CSVTOJSON",
	    "CSVTOJSON.customFieldNames=[\"a\"] x" },
	  "CSVTOJSON.customFieldNames", "text after the array" },
};

START_TEST(config_errors_name_the_key)
{
	const char		*key = NULL;
	struct convert_opts	 o;
	struct convert		*c;
	char			 err[300];

	ck_assert_int_eq(convert_opts_from(&o, bad_configs[_i].kv), 0);
	ck_assert_int_eq(convert_new(&o, '\n', false, NULL, "t", &c, &key, err,
	    sizeof(err)), -EINVAL);
	ck_assert_ptr_null(c);
	ck_assert_str_eq(key, bad_configs[_i].key);
	ck_assert_msg(strncmp(err, key, strlen(key)) == 0 &&
	    strstr(err, bad_configs[_i].msg) != NULL, "%s", err);
}
END_TEST

START_TEST(singleline_only_is_no_chain)
{
	static const char *const kv[] = {
		"dataProcessingOptions=singleline, SINGLELINE", NULL
	};
	struct convert_opts	 o;
	struct convert		*c = (struct convert *)&o;
	char			 err[100];

	ck_assert_int_eq(convert_opts_from(&o, kv), 0);
	ck_assert_int_eq(convert_new(&o, '\n', false, NULL, "t", &c, NULL, err,
	    sizeof(err)), 0);
	ck_assert_ptr_null(c);
	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(convert_new(&o, '\n', false, NULL, "t", &c, NULL, err,
	    sizeof(err)), 0);
	ck_assert_ptr_null(c);
}
END_TEST

/* Java regex -> PCRE2: what is rejected, and what is rewritten. */
START_TEST(translate_java_regex)
{
	static const struct {
		const char	*java;
		const char	*pcre;	/* NULL: rejected */
	} t[] = {
		{ "a[bc]d", "a[bc]d" },
		{ "[]a]", "[]a]" },
		{ "[a[bc]]", NULL },
		{ "[a-z&&[^x]]", NULL },
		{ "(?U)\\w", NULL },
		{ "(?d).", NULL },
		{ "\\u00e9", "\\x{00e9}" },
		{ "\\0101\\0777", "\\o{101}\\o{77}7" },
		{ "\\p{Alpha}[\\P{Digit}]", "[[:alpha:]][[:^digit:]]" },
		{ "\\p{IsLatin}\\p{L}", "\\p{Latin}\\p{L}" },
		{ "\\p{InGreek}", NULL },
		{ "\\Q.$\\E.", "\\Q.$\\E[^\\n\\r\\x{85}\\x{2028}\\x{2029}]" },
		{ "(?s).", "(?s)(?s:.)" },
		{ "(?x)a b", "(?xx)a b" },
		{ "[.]", "[.]" },
	};
	char	*p, err[200];
	size_t	 i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		p = logparse_translate(t[i].java, err, sizeof(err));
		if (t[i].pcre == NULL)
			ck_assert_msg(p == NULL, "%s -> %s", t[i].java, p);
		else
			ck_assert_msg(p != NULL && strcmp(p, t[i].pcre) == 0,
			    "%s -> %s, want %s", t[i].java, p ? p : err,
			    t[i].pcre);
		free(p);
	}
}
END_TEST

/* Java's line terminators for '.', '$' and \Z; matches() is the whole line. */
START_TEST(java_dot_dollar_semantics)
{
	static const struct {
		const char	*pat;
		const char	*line;
		int		 match;
	} t[] = {
		{ "a.b", "a\rb", 0 }, { "a.b", "a\xc2\x85" "b", 0 },
		{ "a.b", "a\tb", 1 }, { "a$\\r\\n", "a\r\n", 1 },
		{ "a$\\r", "a\r", 1 }, { "a$\\n", "a\n\n", 0 },
		{ "a$", "a\n", 0 }, { "a\\Z\xe2\x80\xa8", "a\xe2\x80\xa8", 1 },
		{ "ab", "abc", 0 },
		{ ".\\bx", " x", 1 }, { ".\\bx", "\xc3\xa9x", 0 },
	};
	struct logparse	*lp;
	const size_t	*sp;
	char		 err[200];
	size_t		 i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		ck_assert_int_eq(logparse_new(LP_SYSLOG, t[i].pat, &lp, err,
		    sizeof(err)), 0);
		ck_assert_msg(logparse_match(lp, t[i].line, strlen(t[i].line),
		    &sp) == t[i].match, "%s on %s", t[i].pat, t[i].line);
		logparse_free(lp);
	}
}
END_TEST

START_TEST(java_double_to_string)
{
	static const struct {
		double		 v;
		const char	*s;
	} t[] = {
		{ 1e10, "1.0E10" }, { 100.0, "100.0" }, { 1e-4, "1.0E-4" },
		{ 0.001, "0.001" }, { 1234567.0, "1234567.0" }, { 1e7, "1.0E7" },
		{ -0.0, "-0.0" },
		{ 1.7976931348623157e308, "1.7976931348623157E308" },
		{ 0.1, "0.1" }, { 1.0 / 3, "0.3333333333333333" },
		{ 9999999.999, "9999999.999" }, { 1e21, "1.0E21" },
	};
	struct buf	 b;
	size_t		 i;

	buf_init(&b);
	for (i = 0; i < ARRAY_SIZE(t); i++) {
		buf_reset(&b);
		jackson_double(&b, t[i].v);
		ck_assert_str_eq(b.data, t[i].s);
	}
	buf_cleanup(&b);
}
END_TEST

/* The framer converts GBK to UTF-8 first; the chain then writes UTF-8. */
struct gbk {
	struct convert	*c;
	struct buf	 out;
	int		 n;
};

static int
gbk_record(void *arg, const char *data, size_t len, uint64_t start,
    uint64_t end)
{
	struct gbk	*g = arg;
	char		 why[100];
	bool		 cut;

	(void)end;
	ck_assert(convert_apply(g->c, data, len, "/a", start, MAX_REC,
	    &g->out, &cut, why, sizeof(why)) == CONVERT_SEND);
	ck_assert_str_eq(g->out.data, g->n++ == 0 ?
	    "{\"f1\":\"\xe4\xb8\xad\",\"f2\":\"\xe6\x96\x87\"}" :
	    "{\"f1\":\"x\",\"f2\":null}");
	return 0;
}

START_TEST(gbk_file_converted_before_the_chain)
{
	static const char *const kv[] = {
		"dataProcessingOptions=CSVTOJSON",
		"CSVTOJSON.customFieldNames=f1,f2", NULL
	};
	static const char gbk_in[] = "\xd6\xd0,\xce\xc4\nx\n";
	struct framer_opts	 fo;
	struct framer		*fr;
	struct framer_state	 st;
	struct gbk		 g;
	char			 err[100];

	memset(&g, 0, sizeof(g));
	g.c = chain(kv, '\n', false, NULL);
	buf_init(&g.out);
	memset(&fo, 0, sizeof(fo));
	fo.delim = '\n';
	fo.keep_delim = convert_keeps_delimiter(g.c);
	fo.encoding = "GBK";
	ck_assert_int_eq(framer_new(&fo, &fr, err, sizeof(err)), 0);
	framer_state_init(&st, fr, true);
	ck_assert_uint_eq(framer_feed(fr, &st, gbk_in, sizeof(gbk_in) - 1, 0,
	    MAX_REC, gbk_record, &g), sizeof(gbk_in) - 1);
	ck_assert_int_eq(g.n, 2);
	framer_state_cleanup(&st);
	framer_free(fr);
	buf_cleanup(&g.out);
	convert_free(g.c);
}
END_TEST

/*
 * What systemd's MemoryDenyWriteExecute=yes does, a little stricter: a
 * seccomp filter that refuses any executable mapping (mmap or mprotect
 * with PROT_EXEC), so no JIT code can be made.
 */
static void
deny_exec_memory(void)
{
	struct sock_filter	 f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mmap, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mprotect, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, args[2])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog	 prog = { (unsigned short)ARRAY_SIZE(f), f };

	ck_assert_int_eq(prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L), 0);
	ck_assert_msg(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0,
	    "seccomp: %s", strerror(errno));
}

/* Patterns still compile and match without JIT, interpreted.  (Check
 * runs each test in a process of its own.) */
START_TEST(no_jit_under_memory_deny_write_execute)
{
	struct logparse	*lp;
	const size_t	*sp;
	char		 err[200];
	const char	*line = "Mar  7 04:02:16 h sshd[1]: hi";

	/* First: JIT's allocator keeps the memory of freed patterns. */
	deny_exec_memory();
	ck_assert_int_eq(logparse_new(LP_SYSLOG, NULL, &lp, err, sizeof(err)),
	    0);
	ck_assert(!logparse_jit(lp));
	ck_assert_int_eq(logparse_match(lp, line, strlen(line), &sp), 1);
	ck_assert_uint_eq(sp[2 * 5 + 1] - sp[2 * 5], 2);	/* "hi" */
	logparse_free(lp);
}
END_TEST

START_TEST(jit_used_where_allowed)
{
	struct logparse	*lp;
	char		 err[200];

	ck_assert_int_eq(logparse_new(LP_COMBINED, NULL, &lp, err,
	    sizeof(err)), 0);
	ck_assert(logparse_jit(lp));	/* this machine's PCRE2 has JIT */
	logparse_free(lp);
}
END_TEST

START_TEST(utf8_valid_prefix)
{
	ck_assert_uint_eq(convert_utf8_valid("ab\xc3\xa9", 4), 4);
	ck_assert_uint_eq(convert_utf8_valid("ab\xc3", 3), 2);
	ck_assert_uint_eq(convert_utf8_valid("\xed\xa0\x80", 3), 0);
	ck_assert_uint_eq(convert_utf8_valid("\xf4\x90\x80\x80", 4), 0);
}
END_TEST

static Suite *
convert_suite(void)
{
	Suite	*s = suite_create("convert");
	TCase	*tc;

	tc = tcase_create("golden");
	tcase_add_test(tc, golden_csvtojson);
	tcase_add_test(tc, golden_logtojson);
	tcase_add_test(tc, golden_addmetadata);
	tcase_add_test(tc, golden_addbrackets_singleline);
	tcase_add_test(tc, golden_chains);
	suite_add_tcase(s, tc);
	tc = tcase_create("beyond");
	tcase_add_test(tc, unmatched_deadletter_written_and_counted);
	tcase_add_test(tc, unmatched_deadletter_unwritable_sends_raw);
	tcase_add_test(tc, unmatched_raw_and_drop);
	tcase_add_test(tc, meta_fields_added_beside_static_metadata);
	tcase_add_test(tc, output_capped_at_record_limit);
	tcase_add_test(tc, large_record_leaves_no_large_buffer);
	tcase_add_loop_test(tc, config_errors_name_the_key, 0,
	    (int)ARRAY_SIZE(bad_configs));
	tcase_add_test(tc, singleline_only_is_no_chain);
	suite_add_tcase(s, tc);
	tc = tcase_create("java");
	tcase_add_test(tc, translate_java_regex);
	tcase_add_test(tc, java_dot_dollar_semantics);
	tcase_add_test(tc, java_double_to_string);
	tcase_add_test(tc, utf8_valid_prefix);
	tcase_add_test(tc, gbk_file_converted_before_the_chain);
	tcase_add_test(tc, jit_used_where_allowed);
	tcase_add_test(tc, no_jit_under_memory_deny_write_execute);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(convert_suite());
}
