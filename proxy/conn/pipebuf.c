/*
 * Tunnel buffers in the kernel.  A pipe is the one kind of buffer that
 * splice(2) moves socket data through without copying it to user space;
 * these small functions keep that Linux call out of the session code.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "proxy/conn/pipebuf.h"

#define PIPEBUF_FLAGS	(SPLICE_F_MOVE | SPLICE_F_NONBLOCK)

/* Open a pipe of about want bytes.  Returns -1 with errno set. */
int
pipebuf_open(struct pipebuf *p, size_t want)
{
	int	size;

	p->len = 0;
	if (pipe2(p->fd, O_NONBLOCK | O_CLOEXEC) == -1) {
		p->fd[0] = p->fd[1] = -1;
		return (-1);
	}
	/* A smaller pipe than asked for still works, only slower. */
	(void)fcntl(p->fd[1], F_SETPIPE_SZ, (int)want);
	if ((size = fcntl(p->fd[1], F_GETPIPE_SZ)) <= 0) {
		pipebuf_close(p);
		errno = EINVAL;
		return (-1);
	}
	p->size = (size_t)size;
	return (0);
}

/* Close a pipe and forget what it held. */
void
pipebuf_close(struct pipebuf *p)
{
	if (p->fd[0] != -1)
		close(p->fd[0]);
	if (p->fd[1] != -1)
		close(p->fd[1]);
	p->fd[0] = p->fd[1] = -1;
	p->len = 0;
}

/*
 * Move what the socket has into the pipe's free room.  Returns the bytes
 * moved, 0 at end of file, -1 with errno set (EAGAIN: nothing now).
 */
ssize_t
pipebuf_fill(struct pipebuf *p, int from)
{
	ssize_t	n;

	if (p->len >= p->size) {
		errno = EAGAIN;
		return (-1);
	}
	n = splice(from, NULL, p->fd[1], NULL, p->size - p->len,
	    PIPEBUF_FLAGS);
	if (n > 0)
		p->len += (size_t)n;
	return (n);
}

/*
 * Move what the pipe holds to the socket.  Returns the bytes moved, -1
 * with errno set (EAGAIN: the socket is full).
 */
ssize_t
pipebuf_drain(struct pipebuf *p, int to)
{
	ssize_t	n;

	if (p->len == 0)
		return (0);
	n = splice(p->fd[0], NULL, to, NULL, p->len, PIPEBUF_FLAGS);
	if (n > 0)
		p->len -= (size_t)n;
	return (n);
}
