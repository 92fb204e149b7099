/*
 * Writing to a descriptor: all of it, or an error.
 */
#include "config.h"

#include <errno.h>
#include <unistd.h>

#include "lib/io.h"

int
write_all(int fd, const void *buf, size_t len)
{
	const char	*p = buf;
	ssize_t		 n;

	while (len > 0) {
		if ((n = write(fd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			return (-1);
		}
		p += n;
		len -= (size_t)n;
	}
	return (0);
}
