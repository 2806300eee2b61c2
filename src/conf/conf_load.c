/*
 * Loading agent.ini (conf.h): the file, then its drop-ins
 * (conf_dropin.c), then the checks of the whole (conf_finish.c).  At the
 * top of conf/: the parser (conf.c) and the rest call nothing here.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "conf/conf.h"
#include "conf/conf_int.h"

int
conf_load_opts(const char *path, unsigned opts, struct conf **out, char *err,
    size_t errlen)
{
	struct parse	 p;
	FILE		*fp;
	int		 rc;

	*out = NULL;
	memset(&p, 0, sizeof(p));
	p.opts = opts;
	p.path = path;
	p.err = err;
	p.errlen = errlen;
	p.cur = CUR_NONE;
	p.agent.keyline = xcalloc(conf_nkeys, sizeof(int));
	p.conf = xcalloc(1, sizeof(*p.conf));
	p.conf->path = xstrdup(path);
	conf_apply_defaults(p.conf, KS_AGENT);
	fp = fopen(path, "r");
	if (fp == NULL) {
		conf_fail(&p, 0, "%s", strerror(errno));
		goto fail;
	}
	rc = conf_parse_file(&p, path, fp);
	fclose(fp);
	if (rc == 0)
		rc = conf_read_dropins(&p);
	p.path = p.conf->files[0];
	buf_cleanup(&p.stash);
	if (rc != 0 || conf_finish(&p) != 0)
		goto fail;
	conf_parse_free(&p);
	*out = p.conf;
	return 0;
fail:
	buf_cleanup(&p.stash);
	conf_parse_free(&p);
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
	return conf_load_opts(path, CONF_CHECK_ONLY | CONF_FS_CHECKS |
	    CONF_TLS_WARNS, out, err, errlen);
}
