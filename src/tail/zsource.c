/*
 * Compressed files as decompressed bytes (zsource.h).  One decompressor per
 * source, fed from the file with pread; the bytes of the latest read are
 * kept, since the tailer reads again from inside its last read (a partial
 * line, or its read window went to another file).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>

#include "tail/zsource.h"

#define IN_CHUNK	(64 * 1024)
#define SKIP_CHUNK	(64 * 1024)

struct zsource {
	int		 fd;
	enum zkind	 kind;
	z_stream	 z;		/* ZKIND_GZIP */
	bool		 z_init;
	ZSTD_DStream	*zd;		/* ZKIND_ZSTD */
	unsigned char	*in;		/* compressed bytes read, not used */
	size_t		 in_pos, in_len;
	uint64_t	 in_off;	/* file offset after in_len */
	bool		 in_eof;
	bool		 ended;		/* the stream's last frame/member ended */
	uint64_t	 out_pos;	/* decompressed offset of the next byte */
	char		*keep;		/* the latest read's bytes */
	size_t		 keep_len, keep_cap;
	uint64_t	 keep_off;
};

enum zkind
zsource_kind(int fd)
{
	unsigned char	 m[4];

	if (pread(fd, m, sizeof(m), 0) != (ssize_t)sizeof(m))
		return ZKIND_NONE;
	if (m[0] == 0x1f && m[1] == 0x8b)
		return ZKIND_GZIP;
	if (m[0] == 0x28 && m[1] == 0xb5 && m[2] == 0x2f && m[3] == 0xfd)
		return ZKIND_ZSTD;
	return ZKIND_NONE;
}

bool
zsource_name_compressed(const char *name)
{
	static const char *const sfx[] = { ".gz", ".zst", ".xz", ".bz2" };
	size_t	 n = strlen(name), i, k;

	for (i = 0; i < ARRAY_SIZE(sfx); i++) {
		k = strlen(sfx[i]);
		if (n > k && strcmp(name + n - k, sfx[i]) == 0)
			return true;
	}
	return false;
}

/* (Re)start decompressing at the beginning of the file. */
static int
restart(struct zsource *s)
{
	s->in_pos = s->in_len = 0;
	s->in_off = 0;
	s->in_eof = false;
	s->ended = false;
	s->out_pos = 0;
	if (s->kind == ZKIND_GZIP) {
		if (s->z_init)
			inflateEnd(&s->z);
		memset(&s->z, 0, sizeof(s->z));
		/* 15 + 32: a gzip or zlib header, detected. */
		if (inflateInit2(&s->z, 15 + 32) != Z_OK)
			return -ENOMEM;
		s->z_init = true;
		return 0;
	}
	if (s->zd == NULL && (s->zd = ZSTD_createDStream()) == NULL)
		return -ENOMEM;
	return ZSTD_isError(ZSTD_initDStream(s->zd)) ? -EIO : 0;
}

struct zsource *
zsource_new(int fd, enum zkind kind, size_t keep)
{
	struct zsource	*s;

	s = xcalloc(1, sizeof(*s));
	s->fd = fd;
	s->kind = kind;
	s->in = xmalloc(IN_CHUNK);
	s->keep_cap = keep;
	if (restart(s) != 0) {
		zsource_free(s);
		return NULL;
	}
	return s;
}

void
zsource_free(struct zsource *s)
{
	if (s == NULL)
		return;
	if (s->z_init)
		inflateEnd(&s->z);
	ZSTD_freeDStream(s->zd);
	free(s->in);
	free(s->keep);
	free(s);
}

/* More compressed input when it is used up; false at the end of file. */
static bool
fill(struct zsource *s)
{
	ssize_t	 n;

	if (s->in_pos < s->in_len)
		return true;
	if (s->in_eof)
		return false;
	do
		n = pread(s->fd, s->in, IN_CHUNK, (off_t)s->in_off);
	while (n < 0 && errno == EINTR);
	if (n <= 0) {
		s->in_eof = true;
		return false;
	}
	s->in_pos = 0;
	s->in_len = (size_t)n;
	s->in_off += (uint64_t)n;
	return true;
}

/* A gzip member ended: another one may follow (multi-member files). */
static int
gzip_member_end(struct zsource *s)
{
	if (!fill(s) || s->in[s->in_pos] != 0x1f) {
		/* Trailing zeros or nothing: the stream is over. */
		s->ended = true;
		return 0;
	}
	return inflateReset(&s->z) == Z_OK ? 0 : -EBADMSG;
}

/* Decompress up to len bytes into dst: the number, 0 at the end. */
static ssize_t
produce(struct zsource *s, unsigned char *dst, size_t len)
{
	ZSTD_inBuffer	 in;
	ZSTD_outBuffer	 out;
	size_t		 got = 0, r;
	int		 zr;

	while (got < len && !s->ended) {
		if (!fill(s))
			return got > 0 ? (ssize_t)got : -EAGAIN;
		if (s->kind == ZKIND_GZIP) {
			s->z.next_in = s->in + s->in_pos;
			s->z.avail_in = (uInt)(s->in_len - s->in_pos);
			s->z.next_out = dst + got;
			s->z.avail_out = (uInt)(len - got);
			zr = inflate(&s->z, Z_NO_FLUSH);
			got = len - s->z.avail_out;
			s->in_pos = s->in_len - s->z.avail_in;
			if (zr == Z_STREAM_END && gzip_member_end(s) != 0)
				return -EBADMSG;
			if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR)
				return -EBADMSG;
			continue;
		}
		in.src = s->in;
		in.size = s->in_len;
		in.pos = s->in_pos;
		out.dst = dst;
		out.size = len;
		out.pos = got;
		r = ZSTD_decompressStream(s->zd, &out, &in);
		if (ZSTD_isError(r))
			return -EBADMSG;
		got = out.pos;
		s->in_pos = in.pos;
		/* A frame is complete (r == 0) and no input is left. */
		if (r == 0 && !fill(s))
			s->ended = true;
	}
	s->out_pos += got;
	return (ssize_t)got;
}

/* Decompress and drop bytes up to offset off. */
static int
skip_to(struct zsource *s, uint64_t off)
{
	unsigned char	*scratch;
	ssize_t		 n = 0;

	if (s->out_pos == off)
		return 0;
	scratch = xmalloc(SKIP_CHUNK);
	while (s->out_pos < off) {
		n = produce(s, scratch, (size_t)MIN((uint64_t)SKIP_CHUNK,
		    off - s->out_pos));
		if (n <= 0)
			break;
	}
	free(scratch);
	return s->out_pos == off ? 0 : (n < 0 ? (int)n : -EIO);
}

int
zsource_size(struct zsource *s, uint64_t *size)
{
	unsigned char	*scratch;
	ssize_t		 n;
	int		 rc;

	if ((rc = restart(s)) != 0)
		return rc;
	scratch = xmalloc(SKIP_CHUNK);
	while ((n = produce(s, scratch, SKIP_CHUNK)) > 0)
		;
	free(scratch);
	if (n < 0)
		return (int)n;
	*size = s->out_pos;
	return restart(s);
}

/* Remember the bytes of the latest read (at most keep_cap of its end). */
static void
keep_read(struct zsource *s, const char *p, size_t n, uint64_t off)
{
	size_t	 k = MIN(n, s->keep_cap);

	if (k == 0)
		return;
	if (s->keep == NULL || s->keep_len < k)
		s->keep = xrealloc(s->keep, k);
	memcpy(s->keep, p + (n - k), k);
	s->keep_len = k;
	s->keep_off = off + (n - k);
}

ssize_t
zsource_pread(struct zsource *s, void *dst, size_t len, uint64_t off)
{
	char		*d = dst;
	size_t		 have = 0;
	ssize_t		 n;
	int		 rc;

	if (off < s->out_pos) {
		if (s->keep_len > 0 && off >= s->keep_off &&
		    off < s->keep_off + s->keep_len) {
			have = (size_t)MIN((uint64_t)len,
			    s->keep_off + s->keep_len - off);
			memcpy(d, s->keep + (off - s->keep_off), have);
			if (off + have != s->out_pos)
				return (ssize_t)have;	/* inside the kept */
		} else if ((rc = restart(s)) != 0)
			return rc;
	}
	if (have == 0 && (rc = skip_to(s, off)) != 0)
		return rc == -EAGAIN ? 0 : rc;
	n = have < len ? produce(s, (unsigned char *)d + have, len - have) : 0;
	if (n < 0 && n != -EAGAIN)
		return n;
	if (n > 0)
		have += (size_t)n;
	keep_read(s, d, have, off);
	return (ssize_t)have;
}

ssize_t
zsource_head(int fd, enum zkind kind, void *dst, size_t len)
{
	struct zsource	*s;
	ssize_t		 n;

	s = zsource_new(fd, kind, 0);
	if (s == NULL)
		return -ENOMEM;
	n = produce(s, dst, len);
	zsource_free(s);
	return n == -EAGAIN ? 0 : n;
}
