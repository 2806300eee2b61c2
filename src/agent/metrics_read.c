/*
 * The last-error gauges, read back from the metrics file (metrics.h) for
 * "disagent status": just enough of the text exposition format to parse
 * the lines metrics.c writes (a name, labels with escaped values, a
 * number), and a cap on how much of the file is read.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/metrics.h"
#include "base/util.h"

#define P	"disagent_"
#define LAST_ERROR	P "last_error_"
#define READ_MAX	(16u * 1024 * 1024)	/* metrics file read cap */

#define SAMPLE_LABELS	8

/* One sample line, parsed.  Label values are new strings. */
struct sample {
	char	 name[128];
	size_t	 nlabels;
	char	 lname[SAMPLE_LABELS][64];
	char	*lvalue[SAMPLE_LABELS];
	double	 value;
};

static void
sample_cleanup(struct sample *s)
{
	size_t	 i;

	for (i = 0; i < s->nlabels; i++)
		free(s->lvalue[i]);
	s->nlabels = 0;
}

/* Copy [A-Za-z0-9_:] at *pp into out (size len); false if none or long. */
static bool
take_name(const char **pp, char *out, size_t len)
{
	const char	*p = *pp;
	size_t		 n;

	n = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789_:");
	if (n == 0 || n >= len)
		return false;
	memcpy(out, p, n);
	out[n] = '\0';
	*pp = p + n;
	return true;
}

/* A quoted, escaped label value at *pp; new string or NULL. */
static char *
take_value(const char **pp)
{
	const char	*p = *pp;
	struct buf	 b;

	if (*p++ != '"')
		return NULL;
	buf_init(&b);
	buf_reserve(&b, 0);	/* "" is a value, not a failure */
	for (; *p != '"'; p++) {
		if (*p == '\\') {
			p++;
			if (*p == '\0')
				break;
			buf_addc(&b, *p == 'n' ? '\n' : *p);
		} else if (*p == '\0')
			break;
		else
			buf_addc(&b, *p);
	}
	if (*p != '"') {
		buf_cleanup(&b);
		return NULL;
	}
	*pp = p + 1;
	return b.data;
}

static bool
take_labels(const char **pp, struct sample *s)
{
	const char	*p = *pp;
	char		*v;

	if (*p != '{')
		return true;
	for (p++; *p != '}'; ) {
		if (s->nlabels == SAMPLE_LABELS ||
		    !take_name(&p, s->lname[s->nlabels], sizeof(s->lname[0])))
			return false;
		if (*p++ != '=')
			return false;
		v = take_value(&p);
		if (v == NULL)
			return false;
		s->lvalue[s->nlabels++] = v;
		if (*p == ',')
			p++;
		else if (*p != '}')
			return false;
	}
	*pp = p + 1;
	return true;
}

/*
 * "name{label="value",...} value [timestamp]" into s; false for anything
 * else (comments, blank lines, junk).  s is cleaned up on failure.
 */
static bool
parse_sample(const char *line, struct sample *s)
{
	const char	*p = line;
	char		*end;

	s->nlabels = 0;
	if (!take_name(&p, s->name, sizeof(s->name)) || !take_labels(&p, s))
		goto fail;
	if (*p != ' ' && *p != '\t')
		goto fail;
	p += strspn(p, " \t");
	s->value = strtod(p, &end);
	if (end == p || (*end != '\0' && *end != '\n' && *end != ' '))
		goto fail;
	return true;
fail:
	sample_cleanup(s);
	return false;
}

static const char *
label_of(const struct sample *s, const char *name)
{
	size_t	 i;

	for (i = 0; i < s->nlabels; i++)
		if (strcmp(s->lname[i], name) == 0)
			return s->lvalue[i];
	return NULL;
}

/* Fold one parsed sample into the error list. */
static void
fold_sample(const struct sample *s, struct metrics_error **v, size_t *n)
{
	const char	*flow, *code, *msg;
	size_t		 i;

	flow = label_of(s, "flow");
	if (flow == NULL)
		return;
	for (i = 0; i < *n; i++)
		if (strcmp((*v)[i].flow, flow) == 0)
			break;
	if (strcmp(s->name, P "last_error_timestamp_seconds") == 0) {
		if (i < *n)
			(*v)[i].time = (int64_t)s->value;
		return;
	}
	code = label_of(s, "code");
	msg = label_of(s, "message");
	if (strcmp(s->name, P "last_error_info") != 0 || code == NULL ||
	    msg == NULL || i < *n)
		return;
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[*n].flow = xstrdup(flow);
	(*v)[*n].code = xstrdup(code);
	(*v)[*n].message = xstrdup(msg);
	(*v)[*n].time = 0;
	(*n)++;
}

int
metrics_read_errors(const char *path, struct metrics_error **out, size_t *n)
{
	struct sample	 s;
	FILE		*fp;
	char		*line = NULL;
	size_t		 cap = 0, total = 0;
	ssize_t		 len;
	int		 r = 0;

	*out = NULL;
	*n = 0;
	fp = fopen(path, "re");
	if (fp == NULL)
		return -errno;
	while ((len = getline(&line, &cap, fp)) != -1) {
		total += (size_t)len;
		if (total > READ_MAX)
			break;
		if (strncmp(line, LAST_ERROR, strlen(LAST_ERROR)) != 0)
			continue;
		if (!parse_sample(line, &s))
			continue;
		fold_sample(&s, out, n);
		sample_cleanup(&s);
	}
	if (ferror(fp))
		r = -EIO;
	free(line);
	fclose(fp);
	if (r < 0) {
		metrics_errors_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return r;
}

void
metrics_errors_free(struct metrics_error *v, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		free(v[i].flow);
		free(v[i].code);
		free(v[i].message);
	}
	free(v);
}

int
metrics_read_gauge(const char *path, const char *name, const char *flow,
    double *value)
{
	struct sample	 s;
	const char	*f;
	FILE		*fp;
	char		*line = NULL;
	size_t		 cap = 0, total = 0, n = strlen(name);
	ssize_t		 len;
	int		 r = -ENOENT;

	fp = fopen(path, "re");
	if (fp == NULL)
		return -errno;
	while (r == -ENOENT && (len = getline(&line, &cap, fp)) != -1) {
		total += (size_t)len;
		if (total > READ_MAX)
			break;
		if (strncmp(line, name, n) != 0 || line[n] != '{' ||
		    !parse_sample(line, &s))
			continue;
		f = label_of(&s, "flow");
		if (f != NULL && strcmp(f, flow) == 0) {
			*value = s.value;
			r = 0;
		}
		sample_cleanup(&s);
	}
	if (r == -ENOENT && ferror(fp))
		r = -EIO;
	free(line);
	fclose(fp);
	return r;
}
