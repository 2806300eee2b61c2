/*
 * `disagent import-state -c agent.ini FILE`: the DIS Agent's checkpoints
 * (its SQLite checkpointFile, state/disckpt.h) into disagent's state file,
 * so that the first run goes on where the DIS Agent stopped: no line sent
 * twice, none skipped.  Each checkpoint is matched to an agent.ini flow by
 * stream and filePattern, and to a file on disk by device and inode (in
 * its directory, if it was renamed), whose first bytes must still be the
 * ones the DIS Agent fingerprinted (its SHA-256 of headerLength bytes):
 * an inode now holding another file never gets the old offset.  What
 * cannot be placed is named with the reason; the file is then read as any
 * file without a position.  The state file is written with the registry's
 * atomic save, under its lock, so it refuses while an agent runs.
 *
 * In agent/ because it needs conf (the flows), state (the registry),
 * files (the head fingerprint a tailer computes) and wire (SHA-256).
 */
#ifndef DISAGENT_IMPORTSTATE_H
#define DISAGENT_IMPORTSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct conf;
struct conf_flow;
struct disckpt_row;
struct registry;

/* What to do with one checkpoint for one flow. */
enum importstate_verdict {
	IMPORT_PLACED,		/* at the offset, for the file now at path */
	IMPORT_SKIPPED,		/* not placed; why says why */
};

/* The verdict's details, filled by importstate_judge. */
struct importstate_place {
	uint64_t	 dev;
	uint64_t	 ino;
	char		*path;		/* new: where the file is now */
	uint64_t	 offset;
	uint64_t	 size;		/* the file's size now */
	uint32_t	 fp_crc;	/* disagent's head fingerprint */
	uint32_t	 fp_len;
	char		 why[640];
};

void	 importstate_place_cleanup(struct importstate_place *);

/*
 * The flows of conf that the DIS Agent flow id (dis:STREAM:PATTERN) names:
 * the same DISStream, and a filePattern the DIS Agent writes as PATTERN.
 * Up to max of them into out (borrowed from conf); returns how many.  On
 * none, why[len] says why (not a DIS flow, or the nearest flow).
 */
size_t	 importstate_flows(const struct conf *, const char *flow_id,
	    const struct conf_flow **out, size_t max, char *why, size_t len);

/*
 * Where row's file is now and the offset fc goes on from, or why not:
 * a fileId that is not a device and inode, a file gone, an inode that
 * holds another file now (its head is not the one the DIS Agent saw), no
 * head to compare and an offset past 0, an offset past the file's end or
 * not after a record delimiter, a position the state file already has
 * (reg), a whole-file flow.
 * Reads the file system only; changes nothing.  out is filled either way
 * (importstate_place_cleanup it).
 */
enum importstate_verdict importstate_judge(const struct conf_flow *fc,
	    struct registry *reg, const struct disckpt_row *row,
	    struct importstate_place *out);

/*
 * The command: argv[0] is "import-state"; -c FILE (default default_conf),
 * -n / --dry-run (say what would be imported, write nothing), one FILE.
 * Writes what it did to out and errors to err; returns the exit status:
 * 0 when the file was read and the state written (checkpoints that could
 * not be placed are listed, they are not errors), 1 on an error (nothing
 * written), 2 on a usage error.
 */
int	 importstate_main(int argc, char **argv, const char *default_conf);
int	 importstate_run(const char *conf_path, const char *db_path,
	    bool dry_run, FILE *out, FILE *err);

#endif
