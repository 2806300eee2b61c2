/*
 * The checks that need the whole file (conf_int.h): required keys, keys
 * that go together or exclude each other, and where the credentials come
 * from.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/listenaddr.h"
#include "base/log.h"
#include "base/mhdlib.h"
#include "conf/cleanconf.h"
#include "conf/conf_int.h"
#include "conf/cred.h"
#include "conf/ctrconf.h"
#include "conf/statedir.h"
#include "records/chain.h"
#include "records/logparse.h"
#include "records/reccodec.h"

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

	for (k = conf_keys; k < conf_keys + conf_nkeys; k++) {
		if (k->sect != sect || !(k->flags & KF_REQUIRED) ||
		    s->keyline[k - conf_keys] != 0 || env_set(k))
			continue;
		if (k->env != NULL)
			return conf_fail(p, s->line, "%s is missing required "
			    "key '%s' (or set %s)", label, k->name, k->env);
		return conf_fail(p, s->line, "%s is missing required key '%s'",
		    label, k->name);
	}
	return 0;
}

/*
 * The processing chain's keys together (dataProcessingOptions and its
 * keys, the line filters, partitionKeyOption), compiled by chain_new as
 * the flow will compile them: the error names the line of the key at
 * fault, or of dataProcessingOptions (or the section) when that key is
 * missing.  The record codec is left out: its keys are [agent] keys,
 * finished after the flows (finish_agent: environment overrides, then
 * libsnappy checked before anything loads it).
 */
static int
check_chain(struct parse *p, struct conf_flow *f, struct sect *s,
    const char *label)
{
	struct chain_opts o;
	struct chain	*c;
	const char	*key = NULL;
	char		 why[LINE_BUF];
	int		 line;

	conf_chain_opts(p->conf, f, &o);
	o.codec = (struct reccodec_opts){ false, false, NULL };
	if (chain_new(&o, &c, &key, why, sizeof(why)) == 0) {
		chain_free(c);
		return 0;
	}
	line = key != NULL ? conf_key_line(s, key) : 0;
	if (line == 0)
		line = conf_key_line(s, "dataProcessingOptions");
	return conf_fail(p, line != 0 ? line : s->line, "%s: %s", label, why);
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

	if (!f->file_appendable && conf_key_line(s, "maxFileCheckingMillis") == 0)
		f->max_file_checking_ms = WHOLE_FILE_CHECKING_MS;
	bad = cleanconf_check(f, (p->opts & CONF_FS_CHECKS) != 0, &key, why, sizeof(why));
	if (bad == NULL)
		return 0;
	line = conf_key_line(s, key);
	if (line == 0)
		line = conf_key_line(s, "isFileAppendable");
	return conf_fail(p, line != 0 ? line : s->line, "%s: %s", label, bad);
}

static int
check_flow(struct parse *p, size_t i)
{
	struct conf_flow	*f = &p->conf->flows[i];
	struct sect		*s = &p->flows[i];
	char			 label[FLOW_NAME_MAX + 8];

	snprintf(label, sizeof(label), "[flow:%s]", f->name);
	if (check_required(p, KS_FLOW, s, label) != 0 ||
	    conf_check_source(p, f, s, label) != 0)
		return -1;
	if (conf_key_line(s, "DISStream") == 0 && f->stream_id[0] == '\0')
		return conf_fail(p, s->line, "%s is missing required key "
		    "'DISStream' (or set streamId)", label);
	if (f->retry_max_backoff_ms < f->retry_initial_backoff_ms)
		return conf_fail(p, MAX(conf_key_line(s, "retryMaxBackoffMillis"),
		    conf_key_line(s, "retryInitialBackoffMillis")),
		    "retryMaxBackoffMillis = %lld is less than "
		    "retryInitialBackoffMillis = %lld",
		    f->retry_max_backoff_ms, f->retry_initial_backoff_ms);
	if (f->multiline_pattern[0] != '\0' && f->multiline_preset[0] != '\0')
		return conf_fail(p, MAX(conf_key_line(s, "multiLinePreset"),
		    conf_key_line(s, "multiLineStartPattern")), "%s: "
		    "multiLinePreset and multiLineStartPattern are both set: "
		    "a record starts by one rule, keep one of them", label);
	if (check_whole(p, f, s, label) != 0)
		return -1;
	return check_chain(p, f, s, label);
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

	for (k = conf_keys; k < conf_keys + conf_nkeys && n < max; k++) {
		if (k->sect != KS_AGENT || k->type != KT_STRING ||
		    !((k->flags & KF_DIR) || cred_decryptable(k->name)))
			continue;
		it = &items[n++];
		memset(it, 0, sizeof(*it));
		it->key = k->name;
		it->value = str_at(p->conf, k);
		it->line = p->agent.keyline[k - conf_keys];
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

	for (k = conf_keys; k < conf_keys + conf_nkeys; k++) {
		if (k->sect != KS_AGENT || !static_key(k))
			continue;
		line = p->agent.keyline[k - conf_keys];
		if (is_ecs(p->conf) && (*str_at(p->conf, k))[0] != '\0')
			return line != 0 && !env_set(k) ? conf_fail(p, line,
			    "%s is not used with credentialSource = "
			    "ecs-metadata: remove it", k->name) :
			    conf_fail(p, 0, "%s is set, but "
			    "credentialSource = ecs-metadata takes the keys "
			    "from the metadata service: unset it", k->env);
		if (!is_ecs(p->conf) && (k->flags & KF_CRED) &&
		    (*str_at(p->conf, k))[0] == '\0')
			return conf_fail(p, p->agent.line, "[agent] is missing "
			    "required key '%s' (or set %s, or give the systemd "
			    "credential %s)", k->name, k->env, k->name);
	}
	k = conf_key_find(KS_AGENT, "data.encrypt.enabled", false);
	if (p->conf->data_encrypt && p->conf->data_password[0] == '\0')
		return conf_fail(p, p->agent.keyline[k - conf_keys],
		    "data.encrypt.enabled needs data.password (or set "
		    "DIS_DATA_PASSWORD, or give the systemd credential "
		    "data.password)");
	k = conf_key_find(KS_AGENT, "PROXY_PASSWORD", false);
	if (p->conf->proxy_password[0] != '\0' &&
	    p->conf->proxy_username[0] == '\0')
		return conf_fail(p, p->agent.keyline[k - conf_keys],
		    "PROXY_PASSWORD needs PROXY_USERNAME");
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
		log_warn("%s: the systemd credentials in %s cannot be read "
		    "here (systemd hides them from ExecReload=): ak, sk and "
		    "the encrypted values are not checked", p->path,
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

	for (k = conf_keys; k < conf_keys + conf_nkeys; k++) {
		if (!env_set(k))
			continue;
		if (conf_key_store(c, k, getenv(k->env), why, sizeof(why)) != 0)
			return conf_fail(p, 0, "%s (from %s)", why, k->env);
	}
	if (finish_credentials(p) != 0)
		return -1;
	k = conf_key_find(KS_AGENT, "data.compress.enabled", false);
	/* Loaded only when needed (reccodec.c): missing, say so here. */
	if (c->data_compress && !reccodec_snappy_ok(why, sizeof(why)))
		return conf_fail(p, p->agent.keyline[k - conf_keys],
		    "data.compress.enabled needs libsnappy (Debian: "
		    "libsnappy1v5, EL: snappy): %s", why);
	/* Loaded only when needed (mhdlib.h): missing, say so here. */
	k = conf_key_find(KS_AGENT, "httpListen", false);
	if (c->http_listen[0] != '\0' && mhdlib_get(why, sizeof(why)) == NULL)
		return conf_fail(p, p->agent.keyline[k - conf_keys],
		    "httpListen needs libmicrohttpd: %s", why);
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

/* --- the agent's own directories (statedir.h) --------------------------- */

/*
 * The directory of the file key names (checkpointFile, deadLetterFile):
 * checked (-t), or made when missing (the start).  The message names the
 * key's line, or the [agent] line when the key is left at its default.
 */
static int
check_dir_of(struct parse *p, const char *key, const char *file)
{
	const struct key	*k = conf_key_find(KS_AGENT, key, false);
	const char		*bad;
	char			 why[LINE_BUF];
	int			 line;

	bad = statedir_check(file, (p->opts & CONF_STATE_DIRS) != 0, why,
	    sizeof(why));
	if (bad == NULL)
		return 0;
	line = k != NULL ? p->agent.keyline[k - conf_keys] : 0;
	if (line != 0)
		return conf_fail(p, line, "%s = %s: %s", key, file, bad);
	return conf_fail(p, p->agent.line, "%s is not set, and its default "
	    "%s cannot be used: %s; set %s to a file in a directory the "
	    "agent may write", key, file, bad, key);
}

static int
check_state_dirs(struct parse *p)
{
	struct conf	*c = p->conf;

	if (!(p->opts & (CONF_FS_CHECKS | CONF_STATE_DIRS)))
		return 0;
	if (check_dir_of(p, "checkpointFile", c->checkpoint_file) != 0)
		return -1;
	/* Empty: deadletter.jsonl and spool/ beside checkpointFile, checked
	 * above.  The spool directory itself is made at a stop (spool.c):
	 * what must be there is where it goes. */
	if (c->dead_letter_file[0] != '\0' &&
	    check_dir_of(p, "deadLetterFile", c->dead_letter_file) != 0)
		return -1;
	if (c->spool_dir[0] == '\0' || c->spool_max_bytes == 0)
		return 0;
	return check_dir_of(p, "spoolDirectory", c->spool_dir);
}

bool	(*conf_agent_running)(const struct conf *);

/*
 * -t: httpListen can be bound now, or is in use by the running agent of
 * this configuration (the check before a reload runs beside it; which
 * address that agent holds is not known: a reload that cannot bind a new
 * one keeps the old, with an ERROR).
 */
static int
check_listen(struct parse *p)
{
	const struct key	*k;
	int			 r;

	if (!(p->opts & CONF_FS_CHECKS) || p->conf->http_listen[0] == '\0')
		return 0;
	r = listenaddr_probe(p->conf->http_listen);
	if (r == 0 || (r == -EADDRINUSE && conf_agent_running != NULL &&
	    conf_agent_running(p->conf)))
		return 0;
	k = conf_key_find(KS_AGENT, "httpListen", false);
	return conf_fail(p, p->agent.keyline[k - conf_keys], "httpListen = %s: "
	    "cannot be bound: %s", p->conf->http_listen, strerror(-r));
}

/* --- weak transport ------------------------------------------------------ */

/*
 * What a configuration leaves open on the wire, said once per load that
 * asks (CONF_TLS_WARNS: the start, -t, a reload), naming the key's line:
 * the agent still runs as configured, but nobody is left to find out
 * from a packet capture.
 */
static void
warn_weak_tls(struct parse *p)
{
	const struct conf	*c = p->conf;
	const struct key	*k;

	k = conf_key_find(KS_AGENT, "sslVerify", false);
	if (!c->ssl_verify && k != NULL)
		log_warn("%s:%d: sslVerify = false: the endpoint's certificate "
		    "and host name are not checked, so anyone on the path can "
		    "read and change what is sent; give a private CA with "
		    "caFile instead", p->path, p->agent.keyline[k - conf_keys]);
	k = conf_key_find(KS_AGENT, "endpoint", false);
	if (strncmp(c->endpoint, "http://", 7) == 0 && k != NULL)
		log_warn("%s:%d: endpoint = %s: every record is sent in clear "
		    "text, readable and changeable by anyone on the path; use "
		    "https://", p->path, p->agent.keyline[k - conf_keys],
		    c->endpoint);
}

/* Whole-file checks once every line has been read. */
/* disagent -t: no container read by two flows (ctrconf.h). */
static int
check_containers_overlap(struct parse *p)
{
	char	 why[1500];

	if (!(p->opts & CONF_FS_CHECKS) || ctrconf_check_overlap(p->conf->flows,
	    p->conf->nflows, why, sizeof(why)) == 0)
		return 0;
	return conf_fail(p, 0, "%s", why);
}

int
conf_finish(struct parse *p)
{
	const char	*main_path = p->path;
	size_t		 i;
	int		 rc = 0;

	if (p->agent.line == 0)
		return conf_fail(p, 0, "missing [agent] section");
	if (check_required(p, KS_AGENT, &p->agent, "[agent]") != 0)
		return -1;
	if (p->conf->nflows == 0)
		return conf_fail(p, 0, "no [flow:NAME] section");
	/* A flow's errors name the file it is in (agent.ini or a drop-in). */
	for (i = 0; rc == 0 && i < p->conf->nflows; i++) {
		p->path = p->flows[i].path;
		rc = check_flow(p, i);
	}
	p->path = main_path;
	if (rc != 0 || conf_check_overlap(p) != 0 ||
	    check_containers_overlap(p) != 0 || finish_agent(p) != 0 ||
	    check_state_dirs(p) != 0 || check_listen(p) != 0)
		return -1;
	if (p->opts & CONF_TLS_WARNS)
		warn_weak_tls(p);
	return 0;
}
