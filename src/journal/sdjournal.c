/*
 * libsystemd loaded at run time (sdjournal.h).
 */
#include "config.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "journal/sdjournal.h"

#define LIBSYSTEMD	"libsystemd.so.0"

static struct sdj	 fns;
static const struct sdj	*loaded;

/* Resolve name into *slot; false when libsystemd lacks it. */
static bool
resolve(void *lib, const char *name, void *slot)
{
	void	*p = dlsym(lib, name);

	if (p == NULL)
		return false;
	memcpy(slot, &p, sizeof(p));
	return true;
}

#define RESOLVE(lib, name, miss) \
	do { \
		if (!resolve(lib, "sd_journal_" #name, &fns.name)) \
			miss = "sd_journal_" #name; \
	} while (0)

const struct sdj *
sdj_get(char *err, size_t errlen)
{
	const char	*miss = NULL;
	void		*lib;

	if (loaded != NULL)
		return loaded;
	/* Kept for the process: a journal flow of a reload uses it again. */
	lib = dlopen(LIBSYSTEMD, RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		snprintf(err, errlen, "cannot load %s (libsystemd0, "
		    "systemd-libs): %s", LIBSYSTEMD, dlerror());
		return NULL;
	}
	RESOLVE(lib, open, miss);
	RESOLVE(lib, open_directory, miss);
	RESOLVE(lib, close, miss);
	RESOLVE(lib, add_match, miss);
	RESOLVE(lib, add_disjunction, miss);
	RESOLVE(lib, set_data_threshold, miss);
	RESOLVE(lib, get_fd, miss);
	RESOLVE(lib, process, miss);
	RESOLVE(lib, get_timeout, miss);
	RESOLVE(lib, seek_head, miss);
	RESOLVE(lib, seek_tail, miss);
	RESOLVE(lib, seek_cursor, miss);
	RESOLVE(lib, test_cursor, miss);
	RESOLVE(lib, next, miss);
	RESOLVE(lib, previous, miss);
	RESOLVE(lib, get_cursor, miss);
	RESOLVE(lib, get_realtime_usec, miss);
	RESOLVE(lib, get_monotonic_usec, miss);
	RESOLVE(lib, get_data, miss);
	RESOLVE(lib, restart_data, miss);
	RESOLVE(lib, enumerate_data, miss);
	if (miss != NULL) {
		snprintf(err, errlen, "%s has no %s", LIBSYSTEMD, miss);
		dlclose(lib);
		return NULL;
	}
	loaded = &fns;
	return loaded;
}
