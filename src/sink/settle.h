/*
 * A request whose outcome is unknown, settled by reading the stream
 * before its records are sent again.  A PutRecords that timed out, lost
 * its connection after the body went out, or got a 5xx may have landed;
 * sending it again blindly stores its records twice.  The records carry
 * ids in their partition keys (keyid.h), so the stream says which landed:
 * each partition is read from the floor the batch pinned when it was sent
 * (seqmark.h: every record of the request lands after it) to its end, and
 * asked again every SETTLE_POLL_MS until a GetRecords sent after the
 * request's landing bound finds nothing more: SETTLE_MARGIN_MS after the
 * attempt ended (its timeout was over, or the server answered or closed
 * the connection; DIS stores a request on receipt, so what is still on
 * its way inside DIS then lands within the margin or not at all).  A record read back whose
 * partition key and data are those of a record of the batch not done yet
 * landed: it counts as acknowledged.  The rest never landed and is sent
 * again.
 *
 * Only for flows whose partition keys carry ids: any other key (a file
 * name, a fixed text) could match a record of another request with the
 * same text, and then a line would be taken for delivered that was not.
 * Each partition is read by a dis/partread.h reader, as the restart's
 * read does.  Keys without read permission, a stream that no longer holds
 * those records, a certificate error, an unreadable reply or a read not
 * done within SETTLE_MAX_MS: the settle fails and everything not found is
 * sent again, as before.
 * The sink owns the batch meanwhile; the settle only reads its keys and
 * data and marks records done (batch_mark_done).
 */
#ifndef DISAGENT_SETTLE_H
#define DISAGENT_SETTLE_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

struct batch;
struct conf_flow;
struct disapi;
struct seqsnap;
struct seqmark;
struct settle;

#define SETTLE_POLL_MS		300
#define SETTLE_MARGIN_MS	1500
#define SETTLE_MAX_MS		60000

/*
 * The settle ended: found records of the batch were marked done; fail is
 * NULL when every partition was read past the landing bound, else why
 * not (borrowed for the call; the rest is then sent again without
 * certainty).  The settle is freed after the call.
 */
typedef void	(*settle_done_cb)(size_t found, const char *fail, void *arg);

/*
 * Read fc's stream through api for b's records not done (b borrowed: the
 * caller keeps it until done or settle_cancel), from the floors of pin
 * (borrowed) over the partitions m knows, until wall ms until.  done is
 * called once, never from inside this call.  Returns NULL (nothing
 * started, done not called) when no partition is known.
 */
struct settle	*settle_start(uv_loop_t *, struct disapi *,
		    const struct conf_flow *fc, const struct seqmark *m,
		    struct seqsnap *pin, struct batch *b, int64_t until,
		    settle_done_cb done, void *arg);
/* Stop: done is not called; b is not touched again.  Frees the settle
 * once its requests have ended (the http client cancels them). */
void		 settle_cancel(struct settle *);

#endif
