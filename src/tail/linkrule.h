/*
 * followSymlinks = owner: a path resolved one component at a time, each
 * link on the way followed only when its owner is root or owns what the
 * link leads to (Apache's SymLinksIfOwnerMatch, the kernel's
 * fs.protected_symlinks), so that whoever may write to a watched directory
 * cannot make the agent ship a file of someone else.  Pure file-system
 * reads (lstat, readlink): no descriptor is kept, so the caller checks the
 * identity of what it then opens against the one resolved here.
 */
#ifndef DISAGENT_LINKRULE_H
#define DISAGENT_LINKRULE_H

#include <sys/stat.h>
#include <sys/types.h>

/* The link refused: its path and owner, and where it led. */
struct linkrule_refusal {
	char		*link;		/* new */
	uid_t		 link_uid;
	uid_t		 target_uid;
	mode_t		 target_mode;	/* a file, a directory */
};

/*
 * Resolve the absolute path, links included, under the owner rule.  0:
 * *st is what path leads to (lstat of its link-free path, never a link),
 * *real that path (new; NULL: not wanted).  -EPERM: a link was refused,
 * *why says which (free with linkrule_refusal_cleanup).  Another negative
 * errno (-ENOENT, -ELOOP past 40 links, -ENOTDIR, ...) otherwise.
 */
int	linkrule_resolve(const char *path, struct stat *st, char **real,
	    struct linkrule_refusal *why);

void	linkrule_refusal_cleanup(struct linkrule_refusal *);

/*
 * path opened read-only (non-blocking, close-on-exec) when it is still
 * the file st says (a scan's judgement, links included): a name swapped
 * since, or a link made to lead elsewhere, gives -1 with errno ESTALE.
 * The descriptor, or -1 with errno set.
 */
int	linkrule_open(const char *path, const struct stat *st);

#endif
