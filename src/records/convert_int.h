/*
 * The compiled chain, shared by convert.c (running it) and convert_build.c
 * (building it from a flow's options).  Private to those two files.
 */
#ifndef DISAGENT_CONVERT_INT_H
#define DISAGENT_CONVERT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"
#include "records/convert.h"
#include "records/logparse.h"

#define MAX_STEPS	16	/* options in one list */
#define MAX_NAMES	1000	/* field names of one option */
#define KEEP_BYTES	(64u * 1024)	/* scratch kept between records */

enum step_kind { S_CSV, S_LOG, S_META, S_BRACKETS };

struct step {
	enum step_kind	 kind;
	bool		 pretty;	/* jsonFormat = PRETTYPRINT */
};

/*
 * Output keys in first-occurrence order, each taking the value of its last
 * occurrence (a LinkedHashMap that was put() once per name).
 */
struct names {
	char		**name;
	size_t		*src;		/* column or group index, from 0 */
	size_t		 n;
};

enum meta_field { MF_HOSTNAME, MF_PATH, MF_FILENAME, MF_OFFSET, MF_TIMESTAMP };
extern const char *const meta_field_names[];	/* in enum order */

struct span {
	const char	*p;
	size_t		 n;
};

struct convert {
	struct step	 steps[MAX_STEPS];
	size_t		 nsteps;
	int		 delim;
	bool		 keep;

	/* CSVTOJSON */
	struct names	 csv;
	size_t		 ncsv_cols;	/* columns looked at: max src + 1 */
	struct span	*cols;		/* ncsv_cols */
	bool		 csv_ascii[128];	/* ASCII separators */
	char		**csv_wide;	/* other separators, UTF-8 */
	size_t		 ncsv_wide;

	/* LOGTOJSON */
	struct logparse	*lp;
	struct names	 log;
	bool		 dash_null;
	char		 log_what[40];	/* format name or "matchPattern" */
	enum convert_unmatched unmatched;

	/* ADDMETADATA */
	struct buf	 meta;		/* metadata rendered, in its jsonFormat */
	unsigned	 meta_members;	/* when left open for fields */
	enum meta_field	 meta_fields[8];
	size_t		 nmeta_fields;
	char		 hostname[256];
	int64_t		(*clock)(void);

	/* scratch and the flow's side */
	struct buf	 a, b;
	struct deadletter *dlq;
	const char	*flow;
	uint64_t	 own[CONVERT_NUNMATCHED];
	uint64_t	*counts;	/* own, or the flow's counters */
	const char	*last_path;	/* the last raw unmatched line */
	uint64_t	 last_offset;
	uint64_t	 since_warn;
	uint64_t	 warn_ms;
	bool		 warned;
};

/*
 * Java's UTF-8 decoding, exposed for tests: the length of the longest
 * valid prefix of s[0..n) (n when all of it is valid), and s[0..n) with
 * each malformed sequence replaced by U+FFFD as Java replaces it, appended
 * to out.
 */
size_t	convert_utf8_valid(const char *s, size_t n);
void	convert_utf8_java(const char *s, size_t n, struct buf *out);

#endif
