/*
 * origin: the far end of the benchmark.  One process, one epoll loop, one
 * listener on 127.0.0.1.  The first line a client sends picks what it gets:
 *
 *   GET/HEAD ...	HTTP/1.1 keep-alive answers with a small body
 *   SRC N\n		N bytes of data, then close
 *   SINK N\n		N bytes read and discarded, then "DONE\n"
 *   PING[ TEXT]\n	"PONG[ TEXT]\n" (an echo), then the next line is read
 *   anything else	the connection is held open, input discarded
 *
 * It prints "port N" once listening and runs until SIGTERM or SIGINT, or
 * for at most -t seconds.
 */
#include "config.h"

#include <sys/epoll.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "tests/bench/bench.h"

#define ORIGIN_USAGE	"origin [-p PORT] [-b BODYBYTES] [-t SECONDS]"
#define ORIGIN_INMAX	8192
#define ORIGIN_OUTMAX	16384
#define ORIGIN_BODYMAX	8192
#define ORIGIN_CHUNK	(256 * 1024)

enum origin_state {
	O_LINE,		/* waiting for the first (or next) command line */
	O_HTTP,		/* HTTP requests */
	O_SRC,		/* sending bulk data */
	O_SINK,		/* reading bulk data */
	O_HOLD,		/* idle; input discarded */
};

struct oconn {
	int			 fd;
	enum origin_state	 state;
	uint32_t		 events;
	uint64_t		 left;
	int			 closing;
	size_t			 inlen;
	size_t			 outlen;
	size_t			 outoff;
	char			 in[ORIGIN_INMAX];
	char			 out[ORIGIN_OUTMAX];
};

static volatile sig_atomic_t	 origin_stop;
static char			 origin_data[ORIGIN_CHUNK];
static char			 origin_body[ORIGIN_BODYMAX];
static size_t			 origin_bodylen = 100;
static int			 origin_ep;

/* Note a request to stop. */
static void
origin_signal(int sig)
{
	origin_stop = 1;
}

/* Close a connection and free it. */
static void
oconn_close(struct oconn *c)
{
	close(c->fd);
	free(c);
}

/* Queue bytes for output; -1 if they do not fit. */
static int
oconn_queue(struct oconn *c, const char *p, size_t len)
{
	if (len > sizeof c->out - c->outlen)
		return (-1);
	memcpy(c->out + c->outlen, p, len);
	c->outlen += len;
	return (0);
}

/* Drop the first n bytes of the input buffer. */
static void
oconn_consume(struct oconn *c, size_t n)
{
	memmove(c->in, c->in + n, c->inlen - n);
	c->inlen -= n;
}

/* Answer one HTTP request if a whole one is buffered; -1 to close. */
static int
oconn_http(struct oconn *c)
{
	char	*end, head[256];
	size_t	 hlen;
	int	 n, head_only;

	if ((end = memmem(c->in, c->inlen, "\r\n\r\n", 4)) == NULL)
		return (c->inlen == sizeof c->in ? -1 : 1);
	hlen = end + 4 - c->in;
	*end = '\0';
	head_only = strncmp(c->in, "HEAD ", 5) == 0;
	if (strcasestr(c->in, "\nconnection: close") != NULL)
		c->closing = 1;
	n = snprintf(head, sizeof head, "HTTP/1.1 200 OK\r\n"
	    "Content-Type: text/plain\r\nContent-Length: %zu\r\n%s\r\n",
	    origin_bodylen, c->closing ? "Connection: close\r\n" : "");
	oconn_consume(c, hlen);
	if (oconn_queue(c, head, n) == -1)
		return (-1);
	if (!head_only && oconn_queue(c, origin_body, origin_bodylen) == -1)
		return (-1);
	return (0);
}

/* Act on one command line if a whole one is buffered; -1 to close. */
static int
oconn_line(struct oconn *c)
{
	char	*nl;

	if (c->inlen >= 5 && (strncmp(c->in, "GET ", 4) == 0 ||
	    strncmp(c->in, "HEAD ", 5) == 0)) {
		c->state = O_HTTP;
		return (0);
	}
	if ((nl = memchr(c->in, '\n', c->inlen)) == NULL) {
		if (c->inlen == sizeof c->in)
			c->state = O_HOLD;
		return (1);
	}
	*nl = '\0';
	if (strncmp(c->in, "PING", 4) == 0 &&
	    (c->in[4] == '\0' || c->in[4] == ' ')) {
		if (oconn_queue(c, "PONG", 4) == -1 ||
		    oconn_queue(c, c->in + 4, nl - (c->in + 4)) == -1 ||
		    oconn_queue(c, "\n", 1) == -1)
			return (-1);
	} else if (strncmp(c->in, "SRC ", 4) == 0) {
		c->left = strtoull(c->in + 4, NULL, 10);
		c->state = O_SRC;
	} else if (strncmp(c->in, "SINK ", 5) == 0) {
		c->left = strtoull(c->in + 5, NULL, 10);
		c->state = O_SINK;
	} else
		c->state = O_HOLD;
	oconn_consume(c, nl + 1 - c->in);
	return (0);
}

/* Count buffered input against a SINK; answer when it is complete. */
static int
oconn_sink(struct oconn *c, size_t n)
{
	if (n > c->left)
		n = c->left;
	c->left -= n;
	if (c->left > 0)
		return (0);
	c->state = O_HOLD;
	return (oconn_queue(c, "DONE\n", 5));
}

/* Work through buffered input while no output is pending; -1 to close. */
static int
oconn_parse(struct oconn *c)
{
	int	rv;

	for (;;) {
		if (c->outlen > 0 || c->closing)
			return (0);
		switch (c->state) {
		case O_LINE:
			rv = oconn_line(c);
			break;
		case O_HTTP:
			rv = oconn_http(c);
			break;
		case O_SINK:
			rv = oconn_sink(c, c->inlen);
			c->inlen = 0;
			if (rv == 0 && c->state == O_SINK)
				return (0);
			break;
		default:
			c->inlen = 0;
			return (0);
		}
		if (rv != 0)
			return (rv == -1 ? -1 : 0);
	}
}

/* Read what is there; -1 to close. */
static int
oconn_read(struct oconn *c)
{
	char	 scratch[65536];
	ssize_t	 n;

	if (c->state == O_SINK || c->state == O_HOLD) {
		if ((n = read(c->fd, scratch, sizeof scratch)) <= 0)
			return (n == 0 || errno != EAGAIN ? -1 : 0);
		if (c->state == O_SINK)
			return (oconn_sink(c, n));
		return (0);
	}
	if (c->inlen == sizeof c->in)
		return (0);
	n = read(c->fd, c->in + c->inlen, sizeof c->in - c->inlen);
	if (n <= 0)
		return (n == 0 || errno != EAGAIN ? -1 : 0);
	c->inlen += n;
	return (oconn_parse(c));
}

/* Write pending output or bulk data; -1 to close. */
static int
oconn_write(struct oconn *c)
{
	ssize_t	n;
	size_t	len;

	if (c->outlen > 0) {
		n = send(c->fd, c->out + c->outoff, c->outlen - c->outoff,
		    MSG_NOSIGNAL);
		if (n == -1)
			return (errno == EAGAIN ? 0 : -1);
		c->outoff += n;
		if (c->outoff < c->outlen)
			return (0);
		c->outlen = c->outoff = 0;
		if (c->closing)
			return (-1);
		return (oconn_parse(c));
	}
	if (c->state != O_SRC)
		return (0);
	if (c->left == 0)
		return (-1);
	len = c->left < sizeof origin_data ? c->left : sizeof origin_data;
	if ((n = send(c->fd, origin_data, len, MSG_NOSIGNAL)) == -1)
		return (errno == EAGAIN ? 0 : -1);
	c->left -= n;
	return (0);
}

/* Ask epoll for what the connection needs next. */
static void
oconn_update(struct oconn *c)
{
	uint32_t	want;

	want = 0;
	if (c->outlen == 0)
		want |= EPOLLIN;
	if (c->outlen > 0 || c->state == O_SRC)
		want |= EPOLLOUT;
	if (want != c->events) {
		bench_epoll_set(origin_ep, EPOLL_CTL_MOD, c->fd, want, c);
		c->events = want;
	}
}

/* Handle events on a connection. */
static void
oconn_event(struct oconn *c, uint32_t events)
{
	if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && oconn_read(c) == -1)
		goto close;
	if ((events & EPOLLOUT) && oconn_write(c) == -1)
		goto close;
	oconn_update(c);
	return;
close:
	oconn_close(c);
}

/* Accept every pending connection. */
static void
origin_accept(int lfd)
{
	struct oconn	*c;
	int		 fd, one = 1;

	while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) != -1) {
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		if ((c = calloc(1, sizeof *c)) == NULL) {
			close(fd);
			continue;
		}
		c->fd = fd;
		c->events = EPOLLIN;
		if (bench_epoll_set(origin_ep, EPOLL_CTL_ADD, fd, EPOLLIN,
		    c) == -1)
			oconn_close(c);
	}
	if (errno == EMFILE || errno == ENFILE)
		usleep(10000);
}

/* Open the listener on 127.0.0.1:port. */
static int
origin_listen(int port)
{
	struct sockaddr_in	sin;
	socklen_t		len = sizeof sin;
	int			fd, one = 1;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0)) == -1)
		return (-1);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sin, sizeof sin) == -1 ||
	    listen(fd, 4096) == -1 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) == -1) {
		close(fd);
		return (-1);
	}
	printf("port %d\n", ntohs(sin.sin_port));
	fflush(stdout);
	return (fd);
}

/* Serve until told to stop or the time is up. */
static void
origin_loop(int lfd, double secs)
{
	struct epoll_event	 evs[256];
	double			 end = bench_now() + secs;
	int			 i, n;

	while (!origin_stop && bench_now() < end) {
		n = epoll_wait(origin_ep, evs, 256, 200);
		for (i = 0; i < n; i++) {
			if (evs[i].data.ptr == NULL)
				origin_accept(lfd);
			else
				oconn_event(evs[i].data.ptr, evs[i].events);
		}
	}
}

/* Parse the options; returns the port to listen on. */
static int
origin_options(int argc, char **argv, double *secs)
{
	int	ch, port = 0;

	while ((ch = getopt(argc, argv, "b:p:t:")) != -1) {
		switch (ch) {
		case 'b':
			origin_bodylen = strtoul(optarg, NULL, 10);
			if (origin_bodylen > sizeof origin_body)
				bench_usage(ORIGIN_USAGE);
			break;
		case 'p':
			if ((port = bench_port(optarg)) == -1)
				bench_usage(ORIGIN_USAGE);
			break;
		case 't':
			if ((*secs = strtod(optarg, NULL)) <= 0)
				bench_usage(ORIGIN_USAGE);
			break;
		default:
			bench_usage(ORIGIN_USAGE);
		}
	}
	if (optind != argc)
		bench_usage(ORIGIN_USAGE);
	return (port);
}

/* Serve the benchmark's origin. */
int
main(int argc, char **argv)
{
	double	secs = 3600;
	int	lfd, port;

	port = origin_options(argc, argv, &secs);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, origin_signal);
	signal(SIGINT, origin_signal);
	bench_nofile();
	memset(origin_data, 'd', sizeof origin_data);
	memset(origin_body, 'b', sizeof origin_body);
	if ((lfd = origin_listen(port)) == -1) {
		perror("origin: listen");
		return (1);
	}
	if ((origin_ep = epoll_create1(0)) == -1 ||
	    bench_epoll_set(origin_ep, EPOLL_CTL_ADD, lfd, EPOLLIN,
	    NULL) == -1) {
		perror("origin: epoll");
		return (1);
	}
	origin_loop(lfd, secs);
	return (0);
}
