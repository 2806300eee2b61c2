/*
 * libFuzzer target for conf.c: the input is an agent.ini.  It is written to
 * a memfd and read through /proc/self/fd/N by conf_load, so no file is left
 * behind; then conf_free.  Leaks are found by LeakSanitizer at exit and by
 * libFuzzer's -detect_leaks.  Checks the contract in conf.h: 0 with a
 * config, or -1 with a one-line "FILE..." message and no config, and the
 * secret key never in a message: a message that holds the sk's value is
 * checked again with the value changed (same length, every letter and digit
 * shifted), so that a value which is also a word of the message's template
 * ("sk = projectId" and "missing required key 'projectId'") is not taken
 * for an echo.  DIS_AK and DIS_SK are unset so that the
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

static char	 err2[1024];

/* Print why the contract is broken, then abort for libFuzzer. */
static void
broken(const char *why, const char *err)
{
	fprintf(stderr, "fuzz_conf: %s%s%s\n", why, err != NULL ? ": " : "",
	    err != NULL ? err : "");
	abort();
}

/* The sk of a config that loaded, to check it never shows in errors. */
static void
check_loaded(const struct conf *c)
{
	size_t	 i;

	if (c == NULL || c->path == NULL || c->sk == NULL || c->ak == NULL ||
	    (c->nflows > 0 && c->flows == NULL))
		broken("loaded config lacks path, ak, sk or flows", NULL);
	for (i = 0; i < c->nflows; i++)
		if (c->flows[i].name == NULL ||
		    c->flows[i].file_pattern == NULL ||
		    c->flows[i].file_pattern[0] != '/')
			broken("flow without a name or an absolute "
			    "filePattern", c->flows[i].name);
}

/* c shifted to another character of its class, never to itself. */
static char
shift(char c)
{
	if (c >= 'a' && c <= 'z')
		return (char)('a' + (c - 'a' + 7) % 26);
	if (c >= 'A' && c <= 'Z')
		return (char)('A' + (c - 'A' + 7) % 26);
	if (c >= '0' && c <= '9')
		return (char)('0' + (c - '0' + 3) % 10);
	return c;
}

/*
 * Does the message of the input with the sk value at off (vl bytes)
 * changed quote the changed value?  Only then is the value echoed rather
 * than a word the message holds anyway.
 */
static int
echoed(const uint8_t *data, size_t size, size_t off, size_t vl)
{
	struct conf	*c = NULL;
	uint8_t		*copy;
	char		 val2[200];
	size_t		 i;
	int		 rc, changed = 0;

	if ((copy = malloc(size)) == NULL)
		abort();
	memcpy(copy, data, size);
	for (i = 0; i < vl; i++) {
		copy[off + i] = (uint8_t)shift((char)data[off + i]);
		changed |= copy[off + i] != data[off + i];
		val2[i] = (char)copy[off + i];
	}
	val2[vl] = '\0';
	put_input(copy, size);
	free(copy);
	memset(err2, 0, sizeof(err2));
	rc = conf_load(path, &c, err2, sizeof(err2));
	if (rc == 0) {
		conf_free(c);
		return 0;
	}
	/* A value of punctuation only cannot be told apart: trust it. */
	return changed && strstr(err2, val2) != NULL;
}

static void
check_error(const char *err, const uint8_t *data, size_t size)
{
	const char	*p, *nl;
	size_t		 len = strlen(err);

	if (len == 0)
		broken("empty error message", NULL);
	if (strncmp(err, path, strlen(path)) != 0)
		broken("error does not start with the file's path", err);
	if (memchr(err, '\n', len) != NULL)
		broken("error holds a newline", err);
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
		if (strstr(err, val) != NULL &&
		    echoed(data, size, (size_t)(p + 5 - (const char *)data),
		    vl))
			broken("secret echoed", err2);
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
		broken("conf_load returned neither 0 nor -1", NULL);
	return 0;
}
