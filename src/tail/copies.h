/*
 * copytruncate copies that filePattern matches (lessons R6).  logrotate's
 * copytruncate copies app.log to app.log.1, then truncates app.log.  When
 * the copy matches the pattern it must not be sent again: a new file whose
 * head is the head a tracked file had before its last truncation is that
 * file's copy, read from where the original had got to; a new file whose
 * head is a live tracked file's current head is a copy taken before the
 * truncation, and waits for it.
 *
 * The copy is made by read and write, so a scan may find it empty or
 * shorter than a fingerprint: a new file whose bytes so far are the start
 * of a live tracked file's head (or of a file held here) waits too, until
 * it has enough bytes to judge.  So does a copy shorter than what was read
 * of its original (it may still be written).  A file is held while it
 * changes, and for 3 s after it last did or after what it waits for
 * changed (30 s at most); then it is read as a new file (a short copy: as
 * a copy).  It is never read before it is judged, and never lost: one
 * that goes from its path while held is handed back to be read (its
 * descriptor kept its bytes).
 */
#ifndef DISAGENT_COPIES_H
#define DISAGENT_COPIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* What copy detection needs of one tracked file. */
struct copy_candidate {
	uint64_t	 dev, ino;
	const char	*path;
	int		 fd;			/* borrowed; -1 if none */
	uint32_t	 prev_crc, prev_len;	/* its head before truncation */
	uint64_t	 prev_end;		/* bytes of it read by then */
	uint32_t	 crc, len;		/* its head now */
	bool		 gone;
	bool		 compressed;		/* head decompressed: no prefix */
};

/* The tracked files, one by one into *c; false at the end. */
typedef bool	(*copies_next_fn)(void *it, struct copy_candidate *c);

/* One new file held back.  Private: use the API. */
struct copies_held {
	uint64_t	 dev, ino;
	uint64_t	 size;		/* at the last look */
	uint64_t	 since_ms;	/* held since */
	uint64_t	 changed_ms;	/* its size last changed */
	char		*path;		/* where last seen (owned) */
	int		 fd;		/* owned: its bytes, if it goes */
	int		 why;		/* what it waits for (copies.c) */
	bool		 used;
	bool		 seen;		/* by the current scan */
};

/* New files held back: a few at a time (zeroed: none).  Private. */
struct copies_wait {
	struct copies_held slot[8];
	bool		 full_said;	/* that a file found none free */
};

enum copies_verdict {
	COPIES_NONE,	/* not a copy: the usual start offset applies */
	COPIES_COPY,	/* a copy: start at *offset */
	COPIES_WAIT,	/* maybe a copy: held, decided at a later scan */
};

/*
 * Whether the new file at path (st) is a copy of one of the candidates,
 * reading its first header_bytes.  COPIES_WAIT holds it: the caller looks
 * again at a later scan (within copies_due_ms).
 */
enum copies_verdict copies_check(struct copies_wait *, const char *path,
		    const struct stat *st, size_t header_bytes,
		    copies_next_fn next, void *it, uint64_t *offset);

/* A scan begins: the held files it does not find are copies_vanished. */
void		 copies_scan_begin(struct copies_wait *);
/*
 * After a scan that walked the directories, a held file it did not find
 * at a matching path: its descriptor into *fd and its last path (new)
 * into *path, both the caller's now; false when there is none (left).
 */
bool		 copies_vanished(struct copies_wait *, int *fd, char **path);
/*
 * Where a file that must be read now (fd, st) starts: a copy's offset,
 * else 0.
 */
uint64_t	 copies_start_now(int fd, const char *path,
		    const struct stat *st, size_t header_bytes,
		    copies_next_fn next, void *it);
/* Milliseconds until a held file is due a look; UINT64_MAX: none held. */
uint64_t	 copies_due_ms(const struct copies_wait *);
/* Close and forget the held files. */
void		 copies_cleanup(struct copies_wait *);

#endif
