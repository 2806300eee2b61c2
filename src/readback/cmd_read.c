/*
 * `disagent read -c FILE STREAM [--partition ID]... [--from TRIM_HORIZON |
 * LATEST | SEQ | @TIME] [--follow] [--max N] [--format raw|json] [--app
 * NAME [--metadata TEXT]]`: print the records of a stream, one per line
 * (the raw bytes and a newline, or a JSON object), in sequence order per
 * partition, partition after partition, or as they come while following.
 * The per-record codecs of agent.ini (data.compress.enabled,
 * data.encrypt.enabled) are undone; a record they do not decode is an
 * error line on stderr, and reading goes on.
 *
 * With --app, each partition starts after the app's committed checkpoint
 * (the app is created if it does not exist), and what was printed is
 * committed as the app's LAST_READ every few seconds and at a clean end
 * (SIGINT, SIGTERM, EPIPE, --max, the end of the data): a record counts
 * as printed once a write of standard output that held it succeeded.
 *
 * Output is gathered here, not in stdio, and written once per turn of
 * the loop or when OUT_FLUSH bytes wait: stdio would write a full buffer
 * on its own, and a reader that took those lines and left (`| head`)
 * would then be seen at the next write with nothing counted as printed.
 * On a terminal, a record's control characters but its newlines and tabs
 * are escaped (escape.h), as less and journalctl show them: whoever can
 * write a log line must not drive the terminal of whoever reads the
 * stream (an OSC title, a screen clear).  --raw, a pipe or a file get the
 * bytes as they are.
 *
 * A reader that goes away (`| head -3`) shows as EPIPE (SIGPIPE is
 * ignored) and ends the command quietly with status 0; while following an
 * idle stream, standard output is also checked every second, so that the
 * command does not wait for the next record to notice.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/escape.h"
#include "conf/conf.h"
#include "readback/ckpt.h"
#include "readback/cli.h"
#include "readback/cmd.h"
#include "readback/readback.h"
#include "readback/readpos.h"
#include "records/reccodec.h"

#define WATCH_MS	1000	/* following: is the reader still there? */
#define MAX_PARTS	1000
#define RECORD_MAX	(64u * 1024 * 1024)	/* a record decoded */
#define COMMIT_MS	3000	/* --app: checkpoints committed this often */
#define OUT_FLUSH	(16u * 1024)	/* written at once from this many bytes:
					 * below a pipe's 64 KiB, so that
					 * the first write is taken whole */

struct reader {
	struct cli	 cli;
	struct readback	*rb;
	struct rb_opts	 o;
	const char	*parts[MAX_PARTS];
	bool		 json;
	bool		 raw;		/* --raw: no escaping on a terminal */
	bool		 tty;		/* escape: a terminal, not --raw */
	uint64_t	 max;
	uint64_t	 count;
	struct buf	 out;		/* one record as printed */
	struct buf	 pend;		/* records not written yet */
	struct reccodec	*codec;		/* data.compress/encrypt; NULL: none */
	struct buf	 wire;		/* a record's bytes as DIS has them */
	struct buf	 plain;		/* ... decoded */
	struct buf	 b64;		/* ... in base64, for --format json */
	uint64_t	 undecoded;	/* records that did not decode */
	const char	*metadata;	/* --metadata */
	struct ckpt	*ck;		/* --app: its checkpoints */
	struct readpos	*pos;		/* --app: what is printed */
	bool		 dirty;		/* printed since the last write */
	bool		 out_dead;	/* standard output failed */
	uv_check_t	 flush;
	uv_timer_t	 watch;
	bool		 ended;
	int		 rc;
};

/* The end, now: the checkpoints not committed yet are not. */
static void
quit(struct reader *r)
{
	readpos_free(r->pos);
	r->pos = NULL;
	ckpt_free(r->ck);
	r->ck = NULL;
	cli_stop(&r->cli);
}

/* --app: the last commits are done. */
static void
on_drained(void *arg, unsigned failed)
{
	struct reader	*r = arg;

	if (failed > 0) {
		cli_error(&r->cli, "%u checkpoint commit%s failed: the next run "
		    "may print some records again", failed, failed == 1 ? "" :
		    "s");
		r->rc = MAX(r->rc, 1);
	}
	quit(r);
}

static void
end(struct reader *r, int rc)
{
	if (r->ended)
		return;
	r->ended = true;
	if (rc > r->rc)
		r->rc = rc;
	uv_close((uv_handle_t *)&r->flush, NULL);
	uv_close((uv_handle_t *)&r->watch, NULL);
	readback_free(r->rb);
	r->rb = NULL;
	if (r->ck == NULL) {
		cli_stop(&r->cli);
		return;
	}
	/* What is out is the app's checkpoint before the command ends. */
	readpos_commit(r->pos);
	ckpt_drain(r->ck, on_drained, r);
}

/* stdout failed: a reader that left is the normal end of `| head`. */
static int
out_failed(struct reader *r)
{
	if (errno != EPIPE) {
		cli_error(&r->cli, "standard output: %s", strerror(errno));
		return 1;
	}
	return 0;
}

/*
 * What was printed since the last write, out: the records in it count as
 * printed.  0, or -1 once standard output failed (r->rc says how).
 */
static int
out_write(struct reader *r)
{
	if (r->out_dead)
		return -1;
	if (!r->dirty)
		return 0;
	r->dirty = false;
	if (write_all(STDOUT_FILENO, r->pend.data, r->pend.len) != 0) {
		r->out_dead = true;
		r->rc = MAX(r->rc, out_failed(r));
		return -1;
	}
	buf_reset(&r->pend);
	if (r->pos != NULL)
		readpos_printed(r->pos);
	return 0;
}

static void
flush_out(struct reader *r)
{
	if (!r->ended && out_write(r) != 0)
		end(r, 0);
}

static void
on_flush(uv_check_t *h)
{
	flush_out(container_of(h, struct reader, flush));
}

/* Following an idle stream into a pipe: end when its reader has left. */
static void
on_watch(uv_timer_t *t)
{
	struct reader	*r = container_of(t, struct reader, watch);
	struct pollfd	 pfd = { STDOUT_FILENO, 0, 0 };

	if (poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLERR | POLLHUP)))
		end(r, 0);
}

/*
 * The record's data into r->plain: its base64 decoded, then the per-record
 * codecs undone.  0, or 1 after an error line naming the record (the
 * caller goes on with the next one).
 */
static int
decode(struct reader *r, const char *partition, const struct codec_record *rec)
{
	struct buf	*t;
	int		 rc;

	/* Without codecs the bytes from base64 are the record. */
	t = r->codec == NULL ? &r->plain : &r->wire;
	buf_reset(t);
	if (codec_base64_decode(rec->data64, rec->data64_len, t) != 0)
		rc = -EBADMSG;	/* codec_parse_records() checked it already */
	else if (r->codec == NULL)
		return 0;
	else
		rc = reccodec_decode(r->codec, r->wire.data, r->wire.len,
		    RECORD_MAX, &r->plain);
	if (rc == 0)
		return 0;
	cli_error(&r->cli, "partition %s sequence number %s: %s", partition,
	    rec->seq_text, rc == -EBADMSG && r->codec == NULL ? "bad base64" :
	    reccodec_strerror(rc));
	r->undecoded++;
	/* Reported: as done as a record printed. */
	r->dirty = true;
	return 1;
}

/* The record as printed: its data and a newline, or its JSON line. */
static void
format(struct reader *r, const char *partition, const struct codec_record *rec)
{
	struct codec_record d = *rec;

	buf_reset(&r->out);
	if (!r->json) {
		if (r->tty)
			esc_buf(&r->out, r->plain.data, r->plain.len,
			    ESC_KEEP_LINES);
		else
			buf_add(&r->out, r->plain.data, r->plain.len);
		buf_addc(&r->out, '\n');
		return;
	}
	if (r->codec != NULL) {
		/* The data as it was sent, not as the codecs made it. */
		buf_reset(&r->b64);
		codec_base64(r->plain.data, r->plain.len, &r->b64);
		d.data64 = r->b64.data;
		d.data64_len = r->b64.len;
	}
	codec_record_json(&r->out, partition, &d);
}

static int
on_record(void *arg, const char *partition, const struct codec_record *rec)
{
	struct reader	*r = arg;

	if (decode(r, partition, rec) == 0) {
		format(r, partition, rec);
		buf_add(&r->pend, r->out.data, r->out.len);
		r->dirty = true;
	}
	if (r->pos != NULL)
		readpos_written(r->pos, partition, rec->seq);
	if (r->pend.len >= OUT_FLUSH && out_write(r) != 0)
		return 1;
	return ++r->count == r->max;
}

static void
on_done(void *arg, int rc, const struct rb_error *e)
{
	struct reader	*r = arg;

	if (rc < 0)
		cli_error(&r->cli, "%s", e->message);
	flush_out(r);
	end(r, rc < 0 ? 1 : 0);
}

static void
on_signal(void *arg)
{
	struct reader	*r = arg;

	/* A second signal while the last commits go: now. */
	if (r->ended && r->ck != NULL) {
		quit(r);
		return;
	}
	flush_out(r);
	end(r, 0);
}

/* --app: the app is there; read from its checkpoints. */
static void
on_app(void *arg, int rc, bool created, const struct rb_error *e)
{
	struct reader	*r = arg;

	if (r->ended)
		return;
	if (rc != 0) {
		cli_error(&r->cli, "%s", e->message);
		end(r, 1);
		return;
	}
	if (created)
		cli_error(&r->cli, "created app %s", r->o.app);
	readback_start(r->rb);
}

/* --from: TRIM_HORIZON, LATEST, a sequence number or @TIME. */
static int
parse_from(const char *s, struct rb_opts *o)
{
	char	*end;

	if (strcasecmp(s, "TRIM_HORIZON") == 0)
		o->start = RB_TRIM_HORIZON;
	else if (strcasecmp(s, "LATEST") == 0)
		o->start = RB_LATEST;
	else if (s[0] == '@') {
		o->start = RB_AT_TIME;
		return cli_parse_time(s + 1, cli_now_ms(), &o->start_ms);
	} else {
		errno = 0;
		o->start = RB_AT_SEQUENCE;
		o->start_seq = strtoll(s, &end, 10);
		if (errno != 0 || end == s || *end != '\0' || o->start_seq < 0)
			return -1;
	}
	return 0;
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: disagent read [-c FILE] STREAM [--partition ID]... "
	    "[--from TRIM_HORIZON|LATEST|SEQ|@TIME]\n"
	    "                     [--follow] [--max N] [--format raw|json] "
	    "[--raw]\n"
	    "                     [--app NAME [--metadata TEXT]]\n");
}

/* Characters of UTF-8 text (what DIS counts). */
static size_t
chars(const char *s)
{
	size_t	 n = 0;

	for (; *s != '\0'; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* --app and --metadata; 0, or -1 after the message. */
static int
check_app(const struct reader *r)
{
	if (r->o.app != NULL && !codec_app_name_ok(r->o.app)) {
		fprintf(stderr, "disagent read: --app %s: an app name is 1 to "
		    "%d letters, digits, _ and -\n", r->o.app,
		    CODEC_APP_NAME_MAX);
		return -1;
	}
	if (r->metadata != NULL && r->o.app == NULL) {
		fprintf(stderr, "disagent read: --metadata goes with --app\n");
		return -1;
	}
	if (r->metadata != NULL && chars(r->metadata) > CODEC_METADATA_MAX) {
		fprintf(stderr, "disagent read: --metadata: at most %d "
		    "characters (it has %zu)\n", CODEC_METADATA_MAX,
		    chars(r->metadata));
		return -1;
	}
	return 0;
}

/* The options into r; 0, or the exit status of a usage error. */
static int
parse_args(struct reader *r, int argc, char **argv, const char **conf_path)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "partition", required_argument, NULL, 'p' },
		{ "from", required_argument, NULL, 'F' },
		{ "follow", no_argument, NULL, 'f' },
		{ "max", required_argument, NULL, 'n' },
		{ "format", required_argument, NULL, 'T' },
		{ "app", required_argument, NULL, 'A' },
		{ "metadata", required_argument, NULL, 'M' },
		{ "raw", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char	*from = NULL;
	char		*end;
	int		 ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "c:p:fn:h", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'c':
			*conf_path = optarg;
			break;
		case 'p':
			if (r->o.npartitions == MAX_PARTS)
				goto bad;
			r->parts[r->o.npartitions++] = optarg;
			break;
		case 'F':
			from = optarg;
			break;
		case 'f':
			r->o.follow = true;
			break;
		case 'n':
			errno = 0;
			r->max = strtoull(optarg, &end, 10);
			if (errno != 0 || *end != '\0' || r->max == 0 ||
			    optarg[0] == '-')
				goto bad;
			break;
		case 'T':
			if (strcmp(optarg, "json") != 0 &&
			    strcmp(optarg, "raw") != 0)
				goto bad;
			r->json = strcmp(optarg, "json") == 0;
			break;
		case 'A':
			r->o.app = optarg;
			break;
		case 'M':
			r->metadata = optarg;
			break;
		case 'R':
			r->raw = true;
			break;
		case 'h':
			usage(stdout);
			return -1;
		default:
			goto bad;
		}
	}
	if (optind + 1 != argc)
		goto bad;
	r->o.stream = argv[optind];
	if (check_app(r) != 0)
		return 2;
	r->tty = !r->raw && isatty(STDOUT_FILENO);
	/* Following starts at the end, like tail -f without -n; an app
	 * without a checkpoint yet starts at the oldest record. */
	r->o.start = r->o.follow && r->o.app == NULL ? RB_LATEST :
	    RB_TRIM_HORIZON;
	if (from != NULL && parse_from(from, &r->o) != 0) {
		fprintf(stderr, "disagent read: --from %s: want TRIM_HORIZON, "
		    "LATEST, a sequence number, or @TIME (ISO 8601, or 10m, "
		    "2h ago)\n", from);
		return 2;
	}
	return 0;
bad:
	usage(stderr);
	return 2;
}

int
cmd_read_main(int argc, char **argv, const char *conf_path)
{
	static const struct rb_callbacks cb = { NULL, on_record, on_done };
	struct reader	*r;
	struct stat	 st;
	int		 rc;

	r = xcalloc(1, sizeof(*r));
	buf_init(&r->out);
	buf_init(&r->pend);
	buf_init(&r->wire);
	buf_init(&r->plain);
	buf_init(&r->b64);
	rc = parse_args(r, argc, argv, &conf_path);
	if (rc == 0 && cli_open(&r->cli, "read", conf_path) != 0)
		rc = 1;
	if (rc != 0) {
		free(r);
		return rc < 0 ? 0 : rc;
	}
	r->codec = reccodec_new(&(struct reccodec_opts){
	    r->cli.conf->data_compress, r->cli.conf->data_encrypt,
	    r->cli.conf->data_password });
	r->o.partitions = r->parts;
	/* Without --follow, partition after partition, in order. */
	r->o.parallel = r->o.follow ? 0 : 1;
	r->rb = readback_new(&r->cli.loop, r->cli.api, &r->o, &cb, r);
	if (r->o.app != NULL) {
		r->ck = ckpt_new(&r->cli.loop, r->cli.api, r->o.app,
		    r->o.stream, r->metadata, r->o.follow);
		r->pos = readpos_new(&r->cli.loop, r->ck, COMMIT_MS);
	}
	uv_check_init(&r->cli.loop, &r->flush);
	uv_check_start(&r->flush, on_flush);
	uv_timer_init(&r->cli.loop, &r->watch);
	if (r->o.follow && fstat(STDOUT_FILENO, &st) == 0 &&
	    (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		uv_timer_start(&r->watch, on_watch, WATCH_MS, WATCH_MS);
	cli_signals(&r->cli, on_signal, r);
	if (r->ck != NULL)
		ckpt_app(r->ck, true, on_app, r);
	else
		readback_start(r->rb);
	cli_run_close(&r->cli);
	if (fflush(stdout) != 0 && errno != EPIPE)
		rc = 1;
	rc = MAX(rc, r->rc);
	if (r->undecoded > 0) {
		fprintf(stderr, "disagent read: %" PRIu64 " record%s could not "
		    "be decoded\n", r->undecoded, r->undecoded == 1 ? "" :
		    "s");
		rc = MAX(rc, 1);
	}
	reccodec_free(r->codec);
	buf_cleanup(&r->out);
	buf_cleanup(&r->pend);
	buf_cleanup(&r->wire);
	buf_cleanup(&r->plain);
	buf_cleanup(&r->b64);
	free(r);
	return rc;
}
