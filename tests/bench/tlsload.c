/*
 * tlsload: the client side of the TLS inspection benchmark.  One
 * process, one epoll loop.  Each connection goes to the origin directly
 * (no -x) or through an HTTP proxy (-x IP:PORT) with CONNECT, then does
 * a TLS handshake verified against -A CAFILE and for the host's name
 * (SNI the same), and sends origin-form GETs:
 *
 *   conn-rate	-c clients: connect, CONNECT, handshake, one GET, close;
 *		-n connections in all
 *   keepalive	-c connections, each made first, then GETs one after
 *		another on each; -n requests in all
 *   idle	-n connections opened (-c at a time), one GET on each,
 *		then held -w seconds
 *
 * -h 'NAME: VALUE' adds a header to each GET (a secret's placeholder in
 * Authorization, say).  A response comes with a Content-Length or
 * chunked (as pinhole sends a body it scrubbed of a secret's value).
 *
 * No TLS session is ever resumed: every connection is a full handshake.
 * Every mode stops at -t seconds whatever is left.  It prints one line
 * of key=value results and exits non-zero if it saw errors.
 */
#include "config.h"

#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "tests/bench/bench.h"

#define TL_USAGE "tlsload conn-rate|keepalive|idle -o ORIGINPORT -A CAFILE\n" \
	"\t[-x PROXYIP:PORT] [-H HOST] [-h 'NAME: VALUE'] [-c CONC] " \
	"[-n COUNT]\n\t[-t SECONDS] [-w HOLDSECONDS]"
#define TL_MAXCOUNT	10000000L

enum tl_mode {
	M_RATE,
	M_KEEP,
	M_IDLE,
};

enum tconn_state {
	T_CONNECTING,	/* TCP connect in progress */
	T_PROXY,	/* CONNECT sent, waiting for the proxy's answer */
	T_HANDSHAKE,	/* TLS handshake */
	T_READY,	/* keepalive: up, waiting for the others */
	T_SEND,		/* writing a GET */
	T_RECV,		/* reading its response */
	T_IDLE,		/* held open */
};

struct tconn {
	int			 fd;
	SSL			*ssl;
	enum tconn_state	 state;
	uint32_t		 events;
	double			 start;
	double			 rstart;
	int			 header_done;
	uint64_t		 left;		/* body bytes, or 1: chunked */
	int			 chunked;
	int			 chunk_end;	/* the last chunk's size read */
	uint64_t		 chunk_size;
	uint64_t		 chunk_left;	/* data and its CRLF */
	size_t			 len;
	char			 buf[4096];
};

struct tl {
	enum tl_mode		 mode;
	const char		*name;
	struct sockaddr_in	 dst;
	int			 proxied;
	const char		*host;
	const char		*header;	/* -h, or NULL */
	const char		*cafile;
	int			 oport;
	int			 conc;
	long			 count;
	double			 secs;
	double			 hold;

	SSL_CTX			*ctx;
	int			 ep;
	long			 started;	/* connections, or requests */
	long			 done;
	long			 errors;
	long			 inflight;
	long			 open;
	long			 ready;
	long			 lost;
	long			 verify_fail;
	int			 go;
	uint32_t		*lat;
	double			 t0;
	double			 deadline;
	struct tconn		**slots;
	long			 nslots;
	char			 req[512];
	size_t			 reqlen;
	char			 lasterr[160];
};

static volatile sig_atomic_t	tl_stop;

static int	tconn_open(struct tl *, long);
static void	tconn_drive(struct tl *, struct tconn *, long);

/* Note a request to stop. */
static void
tl_signal(int sig)
{
	tl_stop = 1;
}

/* Tell whether another connection (or request) may start. */
static int
tl_more(struct tl *tl)
{
	return (tl->started < tl->count && bench_now() < tl->deadline &&
	    !tl_stop);
}

/* Record one latency sample, in microseconds. */
static void
tl_sample(struct tl *tl, double start)
{
	double	us = (bench_now() - start) * 1e6;

	if (tl->done < tl->count)
		tl->lat[tl->done] = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
	tl->done++;
}

/* Close a connection and empty its slot. */
static void
tconn_close(struct tl *tl, struct tconn *c, long slot)
{
	if (c->ssl != NULL) {
		if (c->state != T_CONNECTING && c->state != T_PROXY &&
		    c->state != T_HANDSHAKE)
			SSL_shutdown(c->ssl);	/* close_notify, not waited */
		SSL_free(c->ssl);
	}
	close(c->fd);
	free(c);
	tl->slots[slot] = NULL;
}

/* Ask epoll for these events on a connection. */
static void
tconn_want(struct tl *tl, struct tconn *c, long slot, uint32_t events)
{
	if (events != c->events) {
		bench_epoll_set(tl->ep, EPOLL_CTL_MOD, c->fd, events,
		    (void *)(intptr_t)slot);
		c->events = events;
	}
}

/* Remember why the last connection failed. */
static void
tl_note(struct tl *tl, const char *what)
{
	unsigned long	e = ERR_peek_last_error();

	if (e != 0) {
		snprintf(tl->lasterr, sizeof tl->lasterr, "%s:", what);
		ERR_error_string_n(e, tl->lasterr + strlen(tl->lasterr),
		    sizeof tl->lasterr - strlen(tl->lasterr));
	} else
		snprintf(tl->lasterr, sizeof tl->lasterr, "%s", what);
	ERR_clear_error();
}

/* Give up on a connection; the mode decides what replaces it. */
static void
tconn_fail(struct tl *tl, struct tconn *c, long slot, const char *what)
{
	int	was_idle = c->state == T_IDLE;

	if (c->ssl != NULL && SSL_get_verify_result(c->ssl) != X509_V_OK) {
		tl->verify_fail++;
		what = X509_verify_cert_error_string(
		    SSL_get_verify_result(c->ssl));
	}
	tl_note(tl, what);
	tconn_close(tl, c, slot);
	if (was_idle) {
		tl->open--;
		tl->lost++;
		return;
	}
	tl->errors++;
	tl->inflight--;
	if (tl->mode == M_RATE && tl_more(tl))
		tconn_open(tl, slot);
}

/* Open a connection in a slot; -1 if it failed at once. */
static int
tconn_open(struct tl *tl, long slot)
{
	struct tconn	*c;
	int		 one = 1;

	if ((c = calloc(1, sizeof *c)) == NULL)
		return (-1);
	if ((c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0)) == -1) {
		free(c);
		tl->errors++;
		return (-1);
	}
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	tl->slots[slot] = c;
	c->state = T_CONNECTING;
	c->start = bench_now();
	c->events = EPOLLOUT;
	if (tl->mode != M_KEEP)
		tl->started++;
	tl->inflight++;
	if ((connect(c->fd, (struct sockaddr *)&tl->dst, sizeof tl->dst) ==
	    -1 && errno != EINPROGRESS) ||
	    bench_epoll_set(tl->ep, EPOLL_CTL_ADD, c->fd, EPOLLOUT,
	    (void *)(intptr_t)slot) == -1) {
		tconn_close(tl, c, slot);
		tl->inflight--;
		tl->errors++;
		return (-1);
	}
	return (0);
}

/* Begin TLS on a connection: a fresh SSL object, never a session. */
static int
tconn_tls(struct tl *tl, struct tconn *c)
{
	if ((c->ssl = SSL_new(tl->ctx)) == NULL ||
	    SSL_set_fd(c->ssl, c->fd) != 1 ||
	    SSL_set_tlsext_host_name(c->ssl, tl->host) != 1 ||
	    SSL_set1_host(c->ssl, tl->host) != 1)
		return (-1);
	SSL_set_connect_state(c->ssl);
	c->state = T_HANDSHAKE;
	return (0);
}

/* The TCP connection is up: ask the proxy for a tunnel, or begin TLS. */
static void
tconn_connected(struct tl *tl, struct tconn *c, long slot)
{
	char		msg[512];
	socklen_t	len = sizeof(int);
	int		err = 0, n;

	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) == -1 ||
	    err != 0) {
		tconn_fail(tl, c, slot, "connect");
		return;
	}
	if (!tl->proxied) {
		if (tconn_tls(tl, c) == -1) {
			tconn_fail(tl, c, slot, "SSL_new");
			return;
		}
		tconn_drive(tl, c, slot);
		return;
	}
	n = snprintf(msg, sizeof msg, "CONNECT %s:%d HTTP/1.1\r\n"
	    "Host: %s:%d\r\n\r\n", tl->host, tl->oport, tl->host, tl->oport);
	c->state = T_PROXY;
	tconn_want(tl, c, slot, EPOLLIN);
	if (send(c->fd, msg, n, MSG_NOSIGNAL) != n)
		tconn_fail(tl, c, slot, "send CONNECT");
}

/* Read the proxy's answer to CONNECT; nothing past it is read. */
static void
tconn_proxy_read(struct tl *tl, struct tconn *c, long slot)
{
	ssize_t	n;

	/* Byte by byte: the TLS that follows must stay in the socket. */
	for (;;) {
		if (c->len == sizeof c->buf - 1) {
			tconn_fail(tl, c, slot, "CONNECT answer too long");
			return;
		}
		if ((n = read(c->fd, c->buf + c->len, 1)) == -1 &&
		    errno == EAGAIN)
			return;
		if (n <= 0) {
			tconn_fail(tl, c, slot, "CONNECT answer cut short");
			return;
		}
		c->len++;
		c->buf[c->len] = '\0';
		if (c->len >= 4 && memcmp(c->buf + c->len - 4, "\r\n\r\n",
		    4) == 0)
			break;
	}
	if (strncmp(c->buf, "HTTP/1.", 7) != 0 ||
	    strncmp(c->buf + 8, " 200", 4) != 0) {
		tconn_fail(tl, c, slot, "CONNECT refused");
		return;
	}
	c->len = 0;
	if (tconn_tls(tl, c) == -1) {
		tconn_fail(tl, c, slot, "SSL_new");
		return;
	}
	tconn_drive(tl, c, slot);
}

/*
 * Follow a chunked body as pinhole writes one (no extensions, no
 * trailers).  Returns 1 once it ended.
 */
static int
tconn_chunked(struct tconn *c, const char *p, size_t n)
{
	size_t	i, k;
	int	d;

	for (i = 0; i < n; i++) {
		if (c->chunk_left > 0) {
			k = n - i < c->chunk_left ? n - i : c->chunk_left;
			c->chunk_left -= k;
			i += k - 1;
			continue;
		}
		if (p[i] != '\n') {
			d = p[i] >= 'a' ? p[i] - 'a' + 10 : p[i] >= 'A' ?
			    p[i] - 'A' + 10 : p[i] - '0';
			if (p[i] != '\r' && !c->chunk_end)
				c->chunk_size = c->chunk_size * 16 + d;
			continue;
		}
		if (c->chunk_end)
			return (1);
		if (c->chunk_size == 0)
			c->chunk_end = 1;
		else
			c->chunk_left = c->chunk_size + 2;
		c->chunk_size = 0;
	}
	return (0);
}

/* Parse a response head in the buffer: status and length. */
static int
tconn_header(struct tconn *c)
{
	char	*end, *cl;
	size_t	 hlen, have;

	if ((end = strstr(c->buf, "\r\n\r\n")) == NULL)
		return (c->len == sizeof c->buf - 1 ? -1 : 0);
	hlen = end + 4 - c->buf;
	*end = '\0';
	if (strncmp(c->buf, "HTTP/1.", 7) != 0 ||
	    strncmp(c->buf + 8, " 200", 4) != 0)
		return (-1);
	have = c->len - hlen;
	c->header_done = 1;
	if (strcasestr(c->buf, "\ntransfer-encoding: chunked") != NULL) {
		c->chunked = 1;
		c->chunk_end = 0;
		c->chunk_size = c->chunk_left = 0;
		c->left = !tconn_chunked(c, end + 4, have);
		return (0);
	}
	if ((cl = strcasestr(c->buf, "\ncontent-length:")) == NULL)
		return (-1);
	c->chunked = 0;
	c->left = strtoull(cl + 16, NULL, 10);
	c->left -= have > c->left ? c->left : have;
	return (0);
}

/* Start the next request on a connection. */
static void
tconn_request(struct tl *tl, struct tconn *c)
{
	c->state = T_SEND;
	c->len = 0;
	c->header_done = 0;
	c->rstart = bench_now();
	if (tl->mode == M_KEEP)
		tl->started++;
}

/* A whole response arrived: what follows depends on the mode. */
static int
tconn_response(struct tl *tl, struct tconn *c, long slot)
{
	switch (tl->mode) {
	case M_RATE:
		tl_sample(tl, c->start);
		tl->inflight--;
		tconn_close(tl, c, slot);
		if (tl_more(tl))
			tconn_open(tl, slot);
		return (1);
	case M_KEEP:
		tl_sample(tl, c->rstart);
		if (!tl_more(tl)) {
			tl->inflight--;
			tconn_close(tl, c, slot);
			return (1);
		}
		tconn_request(tl, c);
		return (0);
	case M_IDLE:
		tl->inflight--;
		tl->open++;
		c->state = T_IDLE;
		return (0);
	}
	return (0);
}

/*
 * Move a connection on as far as it goes without blocking: handshake,
 * request, response, and what the mode does next.
 */
static void
tconn_drive(struct tl *tl, struct tconn *c, long slot)
{
	char	scratch[4096];
	int	n;

	for (;;) {
		switch (c->state) {
		case T_HANDSHAKE:
			if ((n = SSL_do_handshake(c->ssl)) != 1)
				goto want;
			if (tl->mode == M_KEEP) {
				c->state = T_READY;
				tl->ready++;
				tl->inflight--;
				tconn_want(tl, c, slot, EPOLLIN);
				return;
			}
			tconn_request(tl, c);
			break;
		case T_SEND:
			if ((n = SSL_write(c->ssl, tl->req,
			    (int)tl->reqlen)) <= 0)
				goto want;
			c->state = T_RECV;
			break;
		case T_RECV:
			if (!c->header_done) {
				if ((n = SSL_read(c->ssl, c->buf + c->len,
				    (int)(sizeof c->buf - 1 - c->len))) <= 0)
					goto want;
				c->len += (size_t)n;
				c->buf[c->len] = '\0';
				if (tconn_header(c) == -1) {
					tconn_fail(tl, c, slot, "bad response");
					return;
				}
			} else if (c->left > 0) {
				if ((n = SSL_read(c->ssl, scratch,
				    !c->chunked && c->left < sizeof scratch ?
				    (int)c->left : (int)sizeof scratch)) <= 0)
					goto want;
				if (c->chunked)
					c->left = !tconn_chunked(c, scratch,
					    (size_t)n);
				else
					c->left -= (uint64_t)n;
			}
			if (c->header_done && c->left == 0 &&
			    tconn_response(tl, c, slot) == 1)
				return;		/* c is gone */
			break;
		case T_READY:
		case T_IDLE:
			/* Nothing is expected: tickets, or the close. */
			if ((n = SSL_read(c->ssl, scratch,
			    sizeof scratch)) <= 0)
				goto want;
			break;
		default:
			return;
		}
	}
want:
	switch (SSL_get_error(c->ssl, n)) {
	case SSL_ERROR_WANT_READ:
		tconn_want(tl, c, slot, EPOLLIN);
		return;
	case SSL_ERROR_WANT_WRITE:
		tconn_want(tl, c, slot, EPOLLOUT);
		return;
	case SSL_ERROR_ZERO_RETURN:
		tconn_fail(tl, c, slot, "closed by the peer");
		return;
	default:
		tconn_fail(tl, c, slot, c->state == T_HANDSHAKE ?
		    "handshake" : "TLS read or write");
		return;
	}
}

/* Dispatch the events of one connection. */
static void
tconn_event(struct tl *tl, long slot)
{
	struct tconn	*c = tl->slots[slot];

	if (c == NULL)
		return;
	switch (c->state) {
	case T_CONNECTING:
		tconn_connected(tl, c, slot);
		break;
	case T_PROXY:
		tconn_proxy_read(tl, c, slot);
		break;
	default:
		tconn_drive(tl, c, slot);
		break;
	}
}

/* Run the event loop until done() says so or the time is up. */
static void
tl_run(struct tl *tl, int (*done)(struct tl *), double until)
{
	struct epoll_event	evs[256];
	int			i, n, ms;

	while (!done(tl) && !tl_stop) {
		ms = (until - bench_now()) * 1000;
		if (ms <= 0)
			break;
		n = epoll_wait(tl->ep, evs, 256, ms > 100 ? 100 : ms);
		for (i = 0; i < n; i++)
			tconn_event(tl, (long)(intptr_t)evs[i].data.ptr);
	}
}

/* Tell whether nothing is in flight and nothing more will start. */
static int
tl_idle_done(struct tl *tl)
{
	return (tl->inflight == 0 && !tl_more(tl));
}

/* Tell whether every keepalive connection is up or failed. */
static int
tl_ready_done(struct tl *tl)
{
	return (tl->inflight == 0);
}

/* Tell whether every idle connection is open or failed. */
static int
tl_open_done(struct tl *tl)
{
	return (tl->open + tl->errors >= tl->count);
}

/* Tell whether another idle connection may start opening now. */
static int
tl_may_open(struct tl *tl)
{
	return (tl_open_done(tl) ||
	    (tl->started < tl->count && tl->inflight < tl->conc));
}

/* Never done: hold until the time is up or a signal. */
static int
tl_never(struct tl *tl)
{
	return (0);
}

/* Compare two latency samples for qsort. */
static int
tl_cmp(const void *a, const void *b)
{
	uint32_t	x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x < y ? -1 : x > y);
}

/* Return a latency percentile in milliseconds (samples sorted). */
static double
tl_pct(struct tl *tl, int pct)
{
	long	n = tl->done < tl->count ? tl->done : tl->count;

	if (n == 0)
		return (0);
	return (tl->lat[n * pct / 100 < n ? n * pct / 100 : n - 1] / 1e3);
}

/* Return the CPU time this process has used, in microseconds. */
static long long
tl_cpu_us(void)
{
	struct rusage	ru;

	if (getrusage(RUSAGE_SELF, &ru) == -1)
		return (-1);
	return ((ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000LL +
	    ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* Print a rate mode's result line. */
static void
tl_report(struct tl *tl)
{
	double	secs = bench_now() - tl->t0;
	long	n = tl->done < tl->count ? tl->done : tl->count;

	qsort(tl->lat, n, sizeof *tl->lat, tl_cmp);
	printf("%s conns=%d done=%ld secs=%.3f rate=%.0f p50_ms=%.3f "
	    "p99_ms=%.3f errors=%ld verify_failed=%ld cpu_us=%lld%s%s\n",
	    tl->name, tl->conc, tl->done, secs, secs > 0 ? tl->done / secs : 0,
	    tl_pct(tl, 50), tl_pct(tl, 99), tl->errors, tl->verify_fail,
	    tl_cpu_us(), tl->lasterr[0] != '\0' ? " last_error=" : "",
	    tl->lasterr);
}

/* New connections per second: -n connections, -c at a time. */
static void
tl_rate(struct tl *tl)
{
	long	i;

	tl->t0 = bench_now();
	for (i = 0; i < tl->conc && tl_more(tl); i++)
		tconn_open(tl, i);
	tl_run(tl, tl_idle_done, tl->deadline);
	tl_report(tl);
}

/* Requests per second on -c connections made first. */
static void
tl_keep(struct tl *tl)
{
	struct tconn	*c;
	long		 i;

	for (i = 0; i < tl->conc; i++)
		tconn_open(tl, i);
	tl_run(tl, tl_ready_done, tl->deadline);
	tl->t0 = bench_now();
	tl->inflight = 0;
	for (i = 0; i < tl->conc; i++) {
		if ((c = tl->slots[i]) == NULL || c->state != T_READY)
			continue;
		if (!tl_more(tl))
			break;
		tl->inflight++;
		tconn_request(tl, c);
		tconn_drive(tl, c, i);
	}
	tl_run(tl, tl_idle_done, tl->deadline);
	tl_report(tl);
}

/* Open -n connections, -c at a time, a request on each, and hold them. */
static void
tl_idle(struct tl *tl)
{
	tl->t0 = bench_now();
	while (!tl_open_done(tl) && !tl_stop && bench_now() < tl->deadline) {
		while (tl->started < tl->count && tl->inflight < tl->conc)
			tconn_open(tl, tl->started);
		tl_run(tl, tl_may_open, tl->deadline);
	}
	printf("%s open=%ld wanted=%ld secs=%.3f errors=%ld%s%s\n", tl->name,
	    tl->open, tl->count, bench_now() - tl->t0, tl->errors,
	    tl->lasterr[0] != '\0' ? " last_error=" : "", tl->lasterr);
	fflush(stdout);
	tl_run(tl, tl_never, bench_now() + tl->hold);
	if (tl->lost > 0)
		fprintf(stderr, "tlsload: %ld idle connections closed early "
		    "(%s)\n", tl->lost, tl->lasterr);
}

/* Parse the mode name. */
static void
tl_mode(struct tl *tl, const char *name)
{
	static const struct {
		const char	*name;
		enum tl_mode	 mode;
		int		 conc;
		long		 count;
		double		 secs;
	} modes[] = {
		{ "conn-rate", M_RATE, 16, 20000, 10 },
		{ "keepalive", M_KEEP, 16, 200000, 10 },
		{ "idle", M_IDLE, 50, 500, 60 },
	};
	size_t	i;

	for (i = 0; i < sizeof modes / sizeof modes[0]; i++) {
		if (strcmp(name, modes[i].name) == 0) {
			tl->name = modes[i].name;
			tl->mode = modes[i].mode;
			tl->conc = modes[i].conc;
			tl->count = modes[i].count;
			tl->secs = modes[i].secs;
			return;
		}
	}
	bench_usage(TL_USAGE);
}

/* Parse the options into tl. */
static void
tl_options(struct tl *tl, int argc, char **argv)
{
	int	ch;

	while ((ch = getopt(argc, argv, "A:c:H:h:n:o:t:w:x:")) != -1) {
		switch (ch) {
		case 'A':
			tl->cafile = optarg;
			break;
		case 'h':
			tl->header = optarg;
			break;
		case 'c':
			tl->conc = atoi(optarg);
			break;
		case 'H':
			tl->host = optarg;
			break;
		case 'n':
			tl->count = atol(optarg);
			break;
		case 'o':
			tl->oport = bench_port(optarg);
			break;
		case 't':
			tl->secs = strtod(optarg, NULL);
			break;
		case 'w':
			tl->hold = strtod(optarg, NULL);
			break;
		case 'x':
			if (bench_addr(optarg, &tl->dst) == -1)
				bench_usage(TL_USAGE);
			tl->proxied = 1;
			break;
		default:
			bench_usage(TL_USAGE);
		}
	}
	if (tl->oport <= 0 || tl->cafile == NULL || tl->conc <= 0 ||
	    tl->conc > 100000 || tl->count < 0 || tl->count > TL_MAXCOUNT ||
	    tl->secs <= 0 || tl->secs > 3600 || tl->hold < 0 ||
	    argc != optind)
		bench_usage(TL_USAGE);
}

/*
 * The client context: verify the peer against the CA file, offer
 * http/1.1, and keep no sessions, so every handshake is a full one.
 */
static SSL_CTX *
tl_context(const char *cafile)
{
	static const unsigned char	alpn[] = "\x08http/1.1";
	SSL_CTX				*ctx;

	if ((ctx = SSL_CTX_new(TLS_client_method())) == NULL ||
	    SSL_CTX_load_verify_locations(ctx, cafile, NULL) != 1 ||
	    SSL_CTX_set_alpn_protos(ctx, alpn, sizeof alpn - 1) != 0) {
		ERR_print_errors_fp(stderr);
		exit(1);
	}
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	return (ctx);
}

/* Fill in what the options left open: target, request, arrays. */
static void
tl_setup(struct tl *tl)
{
	tl->nslots = tl->mode == M_IDLE ? tl->count : tl->conc;
	if (!tl->proxied) {
		tl->dst.sin_family = AF_INET;
		tl->dst.sin_port = htons(tl->oport);
		tl->dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	}
	tl->reqlen = snprintf(tl->req, sizeof tl->req,
	    "GET /x HTTP/1.1\r\nHost: %s:%d\r\nUser-Agent: tlsload\r\n%s%s"
	    "\r\n", tl->host, tl->oport, tl->header != NULL ? tl->header : "",
	    tl->header != NULL ? "\r\n" : "");
	if (tl->reqlen >= sizeof tl->req)
		bench_usage(TL_USAGE);
	tl->ctx = tl_context(tl->cafile);
	tl->slots = calloc(tl->nslots + 1, sizeof *tl->slots);
	tl->lat = calloc(tl->count + 1, sizeof *tl->lat);
	if (tl->slots == NULL || tl->lat == NULL ||
	    (tl->ep = epoll_create1(0)) == -1) {
		perror("tlsload");
		exit(1);
	}
	tl->deadline = bench_now() + tl->secs;
}

/* Close whatever is still open and free the arrays. */
static void
tl_free(struct tl *tl)
{
	long	i;

	for (i = 0; i < tl->nslots; i++) {
		if (tl->slots[i] != NULL)
			tconn_close(tl, tl->slots[i], i);
	}
	free(tl->slots);
	free(tl->lat);
	close(tl->ep);
	SSL_CTX_free(tl->ctx);
}

/* Run one measurement and print its line. */
int
main(int argc, char **argv)
{
	struct tl	tl;

	memset(&tl, 0, sizeof tl);
	tl.host = "bench.test";
	tl.hold = 60;
	if (argc < 2)
		bench_usage(TL_USAGE);
	tl_mode(&tl, argv[1]);
	tl_options(&tl, argc - 1, argv + 1);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, tl_signal);
	signal(SIGINT, tl_signal);
	bench_nofile();
	tl_setup(&tl);
	switch (tl.mode) {
	case M_RATE:
		tl_rate(&tl);
		break;
	case M_KEEP:
		tl_keep(&tl);
		break;
	case M_IDLE:
		tl_idle(&tl);
		break;
	}
	fflush(stdout);
	tl_free(&tl);
	return (tl.errors > 0 || tl.lost > 0);
}
