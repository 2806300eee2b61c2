/*
 * `disagent verify [-c FILE] [--since TIME] FILE...`: are the records the
 * agent makes from each FILE in its flow's stream?
 *
 * For each stream, once it is described (its type sets the record cap):
 * the files of the flows that ship to it are framed with each flow's
 * options (conf_framer_opts, the agent's own framer) and every record
 * is counted by hash into a struct recset sized by the file's record
 * count; then every partition is read from --since on and each record of
 * the stream is looked up; then the files are framed once more, to name
 * the missing records and their offsets.  Nothing of the stream is kept,
 * so memory is the table: 16 bytes per distinct record, 4/3 over.
 *
 * Records the flow's line filters leave out (lineIncludePattern,
 * lineExcludePattern) are not expected, as the agent does not send them;
 * they are counted apart.  The files are read up to the size they had at
 * the first pass, so lines appended meanwhile do not count.  Exit 0 when nothing is missing, 1 when
 * something is (or an error stopped the check).
 *
 * On a terminal the listing's names are escaped (escape.h), as read's
 * records are; --raw, a pipe or a file get them as they are.  A missing
 * record's preview is always printable ASCII.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/escape.h"
#include "conf/conf.h"
#include "readback/cli.h"
#include "readback/cmd.h"
#include "readback/readback.h"
#include "readback/recset.h"
#include "records/convert.h"
#include "records/filter.h"
#include "records/framer.h"
#include "records/reccodec.h"
#include "wire/codec.h"

#define READ_CHUNK	(1024 * 1024)
#define EXAMPLES	5
#define PREVIEW		60
#define SLACK_MS	(5 * 60 * 1000)	/* clocks: this host's and DIS's */
#define DEFAULT_AGO_MS	(24 * 3600 * 1000LL)
#define PARALLEL	4
#define RECORD_MAX	(64u * 1024 * 1024)	/* a record decoded */

/* One FILE and one flow that ships it. */
struct pair {
	char			*path;
	const struct conf_flow	*fc;
	struct framer		*fr;
	struct filter		*filt;		/* line filters; NULL: none */
	struct convert		*conv;		/* dataProcessingOptions */
	struct buf		 conv_out;
	size_t			 max_record;
	uint64_t		 size;		/* framed up to here */
	int64_t			 born_ms;	/* creation; -1 unknown */
	uint64_t		 records;
	uint64_t		 filtered;	/* left out by the filters */
	uint64_t		 found;
	uint64_t		 missing;
	uint64_t		 ex_off[EXAMPLES];
	char			 ex[EXAMPLES][PREVIEW + 8];
	size_t			 nex;
};

struct verifier {
	struct cli	 cli;
	struct pair	*pairs;
	size_t		 npairs;
	const char	**streams;	/* each pair's stream, once */
	size_t		 nstreams;
	size_t		 next;		/* the stream being checked */
	bool		 since_given;
	int64_t		 since_ms;
	int64_t		 from_ms;	/* the stream being checked */
	struct recset	*set;
	uint64_t	 read;
	uint64_t	 other;
	struct buf	 data;
	struct reccodec	*codec;		/* data.compress/encrypt; NULL: none */
	struct buf	 plain;		/* a record decoded */
	uint64_t	 undecoded;	/* records that did not decode */
	struct readback	*rb;
	bool		 raw;		/* --raw */
	bool		 tty;		/* names escaped: a terminal, no --raw */
	int		 rc;
};

typedef void	(*record_fn)(struct verifier *, struct pair *, const char *,
		    size_t, uint64_t start);

static void	check_next(struct verifier *);
static void	count_one(struct verifier *, struct pair *, const char *,
		    size_t, uint64_t);

/*
 * The bytes the agent uploads for a framed record of pr at offset: the
 * record through the flow's processing chain (dataProcessingOptions), as
 * the agent converts it.  false: the agent sends nothing for it (a line
 * LOGTOJSON cannot parse, dead-lettered or dropped).
 */
static bool
upload_bytes(struct pair *pr, const char *data, size_t len, uint64_t offset,
    const char **out, size_t *outlen)
{
	char		 why[128];
	bool		 cut;

	*out = data;
	*outlen = len;
	if (pr->conv == NULL)
		return true;
	if (convert_apply(pr->conv, data, len, pr->path, offset,
	    pr->max_record, &pr->conv_out, &cut, why, sizeof(why)) ==
	    CONVERT_UNMATCHED) {
		if (convert_unmatched_action(pr->conv) != CONVERT_RAW)
			return false;
		convert_raw_line(pr->conv, data, len, pr->max_record,
		    &pr->conv_out, &cut);
	}
	*out = pr->conv_out.data;
	*outlen = pr->conv_out.len;
	return true;
}

/* --- framing the files -------------------------------------------------- */

struct framing {
	struct verifier	*v;
	struct pair	*pr;
	record_fn	 fn;
};

static int
on_framed(void *arg, const char *data, size_t len, uint64_t start,
    uint64_t end)
{
	struct framing	*f = arg;
	const char	*b;
	size_t		 n;

	(void)end;
	/* Left out by a line filter: the agent does not send it. */
	if (f->pr->filt != NULL && !filter_pass(f->pr->filt, data, len)) {
		if (f->fn == count_one)
			f->pr->filtered++;
		return 0;
	}
	if (upload_bytes(f->pr, data, len, start, &b, &n))
		f->fn(f->v, f->pr, b, n, start);
	return 0;
}

/* The rest of a file without its delimiter, and a pending multi-line
 * record, go out as the agent sends them once the file is quiet. */
static int
frame_end(struct pair *pr, struct framer_state *fs, const char *p,
    size_t n, uint64_t base, struct framing *f)
{
	if (pr->fc->miss_last_delimiter && n > 0 &&
	    framer_feed_last(pr->fr, fs, p, n, base, pr->max_record,
	    on_framed, f) != 0)
		return -EIO;
	return framer_flush(pr->fr, fs, on_framed, f) != 0 ? -EIO : 0;
}

/* Frame pr's file up to pr->size, calling fn per record; 0 or -errno. */
static int
frame_file(struct verifier *v, struct pair *pr, record_fn fn)
{
	struct framing	 f = { v, pr, fn };
	struct framer_state fs;
	size_t		 cap = READ_CHUNK + pr->max_record + 1, have = 0, used;
	uint64_t	 base = 0, pos = 0;
	ssize_t		 n;
	char		*buf;
	int		 fd, rc = 0;

	fd = open(pr->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = xmalloc(cap);
	framer_state_init(&fs, pr->fr, true);
	while (pos < pr->size && have < cap) {
		n = read(fd, buf + have, (size_t)MIN(cap - have, pr->size - pos));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : 0;
			break;
		}
		have += (size_t)n;
		pos += (uint64_t)n;
		used = framer_feed(pr->fr, &fs, buf, have, base,
		    pr->max_record, on_framed, &f);
		memmove(buf, buf + used, have - used);
		have -= used;
		base += used;
	}
	if (rc == 0)
		rc = frame_end(pr, &fs, buf, have, base, &f);
	framer_state_cleanup(&fs);
	free(buf);
	close(fd);
	return rc;
}

static void
count_one(struct verifier *v, struct pair *pr, const char *d, size_t n,
    uint64_t start)
{
	(void)v;
	(void)d;
	(void)n;
	(void)start;
	pr->records++;
}

static void
add_one(struct verifier *v, struct pair *pr, const char *d, size_t n,
    uint64_t start)
{
	(void)pr;
	(void)start;
	recset_add(v->set, recset_hash(d, n));
}

/* A record's head, printable, quoted, into out[PREVIEW + 8]. */
static void
preview(const char *d, size_t n, char *out)
{
	size_t	 i, o = 0;

	out[o++] = '"';
	for (i = 0; i < n && o < PREVIEW; i++)
		out[o++] = d[i] >= 0x20 && d[i] < 0x7f && d[i] != '"' ?
		    d[i] : '.';
	if (i < n) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o++] = '"';
	out[o] = '\0';
}

static void
claim_one(struct verifier *v, struct pair *pr, const char *d, size_t n,
    uint64_t start)
{
	if (recset_claim(v->set, recset_hash(d, n))) {
		pr->found++;
		return;
	}
	pr->missing++;
	if (pr->nex < EXAMPLES) {
		pr->ex_off[pr->nex] = start;
		preview(d, n, pr->ex[pr->nex++]);
	}
}

/* --- one stream --------------------------------------------------------- */

static bool
in_group(const struct verifier *v, const struct pair *pr)
{
	return strcmp(pr->fc->stream, v->streams[v->next]) == 0;
}

/* Compile pr's framer for a stream of type, and count its records. */
static int
prepare(struct verifier *v, struct pair *pr, const char *type)
{
	struct framer_opts fo;
	struct stat	 st;
	char		 err[256];
	int		 rc;

	conf_framer_opts(pr->fc, &fo);
	if (convert_new(&pr->fc->conv, fo.delim, pr->fc->keep_delimiter, NULL,
	    pr->fc->name, &pr->conv, NULL, err, sizeof(err)) != 0) {
		cli_error(&v->cli, "[%s] %s", pr->fc->name, err);
		return -EINVAL;
	}
	/* As the agent frames for its chain (flow.c). */
	if (pr->conv != NULL && convert_keeps_delimiter(pr->conv))
		fo.keep_delim = true;
	if (filter_new(pr->fc->line_include, pr->fc->line_exclude,
	    fo.keep_delim ? fo.delim : -1, &pr->filt, NULL, err,
	    sizeof(err)) != 0 ||
	    framer_new(&fo, &pr->fr, err, sizeof(err)) != 0) {
		cli_error(&v->cli, "[%s] %s", pr->fc->name, err);
		return -EINVAL;
	}
	/* What the agent frames to: under the cap once encoded. */
	pr->max_record = reccodec_plain_cap(v->codec, codec_request_cap(type,
	    (size_t)pr->fc->max_buffer_bytes));
	if (stat(pr->path, &st) != 0)
		rc = -errno;
	else {
		pr->size = (uint64_t)st.st_size;
		rc = frame_file(v, pr, count_one);
	}
	if (rc != 0)
		cli_error(&v->cli, "%s: %s", pr->path, strerror(-rc));
	return rc;
}

/* Described: frame the files into the set before reading the stream. */
static int
on_described(void *arg, const struct codec_stream *st)
{
	struct verifier	*v = arg;
	struct pair	*pr;
	uint64_t	 total = 0;
	int		 rc;

	for (pr = v->pairs; pr < v->pairs + v->npairs; pr++) {
		if (!in_group(v, pr))
			continue;
		if ((rc = prepare(v, pr, st->info.type)) != 0)
			return rc;
		total += pr->records;
	}
	v->set = recset_new(total);
	for (pr = v->pairs; pr < v->pairs + v->npairs; pr++)
		if (in_group(v, pr) && (rc = frame_file(v, pr, add_one)) != 0) {
			cli_error(&v->cli, "%s: %s", pr->path, strerror(-rc));
			return rc;
		}
	return 0;
}

static int
on_record(void *arg, const char *partition, const struct codec_record *rec)
{
	struct verifier	*v = arg;

	const struct buf *d = &v->data;
	int		 rc;

	buf_reset(&v->data);
	if (codec_base64_decode(rec->data64, rec->data64_len, &v->data) != 0)
		return 0;	/* checked by the parse already */
	v->read++;
	if (v->codec != NULL) {
		/* As the agent sent it: the per-record codecs undone. */
		rc = reccodec_decode(v->codec, v->data.data, v->data.len,
		    RECORD_MAX, &v->plain);
		if (rc != 0) {
			cli_error(&v->cli, "partition %s sequence number %s: %s",
			    partition, rec->seq_text, reccodec_strerror(rc));
			v->undecoded++;
			v->other++;
			return 0;
		}
		d = &v->plain;
	}
	if (!recset_seen(v->set, recset_hash(d->data, d->len)))
		v->other++;
	return 0;
}

static void
iso_time(int64_t ms, char out[32])
{
	time_t		 t = (time_t)(ms / 1000);
	struct tm	 tm;

	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void
report_pair(struct verifier *v, struct pair *pr)
{
	size_t	 i;
	char	*path = v->tty ? esc_new(pr->path) : xstrdup(pr->path);

	printf("%s (flow %s, stream %s): %" PRIu64 " records, %" PRIu64
	    " found, %" PRIu64 " missing", path, pr->fc->name,
	    pr->fc->stream, pr->records, pr->found, pr->missing);
	free(path);
	if (pr->filtered > 0)
		printf(", %" PRIu64 " left out by the line filters (not "
		    "sent)", pr->filtered);
	putchar('\n');
	for (i = 0; i < pr->nex; i++)
		printf("  missing: offset %" PRIu64 ": %s\n", pr->ex_off[i],
		    pr->ex[i]);
	if (pr->missing > 0)
		v->rc = 1;
}

/* The stream is read: name what is missing from each file. */
static void
report(struct verifier *v)
{
	struct recset_counts c;
	struct pair	*pr;
	char		 since[32];
	int		 rc;

	recset_counts(v->set, &c);
	for (pr = v->pairs; pr < v->pairs + v->npairs; pr++) {
		if (!in_group(v, pr))
			continue;
		if ((rc = frame_file(v, pr, claim_one)) != 0) {
			cli_error(&v->cli, "%s: %s", pr->path, strerror(-rc));
			v->rc = 1;
			continue;
		}
		report_pair(v, pr);
	}
	iso_time(v->from_ms, since);
	printf("stream %s: %" PRIu64 " records read since %s, %" PRIu64
	    " extra copies, %" PRIu64 " not from these files\n",
	    v->streams[v->next], v->read, since, c.extra, v->other);
	if (v->undecoded > 0)
		printf("%" PRIu64 " records of the stream could not be decoded "
		    "(data.compress.enabled, data.encrypt.enabled)\n",
		    v->undecoded);
	if (c.missing > 0)
		printf("%" PRIu64 " of %" PRIu64 " records missing: not yet "
		    "sent (see disagent status), or rejected by DIS (see the "
		    "dead-letter file)\n", c.missing, c.expected);
}

static void
on_done(void *arg, int rc, const struct rb_error *e)
{
	struct verifier	*v = arg;
	struct pair	*pr;

	if (rc != 0) {
		if (e->message[0] != '\0')
			cli_error(&v->cli, "%s", e->message);
		v->rc = 1;
	} else
		report(v);
	for (pr = v->pairs; pr < v->pairs + v->npairs; pr++) {
		framer_free(pr->fr);
		pr->fr = NULL;
		filter_free(pr->filt);
		pr->filt = NULL;
		convert_free(pr->conv);
		pr->conv = NULL;
		buf_cleanup(&pr->conv_out);
	}
	recset_free(v->set);
	v->set = NULL;
	readback_free(v->rb);
	v->rb = NULL;
	v->next++;
	check_next(v);
}

/* Where reading starts: --since, or a while before the files began. */
static int64_t
start_ms(const struct verifier *v)
{
	const struct pair *pr;
	int64_t		 from = INT64_MAX;

	if (v->since_given)
		return v->since_ms;
	for (pr = v->pairs; pr < v->pairs + v->npairs; pr++)
		if (in_group(v, pr))
			from = MIN(from, pr->born_ms);
	if (from < 0 || from == INT64_MAX)
		return cli_now_ms() - DEFAULT_AGO_MS;
	return from - SLACK_MS;
}

static void
check_next(struct verifier *v)
{
	static const struct rb_callbacks cb = { on_described, on_record,
	    on_done };
	struct rb_opts	 o;

	if (v->next == v->nstreams) {
		cli_stop(&v->cli);
		return;
	}
	v->read = v->other = v->undecoded = 0;
	v->from_ms = start_ms(v);
	memset(&o, 0, sizeof(o));
	o.stream = v->streams[v->next];
	o.start = RB_AT_TIME;
	o.start_ms = v->from_ms;
	o.parallel = PARALLEL;
	v->rb = readback_new(&v->cli.loop, v->cli.api, &o, &cb, v);
	readback_start(v->rb);
}

/* --- setup -------------------------------------------------------------- */

/* When the file was created (statx birth time), or -1. */
static int64_t
born_ms(const char *path)
{
	struct statx	 sx;

	if (statx(AT_FDCWD, path, 0, STATX_BTIME, &sx) != 0 ||
	    !(sx.stx_mask & STATX_BTIME))
		return -1;
	return (int64_t)sx.stx_btime.tv_sec * 1000 +
	    sx.stx_btime.tv_nsec / 1000000;
}

static void
add_stream(struct verifier *v, const char *stream)
{
	size_t	 i;

	for (i = 0; i < v->nstreams; i++)
		if (strcmp(v->streams[i], stream) == 0)
			return;
	v->streams[v->nstreams++] = stream;
}

/* The pairs of FILE: every enabled flow whose scan would pick it. */
static int
add_file(struct verifier *v, const char *file)
{
	const struct conf *conf = v->cli.conf;
	struct stat	 st;
	char		 abs[PATH_MAX];
	size_t		 i, n = 0;
	struct pair	*pr;

	if (realpath(file, abs) == NULL || stat(abs, &st) != 0) {
		cli_error(&v->cli, "%s: %s", file, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		cli_error(&v->cli, "%s: not a regular file", file);
		return -1;
	}
	for (i = 0; i < conf->nflows; i++) {
		if (!conf->flows[i].enable ||
		    !conf_flow_matches(&conf->flows[i], abs))
			continue;
		pr = &v->pairs[v->npairs++];
		memset(pr, 0, sizeof(*pr));
		pr->path = xstrdup(abs);
		pr->fc = &conf->flows[i];
		pr->born_ms = born_ms(abs);
		add_stream(v, pr->fc->stream);
		n++;
	}
	if (n == 0) {
		cli_error(&v->cli, "%s: no enabled flow's filePattern matches "
		    "it", abs);
		return -1;
	}
	return 0;
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: disagent verify [-c FILE] [--since TIME] [--raw] "
	    "FILE...\n"
	    "  TIME: ISO 8601 (2026-12-01T07:00:00Z) or that long ago (10m, "
	    "2h, 1d)\n");
}

/* The options into v; 0, or the exit status of a usage error. */
static int
parse_args(struct verifier *v, int argc, char **argv, const char **conf_path)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "since", required_argument, NULL, 's' },
		{ "raw", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int	 ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "c:h", longopts, NULL)) != -1) {
		if (ch == 'c')
			*conf_path = optarg;
		else if (ch == 'R')
			v->raw = true;
		else if (ch == 's') {
			v->since_given = true;
			if (cli_parse_time(optarg, cli_now_ms(),
			    &v->since_ms) != 0) {
				fprintf(stderr, "disagent verify: --since %s: "
				    "want ISO 8601 or 10m, 2h, 1d\n", optarg);
				return 2;
			}
		} else {
			usage(ch == 'h' ? stdout : stderr);
			return ch == 'h' ? -1 : 2;
		}
	}
	if (optind == argc) {
		usage(stderr);
		return 2;
	}
	v->tty = !v->raw && isatty(STDOUT_FILENO);
	return 0;
}

int
cmd_verify_main(int argc, char **argv, const char *conf_path)
{
	struct verifier	*v;
	size_t		 i;
	int		 rc;

	v = xcalloc(1, sizeof(*v));
	buf_init(&v->data);
	buf_init(&v->plain);
	rc = parse_args(v, argc, argv, &conf_path);
	if (rc == 0 && cli_open(&v->cli, "verify", conf_path) != 0)
		rc = 1;
	if (rc != 0) {
		free(v);
		return rc < 0 ? 0 : rc;
	}
	v->codec = reccodec_new(&(struct reccodec_opts){
	    v->cli.conf->data_compress, v->cli.conf->data_encrypt,
	    v->cli.conf->data_password });
	v->pairs = xcalloc(((size_t)argc + 1) * (v->cli.conf->nflows + 1),
	    sizeof(*v->pairs));
	v->streams = xcalloc(v->cli.conf->nflows + 1, sizeof(*v->streams));
	for (i = (size_t)optind; i < (size_t)argc; i++)
		if (add_file(v, argv[i]) != 0)
			v->rc = 1;
	/* No signal handlers: SIGINT may end a read-only check at once. */
	check_next(v);
	cli_run_close(&v->cli);
	rc = v->rc;
	for (i = 0; i < v->npairs; i++)
		free(v->pairs[i].path);
	free(v->pairs);
	free(v->streams);
	buf_cleanup(&v->data);
	buf_cleanup(&v->plain);
	reccodec_free(v->codec);
	free(v);
	return rc;
}
