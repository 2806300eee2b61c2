/*
 * libFuzzer target for `disagent --import-yml` (importyml.c,
 * importyml_put.c, ymlopts.c): the input is an agent.yml, written to a
 * memfd and converted by importyml_main into memory streams.  Checked
 * against importyml.h: exit 0 with an agent.ini, or 1 with nothing written
 * and a message; the agent.ini is made of comments, section headers and
 * "key = value" lines only, and conf_load (with DIS_AK and DIS_SK set, so
 * that a file without keys still loads) never refuses it for its form --
 * an unknown or duplicate key or section, a line too long or with a NUL,
 * a syntax error: the importer writes only what the key table takes.
 * The seed corpus is tests/data/agent.yml and the agent.yml files of the
 * e2e tests (tests/fuzz/corpus/importyml).
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/log.h"
#include "conf/conf.h"
#include "conf/importyml.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);
int	LLVMFuzzerInitialize(int *, char ***);

static int	yml_fd = -1, ini_fd = -1;
static char	yml_path[64], ini_path[64];

/* conf_load's messages about the form of the file, not its values. */
static const char *const form_errors[] = {
	"bad flow name", "cannot parse", "duplicate key", "duplicate section",
	"outside any", "NUL byte", "line longer than", "syntax error",
	"unexpected text after section", "unknown key", "unknown section",
	NULL
};

static int
memfd(const char *name, char *path, size_t len)
{
	int	 fd = memfd_create(name, MFD_CLOEXEC);

	if (fd < 0) {
		perror("memfd_create");
		abort();
	}
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	setenv("DIS_AK", "FUZZAK", 1);
	setenv("DIS_SK", "FUZZSK", 1);
	unsetenv("DIS_ENCRYPT_KEY");
	unsetenv("CREDENTIALS_DIRECTORY");
	log_setup(0, false);
	yml_fd = memfd("agent.yml", yml_path, sizeof(yml_path));
	ini_fd = memfd("agent.ini", ini_path, sizeof(ini_path));
	return 0;
}

static void
put(int fd, const void *data, size_t size)
{
	size_t	 off = 0;
	ssize_t	 n;

	if (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0)
		abort();
	while (off < size) {
		n = write(fd, (const char *)data + off, size - off);
		if (n <= 0)
			abort();
		off += (size_t)n;
	}
}

/* Every line: blank, a comment, [section] or "key = value". */
static void
check_lines(const char *ini, size_t len)
{
	const char	*p = ini, *end = ini + len, *nl;

	if (memchr(ini, '\0', len) != NULL)
		abort();
	for (; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			abort();	/* the last line has its newline */
		if (nl == p || *p == ';' || *p == '[')
			continue;
		if (memmem(p, (size_t)(nl - p), " = ", 3) == NULL)
			abort();
	}
}

static void
check_loads(const char *ini, size_t len)
{
	struct conf	*c = NULL;
	char		 err[1024];
	size_t		 i;

	put(ini_fd, ini, len);
	err[0] = '\0';
	if (conf_load(ini_path, &c, err, sizeof(err)) == 0) {
		conf_free(c);
		return;
	}
	for (i = 0; form_errors[i] != NULL; i++)
		if (strstr(err, form_errors[i]) != NULL) {
			fprintf(stderr, "imported agent.ini refused: %s\n"
			    "--- agent.ini\n%.*s", err, (int)len, ini);
			abort();
		}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	*out = NULL, *err = NULL;
	size_t	 outlen = 0, errlen = 0;
	FILE	*fo, *fe;
	int	 rc;

	put(yml_fd, data, size);
	fo = open_memstream(&out, &outlen);
	fe = open_memstream(&err, &errlen);
	if (fo == NULL || fe == NULL)
		abort();
	rc = importyml_main(yml_path, fo, fe);
	fclose(fo);
	fclose(fe);
	if (rc == 1) {
		if (outlen != 0 || errlen == 0)
			abort();
	} else if (rc == 0) {
		if (strncmp(out, "; agent.ini for disagent", 24) != 0)
			abort();
		check_lines(out, outlen);
		check_loads(out, outlen);
	} else
		abort();
	free(out);
	free(err);
	return 0;
}
