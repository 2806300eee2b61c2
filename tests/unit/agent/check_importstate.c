/*
 * Unit tests for disagent import-state: the texts the DIS Agent's rows key
 * on (disckpt: fileId, flow id, filePattern as Java writes it, each
 * checked against what OpenJDK 17 printed), the reader of its SQLite file
 * (read-only, while another connection holds a write open, in rollback
 * and in WAL mode, and what is not such a file), which agent.ini flow a
 * row names, where its file is now and whether it is still that file
 * (importstate_judge: renamed, inode reused, no head, past the end,
 * known, whole files), and the state lock that makes the command refuse
 * while an agent runs.  The checkpoint files are made by the test with
 * libsqlite3, in the DIS Agent 1.2.4 schema; each test has its own
 * directory.
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

#include <openssl/evp.h>
#include <sqlite3.h>
#include <zlib.h>

#include "agent/importstate.h"
#include "base/log.h"
#include "base/util.h"
#include "conf/conf.h"
#include "state/disckpt.h"
#include "state/registry.h"
#include "testutil.h"

/* SQLiteFileCheckpointStore's table, byte for byte. */
#define SCHEMA \
	"CREATE TABLE FILE_CHECKPOINTS(       flow text,       path text,  " \
	"     fileId text,       lastModifiedTime bigint,       size bigint," \
	"       offset bigint,       headerLength int,       headerString " \
	"text,       lastUpdated datetime,       primary key (flow, fileId));"

static char	 dir[256];
static char	 logs[PATH_MAX];	/* dir/logs */
static char	 db[PATH_MAX];		/* dir/cp.db */
static char	 ini[PATH_MAX];		/* dir/agent.ini */
static char	 state[PATH_MAX];	/* dir/state.json */

static void
setup(void)
{
	tu_tmpdir(dir, sizeof(dir), "check_importstate");
	tu_path(logs, sizeof(logs), dir, "logs");
	tu_path(db, sizeof(db), dir, "cp.db");
	tu_path(ini, sizeof(ini), dir, "agent.ini");
	tu_path(state, sizeof(state), dir, "state.json");
	ck_assert_int_eq(mkdir(logs, 0755), 0);
}

static void
teardown(void)
{
	tu_rmtree(dir);
}

/* --- fixtures ------------------------------------------------------------ */

/* logs/name with text; its path into out (PATH_MAX). */
static void
log_file(const char *name, const char *text, char *out)
{
	tu_path(out, PATH_MAX, logs, name);
	tu_write_str(out, text);
}

/* Java's fileId of path: "(dev=HEX,ino=DEC)" (static). */
static const char *
file_id(const char *path)
{
	static char	 id[64];
	struct stat	 st;

	ck_assert_int_eq(stat(path, &st), 0);
	snprintf(id, sizeof(id), "(dev=%jx,ino=%ju)", (uintmax_t)st.st_dev,
	    (uintmax_t)st.st_ino);
	return id;
}

static uint64_t
ino_of(const char *path)
{
	struct stat	 st;

	ck_assert_int_eq(stat(path, &st), 0);
	return (uint64_t)st.st_ino;
}

/* Lowercase hex SHA-256 of the first n bytes of text (static). */
static const char *
sha256_of(const char *text, size_t n)
{
	static char	 hex[65];
	unsigned char	 md[32];
	unsigned int	 len;
	int		 i;

	ck_assert(EVP_Digest(text, n, md, &len, EVP_sha256(), NULL) == 1);
	for (i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	return hex;
}

static void
exec_sql(sqlite3 *h, const char *sql)
{
	char	*msg = NULL;

	if (sqlite3_exec(h, sql, NULL, NULL, &msg) != SQLITE_OK)
		ck_abort_msg("%s: %s", sql, msg);
}

/* A new checkpoint file in the DIS Agent's schema; open (close it). */
static sqlite3 *
new_db(const char *journal_mode)
{
	sqlite3		*h;
	char		*sql;

	unlink(db);
	ck_assert_int_eq(sqlite3_open(db, &h), SQLITE_OK);
	sql = xasprintf("PRAGMA journal_mode=%s;", journal_mode);
	exec_sql(h, sql);
	free(sql);
	exec_sql(h, SCHEMA);
	return h;
}

/* One row, as SQLiteFileCheckpointStore inserts it. */
static void
insert(sqlite3 *h, const char *flow, const char *path, const char *id,
    long long size, long long offset, long long hlen, const char *hstr)
{
	char	*sql;

	sql = sqlite3_mprintf("INSERT INTO FILE_CHECKPOINTS VALUES(%Q, %Q, "
	    "%Q, 1796143016643, %lld, %lld, %lld, %Q, "
	    "strftime('%%Y-%%m-%%d %%H:%%M:%%f', 'now'));", flow, path, id,
	    size, offset, hlen, hstr);
	exec_sql(h, sql);
	sqlite3_free(sql);
}

/* agent.ini with [agent] and the flows (text), loaded. */
static struct conf *
load_conf(const char *flows)
{
	struct conf	*c;
	char		*text, err[1024];

	text = xasprintf("[agent]\nregion = cn-north-1\nprojectId = p\n"
	    "ak = AK\nsk = SK\ncheckpointFile = %s\n%s", state, flows);
	tu_write_str(ini, text);
	free(text);
	ck_assert_int_eq(chmod(ini, 0600), 0);
	if (conf_load(ini, &c, err, sizeof(err)) != 0)
		ck_abort_msg("%s", err);
	return c;
}

/* One flow, [app], of s1 over dir/logs/\*.log, with extra lines. */
static struct conf *
app_conf(const char *extra)
{
	struct conf	*c;
	char		*flows;

	flows = xasprintf("[flow:app]\nDISStream = s1\nfilePattern = %s/*.log"
	    "\n%s", logs, extra);
	c = load_conf(flows);
	free(flows);
	return c;
}

/* --- the texts rows key on ---------------------------------------------- */

START_TEST(file_ids_are_parsed_as_java_prints_them)
{
	uint64_t	 dev, ino;

	ck_assert(disckpt_parse_file_id("(dev=fe00,ino=123)", &dev, &ino));
	ck_assert_uint_eq(dev, 0xfe00);
	ck_assert_uint_eq(ino, 123);
	ck_assert(disckpt_parse_file_id("(dev=1b,ino=10964511)", &dev, &ino));
	ck_assert_uint_eq(dev, 0x1b);
	ck_assert_uint_eq(ino, 10964511);
	ck_assert(disckpt_parse_file_id("(dev=ffffffffffffffff,ino=0)", &dev,
	    &ino));
	ck_assert_uint_eq(dev, UINT64_MAX);
	ck_assert_uint_eq(ino, 0);
	/* st_ino is a Java long: past 2^63 it prints negative. */
	ck_assert(disckpt_parse_file_id("(dev=803,ino=-1)", &dev, &ino));
	ck_assert_uint_eq(ino, UINT64_MAX);
	ck_assert(disckpt_parse_file_id(
	    "(dev=803,ino=-9223372036854775808)", &dev, &ino));
	ck_assert_uint_eq(ino, (uint64_t)1 << 63);
	ck_assert(disckpt_parse_file_id("(dev=803,ino=9223372036854775807)",
	    &dev, &ino));
	ck_assert_uint_eq(ino, (uint64_t)INT64_MAX);
}
END_TEST

START_TEST(other_file_ids_are_refused)
{
	static const char *const bad[] = {
		/* Windows: a UUID and the creation time in ms. */
		"0f8fad5b-d9cb-469f-a165-70867728950e_1700000000000",
		"app.log",		/* no fileKey: the file name */
		"", "(dev=fe00,ino=123", "dev=fe00,ino=123)",
		"(dev=,ino=1)", "(dev=fe00,ino=)", "(dev=fe00,ino=12a)",
		"(dev=fe00,ino=123) ", " (dev=fe00,ino=123)",
		"(dev=fe0g,ino=1)", "(dev=fe00, ino=1)", "(ino=1,dev=fe00)",
		"(dev=1ffffffffffffffff,ino=1)",
		"(dev=1,ino=9223372036854775808)",
		"(dev=1,ino=-9223372036854775809)", "(dev=1,ino=-0)",
		"(dev=1,ino=--1)", "(dev=1,ino=+1)",
	};
	uint64_t	 dev = 7, ino = 7;
	size_t		 i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		ck_assert_msg(!disckpt_parse_file_id(bad[i], &dev, &ino),
		    "accepted %s", bad[i]);
	ck_assert_uint_eq(dev, 7);
	ck_assert_uint_eq(ino, 7);
}
END_TEST

START_TEST(flow_ids_give_stream_and_pattern)
{
	static const char *const bad[] = {
		"obs-file:bucket:/a/*.log", "small-file:s:/a/*", "dis::/a/*",
		"dis:s1:", "dis:s1", "dis:s 1:/a/*.log", "DIS:s1:/a/*.log",
		"dis:s.1:/a/*.log", "",
	};
	const char	*pattern;
	char		 stream[80], small[3];
	size_t		 i;

	ck_assert(disckpt_parse_flow("dis:s1:/a/*.log", stream,
	    sizeof(stream), &pattern));
	ck_assert_str_eq(stream, "s1");
	ck_assert_str_eq(pattern, "/a/*.log");
	/* The pattern may hold colons; the stream name cannot. */
	ck_assert(disckpt_parse_flow("dis:app-logs_2:/srv/a:b/x*.log", stream,
	    sizeof(stream), &pattern));
	ck_assert_str_eq(stream, "app-logs_2");
	ck_assert_str_eq(pattern, "/srv/a:b/x*.log");
	ck_assert(!disckpt_parse_flow("dis:abc:/a", small, sizeof(small),
	    &pattern));
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		ck_assert_msg(!disckpt_parse_flow(bad[i], stream,
		    sizeof(stream), &pattern), "accepted %s", bad[i]);
}
END_TEST

/* Each pair as OpenJDK 17 turned the pattern into its flow id part
 * (new File(p).getParent() through Paths.get, + "/" + getName()). */
START_TEST(patterns_are_written_as_the_dis_agent_writes_them)
{
	static const char *const pairs[][2] = {
		{ "/var/log/app/*.log", "/var/log/app/*.log" },
		{ "/a//b///c.log", "/a/b/c.log" },
		{ "/a/b/", "/a/b/*" },
		{ "/a/b//", "/a/b/*" },
		{ "//a/b.log", "/a/b.log" },
		{ "/a/./b/../c.log", "/a/./b/../c.log" },
		{ "a/b.log", "a/b.log" },
		{ "/a/b/*.log/", "/a/b/*.log/*" },
		{ "/x.log", "//x.log" },
		{ "/", "//*" },
	};
	size_t		 i;
	char		*got;

	for (i = 0; i < ARRAY_SIZE(pairs); i++) {
		got = disckpt_flow_pattern(pairs[i][0]);
		ck_assert_msg(got != NULL, "%s", pairs[i][0]);
		ck_assert_msg(strcmp(got, pairs[i][1]) == 0, "%s -> %s, not %s",
		    pairs[i][0], got, pairs[i][1]);
		free(got);
	}
	/* No directory: the DIS Agent refuses it. */
	ck_assert_ptr_null(disckpt_flow_pattern("app.log"));
	ck_assert_ptr_null(disckpt_flow_pattern(""));
}
END_TEST

/* --- reading the file ---------------------------------------------------- */

struct seen {
	char	 flow[128];
	char	 path[PATH_MAX];
	char	 id[64];
	char	 header[80];
	long long offset, size, hlen;
	bool	 updated;
	int	 n;
};

static int
collect(const struct disckpt_row *r, void *arg)
{
	struct seen	*s = arg;

	s->n++;
	snprintf(s->flow, sizeof(s->flow), "%s", r->flow);
	snprintf(s->path, sizeof(s->path), "%s", r->path);
	snprintf(s->id, sizeof(s->id), "%s", r->file_id);
	snprintf(s->header, sizeof(s->header), "%s", r->header);
	s->offset = (long long)r->offset;
	s->size = (long long)r->size;
	s->hlen = (long long)r->header_len;
	s->updated = r->updated[0] != '\0';
	return 0;
}

static int
read_db(struct seen *s, char *err, size_t len)
{
	memset(s, 0, sizeof(*s));
	return disckpt_read(db, collect, s, err, len);
}

START_TEST(rows_are_read_with_their_columns)
{
	struct seen	 s;
	sqlite3		*h;
	char		 err[512];

	h = new_db("DELETE");
	insert(h, "dis:s1:/l/*.log", "/l/a.log", "(dev=fe00,ino=9)", 150, 87,
	    87, "ab12");
	ck_assert_int_eq(sqlite3_close(h), SQLITE_OK);
	ck_assert_int_eq(read_db(&s, err, sizeof(err)), 0);
	ck_assert_int_eq(s.n, 1);
	ck_assert_str_eq(s.flow, "dis:s1:/l/*.log");
	ck_assert_str_eq(s.path, "/l/a.log");
	ck_assert_str_eq(s.id, "(dev=fe00,ino=9)");
	ck_assert_int_eq(s.size, 150);
	ck_assert_int_eq(s.offset, 87);
	ck_assert_int_eq(s.hlen, 87);
	ck_assert_str_eq(s.header, "ab12");
	ck_assert(s.updated);
}
END_TEST

/*
 * The DIS Agent still running, in the middle of a write: a reader sees
 * the last commit, in rollback-journal mode (its writer holds RESERVED)
 * and in WAL mode, and writes nothing (the file's bytes are unchanged).
 */
static void
read_while_writer_holds(const char *mode)
{
	struct seen	 s;
	sqlite3		*h, *w;
	char		 err[512], *before, *after;
	size_t		 lb, la;

	h = new_db(mode);
	insert(h, "dis:s1:/l/*.log", "/l/a.log", "(dev=1,ino=2)", 10, 5, 10,
	    "00");
	ck_assert_int_eq(sqlite3_close(h), SQLITE_OK);
	ck_assert_int_eq(sqlite3_open(db, &w), SQLITE_OK);
	exec_sql(w, "BEGIN IMMEDIATE; UPDATE FILE_CHECKPOINTS SET "
	    "offset = 10;");
	before = tu_slurp(db, &lb);
	ck_assert_int_eq(read_db(&s, err, sizeof(err)), 0);
	after = tu_slurp(db, &la);
	ck_assert_int_eq(s.n, 1);
	ck_assert_int_eq(s.offset, 5);		/* not the uncommitted 10 */
	ck_assert_uint_eq(lb, la);
	ck_assert_mem_eq(before, after, lb);
	exec_sql(w, "COMMIT;");
	ck_assert_int_eq(read_db(&s, err, sizeof(err)), 0);
	ck_assert_int_eq(s.offset, 10);
	ck_assert_int_eq(sqlite3_close(w), SQLITE_OK);
	free(before);
	free(after);
}

START_TEST(a_file_being_written_is_read_as_last_committed)
{
	read_while_writer_holds("DELETE");
}
END_TEST

START_TEST(a_wal_file_being_written_is_read_as_last_committed)
{
	read_while_writer_holds("WAL");
}
END_TEST

/* Read-only: a file nobody may write is read all the same. */
START_TEST(a_read_only_file_is_read)
{
	struct seen	 s;
	sqlite3		*h;
	char		 err[512];

	h = new_db("DELETE");
	insert(h, "dis:s1:/l/*.log", "/l/a.log", "(dev=1,ino=2)", 10, 5, 10,
	    "00");
	ck_assert_int_eq(sqlite3_close(h), SQLITE_OK);
	ck_assert_int_eq(chmod(db, 0444), 0);
	ck_assert_int_eq(read_db(&s, err, sizeof(err)), 0);
	ck_assert_int_eq(s.n, 1);
}
END_TEST

START_TEST(what_is_not_a_checkpoint_file_is_refused)
{
	struct seen	 s;
	sqlite3		*h;
	char		 err[512], other[PATH_MAX];

	ck_assert_int_eq(read_db(&s, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "No such file"));
	tu_write_str(db, "region: cn-north-1\nflows: []\n and some more text "
	    "to be longer than a SQLite header of one hundred bytes, so "
	    "SQLite reads it as a database file that it is not\n");
	ck_assert_int_eq(read_db(&s, err, sizeof(err)), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(err, "not a SQLite database"));
	unlink(db);
	ck_assert_int_eq(sqlite3_open(db, &h), SQLITE_OK);
	exec_sql(h, "CREATE TABLE OTHER(x int);");
	ck_assert_int_eq(sqlite3_close(h), SQLITE_OK);
	ck_assert_int_eq(read_db(&s, err, sizeof(err)), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(err, "not a DIS Agent checkpoint file"));
	ck_assert_int_eq(s.n, 0);
	/* The reader never made the missing file. */
	tu_path(other, sizeof(other), dir, "none.db");
	ck_assert_int_eq(disckpt_read(other, collect, &s, err, sizeof(err)),
	    -ENOENT);
	ck_assert_int_eq(access(other, F_OK), -1);
}
END_TEST

/* --- which flow ---------------------------------------------------------- */

START_TEST(rows_name_flows_by_stream_and_pattern)
{
	const struct conf_flow *out[4];
	struct conf	*c;
	char		 why[512], *flows, *id;

	flows = xasprintf("[flow:a]\nDISStream = s1\nfilePattern = %s/*.log\n"
	    "[flow:b]\nDISStream = s2\nfilePattern = %s/*.log\n"
	    "[flow:c]\nDISStream = s1\nfilePattern = /top*.log\n", logs,
	    logs);
	c = load_conf(flows);
	free(flows);
	id = xasprintf("dis:s1:%s/*.log", logs);
	ck_assert_uint_eq(importstate_flows(c, id, out, 4, why, sizeof(why)),
	    1);
	ck_assert_str_eq(out[0]->name, "a");
	free(id);
	/* As the DIS Agent writes a pattern in "/". */
	id = xstrdup("dis:s1://top*.log");
	ck_assert_uint_eq(importstate_flows(c, id, out, 4, why, sizeof(why)),
	    1);
	ck_assert_str_eq(out[0]->name, "c");
	free(id);
	id = xasprintf("dis:s2:%s/*.txt", logs);
	ck_assert_uint_eq(importstate_flows(c, id, out, 4, why, sizeof(why)),
	    0);
	ck_assert_msg(strstr(why, "[b] reads") != NULL, "%s", why);
	free(id);
	ck_assert_uint_eq(importstate_flows(c, "dis:gone:/x/*.log", out, 4,
	    why, sizeof(why)), 0);
	ck_assert_msg(strstr(why, "sends to stream gone") != NULL, "%s", why);
	ck_assert_uint_eq(importstate_flows(c, "obs-file:b:/x/*", out, 4,
	    why, sizeof(why)), 0);
	ck_assert_msg(strstr(why, "not a DIS stream flow") != NULL, "%s", why);
	conf_free(c);
}
END_TEST

/* --- which file ---------------------------------------------------------- */

/* A row of [app] for the file at path now, fingerprinted over hlen
 * bytes of head (the text the DIS Agent saw), at offset. */
static struct disckpt_row
row_for(const char *path, const char *head, long long hlen, long long off)
{
	static char	 flow[PATH_MAX + 16], id[64], hex[65], p[PATH_MAX];
	struct disckpt_row r;

	snprintf(flow, sizeof(flow), "dis:s1:%s/*.log", logs);
	snprintf(id, sizeof(id), "%s", file_id(path));
	snprintf(hex, sizeof(hex), "%s", hlen > 0 ?
	    sha256_of(head, (size_t)hlen) : sha256_of("", 0));
	snprintf(p, sizeof(p), "%s", path);
	memset(&r, 0, sizeof(r));
	r.flow = flow;
	r.path = p;
	r.file_id = id;
	r.offset = off;
	r.size = off;
	r.header_len = hlen;
	r.header = hex;
	r.updated = "2026-12-01 00:00:00.000";
	return r;
}

static enum importstate_verdict
judge(struct conf *c, struct registry *reg, const struct disckpt_row *r,
    struct importstate_place *p)
{
	return importstate_judge(&c->flows[0], reg, r, p);
}

START_TEST(the_same_file_goes_on_at_its_offset)
{
	static const char text[] = "line 1\nline 2\nline 3\nline 4\n";
	struct importstate_place p;
	struct disckpt_row r;
	struct registry	*reg;
	struct conf	*c;
	char		 a[PATH_MAX];

	c = app_conf("headerBytesLength = 16\n");
	reg = registry_new(state);
	log_file("a.log", text, a);
	r = row_for(a, text, 14, 14);
	ck_assert_int_eq(judge(c, reg, &r, &p), IMPORT_PLACED);
	ck_assert_str_eq(p.path, a);
	ck_assert_uint_eq(p.ino, ino_of(a));
	ck_assert_uint_eq(p.offset, 14);
	ck_assert_uint_eq(p.size, 28);
	/* disagent's own fingerprint: crc32 of headerBytesLength bytes. */
	ck_assert_uint_eq(p.fp_len, 16);
	ck_assert_uint_eq(p.fp_crc, crc32(0, (const Bytef *)text, 16));
	importstate_place_cleanup(&p);
	registry_free(reg);
	conf_free(c);
}
END_TEST

/* Renamed after the DIS Agent's last save (a rotation): found by its
 * inode in its directory, its head still the same. */
START_TEST(a_renamed_file_is_found_in_its_directory)
{
	static const char text[] = "one\ntwo\n";
	struct importstate_place p;
	struct disckpt_row r;
	struct registry	*reg;
	struct conf	*c;
	char		 a[PATH_MAX], a1[PATH_MAX], na[PATH_MAX];

	c = app_conf("");
	reg = registry_new(state);
	log_file("app.log", text, a);
	r = row_for(a, text, 8, 4);
	tu_path(a1, sizeof(a1), logs, "app.log.1");
	ck_assert_int_eq(rename(a, a1), 0);
	log_file("app.log", "new file\n", na);	/* another inode there */
	ck_assert_int_eq(judge(c, reg, &r, &p), IMPORT_PLACED);
	ck_assert_str_eq(p.path, a1);
	ck_assert_uint_eq(p.offset, 4);
	ck_assert_uint_eq(p.fp_len, 8);
	ck_assert_uint_eq(p.fp_crc, crc32(0, (const Bytef *)text, 8));
	importstate_place_cleanup(&p);
	registry_free(reg);
	conf_free(c);
}
END_TEST

/* The inode holds another file now: never the old offset. */
START_TEST(an_inode_that_holds_another_file_is_not_placed)
{
	struct importstate_place p;
	struct disckpt_row r;
	struct registry	*reg;
	struct conf	*c;
	char		 a[PATH_MAX];

	c = app_conf("");
	reg = registry_new(state);
	log_file("b.log", "a new file on the old inode, longer\n", a);
	/* The head the DIS Agent saw was another text. */
	r = row_for(a, "old content\n", 12, 12);
	ck_assert_int_eq(judge(c, reg, &r, &p), IMPORT_SKIPPED);
	ck_assert_msg(strstr(p.why, "holds another file now") != NULL, "%s",
	    p.why);
	importstate_place_cleanup(&p);
	/* Or is shorter than the head the DIS Agent fingerprinted. */
	r = row_for(a, "a new file on the old inode, longer\nand more\n",
	    45, 40);
	ck_assert_int_eq(judge(c, reg, &r, &p), IMPORT_SKIPPED);
	ck_assert_msg(strstr(p.why, "is shorter") != NULL, "%s", p.why);
	importstate_place_cleanup(&p);
	ck_assert_uint_eq(registry_count(reg), 0);
	registry_free(reg);
	conf_free(c);
}
END_TEST

START_TEST(no_head_is_placed_only_at_zero)
{
	struct importstate_place p;
	struct disckpt_row r;
	struct registry	*reg;
	struct conf	*c;
	char		 a[PATH_MAX];

	c = app_conf("");
	reg = registry_new(state);
	log_file("e.log", "written after it was empty\n", a);
	/* Seen empty: headerLength -1, the hash of 512 zero bytes. */
	r = row_for(a, "", -1, 0);
	ck_assert_int_eq(judge(c, reg, &r, &p), IMPORT_PLACED);
	ck_assert_uint_eq(p.offset, 0);
	importstate_place_cleanup(&p);
	r = row_for(a, "", -1, 5);
	ck_assert_int_eq(judge(c, reg, &r, &p), IMPORT_SKIPPED);
	ck_assert_msg(strstr(p.why, "kept no fingerprint") != NULL, "%s",
	    p.why);
	importstate_place_cleanup(&p);
	registry_free(reg);
	conf_free(c);
}
END_TEST

START_TEST(what_cannot_be_placed_says_why)
{
	static const char text[] = "aaaa\nbbbb\n";
	struct importstate_place p;
	struct disckpt_row r;
	struct registry	*reg;
	struct conf	*c, *w;
	char		 a[PATH_MAX], g[PATH_MAX];

	c = app_conf("");
	reg = registry_new(state);
	log_file("a.log", text, a);
	/* Past the end: truncated since. */
	r = row_for(a, text, 10, 11);
	ck_assert_int_eq(judge(c, reg, &r, &p), IMPORT_SKIPPED);
	ck_assert_msg(strstr(p.why, "past the end") != NULL, "%s", p.why);
	importstate_place_cleanup(&p);
	/* Inside a line: not where the DIS Agent stops. */
	r = row_for(a, text, 10, 7);
	ck_assert_int_eq(judge(c, reg, &r, &p), IMPORT_SKIPPED);
	ck_assert_msg(strstr(p.why, "inside a line") != NULL, "%s", p.why);
	importstate_place_cleanup(&p);
	/* Gone: deleted, and nothing in its directory has its inode. */
	log_file("gone.log", text, g);
	r = row_for(g, text, 10, 5);
	ck_assert_int_eq(unlink(g), 0);
	ck_assert_int_eq(judge(c, reg, &r, &p), IMPORT_SKIPPED);
	ck_assert_msg(strstr(p.why, "deleted or moved away") != NULL, "%s",
	    p.why);
	importstate_place_cleanup(&p);
	/* Not a device and inode. */
	r = row_for(a, text, 10, 5);
	r.file_id = "0f8fad5b-d9cb-469f-a165-70867728950e_1700000000000";
	ck_assert_int_eq(judge(c, reg, &r, &p), IMPORT_SKIPPED);
	ck_assert_msg(strstr(p.why, "not a device and inode") != NULL, "%s",
	    p.why);
	importstate_place_cleanup(&p);
	/* Known to disagent already: its own position wins. */
	r = row_for(a, text, 10, 5);
	ck_assert_int_eq(judge(c, reg, &r, &p), IMPORT_PLACED);
	(void)registry_set(reg, "app", p.dev, p.ino, 0, 0, a, 7);
	importstate_place_cleanup(&p);
	ck_assert_int_eq(judge(c, reg, &r, &p), IMPORT_SKIPPED);
	ck_assert_msg(strstr(p.why, "offset 7") != NULL, "%s", p.why);
	importstate_place_cleanup(&p);
	/* Whole files are sent whole. */
	w = app_conf("isFileAppendable = false\n");
	ck_assert_int_eq(judge(w, reg, &r, &p), IMPORT_SKIPPED);
	ck_assert_msg(strstr(p.why, "whole files") != NULL, "%s", p.why);
	importstate_place_cleanup(&p);
	conf_free(w);
	registry_free(reg);
	conf_free(c);
}
END_TEST

/* --- the command --------------------------------------------------------- */

static int
run(bool dry, char **out, char **err)
{
	FILE	*o, *e;
	size_t	 ol, el;
	int	 rc;

	o = open_memstream(out, &ol);
	e = open_memstream(err, &el);
	ck_assert(o != NULL && e != NULL);
	rc = importstate_run(ini, db, dry, o, e);
	ck_assert_int_eq(fclose(o), 0);
	ck_assert_int_eq(fclose(e), 0);
	return rc;
}

/* One row placed and saved through the registry; a dry run writes
 * nothing; a held state lock (a running agent) refuses, writing nothing. */
START_TEST(the_command_saves_and_refuses_while_the_state_is_locked)
{
	static const char text[] = "l1\nl2\n";
	struct reg_entry *e;
	struct registry	*agent, *reg;
	struct conf	*c;
	struct disckpt_row r;
	struct stat	 st;
	sqlite3		*h;
	char		 a[PATH_MAX], pid[32], *out, *err;
	bool		 bak;
	long		 holder;

	c = app_conf("");
	log_file("a.log", text, a);
	r = row_for(a, text, 6, 3);
	h = new_db("DELETE");
	insert(h, r.flow, r.path, r.file_id, 6, 3, 6, r.header);
	insert(h, "dis:old:/nowhere/*.log", "/nowhere/x.log",
	    "(dev=1,ino=1)", 6, 3, 6, r.header);
	ck_assert_int_eq(sqlite3_close(h), SQLITE_OK);

	ck_assert_int_eq(run(true, &out, &err), 0);
	ck_assert_msg(strstr(out, "would import 1 of 2 checkpoints") != NULL,
	    "%s", out);
	ck_assert_int_eq(access(state, F_OK), -1);
	free(out);
	free(err);

	agent = registry_new(state);
	ck_assert_int_eq(registry_lock(agent, &holder), 0);
	ck_assert_int_eq(run(false, &out, &err), 1);
	ck_assert_msg(strstr(err, "is in use") != NULL, "%s", err);
	snprintf(pid, sizeof(pid), "pid %ld ", (long)getpid());
	ck_assert_msg(strstr(err, pid) != NULL, "%s", err);
	ck_assert_int_eq(access(state, F_OK), -1);
	free(out);
	free(err);
	registry_free(agent);		/* the agent stops */

	ck_assert_int_eq(run(false, &out, &err), 0);
	ck_assert_msg(strstr(out, "imported: [app] ") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "not imported: /nowhere/x.log") != NULL,
	    "%s", out);
	ck_assert_msg(strstr(out, "imported 1 of 2 checkpoints") != NULL,
	    "%s", out);
	free(out);
	free(err);
	reg = registry_new(state);
	ck_assert_int_eq(registry_peek(reg, &bak), 0);
	ck_assert_uint_eq(registry_count(reg), 1);
	ck_assert_int_eq(stat(a, &st), 0);
	e = registry_find(reg, "app", (uint64_t)st.st_dev,
	    (uint64_t)st.st_ino);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->offset, 3);
	ck_assert_uint_eq(e->size, 6);
	ck_assert_uint_eq(e->fp_len, 6);
	ck_assert_uint_eq(e->fp_crc, crc32(0, (const Bytef *)text, 6));
	ck_assert_str_eq(e->path, a);
	registry_free(reg);
	conf_free(c);
}
END_TEST

static Suite *
importstate_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("importstate");
	tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, file_ids_are_parsed_as_java_prints_them);
	tcase_add_test(tc, other_file_ids_are_refused);
	tcase_add_test(tc, flow_ids_give_stream_and_pattern);
	tcase_add_test(tc, patterns_are_written_as_the_dis_agent_writes_them);
	tcase_add_test(tc, rows_are_read_with_their_columns);
	tcase_add_test(tc, a_file_being_written_is_read_as_last_committed);
	tcase_add_test(tc, a_wal_file_being_written_is_read_as_last_committed);
	tcase_add_test(tc, a_read_only_file_is_read);
	tcase_add_test(tc, what_is_not_a_checkpoint_file_is_refused);
	tcase_add_test(tc, rows_name_flows_by_stream_and_pattern);
	tcase_add_test(tc, the_same_file_goes_on_at_its_offset);
	tcase_add_test(tc, a_renamed_file_is_found_in_its_directory);
	tcase_add_test(tc, an_inode_that_holds_another_file_is_not_placed);
	tcase_add_test(tc, no_head_is_placed_only_at_zero);
	tcase_add_test(tc, what_cannot_be_placed_says_why);
	tcase_add_test(tc,
	    the_command_saves_and_refuses_while_the_state_is_locked);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	log_setup(LOG_LVL_WARN, false);
	return tu_run(importstate_suite());
}
