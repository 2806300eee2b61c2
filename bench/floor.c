/*
 * floor: the benchmark's baseline, the least CPU any agent must spend to
 * ship a file as JSON PutRecords bodies: read it in 1 MiB chunks, Base64 each
 * chunk into one reused buffer with the project's encoder (codec_base64 in
 * src/wire/codec.c), and SHA-256 that text as the signer hashes a request body
 * (libcrypto EVP_Digest, once per chunk).  No framing, JSON, TLS or I/O to
 * a peer: bench/run prints the agent's CPU per GiB against this one.
 * Each step is also timed on its own (process CPU clock around it), so that
 * bench/run can add read and base64 to bench/transport, which hashes the
 * real bodies itself, without counting SHA-256 twice.
 *
 * usage: floor FILE
 * prints: bytes=N cpu_s=USER+SYS wall_s=W read_s=R base64_s=B sha256_s=H
 *         sha256=HEX-OF-THE-LAST-CHUNK
 * (the hash is printed so the work cannot be optimised away; R + B + H is
 * cpu_s but for the clock reads and the loop).
 */
#include "config.h"

#include <sys/resource.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "base/util.h"
#include "wire/codec.h"

#define CHUNK	(1024 * 1024)

static double
cpu_seconds(void)
{
	struct rusage	ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	    (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static double
wall_seconds(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The CPU time of the process so far, from the clock (user + sys). */
static double
process_cpu(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The time of each step, in seconds. */
struct steps {
	double	read_s;
	double	base64_s;
	double	sha256_s;
};

/* Read, encode and hash the whole of fd; the byte count or -errno. */
static long long
run(int fd, unsigned char md[EVP_MAX_MD_SIZE], struct steps *st)
{
	struct buf	 b64;
	char		*chunk;
	long long	 total = 0;
	ssize_t		 n;
	unsigned int	 mdlen;
	double		 t0, t1, t2, t3;

	chunk = xmalloc(CHUNK);
	buf_init(&b64);
	buf_reserve(&b64, codec_base64_len(CHUNK));
	for (;;) {
		t0 = process_cpu();
		if ((n = read(fd, chunk, CHUNK)) <= 0)
			break;
		t1 = process_cpu();
		buf_reset(&b64);
		codec_base64(chunk, (size_t)n, &b64);
		t2 = process_cpu();
		if (EVP_Digest(b64.data, b64.len, md, &mdlen, EVP_sha256(),
		    NULL) != 1) {
			total = -EIO;
			break;
		}
		t3 = process_cpu();
		st->read_s += t1 - t0;
		st->base64_s += t2 - t1;
		st->sha256_s += t3 - t2;
		total += n;
	}
	st->read_s += process_cpu() - t0;	/* the read that ended it */
	if (n < 0)
		total = -errno;
	buf_cleanup(&b64);
	free(chunk);
	return total;
}

int
main(int argc, char **argv)
{
	unsigned char	 md[EVP_MAX_MD_SIZE];
	struct steps	 st = { 0, 0, 0 };
	double		 c0, w0;
	long long	 total;
	int		 fd, i;

	if (argc != 2) {
		fprintf(stderr, "usage: floor FILE\n");
		return 2;
	}
	if ((fd = open(argv[1], O_RDONLY)) < 0) {
		fprintf(stderr, "floor: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	memset(md, 0, sizeof(md));
	c0 = cpu_seconds();
	w0 = wall_seconds();
	total = run(fd, md, &st);
	close(fd);
	if (total < 0) {
		fprintf(stderr, "floor: %s: %s\n", argv[1],
		    strerror((int)-total));
		return 1;
	}
	printf("bytes=%lld cpu_s=%.3f wall_s=%.3f read_s=%.3f base64_s=%.3f "
	    "sha256_s=%.3f sha256=", total, cpu_seconds() - c0,
	    wall_seconds() - w0, st.read_s, st.base64_s, st.sha256_s);
	for (i = 0; i < 32; i++)
		printf("%02x", md[i]);
	printf("\n");
	return 0;
}
