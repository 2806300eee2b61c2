/*
 * copytruncate copies that filePattern matches (lessons R6).  logrotate's
 * copytruncate copies app.log to app.log.1, then truncates app.log.  When
 * the copy matches the pattern it must not be sent again: a new file whose
 * head is the head a tracked file had before its last truncation is that
 * file's copy, read from where the original had got to; a new file whose
 * head is a live tracked file's current head is a copy taken before the
 * truncation, and waits (up to 3 s) for it.
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
	uint32_t	 prev_crc, prev_len;	/* its head before truncation */
	uint64_t	 prev_end;		/* bytes of it read by then */
	uint32_t	 crc, len;		/* its head now */
	bool		 gone;
};

/* The tracked files, one by one into *c; false at the end. */
typedef bool	(*copies_next_fn)(void *it, struct copy_candidate *c);

/* New files held back because they may be copies: a few at a time. */
struct copies_wait {
	struct {
		uint64_t	 dev, ino, since_ms;
	} slot[8];
};

enum copies_verdict {
	COPIES_NONE,	/* not a copy: the usual start offset applies */
	COPIES_COPY,	/* a copy: start at *offset */
	COPIES_WAIT,	/* maybe a copy: decide at the next scan */
};

/*
 * Whether the new file at path (st) is a copy of one of the candidates,
 * reading its first header_bytes.
 */
enum copies_verdict copies_check(struct copies_wait *, const char *path,
		    const struct stat *st, size_t header_bytes,
		    copies_next_fn next, void *it, uint64_t *offset);

#endif
