/*
 * agent.ini -> immutable configuration structs.  One declarative key table
 * (conf_keys.c) drives parsing, defaults, bounds, the commented sample file
 * and the man page.  Errors are "FILE:LINE: message"; the secret key never
 * appears in any message.  conf.c is the only file that includes <ini.h>.
 */
#ifndef DISAGENT_CONF_H
#define DISAGENT_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "base/util.h"
#include "records/convert.h"
#include "records/framer.h"

enum conf_position {
	POS_START_OF_FILE,
	POS_END_OF_FILE,
};

/* What a flow reads (source): in the order of journalconf_sources. */
enum conf_source {
	SOURCE_FILES,
	SOURCE_JOURNAL,
	SOURCE_CONTAINERS,	/* container log files (conf/ctrconf.h) */
};

/* One [flow:NAME] section. */
struct conf_flow {
	char		*name;		/* NAME of [flow:NAME] */
	const char	*file;		/* the file it is in (agent.ini or a
					   drop-in): one of conf->files */
	int		 line;		/* line of the section header */
	bool		 enable;	/* enable = true */
	char		*stream;	/* DISStream */
	char		*stream_id;	/* streamId ("" = none) */
	char		*stream_type;	/* streamType: COMMON or ADVANCED */
	enum conf_source source;	/* source: files, journal */
	char		*file_pattern;	/* filePattern (absolute path glob) */
	enum conf_position initial_position;	/* initialPosition */
	/* source = journal (conf/journalconf.h, journal/journal.h) */
	char		*journal_match;		/* journalMatch ("" = all) */
	char		*journal_dir;		/* journalDirectory ("" = the
						   system journal) */
	int		 journal_format;	/* journalFormat: enum
						   journal_format */
	/* source = containers (conf/ctrconf.h, records/ctrlog.h) */
	char		*ctr_dir;		/* containerLogDirectory */
	char		*ctr_match;		/* containerMatch */
	char		*ctr_exclude;		/* containerExclude */
	int		 ctr_streams;		/* containerStreams: 0 all,
						   1 stdout, 2 stderr */
	int		 ctr_format;		/* containerFormat: 0 auto,
						   1 cri, 2 docker */
	int		 ctr_record;		/* containerRecord: enum
						   ctrlog_record */
	long long	 max_buffer_age_ms;	/* maxBufferAgeMillis */
	long long	 max_buffer_records;	/* maxBufferSizeRecords */
	long long	 max_buffer_bytes;	/* maxBufferSizeBytes */
	char		*partition_key_option;	/* partitionKeyOption */
	long long	 retry_initial_backoff_ms; /* retryInitialBackoffMillis */
	long long	 retry_max_backoff_ms;	/* retryMaxBackoffMillis */
	long long	 max_in_flight;		/* maxInFlightRequests */
	long long	 rescan_interval_ms;	/* rescanIntervalMillis */
	long long	 read_coalesce_ms;	/* readCoalesceMillis */
	bool		 ordered;	/* ordered: one request at a time */
	bool		 recursive;	/* directoryRecursionEnabled */
	char		*exclude_pattern;	/* excludePattern */
	char		*file_suffix;		/* fileSuffix */
	char		*watch_mode;		/* watchMode: INOTIFY, POLL */
	char		*follow_symlinks;	/* followSymlinks: owner,
						   always, never */
	long long	 max_open_files;	/* maxOpenFiles */
	long long	 ignore_older_s;	/* ignoreNotUpdatedFileSeconds */
	long long	 header_bytes;		/* headerBytesLength */
	char		*record_delimiter;	/* recordDelimiter (as written) */
	bool		 keep_delimiter;	/* isRemainRecordDelimiter */
	bool		 strip_cr;		/* stripCarriageReturn */
	bool		 skip_empty;		/* skipEmptyLines */
	bool		 miss_last_delimiter;	/* isMissLastRecordDelimiter */
	long long	 max_file_checking_ms;	/* maxFileCheckingMillis */
	char		*multiline_pattern;	/* multiLineStartPattern */
	char		*multiline_preset;	/* multiLinePreset */
	long long	 multiline_flush_ms;	/* multiLineFlushMillis */
	long long	 skip_header_lines;	/* skipHeaderLines */
	char		*file_encoding;		/* fileEncoding */
	bool		 file_appendable;	/* isFileAppendable */
	char		*delete_policy;		/* deletePolicy: never,
						   immediate */
	char		*move_dir;		/* fileMoveToDir ("" = none) */
	bool		 ignore_empty;		/* isIgnoreEmptyData */
	long long	 delete_after_s;	/* deleteAfterDeliverySeconds */
	/* Line filters (records/filter.h). */
	char		*line_include;		/* lineIncludePattern */
	char		*line_exclude;		/* lineExcludePattern */
	/* Rate limits (records/ratelimit.h); 0: none. */
	long long	 max_bytes_per_s;	/* maxBytesPerSecond */
	long long	 max_records_per_s;	/* maxRecordsPerSecond */
	struct convert_opts conv;	/* dataProcessingOptions and its keys */
};

/* The whole file: [agent] plus the flows in file order. */
struct conf {
	char		*path;		/* the file it was read from */
	char		*region;	/* region */
	char		*project_id;	/* projectId */
	char		*endpoint;	/* endpoint, default from region */
	char		*ak;		/* ak (DIS_AK overrides) */
	char		*sk;		/* sk (DIS_SK overrides); never logged */
	char		*checkpoint_file;	/* checkpointFile */
	char		*ca_file;	/* caFile ("" = system store) */
	bool		 ssl_verify;	/* sslVerify */
	char		*log_level;	/* logLevel: ERROR WARN INFO DEBUG */
	long long	 connect_timeout_s;	/* connectionTimeOutSeconds */
	long long	 socket_timeout_s;	/* socketTimeOutSeconds */
	long long	 status_period_s;  /* log.statusReportingPeriodSeconds */
	long long	 checkpoint_interval_ms; /* checkpointIntervalMillis */
	long long	 shutdown_timeout_ms;	/* shutdownTimeoutMillis */
	char		*retriable_codes;	/* records.retriable.error.code */
	char		*dead_letter_file;	/* deadLetterFile ("" = beside
						   checkpointFile) */
	long long	 paused_retry_s;	/* pausedRetrySeconds */
	char		*spool_dir;	/* spoolDirectory ("" = spool/ beside
					   checkpointFile) */
	long long	 spool_max_bytes;	/* spoolMaxBytes */
	long long	 max_memory_bytes;	/* maxMemoryBytes */
	long long	 checkpoint_ttl_days;	/* checkpointTimeToLiveDays */
	char		*dedupe_on_restart;	/* dedupeOnRestart: auto, off */
	bool		 compress;		/* body.compress.enabled */
	char		*compress_type;		/* body.compress.type: lz4, zstd */
	char		*serialize_type;	/* body.serialize.type: auto,
						   json, protobuf */
	bool		 data_compress;		/* data.compress.enabled */
	bool		 data_encrypt;		/* data.encrypt.enabled */
	char		*data_password;		/* data.password
						   (DIS_DATA_PASSWORD); never
						   logged */
	char		*metrics_file;	/* metricsFile ("" = none) */
	long long	 metrics_interval_ms;	/* metricsIntervalMillis */
	char		*http_listen;	/* httpListen ("" = no server) */
	long long	 health_stall_s;	/* healthStallSeconds */
	/* Credentials and proxies: secrets are zeroed by conf_free. */
	char		*security_token;	/* security.token
						   (DIS_SECURITY_TOKEN) */
	char		*credential_source;	/* credentialSource: static,
						   ecs-metadata */
	char		*ecs_endpoint;		/* ecsMetadataEndpoint */
	char		*encrypt_key;	/* encrypt.key; "" once conf_load has
					   decrypted what needed it */
	char		*proxy_host;		/* PROXY_HOST ("" = none) */
	long long	 proxy_port;		/* PROXY_PORT */
	char		*proxy_protocol;	/* PROXY_PROTOCOL: http, https */
	char		*proxy_username;	/* PROXY_USERNAME */
	char		*proxy_password;	/* PROXY_PASSWORD */
	char		*non_proxy_hosts;	/* NON_PROXY_HOSTS as written */
	struct conf_flow *flows;
	size_t		 nflows;
	/* The files read, agent.ini first, then the drop-ins of agent.d/
	 * beside it in name order (conf_dropin.c). */
	char		**files;
	size_t		 nfiles;
};

/*
 * Read and validate path, then every *.ini of the directory agent.d beside
 * it, in name order: drop-ins that hold [flow:NAME] sections only (an
 * [agent] section or a flow name used twice is an error naming both
 * places).  On success *out is a new struct conf (free with
 * conf_free) and 0 is returned.  On failure returns -1 and writes one
 * "FILE:LINE: message" (or "FILE: message" when no line applies) into err.
 * DIS_AK, DIS_SK, DIS_SECURITY_TOKEN and DIS_ENCRYPT_KEY from the
 * environment override ak, sk, security.token and encrypt.key; those four
 * come from $CREDENTIALS_DIRECTORY (cred_resolve) when neither sets them;
 * encrypted values are decrypted.
 */
int	conf_load(const char *path, struct conf **out, char *err,
	    size_t errlen) WARN_UNUSED;

/* conf_load without the credentials: none required, none decrypted. */
#define CONF_NO_CREDENTIALS	0x01
/*
 * disagent -t: when $CREDENTIALS_DIRECTORY is set but cannot be read (systemd
 * 252 hides it from ExecReload= commands), say so and check the rest as with
 * CONF_NO_CREDENTIALS; the agent checks them when it reloads.
 */
#define CONF_CHECK_ONLY		0x02
/* disagent -t also checks what the agent only warns about, as it may
 * change after a start: each fileMoveToDir exists, is a directory this
 * user may write, on the file system of its pattern's directory. */
#define CONF_FS_CHECKS		0x04
/* The start: the directories of checkpointFile and deadLetterFile are made
 * when missing (statedir.h); -t (CONF_FS_CHECKS) checks that they could
 * be.  Either fails, naming the key's line, when they cannot be written. */
#define CONF_STATE_DIRS		0x08
/* The start, -t and a reload: a WARN naming the key's FILE:LINE for
 * sslVerify = false and for an http:// endpoint (records in clear text). */
#define CONF_TLS_WARNS		0x10
int	conf_load_opts(const char *path, unsigned opts, struct conf **out,
	    char *err, size_t errlen) WARN_UNUSED;
/*
 * -t, httpListen in use: whether the running agent of this configuration
 * (c's checkpointFile) is what holds it, so that the check before a
 * reload passes.  Set by main.c, where the state layer is in reach; NULL:
 * never.
 */
extern bool	(*conf_agent_running)(const struct conf *c);
/* conf_load_opts with CONF_CHECK_ONLY | CONF_FS_CHECKS | CONF_TLS_WARNS:
 * disagent -t. */
int	conf_load_test(const char *path, struct conf **out, char *err,
	    size_t errlen) WARN_UNUSED;
void	conf_free(struct conf *);

/* The drop-in directory of the configuration at path: new. */
char	*conf_dropin_dir(const char *path);

/*
 * Whether key is a key of section ("agent", or "flow" / "flow:NAME" for a
 * flow section), spelt exactly (key names are case-sensitive).
 */
bool	conf_key_known(const char *section, const char *key);

/*
 * Whether value is acceptable for key in section, by the same rules as
 * conf_load (type, bounds, allowed words, checks).  Returns 0; -ENOENT for
 * an unknown key; -EINVAL for a bad value.  On failure a reason is
 * written into why ("key = value is ..."; a secret value is not shown).
 */
int	conf_key_check(const char *section, const char *key,
	    const char *value, char *why, size_t len) WARN_UNUSED;

/*
 * The longest line "key = value" may take in section: 199 characters
 * (inih's limit), 4095 for the keys whose values are long (patterns, JSON:
 * dataProcessingOptions' LOGTOJSON.matchPattern and others), and
 * CONF_LONG_LINE for the secret and decryptable keys of [agent] (their
 * values never pass through inih).
 */
#define CONF_LONG_LINE	8191
size_t	conf_line_max(const char *section, const char *key);

/*
 * What a reload compares, key by key from the key table (conf_diff.c).
 * conf_flow_diff: NULL when flows a and b have the same name and every
 * [flow] key the same value, else the name of the first key that differs
 * (borrowed, static).  conf_agent_diff: which kinds of [agent] keys differ
 * between a and b, CONF_DIFF_* or'ed (0: none); *first (when first is not
 * NULL) names the first key of the costliest kind, or NULL.
 */
#define CONF_DIFF_AGENT		0x01	/* timers, logging, memory: the
					   agent's own */
#define CONF_DIFF_CLIENT	0x02	/* endpoint, keys, proxy, CA, TLS,
					   timeouts: a new HTTP client */
#define CONF_DIFF_FLOWS		0x04	/* keys every flow reads (body
					   format, retries, dead letters) */
const char *conf_flow_diff(const struct conf_flow *a,
	    const struct conf_flow *b);
bool	conf_flow_same(const struct conf_flow *a, const struct conf_flow *b);
unsigned conf_agent_diff(const struct conf *a, const struct conf *b,
	    const char **first);
bool	conf_agent_same(const struct conf *a, const struct conf *b);
/* The enabled flow of c called name (borrowed from c), or NULL. */
const struct conf_flow *conf_flow_named(const struct conf *c,
	    const char *name);

/* recordDelimiter as written ("x", "\\n", ...) -> its byte, or -1. */
/*
 * The framing options of flow fc (recordDelimiter, isRemainRecordDelimiter,
 * ...) into *out; its strings are borrowed from fc.  The agent's flows and
 * `disagent verify` frame files with exactly these.
 */
void	conf_framer_opts(const struct conf_flow *fc, struct framer_opts *out);
/*
 * The processing chain's options of flow fc in configuration c (chain.h)
 * into *out: its keys, the record codec and the rate limits; no
 * dead-letter file, counters or callbacks (the flow adds its own).  The
 * flow compiles exactly these, and the check of the file (conf_load) too.
 * Strings are borrowed from c and fc.
 */
struct chain_opts;
void	conf_chain_opts(const struct conf *c, const struct conf_flow *fc,
	    struct chain_opts *out);
/*
 * Whether a scan of fc's flow would pick the regular file at path
 * (absolute): the pattern (with directoryRecursionEnabled), the names
 * skipped and excludePattern, as a scan (files/watcher.c) applies them.
 */
bool	conf_flow_matches(const struct conf_flow *fc, const char *path);
/*
 * Whether flows a and b would send the same file's lines to the same
 * stream twice: both enabled, reading files, to the same stream, neither
 * with a line filter (two flows that pick different lines of a file are a
 * split, not a duplicate).
 */
bool	conf_flows_may_overlap(const struct conf_flow *a,
	    const struct conf_flow *b);
/*
 * The flow of c before fc (in c's order) that may overlap fc
 * (conf_flows_may_overlap) and would pick path, or NULL: a file matched
 * by two such flows is shipped by the first only.  Borrowed from c.
 */
const struct conf_flow *conf_flow_shipped_before(const struct conf *c,
	    const struct conf_flow *fc, const char *path);

/* deadLetterFile, or deadletter.jsonl beside checkpointFile: new. */
char	*conf_deadletter_path(const struct conf *);
/* spoolDirectory, or spool beside checkpointFile: new. */
char	*conf_spool_dir(const struct conf *);
int	conf_delimiter(const char *);

/*
 * The commented sample agent.ini, generated from the key table: every key
 * with its help; required keys set to an example value, optional ones
 * commented out at their default.  It loads cleanly with conf_load.
 * etc/agent.ini is exactly this output (a unit test compares them).
 */
void	conf_print_sample(FILE *);

/*
 * The keys for agent.ini(5), from the same table: ".SS [agent]" and
 * ".SS [flow:NAME]", each key a ".TP" entry with its help, bounds or allowed
 * words, environment override and default.  Only the entries: the caller
 * writes .TH, NAME and the other sections around them.
 */
void	conf_print_man(FILE *);

#endif
