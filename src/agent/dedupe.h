/*
 * The restart after a crash (dedupeOnRestart = auto): before the flows
 * read the files whose records may be on their way again (bytes past
 * their saved offsets, or not named by the state file: held from them
 * until the read is over, registry_set_hold), ask each stream which of
 * the records the crashed run sent after its last save already landed,
 * so that they are not sent twice.  The other files ship meanwhile.
 *
 * The state file's header (registry.h, struct reg_run) says the run did
 * not stop cleanly, until when its requests could land (land_by_ms), and
 * per stream and partition the last sequence number it saw acknowledged
 * before the records its entries do not account for, and since when its
 * requests went out (started_ms).  Each such partition is read from just
 * after that number (GetCursor AFTER_SEQUENCE_NUMBER; a partition without
 * one, AT_TIMESTAMP from started_ms, once GetCursor listed them), then
 * GetRecords until it is read to its end or its records were
 * written after land_by_ms (and a margin for the clocks); at its end it is
 * asked again every 300 ms (a timer) until a GetRecords sent after the
 * crashed run's last possible landing (land_by_ms, and no later than
 * socketTimeOutSeconds after this start) finds nothing more.  A record
 * counts as this agent's only when its partition key carries a record id
 * (keyid.h) whose file part is one of this agent's files of a flow of that
 * stream -- those of the state file, and those the flow's pattern matches
 * now that it does not name yet (dedupe_plan.c), which a record found
 * makes entries at offset 0 --; it is noted in that file's registry entry (registry_add_found),
 * with the hash of its data, and the file's tailer skips it when it reads
 * a record at that offset with that data again (skipplan.h).
 *
 * Graceful: keys that may not read the stream, a stream that no longer
 * holds those records (trimmed, or a partition expired), the read not done
 * within DEDUPE_MAX_MS: the stream falls back to sending again what was
 * not found, with one INFO line saying why.  Nothing is ever skipped that
 * was not found.  Uses dis/ and wire/ directly (not readback/, which
 * agent/ may not include).
 */
#ifndef DISAGENT_DEDUPE_H
#define DISAGENT_DEDUPE_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

struct conf;
struct disapi;
struct hash_key;
struct registry;
struct dedupe;

#define DEDUPE_MAX_MS	60000	/* the whole read, at most */
#define DEDUPE_SKEW_MS	30000	/* between our clock and DIS's */

/*
 * Start the restart's read for conf's flows from the state in reg (both
 * borrowed; they outlive it), on loop through api, with the agent's key.
 * Logs what it does and why not.  Returns NULL when there is nothing to
 * read (a clean stop, no state, dedupeOnRestart = off, no flow whose keys
 * carry ids, no file with bytes past its saved offset): the flows may
 * start at once.  Otherwise they start once dedupe_ready() says so, with
 * dedupe_holds (registry_set_hold) keeping the files whose records may be
 * on their way from them; done(arg) is called from the loop once the read
 * is over (dedupe_done), and the flows read those files then.
 */
struct dedupe	*dedupe_start(uv_loop_t *, struct disapi *,
		    const struct conf *, struct registry *,
		    const struct hash_key *agent, void (*done)(void *),
		    void *arg);
/*
 * Every partition was read to its end once (or given up on): what is left
 * is the wait for late requests, which only the held files wait for.
 */
bool		 dedupe_ready(const struct dedupe *);
/* Whether the read holds flow's file (dev, ino) (reg_hold_fn). */
bool		 dedupe_holds(void *d, const char *flow, uint64_t dev,
		    uint64_t ino);
/* Every stream is read, or given up on. */
bool		 dedupe_done(const struct dedupe *);
/*
 * Stop (if not done) and free: a request still on the wire ends with the
 * http client (its callback then frees what is left).
 */
void		 dedupe_free(struct dedupe *);

#endif
