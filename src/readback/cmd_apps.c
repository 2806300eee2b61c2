/*
 * `disagent apps [-c FILE]`: the consumer apps of the project, through
 * every ListApps page (spec/dis-api.md section 10), with when each was
 * made and the streams it has checkpoints on.  `disagent apps delete NAME
 * --yes`: delete one app and its checkpoints; without --yes it only says
 * what it would do.  Calls are retried a few times on network errors,
 * server errors and throttling.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/escape.h"
#include "readback/cli.h"
#include "readback/cmd.h"
#include "readback/rbcall.h"
#include "wire/codec_read.h"

#define PAGE	100		/* ListApps' largest limit */
#define MAX_APPS 100000		/* paging ends here, whatever DIS says */

struct apps {
	struct cli	 cli;
	const char	*del;		/* delete this app; NULL: list */
	struct codec_apps list;
	uv_timer_t	 timer;		/* retries */
	unsigned	 attempt;
	unsigned	 throttles;
	int		 rc;
};

static void	call(struct apps *);

static void
finish(struct apps *a, int rc)
{
	a->rc = rc;
	uv_close((uv_handle_t *)&a->timer, NULL);
	cli_stop(&a->cli);
}

static void
print_list(const struct apps *a)
{
	const struct codec_app *p;
	struct tm	 tm;
	time_t		 t;
	char		 when[32], *streams;

	if (a->list.napps == 0) {
		printf("no apps\n");
		return;
	}
	printf("%-24s %-24s %-20s %s\n", "APP", "ID", "CREATED", "STREAMS");
	for (p = a->list.apps; p < a->list.apps + a->list.napps; p++) {
		strcpy(when, "-");
		if (p->created_ms >= 0) {
			t = (time_t)(p->created_ms / 1000);
			gmtime_r(&t, &tm);
			strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
		}
		/* DIS's texts, escaped; the list of streams may be long. */
		streams = esc_new(p->streams[0] ? p->streams : "-");
		printf("%-24s %-24s %-20s %s\n", ESC(p->name),
		    p->id[0] ? ESC(p->id) : "-", when, streams);
		free(streams);
	}
}

/* A ListApps page: the next one, or the list. */
static void
got_page(struct apps *a, const struct http_response *r, struct rb_error *e)
{
	size_t	 before = a->list.napps;

	if (codec_parse_apps(r->body, r->bodylen, &a->list) != 0) {
		(void)rb_unreadable("ListApps", e);
		cli_error(&a->cli, "%s", e->message);
		finish(a, 1);
		return;
	}
	/* A page that adds no app ends the paging, whatever it says. */
	if (a->list.has_more && a->list.napps > before &&
	    a->list.napps < MAX_APPS) {
		call(a);
		return;
	}
	print_list(a);
	finish(a, 0);
}

static void
on_timer(uv_timer_t *t)
{
	call(container_of(t, struct apps, timer));
}

static void
on_reply(const struct http_response *r, void *arg)
{
	struct apps	*a = arg;
	struct rb_error	 e;
	uint64_t	 delay;
	char		 what[256];
	enum rb_act	 act;

	if (a->cli.stopping)
		return;
	if (a->del != NULL)
		snprintf(what, sizeof(what), "DeleteApp %s", a->del);
	else
		snprintf(what, sizeof(what), "ListApps");
	act = rb_classify(r, what, &e);
	if (act != RB_OK && rb_backoff(act, false, &a->attempt, &a->throttles,
	    &delay)) {
		uv_timer_start(&a->timer, on_timer, delay, 0);
		return;
	}
	a->attempt = a->throttles = 0;
	if (act != RB_OK) {
		if (strcmp(e.code, "DIS.4332") == 0)
			cli_error(&a->cli, "there is no app %s", a->del);
		else
			cli_error(&a->cli, "%s", e.message);
		finish(a, 1);
	} else if (a->del != NULL) {
		printf("deleted app %s and its checkpoints\n", a->del);
		finish(a, 0);
	} else
		got_page(a, r, &e);
}

static void
call(struct apps *a)
{
	struct buf	 q;
	char		*path;
	int		 rc;

	buf_init(&q);
	if (a->del != NULL) {
		path = xasprintf("apps/%s/", a->del);
		rc = rb_call(a->cli.api, "DELETE", path, NULL, NULL, on_reply,
		    a);
		free(path);
	} else {
		buf_printf(&q, "limit=%d", PAGE);
		if (a->list.napps > 0)
			buf_printf(&q, "&start_app_name=%s",
			    a->list.apps[a->list.napps - 1].name);
		rc = rb_get(a->cli.api, "apps/", q.data, on_reply, a);
	}
	buf_cleanup(&q);
	if (rc != 0) {
		cli_error(&a->cli, "cannot send the request: %s",
		    strerror(-rc));
		finish(a, 1);
	}
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: disagent apps [-c FILE]\n"
	    "       disagent apps [-c FILE] delete NAME --yes\n");
}

/* The options into a; 0, or the exit status of a usage error. */
static int
parse_args(struct apps *a, int argc, char **argv, const char **conf_path)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "yes", no_argument, NULL, 'y' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool	 yes = false;
	int	 ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "c:h", longopts, NULL)) != -1) {
		if (ch == 'c')
			*conf_path = optarg;
		else if (ch == 'y')
			yes = true;
		else {
			usage(ch == 'h' ? stdout : stderr);
			return ch == 'h' ? -1 : 2;
		}
	}
	if (optind == argc && !yes)
		return 0;
	if (optind + 2 != argc || strcmp(argv[optind], "delete") != 0) {
		usage(stderr);
		return 2;
	}
	a->del = argv[optind + 1];
	if (!codec_app_name_ok(a->del)) {
		fprintf(stderr, "disagent apps: %s: an app name is 1 to %d "
		    "letters, digits, _ and -\n", a->del, CODEC_APP_NAME_MAX);
		return 2;
	}
	if (!yes) {
		fprintf(stderr, "disagent apps: delete %s removes the app and "
		    "every checkpoint it committed; add --yes to do it\n",
		    a->del);
		return 2;
	}
	return 0;
}

int
cmd_apps_main(int argc, char **argv, const char *conf_path)
{
	struct apps	*a;
	int		 rc;

	a = xcalloc(1, sizeof(*a));
	rc = parse_args(a, argc, argv, &conf_path);
	if (rc == 0 && cli_open(&a->cli, "apps", conf_path) != 0)
		rc = 1;
	if (rc != 0) {
		free(a);
		return rc < 0 ? 0 : rc;
	}
	uv_timer_init(&a->cli.loop, &a->timer);
	call(a);
	cli_run_close(&a->cli);
	rc = a->rc;
	codec_apps_cleanup(&a->list);
	free(a);
	return rc;
}
