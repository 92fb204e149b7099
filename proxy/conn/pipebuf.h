/*
 * A kernel pipe used as a tunnel's buffer: bytes move from one socket
 * into it and on to the other with splice(2), never through user space.
 */
#ifndef PIPEBUF_H
#define PIPEBUF_H

#include <sys/types.h>

#include <stddef.h>

struct pipebuf {
	int	fd[2];		/* read end, write end */
	size_t	len;		/* bytes in the pipe */
	size_t	size;		/* what it holds at most */
};

int	pipebuf_open(struct pipebuf *, size_t);
void	pipebuf_close(struct pipebuf *);
ssize_t	pipebuf_fill(struct pipebuf *, int);
ssize_t	pipebuf_drain(struct pipebuf *, int);

#endif
