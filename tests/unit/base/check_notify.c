/*
 * Unit tests for notify: a real AF_UNIX datagram socket, bound at a path in
 * a temp dir or in the abstract namespace, stands in for systemd; each test
 * points $NOTIFY_SOCKET at it and checks the exact bytes of the datagram
 * that arrives.  Also the no-op without $NOTIFY_SOCKET, bad addresses, and
 * the parsing of $WATCHDOG_USEC / $WATCHDOG_PID.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/notify.h"
#include "base/util.h"
#include "testutil.h"

static char	 dir[256];
static char	 sock_path[PATH_MAX];
static int	 sock_fd = -1;

static void
setup(void)
{
	tu_tmpdir(dir, sizeof(dir), "check_notify");
	sock_path[0] = '\0';
	sock_fd = -1;
	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
}

static void
teardown(void)
{
	if (sock_fd != -1)
		close(sock_fd);
	tu_rmtree(dir);
	unsetenv("NOTIFY_SOCKET");
}

/* Bind a datagram socket at dir/notify and point NOTIFY_SOCKET at it. */
static void
listen_path(void)
{
	struct sockaddr_un	 sa;

	snprintf(sock_path, sizeof(sock_path), "%s/notify", dir);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	ck_assert_uint_lt(strlen(sock_path), sizeof(sa.sun_path));
	strcpy(sa.sun_path, sock_path);
	sock_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(sock_fd, 0);
	ck_assert_int_eq(bind(sock_fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(setenv("NOTIFY_SOCKET", sock_path, 1), 0);
}

/* Bind in the abstract namespace; NOTIFY_SOCKET gets the '@' spelling. */
static void
listen_abstract(void)
{
	struct sockaddr_un	 sa;
	char			 name[64];
	size_t			 n;

	n = (size_t)snprintf(name, sizeof(name), "@disagent-check-%ld-%ld",
	    (long)getpid(), (long)time(NULL));
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, name, n);
	sa.sun_path[0] = '\0';
	sock_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(sock_fd, 0);
	ck_assert_int_eq(bind(sock_fd, (struct sockaddr *)&sa,
	    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n)), 0);
	ck_assert_int_eq(setenv("NOTIFY_SOCKET", name, 1), 0);
}

/* The next datagram (it is queued before send returns), NUL-terminated. */
static const char *
receive(void)
{
	static char	 msg[1024];
	ssize_t		 n;

	n = recv(sock_fd, msg, sizeof(msg) - 1, MSG_DONTWAIT);
	ck_assert_msg(n >= 0, "no datagram: %s", strerror(errno));
	msg[n] = '\0';
	return msg;
}

static void
assert_nothing_queued(void)
{
	char	 c;

	ck_assert_int_eq(recv(sock_fd, &c, 1, MSG_DONTWAIT), -1);
	ck_assert_int_eq(errno, EAGAIN);
}

static uint64_t
mono_usec(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

START_TEST(each_call_sends_its_exact_datagram_to_a_path_socket)
{
	listen_path();
	ck_assert_int_eq(notify_ready(), 0);
	ck_assert_str_eq(receive(), "READY=1");
	ck_assert_int_eq(notify_stopping(), 0);
	ck_assert_str_eq(receive(), "STOPPING=1");
	ck_assert_int_eq(notify_watchdog(), 0);
	ck_assert_str_eq(receive(), "WATCHDOG=1");
	ck_assert_int_eq(notify_send("READY=1\nSTATUS=x"), 0);
	ck_assert_str_eq(receive(), "READY=1\nSTATUS=x");
	assert_nothing_queued();
}
END_TEST

START_TEST(abstract_socket_address_gets_a_leading_nul)
{
	listen_abstract();
	ck_assert_int_eq(notify_ready(), 0);
	ck_assert_str_eq(receive(), "READY=1");
	ck_assert_int_eq(notify_watchdog(), 0);
	ck_assert_str_eq(receive(), "WATCHDOG=1");
	assert_nothing_queued();
}
END_TEST

START_TEST(status_is_formatted_and_newlines_flattened)
{
	listen_path();
	ck_assert_int_eq(notify_status("%d flows, %s", 2, "sending"), 0);
	ck_assert_str_eq(receive(), "STATUS=2 flows, sending");
	ck_assert_int_eq(notify_status("line one\nREADY=1"), 0);
	ck_assert_str_eq(receive(), "STATUS=line one READY=1");
}
END_TEST

START_TEST(reloading_carries_the_monotonic_clock_in_usec)
{
	const char	*msg;
	uint64_t	 before, after, got;
	char		*end;

	listen_path();
	before = mono_usec();
	ck_assert_int_eq(notify_reloading(), 0);
	after = mono_usec();
	msg = receive();
	ck_assert_int_eq(strncmp(msg, "RELOADING=1\nMONOTONIC_USEC=", 27), 0);
	ck_assert(msg[27] >= '1' && msg[27] <= '9');
	got = strtoull(msg + 27, &end, 10);
	ck_assert_int_eq(*end, '\0');
	ck_assert_uint_ge(got, before);
	ck_assert_uint_le(got, after);
}
END_TEST

START_TEST(unset_or_empty_socket_is_a_noop)
{
	listen_path();
	unsetenv("NOTIFY_SOCKET");
	ck_assert_int_eq(notify_ready(), 0);
	ck_assert_int_eq(notify_reloading(), 0);
	ck_assert_int_eq(notify_status("x"), 0);
	setenv("NOTIFY_SOCKET", "", 1);
	ck_assert_int_eq(notify_stopping(), 0);
	assert_nothing_queued();
}
END_TEST

START_TEST(bad_addresses_return_negative_errno)
{
	char	 path[PATH_MAX], longname[200];

	log_setup(LOG_LVL_ERROR, false);	/* the warnings are expected */
	snprintf(path, sizeof(path), "%s/nobody-listens", dir);
	setenv("NOTIFY_SOCKET", path, 1);
	ck_assert_int_eq(notify_ready(), -ENOENT);
	setenv("NOTIFY_SOCKET", "relative/socket", 1);
	ck_assert_int_eq(notify_ready(), -EAFNOSUPPORT);
	setenv("NOTIFY_SOCKET", "vsock:2:1234", 1);
	ck_assert_int_eq(notify_ready(), -EAFNOSUPPORT);
	setenv("NOTIFY_SOCKET", "@", 1);
	ck_assert_int_eq(notify_ready(), -EINVAL);
	memset(longname, 'a', sizeof(longname) - 1);
	longname[0] = '/';
	longname[sizeof(longname) - 1] = '\0';
	setenv("NOTIFY_SOCKET", longname, 1);
	ck_assert_int_eq(notify_ready(), -ENAMETOOLONG);
}
END_TEST

/* The lines of the file log that contain needle. */
static int
count_log_lines(const char *log, const char *needle)
{
	char	 line[1024];
	FILE	*f;
	int	 n = 0;

	f = fopen(log, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f) != NULL)
		n += strstr(line, needle) != NULL;
	fclose(f);
	return n;
}

START_TEST(a_failure_is_warned_once_until_it_works_again)
{
	char	 log[PATH_MAX];
	int	 fd, saved, i;

	log_setup(LOG_LVL_INFO, false);
	snprintf(log, sizeof(log), "%s/log", dir);
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	saved = dup(2);
	dup2(fd, 2);
	close(fd);
	/* Nobody listens yet: status every second, one WARN. */
	snprintf(sock_path, sizeof(sock_path), "%s/notify", dir);
	setenv("NOTIFY_SOCKET", sock_path, 1);
	for (i = 0; i < 5; i++)
		ck_assert_int_eq(notify_status("tick %d", i), -ENOENT);
	/* The manager is there: one INFO, and the datagram arrives. */
	listen_path();
	ck_assert_int_eq(notify_status("tick"), 0);
	ck_assert_int_eq(notify_status("tick"), 0);
	ck_assert_str_eq(receive(), "STATUS=tick");
	/* Gone again: a WARN again, once. */
	close(sock_fd);
	sock_fd = -1;
	unlink(sock_path);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(notify_ready(), -ENOENT);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	ck_assert_int_eq(count_log_lines(log, "cannot notify"), 2);
	ck_assert_int_eq(count_log_lines(log, "works again"), 1);
}
END_TEST

START_TEST(watchdog_usec_is_read_from_the_environment)
{
	char	 pid[32];

	ck_assert_uint_eq(notify_watchdog_usec(), 0);
	setenv("WATCHDOG_USEC", "30000000", 1);
	ck_assert_uint_eq(notify_watchdog_usec(), 30000000);
	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	setenv("WATCHDOG_PID", pid, 1);
	ck_assert_uint_eq(notify_watchdog_usec(), 30000000);
	setenv("WATCHDOG_USEC", "18446744073709551615", 1);
	ck_assert_uint_eq(notify_watchdog_usec(), UINT64_MAX);
	unsetenv("WATCHDOG_PID");
	unsetenv("WATCHDOG_USEC");
}
END_TEST

START_TEST(watchdog_for_another_pid_or_garbage_is_off)
{
	char	 pid[32];

	setenv("WATCHDOG_USEC", "30000000", 1);
	snprintf(pid, sizeof(pid), "%ld", (long)getpid() + 1);
	setenv("WATCHDOG_PID", pid, 1);
	ck_assert_uint_eq(notify_watchdog_usec(), 0);
	setenv("WATCHDOG_PID", "12x", 1);
	ck_assert_uint_eq(notify_watchdog_usec(), 0);
	unsetenv("WATCHDOG_PID");
	setenv("WATCHDOG_USEC", "30s", 1);
	ck_assert_uint_eq(notify_watchdog_usec(), 0);
	setenv("WATCHDOG_USEC", "-5", 1);
	ck_assert_uint_eq(notify_watchdog_usec(), 0);
	setenv("WATCHDOG_USEC", "", 1);
	ck_assert_uint_eq(notify_watchdog_usec(), 0);
	setenv("WATCHDOG_USEC", "0", 1);
	ck_assert_uint_eq(notify_watchdog_usec(), 0);
	setenv("WATCHDOG_USEC", "99999999999999999999", 1);
	ck_assert_uint_eq(notify_watchdog_usec(), 0);
	unsetenv("WATCHDOG_USEC");
}
END_TEST

static Suite *
notify_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("notify");
	tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, each_call_sends_its_exact_datagram_to_a_path_socket);
	tcase_add_test(tc, abstract_socket_address_gets_a_leading_nul);
	tcase_add_test(tc, status_is_formatted_and_newlines_flattened);
	tcase_add_test(tc, reloading_carries_the_monotonic_clock_in_usec);
	tcase_add_test(tc, unset_or_empty_socket_is_a_noop);
	tcase_add_test(tc, bad_addresses_return_negative_errno);
	tcase_add_test(tc, a_failure_is_warned_once_until_it_works_again);
	tcase_add_test(tc, watchdog_usec_is_read_from_the_environment);
	tcase_add_test(tc, watchdog_for_another_pid_or_garbage_is_off);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(notify_suite());
}
