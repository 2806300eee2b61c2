/*
 * The DIS Agent's checkpoint file (disckpt.h).  libsqlite3 stays here, and
 * is loaded (dlopen) only when a file is read: the agent itself never
 * needs it, and linking it cost every agent about 0.5 MiB of RSS for the
 * loader's work on a library it does not use (the 20 MiB budget of issue
 * 6 had less than that to spare).  sqlite3.h gives the types and codes.
 * The file is opened with SQLITE_OPEN_READONLY: nothing is ever written
 * to it, so a DIS Agent that still runs, or is started again after the
 * import, finds it as it left it.  A writer holding its lock is waited for
 * (busy timeout); in WAL mode readers do not wait and see the last commit.
 */
#include "config.h"

#include <sys/stat.h>

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "state/disckpt.h"

#define BUSY_TIMEOUT_MS	5000
#define SQLITE_SONAME	"libsqlite3.so.0"

/* The calls this file makes, from the library loaded at run time. */
static struct {
	int		 (*open_v2)(const char *, sqlite3 **, int,
			    const char *);
	int		 (*close)(sqlite3 *);
	int		 (*extended_result_codes)(sqlite3 *, int);
	int		 (*busy_timeout)(sqlite3 *, int);
	int		 (*prepare_v2)(sqlite3 *, const char *, int,
			    sqlite3_stmt **, const char **);
	int		 (*step)(sqlite3_stmt *);
	int		 (*finalize)(sqlite3_stmt *);
	const unsigned char *(*column_text)(sqlite3_stmt *, int);
	sqlite3_int64	 (*column_int64)(sqlite3_stmt *, int);
	const char	*(*errmsg)(sqlite3 *);
	const char	*(*errstr)(int);
} lib;

/* Load libsqlite3 once (it stays loaded); 0, or -ENOSYS with why. */
static int
load_sqlite(char *err, size_t errlen)
{
	static const struct {
		const char	*name;
		void		**fn;
	} syms[] = {
		{ "sqlite3_open_v2", (void **)&lib.open_v2 },
		{ "sqlite3_close", (void **)&lib.close },
		{ "sqlite3_extended_result_codes",
		  (void **)&lib.extended_result_codes },
		{ "sqlite3_busy_timeout", (void **)&lib.busy_timeout },
		{ "sqlite3_prepare_v2", (void **)&lib.prepare_v2 },
		{ "sqlite3_step", (void **)&lib.step },
		{ "sqlite3_finalize", (void **)&lib.finalize },
		{ "sqlite3_column_text", (void **)&lib.column_text },
		{ "sqlite3_column_int64", (void **)&lib.column_int64 },
		{ "sqlite3_errmsg", (void **)&lib.errmsg },
		{ "sqlite3_errstr", (void **)&lib.errstr },
	};
	const char	*why;
	void		*h;
	size_t		 i;

	if (lib.open_v2 != NULL)
		return 0;
	h = dlopen(SQLITE_SONAME, RTLD_NOW | RTLD_LOCAL);
	for (i = 0; h != NULL && i < ARRAY_SIZE(syms); i++)
		if ((*syms[i].fn = dlsym(h, syms[i].name)) == NULL)
			break;
	if (h != NULL && i == ARRAY_SIZE(syms))
		return 0;
	why = dlerror();
	snprintf(err, errlen, "reading the DIS Agent's checkpoints needs "
	    "SQLite (%s): install libsqlite3-0 (Debian) or sqlite-libs (EL)",
	    why != NULL ? why : SQLITE_SONAME);
	lib.open_v2 = NULL;
	return -ENOSYS;
}

/* The columns the importer reads, named as SQLiteFileCheckpointStore
 * creates them; any other column is left alone. */
static const char select_rows[] =
    "SELECT flow, path, fileId, offset, size, lastModifiedTime, "
    "headerLength, headerString, lastUpdated FROM FILE_CHECKPOINTS "
    "ORDER BY flow, fileId";

/* A SQLite result as a negative errno, and why, for path. */
static int
failed(sqlite3 *db, int rc, const char *path, char *err, size_t errlen)
{
	const char	*msg = db != NULL ? lib.errmsg(db) : lib.errstr(rc);

	switch (rc & 0xff) {
	case SQLITE_NOTADB:
		snprintf(err, errlen, "%s: not a SQLite database", path);
		return -EBADMSG;
	case SQLITE_ERROR:
		snprintf(err, errlen, "%s: not a DIS Agent checkpoint file "
		    "(no table FILE_CHECKPOINTS with its columns: %s)", path,
		    msg);
		return -EBADMSG;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		snprintf(err, errlen, "%s: still locked by its writer after "
		    "%d s (stop the DIS Agent first)", path,
		    BUSY_TIMEOUT_MS / 1000);
		return -EBUSY;
	case SQLITE_READONLY:
		/* A hot journal: the DIS Agent stopped inside a write, and
		 * only a writer may roll it back. */
		snprintf(err, errlen, "%s: holds a write the DIS Agent did "
		    "not finish, which a read-only reader cannot undo; start "
		    "and stop the DIS Agent once, then import again (%s)",
		    path, msg);
		return -EBUSY;
	case SQLITE_PERM:
	case SQLITE_AUTH:
		snprintf(err, errlen, "%s: %s", path, strerror(EACCES));
		return -EACCES;
	case SQLITE_CANTOPEN:
		snprintf(err, errlen, "%s: cannot open it read-only (%s; a "
		    "file in WAL mode needs its -wal and -shm files, or a "
		    "directory SQLite may create them in)", path, msg);
		return -EIO;
	default:
		snprintf(err, errlen, "%s: %s", path, msg);
		return -EIO;
	}
}

static const char *
text(sqlite3_stmt *st, int col)
{
	const unsigned char *t = lib.column_text(st, col);

	return t != NULL ? (const char *)t : "";
}

static void
row_of(sqlite3_stmt *st, struct disckpt_row *r)
{
	r->flow = text(st, 0);
	r->path = text(st, 1);
	r->file_id = text(st, 2);
	r->offset = lib.column_int64(st, 3);
	r->size = lib.column_int64(st, 4);
	r->mtime_ms = lib.column_int64(st, 5);
	r->header_len = lib.column_int64(st, 6);
	r->header = text(st, 7);
	r->updated = text(st, 8);
}

int
disckpt_read(const char *path, int (*cb)(const struct disckpt_row *, void *),
    void *arg, char *err, size_t errlen)
{
	struct disckpt_row row;
	struct stat	 sb;
	sqlite3		*db = NULL;
	sqlite3_stmt	*st = NULL;
	int		 rc, r = 0;

	/* SQLite says only "unable to open"; errno says why. */
	if (stat(path, &sb) == -1) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return r;
	}
	if ((r = load_sqlite(err, errlen)) != 0)
		return r;
	rc = lib.open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
	if (rc != SQLITE_OK)
		goto fail;
	(void)lib.extended_result_codes(db, 1);
	(void)lib.busy_timeout(db, BUSY_TIMEOUT_MS);
	rc = lib.prepare_v2(db, select_rows, -1, &st, NULL);
	if (rc != SQLITE_OK)
		goto fail;
	while ((rc = lib.step(st)) == SQLITE_ROW) {
		row_of(st, &row);
		if ((r = cb(&row, arg)) != 0)
			break;
	}
	if (r == 0 && rc != SQLITE_DONE)
		goto fail;
	lib.finalize(st);
	lib.close(db);
	return r;
fail:
	r = failed(db, rc, path, err, errlen);
	lib.finalize(st);
	lib.close(db);
	return r;
}

/* --- the texts rows key on ---------------------------------------------- */

/* Digits of base (10 or 16) at *s into *v; advances *s.  false on none or
 * overflow. */
static bool
number(const char **s, int base, uint64_t *v)
{
	const char	*p = *s;
	uint64_t	 n = 0, d;

	for (; base == 16 ? isxdigit((unsigned char)*p) :
	    isdigit((unsigned char)*p); p++) {
		d = isdigit((unsigned char)*p) ? (uint64_t)(*p - '0') :
		    (uint64_t)(tolower((unsigned char)*p) - 'a' + 10);
		if (n > (UINT64_MAX - d) / (uint64_t)base)
			return false;
		n = n * (uint64_t)base + d;
	}
	if (p == *s)
		return false;
	*s = p;
	*v = n;
	return true;
}

bool
disckpt_parse_file_id(const char *s, uint64_t *dev, uint64_t *ino)
{
	uint64_t	 d, i;
	bool		 neg;

	if (strncmp(s, "(dev=", 5) != 0)
		return false;
	s += 5;
	if (!number(&s, 16, &d) || strncmp(s, ",ino=", 5) != 0)
		return false;
	s += 5;
	/* st_ino is a Java long: an inode past 2^63 prints negative. */
	neg = *s == '-';
	s += neg;
	if (!number(&s, 10, &i) || strcmp(s, ")") != 0 ||
	    (neg && (i == 0 || i > (uint64_t)INT64_MAX + 1)) ||
	    (!neg && i > (uint64_t)INT64_MAX))
		return false;
	*dev = d;
	*ino = neg ? (uint64_t)0 - i : i;
	return true;
}

bool
disckpt_parse_flow(const char *id, char *stream, size_t len,
    const char **pattern)
{
	const char	*p, *colon;
	size_t		 n;

	if (strncmp(id, "dis:", 4) != 0)
		return false;
	p = id + 4;
	colon = strchr(p, ':');
	if (colon == NULL || colon == p || colon[1] == '\0')
		return false;
	n = (size_t)(colon - p);
	if (n >= len || strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789_-") != n)
		return false;
	memcpy(stream, p, n);
	stream[n] = '\0';
	*pattern = colon + 1;
	return true;
}

char *
disckpt_flow_pattern(const char *pattern)
{
	char	*s, *w, *last;
	size_t	 len;

	len = strlen(pattern);
	s = xasprintf("%s%s", pattern,
	    len > 0 && pattern[len - 1] == '/' ? "*" : "");
	/* java.io.File: "//" becomes "/", a trailing "/" goes. */
	for (w = s, last = s; *last != '\0'; last++)
		if (*last != '/' || w == s || w[-1] != '/')
			*w++ = *last;
	*w = '\0';
	if (w - s > 1 && w[-1] == '/')
		w[-1] = '\0';
	last = strrchr(s, '/');
	if (last == NULL) {
		free(s);
		return NULL;
	}
	if (last == s) {
		/* Parent "/": the agent writes "/" + "/" + name. */
		w = xasprintf("/%s", s);
		free(s);
		return w;
	}
	return s;
}
