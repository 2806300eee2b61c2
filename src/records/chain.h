/*
 * A flow's processing chain: what one framed record becomes between its
 * source and its batch.  chain_new compiles a flow's options (struct
 * chain_opts; conf_chain_opts derives them from agent.ini, for the flow
 * and for the configuration check alike) into a list of stages, and
 * chain_record runs one record through them and says what became of it:
 * send (these bytes, under this partition key), skip (a line filter left
 * it out; the converters dead-lettered or dropped it) or refuse (the rate
 * limit holds: offer it again later).
 *
 * The stages, in this order, each only when its keys are set (the key
 * always):
 *
 *   filter   lineIncludePattern, lineExcludePattern      CHAIN_FILTERED
 *   rate     maxBytesPerSecond, maxRecordsPerSecond:
 *            admits while tokens are left (ratelimit.h)  CHAIN_REFUSED
 *   convert  dataProcessingOptions (convert.h), cut to
 *            the plain cap of the caller's record cap    CHAIN_DROPPED
 *   key      partitionKeyOption, made from the record as converted (the
 *            DIS Agent makes it before the SDK encodes), with a record id
 *            when the caller's id_file gives the file part (keyid.h)
 *   codec    data.compress.enabled, data.encrypt.enabled: the bytes as
 *            they go on the wire (reccodec.h)
 *
 * The order is what is counted: a filtered record costs no tokens, a
 * refused one was never converted (a line is dead-lettered once, when it
 * is admitted), the key hashes what the converters made.  A new stage (a
 * container runtime's log-line decoder, say, handing on the message and
 * keeping its metadata for the converters) is one more function in the
 * list chain_new builds (chain.c), at its place in this order.
 *
 * Pure with respect to the source: the chain knows no files, no journal,
 * no batch.  The one thing only the source can tell, the file part of a
 * record id, comes through a callback; what a restart knows delivered is
 * the caller's to ask, before the chain (the state file's spans) and
 * after it (the data as sent).  The rate limit is charged by the caller
 * once a sent record is taken (chain_sent): a record the window then
 * refuses is offered again and must not pay twice.
 *
 * Owns: its stages' objects and buffers (the bytes chain_record hands out
 * are borrowed until the next call), and the flow's dead-letter file,
 * which the converters write unmatched lines to and the sink borrows for
 * the records DIS refuses (chain_deadletter).
 */
#ifndef DISAGENT_CHAIN_H
#define DISAGENT_CHAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"
#include "records/reccodec.h"

struct chain;
struct chain_rec;
struct convert_opts;
struct deadletter;

/* What the caller tells the chain; NULL functions: nothing to tell. */
struct chain_cbs {
	/*
	 * The file part of r's record id (keyid.h) into *file, and whether
	 * it stays the same for the later records of r's origin (*fixed:
	 * the chain keeps it for them); false when r's key carries none.
	 * Asked only while ids are on (chain_set_ids) and
	 * partitionKeyOption has one (a RANDOM_INT), after the converters.
	 */
	bool		(*id_file)(void *arg, const struct chain_rec *r,
			    uint64_t *file, bool *fixed);
	void		*arg;
};

/* A flow's options; strings borrowed for chain_new only. */
struct chain_opts {
	const char	*flow;		/* its name: messages, dead letters */
	const struct convert_opts *conv; /* dataProcessingOptions; NULL:
					   none */
	int		 delim;		/* recordDelimiter's byte, or -1 */
	bool		 keep_delim;	/* isRemainRecordDelimiter */
	const char	*include;	/* lineIncludePattern (NULL, "": none) */
	const char	*exclude;	/* lineExcludePattern */
	const char	*partition_key;	/* partitionKeyOption */
	struct reccodec_opts codec;	/* data.compress, data.encrypt */
	uint64_t	 bytes_per_s;	/* maxBytesPerSecond; 0: no limit */
	uint64_t	 records_per_s;	/* maxRecordsPerSecond; 0: no limit */
	const char	*dead_letter_path; /* NULL: none (a check) */
	uint64_t	*unmatched;	/* counts of unmatched lines per
					   LOGTOJSON.unmatched action
					   (CONVERT_NUNMATCHED), or NULL */
	struct chain_cbs cbs;
};

/* One record as framed, borrowed for chain_record. */
struct chain_rec {
	const char	*data;
	size_t		 len;
	const char	*name;		/* its file's path (a journal entry's
					   unit): keys, metadata */
	uint64_t	 off;		/* where it starts: metadata, ids */
	uint64_t	 origin;	/* its file (the record ids' cache) */
	size_t		 cap;		/* the most bytes it may have on the
					   wire (the stream's record cap) */
	const void	*ctx;		/* the caller's own, for its callbacks */
};

enum chain_verdict {
	CHAIN_SEND,		/* out: the bytes to send and their key */
	CHAIN_FILTERED,		/* left out by a line filter: done */
	CHAIN_DROPPED,		/* dead-lettered or dropped: done */
	CHAIN_REFUSED,		/* the rate limit holds: offer it again */
};

/* What became of a record; filled by chain_record. */
struct chain_out {
	/* CHAIN_SEND: borrowed until the next chain_record. */
	const char	*data;
	size_t		 len;
	const char	*key;		/* its partition key ("" when none) */
	size_t		 klen;
	bool		 truncated;	/* the converters cut it to the cap */
	/* CHAIN_REFUSED: when the limit held it, and the ms until a
	 * record may be admitted again. */
	uint64_t	 held_ms;
	uint64_t	 wait_ms;
};

/*
 * Compile o into *out: 0, or a negative errno with the reason in err and,
 * when one key is at fault, its name in *key (key may be NULL).
 * data.compress.enabled needs libsnappy: reccodec_snappy_ok first.
 */
int		 chain_new(const struct chain_opts *o, struct chain **out,
		    const char **key, char *err, size_t errlen) WARN_UNUSED;
/* NULL-safe; frees the dead-letter file too (the sink's borrow ends). */
void		 chain_free(struct chain *);
/* Run r through the stages (libcrypto failing to encode is fatal). */
enum chain_verdict chain_record(struct chain *, const struct chain_rec *r,
		    struct chain_out *out);
/* A record chain_record sent, len bytes as sent, was taken: the rate
 * limits charge it. */
void		 chain_sent(struct chain *, size_t len);

/* The most bytes of a record before the codec so that it stays under cap
 * once encoded: what the framer cuts records to. */
size_t		 chain_plain_cap(const struct chain *, size_t cap);
/* The framer must keep the delimiter: the converters drop it. */
bool		 chain_keeps_delimiter(const struct chain *);
/* partitionKeyOption can carry record ids (false for NULL). */
bool		 chain_carries_id(const struct chain *);
/* Whether the keys carry record ids, when they can (off at first): the
 * agent has its key (dedupeOnRestart). */
void		 chain_set_ids(struct chain *, bool on);
/* LOGTOJSON's regex: 1 JIT-compiled, 0 interpreted, -1 none. */
int		 chain_regex_jit(const struct chain *);
/* The dead-letter file (borrowed), NULL for a chain made without one. */
struct deadletter *chain_deadletter(struct chain *);
/* Tests: the rate limit's monotonic clock (ms). */
void		 chain_set_clock(struct chain *, uint64_t (*)(void));

#endif
