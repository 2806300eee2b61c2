/*
 * Inside the agent.ini reader: the key table (conf_keys.c), the value
 * checks (conf_check.c), storing values and defaults (conf_store.c),
 * reading the file (conf.c), the checks across keys once it is read
 * (conf_finish.c), and the sample file and man page (conf_doc.c).
 */
#ifndef DISAGENT_CONF_INT_H
#define DISAGENT_CONF_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "base/util.h"
#include "conf/conf.h"

enum ktype {
	KT_STRING,	/* char *; checked by check() when non-empty */
	KT_INT,		/* long long within [min, max] */
	KT_BOOL,	/* bool */
	KT_ENUM,	/* int: index into words */
	KT_WORD,	/* char *: the canonical spelling from words */
};

enum ksect {
	KS_AGENT,
	KS_FLOW,
};

#define KF_REQUIRED	0x01	/* must be set (or come from env) */
#define KF_SECRET	0x02	/* value never appears in a message */
#define KF_NONEMPTY	0x04	/* "" is not a valid value */
#define KF_CRED		0x08	/* required with credentialSource = static */
#define KF_DIR		0x10	/* may come from $CREDENTIALS_DIRECTORY */
#define KF_LONG		0x20	/* its line may be up to LONG_LINE_MAX */
/* What a change of an [agent] key costs at a reload (conf_diff.c); an
 * unflagged [agent] key is read by the flows: every flow is rebuilt. */
#define KF_RELOAD_CLIENT 0x40	/* a new HTTP client; the flows are kept */
#define KF_RELOAD_AGENT	0x80	/* the agent's own settings; nothing more */

struct key {
	enum ksect	 sect;
	const char	*name;		/* the DIS Agent's spelling */
	enum ktype	 type;
	const char *const *words;	/* KT_ENUM, KT_WORD: NULL-terminated */
	long long	 min, max;	/* KT_INT */
	const char	*def;		/* default as text; NULL: none ("") */
	const char	*example;	/* value the sample file sets */
	size_t		 off;		/* in struct conf or struct conf_flow */
	int		 flags;		/* KF_* */
	const char	*env;		/* environment variable to override */
	const char	*(*check)(const char *);	/* NULL or why not */
	const char	*help;		/* one or two sentences */
};

/* Section header, flow name and the other limits of the file format. */
#define FLOW_NAME_MAX	64
#define NAME_SHOW_MAX	49	/* inih truncates names to 49 bytes */
#define LINE_BUF	512
#define INI_LINE	200	/* Debian's libinih INI_MAX_LINE */
/* Lines of KF_LONG keys (patterns, JSON) are read by us, not by inih. */
#define LONG_LINE_MAX	4095

/* Parse state of one section: its header line and where each key was set. */
struct sect {
	const char *path;	/* the file it is in (conf->files) */
	int	 line;
	int	*keyline;	/* [conf_nkeys]; 0: not set in the file */
};

#define CUR_NONE	(-2)	/* no section header yet */
#define CUR_AGENT	(-1)	/* >= 0: index of the flow */

struct parse {
	const char	*path;		/* the file being read */
	bool		 dropin;	/* it is one of agent.d/ */
	FILE		*fp;
	struct conf	*conf;
	struct sect	 agent;
	struct sect	*flows;		/* parallel to conf->flows */
	int		 cur;		/* CUR_* or a flow index */
	int		 lineno;
	int		 syntax_line;	/* first line the reader found odd */
	const char	*syntax_why;
	bool		 failed;
	int		 errline;	/* line of the error; 0: none */
	char		*err;
	size_t		 errlen;
	unsigned	 opts;		/* CONF_* */
	int		 stash_line;	/* the line whose value is in stash */
	struct buf	 stash;		/* a value inih does not see */
	char		 line[CONF_LONG_LINE + 2];
};

#define ALNUM	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

/* The table: every key of agent.ini (conf_keys.c). */
extern const struct key	 conf_keys[];
extern const size_t	 conf_nkeys;

static inline char **
str_at(void *base, const struct key *k)
{
	return (char **)(void *)((char *)base + k->off);
}

static inline long long *
int_at(void *base, const struct key *k)
{
	return (long long *)(void *)((char *)base + k->off);
}

static inline bool *
bool_at(void *base, const struct key *k)
{
	return (bool *)(void *)((char *)base + k->off);
}

static inline int *
enum_at(void *base, const struct key *k)
{
	return (int *)(void *)((char *)base + k->off);
}

/* conf.c */
/* Read one file (path, opened as fp) into p: 0 or -1 (p->err says). */
int	conf_parse_file(struct parse *, const char *path, FILE *fp);
/* What p holds besides the conf (conf_load.c, once it is read). */
void	conf_parse_free(struct parse *);

/* conf_dropin.c: the drop-ins after agent.ini, 0 or -1. */
int	conf_read_dropins(struct parse *);

/* conf_check.c: two flows that send one file to one stream: 0, or -1
 * naming both (at the later one's filePattern). */
int	conf_check_overlap(struct parse *);
/* conf_check.c: NULL, or why the value is not valid. */
bool	conf_charset_ok(const char *, const char *, size_t);
const char *conf_check_region(const char *);
const char *conf_check_id(const char *);
const char *conf_check_stream(const char *);
const char *conf_check_url(const char *);
const char *conf_check_credential(const char *);
const char *conf_check_abs_path(const char *);
const char *conf_check_listen(const char *);
const char *conf_check_delimiter(const char *);
const char *conf_check_regex(const char *);
const char *conf_check_mlpreset(const char *);
const char *conf_check_encoding(const char *);
const char *conf_check_ca_file(const char *);
const char *conf_check_token(const char *);
const char *conf_check_password(const char *);
const char *conf_check_non_proxy(const char *);

/* conf_store.c */
const char *conf_sanitize(const char *, char *, size_t);
void	conf_words_join(const char *const *, const char *, struct buf *);
int	conf_key_store(void *, const struct key *, const char *, char *,
	    size_t);
void	conf_apply_defaults(void *, enum ksect);
const struct key *conf_key_find(enum ksect, const char *, bool);
/* The line key name is set at in s; 0: not set. */
int	conf_key_line(struct sect *, const char *);
/* Whether k's value is stashed, never handed to inih. */
bool	conf_stashed(const struct key *);
/* Record the first error; later ones are dropped.  Always returns -1. */
int PRINTFLIKE(3, 4)
	conf_fail(struct parse *, int, const char *, ...);

/* conf_finish.c */
int	conf_finish(struct parse *);

/* journalconf.c: the keys of the flow's source (files, journal). */
int	conf_check_source(struct parse *, struct conf_flow *, struct sect *,
	    const char *label);

#endif
