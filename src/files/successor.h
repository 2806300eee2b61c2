/*
 * Files that left their path with bytes not yet delivered, and where those
 * bytes went.  logrotate's compress (without delaycompress) replaces a
 * rotated file by its .gz: when the agent was stopped, or had the file
 * parked (maxOpenFiles), the original inode is gone.  A compressed file in
 * a walked directory whose decompressed head is the lost file's head
 * fingerprint is its successor: read on from the committed offset
 * (offsets count decompressed bytes).  What has no successor is reported
 * and counted as lost, never dropped silently.
 *
 * A scan collects the compressed files it sees (the candidates) and, at
 * the first scan, the (dev, inode) it sees of each registry entry, so the
 * entries of files that are gone can be told apart.
 */
#ifndef DISAGENT_SUCCESSOR_H
#define DISAGENT_SUCCESSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

struct successors;

/* Heads are compared over up to header_bytes decompressed bytes. */
struct successors *successors_new(size_t header_bytes);
void		 successors_free(struct successors *);

/* A scan begins: forget the candidates (and the inodes seen). */
void		 successors_reset(struct successors *);
/* The scan saw the file (dev, ino) at all (first scan only; files_scan.c
 * tells only of files with a registry entry). */
void		 successors_seen(struct successors *, uint64_t dev,
		    uint64_t ino);
bool		 successors_was_seen(struct successors *, uint64_t dev,
		    uint64_t ino);
/* The scan saw a compressed file (by its name) that is not tracked. */
void		 successors_add(struct successors *, const char *path,
		    const struct stat *);

/*
 * The candidate whose decompressed head is crc over len bytes (at least
 * 64: shorter heads prove nothing); its path (borrowed until the next
 * reset) and stat into *st, or NULL.  A candidate is handed out once.
 */
const char	*successors_find(struct successors *, uint32_t crc,
		    uint32_t len, struct stat *st);

#endif
