/*
 * How a file joins the tracked set (files_int.h): a tailer opened at the
 * offset a scan chose, parked when maxOpenFiles is spent, with the
 * restart's plan attached (files_known.c); a file that cannot be opened
 * is reported once.  Above files.c, which keeps the set itself.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/metrics.h"
#include "conf/conf.h"
#include "files/files.h"
#include "files/files_int.h"
#include "tail/openfail.h"
#include "tail/tailer.h"
#include "tail/zsource.h"

/*
 * Track path (stat'ed as st) as a tailer from offset, parked when
 * maxOpenFiles is spent; gone: it is no longer at a matching path (read to
 * its end, then closed).  A whole-file flow's tailers read up to st's
 * size.  Its id, or 0 with errno set (the caller reports it).  Compressed
 * files are read through zsource, decompressed.
 */
uint64_t
files_track(struct files *fs, const char *path, const struct stat *st,
    uint64_t off, bool gone)
{
	struct tailer	*t;
	uint32_t	 fp = (uint32_t)fs->fc->header_bytes;

	if (zsource_name_compressed(path))
		t = tailer_open_compressed(path, st, off, fp, fs->fr);
	else if (fs->nopen >= fs->max_open)
		t = tailer_new_parked(path, st, off, fp, fs->fr);
	else
		t = tailer_open(path, st, off, fp, fs->fr);
	if (t == NULL)
		return 0;
	files_attach_plan(fs, t, path, st, off, false);
	(void)files_link(fs, t, gone);
	log_info("[%s] tracking %s (inode %ju) from offset %ju%s%s",
	    fs->fc->name, path, (uintmax_t)tailer_ino(t), (uintmax_t)off,
	    gone ? " (rotated away; reading it to the end)" : "",
	    tailer_is_open(t) ? "" : " (parked: maxOpenFiles)");
	if (tailer_is_open(t))
		files_commit(fs, t);
	return tailer_id(t);
}

/*
 * files_track, with a file that cannot be opened reported once (a
 * compressed one in a format the agent cannot read counted as lost, once).
 */
enum track_result
files_track_at(struct files *fs, const char *path, const struct stat *st,
    uint64_t off, bool gone)
{
	bool	 z = zsource_name_compressed(path);
	bool	 unreadable;
	char	 why[METRICS_MSG_LEN];
	int	 err;

	if (files_track(fs, path, st, off, gone) != 0)
		return TRACKED;
	if (z && errno == EAGAIN)
		return TRACK_LATER;	/* still being compressed */
	if (errno == ESTALE) {
		/* Not the file the scan judged any more: the next looks. */
		log_debug("[%s] %s changed while opened", fs->fc->name, path);
		return TRACK_LATER;
	}
	err = errno;
	unreadable = z && err != EACCES && err != ENOENT;
	if (openfail_report(&fs->fails, fs->fc->name, path, err,
	    unreadable ? "compressed in a format the agent cannot read (it "
	    "reads gzip and zstd)" : NULL)) {
		fs->m->open_errors++;
		/* disagent status shows it, naming the file (reason first:
		 * a long path may be cut short). */
		snprintf(why, sizeof(why), "%s: cannot open %s", unreadable ?
		    "compressed in a format the agent cannot read" :
		    strerror(err), path);
		metrics_set_error(fs->m, "OPEN", why, wall_s());
		if (unreadable)
			fs->m->bytes_lost[LOST_UNREADABLE] +=
			    (uint64_t)st->st_size;
	}
	return unreadable ? TRACK_UNREADABLE : TRACK_FAILED;
}

