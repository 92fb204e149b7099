/*
 * One message and the descriptors alongside it (SCM_RIGHTS), over a unix
 * socket: what the sandbox child sends pinhole, and what pinhole run
 * --session sends its session.
 */
#ifndef FDPASS_H
#define FDPASS_H

#include <sys/types.h>

#include <stddef.h>

#define FDPASS_MAX	96	/* descriptors in one message, at most */

/* Send len bytes and n descriptors; sendmsg(2)'s result. */
ssize_t	fdpass_send(int, const void *, size_t, const int *, size_t, int);

/*
 * Receive one message of at most len bytes and at most FDPASS_MAX
 * descriptors (close-on-exec) into fds, *nfds of them; flags as for
 * recvmsg(2), EINTR retried.  A message or descriptors cut short is an
 * error (EMSGSIZE), its descriptors closed.  Returns its length, 0 at
 * the end, or -1.
 */
ssize_t	fdpass_recv(int, void *, size_t, int *, size_t *, int);

#endif
