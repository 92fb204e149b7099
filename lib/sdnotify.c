/*
 * The service manager's notification protocol (sd_notify(3)): one
 * datagram of NEWLINE-separated assignments to the unix socket that
 * $NOTIFY_SOCKET names, a path, or after '@' a name in the abstract
 * namespace.  It is small enough that pinhole does not link libsystemd
 * for it, and runs the same under any manager that speaks it.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/sdnotify.h"

/* Fill the address $NOTIFY_SOCKET names: 1, 0 when unset, -1 bad. */
static int
sdnotify_addr(struct sockaddr_un *sun, socklen_t *len)
{
	const char	*name = getenv("NOTIFY_SOCKET");
	size_t		 n;

	if (name == NULL || name[0] == '\0')
		return (0);
	n = strlen(name);
	if ((name[0] != '/' && name[0] != '@') || n < 2 ||
	    n >= sizeof sun->sun_path) {
		errno = EINVAL;
		return (-1);
	}
	memset(sun, 0, sizeof *sun);
	sun->sun_family = AF_UNIX;
	memcpy(sun->sun_path, name, n);
	/* An abstract name starts with a NUL and has none at the end. */
	if (name[0] == '@')
		sun->sun_path[0] = '\0';
	*len = offsetof(struct sockaddr_un, sun_path) + n;
	return (1);
}

/* Send assignments to the service manager, if one asked for them. */
int
sdnotify(const char *fmt, ...)
{
	struct sockaddr_un	 sun;
	socklen_t		 len;
	va_list			 ap;
	char			 buf[2048];
	ssize_t			 n = -1;
	int			 fd, rv, saved;

	if ((rv = sdnotify_addr(&sun, &len)) != 1)
		return (rv);
	va_start(ap, fmt);
	rv = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (rv < 0 || (size_t)rv >= sizeof buf) {
		errno = EMSGSIZE;
		return (-1);
	}
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		return (-1);
	do
		n = sendto(fd, buf, (size_t)rv, MSG_NOSIGNAL,
		    (struct sockaddr *)&sun, len);
	while (n == -1 && errno == EINTR);
	saved = errno;
	close(fd);
	errno = saved;
	return (n == rv ? 1 : -1);
}
