/*
 * Writing to a descriptor: all of it, or an error.
 */
#ifndef IO_H
#define IO_H

#include <stddef.h>

/* Write all len bytes of buf to fd, again after EINTR; 0 or -1 (errno). */
int	write_all(int, const void *, size_t);

#endif
