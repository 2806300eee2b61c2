/*
 * libsystemd's sd-journal, loaded when a journal flow first needs it
 * (dlopen of libsystemd.so.0), not linked: libsystemd and what it links
 * (libgcrypt, liblzma, libcap, ...) cost an agent about 0.8 MiB of RSS,
 * and an agent of files alone should not pay for them (its budget is
 * 20 MiB).  The functions have the prototypes of <systemd/sd-journal.h>,
 * which the build checks (configure: libsystemd >= 239).  Private to
 * journal/.
 */
#ifndef DISAGENT_SDJOURNAL_H
#define DISAGENT_SDJOURNAL_H

#include <stddef.h>

#include <systemd/sd-journal.h>

#define SDJ_FN(name)	__typeof__(sd_journal_##name) *name

struct sdj {
	SDJ_FN(open);
	SDJ_FN(open_directory);
	SDJ_FN(close);
	SDJ_FN(add_match);
	SDJ_FN(add_disjunction);
	SDJ_FN(set_data_threshold);
	SDJ_FN(get_fd);
	SDJ_FN(process);
	SDJ_FN(get_timeout);
	SDJ_FN(seek_head);
	SDJ_FN(seek_tail);
	SDJ_FN(seek_cursor);
	SDJ_FN(test_cursor);
	SDJ_FN(next);
	SDJ_FN(previous);
	SDJ_FN(get_cursor);
	SDJ_FN(get_realtime_usec);
	SDJ_FN(get_monotonic_usec);
	SDJ_FN(get_data);
	SDJ_FN(restart_data);
	SDJ_FN(enumerate_data);
};

/*
 * The functions, loaded at the first call and kept for the process:
 * borrowed, or NULL with why in err when libsystemd.so.0 cannot be loaded
 * or lacks one of them.
 */
const struct sdj *sdj_get(char *err, size_t errlen);

#endif
