/*
 * Every key of agent.ini, one row each (conf_int.h): its section, name
 * (the DIS Agent's spelling), type, bounds or words, default, where it is
 * stored, flags, environment override, check and help text.  The table
 * drives parsing, defaults, validation, the sample file and the man page.
 */
#include "config.h"

#include <stddef.h>

#include "conf/conf_int.h"
#include "conf/ctrconf.h"
#include "conf/journalconf.h"
#include "conf/proxyconf.h"
#include "records/filter.h"
#include "records/logparse.h"

_Static_assert(sizeof(enum conf_position) == sizeof(int),
    "initialPosition is stored through an int");
_Static_assert(sizeof(enum conf_source) == sizeof(int),
    "source is stored through an int");

static const char *const level_words[] = {
	"ERROR", "WARN", "INFO", "DEBUG", NULL
};
static const char *const stream_type_words[] = { "COMMON", "ADVANCED", NULL };
static const char *const watch_words[] = { "INOTIFY", "POLL", NULL };
static const char *const follow_words[] = { "owner", "always", "never",
    NULL };
static const char *const compress_words[] = { "lz4", "zstd", NULL };
static const char *const serialize_words[] = { "auto", "json", "protobuf",
    NULL };
static const char *const source_words[] = { "static", "ecs-metadata", NULL };
static const char *const proxy_words[] = { "http", "https", NULL };
static const char *const delete_words[] = { "never", "immediate", NULL };
static const char *const dedupe_words[] = { "auto", "off", NULL };
/* In the order of enum conf_position. */
static const char *const position_words[] = {
	"START_OF_FILE", "END_OF_FILE", NULL
};

#define AOFF(f)	offsetof(struct conf, f)
#define FOFF(f)	offsetof(struct conf_flow, f)
#define COFF(f)	offsetof(struct conf_flow, conv.f)

const struct key conf_keys[] = {
	{ KS_AGENT, "region", KT_STRING, .off = AOFF(region),
	  .flags = KF_REQUIRED | KF_NONEMPTY | KF_RELOAD_CLIENT,
	  .example = "cn-north-4",
	  .check = conf_check_region,
	  .help = "Huawei Cloud region of the DIS service, e.g. cn-north-4. "
	  "It names the endpoint host and is part of every request "
	  "signature." },
	{ KS_AGENT, "projectId", KT_STRING, .off = AOFF(project_id),
	  .flags = KF_REQUIRED | KF_NONEMPTY | KF_RELOAD_CLIENT,
	  .example = "0123456789abcdef0123456789abcdef", .check = conf_check_id,
	  .help = "Project ID of the account in that region, as shown under "
	  "My Credentials in the console." },
	{ KS_AGENT, "endpoint", KT_STRING, .off = AOFF(endpoint), .def = "",
	  .check = conf_check_url,
	  .flags = KF_RELOAD_CLIENT,
	  .help = "URL of the DIS service. Empty means "
	  "https://dis.REGION.myhuaweicloud.com. An http:// URL sends every "
	  "record in clear text: the start and -t say so in a WARN naming "
	  "this line." },
	{ KS_AGENT, "ak", KT_STRING, .off = AOFF(ak),
	  .flags = KF_CRED | KF_DIR | KF_NONEMPTY | KF_RELOAD_CLIENT,
	  .env = "DIS_AK",
	  .example = "YOUR_ACCESS_KEY_ID", .check = conf_check_credential,
	  .help = "Access key ID used to sign requests; may be encrypted "
	  "(see encrypt.key). Required unless credentialSource = "
	  "ecs-metadata; when it is not set here, the systemd credential ak "
	  "($CREDENTIALS_DIRECTORY/ak) is used." },
	{ KS_AGENT, "sk", KT_STRING, .off = AOFF(sk),
	  .flags = KF_CRED | KF_DIR | KF_NONEMPTY | KF_SECRET |
	  KF_RELOAD_CLIENT, .env = "DIS_SK",
	  .example = "YOUR_SECRET_ACCESS_KEY", .check = conf_check_credential,
	  .help = "Secret access key used to sign requests; may be encrypted "
	  "(see encrypt.key). It is never logged; keep this file readable by "
	  "the agent only, or use the environment variable or the systemd "
	  "credential sk. Required unless credentialSource = "
	  "ecs-metadata." },
	{ KS_AGENT, "checkpointFile", KT_STRING, .off = AOFF(checkpoint_file),
	  .def = "/var/lib/disagent/state.json", .flags = KF_NONEMPTY,
	  .help = "File that records how far each log file has been "
	  "delivered, so a restart resumes where it stopped. Its directory "
	  "is made at start (mode 0750) when missing; -t and the start fail "
	  "when it cannot be made or written." },
	{ KS_AGENT, "caFile", KT_STRING, .off = AOFF(ca_file), .def = "",
	  .check = conf_check_ca_file,
	  .flags = KF_RELOAD_CLIENT,
	  .help = "CA bundle (PEM) used to verify the endpoint's "
	  "certificate. Empty means the system's trusted CAs." },
	{ KS_AGENT, "sslVerify", KT_BOOL, .off = AOFF(ssl_verify),
	  .def = "true",
	  .flags = KF_RELOAD_CLIENT,
	  .help = "Verify the endpoint's TLS certificate and host name. "
	  "Turn it off only for testing: the start and -t then WARN, naming "
	  "this line; for a private CA, set caFile instead." },
	{ KS_AGENT, "logLevel", KT_WORD, level_words, .off = AOFF(log_level),
	  .def = "INFO",
	  .flags = KF_RELOAD_AGENT,
	  .help = "Least severe message that is logged." },
	{ KS_AGENT, "connectionTimeOutSeconds", KT_INT, .min = 1, .max = 600,
	  .off = AOFF(connect_timeout_s), .def = "30",
	  .flags = KF_RELOAD_CLIENT,
	  .help = "Time allowed to connect to the endpoint, in seconds." },
	{ KS_AGENT, "socketTimeOutSeconds", KT_INT, .min = 1, .max = 3600,
	  .off = AOFF(socket_timeout_s), .def = "60",
	  .flags = KF_RELOAD_CLIENT,
	  .help = "Time allowed for a whole request, in seconds; a request "
	  "that takes longer fails and is retried." },
	{ KS_AGENT, "log.statusReportingPeriodSeconds", KT_INT, .min = 1,
	  .max = 86400, .off = AOFF(status_period_s), .def = "30",
	  .flags = KF_RELOAD_AGENT,
	  .help = "How often a progress line (lines read, records sent, "
	  "failures) is logged, in seconds." },
	{ KS_AGENT, "checkpointIntervalMillis", KT_INT, .min = 10,
	  .max = 600000, .off = AOFF(checkpoint_interval_ms), .def = "1000",
	  .flags = KF_RELOAD_AGENT,
	  .help = "How soon after an acknowledgement moved an offset the "
	  "offsets are saved to checkpointFile, in milliseconds; the "
	  "acknowledgements of that time are saved together (and the wait "
	  "grows with a state file that takes long to write). Nothing is "
	  "written while nothing is delivered. Each save costs two fsyncs; "
	  "after a crash, what was acknowledged since the last save is read "
	  "back (dedupeOnRestart) or sent again." },
	{ KS_AGENT, "shutdownTimeoutMillis", KT_INT, .min = 0, .max = 600000,
	  .off = AOFF(shutdown_timeout_ms), .def = "10000",
	  .flags = KF_RELOAD_AGENT,
	  .help = "How long a stopping agent keeps sending buffered records, "
	  "in milliseconds. Records not delivered by then are sent again "
	  "after the next start." },
	{ KS_AGENT, "dedupeOnRestart", KT_WORD, dedupe_words,
	  .off = AOFF(dedupe_on_restart), .def = "auto",
	  .flags = KF_RELOAD_AGENT,
	  .help = "What a start after a crash (kill -9, power loss) does with "
	  "what the crashed run sent after its last save of checkpointFile. "
	  "auto: the partition keys of flows with partitionKeyOption "
	  "RANDOM_INT carry a record id (12 characters instead of the "
	  "number), and the start reads those records back from each "
	  "partition after the sequence numbers the state file kept, up to "
	  "when they could have landed; the ones this agent sent are not sent "
	  "again. It needs read permission (GetCursor, GetRecords); without "
	  "it, or when the stream no longer holds them, they are sent again "
	  "and one INFO line says why. off: keys as configured, and what was "
	  "in flight is sent again. After a clean stop nothing is read and "
	  "nothing is sent twice either way. A reload applies a change to "
	  "the records read after it; the read happens only at a start." },
	{ KS_AGENT, "checkpointTimeToLiveDays", KT_INT, .min = 0,
	  .max = 3650, .off = AOFF(checkpoint_ttl_days), .def = "7",
	  .flags = KF_RELOAD_AGENT,
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
	  .off = AOFF(serialize_type), .def = "auto",
	  .help = "Encoding of PutRecords bodies: json, or protobuf (as the "
	  "DIS SDK offers), which carries the records' bytes without base64: "
	  "smaller bodies, less CPU; auto: protobuf until the endpoint "
	  "refuses it (HTTP 415, or a 400 that names the format or, before "
	  "any protobuf request was acknowledged, says the request is "
	  "invalid), then JSON for the rest of the run, with one INFO line "
	  "saying why; the refused request goes again as JSON. The records' "
	  "bytes in DIS are the same either way. Compression applies to "
	  "either." },
	/* The DIS SDK's per-record codecs (records/reccodec.h). */
	{ KS_AGENT, "data.compress.enabled", KT_BOOL,
	  .off = AOFF(data_compress), .def = "false",
	  .help = "Snappy-compress each record's data (after "
	  "dataProcessingOptions) as the DIS SDK's data.compress.enabled "
	  "does, for consumers that read the stream with the SDK and that "
	  "setting; disagent read and verify undo it. Encryption, then "
	  "body.compress, apply after it. Records are cut to what still "
	  "fits the stream's record limit once compressed at worst (1/7 "
	  "less)." },
	{ KS_AGENT, "data.encrypt.enabled", KT_BOOL,
	  .off = AOFF(data_encrypt), .def = "false",
	  .help = "Encrypt each record's data with data.password as the DIS "
	  "SDK's data.encrypt.enabled does (EncryptUtils: PBKDF2 and "
	  "AES-128-CBC, sent as hex text, about four times the bytes), after "
	  "data.compress.enabled; disagent read and verify decrypt it. "
	  "Records are cut to what fits the stream's record limit once "
	  "encrypted: about a quarter of it." },
	{ KS_AGENT, "data.password", KT_STRING, .off = AOFF(data_password),
	  .def = "", .flags = KF_SECRET | KF_DIR, .env = "DIS_DATA_PASSWORD",
	  .check = conf_check_password,
	  .help = "Password of data.encrypt.enabled, required with it; may "
	  "be encrypted (see encrypt.key). Never logged: keep it out of "
	  "this file, in the environment variable or the systemd credential "
	  "data.password." },
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
	  "Empty means deadletter.jsonl beside checkpointFile. Its "
	  "directory is made at start when missing, as checkpointFile's." },
	{ KS_AGENT, "spoolDirectory", KT_STRING, .off = AOFF(spool_dir),
	  .def = "", .check = conf_check_abs_path, .flags = KF_RELOAD_AGENT,
	  .help = "Directory that receives, at a stop (and for the flows a "
	  "reload removes), the unread rest of every file that was deleted "
	  "while the agent still had it open: the descriptor was the only "
	  "way left to those bytes. After the restart the spool is shipped "
	  "first and each spool file removed once it is delivered. Empty "
	  "means spool/ beside checkpointFile." },
	{ KS_AGENT, "spoolMaxBytes", KT_INT, .min = 0, .max = 1099511627776LL,
	  .off = AOFF(spool_max_bytes), .def = "268435456",
	  .flags = KF_RELOAD_AGENT,
	  .help = "Most bytes the spool holds. What does not fit (or does not "
	  "fit on the disk) is logged with its file and counted in "
	  "disagent_bytes_lost_total{reason=\"spool\"}. 0: no spool." },
	{ KS_AGENT, "pausedRetrySeconds", KT_INT, .min = 1, .max = 3600,
	  .off = AOFF(paused_retry_s), .def = "60",
	  .help = "While delivery is paused by an error only the operator "
	  "can fix (credentials, permissions, missing stream), how often it "
	  "is tried again, in seconds." },
	{ KS_AGENT, "maxMemoryBytes", KT_INT, .min = 1048576,
	  .max = 1073741824, .off = AOFF(max_memory_bytes), .def = "4194304",
	  .flags = KF_RELOAD_AGENT,
	  .help = "Most bytes of records held in memory (batches being "
	  "filled, waiting and in flight) over all flows. When it is "
	  "reached, reading stops until DIS acknowledges records: the log "
	  "files are the buffer." },
	{ KS_AGENT, "metricsFile", KT_STRING, .off = AOFF(metrics_file),
	  .def = "", .check = conf_check_abs_path,
	  .flags = KF_RELOAD_AGENT,
	  .help = "File the agent rewrites with its metrics in the Prometheus "
	  "text format, for node_exporter's textfile collector: put it in "
	  "the collector's directory with a name ending in .prom. "
	  "disagent status also reads the last errors from it. Empty means "
	  "no metrics file." },
	{ KS_AGENT, "metricsIntervalMillis", KT_INT, .min = 1000,
	  .max = 600000, .off = AOFF(metrics_interval_ms), .def = "5000",
	  .flags = KF_RELOAD_AGENT,
	  .help = "How often metricsFile is rewritten, in milliseconds." },
	{ KS_AGENT, "httpListen", KT_STRING, .off = AOFF(http_listen),
	  .def = "", .check = conf_check_listen, .flags = KF_RELOAD_AGENT,
	  .help = "Address and port of the agent's HTTP server, numeric: "
	  "127.0.0.1:2020, or [::1]:2020 for IPv6. It answers GET /healthz "
	  "(200, or 503 and why when the agent's loop has not answered or "
	  "its state has not been saved for healthStallSeconds), /metrics "
	  "(the metrics in the Prometheus text format) and /status (what "
	  "disagent status shows, as JSON, from the running agent). There is "
	  "no authentication: keep it on a loopback or private address. -t "
	  "checks that it can be bound. Set, it costs about 1 MiB more RSS: "
	  "libmicrohttpd (Debian: libmicrohttpd12, EL: libmicrohttpd) is "
	  "loaded then, and the GnuTLS it initializes. Empty means no HTTP "
	  "server." },
	{ KS_AGENT, "healthStallSeconds", KT_INT, .min = 1, .max = 3600,
	  .off = AOFF(health_stall_s), .def = "30", .flags = KF_RELOAD_AGENT,
	  .help = "How long, in seconds, the agent's loop may go without "
	  "answering, or its state saves may keep failing, before GET "
	  "/healthz on httpListen answers 503." },
	/* Credentials and proxies (cred.c, ecsmeta.c, proxy.c). */
	{ KS_AGENT, "security.token", KT_STRING, .off = AOFF(security_token),
	  .def = "", .flags = KF_SECRET | KF_DIR | KF_RELOAD_CLIENT,
	  .env = "DIS_SECURITY_TOKEN",
	  .check = conf_check_token,
	  .help = "Security token of temporary keys: with the temporary ak "
	  "and sk it is sent as X-Security-Token and signed. Empty: ak and "
	  "sk are permanent keys. When it is not set here, the systemd "
	  "credential security.token is used. Never logged." },
	{ KS_AGENT, "credentialSource", KT_WORD, source_words,
	  .off = AOFF(credential_source), .def = "static",
	  .flags = KF_RELOAD_CLIENT,
	  .help = "Where the keys come from. static: ak, sk and "
	  "security.token from this file, the environment or systemd "
	  "credentials. ecs-metadata: temporary keys of the ECS server's "
	  "agency, from the metadata service, renewed before they expire "
	  "and never written anywhere: no key on the server." },
	{ KS_AGENT, "ecsMetadataEndpoint", KT_STRING, .off = AOFF(ecs_endpoint),
	  .def = "http://169.254.169.254",
	  .flags = KF_NONEMPTY | KF_RELOAD_CLIENT,
	  .check = conf_check_url,
	  .help = "URL of the ECS metadata service (credentialSource = "
	  "ecs-metadata). It is reached directly, never through a proxy." },
	{ KS_AGENT, "encrypt.key", KT_STRING, .off = AOFF(encrypt_key),
	  .def = "", .flags = KF_SECRET | KF_DIR | KF_RELOAD_CLIENT,
	  .env = "DIS_ENCRYPT_KEY",
	  .help = "Key of encrypted values (made by disagent encrypt, or by "
	  "the DIS Agent): values of ak, sk, data.password and "
	  "PROXY_PASSWORD of 168 characters or more are decrypted with it "
	  "at start. Keep it out "
	  "of this file: the environment variable or the systemd credential "
	  "encrypt.key. Empty: the DIS Agent's built-in key, which is "
	  "public." },
	{ KS_AGENT, "PROXY_HOST", KT_STRING, .off = AOFF(proxy_host),
	  .def = "", .check = proxy_check_host,
	  .flags = KF_RELOAD_CLIENT,
	  .help = "Host name or address of the proxy that requests to DIS go "
	  "through. Empty: no proxy, unless the https_proxy environment "
	  "variable names one (no_proxy applies then)." },
	{ KS_AGENT, "PROXY_PORT", KT_INT, .min = 1, .max = 65535,
	  .off = AOFF(proxy_port), .def = "80",
	  .flags = KF_RELOAD_CLIENT,
	  .help = "Port of the proxy." },
	{ KS_AGENT, "PROXY_PROTOCOL", KT_WORD, proxy_words,
	  .off = AOFF(proxy_protocol), .def = "http",
	  .flags = KF_RELOAD_CLIENT,
	  .help = "How the proxy is reached: http, or https for a TLS proxy. "
	  "Requests to an https endpoint are encrypted end to end either "
	  "way; https also protects PROXY_PASSWORD." },
	{ KS_AGENT, "PROXY_USERNAME", KT_STRING, .off = AOFF(proxy_username),
	  .def = "",
	  .flags = KF_RELOAD_CLIENT,
	  .help = "User name for the proxy (Basic, Digest or NTLM, as the "
	  "proxy asks). Empty: no proxy authentication." },
	{ KS_AGENT, "PROXY_PASSWORD", KT_STRING, .off = AOFF(proxy_password),
	  .def = "", .flags = KF_SECRET | KF_RELOAD_CLIENT,
	  .help = "Password for the proxy; may be encrypted (see "
	  "encrypt.key). Never logged." },
	{ KS_AGENT, "NON_PROXY_HOSTS", KT_STRING,
	  .off = AOFF(non_proxy_hosts), .def = "",
	  .check = conf_check_non_proxy,
	  .flags = KF_RELOAD_CLIENT,
	  .help = "Hosts reached without the proxy, separated by | (or "
	  "commas): host names (which also cover the hosts under them), "
	  "*.domain, IP addresses, IPv4 prefixes such as 10.1.* and * for "
	  "all." },

	{ KS_FLOW, "enable", KT_BOOL, .off = FOFF(enable), .def = "true",
	  .help = "Set to false to keep the section but not read its files." },
	{ KS_FLOW, "DISStream", KT_STRING, .off = FOFF(stream),
	  .flags = KF_NONEMPTY, .example = "my-stream",
	  .check = conf_check_stream,
	  .help = "Name of the DIS stream that receives the records. "
	  "Required unless streamId is set." },
	{ KS_FLOW, "streamId", KT_STRING, .off = FOFF(stream_id), .def = "",
	  .check = conf_check_id,
	  .help = "ID of the stream, sent instead of its name; needed for a "
	  "stream shared by another account. Empty means use DISStream." },
	{ KS_FLOW, "streamType", KT_WORD, stream_type_words,
	  .off = FOFF(stream_type), .def = "COMMON",
	  .help = "Type of the stream, which sets the request limits. Used "
	  "with streamId; otherwise the type is read from the stream." },
	{ KS_FLOW, "source", KT_ENUM, journalconf_sources,
	  .off = FOFF(source), .def = "files",
	  .help = "What the flow reads: files (filePattern); journal: the "
	  "systemd journal's entries (journalMatch, journalDirectory, "
	  "journalFormat), one record each, read with sd-journal; the "
	  "agent's user must be in the systemd-journal group (the packaged "
	  "unit is); or containers: the log files of Kubernetes' and "
	  "Docker's containers (containerLogDirectory, containerMatch), "
	  "decoded, partial lines joined, with the pod's metadata." },
	{ KS_FLOW, "filePattern", KT_STRING, .off = FOFF(file_pattern),
	  .flags = KF_NONEMPTY, .example = "/var/log/app/*.log",
	  .check = conf_check_abs_path,
	  .help = "Absolute path of the files to read. Any component may "
	  "hold shell wildcards (* ? [...]), and ** matches any number of "
	  "directories: /var/log/*/app-*.log, /srv/**/logs/*.log. Required "
	  "with source = files." },
	{ KS_FLOW, "initialPosition", KT_ENUM, position_words,
	  .off = FOFF(initial_position), .def = "START_OF_FILE",
	  .help = "Where to start reading a file that has no checkpoint yet. "
	  "With source = journal: START_OF_FILE is the oldest entry the "
	  "journal keeps, END_OF_FILE the entries from the first start on." },
	{ KS_FLOW, "journalMatch", KT_STRING, .off = FOFF(journal_match),
	  .def = "", .flags = KF_LONG, .check = journalconf_check_match,
	  .help = "source = journal: the entries to send, as journalctl's "
	  "matches: FIELD=VALUE terms joined by + must all hold, and a "
	  "comma-separated list of such is ORed; PRIORITY=0..4 is each "
	  "priority from 0 to 4. E.g. _SYSTEMD_UNIT=nginx.service+"
	  "PRIORITY=0..4, SYSLOG_IDENTIFIER=app. Empty: every entry." },
	{ KS_FLOW, "journalDirectory", KT_STRING, .off = FOFF(journal_dir),
	  .def = "", .check = conf_check_abs_path,
	  .help = "source = journal: read the journal files of this directory "
	  "(a container's, or copied from another host) instead of the "
	  "system journal. Empty: the system journal, as much of it as the "
	  "agent's user may read (group systemd-journal: all of it)." },
	{ KS_FLOW, "journalFormat", KT_ENUM, journalconf_formats,
	  .off = FOFF(journal_format), .def = "MESSAGE",
	  .help = "source = journal: what a record holds. MESSAGE: the "
	  "entry's message; JSON: all its fields as one JSON object, as "
	  "journalctl -o json writes it; SHORT: journalctl's short line "
	  "(time, host, identifier[pid]: message)." },
	{ KS_FLOW, "containerLogDirectory", KT_STRING, .off = FOFF(ctr_dir),
	  .def = "/var/log/pods", .flags = KF_NONEMPTY,
	  .check = conf_check_abs_path,
	  .help = "source = containers: the directory of the container log "
	  "files: kubelet's (NAMESPACE_POD_UID/CONTAINER/RESTART.log, as "
	  "in /var/log/pods) or Docker's (ID/ID-json.log, as in "
	  "/var/lib/docker/containers); either layout is recognised file "
	  "by file." },
	{ KS_FLOW, "containerMatch", KT_STRING, .off = FOFF(ctr_match),
	  .def = "*/*/*", .flags = KF_NONEMPTY, .check = ctrconf_check_globs,
	  .help = "source = containers: the containers the flow reads, as "
	  "NAMESPACE/POD/CONTAINER shell globs, comma-separated. A Docker "
	  "container is docker/NAME/NAME (NAME from its config.v2.json)." },
	{ KS_FLOW, "containerExclude", KT_STRING, .off = FOFF(ctr_exclude),
	  .def = "", .check = ctrconf_check_globs,
	  .help = "source = containers: containers left out although "
	  "containerMatch matches them, NAMESPACE/POD/CONTAINER globs, "
	  "comma-separated: kube-system/*/*." },
	{ KS_FLOW, "containerStreams", KT_ENUM, ctrconf_streams,
	  .off = FOFF(ctr_streams), .def = "all",
	  .help = "source = containers: the output streams sent: all, "
	  "stdout or stderr. Lines of the others are skipped (their offsets "
	  "committed)." },
	{ KS_FLOW, "containerFormat", KT_ENUM, ctrconf_formats,
	  .off = FOFF(ctr_format), .def = "auto",
	  .help = "source = containers: the log lines' format. cri: "
	  "containerd, CRI-O and podman's k8s-file (TIME STREAM F|P TEXT); "
	  "docker: Docker's json-file ({\"log\",\"stream\",\"time\"}); "
	  "auto: each line, whichever it is. Partial lines are joined into "
	  "the record of their last one; a line of neither format is sent "
	  "as it is, counted (disagent_container_lines_malformed_total) and "
	  "warned about once per file." },
	{ KS_FLOW, "containerRecord", KT_ENUM, ctrconf_records,
	  .off = FOFF(ctr_record), .def = "json",
	  .help = "source = containers: what a record holds. json: "
	  "{\"time\",\"stream\",\"log\"} and the container's metadata "
	  "under \"kubernetes\" (namespace_name, pod_name, pod_id, "
	  "container_name, from kubelet's path) or \"docker\" "
	  "(container_id, container_name, image, from config.v2.json); "
	  "message: the log text alone." },
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
	  "literal text. With dedupeOnRestart = auto the first RANDOM_INT is "
	  "a record id of 12 characters (A-Z a-z 0-9 - _) that spreads the "
	  "records over the partitions as the number does." },
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
	{ KS_FLOW, "readCoalesceMillis", KT_INT, .min = 0, .max = 10000,
	  .off = FOFF(read_coalesce_ms), .def = "100",
	  .help = "While files keep changing, read them at most once per "
	  "this many milliseconds instead of on every write, with the "
	  "write events paused meanwhile (new names are still seen at "
	  "once): fewer wake-ups at a server's pace, for at most this much "
	  "more latency (0: read on every event). Flows of more than 512 "
	  "files always read on events." },
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
	{ KS_FLOW, "followSymlinks", KT_WORD, follow_words,
	  .off = FOFF(follow_symlinks), .def = "owner",
	  .help = "Which symbolic links are followed, to files and to "
	  "directories, anywhere in the path. owner: a link owned by root, "
	  "or by the owner of what it leads to (each link of a chain is "
	  "judged so); any other is skipped with one WARN naming it. "
	  "always: every link, as the DIS Agent did. never: no link below "
	  "the pattern's literal directories (those are judged as under "
	  "owner). A directory reached twice is walked once, under its "
	  "shortest path; a link back to a directory above it is logged "
	  "once (INFO)." },
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
	  .def = "\\n", .check = conf_check_delimiter,
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
	  .off = FOFF(multiline_pattern), .def = "", .check = conf_check_regex,
	  .help = "Regular expression (PCRE2, like Java's: \\d, \\s, ...) "
	  "matching the first line of a record; the following lines that do "
	  "not match belong to it. Empty: one line, one record." },
	{ KS_FLOW, "multiLinePreset", KT_STRING,
	  .off = FOFF(multiline_preset), .def = "",
	  .check = conf_check_mlpreset,
	  .help = "Keep stack traces whole: java, python or go joins a "
	  "trace's lines into the record of its first line, by the rules "
	  "of agent.ini(5); other lines stay records of their own. Not "
	  "with multiLineStartPattern. Empty: no preset." },
	{ KS_FLOW, "multiLineFlushMillis", KT_INT, .min = 100,
	  .max = 3600000, .off = FOFF(multiline_flush_ms), .def = "3000",
	  .help = "How long the last multi-line record waits for more lines "
	  "once the file stops growing, in milliseconds." },
	{ KS_FLOW, "skipHeaderLines", KT_INT, .min = 0, .max = 1000000,
	  .off = FOFF(skip_header_lines), .def = "0",
	  .help = "Lines skipped at the start of a file read from its "
	  "beginning (CSV headers, ...)." },
	{ KS_FLOW, "fileEncoding", KT_STRING, .off = FOFF(file_encoding),
	  .def = "UTF-8", .flags = KF_NONEMPTY, .check = conf_check_encoding,
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
	  .def = "", .check = conf_check_abs_path,
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
	/* Line filters (filter.h): after framing, before the chain. */
	{ KS_FLOW, "lineIncludePattern", KT_STRING, .off = FOFF(line_include),
	  .def = "", .flags = KF_LONG, .check = filter_check_pattern,
	  .help = "Regular expression (PCRE2, like Java's) a record must "
	  "match, anywhere in it, to be sent: applied to each record once it "
	  "is framed (a multi-line record as a whole) and before "
	  "dataProcessingOptions. A record left out is not lost: its offset "
	  "is committed like a sent one's, and it is counted in "
	  "disagent_records_filtered_total. Empty: every record. Its line "
	  "may be up to 4095 characters." },
	{ KS_FLOW, "lineExcludePattern", KT_STRING, .off = FOFF(line_exclude),
	  .def = "", .flags = KF_LONG, .check = filter_check_pattern,
	  .help = "Regular expression (PCRE2): a record that matches it "
	  "anywhere is not sent (as lineIncludePattern leaves records out), "
	  "e.g. \\bDEBUG\\b. Empty: none. Its line may be up to 4095 "
	  "characters." },
	/* Rate limits (ratelimit.h). */
	{ KS_FLOW, "maxBytesPerSecond", KT_INT, .min = 0, .max = 1073741824,
	  .off = FOFF(max_bytes_per_s), .def = "0",
	  .help = "Most bytes of record data (as sent, after "
	  "dataProcessingOptions) the flow sends per second, so one runaway "
	  "log cannot take the stream's capacity: the flow reads no faster "
	  "and the rest waits in its files, nothing is dropped (a second's "
	  "worth may go at once). It holds with --once too. 0: no limit." },
	{ KS_FLOW, "maxRecordsPerSecond", KT_INT, .min = 0, .max = 10000000,
	  .off = FOFF(max_records_per_s), .def = "0",
	  .help = "Most records the flow sends per second, as "
	  "maxBytesPerSecond limits bytes. 0: no limit." },
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

const size_t conf_nkeys = ARRAY_SIZE(conf_keys);
