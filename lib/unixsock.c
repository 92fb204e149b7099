/*
 * Unix socket paths longer than sun_path (108 bytes): a session's
 * sockets are DIR/NAME.attach with NAME up to 64 bytes, and DIR is the
 * user's runtime directory, as long as it is.  The kernel resolves
 * /proc/self/fd/N/NAME like any path, so an open folder makes the
 * path short; the socket keeps its real name.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/unixsock.h"

typedef int (*unixsock_fn)(int, const struct sockaddr *, socklen_t);

/* Call fn with the address of path, through its folder if need be. */
static int
unixsock_call(unixsock_fn fn, int fd, const char *path)
{
	struct sockaddr_un	 sun;
	const char		*base = strrchr(path, '/');
	char			 dir[4096];
	int			 dfd, r, saved;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (strlen(path) < sizeof sun.sun_path) {
		memcpy(sun.sun_path, path, strlen(path));
		return (fn(fd, (struct sockaddr *)&sun, sizeof sun));
	}
	if (base == NULL || (size_t)(base - path) >= sizeof dir) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	memcpy(dir, path, (size_t)(base - path));
	dir[base - path] = '\0';
	if ((dfd = open(base == path ? "/" : dir, O_PATH | O_DIRECTORY |
	    O_CLOEXEC)) == -1)
		return (-1);
	if ((size_t)snprintf(sun.sun_path, sizeof sun.sun_path,
	    "/proc/self/fd/%d%s", dfd, base) >= sizeof sun.sun_path) {
		close(dfd);
		errno = ENAMETOOLONG;
		return (-1);
	}
	r = fn(fd, (struct sockaddr *)&sun, sizeof sun);
	saved = errno;
	close(dfd);
	errno = saved;
	return (r);
}

int
unixsock_bind(int fd, const char *path)
{
	return (unixsock_call(bind, fd, path));
}

int
unixsock_connect(int fd, const char *path)
{
	return (unixsock_call(connect, fd, path));
}
