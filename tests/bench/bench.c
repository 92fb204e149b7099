/*
 * Helpers shared by loadgen and origin: time, descriptors, addresses.
 */
#include "config.h"

#include <sys/epoll.h>
#include <sys/resource.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/bench/bench.h"

/* Return monotonic time in seconds. */
double
bench_now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ts.tv_sec + ts.tv_nsec / 1e9);
}

/* Raise the soft descriptor limit to the hard one. */
void
bench_nofile(void)
{
	struct rlimit	rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* Make a descriptor non-blocking. */
int
bench_nonblock(int fd)
{
	int	flags;

	if ((flags = fcntl(fd, F_GETFL)) == -1)
		return (-1);
	return (fcntl(fd, F_SETFL, flags | O_NONBLOCK));
}

/* Parse a port number; -1 if it is not one. */
int
bench_port(const char *s)
{
	char	*end;
	long	 n;

	errno = 0;
	n = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || n < 0 || n > 65535)
		return (-1);
	return ((int)n);
}

/* Parse "IPV4:PORT" into an address; -1 if malformed. */
int
bench_addr(const char *s, struct sockaddr_in *sin)
{
	char		 host[INET_ADDRSTRLEN];
	const char	*colon;
	size_t		 len;
	int		 port;

	if ((colon = strrchr(s, ':')) == NULL ||
	    (len = colon - s) == 0 || len >= sizeof host)
		return (-1);
	memcpy(host, s, len);
	host[len] = '\0';
	if ((port = bench_port(colon + 1)) <= 0)
		return (-1);
	memset(sin, 0, sizeof *sin);
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	if (inet_pton(AF_INET, host, &sin->sin_addr) != 1)
		return (-1);
	return (0);
}

/* Print a usage message and exit 2. */
void
bench_usage(const char *text)
{
	fprintf(stderr, "usage: %s\n", text);
	exit(2);
}

/* Add or change a descriptor's events in an epoll set. */
int
bench_epoll_set(int ep, int op, int fd, uint32_t events, void *ptr)
{
	struct epoll_event	ev;

	memset(&ev, 0, sizeof ev);
	ev.events = events;
	ev.data.ptr = ptr;
	return (epoll_ctl(ep, op, fd, &ev));
}
