/*
 * libFuzzer target for the state file reader (statefile.c, statefile_v1.c).
 * The input is a state file, read by statefile_read from a memfd through
 * /proc/self/fd/N.  Two more readings let the fuzzer past the checksums,
 * which nearly every mutation breaks: the lines after a version 2 header
 * (or the whole input) under a header with their true crc32 and count, and
 * a version 1 document with its "crc32" set to what its "files" give.
 * Whatever reads is written back with statefile_write (to a tmpfs file
 * when /dev/shm exists) and read again: the writer must write what the
 * reader takes, entry for entry, field for field.  Contract (statefile.h):
 * 0 with a table, or -EBADMSG with the table empty.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <jansson.h>
#include <zlib.h>

#include "base/atomicfile.h"
#include "base/log.h"
#include "base/util.h"
#include "state/regtable.h"
#include "state/statefile.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);
int	LLVMFuzzerInitialize(int *, char ***);

#define V1_HEAD		"{\"version\": 1, \"crc32\": \""
#define V2_TAG		"{\"version\":2"

static int	memfd = -1;
static char	in_path[64];
static char	out_path[256];

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char	*tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" :
			    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	log_setup(0, false);		/* the reader's complaints: expected */
	memfd = memfd_create("state.json", MFD_CLOEXEC);
	if (memfd < 0) {
		perror("memfd_create");
		abort();
	}
	snprintf(in_path, sizeof(in_path), "/proc/self/fd/%d", memfd);
	snprintf(out_path, sizeof(out_path), "%s/fuzz_state.%ld.json", tmp,
	    (long)getpid());
	return 0;
}

static void
put_input(const void *data, size_t size)
{
	size_t	 off = 0;
	ssize_t	 n;

	if (ftruncate(memfd, 0) != 0 || lseek(memfd, 0, SEEK_SET) != 0)
		abort();
	while (off < size) {
		n = write(memfd, (const char *)data + off, size - off);
		if (n <= 0)
			abort();
		off += (size_t)n;
	}
}

static bool
same_entry(const struct reg_entry *a, const struct reg_entry *b)
{
	const struct reg_spool *sa = reg_spool(a), *sb = reg_spool(b);
	const struct reg_done *da = reg_done(a), *db = reg_done(b);

	if (strcmp(a->flow, b->flow) != 0 || strcmp(a->path, b->path) != 0 ||
	    a->fp_crc != b->fp_crc || a->fp_len != b->fp_len ||
	    a->offset != b->offset || a->size != b->size ||
	    a->updated != b->updated || (da == NULL) != (db == NULL))
		return false;
	if ((sa == NULL) != (sb == NULL) || (sa != NULL &&
	    (strcmp(sa->file, sb->file) != 0 || sa->dev != sb->dev ||
	    sa->ino != sb->ino)))
		return false;
	return da == NULL || (da->mtime_ns == db->mtime_ns &&
	    da->tail_crc == db->tail_crc && da->tail_len == db->tail_len);
}

/* t (as read) written and read back: the same entries. */
static void
round_trip(struct reg_table *t)
{
	struct atomicfile	 af;
	struct reg_table	 back;
	struct reg_entry	**v, *e;
	size_t			 i;
	int			 r, version;

	r = atomicfile_open(&af, out_path, 0600, 0);
	if (r == 0)
		r = statefile_write(&af, t);
	if (r == 0)
		r = atomicfile_commit(&af, NULL, NULL);
	atomicfile_cleanup(&af);
	if (r == -EMSGSIZE)
		return;		/* refused, as the contract allows */
	if (r != 0)
		abort();
	regtable_init(&back);
	if (statefile_read(out_path, &back, &version) != 0 ||
	    version != STATEFILE_VERSION || back.n != t->n)
		abort();
	v = regtable_sorted(t);
	for (i = 0; i < t->n; i++) {
		e = regtable_find(&back, v[i]->flow, v[i]->dev, v[i]->ino);
		if (e == NULL || !same_entry(v[i], e))
			abort();
	}
	free(v);
	regtable_cleanup(&back);
	(void)unlink(out_path);
}

static void
read_one(const void *data, size_t size)
{
	struct reg_table	 t;
	int			 r, version;

	put_input(data, size);
	regtable_init(&t);
	r = statefile_read(in_path, &t, &version);
	if (r == 0) {
		if (version != 1 && version != 2)
			abort();
		round_trip(&t);
	} else if (r != -EBADMSG || t.n != 0)
		abort();
	regtable_cleanup(&t);
}

/* The lines after a version 2 header, or all of data, with a true one. */
static void
read_v2_fixed(const uint8_t *data, size_t size)
{
	const uint8_t	*body = data, *nl;
	struct buf	 b;
	size_t		 n, i, lines = 0;

	if (size >= strlen(V2_TAG) && memcmp(data, V2_TAG,
	    strlen(V2_TAG)) == 0 && (nl = memchr(data, '\n', size)) != NULL)
		body = nl + 1;
	n = size - (size_t)(body - data);
	for (i = 0; i < n; i++)
		lines += body[i] == '\n';
	lines += n > 0 && body[n - 1] != '\n';
	buf_init(&b);
	buf_printf(&b, V2_TAG ",\"crc32\":\"%08lx\",\"entries\":%zu}\n",
	    crc32(crc32(0L, Z_NULL, 0), body, (uInt)n), lines);
	buf_add(&b, body, n);
	read_one(b.data, b.len);
	buf_cleanup(&b);
}

static int
crc_cb(const char *p, size_t n, void *arg)
{
	uLong	*crc = arg;

	*crc = crc32(*crc, (const Bytef *)p, (uInt)n);
	return 0;
}

/* A version 1 document with the crc32 its "files" give. */
static void
read_v1_fixed(const uint8_t *data, size_t size)
{
	json_t		*root, *files, *o;
	uLong		 crc = crc32(0L, Z_NULL, 0);
	char		*copy, hex[9];
	size_t		 i, at = strlen(V1_HEAD);

	if (size < at + 8 || memcmp(data, V1_HEAD, at) != 0)
		return;
	root = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES,
	    NULL);
	files = json_object_get(root, "files");
	if (json_is_array(files)) {
		crc = crc32(crc, (const Bytef *)"[", 1);
		json_array_foreach(files, i, o) {
			if (i > 0)
				crc = crc32(crc, (const Bytef *)",", 1);
			json_dump_callback(o, crc_cb, &crc, JSON_COMPACT);
		}
		crc = crc32(crc, (const Bytef *)"]", 1);
		copy = xmalloc(size);
		memcpy(copy, data, size);
		snprintf(hex, sizeof(hex), "%08lx", (unsigned long)crc);
		memcpy(copy + at, hex, 8);
		read_one(copy, size);
		free(copy);
	}
	json_decref(root);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	read_one(data, size);
	read_v2_fixed(data, size);
	read_v1_fixed(data, size);
	return 0;
}
