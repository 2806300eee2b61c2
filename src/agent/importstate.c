/*
 * disagent import-state (importstate.h): each row of the DIS Agent's
 * checkpoint file is judged (importstate_judge: which file, which offset,
 * or why not), then acted on (a registry entry, a line of the report).
 * The judge reads the file system and never writes; the command writes
 * the state file once, at the end, with the registry's save.
 */
#include "config.h"

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "agent/importstate.h"
#include "base/escape.h"
#include "base/log.h"
#include "base/util.h"
#include "conf/conf.h"
#include "files/tailer.h"
#include "state/disckpt.h"
#include "state/registry.h"
#include "wire/signer.h"

#define HEAD_MAX	(1024 * 1024)	/* the largest head compared */
#define MAX_MATCH	16		/* flows one checkpoint may feed */

/* --- flows -------------------------------------------------------------- */

size_t
importstate_flows(const struct conf *conf, const char *flow_id,
    const struct conf_flow **out, size_t max, char *why, size_t len)
{
	const struct conf_flow *fc, *near = NULL;
	const char	*pattern;
	char		 stream[80], *ours;
	size_t		 i, n = 0;

	if (!disckpt_parse_flow(flow_id, stream, sizeof(stream), &pattern)) {
		snprintf(why, len, "flow %s is not a DIS stream flow "
		    "(dis:STREAM:PATTERN)", flow_id);
		return 0;
	}
	for (i = 0; i < conf->nflows; i++) {
		fc = &conf->flows[i];
		if (strcmp(fc->stream, stream) != 0)
			continue;
		ours = disckpt_flow_pattern(fc->file_pattern);
		if (ours != NULL && strcmp(ours, pattern) == 0 && n < max)
			out[n++] = fc;
		else if (near == NULL)
			near = fc;
		free(ours);
	}
	if (n > 0)
		return n;
	if (near != NULL)
		snprintf(why, len, "no flow of %s reads %s for stream %s "
		    "([%s] reads %s)", conf->path, pattern, stream, near->name,
		    near->file_pattern);
	else
		snprintf(why, len, "no flow of %s sends to stream %s",
		    conf->path, stream);
	return 0;
}

/* --- the file ----------------------------------------------------------- */

void
importstate_place_cleanup(struct importstate_place *p)
{
	free(p->path);
	p->path = NULL;
}

/* PRINTFLIKE: why, then IMPORT_SKIPPED. */
static enum importstate_verdict PRINTFLIKE(2, 3)
skip(struct importstate_place *p, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(p->why, sizeof(p->why), fmt, ap);
	va_end(ap);
	return IMPORT_SKIPPED;
}

/*
 * The file with (dev, ino): at path, else in path's directory (renamed by
 * a rotation).  Its path (new) and stat into *st, or NULL.
 */
static char *
find_inode(const char *path, uint64_t dev, uint64_t ino, struct stat *st)
{
	struct dirent	*de;
	DIR		*d;
	char		*dir, *slash, *p = NULL;

	if (stat(path, st) == 0 && (uint64_t)st->st_dev == dev &&
	    (uint64_t)st->st_ino == ino)
		return xstrdup(path);
	dir = xstrdup(path);
	slash = strrchr(dir, '/');
	if (slash == NULL) {
		free(dir);
		return NULL;
	}
	slash[slash == dir] = '\0';	/* "/x.log": the directory "/" */
	if ((d = opendir(dir)) == NULL) {
		free(dir);
		return NULL;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_ino != (ino_t)ino || strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		p = xasprintf("%s/%s", strcmp(dir, "/") == 0 ? "" : dir,
		    de->d_name);
		if (stat(p, st) == 0 && (uint64_t)st->st_dev == dev &&
		    (uint64_t)st->st_ino == ino)
			break;
		free(p);
		p = NULL;
	}
	closedir(d);
	free(dir);
	return p;
}

/*
 * Whether the first len bytes of path hash to hex (the DIS Agent's
 * headerString): 1 yes, 0 no (or the file is shorter), -errno when it
 * cannot be read.
 */
static int
same_head(const char *path, size_t len, const char *hex)
{
	char		 got[65], *buf;
	ssize_t		 n;
	size_t		 have = 0;
	int		 fd, r = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd == -1)
		return -errno;
	buf = xmalloc(len ? len : 1);
	while (have < len && (n = pread(fd, buf + have, len - have,
	    (off_t)have)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			break;
		}
		have += (size_t)n;
	}
	close(fd);
	if (r == 0 && have == len) {
		signer_sha256_hex(buf, len, got);
		r = strcasecmp(got, hex) == 0;
	}
	free(buf);
	return r;
}

/* The head check of the file found for row, as the DIS Agent makes it on
 * recovery; IMPORT_PLACED when it passes. */
static enum importstate_verdict
check_head(const struct disckpt_row *row, struct importstate_place *p)
{
	int	 r;

	if (row->header_len <= 0) {
		/* It was empty when the DIS Agent last listed it: nothing to
		 * compare, and from 0 nothing can be skipped. */
		if (row->offset == 0)
			return IMPORT_PLACED;
		return skip(p, "the DIS Agent kept no fingerprint of its first "
		    "bytes (the file was empty when it listed it), so another "
		    "file on inode %ju cannot be told apart: it is read from "
		    "its start", (uintmax_t)p->ino);
	}
	if (row->header_len > HEAD_MAX)
		return skip(p, "headerLength %jd is more than this import "
		    "compares (%d bytes): it is read from its start",
		    (intmax_t)row->header_len, HEAD_MAX);
	if ((uint64_t)row->header_len > p->size)
		return skip(p, "%s (inode %ju) is shorter (%ju bytes) than the "
		    "%jd bytes the DIS Agent fingerprinted: it holds another "
		    "file now, or was truncated; it is read from its start",
		    p->path, (uintmax_t)p->ino, (uintmax_t)p->size,
		    (intmax_t)row->header_len);
	r = same_head(p->path, (size_t)row->header_len, row->header);
	if (r < 0)
		return skip(p, "%s: %s", p->path, strerror(-r));
	if (r == 0)
		return skip(p, "inode %ju holds another file now (%s): its "
		    "first %jd bytes are not those the DIS Agent saw; it is "
		    "not given the old offset and is read from its start",
		    (uintmax_t)p->ino, p->path, (intmax_t)row->header_len);
	return IMPORT_PLACED;
}

/*
 * The DIS Agent's offsets follow a record's delimiter: one that does not
 * is not a position of this file (or a row made by hand), and taking it
 * would skip the rest of that line.  Not so with isMissLastRecordDelimiter,
 * whose last line goes without one.
 */
static enum importstate_verdict
check_boundary(const struct conf_flow *fc, struct importstate_place *p)
{
	unsigned char	 c;
	ssize_t		 n;
	int		 fd, delim = conf_delimiter(fc->record_delimiter);

	if (p->offset == 0 || fc->miss_last_delimiter)
		return IMPORT_PLACED;
	fd = open(p->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd == -1)
		return skip(p, "%s: %s", p->path, strerror(errno));
	n = pread(fd, &c, 1, (off_t)(p->offset - 1));
	close(fd);
	if (n != 1)
		return skip(p, "%s: cannot read the byte before offset %ju",
		    p->path, (uintmax_t)p->offset);
	if (c != (unsigned char)delim)
		return skip(p, "offset %ju of %s is inside a line (the byte "
		    "before it is not the record delimiter): it is read from "
		    "its start", (uintmax_t)p->offset, p->path);
	return IMPORT_PLACED;
}

/* disagent's own head fingerprint, as a tailer computes it at open. */
static enum importstate_verdict
fingerprint(const struct conf_flow *fc, struct importstate_place *p)
{
	p->fp_len = (uint32_t)MIN(p->size, (uint64_t)fc->header_bytes);
	if (tailer_head_crc(p->path, p->fp_len, &p->fp_crc) != 0)
		return skip(p, "%s: cannot read its first %u bytes: %s",
		    p->path, p->fp_len, strerror(errno));
	return IMPORT_PLACED;
}

enum importstate_verdict
importstate_judge(const struct conf_flow *fc, struct registry *reg,
    const struct disckpt_row *row, struct importstate_place *p)
{
	const struct reg_entry *e;
	struct stat	 st;

	memset(p, 0, sizeof(*p));
	if (!fc->file_appendable)
		return skip(p, "flow [%s] sends whole files (isFileAppendable "
		    "= false): what is left of it is sent whole", fc->name);
	if (!disckpt_parse_file_id(row->file_id, &p->dev, &p->ino))
		return skip(p, "fileId %s is not a device and inode (Java "
		    "writes one where it cannot read them, as on Windows)",
		    row->file_id);
	if (row->offset < 0)
		return skip(p, "offset %jd is not an offset",
		    (intmax_t)row->offset);
	p->offset = (uint64_t)row->offset;
	p->path = find_inode(row->path, p->dev, p->ino, &st);
	if (p->path == NULL)
		return skip(p, "no file has inode %ju on device %jx at %s or "
		    "beside it: it was deleted or moved away, and what it held "
		    "after offset %jd was not sent", (uintmax_t)p->ino,
		    (uintmax_t)p->dev, row->path, (intmax_t)row->offset);
	if (!S_ISREG(st.st_mode))
		return skip(p, "%s (inode %ju) is not a regular file", p->path,
		    (uintmax_t)p->ino);
	p->size = (uint64_t)st.st_size;
	if (check_head(row, p) != IMPORT_PLACED)
		return IMPORT_SKIPPED;
	if (p->offset > p->size)
		return skip(p, "offset %ju is past the end of %s (%ju bytes): "
		    "it was truncated since; it is read from its start",
		    (uintmax_t)p->offset, p->path, (uintmax_t)p->size);
	if (check_boundary(fc, p) != IMPORT_PLACED)
		return IMPORT_SKIPPED;
	e = registry_find(reg, fc->name, p->dev, p->ino);
	if (e != NULL)
		return skip(p, "the state file has a position for it already "
		    "(offset %ju, flow [%s]): kept", (uintmax_t)e->offset,
		    fc->name);
	return fingerprint(fc, p);
}

/* --- the command -------------------------------------------------------- */

struct import {
	const struct conf *conf;
	struct registry	*reg;
	FILE		*out;
	size_t		 rows;
	size_t		 placed;	/* rows placed in one flow at least */
	char		 newest[32];	/* lastUpdated of the newest row */
};

/* One row, for the report: where the DIS Agent knew it (its texts are
 * file names: escaped, escape.h). */
static void
name_row(FILE *out, const struct disckpt_row *row)
{
	char	*path = esc_new(row->path);

	fprintf(out, "%s (%s, fileId %s, offset %jd)", path, ESC(row->flow),
	    ESC(row->file_id), (intmax_t)row->offset);
	free(path);
}

static void
act(struct import *im, const struct conf_flow *fc,
    const struct disckpt_row *row, struct importstate_place *p)
{
	struct reg_entry *e;
	char		*path;

	e = registry_set(im->reg, fc->name, p->dev, p->ino, p->fp_crc,
	    p->fp_len, p->path, p->offset);
	/* What is known to follow, should the file go before it is read. */
	registry_set_size(im->reg, e, p->size);
	path = esc_new(p->path);
	fprintf(im->out, "imported: [%s] %s (inode %ju", fc->name, path,
	    (uintmax_t)p->ino);
	free(path);
	if (strcmp(p->path, row->path) != 0) {
		path = esc_new(row->path);
		fprintf(im->out, ", was %s", path);
		free(path);
	}
	fprintf(im->out, ") at offset %ju of %ju\n", (uintmax_t)p->offset,
	    (uintmax_t)p->size);
}

static int
on_row(const struct disckpt_row *row, void *arg)
{
	struct import	*im = arg;
	const struct conf_flow *fcs[MAX_MATCH];
	struct importstate_place p;
	char		 why[512];
	size_t		 i, n;
	bool		 placed = false;

	im->rows++;
	if (strcmp(row->updated, im->newest) > 0)
		snprintf(im->newest, sizeof(im->newest), "%s", row->updated);
	n = importstate_flows(im->conf, row->flow, fcs, MAX_MATCH, why,
	    sizeof(why));
	if (n == 0) {
		fputs("not imported: ", im->out);
		name_row(im->out, row);
		fprintf(im->out, ": %s\n", ESC(why));
		return 0;
	}
	for (i = 0; i < n; i++) {
		if (importstate_judge(fcs[i], im->reg, row, &p) ==
		    IMPORT_PLACED) {
			act(im, fcs[i], row, &p);
			placed = true;
		} else {
			fputs("not imported: ", im->out);
			name_row(im->out, row);
			fprintf(im->out, ": %s\n", ESC(p.why));
		}
		importstate_place_cleanup(&p);
	}
	im->placed += placed;
	return 0;
}

/*
 * END_OF_FILE would start a file without a position (one created after
 * the DIS Agent stopped, a rotation's new file) at its end at the first
 * run; the DIS Agent, which had the flow's checkpoints, reads it from 0.
 */
static void
note_end_of_file(const struct conf *conf, FILE *out)
{
	size_t	 i;

	for (i = 0; i < conf->nflows; i++)
		if (conf->flows[i].initial_position == POS_END_OF_FILE)
			fprintf(out, "note: [%s] has initialPosition = "
			    "END_OF_FILE: a file without a position (created "
			    "after the DIS Agent stopped) starts at its end at "
			    "the first run, where the DIS Agent would read it "
			    "from its start; set START_OF_FILE for that run\n",
			    conf->flows[i].name);
}

/*
 * Run as root (sudo) for a state directory the service user owns: the
 * files it made are that user's, or the agent could not read them.
 */
static void
own_like_dir(const char *path, FILE *err)
{
	struct stat	 d;
	char		*dir;

	if (geteuid() != 0)
		return;
	dir = xdirname(path);
	if (stat(dir, &d) == 0 && d.st_uid != 0 &&
	    chown(path, d.st_uid, d.st_gid) == -1 && errno != ENOENT)
		fprintf(err, "disagent import-state: chown %s: %s\n", path,
		    strerror(errno));
	free(dir);
}

/* The lock, or why not: 0, or 1 (the exit status). */
static int
lock(struct registry *reg, const char *state, FILE *err)
{
	char		*lp = registry_lock_path(state);
	long		 pid;
	int		 r;

	r = registry_lock(reg, &pid);
	if (r == -EWOULDBLOCK && pid > 0)
		fprintf(err, "disagent import-state: %s is in use: disagent "
		    "runs (pid %ld holds %s); stop it first\n", state, pid, lp);
	else if (r == -EWOULDBLOCK)
		fprintf(err, "disagent import-state: %s is in use (%s is "
		    "locked); stop disagent first\n", state, lp);
	else if (r < 0)
		fprintf(err, "disagent import-state: %s: %s\n", lp,
		    strerror(-r));
	free(lp);
	return r == 0 ? 0 : 1;
}

/* Read the rows into im->reg; 0, or 1 with the error on err. */
static int
import_rows(struct import *im, const char *db_path, FILE *err)
{
	char	 why[512];

	if (registry_load(im->reg) != 0) {
		fprintf(err, "disagent import-state: the state file %s cannot "
		    "be used (see above); nothing imported\n",
		    im->conf->checkpoint_file);
		return 1;
	}
	if (disckpt_read(db_path, on_row, im, why, sizeof(why)) != 0) {
		fprintf(err, "disagent import-state: %s\n", why);
		return 1;
	}
	return 0;
}

static int
save(struct import *im, FILE *err)
{
	char	*lp;

	if (registry_save(im->reg, true) != 0) {
		fprintf(err, "disagent import-state: cannot write %s (see "
		    "above)\n", im->conf->checkpoint_file);
		return 1;
	}
	own_like_dir(im->conf->checkpoint_file, err);
	lp = registry_lock_path(im->conf->checkpoint_file);
	own_like_dir(lp, err);
	free(lp);
	return 0;
}

int
importstate_run(const char *conf_path, const char *db_path, bool dry_run,
    FILE *out, FILE *err)
{
	struct import	 im;
	struct conf	*conf = NULL;
	char		 cerr[1024];
	int		 rc, level;

	if (conf_load_opts(conf_path, CONF_NO_CREDENTIALS, &conf, cerr,
	    sizeof(cerr)) != 0) {
		fprintf(err, "%s\n", ESC(cerr));
		return 1;
	}
	/* The state file's own warnings (a corrupt file, its backup used). */
	level = log_level_parse(conf->log_level);
	log_setup(level == LOG_LVL_DEBUG ? level : LOG_LVL_WARN, false);
	memset(&im, 0, sizeof(im));
	im.conf = conf;
	im.out = out;
	im.reg = registry_new(conf->checkpoint_file);
	rc = lock(im.reg, conf->checkpoint_file, err);
	if (rc == 0)
		rc = import_rows(&im, db_path, err);
	if (rc == 0 && !dry_run)
		rc = save(&im, err);
	if (rc == 0) {
		fprintf(out, "%s %zu of %zu checkpoint%s from %s into %s\n",
		    dry_run ? "would import" : "imported", im.placed, im.rows,
		    im.rows == 1 ? "" : "s", db_path, conf->checkpoint_file);
		if (im.newest[0] != '\0')
			fprintf(out, "the newest checkpoint is from %s UTC: "
			    "if the DIS Agent still runs, what it sends from "
			    "now on is sent again by disagent\n", im.newest);
		note_end_of_file(conf, out);
	}
	registry_free(im.reg);
	conf_free(conf);
	return rc;
}

static void
usage(FILE *fp)
{
	fprintf(fp, "usage: disagent import-state [-c FILE] [-n] "
	    "DIS-AGENT-CHECKPOINT-FILE\n");
}

int
importstate_main(int argc, char **argv, const char *default_conf)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char	*conf = default_conf;
	bool		 dry = false;
	int		 ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "c:nh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			conf = optarg;
			break;
		case 'n':
			dry = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind + 1 != argc) {
		usage(stderr);
		return 2;
	}
	return importstate_run(conf, argv[optind], dry, stdout, stderr);
}
