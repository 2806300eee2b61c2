/*
 * disagent: tails log files and uploads their lines to Huawei Cloud DIS.
 * Command line, configuration check, and hand-off to the agent.
 */
#include "config.h"

#include <sys/resource.h>

#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/importstate.h"
#include "agent/status.h"
#include "base/escape.h"
#include "base/log.h"
#include "conf/conf.h"
#include "conf/credcmd.h"
#include "conf/importyml.h"
#include "dis/http.h"
#include "state/registry.h"
#include "readback/cmd.h"

static void
usage(FILE *out)
{
	fprintf(out,
	    "usage: disagent [-c FILE] [--once]     run (foreground, logs to stderr)\n"
	    "       disagent -t [-c FILE]            check the configuration\n"
	    "       disagent --sample-config         print a commented agent.ini\n"
	    "       disagent status [-c FILE]        offsets, bytes behind, last errors\n"
	    "       disagent describe [-c FILE] [--app NAME] [STREAM...]\n"
	    "                                        the streams and partitions in DIS\n"
	    "       disagent read [-c FILE] STREAM [--partition ID]... [--from POS]\n"
	    "                     [--follow] [--max N] [--format raw|json] [--raw]\n"
	    "                     [--app NAME [--metadata TEXT]]\n"
	    "                                        print the records of a stream\n"
	    "       disagent apps [-c FILE] [delete NAME --yes]\n"
	    "                                        list (or delete) consumer apps\n"
	    "       disagent verify [-c FILE] [--since TIME] [--raw] FILE...\n"
	    "                                        are the records of FILE in DIS?\n"
	    "       disagent --import-yml AGENT.YML  convert a DIS Agent agent.yml to\n"
	    "                                        agent.ini on stdout\n"
	    "       disagent import-state [-c FILE] [-n] CHECKPOINT-FILE\n"
	    "                                        take the positions of the DIS\n"
	    "                                        Agent's checkpoint file over\n"
	    "       disagent encrypt [--key-file FILE]  encrypt a value from stdin\n"
	    "                                        for agent.ini (asks for the key)\n"
	    "       disagent -V | -h\n"
	    "\n"
	    "  -c, --config FILE   configuration (default %s)\n"
	    "  -t, --test          check FILE and exit 0, or 1 with FILE:LINE: message\n"
	    "      --once          ship everything up to the current end of each\n"
	    "                      file, commit it, and exit (0 when all delivered)\n"
	    "  -V, --version       print the version\n"
	    "  -h, --help          this help\n",
	    SYSCONFDIR_AGENT_INI);
}

/*
 * GnuTLS initializes itself as it is loaded (its ASN.1 trees, a good part
 * of its code and of nettle's: about 1 MiB resident) unless the program
 * defines this, as gnutls.h's GNUTLS_SKIP_GLOBAL_INIT does: its
 * constructor asks the weak symbol, which ours interposes.  Nothing here
 * uses GnuTLS: libcurl does TLS with OpenSSL, and GnuTLS is only loaded
 * because Debian's libcurl links librtmp and libldap.  Those call
 * gnutls_global_init() themselves before they do TLS, as a libcurl built
 * with GnuTLS does, so skipping the implicit one takes nothing from them.
 * libmicrohttpd's constructor calls gnutls_global_init() as it loads,
 * which this cannot skip: so it is loaded only for httpListen
 * (base/mhdlib.h).
 */
int	_gnutls_global_init_skip(void);

int
_gnutls_global_init_skip(void)
{
	return 1;
}

/*
 * Every tracked file may hold a descriptor (up to maxOpenFiles per flow):
 * take the hard RLIMIT_NOFILE, not systemd's soft 1024 (nothing here uses
 * select()).
 */
static void
raise_nofile(void)
{
	struct rlimit	 rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
		log_warn("cannot raise the open-file limit to %llu: %s",
		    (unsigned long long)rl.rlim_max, strerror(errno));
}

/* disagent -t: the files read (agent.ini, then its drop-ins), each
 * with its flows. */
static void
print_files(const struct conf *c)
{
	size_t	 i, j, n;

	for (i = 0; i < c->nfiles; i++) {
		printf("  read %s:", ESC(c->files[i]));
		for (j = n = 0; j < c->nflows; j++)
			if (c->flows[j].file == c->files[i])
				printf("%s[flow:%s]", n++ ? ", " : " ",
				    ESC(c->flows[j].name));
		printf("%s\n", n == 0 ? " no flows" : "");
	}
}

/* encrypt reads no configuration: its options are all its own. */
static int
encrypt_main(int argc, char **argv, const char *conf_path)
{
	(void)conf_path;
	return credcmd_encrypt(argc, argv);
}

/* status takes the configuration our options name, and nothing else. */
static int
status_cmd(int argc, char **argv, const char *conf_path)
{
	(void)argc;
	(void)argv;
	return status_main(conf_path, stdout);
}

/*
 * The subcommands, each run with its word first and the other arguments
 * after it, and the configuration path to use when it reads none of its
 * own.  Where its word may stand (how):
 */
enum cmd_where {
	CMD_FIRST,	/* the first argument only; every argument after it
			   is its own (encrypt: no -c) */
	CMD_WORD,	/* the first argument that is not an option, ours
			   (-c FILE) before or after it: "disagent -c FILE
			   read ..." or "disagent read -c FILE ..." */
	CMD_LAST,	/* the one argument left once ours are parsed, with
			   -c FILE ours (status) */
};

static const struct command {
	const char	*name;
	enum cmd_where	 where;
	int		(*main)(int, char **, const char *conf_path);
} commands[] = {
	{ "encrypt", CMD_FIRST, encrypt_main },
	{ "describe", CMD_WORD, cmd_describe_main },
	{ "read", CMD_WORD, cmd_read_main },
	{ "verify", CMD_WORD, cmd_verify_main },
	{ "apps", CMD_WORD, cmd_apps_main },
	{ "import-state", CMD_WORD, importstate_main },
	{ "status", CMD_LAST, status_cmd },
};

/* The subcommand called word that may stand where, or NULL. */
static const struct command *
command(const char *word, enum cmd_where where)
{
	size_t	 c;

	for (c = 0; c < ARRAY_SIZE(commands); c++)
		if (commands[c].where == where &&
		    strcmp(word, commands[c].name) == 0)
			return &commands[c];
	return NULL;
}

/*
 * A subcommand standing as its first argument that is not an option
 * (CMD_WORD): run it with that word first and the other arguments after
 * it.  -1 when there is none.
 */
static int
run_command(int argc, char **argv)
{
	const struct command *cmd;
	char	**args;
	int	 i, rc;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-c") == 0 ||
		    strcmp(argv[i], "--config") == 0 ||
		    strcmp(argv[i], "--import-yml") == 0)
			i++;
		else if (argv[i][0] != '-')
			break;
	}
	if (i >= argc || (cmd = command(argv[i], CMD_WORD)) == NULL)
		return -1;
	args = xcalloc((size_t)argc + 1, sizeof(*args));
	args[0] = argv[i];
	memcpy(args + 1, argv + 1, (size_t)(i - 1) * sizeof(*args));
	memcpy(args + i, argv + i + 1, (size_t)(argc - i - 1) * sizeof(*args));
	rc = cmd->main(argc - 1, args, SYSCONFDIR_AGENT_INI);
	free(args);
	return rc;
}

/* -t: the agent of c runs (it holds its state file's lock). */
static bool
agent_running(const struct conf *c)
{
	return registry_lock_held(c->checkpoint_file);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "test", no_argument, NULL, 't' },
		{ "once", no_argument, NULL, 'o' },
		{ "sample-config", no_argument, NULL, 's' },
		{ "import-yml", required_argument, NULL, 'y' },
		{ "man-keys", no_argument, NULL, 'm' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char	*path = SYSCONFDIR_AGENT_INI;
	const struct command *cmd;
	struct conf	*conf;
	char		 err[1024];
	bool		 test = false, once = false;
	int		 ch, level, rc;

	/* Before getopt: its options are its own. */
	if (argc > 1 && (cmd = command(argv[1], CMD_FIRST)) != NULL)
		return cmd->main(argc - 1, argv + 1, SYSCONFDIR_AGENT_INI);
	if ((rc = run_command(argc, argv)) >= 0)
		return rc;
	while ((ch = getopt_long(argc, argv, "c:tVh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			path = optarg;
			break;
		case 't':
			test = true;
			break;
		case 'o':
			once = true;
			break;
		case 's':
			conf_print_sample(stdout);
			return 0;
		case 'm':
			/* The KEYS section of agent.ini(5), from the key
			 * table (the build generates the page with it). */
			conf_print_man(stdout);
			return 0;
		case 'y':
			return importyml_main(optarg, stdout, stderr);
		case 'V':
			printf("disagent %s\n", PACKAGE_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind + 1 == argc &&
	    (cmd = command(argv[optind], CMD_LAST)) != NULL)
		return cmd->main(argc - optind, argv + optind, path);
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	/* What loading the configuration warns about (sslVerify = false, a
	 * credential file readable by all) goes to the journal as WARN. */
	if (!test)
		log_setup(LOG_LVL_INFO, getenv("JOURNAL_STREAM") != NULL);
	/* -t: an httpListen in use is fine if this configuration's agent
	 * runs (it holds its port). */
	conf_agent_running = agent_running;
	/* The agent makes its state directory; -t checks that it could. */
	if ((test ? conf_load_test(path, &conf, err, sizeof(err)) :
	    conf_load_opts(path, CONF_STATE_DIRS | CONF_TLS_WARNS, &conf,
	    err, sizeof(err))) != 0) {
		fprintf(stderr, "%s\n", ESC(err));
		return 1;
	}
	if (test) {
		printf("%s: configuration OK (%zu flow%s)\n", path,
		    conf->nflows, conf->nflows == 1 ? "" : "s");
		print_files(conf);
		conf_free(conf);
		return 0;
	}
	level = log_level_parse(conf->log_level);
	log_setup(level < 0 ? LOG_LVL_INFO : level,
	    getenv("JOURNAL_STREAM") != NULL);
	/* libcurl runs with CURLOPT_NOSIGNAL: a peer closing a TLS socket
	 * must not kill us. */
	signal(SIGPIPE, SIG_IGN);
	/* Request bodies are large and short-lived: keep them in the heap
	 * instead of an mmap, page faults and munmap for every request (the
	 * memory budget bounds how much is held at once). */
	mallopt(M_MMAP_THRESHOLD, 16 * 1024 * 1024);
	mallopt(M_TRIM_THRESHOLD, 32 * 1024 * 1024);
	raise_nofile();
	rand_seed((uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32));
	if (http_global_init() != 0)
		fatalx("cannot initialise libcurl");
	log_info("disagent %s starting with %s", PACKAGE_VERSION, path);
	rc = agent_run(&conf, path, once);
	http_global_cleanup();
	conf_free(conf);
	return rc;
}
