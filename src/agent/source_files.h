/*
 * What only a flow's files have as a source (source_files.c), behind
 * source_files() (source.h), which is NULL for the journal: its files
 * handed over to a changed flow, their unread rest spooled at a stop,
 * what a restart knows delivered, record ids, and coalesced reads.
 */
#ifndef DISAGENT_SOURCE_FILES_H
#define DISAGENT_SOURCE_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct files_acked;
struct files_handover;
struct hash_key;
struct source_files;
struct source_rec;
struct spool;

/* One file a source reads: its path (borrowed for the call), the end of
 * what is delivered of it, and its size at the last look. */
typedef void	(*source_file_fn)(const char *path, uint64_t committed,
		    uint64_t size, void *arg);

/* Call fn for every file it reads. */
void		 source_files_each(const struct source_files *,
		    source_file_fn, void *arg);
/*
 * A reload changed the flow: after source_stop, what its successor reads
 * on (new; files.h: the open files with their offsets), or NULL.
 */
struct files_handover *source_files_hand_over(struct source_files *);
/* Read on what h holds (steals it): the files adopted. */
size_t		 source_files_adopt(struct source_files *,
		    struct files_handover *h);
/* A stop: the unread rest of the files deleted while open to sp. */
void		 source_files_spool(struct source_files *, struct spool *sp);

/*
 * What a restart knows (issue 20; the journal's cursor resends nothing):
 * a record inside the acknowledged spans the state file kept is skipped
 * before the flow sees it; one with r->known set may have been found in
 * the stream by the restart's read, which only its data as sent
 * (sent[0..sentlen-1], encoded by the flow's chain) tells.  Then it is
 * skipped (committed as a range of its own, never an extension of a range
 * in flight; counted in records_skipped[1]), and the call is true.
 */
bool		 source_files_found(struct source_files *,
		    const struct source_rec *r, const char *sent,
		    size_t sentlen);
/* The file part of r's record id (keyid.h) under the agent key k into
 * *file, and whether it is the same for every later record of r's origin
 * (*fixed). */
bool		 source_files_id_file(struct source_files *,
		    const struct source_rec *r, const struct hash_key *k,
		    uint64_t *file, bool *fixed);
/* files.h: files_keep_acked, files_publish, files_restart_pending,
 * files_release. */
void		 source_files_keep_acked(struct source_files *,
		    const struct files_acked *, size_t);
void		 source_files_publish(struct source_files *,
		    const struct files_acked *, size_t);
bool		 source_files_restart_pending(struct source_files *);
void		 source_files_release(struct source_files *);
/*
 * Reads coalesced in passes (files.h: files_passes, files_pace): the
 * number of the last pass (0: none) and the ms of writes it found; and
 * the period the flow would rather have.
 */
uint64_t	 source_files_passes(const struct source_files *,
		    uint64_t *gap_ms);
void		 source_files_pace(struct source_files *, uint64_t ms);

#endif
