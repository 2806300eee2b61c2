/*
 * `disagent encrypt [--key-file FILE]`: makes the DIS Agent's encrypted
 * values (cred.c) for agent.ini.  The key comes from FILE or is typed twice
 * at the terminal, the value from stdin; on a terminal neither is echoed:
 * echo goes off before each prompt is written, so nothing typed after it
 * shows, and a signal while it is off gives the terminal back first.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "conf/cred.h"
#include "conf/credcmd.h"

#define VALUE_MAX	(64 * 1024)	/* bytes of a key or a value */

static struct termios	 saved_tio;
static volatile sig_atomic_t saved_fd = -1;

/* A signal while echo is off: give the terminal back, then die of it. */
static void
on_tty_signal(int sig)
{
	if (saved_fd >= 0)
		(void)tcsetattr(saved_fd, TCSAFLUSH, &saved_tio);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void
echo_off(int fd)
{
	struct termios	 t;

	if (tcgetattr(fd, &saved_tio) != 0)
		return;
	t = saved_tio;
	t.c_lflag &= ~(tcflag_t)ECHO;
	t.c_lflag |= ECHONL;
	saved_fd = fd;
	signal(SIGINT, on_tty_signal);
	signal(SIGTERM, on_tty_signal);
	signal(SIGHUP, on_tty_signal);
	signal(SIGQUIT, on_tty_signal);
	if (tcsetattr(fd, TCSAFLUSH, &t) != 0)
		saved_fd = -1;
}

static void
echo_on(void)
{
	if (saved_fd >= 0)
		(void)tcsetattr(saved_fd, TCSANOW, &saved_tio);
	saved_fd = -1;
}

/*
 * Read from fd up to a newline (line) or the end, at most VALUE_MAX bytes,
 * into b; one trailing newline is dropped.  0 or a negative errno.
 */
static int
read_fd(int fd, bool line, struct buf *b)
{
	char	 c;
	ssize_t	 r;

	for (;;) {
		r = read(fd, &c, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0 || (line && c == '\n'))
			break;
		if (b->len == VALUE_MAX)
			return -EFBIG;
		buf_addc(b, c);
	}
	c = 0;
	if (b->len > 0 && b->data[b->len - 1] == '\n')
		buf_setlen(b, b->len - 1);
	if (b->len > 0 && b->data[b->len - 1] == '\r')
		buf_setlen(b, b->len - 1);
	return 0;
}

/* A line from the terminal fd without echo, after prompt. */
static int
prompt_secret(int fd, const char *prompt, struct buf *b)
{
	int	 rc;

	/* Echo off first: what is typed after the prompt never shows. */
	echo_off(fd);
	rc = write_all(fd, prompt, strlen(prompt)) != 0 ? -EIO :
	    read_fd(fd, true, b);
	echo_on();
	return rc;
}

/* The key: FILE, or typed twice at the terminal. */
static int
read_key(const char *key_file, struct buf *key)
{
	struct buf	 again;
	char		*v;
	mode_t		 mode;
	int		 fd, rc;

	if (key_file != NULL) {
		rc = cred_read_file(key_file, &v, &mode);
		if (rc != 0) {
			fprintf(stderr, "disagent encrypt: %s: %s\n", key_file,
			    strerror(-rc));
			return -1;
		}
		if (mode & (S_IRGRP | S_IROTH))
			fprintf(stderr, "disagent encrypt: warning: %s is "
			    "readable by group or others (mode %04o)\n",
			    key_file, (unsigned)mode);
		buf_addstr(key, v);
		secret_free(v);
		return 0;
	}
	fd = open("/dev/tty", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "disagent encrypt: no terminal to ask for the "
		    "key: use --key-file FILE\n");
		return -1;
	}
	buf_init(&again);
	buf_alloc_exact(&again, VALUE_MAX);	/* never grown: see buf_wipe */
	rc = prompt_secret(fd, "encrypt.key: ", key);
	if (rc == 0)
		rc = prompt_secret(fd, "encrypt.key again: ", &again);
	close(fd);
	if (rc == 0 && (key->len != again.len ||
	    memcmp(key->data, again.data, key->len) != 0)) {
		fprintf(stderr, "disagent encrypt: the keys differ\n");
		rc = -1;
	}
	buf_wipe(&again);
	return rc == 0 ? 0 : -1;
}

/* The value: typed without echo on a terminal, or all of stdin. */
static int
read_value(struct buf *v)
{
	int	 rc;

	if (isatty(STDIN_FILENO))
		rc = prompt_secret(STDIN_FILENO, "value to encrypt: ", v);
	else
		rc = read_fd(STDIN_FILENO, false, v);
	if (rc != 0)
		fprintf(stderr, "disagent encrypt: reading the value: %s\n",
		    strerror(-rc));
	return rc;
}

static int
encrypt_usage(void)
{
	fprintf(stderr, "usage: disagent encrypt [--key-file FILE] < VALUE\n");
	return 2;
}

int
credcmd_encrypt(int argc, char **argv)
{
	struct buf	 key, value;
	const char	*key_file = NULL;
	char		*out = NULL;
	int		 rc = 1;

	if (argc == 3 && strcmp(argv[1], "--key-file") == 0)
		key_file = argv[2];
	else if (argc == 2 && strncmp(argv[1], "--key-file=", 11) == 0)
		key_file = argv[1] + 11;
	else if (argc != 1)
		return encrypt_usage();
	buf_init(&key);
	buf_init(&value);
	/* Never grown, so no copy of a secret is left behind (buf_wipe). */
	buf_alloc_exact(&key, VALUE_MAX);
	buf_alloc_exact(&value, VALUE_MAX);
	if (read_key(key_file, &key) != 0 || read_value(&value) != 0)
		goto out;
	if (key.len == 0 || memchr(key.data, '\0', key.len) != NULL) {
		fprintf(stderr, "disagent encrypt: the key is empty (the DIS "
		    "Agent's built-in key is public; choose your own)\n");
		goto out;
	}
	if (value.len == 0 || !cred_text_ok(value.data)) {
		fprintf(stderr, "disagent encrypt: the value is empty or not "
		    "one line of text\n");
		goto out;
	}
	out = cred_encrypt(value.data, value.len, key.data);
	if (out == NULL) {
		fprintf(stderr, "disagent encrypt: libcrypto failed\n");
		goto out;
	}
	printf("%s\n", out);
	rc = fflush(stdout) == 0 ? 0 : 1;
out:
	free(out);
	buf_wipe(&key);
	buf_wipe(&value);
	return rc;
}
