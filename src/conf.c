/*
 * agent.ini -> struct conf.  Everything about a key lives in one row of the
 * declarative table keys[]: its section, name, type, bounds or allowed words,
 * default, where it is stored, whether it is required or secret, and its help
 * text.  The table drives parsing, defaults, validation, the commented sample
 * file (conf_print_sample) and the man page entries (conf_print_man).
 *
 * inih does the tokenising, fed by our own line reader because Debian's
 * libinih has a 200-byte line buffer (longer lines would be split and
 * misparsed), passes no line numbers to the handler and does not report
 * section headers.  So the reader counts lines, rejects over-long ones,
 * tracks [sections] itself and strips leading blanks (which also turns off
 * inih's multi-line continuation: an indented key stays a key).  The first
 * error by line number wins and reading stops there.  Errors name the file
 * and line; the value of a secret key is never part of a message.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <iconv.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <ini.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "cleanconf.h"
#include "conf.h"
#include "cred.h"
#include "log.h"
#include "logparse.h"
#include "proxy.h"
#include "util.h"

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
	const char	*env;		/* environment variable that overrides */
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

_Static_assert(sizeof(enum conf_position) == sizeof(int),
    "initialPosition is stored through an int");

static const char *const level_words[] = {
	"ERROR", "WARN", "INFO", "DEBUG", NULL
};
static const char *const stream_type_words[] = { "COMMON", "ADVANCED", NULL };
static const char *const watch_words[] = { "INOTIFY", "POLL", NULL };
static const char *const compress_words[] = { "lz4", "zstd", NULL };
static const char *const serialize_words[] = { "json", "protobuf", NULL };
static const char *const source_words[] = { "static", "ecs-metadata", NULL };
static const char *const proxy_words[] = { "http", "https", NULL };
static const char *const delete_words[] = { "never", "immediate", NULL };
/* In the order of enum conf_position. */
static const char *const position_words[] = {
	"START_OF_FILE", "END_OF_FILE", NULL
};

static const char	*check_region(const char *);
static const char	*check_id(const char *);
static const char	*check_stream(const char *);
static const char	*check_url(const char *);
static const char	*check_credential(const char *);
static const char	*check_abs_path(const char *);
static const char	*check_delimiter(const char *);
static const char	*check_regex(const char *);
static const char	*check_encoding(const char *);
static const char	*check_ca_file(const char *);
static const char	*check_token(const char *);
static const char	*check_non_proxy(const char *);

#define AOFF(f)	offsetof(struct conf, f)
#define FOFF(f)	offsetof(struct conf_flow, f)
#define COFF(f)	offsetof(struct conf_flow, conv.f)

static const struct key keys[] = {
	{ KS_AGENT, "region", KT_STRING, .off = AOFF(region),
	  .flags = KF_REQUIRED | KF_NONEMPTY, .example = "cn-north-4",
	  .check = check_region,
	  .help = "Huawei Cloud region of the DIS service, e.g. cn-north-4. "
	  "It names the endpoint host and is part of every request "
	  "signature." },
	{ KS_AGENT, "projectId", KT_STRING, .off = AOFF(project_id),
	  .flags = KF_REQUIRED | KF_NONEMPTY,
	  .example = "0123456789abcdef0123456789abcdef", .check = check_id,
	  .help = "Project ID of the account in that region, as shown under "
	  "My Credentials in the console." },
	{ KS_AGENT, "endpoint", KT_STRING, .off = AOFF(endpoint), .def = "",
	  .check = check_url,
	  .help = "URL of the DIS service. Empty means "
	  "https://dis.REGION.myhuaweicloud.com." },
	{ KS_AGENT, "ak", KT_STRING, .off = AOFF(ak),
	  .flags = KF_CRED | KF_DIR | KF_NONEMPTY, .env = "DIS_AK",
	  .example = "YOUR_ACCESS_KEY_ID", .check = check_credential,
	  .help = "Access key ID used to sign requests; may be encrypted "
	  "(see encrypt.key). Required unless credentialSource = "
	  "ecs-metadata; when it is not set here, the systemd credential ak "
	  "($CREDENTIALS_DIRECTORY/ak) is used." },
	{ KS_AGENT, "sk", KT_STRING, .off = AOFF(sk),
	  .flags = KF_CRED | KF_DIR | KF_NONEMPTY | KF_SECRET, .env = "DIS_SK",
	  .example = "YOUR_SECRET_ACCESS_KEY", .check = check_credential,
	  .help = "Secret access key used to sign requests; may be encrypted "
	  "(see encrypt.key). It is never logged; keep this file readable by "
	  "the agent only, or use the environment variable or the systemd "
	  "credential sk. Required unless credentialSource = "
	  "ecs-metadata." },
	{ KS_AGENT, "checkpointFile", KT_STRING, .off = AOFF(checkpoint_file),
	  .def = "/var/lib/disagent/state.json", .flags = KF_NONEMPTY,
	  .help = "File that records how far each log file has been "
	  "delivered, so a restart resumes where it stopped." },
	{ KS_AGENT, "caFile", KT_STRING, .off = AOFF(ca_file), .def = "",
	  .check = check_ca_file,
	  .help = "CA bundle (PEM) used to verify the endpoint's "
	  "certificate. Empty means the system's trusted CAs." },
	{ KS_AGENT, "sslVerify", KT_BOOL, .off = AOFF(ssl_verify),
	  .def = "true",
	  .help = "Verify the endpoint's TLS certificate and host name. "
	  "Turn it off only for testing." },
	{ KS_AGENT, "logLevel", KT_WORD, level_words, .off = AOFF(log_level),
	  .def = "INFO",
	  .help = "Least severe message that is logged." },
	{ KS_AGENT, "connectionTimeOutSeconds", KT_INT, .min = 1, .max = 600,
	  .off = AOFF(connect_timeout_s), .def = "30",
	  .help = "Time allowed to connect to the endpoint, in seconds." },
	{ KS_AGENT, "socketTimeOutSeconds", KT_INT, .min = 1, .max = 3600,
	  .off = AOFF(socket_timeout_s), .def = "60",
	  .help = "Time allowed for a whole request, in seconds; a request "
	  "that takes longer fails and is retried." },
	{ KS_AGENT, "log.statusReportingPeriodSeconds", KT_INT, .min = 1,
	  .max = 86400, .off = AOFF(status_period_s), .def = "30",
	  .help = "How often a progress line (lines read, records sent, "
	  "failures) is logged, in seconds." },
	{ KS_AGENT, "checkpointIntervalMillis", KT_INT, .min = 10,
	  .max = 600000, .off = AOFF(checkpoint_interval_ms), .def = "100",
	  .help = "How soon after an acknowledgement moved an offset the "
	  "offsets are saved to checkpointFile, in milliseconds; the "
	  "acknowledgements of that time are saved together (and the wait "
	  "grows with a state file that takes long to write). Nothing is "
	  "written while nothing is delivered." },
	{ KS_AGENT, "shutdownTimeoutMillis", KT_INT, .min = 0, .max = 600000,
	  .off = AOFF(shutdown_timeout_ms), .def = "10000",
	  .help = "How long a stopping agent keeps sending buffered records, "
	  "in milliseconds. Records not delivered by then are sent again "
	  "after the next start." },
	{ KS_AGENT, "checkpointTimeToLiveDays", KT_INT, .min = 0,
	  .max = 3650, .off = AOFF(checkpoint_ttl_days), .def = "7",
	  .help = "Days after which the saved offset of a file that is no "
	  "longer seen is forgotten. 0 keeps offsets forever." },
	{ KS_AGENT, "body.compress.enabled", KT_BOOL, .off = AOFF(compress),
	  .def = "false",
	  .help = "Compress each PutRecords body (as the DIS SDK does), which "
	  "cuts the bytes sent for text logs several times over." },
	{ KS_AGENT, "body.compress.type", KT_WORD, compress_words,
	  .off = AOFF(compress_type), .def = "lz4",
	  .help = "lz4 (fast) or zstd (smaller)." },
	{ KS_AGENT, "body.serialize.type", KT_WORD, serialize_words,
	  .off = AOFF(serialize_type), .def = "json",
	  .help = "Encoding of PutRecords bodies: json, or protobuf (as the "
	  "DIS SDK offers), which carries the records' bytes without base64: "
	  "smaller bodies, less CPU. Compression applies to either." },
	{ KS_AGENT, "records.retriable.error.code", KT_STRING,
	  .off = AOFF(retriable_codes), .def = "DIS.4303,DIS.5",
	  .flags = KF_NONEMPTY,
	  .help = "Per-record error codes that are retried, as a comma list "
	  "of prefixes (DIS.5 matches DIS.5000 ...). A record failing with "
	  "any other code goes to deadLetterFile." },
	{ KS_AGENT, "deadLetterFile", KT_STRING, .off = AOFF(dead_letter_file),
	  .def = "",
	  .help = "File that receives, as JSON lines, the records DIS "
	  "rejected as invalid (flow, file, offset, code, message, data). "
	  "Empty means deadletter.jsonl beside checkpointFile." },
	{ KS_AGENT, "pausedRetrySeconds", KT_INT, .min = 1, .max = 3600,
	  .off = AOFF(paused_retry_s), .def = "60",
	  .help = "While delivery is paused by an error only the operator "
	  "can fix (credentials, permissions, missing stream), how often it "
	  "is tried again, in seconds." },
	{ KS_AGENT, "maxMemoryBytes", KT_INT, .min = 1048576,
	  .max = 1073741824, .off = AOFF(max_memory_bytes), .def = "4194304",
	  .help = "Most bytes of records held in memory (batches being "
	  "filled, waiting and in flight) over all flows. When it is "
	  "reached, reading stops until DIS acknowledges records: the log "
	  "files are the buffer." },
	{ KS_AGENT, "metricsFile", KT_STRING, .off = AOFF(metrics_file),
	  .def = "", .check = check_abs_path,
	  .help = "File the agent rewrites with its metrics in the Prometheus "
	  "text format, for node_exporter's textfile collector: put it in "
	  "the collector's directory with a name ending in .prom. "
	  "disagent status also reads the last errors from it. Empty means "
	  "no metrics file." },
	{ KS_AGENT, "metricsIntervalMillis", KT_INT, .min = 1000,
	  .max = 600000, .off = AOFF(metrics_interval_ms), .def = "5000",
	  .help = "How often metricsFile is rewritten, in milliseconds." },
	/* Credentials and proxies (cred.c, ecsmeta.c, proxy.c). */
	{ KS_AGENT, "security.token", KT_STRING, .off = AOFF(security_token),
	  .def = "", .flags = KF_SECRET | KF_DIR, .env = "DIS_SECURITY_TOKEN",
	  .check = check_token,
	  .help = "Security token of temporary keys: with the temporary ak "
	  "and sk it is sent as X-Security-Token and signed. Empty: ak and "
	  "sk are permanent keys. When it is not set here, the systemd "
	  "credential security.token is used. Never logged." },
	{ KS_AGENT, "credentialSource", KT_WORD, source_words,
	  .off = AOFF(credential_source), .def = "static",
	  .help = "Where the keys come from. static: ak, sk and "
	  "security.token from this file, the environment or systemd "
	  "credentials. ecs-metadata: temporary keys of the ECS server's "
	  "agency, from the metadata service, renewed before they expire "
	  "and never written anywhere: no key on the server." },
	{ KS_AGENT, "ecsMetadataEndpoint", KT_STRING, .off = AOFF(ecs_endpoint),
	  .def = "http://169.254.169.254", .flags = KF_NONEMPTY,
	  .check = check_url,
	  .help = "URL of the ECS metadata service (credentialSource = "
	  "ecs-metadata). It is reached directly, never through a proxy." },
	{ KS_AGENT, "encrypt.key", KT_STRING, .off = AOFF(encrypt_key),
	  .def = "", .flags = KF_SECRET | KF_DIR, .env = "DIS_ENCRYPT_KEY",
	  .help = "Key of encrypted values (made by disagent encrypt, or by "
	  "the DIS Agent): values of ak, sk and PROXY_PASSWORD of 168 "
	  "characters or more are decrypted with it at start. Keep it out "
	  "of this file: the environment variable or the systemd credential "
	  "encrypt.key. Empty: the DIS Agent's built-in key, which is "
	  "public." },
	{ KS_AGENT, "PROXY_HOST", KT_STRING, .off = AOFF(proxy_host),
	  .def = "", .check = proxy_check_host,
	  .help = "Host name or address of the proxy that requests to DIS go "
	  "through. Empty: no proxy, unless the https_proxy environment "
	  "variable names one (no_proxy applies then)." },
	{ KS_AGENT, "PROXY_PORT", KT_INT, .min = 1, .max = 65535,
	  .off = AOFF(proxy_port), .def = "80",
	  .help = "Port of the proxy." },
	{ KS_AGENT, "PROXY_PROTOCOL", KT_WORD, proxy_words,
	  .off = AOFF(proxy_protocol), .def = "http",
	  .help = "How the proxy is reached: http, or https for a TLS proxy. "
	  "Requests to an https endpoint are encrypted end to end either "
	  "way; https also protects PROXY_PASSWORD." },
	{ KS_AGENT, "PROXY_USERNAME", KT_STRING, .off = AOFF(proxy_username),
	  .def = "",
	  .help = "User name for the proxy (Basic, Digest or NTLM, as the "
	  "proxy asks). Empty: no proxy authentication." },
	{ KS_AGENT, "PROXY_PASSWORD", KT_STRING, .off = AOFF(proxy_password),
	  .def = "", .flags = KF_SECRET,
	  .help = "Password for the proxy; may be encrypted (see "
	  "encrypt.key). Never logged." },
	{ KS_AGENT, "NON_PROXY_HOSTS", KT_STRING,
	  .off = AOFF(non_proxy_hosts), .def = "", .check = check_non_proxy,
	  .help = "Hosts reached without the proxy, separated by | (or "
	  "commas): host names (which also cover the hosts under them), "
	  "*.domain, IP addresses, IPv4 prefixes such as 10.1.* and * for "
	  "all." },

	{ KS_FLOW, "enable", KT_BOOL, .off = FOFF(enable), .def = "true",
	  .help = "Set to false to keep the section but not read its files." },
	{ KS_FLOW, "DISStream", KT_STRING, .off = FOFF(stream),
	  .flags = KF_NONEMPTY, .example = "my-stream", .check = check_stream,
	  .help = "Name of the DIS stream that receives the records. "
	  "Required unless streamId is set." },
	{ KS_FLOW, "streamId", KT_STRING, .off = FOFF(stream_id), .def = "",
	  .check = check_id,
	  .help = "ID of the stream, sent instead of its name; needed for a "
	  "stream shared by another account. Empty means use DISStream." },
	{ KS_FLOW, "streamType", KT_WORD, stream_type_words,
	  .off = FOFF(stream_type), .def = "COMMON",
	  .help = "Type of the stream, which sets the request limits. Used "
	  "with streamId; otherwise the type is read from the stream." },
	{ KS_FLOW, "filePattern", KT_STRING, .off = FOFF(file_pattern),
	  .flags = KF_REQUIRED | KF_NONEMPTY, .example = "/var/log/app/*.log",
	  .check = check_abs_path,
	  .help = "Absolute path of the files to read. Any component may "
	  "hold shell wildcards (* ? [...]), and ** matches any number of "
	  "directories: /var/log/*/app-*.log, /srv/**/logs/*.log." },
	{ KS_FLOW, "initialPosition", KT_ENUM, position_words,
	  .off = FOFF(initial_position), .def = "START_OF_FILE",
	  .help = "Where to start reading a file that has no checkpoint yet." },
	{ KS_FLOW, "maxBufferAgeMillis", KT_INT, .min = 100, .max = 900000,
	  .off = FOFF(max_buffer_age_ms), .def = "5000",
	  .help = "Longest time a record waits to be sent, in milliseconds." },
	{ KS_FLOW, "maxBufferSizeRecords", KT_INT, .min = 1, .max = 10000,
	  .off = FOFF(max_buffer_records), .def = "500",
	  .help = "Most records sent in one request." },
	{ KS_FLOW, "maxBufferSizeBytes", KT_INT, .min = 1, .max = 4194304,
	  .off = FOFF(max_buffer_bytes), .def = "4194304",
	  .help = "Most bytes of record data sent in one request." },
	{ KS_FLOW, "partitionKeyOption", KT_STRING,
	  .off = FOFF(partition_key_option), .def = "RANDOM_INT",
	  .flags = KF_NONEMPTY,
	  .help = "How each record's partition key is made: a comma-separated "
	  "list of RANDOM_INT, RANDOM_DOUBLE, FILE_NAME, DETERMINISTIC or "
	  "literal text." },
	{ KS_FLOW, "retryInitialBackoffMillis", KT_INT, .min = 1,
	  .max = 600000, .off = FOFF(retry_initial_backoff_ms), .def = "100",
	  .help = "First wait before a failed request is retried, in "
	  "milliseconds; later waits grow up to retryMaxBackoffMillis." },
	{ KS_FLOW, "retryMaxBackoffMillis", KT_INT, .min = 1, .max = 3600000,
	  .off = FOFF(retry_max_backoff_ms), .def = "10000",
	  .help = "Longest wait between retries, in milliseconds. It must "
	  "not be less than retryInitialBackoffMillis." },
	{ KS_FLOW, "maxInFlightRequests", KT_INT, .min = 1, .max = 64,
	  .off = FOFF(max_in_flight), .def = "4",
	  .help = "Most requests of this flow under way at once." },
	{ KS_FLOW, "rescanIntervalMillis", KT_INT, .min = 100,
	  .max = 3600000, .off = FOFF(rescan_interval_ms), .def = "10000",
	  .help = "How often the directories are listed again to find new, "
	  "renamed or removed files, in milliseconds." },
	{ KS_FLOW, "ordered", KT_BOOL, .off = FOFF(ordered), .def = "false",
	  .help = "Send one request at a time, so records reach the stream "
	  "in file order even when requests are retried." },
	{ KS_FLOW, "directoryRecursionEnabled", KT_BOOL,
	  .off = FOFF(recursive), .def = "false",
	  .help = "Also read matching files in sub-directories of the "
	  "pattern's directory, at any depth (as ** in filePattern does)." },
	{ KS_FLOW, "excludePattern", KT_STRING, .off = FOFF(exclude_pattern),
	  .def = "",
	  .help = "Comma-separated globs of file names (or full paths, when "
	  "they start with /) that are never read, even if they match." },
	{ KS_FLOW, "watchMode", KT_WORD, watch_words, .off = FOFF(watch_mode),
	  .def = "INOTIFY",
	  .help = "INOTIFY: directory events cut latency, a periodic rescan "
	  "guarantees correctness. POLL: only the rescan, for NFS and other "
	  "file systems where events miss remote writes." },
	{ KS_FLOW, "maxOpenFiles", KT_INT, .min = 8, .max = 1000000,
	  .off = FOFF(max_open_files), .def = "1024",
	  .help = "Most descriptors this flow keeps open. Idle files whose "
	  "bytes are all delivered are closed first and reopened when they "
	  "change; files with bytes not yet delivered stay open." },
	{ KS_FLOW, "ignoreNotUpdatedFileSeconds", KT_INT, .min = 0,
	  .max = 315360000, .off = FOFF(ignore_older_s), .def = "0",
	  .help = "A file not modified for this many seconds when it is "
	  "first seen is read from its end: only lines added later are sent "
	  "(0: every file is read from its beginning)." },
	{ KS_FLOW, "headerBytesLength", KT_INT, .min = 16, .max = 65536,
	  .off = FOFF(header_bytes), .def = "512",
	  .help = "Bytes at the start of a file whose checksum, with the "
	  "device and inode, identifies it across rotations and inode "
	  "reuse." },
	{ KS_FLOW, "recordDelimiter", KT_STRING, .off = FOFF(record_delimiter),
	  .def = "\\n", .check = check_delimiter,
	  .help = "Byte that ends a record: one character or \\n, \\r, "
	  "\\t, \\0." },
	{ KS_FLOW, "isRemainRecordDelimiter", KT_BOOL,
	  .off = FOFF(keep_delimiter), .def = "false",
	  .help = "Keep the delimiter at the end of each record's data." },
	{ KS_FLOW, "stripCarriageReturn", KT_BOOL, .off = FOFF(strip_cr),
	  .def = "false",
	  .help = "Drop a carriage return before the delimiter, so CRLF "
	  "files give the same records as LF files." },
	{ KS_FLOW, "skipEmptyLines", KT_BOOL, .off = FOFF(skip_empty),
	  .def = "false",
	  .help = "Do not send empty records (by default they are sent, as "
	  "the DIS Agent does)." },
	{ KS_FLOW, "isMissLastRecordDelimiter", KT_BOOL,
	  .off = FOFF(miss_last_delimiter), .def = "false",
	  .help = "Send a last line that has no delimiter once the file has "
	  "not grown for maxFileCheckingMillis." },
	{ KS_FLOW, "maxFileCheckingMillis", KT_INT, .min = 100,
	  .max = 3600000, .off = FOFF(max_file_checking_ms), .def = "500",
	  .help = "How long a last line without delimiter waits for more "
	  "bytes before isMissLastRecordDelimiter sends it, in "
	  "milliseconds. With isFileAppendable = false: how long a file's "
	  "size and mtime must stay the same before it is sent whole "
	  "(default 5000 there, as in the DIS Agent)." },
	{ KS_FLOW, "multiLineStartPattern", KT_STRING,
	  .off = FOFF(multiline_pattern), .def = "", .check = check_regex,
	  .help = "Regular expression (PCRE2, like Java's: \\d, \\s, ...) "
	  "matching the first line of a record; the following lines that do "
	  "not match belong to it. Empty: one line, one record." },
	{ KS_FLOW, "multiLineFlushMillis", KT_INT, .min = 100,
	  .max = 3600000, .off = FOFF(multiline_flush_ms), .def = "3000",
	  .help = "How long the last multi-line record waits for more lines "
	  "once the file stops growing, in milliseconds." },
	{ KS_FLOW, "skipHeaderLines", KT_INT, .min = 0, .max = 1000000,
	  .off = FOFF(skip_header_lines), .def = "0",
	  .help = "Lines skipped at the start of a file read from its "
	  "beginning (CSV headers, ...)." },
	{ KS_FLOW, "fileEncoding", KT_STRING, .off = FOFF(file_encoding),
	  .def = "UTF-8", .flags = KF_NONEMPTY, .check = check_encoding,
	  .help = "Encoding of the files. Records are sent as UTF-8; other "
	  "ASCII-compatible encodings (GBK, ISO-8859-1, ...) are converted." },
	/* Whole files and cleanup (cleanup.h, wholefile.h); cleanconf_check
	 * checks them together. */
	{ KS_FLOW, "isFileAppendable", KT_BOOL, .off = FOFF(file_appendable),
	  .def = "true",
	  .help = "true: the files are logs that grow, and are tailed. "
	  "false: each file is written once; it is sent whole once its size "
	  "and mtime stayed the same for maxFileCheckingMillis (its last "
	  "record even without a delimiter), then cleaned up by "
	  "deletePolicy, fileMoveToDir or fileSuffix once the state file "
	  "says it is delivered." },
	{ KS_FLOW, "deletePolicy", KT_WORD, delete_words,
	  .off = FOFF(delete_policy), .def = "never",
	  .help = "isFileAppendable = false: immediate deletes each file "
	  "once it is delivered; never keeps it (then fileMoveToDir or "
	  "fileSuffix apply)." },
	{ KS_FLOW, "fileMoveToDir", KT_STRING, .off = FOFF(move_dir),
	  .def = "", .check = check_abs_path,
	  .help = "isFileAppendable = false: the directory delivered files "
	  "are moved into (by rename: it must exist, be writable and be on "
	  "the file system of the pattern's directory). Empty: they are "
	  "renamed with fileSuffix instead." },
	{ KS_FLOW, "fileSuffix", KT_STRING, .off = FOFF(file_suffix),
	  .def = ".COMPLETED",
	  .help = "Files whose names end in this suffix are skipped unless "
	  "filePattern names the suffix itself. isFileAppendable = false: "
	  "delivered files are renamed with it appended, unless deletePolicy "
	  "or fileMoveToDir says otherwise; empty: they stay as they are "
	  "(and are remembered as delivered)." },
	{ KS_FLOW, "isIgnoreEmptyData", KT_BOOL, .off = FOFF(ignore_empty),
	  .def = "true",
	  .help = "isFileAppendable = false: leave empty files alone (not "
	  "sent, not cleaned up) until they get content. false: an empty "
	  "file is delivered (no records) and cleaned up." },
	{ KS_FLOW, "deleteAfterDeliverySeconds", KT_INT, .min = 0,
	  .max = 315360000, .off = FOFF(delete_after_s), .def = "0",
	  .help = "Tailed files only: remove a file rotated away from the "
	  "pattern (renamed to a name it does not match) this many seconds "
	  "after its last byte was delivered, if it did not change since. "
	  "A file the pattern matches is never removed. 0: never." },
	/* dataProcessingOptions: the DIS Agent's record processing
	 * (convert.h).  One block; convert_new checks them together. */
	{ KS_FLOW, "dataProcessingOptions", KT_STRING, .off = COFF(options),
	  .def = "", .check = convert_check_options,
	  .help = "Converters each record goes through before it is sent, in "
	  "this order, as in the DIS Agent: a comma list of CSVTOJSON, "
	  "LOGTOJSON, ADDMETADATA, ADDBRACKETS and SINGLELINE (any case). "
	  "Each converter's keys are OPTION.param below. The output is the "
	  "DIS Agent's, byte for byte (Jackson's JSON). Empty or SINGLELINE: "
	  "records are sent as read." },
	{ KS_FLOW, "CSVTOJSON.customFieldNames", KT_STRING,
	  .off = COFF(csv_fields), .def = "", .flags = KF_LONG,
	  .check = convert_check_names,
	  .help = "CSVTOJSON: the names of the columns, a comma list or a "
	  "JSON array of strings; required. A missing column is null, extra "
	  "columns are dropped." },
	{ KS_FLOW, "CSVTOJSON.delimiter", KT_STRING,
	  .off = COFF(csv_delimiter), .def = ",",
	  .check = convert_check_delimiter,
	  .help = "CSVTOJSON: every character of it separates columns (no "
	  "quoting). Write \\t for a tab, \\s for a blank, \\; for a "
	  "semicolon, \\\\ for a backslash." },
	{ KS_FLOW, "CSVTOJSON.jsonFormat", KT_WORD, convert_json_words,
	  .off = COFF(csv_json), .def = "COMPACT",
	  .help = "CSVTOJSON: COMPACT JSON or Jackson's PRETTYPRINT (two-space "
	  "indent, one member a line)." },
	{ KS_FLOW, "LOGTOJSON.logFormat", KT_WORD, logparse_format_names,
	  .off = COFF(log_format),
	  .help = "LOGTOJSON: the log format, required: COMMONAPACHELOG "
	  "(fields host ident authuser datetime request response bytes), "
	  "COMBINEDAPACHELOG (and referer agent), APACHEERRORLOG (timestamp "
	  "module severity processid threadid client message), SYSLOG and "
	  "RFC3339SYSLOG (timestamp hostname program processid message). "
	  "In the Apache formats - is null." },
	{ KS_FLOW, "LOGTOJSON.matchPattern", KT_STRING,
	  .off = COFF(log_pattern), .def = "", .flags = KF_LONG,
	  .check = convert_check_pattern,
	  .help = "LOGTOJSON: a Java regular expression that must match the "
	  "whole line, instead of the format's; its capturing groups are the "
	  "fields, named by LOGTOJSON.customFieldNames (required with it). "
	  "Translated to PCRE2 with Java's meaning of . $ \\b; its line may "
	  "be up to 4095 characters." },
	{ KS_FLOW, "LOGTOJSON.customFieldNames", KT_STRING,
	  .off = COFF(log_fields), .def = "", .flags = KF_LONG,
	  .check = convert_check_names,
	  .help = "LOGTOJSON: field names, a comma list or a JSON array of "
	  "strings: as many as the format has fields, or as "
	  "LOGTOJSON.matchPattern has groups." },
	{ KS_FLOW, "LOGTOJSON.jsonFormat", KT_WORD, convert_json_words,
	  .off = COFF(log_json), .def = "COMPACT",
	  .help = "LOGTOJSON: COMPACT or PRETTYPRINT JSON." },
	{ KS_FLOW, "LOGTOJSON.unmatched", KT_WORD, convert_unmatched_words,
	  .off = COFF(log_unmatched), .def = "deadletter",
	  .help = "LOGTOJSON: what happens to a line that does not match: "
	  "deadletter writes it to the dead-letter file, raw sends it "
	  "unconverted, drop drops it (what the DIS Agent does, silently). "
	  "Each is counted in disagent_records_unmatched_total and logged "
	  "once a minute." },
	{ KS_FLOW, "ADDMETADATA.metadata", KT_STRING,
	  .off = COFF(meta_metadata), .def = "", .flags = KF_LONG,
	  .check = convert_check_metadata,
	  .help = "ADDMETADATA: a JSON value (an object, usually) sent as "
	  "{\"metadata\":VALUE,\"data\":\"LINE\"}; empty: null. Its line "
	  "may be up to 4095 characters." },
	{ KS_FLOW, "ADDMETADATA.fields", KT_STRING, .off = COFF(meta_fields),
	  .def = "", .check = convert_check_meta_fields,
	  .help = "ADDMETADATA: values added to the metadata object after its "
	  "own keys, a comma list of hostname, path, filename, offset (of "
	  "the line in its file) and timestamp (when it was read, RFC 3339 "
	  "UTC with milliseconds). Not in the DIS Agent." },
	{ KS_FLOW, "ADDMETADATA.jsonFormat", KT_WORD, convert_json_words,
	  .off = COFF(meta_json), .def = "COMPACT",
	  .help = "ADDMETADATA: COMPACT or PRETTYPRINT JSON." },
};

#define NKEYS	ARRAY_SIZE(keys)

/* Parse state of one section: its header line and where each key was set. */
struct sect {
	int	 line;
	int	 keyline[NKEYS];	/* 0: not set in the file */
};

#define CUR_NONE	(-2)	/* no section header yet */
#define CUR_AGENT	(-1)	/* >= 0: index of the flow */

struct parse {
	const char	*path;
	FILE		*fp;
	struct conf	*conf;
	struct sect	 agent;
	struct sect	*flows;		/* parallel to conf->flows */
	int		 cur;		/* CUR_* or a flow index */
	int		 lineno;
	int		 syntax_line;	/* first line the reader found odd */
	const char	*syntax_why;
	bool		 failed;
	bool		 fs_checks;	/* conf_load_test */
	int		 errline;	/* line of the error; 0: none */
	char		*err;
	size_t		 errlen;
	unsigned	 opts;		/* CONF_* */
	int		 stash_line;	/* the line whose value is in stash */
	struct buf	 stash;		/* a value inih does not see */
	char		 line[CONF_LONG_LINE + 2];
};

static bool	stashed(const struct key *);
static void	stash_wipe(struct parse *);

static char **
str_at(void *base, const struct key *k)
{
	return (char **)(void *)((char *)base + k->off);
}

static long long *
int_at(void *base, const struct key *k)
{
	return (long long *)(void *)((char *)base + k->off);
}

static bool *
bool_at(void *base, const struct key *k)
{
	return (bool *)(void *)((char *)base + k->off);
}

static int *
enum_at(void *base, const struct key *k)
{
	return (int *)(void *)((char *)base + k->off);
}

/* Record the first error; later ones are dropped.  Always returns -1. */
static int PRINTFLIKE(3, 4)
fail(struct parse *p, int line, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	if (p->failed)
		return -1;
	p->failed = true;
	p->errline = line;
	if (p->errlen == 0)
		return -1;
	if (line > 0)
		n = snprintf(p->err, p->errlen, "%s:%d: ", p->path, line);
	else
		n = snprintf(p->err, p->errlen, "%s: ", p->path);
	if (n < 0 || (size_t)n >= p->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

#define ALNUM	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

/* Whether s is 1..max bytes, all from set (ASCII, whatever the locale). */
static bool
charset_ok(const char *s, const char *set, size_t max)
{
	size_t	 n;

	n = strspn(s, set);
	return n > 0 && n <= max && s[n] == '\0';
}

static const char *
check_region(const char *s)
{
	if (!charset_ok(s, "abcdefghijklmnopqrstuvwxyz0123456789-", 64))
		return "is not a valid region (1-64 lower-case letters, digits "
		    "or '-')";
	return NULL;
}

static const char *
check_id(const char *s)
{
	if (!charset_ok(s, ALNUM "_-", 64))
		return "is not a valid ID (1-64 letters, digits, '_' or '-')";
	return NULL;
}

static const char *
check_stream(const char *s)
{
	if (!charset_ok(s, ALNUM "_-", 64))
		return "is not a valid stream name (1-64 letters, digits, "
		    "'_' or '-')";
	return NULL;
}

static const char *
check_url(const char *s)
{
	const char	*host;

	if (strncmp(s, "https://", 8) == 0)
		host = s + 8;
	else if (strncmp(s, "http://", 7) == 0)
		host = s + 7;
	else
		host = NULL;
	if (host == NULL || *host == '\0' || *host == '/')
		return "is not an http:// or https:// URL";
	return NULL;
}

/* Printable ASCII without blanks: keys and tokens pasted with a blank or
 * a control character inside fail to sign. */
static bool
graph_only(const char *s)
{
	for (; *s != '\0'; s++)
		if (!isgraph((unsigned char)*s))
			return false;
	return true;
}

/*
 * A value of 168 characters or more is encrypted (decrypted once the file
 * is read, and then checked again).
 */
static const char *
check_credential(const char *s)
{
	if (strlen(s) >= CRED_CIPHER_MIN && !cred_looks_encrypted(s))
		return "is 168 characters or more, so it must be a DIS Agent "
		    "encrypted value, but it is not hexadecimal";
	if (strlen(s) >= CRED_CIPHER_MIN || graph_only(s))
		return NULL;
	return "is not a valid key (printable ASCII without blanks)";
}

static const char *
check_token(const char *s)
{
	return graph_only(s) ? NULL : "is not a valid token (printable ASCII "
	    "without blanks)";
}

static const char *
check_non_proxy(const char *s)
{
	static char	 why[160];
	struct buf	 b;
	int		 rc;

	buf_init(&b);
	rc = proxy_noproxy(s, &b, why, sizeof(why));
	buf_cleanup(&b);
	return rc == 0 ? NULL : why;
}

static const char *
check_abs_path(const char *s)
{
	size_t	 n = strlen(s);

	if (s[0] != '/')
		return "is not an absolute path";
	if (strstr(s, "//") != NULL || s[n - 1] == '/')
		return "must name files: no empty directory name, no '/' at "
		    "the end";
	return NULL;
}

/* recordDelimiter: one byte, or \n \r \t \0 \\ (the DIS Agent uses the
 * first byte only, so a longer value is a mistake worth reporting). */
static const char *
check_delimiter(const char *s)
{
	if (conf_delimiter(s) < 0)
		return "is not one character (or \\n, \\r, \\t, \\0, "
		    "\\\\)";
	return NULL;
}

static const char *
check_regex(const char *s)
{
	static char	 why[200];
	pcre2_code	*re;
	int		 ec;
	PCRE2_SIZE	 off;
	PCRE2_UCHAR	 msg[100];

	if (s[0] == '\0')
		return NULL;
	re = pcre2_compile((PCRE2_SPTR)s, PCRE2_ZERO_TERMINATED, 0, &ec, &off,
	    NULL);
	if (re != NULL) {
		pcre2_code_free(re);
		return NULL;
	}
	pcre2_get_error_message(ec, msg, sizeof(msg));
	snprintf(why, sizeof(why), "is not a valid regular expression (%s "
	    "at offset %zu)", (const char *)msg, (size_t)off);
	return why;
}

/*
 * caFile: a readable file holding at least one PEM certificate (the agent
 * would otherwise retry for ever with "error setting certificate file").
 */
static const char *
check_ca_file(const char *s)
{
	static char	 why[200];
	char		 buf[64 * 1024];
	FILE		*fp;
	size_t		 n;
	bool		 pem;

	fp = fopen(s, "r");
	if (fp == NULL) {
		snprintf(why, sizeof(why), "cannot be read: %s",
		    strerror(errno));
		return why;
	}
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	pem = strstr(buf, "-----BEGIN CERTIFICATE-----") != NULL;
	return pem ? NULL : "holds no PEM certificate (-----BEGIN "
	    "CERTIFICATE-----) in its first 64 KiB";
}

/* fileEncoding: something iconv converts to UTF-8 in which '\n' is the
 * single byte 0x0a (lines are split before conversion). */
static const char *
check_encoding(const char *s)
{
	iconv_t		 cd;
	char		 in[] = "\n", out[8], *ip = in, *op = out;
	size_t		 il = 1, ol = sizeof(out);

	cd = iconv_open(s, "UTF-8");
	if (cd == (iconv_t)-1)
		return "is not an encoding this system can convert";
	if (iconv(cd, &ip, &il, &op, &ol) == (size_t)-1 ||
	    sizeof(out) - ol != 1 || out[0] != '\n') {
		iconv_close(cd);
		return "is not an ASCII-compatible encoding (lines end in "
		    "a one-byte newline)";
	}
	iconv_close(cd);
	return NULL;
}

int
conf_delimiter(const char *s)
{
	if (s[0] != '\0' && s[1] == '\0')
		return (unsigned char)s[0];
	if (s[0] != '\\' || s[1] == '\0' || s[2] != '\0')
		return -1;
	switch (s[1]) {
	case 'n':
		return '\n';
	case 'r':
		return '\r';
	case 't':
		return '\t';
	case '0':
		return '\0';
	case '\\':
		return '\\';
	default:
		return -1;
	}
}

/* Copy s into out for a message: control and non-ASCII bytes become '?'. */
static const char *
sanitize(const char *s, char *out, size_t len)
{
	size_t	 i;

	for (i = 0; s[i] != '\0' && i + 1 < len; i++)
		out[i] = isprint((unsigned char)s[i]) ? s[i] : '?';
	out[i] = '\0';
	return out;
}

/*
 * Write "key = value reason" into why, quoting the value when it is empty or
 * has blanks and masking control bytes; for a secret key only
 * "key: the value reason".
 */
static int
bad_value(char *why, size_t len, const struct key *k, const char *text,
    const char *reason)
{
	char		 shown[LINE_BUF];
	const char	*q;

	if (k->flags & KF_SECRET) {
		snprintf(why, len, "%s: the value %s", k->name, reason);
		return -1;
	}
	q = text[0] == '\0' || strpbrk(text, " \t") != NULL ? "'" : "";
	snprintf(why, len, "%s = %s%s%s %s", k->name, q,
	    sanitize(text, shown, sizeof(shown)), q, reason);
	return -1;
}

/* Decimal integer, optional '-', nothing else; -ERANGE on overflow. */
static int
parse_ll(const char *s, long long *out)
{
	const char	*c;
	long long	 v;

	c = *s == '-' ? s + 1 : s;
	if (*c == '\0')
		return -EINVAL;
	for (; *c != '\0'; c++)
		if (!isdigit((unsigned char)*c))
			return -EINVAL;
	errno = 0;
	v = strtoll(s, NULL, 10);
	if (errno == ERANGE)
		return -ERANGE;
	*out = v;
	return 0;
}

static int
parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };
	size_t	 i;

	for (i = 0; i < ARRAY_SIZE(yes); i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

/* Index of s in words (any case), or -1. */
static int
word_index(const char *const *words, const char *s)
{
	int	 i;

	for (i = 0; words[i] != NULL; i++)
		if (strcasecmp(words[i], s) == 0)
			return i;
	return -1;
}

static void
words_join(const char *const *words, const char *sep, struct buf *b)
{
	int	 i;

	for (i = 0; words[i] != NULL; i++) {
		if (i > 0)
			buf_addstr(b, sep);
		buf_addstr(b, words[i]);
	}
}

static int
store_string(void *base, const struct key *k, const char *text, char *why,
    size_t len)
{
	const char	*reason;
	char		**slot;

	if ((k->flags & KF_NONEMPTY) && *text == '\0') {
		snprintf(why, len, "%s: must not be empty", k->name);
		return -1;
	}
	if (k->check != NULL && *text != '\0') {
		reason = k->check(text);
		if (reason != NULL)
			return bad_value(why, len, k, text, reason);
	}
	slot = str_at(base, k);
	cred_free(*slot);	/* it may have held a secret */
	*slot = xstrdup(text);
	return 0;
}

static int
store_int(void *base, const struct key *k, const char *text, char *why,
    size_t len)
{
	long long	 v;
	char		 reason[96];
	int		 rc;

	rc = parse_ll(text, &v);
	if (rc == -EINVAL)
		return bad_value(why, len, k, text, "is not an integer");
	if (rc == -ERANGE || v < k->min || v > k->max) {
		snprintf(reason, sizeof(reason), "is out of range (%lld..%lld)",
		    k->min, k->max);
		return bad_value(why, len, k, text, reason);
	}
	*int_at(base, k) = v;
	return 0;
}

static int
store_word(void *base, const struct key *k, const char *text, char *why,
    size_t len)
{
	struct buf	 b;
	char		**slot;
	int		 i;

	i = word_index(k->words, text);
	if (i < 0) {
		buf_init(&b);
		buf_addstr(&b, "is not one of ");
		words_join(k->words, ", ", &b);
		bad_value(why, len, k, text, b.data);
		buf_cleanup(&b);
		return -1;
	}
	if (k->type == KT_ENUM) {
		*enum_at(base, k) = i;
		return 0;
	}
	slot = str_at(base, k);
	free(*slot);
	*slot = xstrdup(k->words[i]);
	return 0;
}

/*
 * Parse text as the value of k and store it in base (a struct conf or a
 * struct conf_flow).  Returns 0, or -1 with the reason written into why.
 */
static int
key_store(void *base, const struct key *k, const char *text, char *why,
    size_t len)
{
	bool	 v;

	switch (k->type) {
	case KT_STRING:
		return store_string(base, k, text, why, len);
	case KT_INT:
		return store_int(base, k, text, why, len);
	case KT_BOOL:
		if (parse_bool(text, &v) != 0)
			return bad_value(why, len, k, text, "is not a boolean "
			    "(true, false, yes, no, on, off, 1, 0)");
		*bool_at(base, k) = v;
		return 0;
	case KT_ENUM:
	case KT_WORD:
		return store_word(base, k, text, why, len);
	}
	return -1;
}

/* Give every key of sect in base its default ("" for strings without). */
static void
apply_defaults(void *base, enum ksect sect)
{
	const struct key	*k;
	char			 why[256];

	for (k = keys; k < keys + NKEYS; k++) {
		if (k->sect != sect)
			continue;
		if (k->def == NULL) {
			*str_at(base, k) = xstrdup("");
			continue;
		}
		if (key_store(base, k, k->def, why, sizeof(why)) != 0)
			fatalx("conf: bad default in key table: %s", why);
	}
}

static void
free_fields(void *base, enum ksect sect)
{
	const struct key	*k;

	for (k = keys; k < keys + NKEYS; k++) {
		if (k->sect != sect ||
		    (k->type != KT_STRING && k->type != KT_WORD))
			continue;
		if (stashed(k))
			cred_free(*str_at(base, k));
		else
			free(*str_at(base, k));
	}
}

void
conf_free(struct conf *c)
{
	size_t	 i;

	if (c == NULL)
		return;
	for (i = 0; i < c->nflows; i++) {
		free(c->flows[i].name);
		free_fields(&c->flows[i], KS_FLOW);
	}
	free(c->flows);
	free_fields(c, KS_AGENT);
	free(c->path);
	free(c);
}

static const struct key *
key_find(enum ksect sect, const char *name, bool anycase)
{
	const struct key	*k;

	for (k = keys; k < keys + NKEYS; k++) {
		if (k->sect != sect)
			continue;
		if (anycase ? strcasecmp(k->name, name) == 0 :
		    strcmp(k->name, name) == 0)
			return k;
	}
	return NULL;
}

/* Whether a name read from the file is safe and useful to echo. */
static bool
showable(const char *name)
{
	return charset_ok(name, ALNUM "_.-", NAME_SHOW_MAX);
}

static struct sect *
cur_sect(struct parse *p)
{
	return p->cur == CUR_AGENT ? &p->agent : &p->flows[p->cur];
}

static void *
cur_base(struct parse *p)
{
	if (p->cur == CUR_AGENT)
		return p->conf;
	return &p->conf->flows[p->cur];
}

/* "[agent]" or "[flow:NAME]" for the current section. */
static const char *
cur_label(struct parse *p, char *buf, size_t len)
{
	if (p->cur == CUR_AGENT)
		return "[agent]";
	snprintf(buf, len, "[flow:%s]", p->conf->flows[p->cur].name);
	return buf;
}

/* Edit distance of a and b, ignoring case, capped at cap + 1. */
static size_t
distance(const char *a, const char *b, size_t cap)
{
	size_t	 la = strlen(a), lb = strlen(b), i, j, prev, cur, best;
	size_t	 row[NAME_SHOW_MAX + 2];

	if (la > NAME_SHOW_MAX || lb > NAME_SHOW_MAX ||
	    (la > lb ? la - lb : lb - la) > cap)
		return cap + 1;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		best = row[0];
		for (j = 1; j <= lb; j++) {
			cur = row[j];
			row[j] = MIN(MIN(row[j] + 1, row[j - 1] + 1), prev +
			    (tolower((unsigned char)a[i - 1]) !=
			    tolower((unsigned char)b[j - 1])));
			prev = cur;
			best = MIN(best, row[j]);
		}
		if (best > cap)
			return cap + 1;
	}
	return row[lb];
}

/* The known key of sect closest to name (2 edits at most), or NULL. */
static const struct key *
nearest_key(enum ksect sect, const char *name)
{
	const struct key *k, *best = NULL;
	size_t		 d, bestd = 3;

	if (strlen(name) < 4)
		return NULL;
	for (k = keys; k < keys + ARRAY_SIZE(keys); k++) {
		if (k->sect != sect)
			continue;
		d = distance(name, k->name, 2);
		if (d < bestd) {
			bestd = d;
			best = k;
		}
	}
	return best;
}

static int
unknown_key(struct parse *p, enum ksect sect, const char *name)
{
	const struct key	*hint;
	char			 label[FLOW_NAME_MAX + 8];
	const char		*where;

	where = cur_label(p, label, sizeof(label));
	if (*name == '\0')
		return fail(p, p->lineno, "syntax error (no key before '=')");
	if (!showable(name))
		return fail(p, p->lineno, "unknown key in %s", where);
	hint = key_find(sect, name, true);
	if (hint == NULL && !key_find(sect == KS_AGENT ? KS_FLOW : KS_AGENT,
	    name, false))
		hint = nearest_key(sect, name);
	if (hint != NULL)
		return fail(p, p->lineno, "unknown key '%s' in %s; "
		    "did you mean '%s'?", name, where, hint->name);
	if (key_find(sect == KS_AGENT ? KS_FLOW : KS_AGENT, name, false))
		return fail(p, p->lineno, "unknown key '%s' in %s; it belongs "
		    "in %s", name, where,
		    sect == KS_AGENT ? "a [flow:NAME] section" : "[agent]");
	return fail(p, p->lineno, "unknown key '%s' in %s", name, where);
}

/* inih's handler: one "name = value" line of the current section. */
static int
on_key(void *user, const char *section, const char *name, const char *value)
{
	struct parse		*p = user;
	const struct key	*k;
	struct sect		*s;
	char			 why[LINE_BUF];
	char			 label[FLOW_NAME_MAX + 8];
	int			 rc;

	if (p->failed)
		return 0;
	if (p->cur == CUR_NONE) {
		if (showable(name))
			fail(p, p->lineno, "key '%s' is outside any section",
			    name);
		else
			fail(p, p->lineno, "key outside any section");
		return 0;
	}
	k = key_find(p->cur == CUR_AGENT ? KS_AGENT : KS_FLOW, name, false);
	if (k == NULL) {
		unknown_key(p, p->cur == CUR_AGENT ? KS_AGENT : KS_FLOW, name);
		return 0;
	}
	s = cur_sect(p);
	if (s->keyline[k - keys] != 0) {
		fail(p, p->lineno, "duplicate key '%s' in %s (first at line %d)",
		    k->name, cur_label(p, label, sizeof(label)),
		    s->keyline[k - keys]);
		return 0;
	}
	s->keyline[k - keys] = p->lineno;
	if (p->stash_line == p->lineno)
		value = p->stash.data != NULL ? p->stash.data : "";
	rc = key_store(cur_base(p), k, value, why, sizeof(why));
	stash_wipe(p);
	if (rc != 0) {
		fail(p, p->lineno, "%s", why);
		return 0;
	}
	return 1;
}

static int
begin_agent(struct parse *p)
{
	if (p->agent.line != 0)
		return fail(p, p->lineno, "duplicate section [agent] "
		    "(first at line %d)", p->agent.line);
	p->agent.line = p->lineno;
	p->cur = CUR_AGENT;
	return 0;
}

static int
begin_flow(struct parse *p, const char *name)
{
	struct conf	*c = p->conf;
	struct conf_flow *f;
	char		 shown[LINE_BUF];
	size_t		 i;

	if (!charset_ok(name, ALNUM "_.-", FLOW_NAME_MAX))
		return fail(p, p->lineno, "bad flow name '%s' (1-%d letters, "
		    "digits, '_', '.' or '-')",
		    sanitize(name, shown, sizeof(shown)), FLOW_NAME_MAX);
	for (i = 0; i < c->nflows; i++)
		if (strcmp(c->flows[i].name, name) == 0)
			return fail(p, p->lineno, "duplicate section "
			    "[flow:%s] (first at line %d)", name,
			    c->flows[i].line);
	c->flows = xrealloc(c->flows, (c->nflows + 1) * sizeof(*c->flows));
	p->flows = xrealloc(p->flows, (c->nflows + 1) * sizeof(*p->flows));
	f = &c->flows[c->nflows];
	memset(f, 0, sizeof(*f));
	memset(&p->flows[c->nflows], 0, sizeof(*p->flows));
	p->cur = (int)c->nflows;
	c->nflows++;		/* now conf_free sees it, zeroed */
	f->name = xstrdup(name);
	f->line = p->lineno;
	p->flows[p->cur].line = p->lineno;
	apply_defaults(f, KS_FLOW);
	return 0;
}

static int
begin_unknown(struct parse *p, const char *name)
{
	char	 shown[LINE_BUF];

	sanitize(name, shown, sizeof(shown));
	if (strcasecmp(name, "agent") == 0)
		return fail(p, p->lineno, "unknown section [%s]; did you mean "
		    "[agent]?", shown);
	if (strncasecmp(name, "flow:", 5) == 0)
		return fail(p, p->lineno, "unknown section [%s]; did you mean "
		    "[flow:%s]?", shown, shown + 5);
	return fail(p, p->lineno, "unknown section [%s] (expected [agent] or "
	    "[flow:NAME])", shown);
}

/*
 * A line starting with '['.  inih takes the name up to the first ']' and
 * ignores the rest of the line; we insist on nothing but a comment there.
 */
static int
begin_section(struct parse *p, char *s)
{
	char	*end, *rest;

	end = strchr(s, ']');
	if (end == NULL) {
		/* inih fails this line; later errors lose to it. */
		if (p->syntax_line == 0) {
			p->syntax_line = p->lineno;
			p->syntax_why = "missing ']' in section header";
		}
		return 0;
	}
	*end = '\0';
	for (rest = end + 1; *rest == ' ' || *rest == '\t'; rest++)
		continue;
	if (*rest != '\0' && *rest != ';' && *rest != '#')
		return fail(p, p->lineno, "unexpected text after section "
		    "header");
	s++;
	if (strcmp(s, "agent") == 0)
		return begin_agent(p);
	if (strncmp(s, "flow:", 5) == 0)
		return begin_flow(p, s + 5);
	return begin_unknown(p, s);
}

/*
 * Read one line into p->line without its "\n" or "\r\n".  Returns its
 * length (which may exceed what was kept), or -1 at the end of the file.
 */
static long
fetch_line(struct parse *p)
{
	size_t	 n = 0, keep = sizeof(p->line) - 1;
	int	 c;

	while ((c = getc(p->fp)) != EOF && c != '\n') {
		if (n < keep)
			p->line[n] = (char)c;
		n++;
	}
	if (c == EOF && ferror(p->fp)) {
		fail(p, 0, "%s", strerror(errno));
		return -1;
	}
	if (c == EOF && n == 0)
		return -1;
	if (n > 0 && n <= keep && p->line[n - 1] == '\r')
		n--;
	p->line[MIN(n, keep)] = '\0';
	return (long)n;
}

/*
 * A line too long for inih: if it sets a KF_LONG key of the current
 * section, parse it here as inih would (name up to '=' or ':', the value
 * without blanks around it and without a ';' comment after a blank) and
 * hand inih a blank line in its place.  false: not such a line.
 */
static bool
long_line(struct parse *p, size_t n, char *str)
{
	const struct key	*k;
	char			*s, *eq, *v, *e;

	if (n > LONG_LINE_MAX || p->cur < 0 || memchr(p->line, '\0', n))
		return false;
	s = p->line + strspn(p->line, " \t");
	eq = s + strcspn(s, "=:");
	if (*eq == '\0')
		return false;
	for (e = eq; e > s && (e[-1] == ' ' || e[-1] == '\t'); e--)
		continue;
	*e = '\0';
	k = key_find(KS_FLOW, s, false);
	if (k == NULL || !(k->flags & KF_LONG))
		return false;	/* an error follows: the line may stay cut */
	v = eq + 1;
	for (e = v; *e != '\0'; e++)
		if (*e == ';' && e > v && (e[-1] == ' ' || e[-1] == '\t')) {
			*e = '\0';
			break;
		}
	v += strspn(v, " \t");
	e = v + strlen(v);
	while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	on_key(p, "", s, v);
	str[0] = '\0';
	return true;
}

/*
 * Secret and decryptable values of [agent] never pass through inih: its
 * buffer is not ours to zero, and Debian's holds 199 characters, fewer than
 * most encrypted values.  Such a line may be up to CONF_LONG_LINE long;
 * its value goes to p->stash and inih sees "name =".
 */
static bool
stashed(const struct key *k)
{
	return k->sect == KS_AGENT &&
	    ((k->flags & KF_SECRET) || cred_decryptable(k->name));
}

static void
stash_wipe(struct parse *p)
{
	if (p->stash.data != NULL)
		explicit_bzero(p->stash.data, p->stash.cap);
	buf_reset(&p->stash);
	p->stash_line = 0;
}

/* The key of line s ("name = value") when its value is to be stashed. */
static const struct key *
stash_key(struct parse *p, const char *s)
{
	const struct key *k;
	char		 name[NAME_SHOW_MAX + 1];
	size_t		 n;

	if (p->cur != CUR_AGENT || *s == '[' || *s == ';' || *s == '#')
		return NULL;
	n = strcspn(s, "=:");
	if (s[n] == '\0')
		return NULL;
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	if (n == 0 || n >= sizeof(name))
		return NULL;
	memcpy(name, s, n);
	name[n] = '\0';
	k = key_find(KS_AGENT, name, false);
	return k != NULL && stashed(k) ? k : NULL;
}

/* The value of line s by inih's rules: an inline " ;comment" and the
 * blanks around it go. */
static void
stash_value(struct parse *p, const char *s)
{
	const char	*v = s + strcspn(s, "=:") + 1, *e;
	bool		 was_space = false;

	for (e = v; *e != '\0' && !(was_space && *e == ';'); e++)
		was_space = isspace((unsigned char)*e);
	while (v < e && isspace((unsigned char)*v))
		v++;
	while (e > v && isspace((unsigned char)e[-1]))
		e--;
	stash_wipe(p);
	buf_add(&p->stash, v, (size_t)(e - v));
	p->stash_line = p->lineno;
}

/* inih's reader: hands over one checked line at a time. */
static char *
read_line(char *str, int num, void *stream)
{
	struct parse	*p = stream;
	const struct key *k;
	size_t		 limit;
	long		 n;
	char		*s;

	if (p->failed)
		return NULL;
	n = fetch_line(p);
	if (n < 0)
		return NULL;
	p->lineno++;
	limit = MIN((size_t)num, LINE_BUF) - 1;
	k = stash_key(p, p->line + strspn(p->line, " \t"));
	if (k != NULL)
		limit = CONF_LONG_LINE;
	else if ((size_t)n > limit && long_line(p, (size_t)n, str))
		return str;
	if ((size_t)n > limit) {
		fail(p, p->lineno, "line longer than %zu characters", limit);
		return NULL;
	}
	if (memchr(p->line, '\0', (size_t)n) != NULL) {
		/* A NUL would silently cut the value short. */
		fail(p, p->lineno, "line contains a NUL byte");
		return NULL;
	}
	s = p->line;
	if (p->lineno == 1 && strncmp(s, "\xef\xbb\xbf", 3) == 0)
		s += 3;		/* UTF-8 byte order mark */
	/* No leading blanks: inih would take the line as a continuation. */
	s += strspn(s, " \t");
	if (k != NULL) {
		stash_value(p, s);
		snprintf(str, (size_t)num, "%s =", k->name);
		explicit_bzero(p->line, sizeof(p->line));
		return str;
	}
	memcpy(str, s, strlen(s) + 1);
	if (*s == '[') {
		if (begin_section(p, s) != 0)
			return NULL;
	} else if (*s != '\0' && *s != ';' && *s != '#' &&
	    strpbrk(s, "=:") == NULL && p->syntax_line == 0) {
		p->syntax_line = p->lineno;
		p->syntax_why = "expected 'key = value'";
	}
	return str;
}

static bool
env_set(const struct key *k)
{
	const char	*v;

	if (k->env == NULL)
		return false;
	v = getenv(k->env);
	return v != NULL && *v != '\0';
}

/* Report the first required key of sect that s lacks. */
static int
check_required(struct parse *p, enum ksect sect, struct sect *s,
    const char *label)
{
	const struct key	*k;

	for (k = keys; k < keys + NKEYS; k++) {
		if (k->sect != sect || !(k->flags & KF_REQUIRED) ||
		    s->keyline[k - keys] != 0 || env_set(k))
			continue;
		if (k->env != NULL)
			return fail(p, s->line, "%s is missing required key "
			    "'%s' (or set %s)", label, k->name, k->env);
		return fail(p, s->line, "%s is missing required key '%s'",
		    label, k->name);
	}
	return 0;
}

static int
line_of(struct sect *s, const char *name)
{
	const struct key	*k;

	k = key_find(KS_FLOW, name, false);
	return k == NULL ? 0 : s->keyline[k - keys];
}

/*
 * dataProcessingOptions and its keys together, compiled as the flow will
 * compile them: the error names the line of the key at fault, or of
 * dataProcessingOptions (or the section) when that key is missing.
 */
static int
check_convert(struct parse *p, struct conf_flow *f, struct sect *s,
    const char *label)
{
	struct convert	*c;
	const char	*key = NULL;
	char		 why[LINE_BUF];
	int		 line;

	if (convert_new(&f->conv, conf_delimiter(f->record_delimiter),
	    f->keep_delimiter, NULL, f->name, &c, &key, why,
	    sizeof(why)) == 0) {
		convert_free(c);
		return 0;
	}
	line = key != NULL ? line_of(s, key) : 0;
	if (line == 0)
		line = line_of(s, "dataProcessingOptions");
	return fail(p, line != 0 ? line : s->line, "%s: %s", label, why);
}

/* maxFileCheckingMillis when a whole-file flow does not set it: the DIS
 * Agent's DEFAULT_MAX_FILE_CHECKING_MILLIS. */
#define WHOLE_FILE_CHECKING_MS	5000

/* The whole-file keys together (cleanconf_check), at the key's line. */
static int
check_whole(struct parse *p, struct conf_flow *f, struct sect *s,
    const char *label)
{
	const char	*key = NULL, *bad;
	char		 why[LINE_BUF];
	int		 line;

	if (!f->file_appendable && line_of(s, "maxFileCheckingMillis") == 0)
		f->max_file_checking_ms = WHOLE_FILE_CHECKING_MS;
	bad = cleanconf_check(f, p->fs_checks, &key, why, sizeof(why));
	if (bad == NULL)
		return 0;
	line = line_of(s, key);
	if (line == 0)
		line = line_of(s, "isFileAppendable");
	return fail(p, line != 0 ? line : s->line, "%s: %s", label, bad);
}

static int
check_flow(struct parse *p, size_t i)
{
	struct conf_flow	*f = &p->conf->flows[i];
	struct sect		*s = &p->flows[i];
	char			 label[FLOW_NAME_MAX + 8];

	snprintf(label, sizeof(label), "[flow:%s]", f->name);
	if (check_required(p, KS_FLOW, s, label) != 0)
		return -1;
	if (line_of(s, "DISStream") == 0 && f->stream_id[0] == '\0')
		return fail(p, s->line, "%s is missing required key "
		    "'DISStream' (or set streamId)", label);
	if (f->retry_max_backoff_ms < f->retry_initial_backoff_ms)
		return fail(p, MAX(line_of(s, "retryMaxBackoffMillis"),
		    line_of(s, "retryInitialBackoffMillis")),
		    "retryMaxBackoffMillis = %lld is less than "
		    "retryInitialBackoffMillis = %lld",
		    f->retry_max_backoff_ms, f->retry_initial_backoff_ms);
	if (check_whole(p, f, s, label) != 0)
		return -1;
	return check_convert(p, f, s, label);
}

/* --- credentials (cred.c resolves, the table says which keys) ---------- */

static bool
is_ecs(const struct conf *c)
{
	return strcmp(c->credential_source, "ecs-metadata") == 0;
}

/* The keys credentialSource = static needs and ecs-metadata replaces. */
static bool
static_key(const struct key *k)
{
	return (k->flags & KF_CRED) || strcmp(k->name, "security.token") == 0;
}

/* The [agent] keys cred_resolve looks at, into items; their number. */
static size_t
cred_items(struct parse *p, struct cred_item *items, size_t max)
{
	const struct key	*k;
	struct cred_item	*it;
	size_t			 n = 0;

	for (k = keys; k < keys + NKEYS && n < max; k++) {
		if (k->sect != KS_AGENT || k->type != KT_STRING ||
		    !((k->flags & KF_DIR) || cred_decryptable(k->name)))
			continue;
		it = &items[n++];
		memset(it, 0, sizeof(*it));
		it->key = k->name;
		it->value = str_at(p->conf, k);
		it->line = p->agent.keyline[k - keys];
		it->env = env_set(k) ? k->env : NULL;
		it->from_dir = (k->flags & KF_DIR) &&
		    !(is_ecs(p->conf) && static_key(k));
		it->secret = (k->flags & KF_SECRET) != 0;
		it->decrypt = cred_decryptable(k->name);
		it->check = k->check;
	}
	return n;
}

/* What credentialSource requires, once every source is read. */
static int
check_source(struct parse *p)
{
	const struct key	*k;
	int			 line;

	for (k = keys; k < keys + NKEYS; k++) {
		if (k->sect != KS_AGENT || !static_key(k))
			continue;
		line = p->agent.keyline[k - keys];
		if (is_ecs(p->conf) && (*str_at(p->conf, k))[0] != '\0')
			return line != 0 && !env_set(k) ? fail(p, line, "%s is "
			    "not used with credentialSource = ecs-metadata: "
			    "remove it", k->name) : fail(p, 0, "%s is set, but "
			    "credentialSource = ecs-metadata takes the keys "
			    "from the metadata service: unset it", k->env);
		if (!is_ecs(p->conf) && (k->flags & KF_CRED) &&
		    (*str_at(p->conf, k))[0] == '\0')
			return fail(p, p->agent.line, "[agent] is missing "
			    "required key '%s' (or set %s, or give the systemd "
			    "credential %s)", k->name, k->env, k->name);
	}
	k = key_find(KS_AGENT, "PROXY_PASSWORD", false);
	if (p->conf->proxy_password[0] != '\0' &&
	    p->conf->proxy_username[0] == '\0')
		return fail(p, p->agent.keyline[k - keys], "PROXY_PASSWORD "
		    "needs PROXY_USERNAME");
	return 0;
}

/*
 * Credential files, decryption (cred_resolve, whose message names the
 * file and line itself), then the rules of credentialSource.
 */
static int
finish_credentials(struct parse *p)
{
	struct cred_item	 items[16];
	char			 why[1024];
	size_t			 n;

	if (p->opts & CONF_NO_CREDENTIALS)
		return 0;
	if ((p->opts & CONF_CHECK_ONLY) && !cred_dir_readable()) {
		log_warn("%s: the systemd credentials in %s cannot be read here "
		    "(systemd hides them from ExecReload=): ak, sk and the "
		    "encrypted values are not checked", p->path,
		    getenv("CREDENTIALS_DIRECTORY"));
		return 0;
	}
	n = cred_items(p, items, ARRAY_SIZE(items));
	if (cred_resolve(items, n, p->path, why, sizeof(why)) != 0) {
		p->failed = true;
		snprintf(p->err, p->errlen, "%s", why);
		return -1;
	}
	return check_source(p);
}

/* Environment overrides, then values derived from others. */
static int
finish_agent(struct parse *p)
{
	struct conf		*c = p->conf;
	const struct key	*k;
	char			 why[LINE_BUF];
	size_t			 n;

	for (k = keys; k < keys + NKEYS; k++) {
		if (!env_set(k))
			continue;
		if (key_store(c, k, getenv(k->env), why, sizeof(why)) != 0)
			return fail(p, 0, "%s (from %s)", why, k->env);
	}
	if (finish_credentials(p) != 0)
		return -1;
	if (c->endpoint[0] == '\0') {
		free(c->endpoint);
		c->endpoint = xasprintf("https://dis.%s.myhuaweicloud.com",
		    c->region);
	}
	/* Paths are appended to it: "https://host/" + "/v2/..." is wrong. */
	n = strlen(c->endpoint);
	while (n > 0 && c->endpoint[n - 1] == '/')
		c->endpoint[--n] = '\0';
	return 0;
}

/* Whole-file checks once every line has been read. */
static int
finish(struct parse *p)
{
	size_t	 i;

	if (p->agent.line == 0)
		return fail(p, 0, "missing [agent] section");
	if (check_required(p, KS_AGENT, &p->agent, "[agent]") != 0)
		return -1;
	if (p->conf->nflows == 0)
		return fail(p, 0, "no [flow:NAME] section");
	for (i = 0; i < p->conf->nflows; i++)
		if (check_flow(p, i) != 0)
			return -1;
	return finish_agent(p);
}

/* Fold inih's result into ours: an earlier syntax error wins. */
static int
parse_result(struct parse *p, int rc)
{
	if (rc < 0)
		return fail(p, 0, "cannot parse (inih error %d)", rc);
	if (rc > 0 && (!p->failed || rc < p->errline)) {
		p->failed = false;
		if (rc == p->syntax_line)
			return fail(p, rc, "syntax error (%s)", p->syntax_why);
		return fail(p, rc, "syntax error");
	}
	return p->failed ? -1 : 0;
}

static bool
sect_of(const char *section, enum ksect *out)
{
	if (strcmp(section, "agent") == 0)
		*out = KS_AGENT;
	else if (strcmp(section, "flow") == 0 ||
	    strncmp(section, "flow:", 5) == 0)
		*out = KS_FLOW;
	else
		return false;
	return true;
}

size_t
conf_line_max(const char *section, const char *key)
{
	const struct key	*k;
	enum ksect		 sect;

	k = sect_of(section, &sect) ? key_find(sect, key, false) : NULL;
	if (k != NULL && stashed(k))
		return CONF_LONG_LINE;
	return k != NULL && (k->flags & KF_LONG) ? LONG_LINE_MAX :
	    INI_LINE - 1;
}

bool
conf_key_known(const char *section, const char *key)
{
	enum ksect	 sect;

	return sect_of(section, &sect) && key_find(sect, key, false) != NULL;
}

int
conf_key_check(const char *section, const char *key, const char *value,
    char *why, size_t len)
{
	const struct key	*k;
	struct conf		 c;
	struct conf_flow	 f;
	enum ksect		 sect;
	void			*base;
	int			 rc;

	k = sect_of(section, &sect) ? key_find(sect, key, false) : NULL;
	if (k == NULL) {
		snprintf(why, len, "unknown key '%s'", key);
		return -ENOENT;
	}
	memset(&c, 0, sizeof(c));
	memset(&f, 0, sizeof(f));
	base = sect == KS_AGENT ? (void *)&c : (void *)&f;
	rc = key_store(base, k, value, why, len);
	if (k->type == KT_STRING || k->type == KT_WORD)
		free(*str_at(base, k));
	return rc == 0 ? 0 : -EINVAL;
}

int
conf_load_opts(const char *path, unsigned opts, struct conf **out, char *err,
    size_t errlen)
{
	struct parse	 p;
	int		 rc;

	*out = NULL;
	memset(&p, 0, sizeof(p));
	p.opts = opts;
	p.fs_checks = (opts & CONF_FS_CHECKS) != 0;
	p.path = path;
	p.err = err;
	p.errlen = errlen;
	p.cur = CUR_NONE;
	p.conf = xcalloc(1, sizeof(*p.conf));
	p.conf->path = xstrdup(path);
	apply_defaults(p.conf, KS_AGENT);
	p.fp = fopen(path, "r");
	if (p.fp == NULL) {
		fail(&p, 0, "%s", strerror(errno));
		goto fail;
	}
	rc = ini_parse_stream(read_line, &p, on_key, &p);
	explicit_bzero(p.line, sizeof(p.line));
	stash_wipe(&p);
	buf_cleanup(&p.stash);
	if (parse_result(&p, rc) != 0 || finish(&p) != 0)
		goto fail;
	fclose(p.fp);
	free(p.flows);
	*out = p.conf;
	return 0;
fail:
	if (p.fp != NULL)
		fclose(p.fp);
	free(p.flows);
	conf_free(p.conf);
	return -1;
}

int
conf_load(const char *path, struct conf **out, char *err, size_t errlen)
{
	return conf_load_opts(path, 0, out, err, errlen);
}

int
conf_load_test(const char *path, struct conf **out, char *err,
    size_t errlen)
{
	return conf_load_opts(path, CONF_CHECK_ONLY | CONF_FS_CHECKS, out,
	    err, errlen);
}

/* Help text plus what the table says about k, as one paragraph. */
static void
key_describe(const struct key *k, bool with_default, struct buf *b)
{
	buf_addstr(b, k->help);
	if (k->flags & KF_REQUIRED)
		buf_addstr(b, " Required.");
	switch (k->type) {
	case KT_INT:
		buf_printf(b, " Range %lld..%lld.", k->min, k->max);
		break;
	case KT_BOOL:
		buf_addstr(b, " Either true or false.");
		break;
	case KT_ENUM:
	case KT_WORD:
		buf_addstr(b, " One of ");
		words_join(k->words, ", ", b);
		buf_addstr(b, ".");
		break;
	case KT_STRING:
		break;
	}
	if (k->env != NULL)
		buf_printf(b, " The environment variable %s overrides it.",
		    k->env);
	if (with_default && k->def != NULL && k->def[0] != '\0')
		buf_printf(b, " Default: %s.", k->def);
}

/* Words of text on lines of at most width columns, each after prefix. */
static void
print_wrapped(FILE *fp, const char *prefix, const char *text, size_t width)
{
	size_t	 col = 0, n;

	for (;;) {
		text += strspn(text, " ");
		if (*text == '\0')
			break;
		n = strcspn(text, " ");
		if (col > 0 && col + 1 + n > width) {
			fputc('\n', fp);
			col = 0;
		}
		if (col == 0) {
			fputs(prefix, fp);
			col = strlen(prefix);
		} else {
			fputc(' ', fp);
			col++;
		}
		fwrite(text, 1, n, fp);
		col += n;
		text += n;
	}
	if (col > 0)
		fputc('\n', fp);
}

static const char sample_head[] =
    "agent.ini: configuration of disagent, which sends lines of log files "
    "to Huawei Cloud DIS. This file is generated from the key table in "
    "src/conf.c and lists every key.\n"
    "Lines are \"[section]\" headers and \"key = value\" pairs of at most "
    "199 characters. Key names are case-sensitive; the words of a key with "
    "a fixed set of values are not. A line starting with ';' or '#' is a "
    "comment, and so is the rest of a line from a ';' that follows a blank, "
    "so a value cannot contain \" ;\".\n"
    "Keys written \";key = value\" are optional and show their default; "
    "delete the ';' to change one.";

static const char sample_flow_head[] =
    "One [flow:NAME] section per group of files; add sections for more. "
    "NAME is 1-64 letters, digits, '_', '.' or '-', and must be unique.";

static void
print_paragraphs(FILE *fp, const char *text)
{
	char	*copy, *para, *save;
	bool	 first = true;

	copy = xstrdup(text);
	for (para = strtok_r(copy, "\n", &save); para != NULL;
	    para = strtok_r(NULL, "\n", &save)) {
		if (!first)
			fputs(";\n", fp);
		first = false;
		print_wrapped(fp, "; ", para, 76);
	}
	free(copy);
}

static void
sample_key(FILE *fp, const struct key *k)
{
	struct buf	 b;

	buf_init(&b);
	key_describe(k, false, &b);
	fputc('\n', fp);
	print_wrapped(fp, "; ", b.data, 76);
	buf_cleanup(&b);
	if (k->example != NULL)
		fprintf(fp, "%s = %s\n", k->name, k->example);
	else if (k->def != NULL && k->def[0] != '\0')
		fprintf(fp, ";%s = %s\n", k->name, k->def);
	else
		fprintf(fp, ";%s =\n", k->name);
}

void
conf_print_sample(FILE *fp)
{
	const struct key	*k;

	print_paragraphs(fp, sample_head);
	fputs("\n[agent]\n", fp);
	for (k = keys; k < keys + NKEYS; k++)
		if (k->sect == KS_AGENT)
			sample_key(fp, k);
	fputc('\n', fp);
	print_paragraphs(fp, sample_flow_head);
	fputs("[flow:app]\n", fp);
	for (k = keys; k < keys + NKEYS; k++)
		if (k->sect == KS_FLOW)
			sample_key(fp, k);
}

/*
 * Text for groff: backslashes escaped, one sentence per line (the roff
 * convention, which also keeps the sentence spacing right) and lines
 * wrapped near 72 columns, none starting with a control character.
 */
static void
man_text(FILE *fp, const char *s)
{
	const char	*w, *end;
	size_t		 col = 0, n;

	for (w = s; *w != '\0'; w = end) {
		while (*w == ' ')
			w++;
		if (*w == '\0')
			break;
		end = strchr(w, ' ');
		if (end == NULL)
			end = w + strlen(w);
		n = (size_t)(end - w);
		if (col > 0 && col + 1 + n > 72) {
			fputc('\n', fp);
			col = 0;
		} else if (col > 0) {
			fputc(' ', fp);
			col++;
		}
		if (col == 0 && (*w == '.' || *w == '\''))
			fputs("\\&", fp);
		for (; w < end; w++, col++) {
			if (*w == '\\')
				fputs("\\e", fp);
			else
				fputc(*w, fp);
		}
		/* A sentence ends: start the next one on its own line. */
		if (n > 1 && end[-1] == '.' && *end == ' ' && col > 0) {
			fputc('\n', fp);
			col = 0;
		}
	}
	if (col > 0 || s[0] == '\0')
		fputc('\n', fp);
}

void
conf_print_man(FILE *fp)
{
	const struct key	*k;
	struct buf		 b;
	enum ksect		 sect;

	buf_init(&b);
	for (sect = KS_AGENT; sect <= KS_FLOW; sect++) {
		fputs(sect == KS_AGENT ? ".SS [agent]\n" :
		    ".SS [flow:NAME]\n", fp);
		for (k = keys; k < keys + NKEYS; k++) {
			if (k->sect != sect)
				continue;
			buf_reset(&b);
			key_describe(k, true, &b);
			fputs(".TP\n.B ", fp);
			man_text(fp, k->name);
			man_text(fp, b.data);
		}
	}
	buf_cleanup(&b);
}
