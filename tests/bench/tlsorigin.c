/*
 * tlsorigin: the far end of the TLS inspection benchmark.  One process,
 * one epoll loop, one listener on 127.0.0.1, TLS with the certificate
 * and key it is given, and HTTP/1.1 keep-alive answers with a small
 * body to every request head, pipelined ones too.  Session tickets are
 * issued (OpenSSL's default), so a client may resume; the counts say
 * whether one did.
 *
 * It prints "port N" once listening.  SIGUSR1 prints one line of counts
 * (handshakes, resumed, failed, requests); it runs until SIGTERM or
 * SIGINT, or for at most -t seconds.
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
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "tests/bench/bench.h"

#define TO_USAGE	"tlsorigin -C CERT -K KEY [-p PORT] [-b BODYBYTES] " \
	"[-t SECONDS]"
#define TO_INMAX	8192
#define TO_OUTMAX	16384
#define TO_BODYMAX	8192

struct toconn {
	int		 fd;
	SSL		*ssl;
	uint32_t	 events;
	int		 shaken;
	size_t		 inlen;
	size_t		 outlen;
	char		 in[TO_INMAX];
	char		 out[TO_OUTMAX];
};

static volatile sig_atomic_t	 to_stop, to_report;
static char			 to_body[TO_BODYMAX];
static size_t			 to_bodylen = 100;
static int			 to_ep;
static SSL_CTX			*to_ctx;
static unsigned long long	 to_handshakes, to_resumed, to_failed;
static unsigned long long	 to_requests;

/* Note a request to stop, or to print the counts. */
static void
to_signal(int sig)
{
	if (sig == SIGUSR1)
		to_report = 1;
	else
		to_stop = 1;
}

/* Close a connection and free it. */
static void
toconn_close(struct toconn *c)
{
	if (c->ssl != NULL && c->shaken)
		SSL_shutdown(c->ssl);
	SSL_free(c->ssl);
	close(c->fd);
	free(c);
}

/* Queue an answer for every whole request head buffered; -1 to close. */
static int
toconn_answer(struct toconn *c)
{
	char	*end, head[256];
	size_t	 hlen;
	int	 n;

	while ((end = memmem(c->in, c->inlen, "\r\n\r\n", 4)) != NULL) {
		hlen = end + 4 - c->in;
		n = snprintf(head, sizeof head, "HTTP/1.1 200 OK\r\n"
		    "Content-Type: text/plain\r\nContent-Length: %zu\r\n\r\n",
		    to_bodylen);
		if (c->outlen + n + to_bodylen > sizeof c->out)
			return (0);	/* the rest once this is written */
		memcpy(c->out + c->outlen, head, n);
		memcpy(c->out + c->outlen + n, to_body, to_bodylen);
		c->outlen += n + to_bodylen;
		memmove(c->in, c->in + hlen, c->inlen - hlen);
		c->inlen -= hlen;
		to_requests++;
	}
	return (c->inlen == sizeof c->in ? -1 : 0);
}

/*
 * Move the connection on as far as it goes without blocking: the
 * handshake, then writing what is queued and reading the next heads.
 * Returns the events to wait for, or 0 to close.
 */
static uint32_t
toconn_drive(struct toconn *c)
{
	int	n;

	if (!c->shaken) {
		if ((n = SSL_do_handshake(c->ssl)) != 1)
			goto want;
		c->shaken = 1;
		to_handshakes++;
		if (SSL_session_reused(c->ssl))
			to_resumed++;
	}
	for (;;) {
		if (c->outlen > 0) {
			/* Written whole (no partial writes), or retried. */
			if ((n = SSL_write(c->ssl, c->out,
			    (int)c->outlen)) <= 0)
				goto want;
			c->outlen = 0;
			if (toconn_answer(c) == -1)
				return (0);
			continue;
		}
		if ((n = SSL_read(c->ssl, c->in + c->inlen,
		    (int)(sizeof c->in - c->inlen))) <= 0)
			goto want;
		c->inlen += (size_t)n;
		if (toconn_answer(c) == -1)
			return (0);
	}
want:
	switch (SSL_get_error(c->ssl, n)) {
	case SSL_ERROR_WANT_READ:
		return (EPOLLIN);
	case SSL_ERROR_WANT_WRITE:
		return (EPOLLOUT);
	default:
		if (!c->shaken)
			to_failed++;
		ERR_clear_error();
		return (0);
	}
}

/* Handle events on a connection. */
static void
toconn_event(struct toconn *c)
{
	uint32_t	want;

	if ((want = toconn_drive(c)) == 0) {
		toconn_close(c);
		return;
	}
	if (want != c->events) {
		bench_epoll_set(to_ep, EPOLL_CTL_MOD, c->fd, want, c);
		c->events = want;
	}
}

/* Accept every pending connection. */
static void
to_accept(int lfd)
{
	struct toconn	*c;
	int		 fd, one = 1;

	while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) != -1) {
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		if ((c = calloc(1, sizeof *c)) == NULL ||
		    (c->ssl = SSL_new(to_ctx)) == NULL) {
			free(c);
			close(fd);
			continue;
		}
		c->fd = fd;
		SSL_set_fd(c->ssl, fd);
		SSL_set_accept_state(c->ssl);
		c->events = EPOLLIN;
		if (bench_epoll_set(to_ep, EPOLL_CTL_ADD, fd, EPOLLIN,
		    c) == -1)
			toconn_close(c);
	}
	if (errno == EMFILE || errno == ENFILE)
		usleep(10000);
}

/* Open the listener on 127.0.0.1:port. */
static int
to_listen(int port)
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
to_loop(int lfd, double secs)
{
	struct epoll_event	 evs[256];
	double			 end = bench_now() + secs;
	int			 i, n;

	while (!to_stop && bench_now() < end) {
		if (to_report) {
			to_report = 0;
			printf("handshakes=%llu resumed=%llu failed=%llu "
			    "requests=%llu\n", to_handshakes, to_resumed,
			    to_failed, to_requests);
			fflush(stdout);
		}
		n = epoll_wait(to_ep, evs, 256, 200);
		for (i = 0; i < n; i++) {
			if (evs[i].data.ptr == NULL)
				to_accept(lfd);
			else
				toconn_event(evs[i].data.ptr);
		}
	}
}

/* The server context: the certificate (and its chain) and key given. */
static SSL_CTX *
to_context(const char *cert, const char *key)
{
	SSL_CTX	*ctx;

	if ((ctx = SSL_CTX_new(TLS_server_method())) == NULL ||
	    SSL_CTX_use_certificate_chain_file(ctx, cert) != 1 ||
	    SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_check_private_key(ctx) != 1) {
		ERR_print_errors_fp(stderr);
		exit(1);
	}
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	return (ctx);
}

/* Serve the benchmark's TLS origin. */
int
main(int argc, char **argv)
{
	const char	*cert = NULL, *key = NULL;
	double		 secs = 3600;
	int		 ch, lfd, port = 0;

	while ((ch = getopt(argc, argv, "b:C:K:p:t:")) != -1) {
		switch (ch) {
		case 'b':
			to_bodylen = strtoul(optarg, NULL, 10);
			if (to_bodylen > sizeof to_body)
				bench_usage(TO_USAGE);
			break;
		case 'C':
			cert = optarg;
			break;
		case 'K':
			key = optarg;
			break;
		case 'p':
			if ((port = bench_port(optarg)) == -1)
				bench_usage(TO_USAGE);
			break;
		case 't':
			if ((secs = strtod(optarg, NULL)) <= 0)
				bench_usage(TO_USAGE);
			break;
		default:
			bench_usage(TO_USAGE);
		}
	}
	if (optind != argc || cert == NULL || key == NULL)
		bench_usage(TO_USAGE);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, to_signal);
	signal(SIGINT, to_signal);
	signal(SIGUSR1, to_signal);
	bench_nofile();
	memset(to_body, 'b', sizeof to_body);
	to_ctx = to_context(cert, key);
	if ((lfd = to_listen(port)) == -1) {
		perror("tlsorigin: listen");
		return (1);
	}
	if ((to_ep = epoll_create1(0)) == -1 ||
	    bench_epoll_set(to_ep, EPOLL_CTL_ADD, lfd, EPOLLIN, NULL) == -1) {
		perror("tlsorigin: epoll");
		return (1);
	}
	to_loop(lfd, secs);
	return (0);
}
