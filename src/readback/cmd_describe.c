/*
 * `disagent describe [-c FILE] [STREAM...]`: what DIS says about each
 * flow's stream (or the streams named): type, status, retention and every
 * partition with its status and ranges, through all DescribeStream pages.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"
#include "readback/cli.h"
#include "readback/cmd.h"
#include "readback/readback.h"

struct describer {
	struct cli	 cli;
	const char	**streams;
	size_t		 nstreams;
	size_t		 next;
	struct readback	*rb;
	int		 rc;
};

static void	describe_next(struct describer *);

static void
print_stream(const char *name, const struct codec_stream *st)
{
	const struct codec_partition *p;
	size_t		 i;

	printf("stream %s: %s, %s", name, st->info.type, st->info.status);
	if (st->retention_hours >= 0)
		printf(", retention %ld h", st->retention_hours);
	printf(", %zu partition%s (%ld writable", st->nparts,
	    st->nparts == 1 ? "" : "s", st->info.writable_partitions);
	if (st->readable_partitions >= 0)
		printf(", %ld readable", st->readable_partitions);
	printf(")");
	if (st->info.id[0] != '\0')
		printf(", id %s", st->info.id);
	printf("\n  %-20s %-9s %-24s %s\n", "PARTITION", "STATUS",
	    "SEQUENCE [first : next]", "HASH RANGE");
	for (i = 0; i < st->nparts; i++) {
		p = &st->parts[i];
		printf("  %-20s %-9s %-24s %s\n", p->id, p->status,
		    p->seq_range[0] ? p->seq_range : "-",
		    p->hash_range[0] ? p->hash_range : "-");
	}
}

static int
on_described(void *arg, const struct codec_stream *st)
{
	struct describer *d = arg;

	print_stream(d->streams[d->next], st);
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
		else {
			fprintf(ch == 'h' ? stdout : stderr, "usage: disagent "
			    "describe [-c FILE] [STREAM...]\n");
			return ch == 'h' ? 0 : 2;
		}
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
