/*
 * libmicrohttpd loaded at run time (mhdlib.h).
 */
#include "config.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/mhdlib.h"

#define LIBMHD	"libmicrohttpd.so.12"

static struct mhdlib	 fns;
static const struct mhdlib *loaded;

/* Resolve name into *slot; false when the library lacks it. */
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
		if (!resolve(lib, "MHD_" #name, &fns.name)) \
			miss = "MHD_" #name; \
	} while (0)

const struct mhdlib *
mhdlib_get(char *err, size_t errlen)
{
	const char	*miss = NULL;
	void		*lib;

	if (loaded != NULL)
		return loaded;
	/*
	 * Kept for the process: a reload may start the server again.  Its
	 * constructor initializes GnuTLS here (mhdlib.h).
	 */
	lib = dlopen(LIBMHD, RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		snprintf(err, errlen, "cannot load %s (Debian: libmicrohttpd12, "
		    "EL: libmicrohttpd): %s", LIBMHD, dlerror());
		return NULL;
	}
	RESOLVE(lib, start_daemon, miss);
	RESOLVE(lib, stop_daemon, miss);
	RESOLVE(lib, create_response_from_buffer, miss);
	RESOLVE(lib, add_response_header, miss);
	RESOLVE(lib, queue_response, miss);
	RESOLVE(lib, destroy_response, miss);
	if (miss != NULL) {
		snprintf(err, errlen, "%s has no %s", LIBMHD, miss);
		dlclose(lib);
		return NULL;
	}
	loaded = &fns;
	return loaded;
}
