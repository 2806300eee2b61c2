/*
 * Unit tests for the registry: lookup and update semantics, expiry, the
 * atomic save with its .bak generation, and every way a state file can be
 * damaged (empty, truncated at each byte, NUL-filled, garbage, wrong
 * version, bad crc, wrong types, a huge or a missing line), each of which
 * must fall back to the .bak and set the bad file aside.  Files are
 * version 2 (JSON Lines) as saved now, and version 1 as the previous
 * release wrote it (tests/data/state-v1.json) or as an editor would, which
 * must still load and be upgraded by the next save.  Every test works in
 * its own mkdtemp dir.
 */
#include "config.h"

#include <sys/resource.h>
#include <sys/stat.h>

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <zlib.h>

#include "base/log.h"
#include "base/util.h"
#include "state/registry.h"
#include "testutil.h"

#define NVAR	3	/* entries in a test generation */

static char	 dir[256];
static char	 spath[PATH_MAX];	/* dir/state.json */
static char	 sbak[PATH_MAX];	/* dir/state.json.bak */

static void
setup(void)
{
	tu_tmpdir(dir, sizeof(dir), "check_registry");
	tu_path(spath, sizeof(spath), dir, "state.json");
	tu_path(sbak, sizeof(sbak), dir, "state.json.bak");
}

/* Count directory entries starting with prefix; unlink them if asked. */
static int
count_prefixed(const char *prefix, bool remove)
{
	DIR		*d;
	struct dirent	*de;
	char		 p[PATH_MAX * 2];
	int		 n = 0;

	d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, prefix, strlen(prefix)) != 0)
			continue;
		n++;
		if (remove) {
			snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
			unlink(p);
		}
	}
	closedir(d);
	return n;
}

static void
teardown(void)
{
	tu_rmtree(dir);
}

static bool
exists(const char *path)
{
	struct stat	 st;

	return lstat(path, &st) == 0;
}

static ino_t
inode_of(const char *path)
{
	struct stat	 st;

	ck_assert_int_eq(stat(path, &st), 0);
	return st.st_ino;
}

/* Generation v: NVAR entries of flow "app" with v-dependent contents. */
static void
fill_variant(struct registry *reg, int v)
{
	struct reg_entry	*e;
	char			 p[64];
	int			 i;

	for (i = 0; i < NVAR; i++) {
		snprintf(p, sizeof(p), "/var/log/app/%d-%d.log", v, i);
		e = registry_set(reg, "app", 2049, 100 + (uint64_t)i,
		    0xdeadbe00u + (uint32_t)v, 512, p,
		    1000 * (uint64_t)v + (uint64_t)i);
		e->updated = 1790000000 + v * 10 + i;
	}
}

/* The entries of generation v are present with every field intact. */
static void
check_entries(struct registry *reg, int v)
{
	struct reg_entry	*e;
	char			 p[64];
	int			 i;

	for (i = 0; i < NVAR; i++) {
		e = registry_find(reg, "app", 2049, 100 + (uint64_t)i);
		ck_assert_ptr_nonnull(e);
		snprintf(p, sizeof(p), "/var/log/app/%d-%d.log", v, i);
		ck_assert_str_eq(e->path, p);
		ck_assert_uint_eq(e->fp_crc, 0xdeadbe00u + (uint32_t)v);
		ck_assert_uint_eq(e->fp_len, 512);
		ck_assert_uint_eq(e->offset, 1000 * (uint64_t)v + (uint64_t)i);
		ck_assert_int_eq(e->updated, 1790000000 + v * 10 + i);
	}
}

/* Exactly generation v. */
static void
check_variant(struct registry *reg, int v)
{
	ck_assert_uint_eq(registry_count(reg), NVAR);
	check_entries(reg, v);
}

/* Save generation v as the file dst (via a scratch registry). */
static void
save_variant_as(const char *dst, int v)
{
	struct registry	*reg;
	char		 scratch[PATH_MAX + 16];

	snprintf(scratch, sizeof(scratch), "%s/scratch.json", dir);
	reg = registry_new(scratch);
	fill_variant(reg, v);
	ck_assert_int_eq(registry_save(reg, true), 0);
	registry_free(reg);
	ck_assert_int_eq(rename(scratch, dst), 0);
}

/* Load spath into a fresh registry; returns it, result in *r. */
static struct registry *
load_new(const char *path, int *r)
{
	struct registry	*reg;

	reg = registry_new(path);
	*r = registry_load(reg);
	return reg;
}

/* With generation 2 as .bak, loading spath must give generation 2. */
static void
assert_falls_back_to_bak(void)
{
	struct registry	*reg;
	int		 r;

	reg = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	check_variant(reg, 2);
	ck_assert(registry_dirty(reg));
	ck_assert_int_eq(count_prefixed("state.json.corrupt-", false), 1);
	ck_assert(!exists(spath));
	registry_free(reg);
}

static int
crc_cb(const char *p, size_t n, void *arg)
{
	uLong	*crc = arg;

	*crc = crc32(*crc, (const Bytef *)p, (uInt)n);
	return 0;
}

/* A state file around files_json with a correct crc, as an editor would. */
static void
write_with_crc(const char *path, int version, const char *files_json)
{
	json_t		*files;
	json_error_t	 jerr;
	uLong		 crc = crc32(0L, Z_NULL, 0);
	char		*text;

	files = json_loads(files_json, 0, &jerr);
	ck_assert_msg(files != NULL, "bad test json: %s", jerr.text);
	json_dump_callback(files, crc_cb, &crc, JSON_COMPACT);
	json_decref(files);
	text = xasprintf("{\"version\": %d, \"crc32\": \"%08lx\", "
	    "\"files\": %s}\n", version, (unsigned long)crc, files_json);
	tu_write(path, text, strlen(text));
	free(text);
}

/*
 * A version 2 file: the header for body (n bytes of entry lines, each
 * ended by '\n'), counting entries, with the crc32 of body, as an editor
 * would write it.
 */
static void
write_v2(const char *path, const char *body, size_t n, long entries)
{
	uLong		 crc = crc32(crc32(0L, Z_NULL, 0), (const Bytef *)body,
			    (uInt)n);
	struct buf	 text;

	buf_init(&text);
	buf_printf(&text, "{\"version\":2,\"crc32\":\"%08lx\",\"entries\":%ld}"
	    "\n", (unsigned long)crc, entries);
	buf_add(&text, body, n);
	tu_write(path, text.data, text.len);
	buf_cleanup(&text);
}

/* A version 2 file of the elements of the JSON array files_json. */
static void
write_v2_from_array(const char *path, const char *files_json)
{
	json_t		*files, *e;
	json_error_t	 jerr;
	struct buf	 body;
	char		*line;
	size_t		 i;

	files = json_loads(files_json, 0, &jerr);
	ck_assert_msg(json_is_array(files), "bad test json: %s", jerr.text);
	buf_init(&body);
	json_array_foreach(files, i, e) {
		line = json_dumps(e, JSON_COMPACT | JSON_ENCODE_ANY);
		buf_addstr(&body, line);
		buf_addc(&body, '\n');
		free(line);
	}
	write_v2(path, body.data, body.len, (long)json_array_size(files));
	buf_cleanup(&body);
	json_decref(files);
}

/* The state file's entry lines (after the header): new, length in *n. */
static char *
body_of(const char *path, size_t *n)
{
	char	*text, *nl, *body;
	size_t	 len;

	text = tu_slurp(path, &len);
	nl = strchr(text, '\n');
	ck_assert_ptr_nonnull(nl);
	*n = len - (size_t)(nl + 1 - text);
	body = xstrndup(nl + 1, *n);
	free(text);
	return body;
}

#define GOOD_ENTRY \
	"{\"flow\":\"app\",\"dev\":1,\"ino\":2," \
	"\"fingerprint\":\"crc32:0a1b2c3d:512\",\"path\":\"/x\"," \
	"\"offset\":7,\"updated\":9}"

/* --- lookup, update, remove, expire ----------------------------------- */

START_TEST(set_then_find_returns_entry_and_marks_dirty)
{
	struct registry		*reg;
	struct reg_entry	*e;
	int64_t			 t0 = wall_s();

	reg = registry_new(spath);
	ck_assert(!registry_dirty(reg));
	ck_assert_ptr_null(registry_find(reg, "app", 1, 2));
	e = registry_set(reg, "app", 1, 2, 0xabcdef01, 64, "/a.log", 77);
	ck_assert(registry_dirty(reg));
	ck_assert_ptr_eq(registry_find(reg, "app", 1, 2), e);
	ck_assert_str_eq(e->flow, "app");
	ck_assert_str_eq(e->path, "/a.log");
	ck_assert_uint_eq(e->offset, 77);
	ck_assert_uint_eq(e->fp_crc, 0xabcdef01);
	ck_assert_uint_eq(e->fp_len, 64);
	ck_assert_int_ge(e->updated, t0);
	ck_assert_int_le(e->updated, wall_s());
	ck_assert_ptr_null(registry_find(reg, "app", 1, 3));
	ck_assert_ptr_null(registry_find(reg, "other", 1, 2));
	e = registry_set(reg, "app", 1, 2, 0x11, 128, "/b.log", 99);
	ck_assert_uint_eq(registry_count(reg), 1);
	ck_assert_str_eq(e->path, "/b.log");
	ck_assert_uint_eq(e->offset, 99);
	ck_assert_uint_eq(e->fp_len, 128);
	registry_free(reg);
}
END_TEST

START_TEST(set_with_unchanged_values_keeps_registry_clean)
{
	struct registry	*reg;
	int64_t		 t0;
	int		 tries;

	reg = registry_new(spath);
	/* Retry if the wall clock ticks in between ("updated" would move). */
	for (tries = 0; tries < 5; tries++) {
		t0 = wall_s();
		registry_set(reg, "app", 1, 2, 3, 4, "/p", 5);
		ck_assert_int_eq(registry_save(reg, false), 0);
		ck_assert(!registry_dirty(reg));
		registry_set(reg, "app", 1, 2, 3, 4, "/p", 5);
		if (wall_s() == t0)
			break;
	}
	ck_assert_int_lt(tries, 5);
	ck_assert(!registry_dirty(reg));
	registry_set(reg, "app", 1, 2, 3, 4, "/p", 6);
	ck_assert(registry_dirty(reg));
	registry_free(reg);
}
END_TEST

START_TEST(remove_drops_only_that_entry)
{
	struct registry	*reg;

	reg = registry_new(spath);
	fill_variant(reg, 1);
	ck_assert_int_eq(registry_save(reg, false), 0);
	registry_remove(reg, "app", 2049, 101);
	ck_assert(registry_dirty(reg));
	ck_assert_uint_eq(registry_count(reg), NVAR - 1);
	ck_assert_ptr_null(registry_find(reg, "app", 2049, 101));
	ck_assert_ptr_nonnull(registry_find(reg, "app", 2049, 100));
	ck_assert_ptr_nonnull(registry_find(reg, "app", 2049, 102));
	ck_assert_int_eq(registry_save(reg, false), 0);
	registry_remove(reg, "app", 2049, 101);		/* absent: no-op */
	registry_remove(reg, "nope", 2049, 100);
	ck_assert(!registry_dirty(reg));
	ck_assert_uint_eq(registry_count(reg), NVAR - 1);
	registry_free(reg);
}
END_TEST

START_TEST(expire_drops_entries_older_than_ttl)
{
	struct registry	*reg;

	reg = registry_new(spath);
	registry_set(reg, "app", 1, 1, 0, 0, "/1", 1)->updated = 100;
	registry_set(reg, "app", 1, 2, 0, 0, "/2", 2)->updated = 250;
	registry_set(reg, "app", 1, 3, 0, 0, "/3", 3)->updated = 300;
	ck_assert_int_eq(registry_save(reg, false), 0);
	registry_expire(reg, 400, 0);			/* disabled */
	registry_expire(reg, 400, 1000);		/* nothing that old */
	ck_assert_uint_eq(registry_count(reg), 3);
	ck_assert(!registry_dirty(reg));
	registry_expire(reg, 400, 150);			/* cut-off 250 */
	ck_assert_uint_eq(registry_count(reg), 2);
	ck_assert(registry_dirty(reg));
	ck_assert_ptr_null(registry_find(reg, "app", 1, 1));
	ck_assert_ptr_nonnull(registry_find(reg, "app", 1, 2));
	ck_assert_ptr_nonnull(registry_find(reg, "app", 1, 3));
	registry_free(reg);
}
END_TEST

/*
 * The table against a model: random sets, removals and expiries over 3,000
 * keys of two flows (the table grows to 4,096 slots and its entries come
 * and go by the hundred, so runs of full slots form, wrap past the end of
 * the array and are closed up by removals).  After each step the count
 * agrees, and every 97 steps (and at the end) every key is found exactly
 * when the model holds it, with its offset and time.
 */
#define MODEL_KEYS	3000

START_TEST(random_sets_removes_and_expiries_agree_with_a_model)
{
	struct registry		*reg;
	struct reg_entry	*e;
	static int64_t		 upd[MODEL_KEYS];	/* 0: absent */
	static uint64_t		 off[MODEL_KEYS];
	uint32_t		 seed = 12345;
	size_t			 n = 0, k, step, i;
	int64_t			 clock = 1000, ttl;
	const char		*flow;

	memset(upd, 0, sizeof(upd));
	reg = registry_new(spath);
	for (step = 0; step < 40000; step++) {
		seed = seed * 1103515245u + 12345u;
		k = (seed >> 8) % MODEL_KEYS;
		flow = k % 2 ? "app" : "web";
		switch ((seed >> 4) % 16) {
		case 0:		/* now and then, an expiry of about half */
			ttl = (clock - 1000) / 2;	/* 0 would disable it */
			if ((seed >> 20) % 64 != 0 || ttl == 0)
				break;
			registry_expire(reg, clock, ttl);
			for (i = 0; i < MODEL_KEYS; i++)
				if (upd[i] != 0 && upd[i] < clock - ttl) {
					upd[i] = 0;
					n--;
				}
			break;
		case 1: case 2: case 3: case 4: case 5:
			registry_remove(reg, flow, 7, k);
			if (upd[k] != 0) {
				upd[k] = 0;
				n--;
			}
			break;
		default:
			e = registry_set(reg, flow, 7, k, 0, 0, "/p", step);
			e->updated = ++clock;
			if (upd[k] == 0)
				n++;
			upd[k] = clock;
			off[k] = step;
			break;
		}
		ck_assert_uint_eq(registry_count(reg), n);
		if (step % 97 != 0 && step < 39990)
			continue;
		for (i = 0; i < MODEL_KEYS; i++) {
			e = registry_find(reg, i % 2 ? "app" : "web", 7, i);
			if (upd[i] == 0) {
				ck_assert_ptr_null(e);
				continue;
			}
			ck_assert_ptr_nonnull(e);
			ck_assert_uint_eq(e->offset, off[i]);
			ck_assert_int_eq(e->updated, upd[i]);
			/* the other flow's key is another entry */
			ck_assert_ptr_null(registry_find(reg,
			    i % 2 ? "web" : "app", 7, i));
		}
	}
	registry_free(reg);
}
END_TEST

START_TEST(flows_sharing_dev_ino_keep_separate_entries)
{
	struct registry		*reg, *r2;
	int			 r;

	reg = registry_new(spath);
	registry_set(reg, "a", 5, 6, 0x1, 10, "/shared.log", 100);
	registry_set(reg, "b", 5, 6, 0x1, 10, "/shared.log", 200);
	ck_assert_uint_eq(registry_count(reg), 2);
	ck_assert_uint_eq(registry_find(reg, "a", 5, 6)->offset, 100);
	ck_assert_uint_eq(registry_find(reg, "b", 5, 6)->offset, 200);
	ck_assert_int_eq(registry_save(reg, false), 0);
	r2 = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(registry_count(r2), 2);
	ck_assert_uint_eq(registry_find(r2, "a", 5, 6)->offset, 100);
	ck_assert_uint_eq(registry_find(r2, "b", 5, 6)->offset, 200);
	registry_free(r2);
	registry_remove(reg, "a", 5, 6);
	ck_assert_uint_eq(registry_find(reg, "b", 5, 6)->offset, 200);
	registry_free(reg);
}
END_TEST

/* A renamed flow (issue 36): every entry of the old name moves to the new
 * one, an entry the new one has for the same file wins, the other flows
 * stay; the flows' descriptions survive a save, only for names with
 * entries. */
START_TEST(rename_flow_moves_entries_and_descriptions_survive)
{
	struct registry		*reg, *r2;
	const struct reg_flowdesc *d;
	const char		**names;
	size_t			 n, i;
	int			 r;

	reg = registry_new(spath);
	for (i = 0; i < 100; i++)
		registry_set(reg, "app", 1, i, 0x1, 10, "/a.log", i);
	registry_set(reg, "web", 1, 7, 0x1, 10, "/a.log", 1000);
	registry_set(reg, "other", 1, 3, 0x1, 10, "/o.log", 5);
	registry_describe_flow(reg, "app", "s1", "/w/*.log");
	registry_describe_flow(reg, "gone", "s9", "/g/*.log");
	ck_assert_int_eq(registry_save(reg, false), 0);
	ck_assert_uint_eq(registry_rename_flow(reg, "app", "web"), 99);
	ck_assert(registry_dirty(reg));
	ck_assert_uint_eq(registry_count(reg), 101);
	ck_assert_uint_eq(registry_flow_count(reg, "app"), 0);
	ck_assert_uint_eq(registry_flow_count(reg, "web"), 100);
	ck_assert_uint_eq(registry_find(reg, "web", 1, 7)->offset, 1000);
	ck_assert_uint_eq(registry_find(reg, "web", 1, 42)->offset, 42);
	ck_assert_uint_eq(registry_find(reg, "other", 1, 3)->offset, 5);
	ck_assert_ptr_null(registry_find(reg, "app", 1, 42));
	names = registry_flow_names(reg, &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(names[0], "other");
	ck_assert_str_eq(names[1], "web");
	free(names);
	registry_describe_flow(reg, "web", "s1", "/w/*.log");
	ck_assert_int_eq(registry_save(reg, false), 0);
	r2 = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(registry_flow_count(r2, "web"), 100);
	d = registry_flow_desc(r2, "web");
	ck_assert_ptr_nonnull(d);
	ck_assert_str_eq(d->stream, "s1");
	ck_assert_str_eq(d->pattern, "/w/*.log");
	/* No entries: not saved. */
	ck_assert_ptr_null(registry_flow_desc(r2, "app"));
	ck_assert_ptr_null(registry_flow_desc(r2, "gone"));
	ck_assert_ptr_null(registry_flow_desc(r2, "other"));
	registry_free(r2);
	registry_free(reg);
}
END_TEST

/* --- save ------------------------------------------------------------- */

START_TEST(round_trip_preserves_every_field)
{
	static const char *path3 = "/var/log/we\"ird\\na me\n\t\xc3\xbc.log";
	struct registry		*reg, *r2;
	struct reg_entry	*a, *b;
	int			 r;

	reg = registry_new(spath);
	fill_variant(reg, 1);
	registry_set(reg, "edge", UINT64_MAX, (1ULL << 63) + 5, UINT32_MAX,
	    UINT32_MAX, path3, INT64_MAX)->updated = -5;
	registry_set(reg, "zero", 0, 0, 0, 0, "", 0)->updated = 0;
	ck_assert_int_eq(registry_save(reg, false), 0);
	ck_assert(!registry_dirty(reg));
	r2 = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	ck_assert(!registry_dirty(r2));
	ck_assert_uint_eq(registry_count(r2), NVAR + 2);
	check_entries(r2, 1);
	a = registry_find(reg, "edge", UINT64_MAX, (1ULL << 63) + 5);
	b = registry_find(r2, "edge", UINT64_MAX, (1ULL << 63) + 5);
	ck_assert_ptr_nonnull(b);
	ck_assert_str_eq(b->flow, a->flow);
	ck_assert_str_eq(b->path, path3);
	ck_assert_uint_eq(b->fp_crc, UINT32_MAX);
	ck_assert_uint_eq(b->fp_len, UINT32_MAX);
	ck_assert_uint_eq(b->offset, INT64_MAX);
	ck_assert_int_eq(b->updated, -5);
	b = registry_find(r2, "zero", 0, 0);
	ck_assert_ptr_nonnull(b);
	ck_assert_str_eq(b->path, "");
	ck_assert_uint_eq(b->offset, 0);
	ck_assert_int_eq(b->updated, 0);
	registry_free(r2);
	registry_free(reg);
}
END_TEST

START_TEST(saved_file_is_private_and_versioned)
{
	struct registry	*reg;
	struct stat	 st;
	json_t		*head, *e;
	json_error_t	 jerr;
	char		*text, *line, *nl;
	size_t		 len, n = 0;

	reg = registry_new(spath);
	fill_variant(reg, 1);
	ck_assert_int_eq(registry_save(reg, false), 0);
	ck_assert_int_eq(stat(spath, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	text = tu_slurp(spath, &len);
	/* JSON Lines: a header, then one entry object a line. */
	nl = strchr(text, '\n');
	ck_assert_ptr_nonnull(nl);
	head = json_loadb(text, (size_t)(nl - text), 0, &jerr);
	ck_assert_ptr_nonnull(head);
	ck_assert_int_eq(json_integer_value(json_object_get(head, "version")),
	    2);
	ck_assert_int_eq(json_integer_value(json_object_get(head, "entries")),
	    NVAR);
	ck_assert_uint_eq(strlen(json_string_value(json_object_get(head,
	    "crc32"))), 8);
	json_decref(head);
	for (line = nl + 1; *line != '\0'; line = nl + 1, n++) {
		nl = strchr(line, '\n');
		ck_assert_ptr_nonnull(nl);
		e = json_loadb(line, (size_t)(nl - line), 0, &jerr);
		ck_assert_msg(json_is_object(e), "line %zu: %s", n + 2,
		    jerr.text);
		json_decref(e);
	}
	ck_assert_uint_eq(n, NVAR);
	ck_assert_ptr_nonnull(strstr(text, "\"fingerprint\":"
	    "\"crc32:deadbe01:512\""));
	free(text);
	ck_assert(!exists(sbak));		/* first save: nothing to keep */
	ck_assert_int_eq(count_prefixed("state.json.", false), 0);
	registry_free(reg);
}
END_TEST

START_TEST(save_writes_only_when_dirty_unless_forced)
{
	struct registry	*reg;
	ino_t		 i1, i2;

	reg = registry_new(spath);
	ck_assert_int_eq(registry_save(reg, false), 0);
	ck_assert(!exists(spath));		/* clean and empty: no write */
	fill_variant(reg, 1);
	ck_assert_int_eq(registry_save(reg, false), 0);
	i1 = inode_of(spath);
	ck_assert_int_eq(registry_save(reg, false), 0);
	ck_assert(inode_of(spath) == i1);	/* not dirty: untouched */
	ck_assert_int_eq(registry_save(reg, true), 0);
	i2 = inode_of(spath);
	ck_assert(i2 != i1);			/* forced: new generation */
	registry_set(reg, "app", 2049, 100, 1, 1, "/new", 1);
	ck_assert_int_eq(registry_save(reg, false), 0);
	ck_assert(inode_of(spath) != i2);
	ck_assert(inode_of(sbak) == i2);
	registry_free(reg);
}
END_TEST

START_TEST(bak_holds_previous_generation)
{
	struct registry	*reg, *r2;
	char		 old[PATH_MAX + 16];
	int		 r;

	reg = registry_new(spath);
	fill_variant(reg, 1);
	ck_assert_int_eq(registry_save(reg, false), 0);
	registry_free(reg);
	reg = registry_new(spath);
	fill_variant(reg, 2);
	ck_assert_int_eq(registry_save(reg, false), 0);
	r2 = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	check_variant(r2, 2);
	registry_free(r2);
	/* Read the .bak as if it were the state file. */
	snprintf(old, sizeof(old), "%s/old.json", dir);
	ck_assert_int_eq(link(sbak, old), 0);
	r2 = load_new(old, &r);
	ck_assert_int_eq(r, 0);
	check_variant(r2, 1);
	registry_free(r2);
	ck_assert_int_eq(count_prefixed("state.json.tmp", false), 0);
	ck_assert_int_eq(count_prefixed("state.json.bak.tmp", false), 0);
	registry_free(reg);
}
END_TEST

START_TEST(save_into_missing_directory_fails_and_stays_dirty)
{
	struct registry	*reg;
	char		 p[PATH_MAX + 32];

	snprintf(p, sizeof(p), "%s/no/such/dir/state.json", dir);
	reg = registry_new(p);
	fill_variant(reg, 1);
	ck_assert_int_eq(registry_save(reg, false), -ENOENT);
	ck_assert(registry_dirty(reg));
	ck_assert_int_eq(registry_save(reg, true), -ENOENT);
	ck_assert(registry_dirty(reg));
	registry_free(reg);
}
END_TEST

START_TEST(save_into_readonly_directory_fails_and_stays_dirty)
{
	struct registry	*reg;

	if (geteuid() == 0)
		return;		/* root ignores directory modes */
	reg = registry_new(spath);
	fill_variant(reg, 1);
	ck_assert_int_eq(chmod(dir, 0500), 0);
	ck_assert_int_eq(registry_save(reg, false), -EACCES);
	ck_assert(registry_dirty(reg));
	ck_assert_int_eq(chmod(dir, 0700), 0);
	ck_assert_int_eq(registry_save(reg, false), 0);
	ck_assert(!registry_dirty(reg));
	registry_free(reg);
}
END_TEST

/*
 * A save of reg that returned r must have failed with err: reg still
 * dirty, no path.tmp left, and spath still generation v.
 */
static void
assert_save_failed_keeping(struct registry *reg, int r, int err, int v)
{
	struct registry	*r2;
	int		 lr;

	ck_assert_int_eq(r, err);
	ck_assert(registry_dirty(reg));
	ck_assert_int_eq(count_prefixed("state.json.tmp", false), 0);
	r2 = load_new(spath, &lr);
	ck_assert_int_eq(lr, 0);
	check_variant(r2, v);
	registry_free(r2);
}

/* A short write (here: the file size limit) must leave the old state. */
START_TEST(save_write_error_keeps_previous_state_and_stays_dirty)
{
	struct registry	*reg, *r2;
	struct rlimit	 old, lim;
	char		 p[64];
	int		 i, r;

	reg = registry_new(spath);
	fill_variant(reg, 1);
	ck_assert_int_eq(registry_save(reg, false), 0);
	for (i = 0; i < 200; i++) {
		snprintf(p, sizeof(p), "/var/log/many/%d.log", i);
		registry_set(reg, "many", 9, (uint64_t)i, 1, 1, p, 1);
	}
	signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 4096;
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
	r = registry_save(reg, false);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	assert_save_failed_keeping(reg, r, -EFBIG, 1);
	ck_assert_int_eq(registry_save(reg, false), 0);
	r2 = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(registry_count(r2), NVAR + 200);
	registry_free(r2);
	registry_free(reg);
}
END_TEST

START_TEST(ten_thousand_entries_round_trip)
{
	struct registry		*reg, *r2;
	struct reg_entry	*e;
	char			 p[64];
	uint64_t		 i;
	int			 r;

	reg = registry_new(spath);
	for (i = 0; i < 10000; i++) {
		snprintf(p, sizeof(p), "/var/log/big/%ju.log", (uintmax_t)i);
		registry_set(reg, i % 2 ? "odd" : "even", 2049, 1000000 + i,
		    (uint32_t)i, 1024, p, i * 4096);
	}
	ck_assert_uint_eq(registry_count(reg), 10000);
	ck_assert_int_eq(registry_save(reg, false), 0);
	r2 = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(registry_count(r2), 10000);
	for (i = 0; i < 10000; i++) {
		e = registry_find(r2, i % 2 ? "odd" : "even", 2049,
		    1000000 + i);
		ck_assert_ptr_nonnull(e);
		ck_assert_uint_eq(e->offset, i * 4096);
		ck_assert_uint_eq(e->fp_crc, (uint32_t)i);
		ck_assert_ptr_null(registry_find(r2, i % 2 ? "even" : "odd",
		    2049, 1000000 + i));
	}
	registry_free(r2);
	registry_free(reg);
}
END_TEST

START_TEST(non_utf8_path_is_stored_lossily_and_file_stays_loadable)
{
	struct registry	*reg, *r2;
	int		 r;

	reg = registry_new(spath);
	registry_set(reg, "app", 1, 2, 3, 4, "/var/log/\xff\xfe.log", 5);
	ck_assert_int_eq(registry_save(reg, false), 0);
	r2 = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	ck_assert_str_eq(registry_find(r2, "app", 1, 2)->path,
	    "/var/log/??.log");
	ck_assert_uint_eq(registry_find(r2, "app", 1, 2)->offset, 5);
	registry_free(r2);
	registry_free(reg);
}
END_TEST

/* --- load ------------------------------------------------------------- */

START_TEST(load_with_no_files_is_empty_and_ok)
{
	struct registry	*reg;
	int		 r;

	reg = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(registry_count(reg), 0);
	ck_assert(!registry_dirty(reg));
	registry_free(reg);
}
END_TEST

START_TEST(load_replaces_entries_already_present)
{
	struct registry	*reg;

	save_variant_as(spath, 1);
	reg = registry_new(spath);
	registry_set(reg, "stale", 1, 1, 1, 1, "/stale", 1);
	ck_assert_int_eq(registry_load(reg), 0);
	ck_assert_ptr_null(registry_find(reg, "stale", 1, 1));
	check_variant(reg, 1);
	ck_assert(!registry_dirty(reg));
	registry_free(reg);
}
END_TEST

START_TEST(load_missing_file_uses_bak)
{
	struct registry	*reg;
	int		 r;

	save_variant_as(sbak, 2);
	reg = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	check_variant(reg, 2);
	ck_assert(registry_dirty(reg));
	ck_assert_int_eq(count_prefixed("state.json.corrupt-", false), 0);
	registry_free(reg);
}
END_TEST

START_TEST(load_empty_file_falls_back_to_bak)
{
	save_variant_as(sbak, 2);
	tu_write(spath, "", 0);
	assert_falls_back_to_bak();
}
END_TEST

START_TEST(load_nul_filled_file_falls_back_to_bak)
{
	char	 zeros[4096];

	memset(zeros, 0, sizeof(zeros));
	save_variant_as(sbak, 2);
	tu_write(spath, zeros, sizeof(zeros));
	assert_falls_back_to_bak();
}
END_TEST

START_TEST(load_garbage_falls_back_to_bak)
{
	static const char g[] = "\x89PNG this is not json }{][\"\n";

	save_variant_as(sbak, 2);
	tu_write(spath, g, sizeof(g) - 1);
	assert_falls_back_to_bak();
}
END_TEST

START_TEST(load_wrong_version_falls_back_to_bak)
{
	save_variant_as(sbak, 2);
	write_with_crc(spath, 2, "[" GOOD_ENTRY "]");
	assert_falls_back_to_bak();
}
END_TEST

START_TEST(load_file_with_valid_crc_written_by_hand_is_accepted)
{
	struct registry		*reg;
	struct reg_entry	*e;
	int			 r;

	/* Control for the field tests below: the helper makes good files. */
	write_with_crc(spath, 1, "[" GOOD_ENTRY "]");
	reg = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	e = registry_find(reg, "app", 1, 2);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->fp_crc, 0x0a1b2c3d);
	ck_assert_uint_eq(e->fp_len, 512);
	ck_assert_uint_eq(e->offset, 7);
	ck_assert_int_eq(e->updated, 9);
	registry_free(reg);
}
END_TEST

/*
 * The file is read member by member and entry by entry, but it is still
 * JSON: members in any order, blanks anywhere, unknown keys ignored.
 */
START_TEST(load_accepts_members_in_any_order_and_unknown_keys)
{
	const char	*files = "[" GOOD_ENTRY ",\n\t "
	    "{\"updated\":1,\"offset\":3,\"path\":\"/y\",\"flow\":\"b\","
	    "\"fingerprint\":\"crc32:00000001:1\",\"ino\":5,\"dev\":4}]";
	struct registry		*reg;
	struct reg_entry	*e;
	json_t			*j;
	uLong			 crc = crc32(0L, Z_NULL, 0);
	char			*text;
	int			 r;

	j = json_loads(files, 0, NULL);
	ck_assert_ptr_nonnull(j);
	json_dump_callback(j, crc_cb, &crc, JSON_COMPACT);
	json_decref(j);
	text = xasprintf(" {\n \"files\" :%s ,\"note\": {\"a\": [1, \"]\"]},"
	    "\"crc32\":\"%08lx\",\r\n\"version\"\t: 1 }\n\n", files,
	    (unsigned long)crc);
	tu_write(spath, text, strlen(text));
	free(text);
	reg = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(registry_count(reg), 2);
	ck_assert_ptr_nonnull(registry_find(reg, "app", 1, 2));
	e = registry_find(reg, "b", 4, 5);
	ck_assert_ptr_nonnull(e);
	ck_assert_str_eq(e->path, "/y");
	ck_assert_uint_eq(e->offset, 3);
	registry_free(reg);
}
END_TEST

/*
 * A size noted keeps the registry clean (a tailed file's growth alone is
 * no save), and the next save writes it.
 */
START_TEST(set_size_keeps_clean_and_the_next_save_writes_it)
{
	struct registry		*reg, *r2;
	struct reg_entry	*e;
	int			 r;

	reg = registry_new(spath);
	e = registry_set(reg, "app", 1, 2, 0x0a1b2c3d, 512, "/a.log", 10);
	ck_assert_int_eq(registry_save(reg, false), 0);
	registry_set_size(reg, e, 4096);
	ck_assert(!registry_dirty(reg));
	ck_assert_uint_eq(registry_find(reg, "app", 1, 2)->size, 4096);
	(void)registry_set(reg, "app", 1, 2, 0x0a1b2c3d, 512, "/a.log", 20);
	ck_assert(registry_dirty(reg));
	ck_assert_int_eq(registry_save(reg, false), 0);
	r2 = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	e = registry_find(r2, "app", 1, 2);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->offset, 20);
	ck_assert_uint_eq(e->size, 4096);
	registry_free(r2);
	registry_free(reg);
}
END_TEST

/*
 * The entry of a spool file keeps, through a save and a load, where the
 * spool file is and which file it came from; an entry without it (every
 * file written before it existed) loads with none, and a bad one is
 * refused like any bad field.
 */
START_TEST(spool_entry_round_trips_and_is_optional)
{
	struct registry		*reg, *r2;
	struct reg_entry	*e;
	int			 r;

	reg = registry_new(spath);
	fill_variant(reg, 1);
	e = registry_set(reg, "app", 64768, 99, 0x0a1b2c3d, 512,
	    "/var/log/a.log", 1000);
	registry_set_size(reg, e, 5000);
	registry_set_spool(reg, e, "/var/lib/disagent/spool/app-1-2-1000.spool",
	    1, 2);
	ck_assert(registry_dirty(reg));
	ck_assert_int_eq(registry_save(reg, false), 0);
	r2 = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	check_entries(r2, 1);
	e = registry_find(r2, "app", 64768, 99);
	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_nonnull(reg_spool(e));
	ck_assert_str_eq(reg_spool(e)->file,
	    "/var/lib/disagent/spool/app-1-2-1000.spool");
	ck_assert_uint_eq(reg_spool(e)->dev, 1);
	ck_assert_uint_eq(reg_spool(e)->ino, 2);
	ck_assert_uint_eq(e->offset, 1000);
	ck_assert_uint_eq(e->size, 5000);
	ck_assert_str_eq(e->path, "/var/log/a.log");
	/* The others have none. */
	ck_assert_ptr_null(reg_spool(registry_find(r2, "app", 2049, 100)));
	registry_remove(r2, "app", 64768, 99);
	ck_assert_int_eq(registry_save(r2, false), 0);
	registry_free(r2);
	r2 = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	check_entries(r2, 1);
	ck_assert_ptr_null(registry_find(r2, "app", 64768, 99));
	registry_free(r2);
	registry_free(reg);
	/* A spool that is not an object with an absolute file is refused
	 * (no .bak to fall back to). */
	ck_assert_int_eq(unlink(sbak), 0);
	write_with_crc(spath, 1, "[{\"flow\":\"app\",\"dev\":1,\"ino\":2,"
	    "\"fingerprint\":\"crc32:0a1b2c3d:512\",\"path\":\"/x\","
	    "\"offset\":7,\"updated\":9,\"spool\":{\"file\":\"rel\","
	    "\"dev\":1,\"ino\":2}}]");
	reg = load_new(spath, &r);
	ck_assert_int_eq(r, -EBADMSG);
	registry_free(reg);
}
END_TEST

/* VmRSS or VmHWM of this process, in KiB; -1 when unknown. */
static long
status_kib(const char *key)
{
	char	 line[256];
	FILE	*f;
	long	 v = -1;

	f = fopen("/proc/self/status", "r");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, key, strlen(key)) == 0)
			v = strtol(line + strlen(key), NULL, 10);
	fclose(f);
	return v;
}

/* Start a new peak RSS (Linux >= 4.0); false when not possible here. */
static bool
reset_peak_rss(void)
{
	int	 fd;
	bool	 ok;

	fd = open("/proc/self/clear_refs", O_WRONLY);
	if (fd < 0)
		return false;
	ok = write(fd, "5", 1) == 1;
	close(fd);
	return ok;
}

/*
 * Load path, which holds n entries, and assert the rise in peak RSS it
 * cost stays within the file, the table (~170 bytes an entry) and slack.
 * Nothing is asserted where that cannot be measured (no clear_refs, or a
 * sanitizer's allocator that keeps freed memory).
 */
static void
assert_load_is_bounded(const char *path, size_t n)
{
	struct registry	*reg;
	struct stat	 st;
	long		 before, peak;
	int		 r;

#if defined(__SANITIZE_ADDRESS__)
	return;
#endif
	ck_assert_int_eq(stat(path, &st), 0);
	if (!reset_peak_rss() || (before = status_kib("VmRSS:")) < 0)
		return;
	reg = load_new(path, &r);
	peak = status_kib("VmHWM:");
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(registry_count(reg), n);
	registry_free(reg);
	ck_assert_msg(peak - before < (long)(2 * st.st_size / 1024) + 2048,
	    "loading %ld KiB of state raised peak RSS by %ld KiB",
	    (long)(st.st_size / 1024), peak - before);
}

/*
 * Loading a state file of many entries holds the file and the table, plus
 * one entry's JSON tree at a time: a tree of the whole file (about 1.5 KB
 * per entry) took 15 MB at start for 10,000 files.  Measured as the rise in
 * peak RSS, so only in builds without sanitizers.
 */
START_TEST(load_of_many_entries_builds_one_entry_tree_at_a_time)
{
	struct registry	*reg;
	char		 p[80];
	uint64_t	 i;

	reg = registry_new(spath);
	for (i = 0; i < 20000; i++) {
		snprintf(p, sizeof(p), "/var/log/app/instance-%05ju.log",
		    (uintmax_t)i);
		registry_set(reg, "app", 2049, 5000000 + i, (uint32_t)i, 512,
		    p, i * 100);
	}
	ck_assert_int_eq(registry_save(reg, false), 0);
	registry_free(reg);
	assert_load_is_bounded(spath, 20000);
}
END_TEST

/* Rewrite path with ch just after the first occurrence of needle. */
static void
set_char_after(const char *path, const char *needle, char ch)
{
	char	*text, *at;
	size_t	 len;

	text = tu_slurp(path, &len);
	at = strstr(text, needle);
	ck_assert_msg(at != NULL, "no %s in %s", needle, path);
	at[strlen(needle)] = ch;
	tu_write(path, text, len);
	free(text);
}

START_TEST(load_flipped_offset_digit_fails_crc_and_falls_back)
{
	save_variant_as(spath, 1);
	save_variant_as(sbak, 2);
	set_char_after(spath, "\"offset\":100", '7');
	assert_falls_back_to_bak();
}
END_TEST

static const char *const bad_files[] = {
	/* complete: not an object, no mtime, a bad tail fingerprint */
	"[{\"flow\":\"app\",\"dev\":1,\"ino\":2,\"fingerprint\":"
	"\"crc32:0a1b2c3d:512\",\"path\":\"/x\",\"offset\":7,"
	"\"updated\":9,\"complete\":true}]",
	"[{\"flow\":\"app\",\"dev\":1,\"ino\":2,\"fingerprint\":"
	"\"crc32:0a1b2c3d:512\",\"path\":\"/x\",\"offset\":7,"
	"\"updated\":9,\"complete\":{\"tail\":\"crc32:0a1b2c3d:7\"}}]",
	"[{\"flow\":\"app\",\"dev\":1,\"ino\":2,\"fingerprint\":"
	"\"crc32:0a1b2c3d:512\",\"path\":\"/x\",\"offset\":7,"
	"\"updated\":9,\"complete\":{\"mtime_ns\":5,\"tail\":\"x\"}}]",
	/* offset as a string */
	"[{\"flow\":\"app\",\"dev\":1,\"ino\":2,\"fingerprint\":"
	"\"crc32:0a1b2c3d:512\",\"path\":\"/x\",\"offset\":\"7\","
	"\"updated\":9}]",
	/* size as a string, and below the offset */
	"[{\"flow\":\"app\",\"dev\":1,\"ino\":2,\"fingerprint\":"
	"\"crc32:0a1b2c3d:512\",\"path\":\"/x\",\"offset\":7,"
	"\"size\":\"9\",\"updated\":9}]",
	"[{\"flow\":\"app\",\"dev\":1,\"ino\":2,\"fingerprint\":"
	"\"crc32:0a1b2c3d:512\",\"path\":\"/x\",\"offset\":7,"
	"\"size\":3,\"updated\":9}]",
	/* offset as a real */
	"[{\"flow\":\"app\",\"dev\":1,\"ino\":2,\"fingerprint\":"
	"\"crc32:0a1b2c3d:512\",\"path\":\"/x\",\"offset\":7.5,"
	"\"updated\":9}]",
	/* flow missing */
	"[{\"dev\":1,\"ino\":2,\"fingerprint\":\"crc32:0a1b2c3d:512\","
	"\"path\":\"/x\",\"offset\":7,\"updated\":9}]",
	/* flow empty */
	"[{\"flow\":\"\",\"dev\":1,\"ino\":2,\"fingerprint\":"
	"\"crc32:0a1b2c3d:512\",\"path\":\"/x\",\"offset\":7,\"updated\":9}]",
	/* dev null */
	"[{\"flow\":\"app\",\"dev\":null,\"ino\":2,\"fingerprint\":"
	"\"crc32:0a1b2c3d:512\",\"path\":\"/x\",\"offset\":7,\"updated\":9}]",
	/* bad fingerprint: uppercase hex, short, no length, junk length */
	"[{\"flow\":\"app\",\"dev\":1,\"ino\":2,\"fingerprint\":"
	"\"crc32:0A1B2C3D:512\",\"path\":\"/x\",\"offset\":7,\"updated\":9}]",
	"[{\"flow\":\"app\",\"dev\":1,\"ino\":2,\"fingerprint\":"
	"\"crc32:0a1b2c:512\",\"path\":\"/x\",\"offset\":7,\"updated\":9}]",
	"[{\"flow\":\"app\",\"dev\":1,\"ino\":2,\"fingerprint\":"
	"\"crc32:0a1b2c3d:\",\"path\":\"/x\",\"offset\":7,\"updated\":9}]",
	"[{\"flow\":\"app\",\"dev\":1,\"ino\":2,\"fingerprint\":"
	"\"crc32:0a1b2c3d:5x\",\"path\":\"/x\",\"offset\":7,\"updated\":9}]",
	"[{\"flow\":\"app\",\"dev\":1,\"ino\":2,\"fingerprint\":"
	"\"crc32:0a1b2c3d:4294967296\",\"path\":\"/x\",\"offset\":7,"
	"\"updated\":9}]",
	/* entry not an object */
	"[42]",
	/* the same key twice */
	"[" GOOD_ENTRY "," GOOD_ENTRY "]",
};

START_TEST(load_wrong_field_types_fall_back_to_bak)
{
	save_variant_as(sbak, 2);
	write_with_crc(spath, 1, bad_files[_i]);
	assert_falls_back_to_bak();
}
END_TEST

START_TEST(load_wrong_top_level_shape_falls_back_to_bak)
{
	static const char *const tops[] = {
		"[]",
		"{\"version\": 1, \"files\": []}",
		"{\"version\": \"1\", \"crc32\": \"0d4cbb29\", \"files\": []}",
		"{\"version\": 1, \"crc32\": \"0d4cbb29\", \"files\": {}}",
		"{\"version\": 1, \"crc32\": \"0D4CBB29\", \"files\": []}",
		"{\"version\": 1, \"crc32\": \"0d4cbb29\", \"files\": []}x",
		"{\"version\": 1, \"crc32\": \"0d4cbb29\", \"files\": []} {}",
		"{\"version\": 1, \"version\": 1, \"crc32\": \"0d4cbb29\", "
		    "\"files\": []}",
		"{\"version\": 1, \"crc32\": \"0d4cbb29\", \"files\": [], "
		    "\"files\": []}",
		"{\"version\": 1, \"crc32\": \"0d4cbb29\", \"files\": [],}",
		"{\"version\": 1 \"crc32\": \"0d4cbb29\", \"files\": []}",
		"{\"version\": 1, \"crc32\": \"0d4cbb29\", \"files\": [,]}",
		"{\"version\": 1, \"crc32\": \"0d4cbb29\", \"files\": []",
		"{1: 1, \"version\": 1, \"crc32\": \"0d4cbb29\", "
		    "\"files\": []}",
		"{\"version\": 1, \"crc32\": \"0d4cbb29\", \"files\" []}",
	};
	size_t	 i;

	for (i = 0; i < ARRAY_SIZE(tops); i++) {
		save_variant_as(sbak, 2);
		tu_write(spath, tops[i], strlen(tops[i]));
		assert_falls_back_to_bak();
		count_prefixed("state.json.corrupt-", true);
	}
}
END_TEST

START_TEST(empty_registry_file_has_the_crc_the_shape_tests_use)
{
	static const char v1_empty[] =
	    "{\"version\": 1, \"crc32\": \"0d4cbb29\", \"files\": []}\n";
	struct registry	*reg, *r2;
	char		*text;
	size_t		 len;
	int		 r;

	/* Guards the test above: "0d4cbb29" is crc32("[]"), so only the
	 * shape is wrong in those files, not the checksum: the same file
	 * in the right shape loads. */
	ck_assert_uint_eq(crc32(crc32(0L, Z_NULL, 0), (const Bytef *)"[]", 2),
	    0x0d4cbb29);
	tu_write(spath, v1_empty, strlen(v1_empty));
	r2 = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(registry_count(r2), 0);
	registry_free(r2);
	/* An empty registry saves as a header alone: crc32("") is 0. */
	reg = registry_new(spath);
	ck_assert_int_eq(registry_save(reg, true), 0);
	text = tu_slurp(spath, &len);
	ck_assert_str_eq(text,
	    "{\"version\":2,\"crc32\":\"00000000\",\"entries\":0}\n");
	free(text);
	r2 = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(registry_count(r2), 0);
	registry_free(r2);
	registry_free(reg);
}
END_TEST

/*
 * Every prefix of full (len bytes) as the state file, with generation 2 as
 * the .bak: the .bak is used and the prefix set aside, except for the
 * prefixes of at least len - slack bytes, which load as check_whole says.
 */
static void
assert_prefixes_fall_back(const char *full, size_t len, size_t slack,
    void (*check_whole)(struct registry *))
{
	struct registry	*reg;
	size_t		 n, whole = 0;
	int		 r, saved = log_level;

	save_variant_as(sbak, 2);
	log_level = 0;		/* hundreds of expected corruption reports */
	for (n = 0; n <= len; n++) {
		tu_write(spath, full, n);
		reg = load_new(spath, &r);
		ck_assert_msg(r == 0, "prefix %zu: load returned %d", n, r);
		if (exists(spath)) {
			/* Loaded as is: only the whole text may. */
			ck_assert_msg(n >= len - slack, "prefix %zu of %zu "
			    "loaded", n, len);
			check_whole(reg);
			whole++;
		} else {
			check_variant(reg, 2);
			ck_assert_int_eq(count_prefixed("state.json.corrupt-",
			    true), 1);
		}
		registry_free(reg);
	}
	log_level = saved;
	ck_assert_uint_eq(whole, slack + 1);
}

static void
check_variant_1(struct registry *reg)
{
	check_variant(reg, 1);
}

START_TEST(load_truncated_at_every_offset_never_yields_another_state)
{
	char	*full;
	size_t	 len;

	/* Version 2: the crc covers the last '\n' too. */
	save_variant_as(spath, 1);
	full = tu_slurp(spath, &len);
	assert_prefixes_fall_back(full, len, 0, check_variant_1);
	free(full);
}
END_TEST

START_TEST(load_with_both_files_corrupt_returns_ebadmsg_and_is_empty)
{
	struct registry	*reg;
	int		 r;

	tu_write(spath, "{\"version\": 1,", 14);
	tu_write(sbak, "\0\0\0\0", 4);
	reg = registry_new(spath);
	registry_set(reg, "stale", 1, 1, 1, 1, "/stale", 1);
	ck_assert_int_eq(registry_load(reg), -EBADMSG);
	ck_assert_uint_eq(registry_count(reg), 0);
	/* Left in place, so the next start fails the same way... */
	ck_assert(exists(spath));
	ck_assert(exists(sbak));
	/* ...and a copy of each is kept aside. */
	ck_assert_int_eq(count_prefixed("state.json.corrupt-", false), 1);
	ck_assert_int_eq(count_prefixed("state.json.bak.corrupt-", false), 1);
	registry_free(reg);
	reg = load_new(spath, &r);
	ck_assert_int_eq(r, -EBADMSG);
	registry_free(reg);
}
END_TEST

START_TEST(load_corrupt_file_without_bak_returns_ebadmsg)
{
	struct registry	*reg;
	int		 r;

	tu_write(spath, "garbage", 7);
	reg = load_new(spath, &r);
	ck_assert_int_eq(r, -EBADMSG);
	ck_assert_uint_eq(registry_count(reg), 0);
	registry_free(reg);
	/* Not silently empty on the next start either. */
	reg = load_new(spath, &r);
	ck_assert_int_eq(r, -EBADMSG);
	registry_free(reg);
}
END_TEST

START_TEST(load_missing_file_with_corrupt_bak_returns_ebadmsg)
{
	struct registry	*reg;
	int		 r;

	tu_write(sbak, "{}", 2);
	reg = load_new(spath, &r);
	ck_assert_int_eq(r, -EBADMSG);
	ck_assert_uint_eq(registry_count(reg), 0);
	registry_free(reg);
}
END_TEST

START_TEST(load_unreadable_file_returns_errno_without_using_bak)
{
	struct registry	*reg;
	int		 r;

	if (geteuid() == 0)
		return;		/* root ignores file modes */
	save_variant_as(spath, 1);
	save_variant_as(sbak, 2);
	ck_assert_int_eq(chmod(spath, 0), 0);
	reg = load_new(spath, &r);
	ck_assert_int_eq(r, -EACCES);
	ck_assert_uint_eq(registry_count(reg), 0);
	ck_assert(exists(spath));
	ck_assert_int_eq(count_prefixed("state.json.corrupt-", false), 0);
	registry_free(reg);
}
END_TEST

START_TEST(save_after_fallback_restores_state_file)
{
	struct registry	*reg, *r2;
	int		 r;

	save_variant_as(sbak, 2);
	tu_write(spath, "junk", 4);
	reg = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	ck_assert_int_eq(registry_save(reg, false), 0);
	r2 = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	check_variant(r2, 2);
	ck_assert(!registry_dirty(r2));
	registry_free(r2);
	registry_free(reg);
}
END_TEST

/* --- version 2 (JSON Lines) ------------------------------------------ */

START_TEST(v2_file_written_by_hand_with_valid_crc_is_accepted)
{
	struct registry		*reg;
	struct reg_entry	*e;
	int			 r;

	/* Control for the tests below: the helper makes good files. */
	write_v2_from_array(spath, "[" GOOD_ENTRY "]");
	reg = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(registry_count(reg), 1);
	e = registry_find(reg, "app", 1, 2);
	ck_assert_ptr_nonnull(e);
	ck_assert_str_eq(e->path, "/x");
	ck_assert_uint_eq(e->fp_crc, 0x0a1b2c3d);
	ck_assert_uint_eq(e->offset, 7);
	ck_assert_int_eq(e->updated, 9);
	/* No "complete" (every file written before it existed): none. */
	ck_assert(reg_done(e) == NULL);
	ck_assert(!registry_dirty(reg));
	registry_free(reg);
}
END_TEST

START_TEST(complete_mark_is_durable_only_after_a_save_and_survives_load)
{
	struct registry		*reg;
	struct reg_entry	*e;
	int			 r;

	reg = registry_new(spath);
	e = registry_set(reg, "app", 1, 2, 0x11, 16, "/w.csv", 300);
	ck_assert_int_eq(registry_save(reg, false), 0);
	registry_set_complete(reg, e, true, 1234567890123456789LL,
	    0xdeadbeef, 16);
	ck_assert(registry_dirty(reg));
	/* Marked in memory only: a crash now must not find it complete. */
	ck_assert(!registry_durable(reg, e));
	ck_assert_int_eq(registry_save(reg, false), 0);
	ck_assert(registry_durable(reg, e));
	registry_free(reg);

	reg = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	e = registry_find(reg, "app", 1, 2);
	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_nonnull(reg_done(e));
	ck_assert_int_eq(reg_done(e)->mtime_ns, 1234567890123456789LL);
	ck_assert_uint_eq(reg_done(e)->tail_crc, 0xdeadbeef);
	ck_assert_uint_eq(reg_done(e)->tail_len, 16);
	ck_assert_uint_eq(e->offset, 300);
	ck_assert(registry_durable(reg, e));	/* read from the file */
	/* Cleared (the file changed after delivery): gone at the next load. */
	registry_set_complete(reg, e, false, 0, 0, 0);
	ck_assert(registry_dirty(reg));
	ck_assert_ptr_null(e->rare);	/* nothing rare left: freed */
	ck_assert_int_eq(registry_save(reg, false), 0);
	registry_free(reg);
	reg = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	e = registry_find(reg, "app", 1, 2);
	ck_assert_ptr_nonnull(e);
	ck_assert(reg_done(e) == NULL);
	ck_assert_uint_eq(e->offset, 300);
	registry_free(reg);
}
END_TEST

START_TEST(failed_save_leaves_the_complete_mark_not_durable)
{
	struct registry		*reg;
	struct reg_entry	*e;
	char			 sub[PATH_MAX];

	tu_path(sub, sizeof(sub), dir, "missing/state.json");
	reg = registry_new(sub);
	e = registry_set(reg, "app", 1, 2, 0x11, 16, "/w.csv", 300);
	registry_set_complete(reg, e, true, 5, 6, 7);
	ck_assert_int_ne(registry_save(reg, false), 0);
	ck_assert(!registry_durable(reg, e));
	registry_free(reg);
}
END_TEST

START_TEST(v2_wrong_field_types_fall_back_to_bak)
{
	save_variant_as(sbak, 2);
	write_v2_from_array(spath, bad_files[_i]);
	assert_falls_back_to_bak();
}
END_TEST

START_TEST(v2_nul_filled_body_falls_back_to_bak)
{
	char	*text, *nl;
	size_t	 len, head;

	save_variant_as(spath, 1);
	text = tu_slurp(spath, &len);
	nl = strchr(text, '\n');
	ck_assert_ptr_nonnull(nl);
	head = (size_t)(nl + 1 - text);
	/* A torn write: the size made it to disk, the data did not. */
	memset(text + head, 0, len - head);
	tu_write(spath, text, len);
	free(text);
	save_variant_as(sbak, 2);
	assert_falls_back_to_bak();
}
END_TEST

START_TEST(v2_nul_filled_block_inside_falls_back_to_bak)
{
	char	*text;
	size_t	 len;

	save_variant_as(spath, 1);
	text = tu_slurp(spath, &len);
	ck_assert_uint_gt(len, 120);
	memset(text + 60, 0, 40);
	tu_write(spath, text, len);
	free(text);
	save_variant_as(sbak, 2);
	assert_falls_back_to_bak();
}
END_TEST

START_TEST(v2_bad_checksum_in_header_falls_back_to_bak)
{
	char	*text, *at;
	size_t	 len;

	save_variant_as(spath, 1);
	text = tu_slurp(spath, &len);
	at = strstr(text, "\"crc32\":\"");
	ck_assert_ptr_nonnull(at);
	at += strlen("\"crc32\":\"");
	*at = *at == '0' ? '1' : '0';
	tu_write(spath, text, len);
	free(text);
	save_variant_as(sbak, 2);
	assert_falls_back_to_bak();
}
END_TEST

START_TEST(v2_malformed_header_falls_back_to_bak)
{
	static const char line[] = GOOD_ENTRY "\n";
	/* '@' stands for the body's crc32, '#' for it cut to 7 digits. */
	static const char *const heads[] = {
		"{\"version\":2,\"crc32\":\"@\",\"entries\":\"1\"}\n",
		"{\"version\":2,\"crc32\":\"@\",\"entries\":-1}\n",
		"{\"version\":2,\"crc32\":\"@\",\"entries\":1.0}\n",
		"{\"version\":2,\"crc32\":\"@\"}\n",
		"{\"version\":2,\"entries\":1,\"crc\":\"@\"}\n",
		"{\"version\":2,\"crc32\":\"#\",\"entries\":1}\n",
		"{\"version\":2,\"crc32\":\"@0\",\"entries\":1}\n",
		"{\"version\":2,\"version\":2,\"crc32\":\"@\",\"entries\":1}\n",
		"{\"version\":3,\"crc32\":\"@\",\"entries\":1}\n",
		"{\"version\":2,\"crc32\":\"@\",\"entries\":1} x\n",
		"[\"version\",2,\"crc32\",\"@\",\"entries\",1]\n",
	};
	char		 crc[9];
	const char	*p;
	struct buf	 text;
	size_t		 i;

	snprintf(crc, sizeof(crc), "%08lx", (unsigned long)crc32(crc32(0L,
	    Z_NULL, 0), (const Bytef *)line, (uInt)strlen(line)));
	for (i = 0; i < ARRAY_SIZE(heads); i++) {
		buf_init(&text);
		for (p = heads[i]; *p != '\0'; p++) {
			if (*p == '@' || *p == '#')
				buf_add(&text, crc, *p == '@' ? 8 : 7);
			else
				buf_addc(&text, *p);
		}
		buf_addstr(&text, line);
		save_variant_as(sbak, 2);
		tu_write(spath, text.data, text.len);
		assert_falls_back_to_bak();
		count_prefixed("state.json.corrupt-", true);
		buf_cleanup(&text);
	}
}
END_TEST

START_TEST(v2_header_without_end_of_line_falls_back_to_bak)
{
	static const char head[] =
	    "{\"version\":2,\"crc32\":\"00000000\",\"entries\":0}";

	save_variant_as(sbak, 2);
	tu_write(spath, head, strlen(head));
	assert_falls_back_to_bak();
}
END_TEST

/* A line over the cap is refused before jansson sees it. */
START_TEST(v2_huge_line_falls_back_to_bak)
{
	struct buf	 body;
	size_t		 i;

	buf_init(&body);
	buf_addstr(&body, "{\"flow\":\"app\",\"dev\":1,\"ino\":2,"
	    "\"fingerprint\":\"crc32:0a1b2c3d:512\",\"offset\":7,"
	    "\"updated\":9,\"path\":\"/");
	for (i = 0; i < 2 * 1024 * 1024; i++)
		buf_addc(&body, 'a');
	buf_addstr(&body, "\"}\n");
	save_variant_as(sbak, 2);
	write_v2(spath, body.data, body.len, 1);
	buf_cleanup(&body);
	assert_falls_back_to_bak();
}
END_TEST

/* ...and the writer never writes a line the reader would refuse. */
START_TEST(save_of_an_entry_too_long_to_read_back_fails_and_keeps_state)
{
	struct registry	*reg;
	char		*path;

	reg = registry_new(spath);
	fill_variant(reg, 1);
	ck_assert_int_eq(registry_save(reg, false), 0);
	path = xmalloc(2 * 1024 * 1024);
	memset(path, 'a', 2 * 1024 * 1024 - 1);
	path[2 * 1024 * 1024 - 1] = '\0';
	registry_set(reg, "app", 7, 7, 0, 0, path, 1);
	free(path);
	assert_save_failed_keeping(reg, registry_save(reg, false), -EMSGSIZE,
	    1);
	registry_remove(reg, "app", 7, 7);
	ck_assert_int_eq(registry_save(reg, false), 0);
	registry_free(reg);
}
END_TEST

START_TEST(v2_entry_line_missing_falls_back_to_bak)
{
	char	*body, *second, *third;
	size_t	 n;

	save_variant_as(spath, 1);
	body = body_of(spath, &n);
	second = strchr(body, '\n') + 1;
	third = strchr(second, '\n') + 1;
	memmove(second, third, (size_t)(body + n - third) + 1);
	n -= (size_t)(third - second);
	/* The crc matches what is left: only the count tells. */
	write_v2(spath, body, n, NVAR);
	free(body);
	save_variant_as(sbak, 2);
	assert_falls_back_to_bak();
}
END_TEST

START_TEST(v2_more_lines_than_the_header_counts_fall_back_to_bak)
{
	char	*body;
	size_t	 n;

	save_variant_as(spath, 1);
	body = body_of(spath, &n);
	write_v2(spath, body, n, NVAR - 1);
	free(body);
	save_variant_as(sbak, 2);
	assert_falls_back_to_bak();
}
END_TEST

START_TEST(v2_blank_or_unended_line_falls_back_to_bak)
{
	static const char *const bodies[] = {
		GOOD_ENTRY "\n\n",
		"\n" GOOD_ENTRY "\n",
		GOOD_ENTRY,
		GOOD_ENTRY " x\n",
	};
	size_t	 i;

	for (i = 0; i < ARRAY_SIZE(bodies); i++) {
		save_variant_as(sbak, 2);
		write_v2(spath, bodies[i], strlen(bodies[i]), 1);
		assert_falls_back_to_bak();
		count_prefixed("state.json.corrupt-", true);
	}
}
END_TEST

/* --- version 1, as the previous release wrote it ---------------------- */

/*
 * tests/data/state-v1.json was written by registry_save at commit 542b234
 * (the last to write version 1) from these entries; the path given as
 * "/srv/web/\xff\xfe.log", not UTF-8, was stored as "/srv/web/??.log".
 */
static const struct {
	const char	*flow;
	uint64_t	 dev, ino;
	uint32_t	 fp_crc, fp_len;
	const char	*path;
	uint64_t	 offset;
	int64_t		 updated;
} v1_fixture[] = {
	{ "app", 2049, 131074, 0x0a1b2c3du, 512, "/var/log/app/app.log",
	    1048576, 1790000000 },
	{ "app", 2049, 131075, 0xffffffffu, 4096, "/var/log/app/app.log.1",
	    0, 1789999000 },
	{ "app", UINT64_MAX, (1ULL << 63) + 5, 0, 0,
	    "/var/log/we\"ird\\na me\n\t\xc3\xbc.log", INT64_MAX, -5 },
	{ "app", 2049, 9, 0x00000001u, 1, "/var/log/app/short.log", 1, 1 },
	{ "web-2", 0, 0, 0x12345678u, 1, "", 0, 0 },
	{ "web-2", 64769, 42, 0xdeadbeefu, 512, "/srv/web/access.log",
	    123456789, 1790000123 },
	{ "web-2", 64769, 43, 0x80000000u, 512, "/srv/web/??.log", 77,
	    1790000124 },
	{ "\xc3\xa9t\xc3\xa9", 2050, 7, 0x0badf00du, 333,
	    "/var/log/\xe6\x97\xa5\xe5\xbf\x97.log", 4294967296ULL,
	    1700000000 },
};

/* Exactly the entries of the fixture, every field. */
static void
check_v1_fixture(struct registry *reg)
{
	struct reg_entry	*e;
	size_t			 i;

	ck_assert_uint_eq(registry_count(reg), ARRAY_SIZE(v1_fixture));
	for (i = 0; i < ARRAY_SIZE(v1_fixture); i++) {
		e = registry_find(reg, v1_fixture[i].flow, v1_fixture[i].dev,
		    v1_fixture[i].ino);
		ck_assert_msg(e != NULL, "fixture entry %zu missing", i);
		ck_assert_str_eq(e->flow, v1_fixture[i].flow);
		ck_assert_str_eq(e->path, v1_fixture[i].path);
		ck_assert_uint_eq(e->fp_crc, v1_fixture[i].fp_crc);
		ck_assert_uint_eq(e->fp_len, v1_fixture[i].fp_len);
		ck_assert_uint_eq(e->offset, v1_fixture[i].offset);
		ck_assert_int_eq(e->updated, v1_fixture[i].updated);
	}
}

static char *
v1_fixture_as(const char *path, size_t *len)
{
	char	*text;

	text = tu_data("state-v1.json", len);
	tu_write(path, text, *len);
	return text;
}

/* Load spath: the fixture's entries, dirty (to be saved in version 2). */
static struct registry *
load_fixture_entries(void)
{
	struct registry	*reg;
	int		 r;

	reg = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	check_v1_fixture(reg);
	ck_assert(registry_dirty(reg));
	return reg;
}

START_TEST(v1_file_of_the_previous_release_loads_every_entry)
{
	size_t	 len;

	free(v1_fixture_as(spath, &len));
	registry_free(load_fixture_entries());
	ck_assert_int_eq(count_prefixed("state.json.", false), 0);
}
END_TEST

START_TEST(v1_file_is_upgraded_in_place_by_the_next_save)
{
	struct registry	*reg, *r2;
	char		*v1, *text, *bak;
	size_t		 len, n;
	int		 r;

	v1 = v1_fixture_as(spath, &len);
	reg = load_fixture_entries();
	ck_assert_int_eq(registry_save(reg, false), 0);
	ck_assert(!registry_dirty(reg));
	text = tu_slurp(spath, &n);
	ck_assert_msg(strncmp(text, "{\"version\":2,", 13) == 0,
	    "not version 2: %.40s", text);
	/* The previous generation, as it was, is the .bak. */
	bak = tu_slurp(sbak, &n);
	ck_assert_uint_eq(n, len);
	ck_assert(memcmp(bak, v1, len) == 0);
	r2 = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	check_v1_fixture(r2);
	ck_assert(!registry_dirty(r2));
	registry_free(r2);
	free(bak);
	free(text);
	free(v1);
	registry_free(reg);
}
END_TEST

START_TEST(v1_bak_is_used_when_the_state_file_is_corrupt)
{
	size_t	 len;

	free(v1_fixture_as(sbak, &len));
	tu_write(spath, "junk", 4);
	registry_free(load_fixture_entries());
	ck_assert_int_eq(count_prefixed("state.json.corrupt-", false), 1);
}
END_TEST

START_TEST(v1_truncated_at_every_offset_never_yields_another_state)
{
	char	*full;
	size_t	 len;

	/* Version 1 is JSON: with or without its last '\n'. */
	full = tu_data("state-v1.json", &len);
	assert_prefixes_fall_back(full, len, 1, check_v1_fixture);
	free(full);
}
END_TEST

START_TEST(v1_flipped_offset_digit_fails_crc_and_falls_back)
{
	size_t	 len;

	free(v1_fixture_as(spath, &len));
	set_char_after(spath, "\"offset\":1234", '0');
	save_variant_as(sbak, 2);
	assert_falls_back_to_bak();
}
END_TEST

/* The previous release's layout, n entries, written as it wrote it. */
static void
write_v1_lines(const char *path, uint64_t n)
{
	struct buf	 b, e;
	uLong		 crc = crc32(crc32(0L, Z_NULL, 0), (const Bytef *)"[",
			    1);
	char		 hex[9];
	uint64_t	 i;

	buf_init(&b);
	buf_init(&e);
	buf_addstr(&b, "{\"version\": 1, \"crc32\": \"00000000\", "
	    "\"files\": [");
	for (i = 0; i < n; i++) {
		buf_reset(&e);
		buf_printf(&e, "{\"flow\":\"app\",\"dev\":2049,\"ino\":%ju,"
		    "\"fingerprint\":\"crc32:%08jx:512\",\"path\":"
		    "\"/var/log/app/instance-%05ju.log\",\"offset\":%ju,"
		    "\"updated\":1790000000}", (uintmax_t)(5000000 + i),
		    (uintmax_t)i, (uintmax_t)i, (uintmax_t)(i * 100));
		if (i > 0)
			crc = crc32(crc, (const Bytef *)",", 1);
		crc = crc32(crc, (const Bytef *)e.data, (uInt)e.len);
		buf_addstr(&b, i > 0 ? ",\n" : "\n");
		buf_add(&b, e.data, e.len);
	}
	crc = crc32(crc, (const Bytef *)"]", 1);
	buf_addstr(&b, "\n]}\n");
	snprintf(hex, sizeof(hex), "%08lx", (unsigned long)crc);
	memcpy(b.data + strlen("{\"version\": 1, \"crc32\": \""), hex, 8);
	tu_write(path, b.data, b.len);
	buf_cleanup(&e);
	buf_cleanup(&b);
}

/* The upgrade too: version 1 as the previous release laid it out is read
 * a line at a time, not as one tree of the whole document. */
START_TEST(v1_load_of_many_entries_builds_one_entry_tree_at_a_time)
{
	write_v1_lines(spath, 20000);
	assert_load_is_bounded(spath, 20000);
}
END_TEST

/* --- what a restart needs: spans, found records, the run -------------- */

static struct reg_run *
make_run(bool clean)
{
	struct reg_run	*run = xcalloc(1, sizeof(*run));

	run->clean = clean;
	run->saved_ms = 1700000000123LL;
	run->land_by_ms = 1700000070123LL;
	run->started_ms = 1699999990123LL;
	run->streams = xcalloc(2, sizeof(*run->streams));
	run->nstreams = 2;
	run->streams[0].name = xstrdup("s1");
	reg_stream_put(&run->streams[0], 1, 40);
	reg_stream_put(&run->streams[0], 0, 12);
	reg_stream_put(&run->streams[0], 0, 30);	/* keeps the least */
	run->streams[1].name = xstrdup("id:abcDEF");
	reg_stream_put(&run->streams[1], 3, -1);
	return run;
}

START_TEST(acked_spans_and_run_round_trip)
{
	struct reg_span		 sp[3] = { { 100, 200 }, { 300, 400 },
				    { 500, 501 } };
	struct registry		*reg, *r2;
	struct reg_entry	*e;
	const struct reg_run	*run;
	const struct reg_stream	*st;
	char			*text;
	int			 r;

	reg = registry_new(spath);
	e = registry_set(reg, "app", 1, 2, 0xabc, 512, "/l/a.log", 50);
	registry_set_acked(reg, e, sp, 3);
	registry_set_run(reg, make_run(true));
	ck_assert_int_eq(registry_save(reg, true), 0);
	text = tu_slurp(spath, NULL);
	ck_assert_ptr_nonnull(strstr(text, "\"acked\":[[100,200],[300,400],"
	    "[500,501]]"));
	ck_assert_ptr_nonnull(strstr(text, "\"run\":{\"clean\":true,"));
	free(text);
	r2 = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	e = registry_find(r2, "app", 1, 2);
	ck_assert_uint_eq(reg_nacked(e), 3);
	ck_assert_uint_eq(reg_acked(e)[1].start, 300);
	ck_assert_uint_eq(reg_acked(e)[2].end, 501);
	run = registry_run(r2);
	ck_assert_ptr_nonnull(run);
	ck_assert(run->clean);
	ck_assert_int_eq(run->saved_ms, 1700000000123LL);
	ck_assert_int_eq(run->land_by_ms, 1700000070123LL);
	ck_assert_int_eq(run->started_ms, 1699999990123LL);
	st = reg_run_stream(run, "s1");
	ck_assert_ptr_nonnull(st);
	ck_assert_int_eq(reg_stream_get(st, 0), 12);
	ck_assert_int_eq(reg_stream_get(st, 1), 40);
	ck_assert_int_eq(reg_stream_get(st, 2), REG_SEQ_NONE);
	st = reg_run_stream(run, "id:abcDEF");
	ck_assert_int_eq(reg_stream_get(st, 3), -1);
	ck_assert_ptr_null(reg_run_stream(run, "s2"));
	ck_assert(!registry_dirty(r2));
	registry_free(r2);
	registry_free(reg);
}
END_TEST

/* Files written before the fields existed have none; files of a clean
 * stop and of a crash tell themselves apart. */
START_TEST(files_without_the_new_fields_load_without_them)
{
	struct registry		*reg;
	struct reg_entry	*e;
	int			 r;

	write_v2_from_array(spath, "[" GOOD_ENTRY "]");
	reg = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	e = registry_find(reg, "app", 1, 2);
	ck_assert_uint_eq(reg_nacked(e), 0);
	ck_assert_ptr_null(registry_run(reg));
	registry_set_run(reg, make_run(false));
	ck_assert_int_eq(registry_save(reg, true), 0);
	registry_free(reg);
	reg = load_new(spath, &r);
	ck_assert_int_eq(r, 0);
	ck_assert(!registry_run(reg)->clean);
	registry_free(reg);
}
END_TEST

/* Spans past the offset only, merged by the caller, trimmed as the
 * offset moves, gone when the file is read again from before it. */
START_TEST(acked_spans_follow_the_committed_offset)
{
	struct reg_span		 sp[3] = { { 10, 40 }, { 60, 80 },
				    { 90, 95 } };
	struct registry		*reg;
	struct reg_entry	*e;

	reg = registry_new(spath);
	e = registry_set(reg, "app", 1, 2, 0, 0, "/x", 20);
	ck_assert_int_eq(registry_save(reg, true), 0);
	registry_set_acked(reg, e, sp, 3);
	ck_assert(registry_dirty(reg));
	ck_assert_uint_eq(reg_nacked(e), 3);
	ck_assert_int_eq(registry_save(reg, true), 0);
	registry_set_acked(reg, e, sp, 3);
	ck_assert(!registry_dirty(reg));
	e = registry_set(reg, "app", 1, 2, 0, 0, "/x", 80);
	ck_assert_uint_eq(reg_nacked(e), 1);
	ck_assert_uint_eq(reg_acked(e)[0].start, 90);
	e = registry_set(reg, "app", 1, 2, 0, 0, "/x", 0);
	ck_assert_uint_eq(reg_nacked(e), 0);
	registry_set_acked(reg, e, sp, 3);
	registry_set_acked(reg, e, sp + 1, 1);
	ck_assert_uint_eq(reg_nacked(e), 1);
	ck_assert_uint_eq(reg_acked(e)[0].start, 60);
	registry_set_acked(reg, e, NULL, 0);
	ck_assert_uint_eq(reg_nacked(e), 0);
	registry_free(reg);
}
END_TEST

START_TEST(found_records_are_kept_in_order_and_taken_once)
{
	struct registry		*reg;
	struct reg_entry	*e;
	struct reg_found	*f;
	size_t			 n, i;

	reg = registry_new(spath);
	e = registry_set(reg, "app", 1, 2, 0, 0, "/x", 0);
	for (i = 0; i < 20; i++)
		registry_add_found(e, (i * 7919) % 20 * 10, i, (uint32_t)i);
	f = registry_take_found(e, &n);
	ck_assert_uint_eq(n, 20);
	for (i = 0; i < n; i++)
		ck_assert_uint_eq(f[i].off, i * 10);
	free(f);
	ck_assert_ptr_null(registry_take_found(e, &n));
	ck_assert_uint_eq(n, 0);
	registry_free(reg);
}
END_TEST

/* A bad "acked" or "run" is a bad file: the .bak is used. */
static const char *const bad_new_fields[] = {
	"\"acked\":5",
	"\"acked\":[[5,6]]",		/* ends before the offset (7) */
	"\"acked\":[[8,8]]",
	"\"acked\":[[9,20],[10,30]]",	/* overlapping */
	"\"acked\":[[9,\"20\"]]",
	"\"acked\":[[9]]",
};

START_TEST(v2_bad_acked_falls_back_to_bak)
{
	char	*line;

	save_variant_as(sbak, 2);
	line = xasprintf("{\"flow\":\"app\",\"dev\":1,\"ino\":2,"
	    "\"fingerprint\":\"crc32:0a1b2c3d:512\",\"path\":\"/x\","
	    "\"offset\":7,\"updated\":9,%s}\n", bad_new_fields[_i]);
	write_v2(spath, line, strlen(line), 1);
	free(line);
	assert_falls_back_to_bak();
}
END_TEST

START_TEST(v2_bad_run_falls_back_to_bak)
{
	static const char *const runs[] = {
		"5", "{}", "{\"clean\":1,\"saved_ms\":1,\"land_by_ms\":2,"
		"\"seq\":{}}", "{\"clean\":true,\"saved_ms\":1,"
		"\"land_by_ms\":2,\"seq\":{\"s1\":{\"x\":3}}}",
		"{\"clean\":true,\"saved_ms\":1,\"land_by_ms\":2,"
		"\"seq\":{\"s1\":{\"0\":-5}}}",
		"{\"clean\":true,\"saved_ms\":1,\"land_by_ms\":2,"
		"\"started_ms\":\"x\",\"seq\":{}}",
	};
	const char	*body = GOOD_ENTRY "\n";
	struct buf	 text;
	uLong		 crc = crc32(crc32(0L, Z_NULL, 0), (const Bytef *)body,
			    (uInt)strlen(body));
	size_t		 i;

	for (i = 0; i < ARRAY_SIZE(runs); i++) {
		save_variant_as(sbak, 2);
		buf_init(&text);
		buf_printf(&text, "{\"version\":2,\"crc32\":\"%08lx\","
		    "\"entries\":1,\"run\":%s}\n%s", (unsigned long)crc,
		    runs[i], body);
		tu_write(spath, text.data, text.len);
		buf_cleanup(&text);
		assert_falls_back_to_bak();
		count_prefixed("state.json.corrupt-", true);
		unlink(sbak);
	}
}
END_TEST

static Suite *
registry_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("registry");
	tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, set_then_find_returns_entry_and_marks_dirty);
	tcase_add_test(tc, set_with_unchanged_values_keeps_registry_clean);
	tcase_add_test(tc, remove_drops_only_that_entry);
	tcase_add_test(tc, expire_drops_entries_older_than_ttl);
	tcase_add_test(tc, random_sets_removes_and_expiries_agree_with_a_model);
	tcase_add_test(tc, flows_sharing_dev_ino_keep_separate_entries);
	tcase_add_test(tc, rename_flow_moves_entries_and_descriptions_survive);
	tcase_add_test(tc, round_trip_preserves_every_field);
	tcase_add_test(tc, saved_file_is_private_and_versioned);
	tcase_add_test(tc, save_writes_only_when_dirty_unless_forced);
	tcase_add_test(tc, bak_holds_previous_generation);
	tcase_add_test(tc, save_into_missing_directory_fails_and_stays_dirty);
	tcase_add_test(tc, save_into_readonly_directory_fails_and_stays_dirty);
	tcase_add_test(tc,
	    save_write_error_keeps_previous_state_and_stays_dirty);
	tcase_add_test(tc, ten_thousand_entries_round_trip);
	tcase_add_test(tc,
	    non_utf8_path_is_stored_lossily_and_file_stays_loadable);
	tcase_add_test(tc, load_with_no_files_is_empty_and_ok);
	tcase_add_test(tc, load_replaces_entries_already_present);
	tcase_add_test(tc, load_missing_file_uses_bak);
	tcase_add_test(tc, load_empty_file_falls_back_to_bak);
	tcase_add_test(tc, load_nul_filled_file_falls_back_to_bak);
	tcase_add_test(tc, load_garbage_falls_back_to_bak);
	tcase_add_test(tc, load_wrong_version_falls_back_to_bak);
	tcase_add_test(tc, load_file_with_valid_crc_written_by_hand_is_accepted);
	tcase_add_test(tc, load_accepts_members_in_any_order_and_unknown_keys);
	tcase_add_test(tc, spool_entry_round_trips_and_is_optional);
	tcase_add_test(tc, set_size_keeps_clean_and_the_next_save_writes_it);
	tcase_add_test(tc,
	    load_of_many_entries_builds_one_entry_tree_at_a_time);
	tcase_add_test(tc, load_flipped_offset_digit_fails_crc_and_falls_back);
	tcase_add_loop_test(tc, load_wrong_field_types_fall_back_to_bak, 0,
	    (int)ARRAY_SIZE(bad_files));
	tcase_add_test(tc, load_wrong_top_level_shape_falls_back_to_bak);
	tcase_add_test(tc, empty_registry_file_has_the_crc_the_shape_tests_use);
	tcase_add_test(tc,
	    load_truncated_at_every_offset_never_yields_another_state);
	tcase_add_test(tc,
	    load_with_both_files_corrupt_returns_ebadmsg_and_is_empty);
	tcase_add_test(tc, load_corrupt_file_without_bak_returns_ebadmsg);
	tcase_add_test(tc, load_missing_file_with_corrupt_bak_returns_ebadmsg);
	tcase_add_test(tc,
	    load_unreadable_file_returns_errno_without_using_bak);
	tcase_add_test(tc, save_after_fallback_restores_state_file);
	tcase_add_test(tc, v2_file_written_by_hand_with_valid_crc_is_accepted);
	tcase_add_test(tc,
	    complete_mark_is_durable_only_after_a_save_and_survives_load);
	tcase_add_test(tc, failed_save_leaves_the_complete_mark_not_durable);
	tcase_add_loop_test(tc, v2_wrong_field_types_fall_back_to_bak, 0,
	    (int)ARRAY_SIZE(bad_files));
	tcase_add_test(tc, v2_nul_filled_body_falls_back_to_bak);
	tcase_add_test(tc, v2_nul_filled_block_inside_falls_back_to_bak);
	tcase_add_test(tc, v2_bad_checksum_in_header_falls_back_to_bak);
	tcase_add_test(tc, v2_malformed_header_falls_back_to_bak);
	tcase_add_test(tc, v2_header_without_end_of_line_falls_back_to_bak);
	tcase_add_test(tc, v2_huge_line_falls_back_to_bak);
	tcase_add_test(tc,
	    save_of_an_entry_too_long_to_read_back_fails_and_keeps_state);
	tcase_add_test(tc, v2_entry_line_missing_falls_back_to_bak);
	tcase_add_test(tc,
	    v2_more_lines_than_the_header_counts_fall_back_to_bak);
	tcase_add_test(tc, v2_blank_or_unended_line_falls_back_to_bak);
	tcase_add_test(tc, v1_file_of_the_previous_release_loads_every_entry);
	tcase_add_test(tc, v1_file_is_upgraded_in_place_by_the_next_save);
	tcase_add_test(tc, v1_bak_is_used_when_the_state_file_is_corrupt);
	tcase_add_test(tc,
	    v1_truncated_at_every_offset_never_yields_another_state);
	tcase_add_test(tc, v1_flipped_offset_digit_fails_crc_and_falls_back);
	tcase_add_test(tc,
	    v1_load_of_many_entries_builds_one_entry_tree_at_a_time);
	tcase_add_test(tc, acked_spans_and_run_round_trip);
	tcase_add_test(tc, files_without_the_new_fields_load_without_them);
	tcase_add_test(tc, acked_spans_follow_the_committed_offset);
	tcase_add_test(tc, found_records_are_kept_in_order_and_taken_once);
	tcase_add_loop_test(tc, v2_bad_acked_falls_back_to_bak, 0,
	    (int)ARRAY_SIZE(bad_new_fields));
	tcase_add_test(tc, v2_bad_run_falls_back_to_bak);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(registry_suite());
}
