/*
 * The registry suites' shared fixture (registry_fixture.h).
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
#include "registry_fixture.h"
#include "testutil.h"

char	 dir[256];
char	 spath[PATH_MAX];	/* dir/state.json */
char	 sbak[PATH_MAX];	/* dir/state.json.bak */

void
registry_fixture_setup(void)
{
	tu_tmpdir(dir, sizeof(dir), "check_registry");
	tu_path(spath, sizeof(spath), dir, "state.json");
	tu_path(sbak, sizeof(sbak), dir, "state.json.bak");
}

/* Count directory entries starting with prefix; unlink them if asked. */
int
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

void
registry_fixture_teardown(void)
{
	tu_rmtree(dir);
}

bool
exists(const char *path)
{
	struct stat	 st;

	return lstat(path, &st) == 0;
}

ino_t
inode_of(const char *path)
{
	struct stat	 st;

	ck_assert_int_eq(stat(path, &st), 0);
	return st.st_ino;
}

/* Generation v: NVAR entries of flow "app" with v-dependent contents. */
void
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
void
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
void
check_variant(struct registry *reg, int v)
{
	ck_assert_uint_eq(registry_count(reg), NVAR);
	check_entries(reg, v);
}

/* Save generation v as the file dst (via a scratch registry). */
void
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
struct registry *
load_new(const char *path, int *r)
{
	struct registry	*reg;

	reg = registry_new(path);
	*r = registry_load(reg);
	return reg;
}

/* With generation 2 as .bak, loading spath must give generation 2. */
void
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

int
crc_cb(const char *p, size_t n, void *arg)
{
	uLong	*crc = arg;

	*crc = crc32(*crc, (const Bytef *)p, (uInt)n);
	return 0;
}

/* A state file around files_json with a correct crc, as an editor would. */
void
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
void
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
void
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
char *
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

/* VmRSS or VmHWM of this process, in KiB; -1 when unknown. */
long
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
bool
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
void
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

/* Rewrite path with ch just after the first occurrence of needle. */
void
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

/*
 * A save of reg that returned r must have failed with err: reg still
 * dirty, no path.tmp left, and spath still generation v.
 */
void
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

/*
 * Every prefix of full (len bytes) as the state file, with generation 2 as
 * the .bak: the .bak is used and the prefix set aside, except for the
 * prefixes of at least len - slack bytes, which load as check_whole says.
 */
void
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

const char *const bad_files[] = {
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

const size_t nbad_files = ARRAY_SIZE(bad_files);
