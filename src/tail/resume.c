/*
 * Start offsets of newly seen files (resume.h).
 */
#include "config.h"

#include <inttypes.h>

#include "base/log.h"
#include "base/metrics.h"
#include "conf/conf.h"
#include "tail/resume.h"
#include "tail/tailer.h"
#include "tail/zsource.h"
#include "state/registry.h"

bool
resume_same_head(const char *path, const struct reg_entry *e, uint64_t size)
{
	uint32_t	 crc;

	/* A compressed file's size is not its decompressed size. */
	if (e->fp_len > size && !zsource_name_compressed(path))
		return false;
	return tailer_head_crc(path, e->fp_len, &crc) == 0 &&
	    crc == e->fp_crc;
}

uint64_t
resume_offset(const struct conf_flow *fc, struct registry *reg,
    struct metrics_flow *m, const char *path, const struct stat *st,
    bool first)
{
	struct reg_entry *e;
	uint64_t	 size = (uint64_t)st->st_size;

	e = registry_find(reg, fc->name, (uint64_t)st->st_dev,
	    (uint64_t)st->st_ino);
	if (e != NULL) {
		if (!resume_same_head(path, e, size)) {
			log_info("%s: inode %ju now holds another file; "
			    "reading it from 0", path, (uintmax_t)st->st_ino);
			return 0;
		}
		/* A compressed file's size is not its decompressed size:
		 * its tailer finds out what is left after the offset. */
		if (e->offset <= size || zsource_name_compressed(path))
			return e->offset;
		if (e->size <= e->offset) {
			log_warn("%s: shorter (%ju) than its committed offset "
			    "(%ju): truncated while stopped; reading from 0",
			    path, (uintmax_t)size, (uintmax_t)e->offset);
			return 0;
		}
		log_warn("%s: shorter (%ju) than its committed offset (%ju): "
		    "truncated while stopped with %ju bytes unread (of the "
		    "%ju the state file knew of): they are lost; reading "
		    "from 0", path, (uintmax_t)size, (uintmax_t)e->offset,
		    (uintmax_t)(e->size - e->offset), (uintmax_t)e->size);
		if (m != NULL)
			m->bytes_lost[LOST_TRUNCATED] += e->size - e->offset;
		return 0;
	}
	if (first && fc->initial_position == POS_END_OF_FILE)
		return size;
	if (fc->ignore_older_s > 0 &&
	    st->st_mtime < wall_s() - fc->ignore_older_s) {
		log_info("%s: not modified for %lld s or more; only lines "
		    "written from now on are read", path, fc->ignore_older_s);
		return size;
	}
	return 0;
}

bool
resume_inside_line(const struct conf_flow *fc, const struct tailer *t)
{
	int	 c;

	/* A last line sent without delimiter (isMissLastRecordDelimiter, or
	 * a whole file) was a record: what follows is a new one. */
	if (fc->miss_last_delimiter || !fc->file_appendable)
		return false;
	c = tailer_byte_before(t, tailer_read_off(t));
	return c >= 0 && c != (unsigned char)conf_delimiter(
	    fc->record_delimiter);
}
