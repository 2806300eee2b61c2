/*
 * The framer's insides, shared by framer.c (lines and multi-line records)
 * and framer_ctr.c (container log lines): not for use elsewhere.
 */
#ifndef DISAGENT_FRAMER_INT_H
#define DISAGENT_FRAMER_INT_H

#include <iconv.h>

#include "records/ctrlog.h"
#include "records/framer.h"
#include "records/mlpreset.h"

/* A pending record's buffer larger than this is freed once it is sent. */
#define KEEP_BYTES	(64u * 1024)

/* U+FFFD REPLACEMENT CHARACTER, in UTF-8. */
#define REPLACEMENT	"\xef\xbf\xbd"
#define REPLACEMENT_LEN	3

struct framer {
	int			 delim;
	bool			 keep_delim;
	bool			 strip_cr;
	bool			 skip_empty;
	unsigned long		 skip_header;
	struct re		*re;		/* NULL: single-line */
	struct mlpreset		*mlp;		/* or a preset instead */
	iconv_t			 cd;		/* (iconv_t)-1: no conversion */
	struct buf		 scratch;	/* CR-stripped line + delimiter */
	struct buf		 conv;		/* a record converted to UTF-8 */
	/* Container flows (framer_ctr.c). */
	int			 ctr_fmt;	/* enum ctrlog_format */
	unsigned		 ctr_streams;	/* mask of 1 << stream */
	int			 ctr_record;	/* enum ctrlog_record */
	struct buf		 ctr_text;	/* a Docker line's text */
	struct buf		 ctr_out;	/* a record being built */
	bool			 ctr_raw;	/* the record being delivered is
						   a line shipped as it is */
	bool			 ctr_held;	/* ... is held back, its own
						   bytes ctr_start, ctr_end */
	uint64_t		 ctr_start;
	uint64_t		 ctr_end;
};

/* A container stream's partial lines, waiting for their last one. */
struct framer_part {
	struct buf		 b;		/* their text, joined */
	uint64_t		 start;		/* offset of the first */
	uint64_t		 end;		/* offset past the last */
	char			 time[CTRLOG_TIME_MAX];	/* the first's */
	bool			 on;		/* lines are waiting */
	bool			 cut;		/* bytes were dropped */
	bool			 gap;		/* another stream's lines came
						   between them */
};

/* A container stream's multi-line record (multiLinePreset), open. */
struct framer_ml {
	struct buf		 b;		/* its lines, '\n'-joined */
	uint64_t		 start;		/* offset of its first line */
	uint64_t		 end;		/* offset past its last */
	char			 time[CTRLOG_TIME_MAX];	/* the first's */
	struct mlpreset_state	 at;		/* the preset's state */
	bool			 open;
	bool			 cut;		/* bytes were dropped */
	bool			 gap;		/* other lines came between */
};

/* A multi-line record being assembled (framer_state.pending). */
struct framer_pending {
	struct buf		 b;
	uint64_t		 start;		/* offset of its first byte */
	uint64_t		 end;		/* offset past its last line */
	size_t			 max;		/* max_record it was built for */
	bool			 delim;		/* its last line had one */
	bool			 cut;		/* bytes were dropped from it */
	struct framer_part	 part[CTRLOG_NSTREAMS];	/* container flows */
	struct framer_ml	 ml[CTRLOG_NSTREAMS];
};

/* One call's arguments, passed down as one. */
struct feed {
	struct framer		*fr;
	struct framer_state	*st;
	size_t			 max;
	framer_cb		 cb;
	void			*arg;
};

/* A line without its delimiter, and the file offsets it covers. */
struct line {
	const char	*p;
	size_t		 len;
	uint64_t	 start;
	uint64_t	 end;
	bool		 delim;		/* a delimiter followed it */
	bool		 crlf;		/* a CR before it was stripped */
	bool		 cut;		/* the head of a runaway line */
};

/* framer.c: hand one record to the callback, cut to the cap, counted. */
int	framer_deliver(struct feed *, const char *data, size_t len,
	    uint64_t start, uint64_t end, bool cut);
/* framer.c: the state's pending allocation, made when missing. */
struct framer_pending *framer_pending_get(struct framer_state *);

/* framer_ctr.c: one container log line (take_line's step). */
int	framer_ctr_line(struct feed *, const struct line *);
/* framer_ctr.c: send the partial lines waiting, oldest first. */
int	framer_ctr_flush(struct feed *);
/* framer_ctr.c: free the partial lines' buffers. */
void	framer_ctr_cleanup(struct framer_pending *);

#endif
