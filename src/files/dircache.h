/*
 * What the last read of each directory of a walk found (walk.c), so that
 * a pass over a deep tree reads again only the directories that changed:
 * kubelet's /var/log/pods holds two directories a container, and a pass
 * every readCoalesceMillis read them all (issue 38).  A directory is
 * known by (device, inode); its listing is good while its mtime, ctime
 * and size are those of the read, and only when both were older than the
 * read's start by DIRCACHE_MARGIN_NS: a change within the same tick as a
 * read leaves the stamps as they were, so a directory changed so lately
 * is read again at each pass until it has been still for that long.
 * ctime too: a tool that sets mtime back (rsync -t, tar) cannot hide a
 * change.  A listing older than DIRCACHE_MAX_AGE_NS is read again anyway,
 * so that a clock stepped back, or a file system whose stamps lie, costs
 * at most that long.
 *
 * A listing holds names and their kind only, no stat: the walk stats
 * each name again (sizes change without the directory changing), and
 * a name whose kind is not the cached one makes the walk read the
 * directory again (dircache_forget).
 *
 * With each name, the walk may keep its verdict (dircache_verdict): the
 * pattern's answer for the name's path, a pure function of that path,
 * so valid only while the directory is reached by the path it was read
 * under (dirlist_path); the walk asks the pattern again otherwise.
 */
#ifndef DISAGENT_DIRCACHE_H
#define DISAGENT_DIRCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#define DIRCACHE_MARGIN_NS	(2 * 1000000000ULL)
#define DIRCACHE_MAX_AGE_NS	(10 * 1000000000ULL)
/* A directory whose names take more is not cached: read each time. */
#define DIRCACHE_MAX_NAMES	(1024 * 1024)

enum dirkind {
	DIRKIND_FILE = 1,	/* a regular file */
	DIRKIND_DIR,
	DIRKIND_LINK,
};
/* A kind byte: the kind, and the verdict's bits. */
#define DIRCACHE_KIND_MASK	0x0f
#define DIRCACHE_V_KNOWN	0x10
#define DIRCACHE_V_YES		0x20

struct dircache;
struct dirlist;

struct dircache	*dircache_new(void);
void		 dircache_free(struct dircache *);

/*
 * The good listing of the directory st (its stat now) at now_ns (the
 * realtime clock), or NULL: then the walk reads it.  Marks it in use.
 */
const struct dirlist *dircache_get(struct dircache *, const struct stat *st,
		    uint64_t now_ns);
/* The entry after *off (0 first): its name, or NULL at the end; its
 * verdict in *verdict (1 yes, 0 no, -1 none kept). */
const char	*dirlist_next(const struct dirlist *, size_t *off,
		    enum dirkind *kind, int *verdict);
/* The path of the directory when it was read. */
const char	*dirlist_path(const struct dirlist *);

/*
 * A read of directory st at path (fstat of the open directory, before
 * its entries are read), begun at start_ns: the names dircache_add gives
 * until dircache_end, which keeps them when ok.
 */
void		 dircache_begin(struct dircache *, const struct stat *st,
		    uint64_t start_ns, const char *path);
void		 dircache_add(struct dircache *, const char *name,
		    enum dirkind);
/* The verdict on the name just added (none: -1 when read again). */
void		 dircache_verdict(struct dircache *, bool yes);
void		 dircache_end(struct dircache *, bool ok);

/* The listing of st is wrong: read it the next time. */
void		 dircache_forget(struct dircache *, const struct stat *st);

/* After a whole walk: drop the directories it did not reach. */
void		 dircache_sweep(struct dircache *);

/* How many directories have a listing, and the bytes of their names. */
size_t		 dircache_count(const struct dircache *, size_t *bytes);

#endif
