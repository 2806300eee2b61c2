/*
 * `disagent describe [-c FILE] [--app NAME] [STREAM...]`: what DIS says
 * about each flow's stream (or the streams named): type, status,
 * retention and every partition with its status and ranges, through all
 * DescribeStream pages.  With --app, also each partition's committed
 * checkpoint of the app and the lag behind it: the records the partition
 * holds after it.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "conf/conf.h"
#include "readback/ckpt.h"
#include "readback/cli.h"
#include "readback/cmd.h"
#include "readback/readback.h"

struct describer {
	struct cli	 cli;
	const char	**streams;
	size_t		 nstreams;
	size_t		 next;
	struct readback	*rb;
	const char	*app;		/* --app */
	struct codec_stream st;		/* --app: the stream, copied */
	int64_t		*ckpt;		/* --app: each partition's, -1 none */
	size_t		 ngot;
	int		 ckpt_rc;	/* --app: this stream's */
	struct ckpt	*ck;
	int		 rc;
};

/* One partition's checkpoint asked for. */
struct slot {
	struct describer *d;
	size_t		 i;
};

static void	describe_next(struct describer *);

/* --app: the lag of partition p behind checkpoint c into out. */
static void
lag(const struct codec_partition *p, int64_t c, char *out, size_t len)
{
	if (p->seq_first < 0 || p->seq_next < 0)
		snprintf(out, len, "-");
	else if (c < 0 || c + 1 < p->seq_first)
		/* Nothing read yet, or read before a trim: all it holds. */
		snprintf(out, len, "%" PRId64 "%s", p->seq_next - p->seq_first,
		    c >= 0 ? " (checkpoint trimmed)" : "");
	else
		snprintf(out, len, "%" PRId64, MAX(0, p->seq_next - 1 - c));
}

static void
print_stream(const char *name, const struct codec_stream *st,
    const char *app, const int64_t *ckpt)
{
	const struct codec_partition *p;
	char		 c[24], l[48];
	size_t		 i;

	/* Every text is DIS's, or a name from the command line: escaped. */
	printf("stream %s: %s, %s", ESC(name), ESC(st->info.type),
	    ESC(st->info.status));
	if (st->retention_hours >= 0)
		printf(", retention %ld h", st->retention_hours);
	printf(", %zu partition%s (%ld writable", st->nparts,
	    st->nparts == 1 ? "" : "s", st->info.writable_partitions);
	if (st->readable_partitions >= 0)
		printf(", %ld readable", st->readable_partitions);
	printf(")");
	if (st->info.id[0] != '\0')
		printf(", id %s", ESC(st->info.id));
	if (app != NULL)
		printf(", app %s", ESC(app));
	printf("\n  %-20s %-9s %-24s ", "PARTITION", "STATUS",
	    "SEQUENCE [first : next]");
	if (app != NULL)
		printf("%-20s %-12s ", "CHECKPOINT", "LAG");
	printf("HASH RANGE\n");
	for (i = 0; i < st->nparts; i++) {
		p = &st->parts[i];
		printf("  %-20s %-9s %-24s ", ESC(p->id), ESC(p->status),
		    p->seq_range[0] ? ESC(p->seq_range) : "-");
		if (app != NULL) {
			snprintf(c, sizeof(c), "%" PRId64, ckpt[i]);
			lag(p, ckpt[i], l, sizeof(l));
			printf("%-20s %-12s ", ckpt[i] >= 0 ? c : "-", l);
		}
		printf("%s\n", p->hash_range[0] ? ESC(p->hash_range) : "-");
	}
}

static int
on_described(void *arg, const struct codec_stream *st)
{
	struct describer *d = arg;

	if (d->app == NULL) {
		print_stream(d->streams[d->next], st, NULL, NULL);
		return 0;
	}
	/* Printed once the checkpoints are in. */
	codec_stream_copy(&d->st, st);
	return 0;
}

static int
on_record(void *arg, const char *partition, const struct codec_record *rec)
{
	(void)arg;
	(void)partition;
	(void)rec;
	return 1;	/* describe_only: never called */
}

/* --app: the stream is done; on to the next. */
static void
app_done(struct describer *d, int rc)
{
	if (rc != 0)
		d->rc = 1;
	else
		print_stream(d->streams[d->next], &d->st, d->app, d->ckpt);
	codec_stream_cleanup(&d->st);
	free(d->ckpt);
	d->ckpt = NULL;
	ckpt_free(d->ck);
	d->ck = NULL;
	d->next++;
	describe_next(d);
}

static void
on_ckpt(void *arg, int rc, int64_t seq, const struct rb_error *e)
{
	struct slot	*s = arg;
	struct describer *d = s->d;

	if (rc != 0 && d->ckpt_rc == 0)
		cli_error(&d->cli, "%s", e->message);
	if (rc != 0)
		d->ckpt_rc = rc;
	d->ckpt[s->i] = seq;
	free(s);
	if (++d->ngot == d->st.nparts)
		app_done(d, d->ckpt_rc);
}

static void
on_app(void *arg, int rc, bool created, const struct rb_error *e)
{
	struct describer *d = arg;
	struct slot	*s;
	size_t		 i;

	(void)created;
	if (rc == -ENOENT)
		cli_error(&d->cli, "there is no app %s", d->app);
	else if (rc != 0)
		cli_error(&d->cli, "%s", e->message);
	if (rc != 0 || d->st.nparts == 0) {
		app_done(d, rc);
		return;
	}
	for (i = 0; i < d->st.nparts; i++) {
		s = xcalloc(1, sizeof(*s));
		s->d = d;
		s->i = i;
		ckpt_get(d->ck, d->st.parts[i].id, on_ckpt, s);
	}
}

static void
on_done(void *arg, int rc, const struct rb_error *e)
{
	struct describer *d = arg;

	if (rc != 0) {
		cli_error(&d->cli, "%s", e->message);
		d->rc = 1;
	}
	readback_free(d->rb);
	d->rb = NULL;
	if (rc == 0 && d->app != NULL) {
		d->ckpt = xcalloc(d->st.nparts + 1, sizeof(*d->ckpt));
		d->ngot = 0;
		d->ckpt_rc = 0;
		d->ck = ckpt_new(&d->cli.loop, d->cli.api, d->app,
		    d->streams[d->next], NULL, false);
		ckpt_app(d->ck, false, on_app, d);
		return;
	}
	d->next++;
	describe_next(d);
}

static void
describe_next(struct describer *d)
{
	static const struct rb_callbacks cb = { on_described, on_record,
	    on_done };
	struct rb_opts	 o;

	if (d->next == d->nstreams) {
		cli_stop(&d->cli);
		return;
	}
	memset(&o, 0, sizeof(o));
	o.stream = d->streams[d->next];
	o.describe_only = true;
	d->rb = readback_new(&d->cli.loop, d->cli.api, &o, &cb, d);
	readback_start(d->rb);
}

/* Each flow's stream, once, in file order. */
static size_t
flow_streams(const struct conf *conf, const char **out)
{
	size_t	 i, j, n = 0;

	for (i = 0; i < conf->nflows; i++) {
		for (j = 0; j < n; j++)
			if (strcmp(out[j], conf->flows[i].stream) == 0)
				break;
		if (j == n)
			out[n++] = conf->flows[i].stream;
	}
	return n;
}

int
cmd_describe_main(int argc, char **argv, const char *conf_path)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "app", required_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct describer d;
	int		 ch;

	memset(&d, 0, sizeof(d));
	optind = 1;
	while ((ch = getopt_long(argc, argv, "c:h", longopts, NULL)) != -1) {
		if (ch == 'c')
			conf_path = optarg;
		else if (ch == 'A')
			d.app = optarg;
		else {
			fprintf(ch == 'h' ? stdout : stderr, "usage: disagent "
			    "describe [-c FILE] [--app NAME] [STREAM...]\n");
			return ch == 'h' ? 0 : 2;
		}
	}
	if (d.app != NULL && !codec_app_name_ok(d.app)) {
		fprintf(stderr, "disagent describe: --app %s: an app name is 1 "
		    "to %d letters, digits, _ and -\n", d.app,
		    CODEC_APP_NAME_MAX);
		return 2;
	}
	if (cli_open(&d.cli, "describe", conf_path) != 0)
		return 1;
	d.streams = xcalloc(d.cli.conf->nflows + (size_t)argc + 1,
	    sizeof(*d.streams));
	if (optind < argc) {
		for (; optind < argc; optind++)
			d.streams[d.nstreams++] = argv[optind];
	} else
		d.nstreams = flow_streams(d.cli.conf, d.streams);
	describe_next(&d);
	cli_run_close(&d.cli);
	free(d.streams);
	return d.rc;
}
