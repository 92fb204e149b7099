/*
 * Messages with descriptors over unix sockets (lib/fdpass.h).
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/uio.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "lib/fdpass.h"

/* Room for FDPASS_MAX descriptors, aligned for a cmsghdr. */
union fdpass_cmsg {
	char		buf[CMSG_SPACE(sizeof(int) * FDPASS_MAX)];
	struct cmsghdr	align;
};

/* Send len bytes and n descriptors. */
ssize_t
fdpass_send(int sock, const void *buf, size_t len, const int *fds, size_t n,
    int flags)
{
	struct msghdr		 mh;
	struct iovec		 iov;
	struct cmsghdr		*cmsg;
	union fdpass_cmsg	 cm;

	if (n > FDPASS_MAX) {
		errno = EINVAL;
		return (-1);
	}
	memset(&mh, 0, sizeof mh);
	iov.iov_base = (void *)(uintptr_t)buf;
	iov.iov_len = len;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (n > 0) {
		memset(&cm, 0, sizeof cm);
		mh.msg_control = cm.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		cmsg = CMSG_FIRSTHDR(&mh);
		cmsg->cmsg_level = SOL_SOCKET;
		cmsg->cmsg_type = SCM_RIGHTS;
		cmsg->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(cmsg), fds, sizeof(int) * n);
	}
	return (sendmsg(sock, &mh, flags | MSG_NOSIGNAL));
}

/* Receive one message and its descriptors. */
ssize_t
fdpass_recv(int sock, void *buf, size_t len, int *fds, size_t *nfds,
    int flags)
{
	struct msghdr		 mh;
	struct iovec		 iov;
	struct cmsghdr		*cmsg;
	union fdpass_cmsg	 cm;
	ssize_t			 n;
	size_t			 k, i;

	memset(&mh, 0, sizeof mh);
	iov.iov_base = buf;
	iov.iov_len = len;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cm.buf;
	mh.msg_controllen = sizeof cm.buf;
	*nfds = 0;
	do
		n = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);
	while (n == -1 && errno == EINTR);
	if (n == -1)
		return (-1);
	for (cmsg = CMSG_FIRSTHDR(&mh); cmsg != NULL;
	    cmsg = CMSG_NXTHDR(&mh, cmsg)) {
		if (cmsg->cmsg_level != SOL_SOCKET ||
		    cmsg->cmsg_type != SCM_RIGHTS)
			continue;
		k = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < k; i++) {
			int	fd;

			memcpy(&fd, CMSG_DATA(cmsg) + i * sizeof(int),
			    sizeof fd);
			if (*nfds < FDPASS_MAX)
				fds[(*nfds)++] = fd;
			else
				close(fd);
		}
	}
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
		while (*nfds > 0)
			close(fds[--*nfds]);
		errno = EMSGSIZE;
		return (-1);
	}
	return (n);
}
