/*
 * What the registry's suites share (check_registry*.c in this folder): a
 * temp directory per test with the state file's paths, generations of
 * entries to save and check, state files written as an editor would (with
 * a correct crc), and the assertions every damaged file is judged by.
 */
#ifndef DISAGENT_REGISTRY_FIXTURE_H
#define DISAGENT_REGISTRY_FIXTURE_H

#include <sys/types.h>

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

struct registry;

#define NVAR	3	/* entries in a test generation */

#define GOOD_ENTRY \
	"{\"flow\":\"app\",\"dev\":1,\"ino\":2," \
	"\"fingerprint\":\"crc32:0a1b2c3d:512\",\"path\":\"/x\"," \
	"\"offset\":7,\"updated\":9}"

/* The test's directory and its state file, state.json and .bak. */
extern char	 dir[256];
extern char	 spath[PATH_MAX];
extern char	 sbak[PATH_MAX];

/* State files that load as JSON but are not the registry's. */
extern const char *const bad_files[];
extern const size_t nbad_files;

/* The checked fixture: a fresh temp directory, removed after. */
void	 registry_fixture_setup(void);
void	 registry_fixture_teardown(void);

/* Count directory entries starting with prefix; unlink them if asked. */
int	 count_prefixed(const char *prefix, bool remove);

bool	 exists(const char *path);

ino_t	 inode_of(const char *path);

/* Generation v: NVAR entries of flow "app" with v-dependent contents. */
void	 fill_variant(struct registry *reg, int v);

/* The entries of generation v are present with every field intact. */
void	 check_entries(struct registry *reg, int v);

/* Exactly generation v. */
void	 check_variant(struct registry *reg, int v);

/* Save generation v as the file dst (via a scratch registry). */
void	 save_variant_as(const char *dst, int v);

/* Load spath into a fresh registry; returns it, result in *r. */
struct registry	*load_new(const char *path, int *r);

/* With generation 2 as .bak, loading spath must give generation 2. */
void	 assert_falls_back_to_bak(void);

int	 crc_cb(const char *p, size_t n, void *arg);

/* A state file around files_json with a correct crc, as an editor would. */
void	 write_with_crc(const char *path, int version, const char *files_json);

/*
 * A version 2 file: the header for body (n bytes of entry lines, each
 * ended by '\n'), counting entries, with the crc32 of body, as an editor
 * would write it.
 */
void	 write_v2(const char *path, const char *body, size_t n, long entries);

/* A version 2 file of the elements of the JSON array files_json. */
void	 write_v2_from_array(const char *path, const char *files_json);

/* The state file's entry lines (after the header): new, length in *n. */
char	*body_of(const char *path, size_t *n);

/* VmRSS or VmHWM of this process, in KiB; -1 when unknown. */
long	 status_kib(const char *key);

/* Start a new peak RSS (Linux >= 4.0); false when not possible here. */
bool	 reset_peak_rss(void);

/*
 * Load path, which holds n entries, and assert the rise in peak RSS it
 * cost stays within the file, the table (~170 bytes an entry) and slack.
 * Nothing is asserted where that cannot be measured (no clear_refs, or a
 * sanitizer's allocator that keeps freed memory).
 */
void	 assert_load_is_bounded(const char *path, size_t n);

/* Rewrite path with ch just after the first occurrence of needle. */
void	 set_char_after(const char *path, const char *needle, char ch);

/*
 * A save of reg that returned r must have failed with err: reg still
 * dirty, no path.tmp left, and spath still generation v.
 */
void	 assert_save_failed_keeping(struct registry *reg, int r, int err,
		    int v);

/*
 * Every prefix of full (len bytes) as the state file, with generation 2 as
 * the .bak: the .bak is used and the prefix set aside, except for the
 * prefixes of at least len - slack bytes, which load as check_whole says.
 */
void	 assert_prefixes_fall_back(const char *full, size_t len, size_t slack,
		    void (*check_whole)(struct registry *));

#endif
