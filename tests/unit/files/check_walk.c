/*
 * The directory walk (files/walk.c), the owner rule of followSymlinks
 * (tail/linkrule.c) and the watcher's walk in slices (files/watcher.c),
 * on real directories under a temp dir: a loop is walked once and each
 * file found once under its shortest path; a link is judged by the owner
 * of what it leads to, every link of a chain on its own; what is opened
 * is checked against what was judged; a walk of many directories goes on
 * over turns of the loop, and the loop closes with nothing left open.
 * A directory unchanged since its last read is not read again
 * (files/dircache.c), unless changed so close to the read that a change
 * in the same tick would not show; one changed, replaced or removed is.
 * The ownership cases need root (lchown to nobody) and say so otherwise.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <uv.h>

#include "base/log.h"
#include "base/pattern.h"
#include "base/util.h"
#include "conf/conf.h"
#include "tail/linkrule.h"
#include "files/dircache.h"
#include "files/walk.h"
#include "files/watcher.h"
#include "testutil.h"

#define NOBODY	65534

static struct {
	char		 dir[PATH_MAX];
	struct conf	*conf;
	uv_loop_t	 loop;
	char		*found[256];
	size_t		 nfound;
	size_t		 ndirs;
	bool		 done;
	unsigned	 turns;		/* of the loop while walking */
	uv_check_t	 check;		/* counts them */
} h;

static void
setup(void)
{
	memset(&h, 0, sizeof(h));
	tu_tmpdir(h.dir, sizeof(h.dir), "check_walk");
	ck_assert_int_eq(uv_loop_init(&h.loop), 0);
}

static void
teardown(void)
{
	size_t	 i;

	for (i = 0; i < h.nfound; i++)
		free(h.found[i]);
	conf_free(h.conf);
	tu_loop_close(&h.loop);
	tu_rmtree(h.dir);
}

/* h.dir/rel, new. */
static char *
at(const char *rel)
{
	return xasprintf("%s/%s", h.dir, rel);
}

static void
mkdir_at(const char *rel)
{
	char	*p = at(rel);

	ck_assert_int_eq(mkdir(p, 0755), 0);
	free(p);
}

static void
file_at(const char *rel, const char *text)
{
	char	*p = at(rel);

	tu_write_str(p, text);
	free(p);
}

/* A link rel -> to, owned by uid. */
static void
link_at(const char *rel, const char *to, uid_t uid)
{
	char	*p = at(rel);

	ck_assert_int_eq(symlink(to, p), 0);
	ck_assert_int_eq(lchown(p, uid, (gid_t)-1), 0);
	free(p);
}

/* The flow of pattern (below h.dir) with the extra lines; POLL mode. */
static const struct conf_flow *
flow(const char *pattern, const char *extra)
{
	char	*ini, *text, err[512];

	ini = at("agent.ini");
	text = xasprintf("[agent]\nregion = cn-north-4\nprojectId = p1\n"
	    "ak = AK\nsk = SK\ncheckpointFile = %s/state\n"
	    "[flow:app]\nDISStream = s1\nfilePattern = %s/%s\n"
	    "watchMode = POLL\n%s", h.dir, h.dir, pattern, extra);
	tu_write_str(ini, text);
	free(text);
	ck_assert_int_eq(chmod(ini, 0600), 0);	/* it holds sk */
	ck_assert_msg(conf_load(ini, &h.conf, err, sizeof(err)) == 0, "%s",
	    err);
	free(ini);
	return &h.conf->flows[0];
}

static void
on_found(void *arg, const char *path, const struct stat *st)
{
	(void)arg;
	(void)st;
	ck_assert_uint_lt(h.nfound, ARRAY_SIZE(h.found));
	h.found[h.nfound++] = xstrdup(path + strlen(h.dir) + 1);
}

static void
on_done(void *arg, size_t ndirs, int err)
{
	(void)arg;
	(void)err;
	ck_assert(!h.done);
	h.ndirs = ndirs;
	h.done = true;
}

/* One whole walk of fc's pattern by the walker alone. */
static void
walk_all(const struct conf_flow *fc)
{
	struct walk_cbs	 cbs = { on_found, NULL, NULL, NULL, NULL };
	struct walker	*k;
	char		*pattern, *base;

	pattern = pattern_recursive(fc->file_pattern, fc->recursive);
	base = pattern_literal_base(pattern);
	k = walker_new(fc, pattern, base, strrchr(pattern, '/') + 1);
	walker_begin(k, &cbs);
	ck_assert(walker_step(k, SIZE_MAX, SIZE_MAX));
	h.ndirs = walker_ndirs(k);
	walker_free(k);
	free(base);
	free(pattern);
}

static bool
found(const char *rel)
{
	size_t	 i;

	for (i = 0; i < h.nfound; i++)
		if (strcmp(h.found[i], rel) == 0)
			return true;
	return false;
}

/* --- loops and shortest paths ------------------------------------------ */

START_TEST(loops_are_walked_once)
{
	mkdir_at("logs");
	mkdir_at("logs/sub");
	file_at("logs/a.log", "a\n");
	file_at("logs/sub/b.log", "b\n");
	link_at("logs/sub/l1", "..", getuid());
	link_at("logs/sub/l2", "..", getuid());
	link_at("logs/sub/l3", "../sub", getuid());
	walk_all(flow("logs/**/*.log", ""));
	ck_assert_uint_eq(h.nfound, 2);
	ck_assert(found("logs/a.log"));
	ck_assert(found("logs/sub/b.log"));
	ck_assert_uint_eq(h.ndirs, 2);
}
END_TEST

START_TEST(a_file_reached_twice_is_found_under_its_shortest_path)
{
	mkdir_at("logs");
	mkdir_at("logs/real");
	file_at("logs/real/a.log", "a\n");
	/* Same depth: the real name wins, whatever the order of names. */
	link_at("logs/a", "real", getuid());
	link_at("logs/real/0.log", "a.log", getuid());
	link_at("logs/z.log", "real/a.log", getuid());
	walk_all(flow("logs/**/*.log", ""));
	ck_assert_uint_eq(h.nfound, 1);
	/* The fewest directories first: logs/z.log. */
	ck_assert_str_eq(h.found[0], "logs/z.log");
}
END_TEST

START_TEST(a_file_reached_twice_at_one_depth_keeps_its_real_name)
{
	mkdir_at("logs");
	file_at("logs/b.log", "b\n");
	link_at("logs/a.log", "b.log", getuid());
	walk_all(flow("logs/*.log", ""));
	ck_assert_uint_eq(h.nfound, 1);
	ck_assert_str_eq(h.found[0], "logs/b.log");
}
END_TEST

/* --- the listings of unchanged directories ---------------------------- */

static uint64_t	 skew_ns;	/* the walker's clock ahead of the real one */

static uint64_t
skewed_clock(void)
{
	struct timespec	 t;

	ck_assert_int_eq(clock_gettime(CLOCK_REALTIME, &t), 0);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec +
	    skew_ns;
}

static struct {
	struct walker	*k;
	char		*pattern, *base;
} kw;

/* A walker of fc kept across walks, its clock skew ahead (ns). */
static void
keep_walker(const struct conf_flow *fc, uint64_t skew)
{
	kw.pattern = pattern_recursive(fc->file_pattern, fc->recursive);
	kw.base = pattern_literal_base(kw.pattern);
	kw.k = walker_new(fc, kw.pattern, kw.base,
	    strrchr(kw.pattern, '/') + 1);
	skew_ns = skew;
	walker_set_clock(kw.k, skewed_clock);
}

static void
drop_walker(void)
{
	walker_free(kw.k);
	free(kw.base);
	free(kw.pattern);
	memset(&kw, 0, sizeof(kw));
}

/* A whole walk again: how many directories were read (not reused). */
static size_t
walk_again(void)
{
	struct walk_cbs	 cbs = { on_found, NULL, NULL, NULL, NULL };
	size_t		 i;

	for (i = 0; i < h.nfound; i++)
		free(h.found[i]);
	h.nfound = 0;
	walker_begin(kw.k, &cbs);
	ck_assert(walker_step(kw.k, SIZE_MAX, SIZE_MAX));
	h.ndirs = walker_ndirs(kw.k);
	return walker_nlisted(kw.k);
}

#define LATER	(5 * 1000000000ULL)	/* past the racy margin */

START_TEST(an_unchanged_directory_is_not_read_again)
{
	mkdir_at("pods");
	mkdir_at("pods/ns_a_1");
	mkdir_at("pods/ns_a_1/c");
	mkdir_at("pods/ns_b_2");
	mkdir_at("pods/ns_b_2/c");
	file_at("pods/ns_a_1/c/0.log", "a\n");
	file_at("pods/ns_b_2/c/0.log", "b\n");
	keep_walker(flow("pods/**/*.log", ""), LATER);
	ck_assert_uint_eq(walk_again(), 5);
	ck_assert_uint_eq(h.nfound, 2);
	/* Nothing changed: all from the listings, each file found. */
	ck_assert_uint_eq(walk_again(), 0);
	ck_assert_uint_eq(h.ndirs, 5);
	ck_assert_uint_eq(h.nfound, 2);
	ck_assert(found("pods/ns_a_1/c/0.log"));
	ck_assert(found("pods/ns_b_2/c/0.log"));
	drop_walker();
}
END_TEST

START_TEST(a_changed_directory_is_read_again)
{
	char	*from, *to;

	mkdir_at("pods");
	mkdir_at("pods/ns_a_1");
	mkdir_at("pods/ns_a_1/c");
	file_at("pods/ns_a_1/c/0.log", "a\n");
	keep_walker(flow("pods/**/*.log", ""), LATER);
	ck_assert_uint_eq(walk_again(), 3);
	ck_assert_uint_eq(walk_again(), 0);
	/* kubelet's rotation, and a file made and rotated away between
	 * two walks: only their directory is read. */
	from = at("pods/ns_a_1/c/0.log");
	to = at("pods/ns_a_1/c/0.log.20261207-100000");
	ck_assert_int_eq(rename(from, to), 0);
	file_at("pods/ns_a_1/c/1.log", "b\n");
	ck_assert_uint_eq(walk_again(), 1);
	ck_assert_uint_eq(h.nfound, 1);
	ck_assert(found("pods/ns_a_1/c/1.log"));
	ck_assert_uint_eq(walk_again(), 0);
	ck_assert_uint_eq(h.nfound, 1);
	/* A new pod: its parent read, and the new directories. */
	mkdir_at("pods/ns_b_2");
	mkdir_at("pods/ns_b_2/c");
	file_at("pods/ns_b_2/c/0.log", "c\n");
	ck_assert_uint_eq(walk_again(), 3);
	ck_assert_uint_eq(h.nfound, 2);
	ck_assert(found("pods/ns_b_2/c/0.log"));
	/* A deleted file. */
	ck_assert_int_eq(unlink(from = (free(from), at("pods/ns_b_2/c/0.log"))),
	    0);
	ck_assert_uint_eq(walk_again(), 1);
	ck_assert_uint_eq(h.nfound, 1);
	ck_assert(found("pods/ns_a_1/c/1.log"));
	free(from);
	free(to);
	drop_walker();
}
END_TEST

START_TEST(a_directory_changed_in_the_tick_of_its_read_is_read_again)
{
	struct dircache	*c = dircache_new();
	const struct dirlist *l;
	struct stat	 st;
	enum dirkind	 kind;
	uint64_t	 t;
	size_t		 off = 0, bytes;
	int		 v;
	char		*p = at("d");

	ck_assert_int_eq(mkdir(p, 0755), 0);
	ck_assert_int_eq(stat(p, &st), 0);
	t = (uint64_t)st.st_mtim.tv_sec * 1000000000ULL +
	    (uint64_t)st.st_mtim.tv_nsec;
	/* Read 1 ms after its last change: a change right after, in the
	 * same tick, leaves the same stamps, so its listing is not
	 * trusted, however long after. */
	dircache_begin(c, &st, t + 1000000, p);
	dircache_add(c, "a.log", DIRKIND_FILE);
	dircache_end(c, true);
	ck_assert_ptr_null(dircache_get(c, &st, t + 2000000));
	ck_assert_ptr_null(dircache_get(c, &st, t + 3000000000ULL));
	/* Read well after: trusted while the stamps stay, not past its
	 * age limit, nor when the clock went back. */
	dircache_begin(c, &st, t + DIRCACHE_MARGIN_NS + 1, p);
	dircache_add(c, "a.log", DIRKIND_FILE);
	dircache_verdict(c, true);
	dircache_add(c, "sub", DIRKIND_DIR);
	dircache_add(c, "b.txt", DIRKIND_FILE);
	dircache_verdict(c, false);
	dircache_end(c, true);
	l = dircache_get(c, &st, t + DIRCACHE_MARGIN_NS + 2);
	ck_assert_ptr_nonnull(l);
	ck_assert_str_eq(dirlist_path(l), p);
	ck_assert_str_eq(dirlist_next(l, &off, &kind, &v), "a.log");
	ck_assert_int_eq(kind, DIRKIND_FILE);
	ck_assert_int_eq(v, 1);
	ck_assert_str_eq(dirlist_next(l, &off, &kind, &v), "sub");
	ck_assert_int_eq(kind, DIRKIND_DIR);
	ck_assert_int_eq(v, -1);
	ck_assert_str_eq(dirlist_next(l, &off, &kind, &v), "b.txt");
	ck_assert_int_eq(kind, DIRKIND_FILE);
	ck_assert_int_eq(v, 0);
	ck_assert_ptr_null(dirlist_next(l, &off, &kind, &v));
	ck_assert_ptr_null(dircache_get(c, &st, t + DIRCACHE_MARGIN_NS +
	    DIRCACHE_MAX_AGE_NS + 2));
	ck_assert_ptr_null(dircache_get(c, &st, t));
	/* Changed since (ctime too: mtime set back cannot hide it). */
	st.st_ctim.tv_nsec ^= 1;
	ck_assert_ptr_null(dircache_get(c, &st, t + DIRCACHE_MARGIN_NS + 2));
	st.st_ctim.tv_nsec ^= 1;
	dircache_forget(c, &st);
	ck_assert_ptr_null(dircache_get(c, &st, t + DIRCACHE_MARGIN_NS + 2));
	/* A walk that did not reach it drops it. */
	ck_assert_uint_eq(dircache_count(c, &bytes), 1);
	dircache_sweep(c);
	ck_assert_uint_eq(dircache_count(c, &bytes), 1);
	dircache_sweep(c);
	ck_assert_uint_eq(dircache_count(c, &bytes), 0);
	ck_assert_uint_eq(bytes, 0);
	dircache_free(c);
	free(p);
}
END_TEST

START_TEST(a_directory_changed_lately_is_read_at_each_walk)
{
	mkdir_at("pods");
	mkdir_at("pods/ns_a_1");
	file_at("pods/ns_a_1/0.log", "a\n");
	/* The real clock: both directories changed within the margin. */
	keep_walker(flow("pods/**/*.log", ""), 0);
	ck_assert_uint_eq(walk_again(), 2);
	ck_assert_uint_eq(walk_again(), 2);
	ck_assert_uint_eq(h.nfound, 1);
	drop_walker();
}
END_TEST

START_TEST(a_replaced_directory_is_read_again)
{
	char	*from, *to;

	mkdir_at("pods");
	mkdir_at("pods/ns_a_1");
	file_at("pods/ns_a_1/0.log", "a\n");
	mkdir_at("new");
	file_at("new/1.log", "b\n");
	keep_walker(flow("pods/**/*.log", ""), LATER);
	ck_assert_uint_eq(walk_again(), 2);
	ck_assert_uint_eq(walk_again(), 0);
	/* Another directory under the same name (a new inode). */
	from = at("pods/ns_a_1");
	to = at("old");
	ck_assert_int_eq(rename(from, to), 0);
	free(to);
	to = at("new");
	ck_assert_int_eq(rename(to, from), 0);
	ck_assert_uint_eq(walk_again(), 2);
	ck_assert_uint_eq(h.nfound, 1);
	ck_assert(found("pods/ns_a_1/1.log"));
	/* Removed. */
	tu_rmtree(from);
	ck_assert_uint_eq(walk_again(), 1);
	ck_assert_uint_eq(h.nfound, 0);
	free(from);
	free(to);
	drop_walker();
}
END_TEST

START_TEST(a_linked_directory_is_looked_at_through_its_link)
{
	char	*p;

	mkdir_at("pods");
	mkdir_at("elsewhere");
	file_at("elsewhere/0.log", "a\n");
	link_at("pods/ctr", "../elsewhere", getuid());
	keep_walker(flow("pods/**/*.log", "followSymlinks = always\n"),
	    LATER);
	ck_assert_uint_eq(walk_again(), 2);
	ck_assert_uint_eq(walk_again(), 0);
	ck_assert(found("pods/ctr/0.log"));
	/* The target changes, not the directory of the link. */
	file_at("elsewhere/1.log", "b\n");
	ck_assert_uint_eq(walk_again(), 1);
	ck_assert_uint_eq(h.nfound, 2);
	ck_assert(found("pods/ctr/1.log"));
	/* The link now leads elsewhere. */
	mkdir_at("other");
	file_at("other/2.log", "c\n");
	p = at("pods/ctr");
	ck_assert_int_eq(unlink(p), 0);
	free(p);
	link_at("pods/ctr", "../other", getuid());
	ck_assert_uint_eq(walk_again(), 2);
	ck_assert_uint_eq(h.nfound, 1);
	ck_assert(found("pods/ctr/2.log"));
	drop_walker();
}
END_TEST

START_TEST(a_listing_is_judged_again_under_another_path)
{
	char	*p, *extra;

	/* The names of a listing keep the pattern's verdict on their path:
	 * reached by another path, the directory's names are judged again
	 * (here an excludePattern that names the new path only). */
	mkdir_at("pods");
	mkdir_at("elsewhere");
	file_at("elsewhere/0.log", "a\n");
	link_at("pods/a", "../elsewhere", getuid());
	extra = xasprintf("followSymlinks = always\n"
	    "excludePattern = %s/pods/b/*\n", h.dir);
	keep_walker(flow("pods/**/*.log", extra), LATER);
	ck_assert_uint_eq(walk_again(), 2);
	ck_assert_uint_eq(walk_again(), 0);
	ck_assert_uint_eq(h.nfound, 1);
	ck_assert(found("pods/a/0.log"));
	p = at("pods/a");
	ck_assert_int_eq(unlink(p), 0);
	free(p);
	link_at("pods/b", "../elsewhere", getuid());
	/* pods read again, elsewhere from its listing: 0.log excluded. */
	ck_assert_uint_eq(walk_again(), 1);
	ck_assert_uint_eq(h.nfound, 0);
	/* And back: found again, the listing still not read. */
	p = at("pods/b");
	ck_assert_int_eq(unlink(p), 0);
	free(p);
	link_at("pods/a", "../elsewhere", getuid());
	ck_assert_uint_eq(walk_again(), 1);
	ck_assert_uint_eq(h.nfound, 1);
	ck_assert(found("pods/a/0.log"));
	free(extra);
	drop_walker();
}
END_TEST

/* --- the owner rule --------------------------------------------------- */

static bool
root_or_skip(void)
{
	if (getuid() == 0)
		return true;
	fprintf(stderr, "%s: not root: links of another owner not made; "
	    "not checked\n", __func__);
	return false;
}

START_TEST(owner_rule_judges_every_link_of_a_chain)
{
	struct linkrule_refusal why;
	struct stat	 st;
	char		*p, *want, *real;

	if (!root_or_skip())
		return;
	mkdir_at("secret");
	mkdir_at("hops");
	mkdir_at("theirs");
	file_at("secret/shadow", "s\n");
	file_at("theirs/own", "o\n");
	p = at("theirs/own");
	ck_assert_int_eq(chown(p, NOBODY, (gid_t)-1), 0);
	free(p);
	link_at("evil", "secret/shadow", NOBODY);
	link_at("ok", "theirs/../theirs/./own", NOBODY);
	link_at("hops/hop2", "../secret/shadow", NOBODY);
	link_at("chain2", "hops/hop2", 0);
	link_at("self", "self", 0);

	p = at("evil");
	ck_assert_int_eq(linkrule_resolve(p, &st, NULL, &why), -EPERM);
	ck_assert_str_eq(why.link, p);
	ck_assert_uint_eq(why.link_uid, NOBODY);
	ck_assert_uint_eq(why.target_uid, 0);
	linkrule_refusal_cleanup(&why);
	free(p);

	p = at("chain2");
	ck_assert_int_eq(linkrule_resolve(p, &st, NULL, &why), -EPERM);
	want = at("hops/hop2");
	ck_assert_str_eq(why.link, want);	/* the innermost refused */
	linkrule_refusal_cleanup(&why);
	free(want);
	free(p);

	p = at("ok");
	ck_assert_int_eq(linkrule_resolve(p, &st, &real, &why), 0);
	want = at("theirs/own");
	ck_assert_str_eq(real, want);
	ck_assert_uint_eq(st.st_uid, NOBODY);
	free(real);
	free(want);
	free(p);

	p = at("self");
	ck_assert_int_eq(linkrule_resolve(p, &st, NULL, &why), -ELOOP);
	free(p);
}
END_TEST

START_TEST(owner_rule_judges_a_linked_directory_and_the_literal_one)
{
	if (!root_or_skip())
		return;
	mkdir_at("logs");
	mkdir_at("secret");
	mkdir_at("mine");
	file_at("secret/x.log", "x\n");
	file_at("mine/y.log", "y\n");
	file_at("logs/real.log", "r\n");
	link_at("logs/d", "../secret", NOBODY);		/* refused */
	link_at("logs/e", "../mine", 0);		/* root's */
	link_at("base", "secret", NOBODY);
	walk_all(flow("logs/**/*.log", ""));
	ck_assert_uint_eq(h.nfound, 2);
	ck_assert(found("logs/real.log"));
	ck_assert(found("logs/e/y.log"));
	conf_free(h.conf);
	h.conf = NULL;
	walk_all(flow("base/*.log", ""));
	ck_assert_uint_eq(h.nfound, 2);
	ck_assert_uint_eq(h.ndirs, 0);
	conf_free(h.conf);
	h.conf = NULL;
	walk_all(flow("base/*.log", "followSymlinks = always\n"));
	ck_assert_uint_eq(h.nfound, 3);
	ck_assert(found("base/x.log"));
}
END_TEST

/* What is opened is what was judged: a name swapped since is refused. */
START_TEST(open_refuses_a_name_swapped_since_judged)
{
	struct stat	 st;
	char		*a, *b;
	int		 fd;

	file_at("a.log", "a\n");
	file_at("b.log", "b\n");
	a = at("a.log");
	b = at("b.log");
	ck_assert_int_eq(stat(a, &st), 0);
	fd = linkrule_open(a, &st);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(rename(b, a), 0);
	errno = 0;
	ck_assert_int_eq(linkrule_open(a, &st), -1);
	ck_assert_int_eq(errno, ESTALE);
	free(a);
	free(b);
}
END_TEST

/* --- slices ------------------------------------------------------------ */

/* After each poll of the loop (where signals and replies are served). */
static void
on_check(uv_check_t *c)
{
	(void)c;
	if (!h.done)
		h.turns++;
}

START_TEST(many_directories_are_walked_in_slices)
{
	const struct conf_flow *fc;
	struct watcher	*w;
	char		 rel[64], err[256];
	int		 i;

	mkdir_at("logs");
	for (i = 0; i < 100; i++) {
		snprintf(rel, sizeof(rel), "logs/d%03d", i);
		mkdir_at(rel);
		snprintf(rel, sizeof(rel), "logs/d%03d/f.log", i);
		file_at(rel, "x\n");
	}
	link_at("logs/d000/up", "..", getuid());
	fc = flow("logs/**/*.log", "");
	ck_assert_int_eq(uv_check_init(&h.loop, &h.check), 0);
	ck_assert_int_eq(uv_check_start(&h.check, on_check), 0);
	w = watcher_new(&h.loop, fc, NULL, NULL, err, sizeof(err));
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(watcher_scan(w, on_found, NULL, on_done, NULL), 0);
	/* The first slice is done in the call, the rest on the loop. */
	ck_assert(!h.done);
	ck_assert(watcher_walking(w));
	ck_assert_uint_gt(h.nfound, 0);
	ck_assert_uint_lt(h.nfound, 100);
	ck_assert_int_eq(watcher_scan(w, on_found, NULL, on_done, NULL),
	    -EBUSY);
	ck_assert(tu_run_until(&h.loop, &h.done, 5000));
	ck_assert(!watcher_walking(w));
	ck_assert_uint_eq(h.nfound, 100);
	ck_assert_uint_eq(h.ndirs, 101);
	/* 101 directories, 32 a slice: three more slices, each in a turn
	 * of its own, so the loop polled twice before the last (libuv 1.44
	 * runs a 0 ms timer started in its own callback in the same turn:
	 * 0 polls). */
	ck_assert_uint_ge(h.turns, 2);
	watcher_free(w);
	uv_close((uv_handle_t *)&h.check, NULL);
}
END_TEST

/* A watcher freed in the middle of a walk calls back no more. */
START_TEST(a_walk_under_way_ends_with_its_watcher)
{
	const struct conf_flow *fc;
	struct watcher	*w;
	char		 rel[64], err[256];
	size_t		 n;
	int		 i;

	mkdir_at("logs");
	for (i = 0; i < 100; i++) {
		snprintf(rel, sizeof(rel), "logs/d%03d", i);
		mkdir_at(rel);
	}
	fc = flow("logs/**/*.log", "");
	w = watcher_new(&h.loop, fc, NULL, NULL, err, sizeof(err));
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(watcher_scan(w, on_found, NULL, on_done, NULL), 0);
	ck_assert(!h.done);
	n = h.nfound;
	watcher_free(w);
	ck_assert_int_eq(uv_run(&h.loop, UV_RUN_DEFAULT), 0);
	ck_assert(!h.done);
	ck_assert_uint_eq(h.nfound, n);
}
END_TEST

static Suite *
walk_suite(void)
{
	Suite	*s = suite_create("walk");
	TCase	*tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, loops_are_walked_once);
	tcase_add_test(tc,
	    a_file_reached_twice_is_found_under_its_shortest_path);
	tcase_add_test(tc,
	    a_file_reached_twice_at_one_depth_keeps_its_real_name);
	tcase_add_test(tc, owner_rule_judges_every_link_of_a_chain);
	tcase_add_test(tc,
	    owner_rule_judges_a_linked_directory_and_the_literal_one);
	tcase_add_test(tc, open_refuses_a_name_swapped_since_judged);
	tcase_add_test(tc, many_directories_are_walked_in_slices);
	tcase_add_test(tc, a_walk_under_way_ends_with_its_watcher);
	tcase_add_test(tc, an_unchanged_directory_is_not_read_again);
	tcase_add_test(tc, a_changed_directory_is_read_again);
	tcase_add_test(tc,
	    a_directory_changed_in_the_tick_of_its_read_is_read_again);
	tcase_add_test(tc, a_directory_changed_lately_is_read_at_each_walk);
	tcase_add_test(tc, a_replaced_directory_is_read_again);
	tcase_add_test(tc, a_linked_directory_is_looked_at_through_its_link);
	tcase_add_test(tc, a_listing_is_judged_again_under_another_path);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	log_setup(LOG_LVL_INFO, false);
	return tu_run(walk_suite());
}
