/*
 * Unit tests for lib/sdnotify: the datagram a service manager listening
 * on $NOTIFY_SOCKET gets, at a path and at an abstract name, and nothing
 * sent when no manager asked.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/sdnotify.h"

/* A service manager's socket, bound where name says ('@': abstract). */
static int
manager_open(const char *name)
{
	struct sockaddr_un	sun;
	socklen_t		len;
	int			fd;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	assert_true(strlen(name) < sizeof sun.sun_path);
	memcpy(sun.sun_path, name, strlen(name));
	if (name[0] == '@')
		sun.sun_path[0] = '\0';
	len = offsetof(struct sockaddr_un, sun_path) + strlen(name);
	assert_true((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK,
	    0)) != -1);
	assert_int_equal(bind(fd, (struct sockaddr *)&sun, len), 0);
	assert_int_equal(setenv("NOTIFY_SOCKET", name, 1), 0);
	return (fd);
}

/* The one datagram waiting on fd, as a string. */
static const char *
manager_read(int fd)
{
	static char	buf[4096];
	ssize_t		n;

	assert_true((n = recv(fd, buf, sizeof buf - 1, 0)) > 0);
	buf[n] = '\0';
	assert_int_equal(recv(fd, buf + n, 1, 0), -1);
	assert_int_equal(errno, EAGAIN);
	return (buf);
}

/* Ready, status and main pid, then stopping, at a path. */
static void
test_sdnotify_path(void **state)
{
	char	dir[] = "/tmp/test_sdnotify.XXXXXX", path[128], want[128];
	int	fd;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/notify", dir);
	fd = manager_open(path);
	assert_int_equal(sdnotify("READY=1\nSTATUS=serving on %s\n"
	    "MAINPID=%ld", "127.0.0.1:3128", (long)getpid()), 1);
	snprintf(want, sizeof want, "READY=1\nSTATUS=serving on "
	    "127.0.0.1:3128\nMAINPID=%ld", (long)getpid());
	assert_string_equal(manager_read(fd), want);
	assert_int_equal(sdnotify("STOPPING=1"), 1);
	assert_string_equal(manager_read(fd), "STOPPING=1");
	close(fd);
	unlink(path);
	rmdir(dir);
	unsetenv("NOTIFY_SOCKET");
}

/* An abstract name, as systemd gives some services. */
static void
test_sdnotify_abstract(void **state)
{
	char	name[64];
	int	fd;

	snprintf(name, sizeof name, "@test_sdnotify/%ld", (long)getpid());
	fd = manager_open(name);
	assert_int_equal(sdnotify("READY=1"), 1);
	assert_string_equal(manager_read(fd), "READY=1");
	close(fd);
	unsetenv("NOTIFY_SOCKET");
}

/* No manager asked: nothing to do.  A bad or dead socket: an error. */
static void
test_sdnotify_none(void **state)
{
	unsetenv("NOTIFY_SOCKET");
	assert_int_equal(sdnotify("READY=1"), 0);
	setenv("NOTIFY_SOCKET", "", 1);
	assert_int_equal(sdnotify("READY=1"), 0);
	setenv("NOTIFY_SOCKET", "relative/path", 1);
	assert_int_equal(sdnotify("READY=1"), -1);
	assert_int_equal(errno, EINVAL);
	setenv("NOTIFY_SOCKET", "@", 1);
	assert_int_equal(sdnotify("READY=1"), -1);
	assert_int_equal(errno, EINVAL);
	setenv("NOTIFY_SOCKET", "/nonexistent/test_sdnotify", 1);
	assert_int_equal(sdnotify("READY=1"), -1);
	assert_int_equal(errno, ENOENT);
	unsetenv("NOTIFY_SOCKET");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sdnotify_path),
		cmocka_unit_test(test_sdnotify_abstract),
		cmocka_unit_test(test_sdnotify_none),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
