/*
 * libFuzzer target for conf.c: the input is an agent.ini.  It is written to
 * a memfd and read through /proc/self/fd/N by conf_load, so no file is left
 * behind; then conf_free.  Leaks are found by LeakSanitizer at exit and by
 * libFuzzer's -detect_leaks.  Checks the contract in conf.h: 0 with a
 * config, or -1 with a one-line "FILE..." message and no config, and the
 * secret key never in a message.  DIS_AK and DIS_SK are unset so that the
 * input alone decides.  memfd_create and memmem need _GNU_SOURCE, which
 * config.h defines.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "conf/conf.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);
int	LLVMFuzzerInitialize(int *, char ***);

static int	memfd = -1;
static char	path[64];

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	unsetenv("DIS_AK");
	unsetenv("DIS_SK");
	memfd = memfd_create("agent.ini", MFD_CLOEXEC);
	if (memfd < 0) {
		perror("memfd_create");
		abort();
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	return 0;
}

static void
put_input(const uint8_t *data, size_t size)
{
	size_t	 off = 0;
	ssize_t	 n;

	if (ftruncate(memfd, 0) != 0 || lseek(memfd, 0, SEEK_SET) != 0)
		abort();
	while (off < size) {
		n = write(memfd, data + off, size - off);
		if (n <= 0)
			abort();
		off += (size_t)n;
	}
}

/* The sk of a config that loaded, to check it never shows in errors. */
static void
check_loaded(const struct conf *c)
{
	size_t	 i;

	if (c == NULL || c->path == NULL || c->sk == NULL || c->ak == NULL ||
	    (c->nflows > 0 && c->flows == NULL))
		abort();
	for (i = 0; i < c->nflows; i++)
		if (c->flows[i].name == NULL ||
		    c->flows[i].file_pattern == NULL ||
		    c->flows[i].file_pattern[0] != '/')
			abort();
}

static void
check_error(const char *err, const uint8_t *data, size_t size)
{
	const char	*p, *nl;
	size_t		 len = strlen(err);

	if (len == 0 || strncmp(err, path, strlen(path)) != 0 ||
	    memchr(err, '\n', len) != NULL)
		abort();
	/*
	 * An "sk = VALUE" line of the input must not be echoed.  Only
	 * checked for values of 8+ characters that appear nowhere else in
	 * the input, so a message quoting another key cannot trip it.
	 */
	for (p = (const char *)data; p < (const char *)data + size;
	    p = nl + 1) {
		char	 val[200];
		size_t	 vl;

		nl = memchr(p, '\n', (size_t)((const char *)data + size - p));
		if (nl == NULL)
			nl = (const char *)data + size;
		if ((size_t)(nl - p) < 5 || strncmp(p, "sk = ", 5) != 0)
			continue;
		vl = (size_t)(nl - p) - 5;
		if (vl < 8 || vl >= sizeof(val) || memchr(p + 5, '\0', vl))
			continue;
		memcpy(val, p + 5, vl);
		val[vl] = '\0';
		if (strchr(val, ';') || strchr(val, '#') ||
		    strchr(val, ' ') || strchr(val, '\r'))
			continue;
		if (memmem(data, size, val, vl) != p + 5 ||
		    memmem(p + 6, (size_t)((const char *)data + size -
		    (p + 6)), val, vl) != NULL)
			continue;	/* occurs twice */
		if (strstr(err, val) != NULL) {
			fprintf(stderr, "secret echoed: %s\n", err);
			abort();
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct conf	*c = NULL;
	char		 err[1024];
	int		 rc;

	put_input(data, size);
	memset(err, 0, sizeof(err));
	rc = conf_load(path, &c, err, sizeof(err));
	if (rc == 0) {
		check_loaded(c);
		conf_free(c);
	} else if (rc == -1) {
		check_error(err, data, size);
	} else
		abort();
	return 0;
}
