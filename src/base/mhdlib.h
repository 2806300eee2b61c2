/*
 * libmicrohttpd, loaded when httpListen first needs it (dlopen of
 * libmicrohttpd.so.12), not linked.  Its library constructor (MHD_init)
 * calls gnutls_global_init(), which the agent otherwise skips (main.c,
 * _gnutls_global_init_skip): linked, every agent would pay about 1 MiB of
 * RSS for GnuTLS's tables and MHD's mapping, httpListen or not.  So an
 * agent without httpListen never maps it; one with it pays that at the
 * dlopen.  The functions have the prototypes of <microhttpd.h>, which the
 * build checks (configure: libmicrohttpd >= 0.9.71).  The table is for
 * agent/httpd.c; conf_load asks mhdlib_get when httpListen is set, so a
 * missing library is a configuration error (-t, the start, a reload).
 */
#ifndef DISAGENT_MHDLIB_H
#define DISAGENT_MHDLIB_H

#include <stddef.h>

#include <microhttpd.h>

#define MHDLIB_FN(name)	__typeof__(MHD_##name) *name

struct mhdlib {
	MHDLIB_FN(start_daemon);
	MHDLIB_FN(stop_daemon);
	MHDLIB_FN(create_response_from_buffer);
	MHDLIB_FN(add_response_header);
	MHDLIB_FN(queue_response);
	MHDLIB_FN(destroy_response);
};

/*
 * The functions, loaded at the first call and kept for the process:
 * borrowed, or NULL with why in err (naming the library and its package)
 * when libmicrohttpd.so.12 cannot be loaded or lacks one of them.
 */
const struct mhdlib *mhdlib_get(char *err, size_t errlen);

#endif
