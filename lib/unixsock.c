/*
 * Unix socket paths longer than sun_path (108 bytes): a session's
 * sockets are DIR/NAME.attach with NAME up to 64 bytes, and DIR is the
 * user's runtime directory, as long as it is.  The kernel resolves
 * /proc/self/fd/N/NAME like any path, so an open folder makes the
 * path short; the socket keeps its real name.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/unixsock.h"

/*
 * The peer's pidfd (Linux 6.5); older headers lack the number, which is
 * the same on the architectures that share the generic socket options.
 */
#if !defined(SO_PEERPIDFD) && (defined(__x86_64__) || defined(__i386__) || \
    defined(__aarch64__) || defined(__arm__) || defined(__riscv))
#define SO_PEERPIDFD	77
#endif

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

/*
 * Tell whether the peer of a connected unix socket runs in our network
 * namespace (a sandbox never does: a socket it binds on a shared
 * filesystem is not the gateway's, a session's or a decider's), and give
 * its uid.  The peer is the process that connected, or for a listening
 * socket the one that called listen().  Its pid is checked through a
 * pidfd where the kernel gives one, so that a peer gone since cannot
 * pass with its number taken by another process.  1: ours; 0: another,
 * or gone; -1: we may not look (another user's process, or one that
 * made itself undumpable).  Without /proc there is nothing to compare:
 * 1, and the caller's uid check stands alone.
 */
int
unixsock_peer_local(int fd, uid_t *uid)
{
	struct ucred	cred;
	struct stat	self, peer;
	socklen_t	len = sizeof cred;
	char		path[64];
	int		pidfd = -1, rv;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1)
		return (0);
	*uid = cred.uid;
	if (stat("/proc/self/ns/net", &self) == -1)
		return (1);
#ifdef SO_PEERPIDFD
	len = sizeof pidfd;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) == -1)
		pidfd = -1;
#endif
	snprintf(path, sizeof path, "/proc/%ld/ns/net", (long)cred.pid);
	if (cred.pid <= 0)
		rv = 0;
	else if (stat(path, &peer) == -1)
		rv = errno == EACCES || errno == EPERM ? -1 : 0;
	else
		rv = self.st_dev == peer.st_dev && self.st_ino == peer.st_ino;
	/* Still alive after the look (EPERM: another's): the pid was its. */
	if (rv != 0 && pidfd != -1 && syscall(SYS_pidfd_send_signal, pidfd,
	    0, NULL, 0) == -1 && errno == ESRCH)
		rv = 0;
	if (pidfd != -1)
		close(pidfd);
	return (rv);
}
