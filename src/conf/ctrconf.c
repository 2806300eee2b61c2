/*
 * source = containers (ctrconf.h): the container a log file's path names,
 * whether a flow reads it, the metadata its records carry, and the -t
 * check that no container is read by two flows.
 */
#include "config.h"

#include <dirent.h>
#include <fnmatch.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/escape.h"
#include "conf/conf.h"
#include "conf/ctrconf.h"
#include "records/ctrlog.h"

const char *const ctrconf_streams[] = { "all", "stdout", "stderr", NULL };
const char *const ctrconf_formats[] = { "auto", "cri", "docker", NULL };
const char *const ctrconf_records[] = { "json", "message", NULL };

/* The next comma-separated item of *list into tok, blanks trimmed. */
static bool
next_item(const char **list, char *tok, size_t len)
{
	const char	*s = *list, *e;
	size_t		 n;

	while (*s == ' ' || *s == '\t' || *s == ',')
		s++;
	if (*s == '\0')
		return false;
	e = strchr(s, ',');
	if (e == NULL)
		e = s + strlen(s);
	*list = e;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	n = MIN((size_t)(e - s), len - 1);
	memcpy(tok, s, n);
	tok[n] = '\0';
	return true;
}

const char *
ctrconf_check_globs(const char *value)
{
	char		 tok[800];
	const char	*slash;

	while (next_item(&value, tok, sizeof(tok))) {
		slash = strchr(tok, '/');
		if (slash == NULL || strchr(slash + 1, '/') == NULL ||
		    strchr(strchr(slash + 1, '/') + 1, '/') != NULL)
			return "each item is NAMESPACE/POD/CONTAINER, three "
			    "globs separated by '/' (such as kube-system/*/*)";
	}
	return NULL;
}

char *
ctrconf_pattern(const char *dir)
{
	size_t	 n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	return xasprintf("%.*s/**/*.log", (int)n, dir);
}

static void
copy(char *dst, size_t len, const char *s, size_t n)
{
	n = MIN(n, len - 1);
	memcpy(dst, s, n);
	dst[n] = '\0';
}

/* Docker's DIR/ID/config.v2.json: the name (without its '/') and image. */
static void
docker_config(const char *dir, struct ctrconf_meta *m)
{
	char		*path;
	json_t		*o, *name, *img;
	const char	*s;

	path = xasprintf("%s/%s/config.v2.json", dir, m->uid);
	o = json_load_file(path, 0, NULL);
	free(path);
	name = json_object_get(o, "Name");
	img = json_object_get(json_object_get(o, "Config"), "Image");
	if (json_is_string(name)) {
		s = json_string_value(name);
		s += *s == '/';
		copy(m->ctr, sizeof(m->ctr), s, strlen(s));
	}
	if (json_is_string(img))
		copy(m->image, sizeof(m->image), json_string_value(img),
		    json_string_length(img));
	json_decref(o);
}

/* kubelet's NAMESPACE_POD_UID: names hold no '_', so the split is sure. */
static bool
kubelet_dir(const char *s, size_t n, struct ctrconf_meta *m)
{
	const char	*u1 = memchr(s, '_', n), *u2;

	if (u1 == NULL)
		return false;
	u2 = memchr(u1 + 1, '_', n - (size_t)(u1 + 1 - s));
	if (u2 == NULL || u1 == s || u2 == u1 + 1 || u2 + 1 == s + n)
		return false;
	copy(m->ns, sizeof(m->ns), s, (size_t)(u1 - s));
	copy(m->pod, sizeof(m->pod), u1 + 1, (size_t)(u2 - u1 - 1));
	copy(m->uid, sizeof(m->uid), u2 + 1, (size_t)(s + n - u2 - 1));
	return true;
}

/* RESTART.log, or a rotated RESTART.log.SUFFIX. */
static bool
kubelet_file(const char *s)
{
	size_t	 d = strspn(s, "0123456789");

	return d > 0 && strncmp(s + d, ".log", 4) == 0 &&
	    (s[d + 4] == '\0' || s[d + 4] == '.');
}

bool
ctrconf_meta_of(const char *dir, const char *path, struct ctrconf_meta *out)
{
	size_t		 dl = strlen(dir);
	const char	*rel, *s1, *s2;

	while (dl > 1 && dir[dl - 1] == '/')
		dl--;
	if (strncmp(path, dir, dl) != 0 || path[dl] != '/')
		return false;
	memset(out, 0, sizeof(*out));
	rel = path + dl + 1;
	if ((s1 = strchr(rel, '/')) == NULL)
		return false;
	s2 = strchr(s1 + 1, '/');
	if (s2 == NULL) {
		/* Docker: ID/ID-json.log (or a rotated ID-json.log.N) */
		if (strncmp(s1 + 1, rel, (size_t)(s1 - rel)) != 0 ||
		    strncmp(s1 + 1 + (s1 - rel), "-json.log", 9) != 0)
			return false;
		out->docker = true;
		copy(out->ns, sizeof(out->ns), "docker", 6);
		copy(out->uid, sizeof(out->uid), rel, (size_t)(s1 - rel));
		copy(out->ctr, sizeof(out->ctr), rel, (size_t)(s1 - rel));
		docker_config(dir, out);
		memcpy(out->pod, out->ctr, sizeof(out->pod));
		return true;
	}
	if (strchr(s2 + 1, '/') != NULL || !kubelet_file(s2 + 1) ||
	    !kubelet_dir(rel, (size_t)(s1 - rel), out))
		return false;
	copy(out->ctr, sizeof(out->ctr), s1 + 1, (size_t)(s2 - s1 - 1));
	return out->ctr[0] != '\0';
}

static bool
globs_match(const char *list, const char *name)
{
	char	 tok[800];

	while (next_item(&list, tok, sizeof(tok)))
		if (fnmatch(tok, name, FNM_PATHNAME) == 0)
			return true;
	return false;
}

bool
ctrconf_wants(const struct conf_flow *fc, const struct ctrconf_meta *m)
{
	char	 name[800];

	snprintf(name, sizeof(name), "%s/%s/%s", m->ns, m->pod, m->ctr);
	return globs_match(fc->ctr_match, name) &&
	    !globs_match(fc->ctr_exclude, name);
}

bool
ctrconf_picks_path(const struct conf_flow *fc, const char *path,
    bool *stable)
{
	struct ctrconf_meta m;
	size_t		 n = strlen(path);

	*stable = true;
	/* The files themselves; rotated ones are followed, not found. */
	if (n < 4 || strcmp(path + n - 4, ".log") != 0)
		return false;
	if (!ctrconf_meta_of(fc->ctr_dir, path, &m))
		return false;
	*stable = !m.docker;
	return ctrconf_wants(fc, &m);
}

bool
ctrconf_picks(const struct conf_flow *fc, const char *path)
{
	bool	 stable;

	return ctrconf_picks_path(fc, path, &stable);
}

/* One member "key":"value", value cut to cap bytes. */
static void
member(struct buf *b, const char *key, const char *v, size_t cap, bool first)
{
	if (!first)
		buf_addc(b, ',');
	buf_printf(b, "\"%s\":", key);
	ctrlog_json_string(b, v, MIN(strlen(v), cap));
}

static void
meta_json(const struct ctrconf_meta *m, struct buf *b, size_t cap)
{
	if (m->docker) {
		buf_addstr(b, ",\"docker\":{");
		member(b, "container_id", m->uid, cap, true);
		member(b, "container_name", m->ctr, cap, false);
		member(b, "image", m->image, cap, false);
	} else {
		buf_addstr(b, ",\"kubernetes\":{");
		member(b, "namespace_name", m->ns, cap, true);
		member(b, "pod_name", m->pod, cap, false);
		member(b, "pod_id", m->uid, cap, false);
		member(b, "container_name", m->ctr, cap, false);
	}
	buf_addc(b, '}');
}

void
ctrconf_meta_json(const struct ctrconf_meta *m, struct buf *b)
{
	size_t	 at = b->len;

	meta_json(m, b, SIZE_MAX);
	if (b->len - at <= CTRLOG_META_MAX)
		return;
	/* Hostile names: 4 values of 32 bytes, 6 each escaped, fit. */
	buf_setlen(b, at);
	meta_json(m, b, 32);
}

/* --- disagent -t: a container two flows read ---------------------------- */

struct ov {
	const struct conf_flow *flows;
	size_t		 n;
	char		*err;
	size_t		 errlen;
};

/* The flows (enabled containers ones) that read path: -1 on the second. */
static int
check_path(struct ov *o, const char *path)
{
	const struct conf_flow *first = NULL, *fc;
	struct ctrconf_meta m;
	char		 name[800], *esc;
	size_t		 i;

	for (i = 0; i < o->n; i++) {
		fc = &o->flows[i];
		if (!fc->enable || fc->source != SOURCE_CONTAINERS ||
		    !ctrconf_picks(fc, path))
			continue;
		if (first == NULL) {
			first = fc;
			continue;
		}
		(void)ctrconf_meta_of(fc->ctr_dir, path, &m);
		snprintf(name, sizeof(name), "%s/%s/%s", m.ns, m.pod, m.ctr);
		esc = esc_new(path);
		snprintf(o->err, o->errlen, "[flow:%s] and [flow:%s] both read "
		    "container %s (%s): each line would be sent twice; "
		    "narrow containerMatch or add containerExclude",
		    fc->name, first->name, ESC(name), esc);
		free(esc);
		return -1;
	}
	return 0;
}

/* Each file of dir/sub (depth 1: Docker's, 2: kubelet's), checked. */
static int
walk(struct ov *o, const char *dir, int depth)
{
	DIR		*d = opendir(dir);
	struct dirent	*e;
	struct stat	 st;
	char		*p;
	int		 rc = 0;

	if (d == NULL)
		return 0;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		p = xasprintf("%s/%s", dir, e->d_name);
		if (stat(p, &st) != 0)
			;	/* gone since, or unreadable: not a file */
		else if (S_ISDIR(st.st_mode) && depth < 2)
			rc = walk(o, p, depth + 1);
		else if (S_ISREG(st.st_mode))
			rc = check_path(o, p);
		free(p);
	}
	closedir(d);
	return rc;
}

int
ctrconf_check_overlap(const struct conf_flow *flows, size_t n, char *err,
    size_t errlen)
{
	struct ov	 o = { flows, n, err, errlen };
	size_t		 i, j;

	for (i = 0; i < n; i++) {
		if (!flows[i].enable || flows[i].source != SOURCE_CONTAINERS)
			continue;
		for (j = 0; j < i; j++)
			if (flows[j].enable &&
			    flows[j].source == SOURCE_CONTAINERS &&
			    strcmp(flows[j].ctr_dir, flows[i].ctr_dir) == 0)
				break;
		if (j < i)
			continue;	/* that directory was walked */
		if (walk(&o, flows[i].ctr_dir, 0) != 0)
			return -1;
	}
	return 0;
}
