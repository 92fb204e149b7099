/*
 * loadgen: the client side of the benchmark.  One process, one epoll loop.
 * It talks to tests/bench/origin either directly (no -x) or through an
 * HTTP proxy (-x IP:PORT), or through a bare TCP relay to the origin
 * (-r IP:PORT: no CONNECT, origin-form requests, as direct but one hop
 * longer), and prints one line of key=value results.  Direct connections
 * go to 127.0.0.1, or to -d IP (an address that pinhole run's transparent
 * capture takes to the origin):
 *
 *   tunnel-bulk	-c tunnels move -b bytes in all (download; -u upload)
 *   connect-rate	-c clients do CONNECT + one 64-byte echo + close,
 *			-n setups in all
 *   forward-rps	-c keep-alive clients send absolute-form GETs, -n in all
 *   idle-tunnels	-n tunnels opened (-c at a time) and held -w seconds
 *
 * Every mode stops at -t seconds whatever is left.
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

#include "tests/bench/bench.h"

#define LG_USAGE "loadgen tunnel-bulk|connect-rate|forward-rps|idle-tunnels\n" \
	"\t-o ORIGINPORT [-x PROXYIP:PORT | -r RELAYIP:PORT | -d IP] [-H HOST]\n" \
	"\t[-c CONC]\n" \
	"\t[-n COUNT]\n" \
	"\t[-b BYTES] [-t SECONDS] [-w HOLDSECONDS] [-u]"
#define LG_CHUNK	(256 * 1024)
#define LG_MAXCOUNT	10000000L
/* The echo through each tunnel: 64 bytes each way, as the origin answers. */
#define LG_PING		"PING 0123456789abcdef0123456789abcdef0123456789abcdef0123456789\n"
#define LG_PONG		"PONG 0123456789abcdef0123456789abcdef0123456789abcdef0123456789\n"
#define LG_ECHOLEN	(sizeof LG_PING - 1)

enum lg_mode {
	M_BULK,
	M_RATE,
	M_RPS,
	M_IDLE,
};

enum lconn_state {
	L_CONNECTING,	/* TCP connect in progress */
	L_PROXY,	/* CONNECT sent, waiting for the proxy's answer */
	L_ECHO,		/* LG_PING sent through the tunnel, waiting for LG_PONG */
	L_WAIT,		/* bulk tunnel up, waiting for the others */
	L_DOWN,		/* reading bulk data */
	L_UP,		/* writing bulk data */
	L_UPACK,	/* bulk data written, waiting for DONE */
	L_HTTP,		/* GET sent, reading the response */
	L_IDLE,		/* tunnel held open */
};

struct lconn {
	int			 fd;
	enum lconn_state	 state;
	uint32_t		 events;
	double			 start;
	uint64_t		 left;
	int			 header_done;
	int			 close_after;
	long			 reqs;
	size_t			 len;
	char			 buf[4096];
};

struct lg {
	enum lg_mode		 mode;
	const char		*name;
	struct sockaddr_in	 dst;
	int			 proxied;	/* -x: CONNECT, absolute-form */
	int			 relayed;	/* -r: a bare TCP relay */
	struct in_addr		 direct;	/* -d, or 127.0.0.1 */
	const char		*host;
	int			 oport;
	int			 conc;
	long			 count;
	uint64_t		 bytes;
	double			 secs;
	double			 hold;
	int			 upload;

	int			 ep;
	long			 started;
	long			 done;
	long			 errors;
	long			 reconnects;
	long			 inflight;
	long			 open;
	long			 lost;
	int			 ready;
	int			 finished;
	uint64_t		 got;
	uint32_t		*lat;
	double			 t0;
	double			 tend;
	double			 deadline;
	struct lconn		**slots;
	char			 req[512];
	size_t			 reqlen;
};

static volatile sig_atomic_t	 lg_stop;
static char			 lg_scratch[LG_CHUNK];

static int	lconn_open(struct lg *, int);
static int	lconn_tunnel(struct lg *, struct lconn *);
static void	lg_bulk_check(struct lg *);

/* Note a request to stop holding. */
static void
lg_signal(int sig)
{
	lg_stop = 1;
}

/* Tell whether another setup or request may start. */
static int
lg_more(struct lg *lg)
{
	return (lg->started < lg->count && bench_now() < lg->deadline);
}

/* Record one latency sample, in microseconds. */
static void
lg_sample(struct lg *lg, double start)
{
	double	us = (bench_now() - start) * 1e6;

	if (lg->done < lg->count)
		lg->lat[lg->done] = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
	lg->done++;
}

/* Close a connection and empty its slot. */
static void
lconn_close(struct lg *lg, struct lconn *c, int slot)
{
	close(c->fd);
	free(c);
	lg->slots[slot] = NULL;
}

/* Ask epoll for these events on a connection. */
static void
lconn_want(struct lg *lg, struct lconn *c, int slot, uint32_t events)
{
	if (events != c->events) {
		bench_epoll_set(lg->ep, EPOLL_CTL_MOD, c->fd, events,
		    (void *)(intptr_t)slot);
		c->events = events;
	}
}

/* Send a short message whole; -1 if it did not go at once. */
static int
lconn_send(struct lconn *c, const char *p, size_t len)
{
	return (send(c->fd, p, len, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -1);
}

/* Give up on a connection; the mode decides what replaces it. */
static void
lconn_fail(struct lg *lg, struct lconn *c, int slot)
{
	int	was_idle = c->state == L_IDLE;

	lconn_close(lg, c, slot);
	if (was_idle) {
		lg->open--;
		lg->lost++;
		return;
	}
	lg->errors++;
	switch (lg->mode) {
	case M_BULK:
		lg->finished++;
		lg_bulk_check(lg);
		break;
	case M_RPS:
		lg->reconnects++;
		/* FALLTHROUGH */
	case M_RATE:
		lg->inflight--;
		if (lg_more(lg))
			lconn_open(lg, slot);
		break;
	case M_IDLE:
		lg->inflight--;
		break;
	}
}

/* Send the next forward-proxy request on a keep-alive connection. */
static int
lconn_request(struct lg *lg, struct lconn *c, int slot)
{
	c->state = L_HTTP;
	c->len = 0;
	c->header_done = 0;
	c->start = bench_now();
	lg->started++;
	lconn_want(lg, c, slot, EPOLLIN);
	return (lconn_send(c, lg->req, lg->reqlen));
}

/* Open a connection in a slot; -1 if it failed at once. */
static int
lconn_open(struct lg *lg, int slot)
{
	struct lconn	*c;
	int		 one = 1;

	if ((c = calloc(1, sizeof *c)) == NULL)
		return (-1);
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (c->fd == -1) {
		free(c);
		lg->errors++;
		return (-1);
	}
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	lg->slots[slot] = c;
	c->state = L_CONNECTING;
	c->start = bench_now();
	c->events = EPOLLOUT;
	if (lg->mode != M_RPS)
		lg->started++;
	lg->inflight++;
	if ((connect(c->fd, (struct sockaddr *)&lg->dst, sizeof lg->dst) ==
	    -1 && errno != EINPROGRESS) ||
	    bench_epoll_set(lg->ep, EPOLL_CTL_ADD, c->fd, EPOLLOUT,
	    (void *)(intptr_t)slot) == -1) {
		lconn_close(lg, c, slot);
		lg->inflight--;
		lg->errors++;
		return (-1);
	}
	return (0);
}

/* The TCP connection is up: ask the proxy for a tunnel, or go on. */
static void
lconn_connected(struct lg *lg, struct lconn *c, int slot)
{
	char		msg[512];
	socklen_t	len = sizeof(int);
	int		err = 0, n;

	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) == -1 ||
	    err != 0) {
		lconn_fail(lg, c, slot);
		return;
	}
	if (lg->mode == M_RPS) {
		if (lconn_request(lg, c, slot) == -1)
			lconn_fail(lg, c, slot);
		return;
	}
	if (!lg->proxied) {
		lconn_want(lg, c, slot, EPOLLIN);
		if (lconn_tunnel(lg, c) == -1)
			lconn_fail(lg, c, slot);
		return;
	}
	n = snprintf(msg, sizeof msg, "CONNECT %s:%d HTTP/1.1\r\n"
	    "Host: %s:%d\r\n\r\n", lg->host, lg->oport, lg->host, lg->oport);
	c->state = L_PROXY;
	lconn_want(lg, c, slot, EPOLLIN);
	if (lconn_send(c, msg, n) == -1)
		lconn_fail(lg, c, slot);
}

/* Start the bulk transfer on every tunnel that is up. */
static void
lg_bulk_go(struct lg *lg)
{
	struct lconn	*c;
	char		 msg[64];
	uint64_t	 each = lg->bytes / lg->conc;
	int		 i, n;

	lg->t0 = bench_now();
	for (i = 0; i < lg->conc; i++) {
		if ((c = lg->slots[i]) == NULL)
			continue;
		c->left = each + (i == 0 ? lg->bytes % lg->conc : 0);
		n = snprintf(msg, sizeof msg, "%s %llu\n",
		    lg->upload ? "SINK" : "SRC", (unsigned long long)c->left);
		c->state = lg->upload ? L_UP : L_DOWN;
		lconn_want(lg, c, i, lg->upload ? EPOLLOUT : EPOLLIN);
		if (lconn_send(c, msg, n) == -1)
			lconn_fail(lg, c, i);
	}
}

/* Start the bulk transfer once every tunnel is up or has failed. */
static void
lg_bulk_check(struct lg *lg)
{
	if (lg->t0 == 0 && lg->ready + lg->finished >= lg->conc)
		lg_bulk_go(lg);
}

/* The tunnel (or direct connection) is up: start the mode's work. */
static int
lconn_tunnel(struct lg *lg, struct lconn *c)
{
	c->len = 0;
	if (lg->mode == M_BULK) {
		c->state = L_WAIT;
		lg->ready++;
		lg_bulk_check(lg);	/* may free c */
		return (0);
	}
	c->state = L_ECHO;
	return (lconn_send(c, LG_PING, LG_ECHOLEN));
}

/* Read into the connection's buffer; -1 on EOF, error or overflow. */
static int
lconn_fill(struct lconn *c)
{
	ssize_t	n;

	if (c->len == sizeof c->buf - 1)
		return (-1);
	n = read(c->fd, c->buf + c->len, sizeof c->buf - 1 - c->len);
	if (n <= 0)
		return (n == -1 && errno == EAGAIN ? 0 : -1);
	c->len += n;
	c->buf[c->len] = '\0';
	return (0);
}

/* Read the proxy's answer to CONNECT. */
static void
lconn_proxy_read(struct lg *lg, struct lconn *c, int slot)
{
	if (lconn_fill(c) == -1) {
		lconn_fail(lg, c, slot);
		return;
	}
	if (strstr(c->buf, "\r\n\r\n") == NULL)
		return;
	if (strncmp(c->buf, "HTTP/1.", 7) != 0 ||
	    strncmp(c->buf + 8, " 200", 4) != 0) {
		lconn_fail(lg, c, slot);
		return;
	}
	if (lconn_tunnel(lg, c) == -1)
		lconn_fail(lg, c, slot);
}

/* Read the LG_PONG that proves the tunnel carries data. */
static void
lconn_echo_read(struct lg *lg, struct lconn *c, int slot)
{
	if (c->state != L_ECHO || lconn_fill(c) == -1) {
		lconn_fail(lg, c, slot);
		return;
	}
	if (c->len < LG_ECHOLEN)
		return;
	if (c->len > LG_ECHOLEN || memcmp(c->buf, LG_PONG, LG_ECHOLEN) != 0) {
		lconn_fail(lg, c, slot);
		return;
	}
	lg->inflight--;
	if (lg->mode == M_IDLE) {
		c->state = L_IDLE;
		lg->open++;
		return;
	}
	lg_sample(lg, c->start);
	lconn_close(lg, c, slot);
	if (lg_more(lg))
		lconn_open(lg, slot);
}

/* Count bulk bytes read; the tunnel is done when all arrived. */
static void
lconn_down_read(struct lg *lg, struct lconn *c, int slot)
{
	ssize_t	n;

	if ((n = read(c->fd, lg_scratch, sizeof lg_scratch)) == -1 &&
	    errno == EAGAIN)
		return;
	if (n <= 0) {
		lconn_fail(lg, c, slot);
		return;
	}
	lg->got += n;
	c->left -= (uint64_t)n > c->left ? c->left : (uint64_t)n;
	if (c->left > 0)
		return;
	lconn_close(lg, c, slot);
	lg->finished++;
	lg->tend = bench_now();
}

/* Write bulk data; wait for DONE once all of it went. */
static void
lconn_up_write(struct lg *lg, struct lconn *c, int slot)
{
	size_t	len = c->left < sizeof lg_scratch ? c->left : sizeof lg_scratch;
	ssize_t	n;

	if ((n = send(c->fd, lg_scratch, len, MSG_NOSIGNAL)) == -1) {
		if (errno != EAGAIN)
			lconn_fail(lg, c, slot);
		return;
	}
	c->left -= n;
	lg->got += n;
	if (c->left > 0)
		return;
	c->state = L_UPACK;
	lconn_want(lg, c, slot, EPOLLIN);
}

/* Read the DONE that ends an upload. */
static void
lconn_upack_read(struct lg *lg, struct lconn *c, int slot)
{
	if (lconn_fill(c) == -1) {
		lconn_fail(lg, c, slot);
		return;
	}
	if (strstr(c->buf, "DONE\n") == NULL)
		return;
	lconn_close(lg, c, slot);
	lg->finished++;
	lg->tend = bench_now();
}

/* Parse a response header: status, length, close; -1 if unusable. */
static int
lconn_http_header(struct lconn *c)
{
	char	*end, *cl;
	size_t	 hlen, have;

	if ((end = strstr(c->buf, "\r\n\r\n")) == NULL)
		return (c->len == sizeof c->buf - 1 ? -1 : 0);
	hlen = end + 4 - c->buf;
	*end = '\0';
	if (strncmp(c->buf, "HTTP/1.", 7) != 0 ||
	    strncmp(c->buf + 8, " 200", 4) != 0 ||
	    (cl = strcasestr(c->buf, "\ncontent-length:")) == NULL)
		return (-1);
	c->left = strtoull(cl + 16, NULL, 10);
	c->close_after = strcasestr(c->buf, "\nconnection: close") != NULL ||
	    (strncmp(c->buf, "HTTP/1.0", 8) == 0 &&
	    strcasestr(c->buf, "\nconnection: keep-alive") == NULL);
	have = c->len - hlen;
	c->left -= have > c->left ? c->left : have;
	c->header_done = 1;
	c->len = 0;
	return (0);
}

/* The server closed a kept-alive connection: resend on a new one. */
static void
lconn_http_retry(struct lg *lg, struct lconn *c, int slot)
{
	lconn_close(lg, c, slot);
	lg->inflight--;
	lg->reconnects++;
	lg->started--;
	lconn_open(lg, slot);
}

/* A whole response arrived: send the next request, or reconnect. */
static void
lconn_http_done(struct lg *lg, struct lconn *c, int slot)
{
	lg_sample(lg, c->start);
	c->reqs++;
	if (!lg_more(lg)) {
		lconn_close(lg, c, slot);
		lg->inflight--;
		return;
	}
	if (c->close_after) {
		lconn_close(lg, c, slot);
		lg->inflight--;
		lg->reconnects++;
		lconn_open(lg, slot);
		return;
	}
	if (lconn_request(lg, c, slot) == -1)
		lconn_fail(lg, c, slot);
}

/* Read a forward-proxy response. */
static void
lconn_http_read(struct lg *lg, struct lconn *c, int slot)
{
	ssize_t	n;

	if (!c->header_done) {
		if (lconn_fill(c) == -1) {
			if (c->len == 0 && c->reqs > 0)
				lconn_http_retry(lg, c, slot);
			else
				lconn_fail(lg, c, slot);
			return;
		}
		if (lconn_http_header(c) == -1) {
			lconn_fail(lg, c, slot);
			return;
		}
	} else if (c->left > 0) {
		n = read(c->fd, lg_scratch, c->left < sizeof lg_scratch ?
		    c->left : sizeof lg_scratch);
		if (n == -1 && errno == EAGAIN)
			return;
		if (n <= 0) {
			lconn_fail(lg, c, slot);
			return;
		}
		c->left -= n;
	}
	if (c->header_done && c->left == 0)
		lconn_http_done(lg, c, slot);
}

/* Dispatch the events of one connection. */
static void
lconn_event(struct lg *lg, int slot, uint32_t events)
{
	struct lconn	*c = lg->slots[slot];

	if (c == NULL)
		return;
	switch (c->state) {
	case L_CONNECTING:
		lconn_connected(lg, c, slot);
		break;
	case L_PROXY:
		lconn_proxy_read(lg, c, slot);
		break;
	case L_ECHO:
	case L_IDLE:
	case L_WAIT:
		lconn_echo_read(lg, c, slot);
		break;
	case L_DOWN:
		lconn_down_read(lg, c, slot);
		break;
	case L_UP:
		if (events & (EPOLLERR | EPOLLHUP))
			lconn_fail(lg, c, slot);
		else
			lconn_up_write(lg, c, slot);
		break;
	case L_UPACK:
		lconn_upack_read(lg, c, slot);
		break;
	case L_HTTP:
		lconn_http_read(lg, c, slot);
		break;
	}
}

/* Run the event loop until done() says so or the time is up. */
static void
lg_run(struct lg *lg, int (*done)(struct lg *), double until)
{
	struct epoll_event	evs[256];
	int			i, n, ms;

	while (!done(lg) && !lg_stop) {
		ms = (until - bench_now()) * 1000;
		if (ms <= 0)
			break;
		n = epoll_wait(lg->ep, evs, 256, ms > 100 ? 100 : ms);
		for (i = 0; i < n; i++)
			lconn_event(lg, (int)(intptr_t)evs[i].data.ptr,
			    evs[i].events);
	}
}

/* Tell whether every bulk tunnel has finished. */
static int
lg_bulk_done(struct lg *lg)
{
	return (lg->finished == lg->conc);
}

/* Tell whether nothing is in flight and nothing more will start. */
static int
lg_idle_done(struct lg *lg)
{
	return (lg->inflight == 0 && !lg_more(lg));
}

/* Tell whether every idle tunnel is open or failed. */
static int
lg_open_done(struct lg *lg)
{
	return (lg->open + lg->errors >= lg->count);
}

/* Never done: hold until the time is up or a signal. */
static int
lg_never(struct lg *lg)
{
	return (0);
}

/* Return a latency percentile in milliseconds. */
static double
lg_pct(struct lg *lg, int pct)
{
	long	n = lg->done < lg->count ? lg->done : lg->count;

	if (n == 0)
		return (0);
	return (lg->lat[n * pct / 100 < n ? n * pct / 100 : n - 1] / 1e3);
}

/* Compare two latency samples for qsort. */
static int
lg_cmp(const void *a, const void *b)
{
	uint32_t	x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x < y ? -1 : x > y);
}

/* Return the CPU time this process has used, in microseconds. */
static long long
lg_cpu_us(void)
{
	struct rusage	ru;

	if (getrusage(RUSAGE_SELF, &ru) == -1)
		return (-1);
	return ((ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000LL +
	    ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* Measure bulk throughput through -c tunnels. */
static void
lg_bulk(struct lg *lg)
{
	double	secs;
	int	i;

	for (i = 0; i < lg->conc; i++)
		if (lconn_open(lg, i) == -1)
			lg->finished++;
	lg_bulk_check(lg);
	lg_run(lg, lg_bulk_done, lg->deadline);
	if (!lg_bulk_done(lg) || lg->tend == 0)
		lg->tend = bench_now();
	if (lg->t0 == 0)
		lg->t0 = lg->tend;
	secs = lg->tend - lg->t0;
	printf("%s conns=%d bytes=%llu secs=%.3f MiBps=%.1f errors=%ld "
	    "complete=%d cpu_us=%lld\n", lg->name, lg->conc,
	    (unsigned long long)lg->got, secs,
	    secs > 0 ? lg->got / secs / 1048576 : 0, lg->errors,
	    lg->got == lg->bytes && lg->errors == 0, lg_cpu_us());
}

/* Measure setups or requests per second with -c clients. */
static void
lg_rate(struct lg *lg)
{
	double	secs;
	long	n;
	int	i;

	lg->t0 = bench_now();
	for (i = 0; i < lg->conc && lg_more(lg); i++)
		lconn_open(lg, i);
	lg_run(lg, lg_idle_done, lg->deadline);
	secs = bench_now() - lg->t0;
	n = lg->done < lg->count ? lg->done : lg->count;
	qsort(lg->lat, n, sizeof *lg->lat, lg_cmp);
	printf("%s conns=%d done=%ld secs=%.3f rate=%.0f p50_ms=%.3f "
	    "p99_ms=%.3f errors=%ld reconnects=%ld cpu_us=%lld\n", lg->name,
	    lg->conc, lg->done, secs, secs > 0 ? lg->done / secs : 0,
	    lg_pct(lg, 50), lg_pct(lg, 99), lg->errors, lg->reconnects,
	    lg_cpu_us());
}

/* Tell whether another idle tunnel may start opening now. */
static int
lg_may_open(struct lg *lg)
{
	return (lg_open_done(lg) ||
	    (lg->started < lg->count && lg->inflight < lg->conc));
}

/* Open -n tunnels, at most -c at a time. */
static void
lg_idle_open(struct lg *lg)
{
	lg->t0 = bench_now();
	while (!lg_open_done(lg) && !lg_stop && bench_now() < lg->deadline) {
		while (lg->started < lg->count && lg->inflight < lg->conc)
			lconn_open(lg, lg->started);
		lg_run(lg, lg_may_open, lg->deadline);
	}
}

/* Hold -n idle tunnels open for -w seconds. */
static void
lg_idle(struct lg *lg)
{
	lg_idle_open(lg);
	printf("%s open=%ld wanted=%ld secs=%.3f errors=%ld\n", lg->name,
	    lg->open, lg->count, bench_now() - lg->t0, lg->errors);
	fflush(stdout);
	lg_run(lg, lg_never, bench_now() + lg->hold);
	if (lg->lost > 0)
		fprintf(stderr, "loadgen: %ld idle tunnels closed early\n",
		    lg->lost);
}

/* Parse the mode name. */
static void
lg_mode(struct lg *lg, const char *name)
{
	static const struct {
		const char	*name;
		enum lg_mode	 mode;
		int		 conc;
		long		 count;
		double		 secs;
	} modes[] = {
		{ "tunnel-bulk", M_BULK, 1, 0, 30 },
		{ "connect-rate", M_RATE, 50, 20000, 5 },
		{ "forward-rps", M_RPS, 50, 200000, 5 },
		{ "idle-tunnels", M_IDLE, 100, 2000, 30 },
	};
	size_t	i;

	for (i = 0; i < sizeof modes / sizeof modes[0]; i++) {
		if (strcmp(name, modes[i].name) == 0) {
			lg->name = modes[i].name;
			lg->mode = modes[i].mode;
			lg->conc = modes[i].conc;
			lg->count = modes[i].count;
			lg->secs = modes[i].secs;
			return;
		}
	}
	bench_usage(LG_USAGE);
}

/* Parse the options into lg. */
static void
lg_options(struct lg *lg, int argc, char **argv)
{
	int	ch;

	lg->direct.s_addr = htonl(INADDR_LOOPBACK);
	while ((ch = getopt(argc, argv, "b:c:d:H:n:o:r:t:uw:x:")) != -1) {
		switch (ch) {
		case 'd':
			if (inet_pton(AF_INET, optarg, &lg->direct) != 1)
				bench_usage(LG_USAGE);
			break;
		case 'b':
			lg->bytes = strtoull(optarg, NULL, 10);
			break;
		case 'c':
			lg->conc = atoi(optarg);
			break;
		case 'H':
			lg->host = optarg;
			break;
		case 'n':
			lg->count = atol(optarg);
			break;
		case 'o':
			lg->oport = bench_port(optarg);
			break;
		case 't':
			lg->secs = strtod(optarg, NULL);
			break;
		case 'u':
			lg->upload = 1;
			break;
		case 'w':
			lg->hold = strtod(optarg, NULL);
			break;
		case 'r':
		case 'x':
			if (bench_addr(optarg, &lg->dst) == -1)
				bench_usage(LG_USAGE);
			lg->proxied = ch == 'x';
			lg->relayed = ch == 'r';
			break;
		default:
			bench_usage(LG_USAGE);
		}
	}
	if (lg->oport <= 0 || lg->conc <= 0 || lg->conc > 100000 ||
	    lg->count < 0 || lg->count > LG_MAXCOUNT || lg->secs <= 0 ||
	    lg->hold < 0 || argc != optind)
		bench_usage(LG_USAGE);
}

/* Fill in what the options left open: target, request, arrays. */
static void
lg_setup(struct lg *lg)
{
	long	nslots = lg->mode == M_IDLE ? lg->count : lg->conc;

	if (!lg->proxied && !lg->relayed) {
		lg->dst.sin_family = AF_INET;
		lg->dst.sin_port = htons(lg->oport);
		lg->dst.sin_addr = lg->direct;
	}
	if (lg->mode == M_BULK)
		lg->count = lg->conc;
	if (lg->proxied)
		lg->reqlen = snprintf(lg->req, sizeof lg->req,
		    "GET http://%s:%d/x HTTP/1.1\r\nHost: %s:%d\r\n\r\n",
		    lg->host, lg->oport, lg->host, lg->oport);
	else
		lg->reqlen = snprintf(lg->req, sizeof lg->req,
		    "GET /x HTTP/1.1\r\nHost: %s:%d\r\n\r\n",
		    lg->host, lg->oport);
	lg->slots = calloc(nslots, sizeof *lg->slots);
	lg->lat = calloc(lg->count + 1, sizeof *lg->lat);
	if (lg->slots == NULL || lg->lat == NULL ||
	    (lg->ep = epoll_create1(0)) == -1) {
		perror("loadgen");
		exit(1);
	}
	lg->deadline = bench_now() + lg->secs;
}

/* Close whatever is still open and free the arrays. */
static void
lg_free(struct lg *lg)
{
	long	i, nslots = lg->mode == M_IDLE ? lg->count : lg->conc;

	for (i = 0; i < nslots; i++) {
		if (lg->slots[i] != NULL)
			lconn_close(lg, lg->slots[i], i);
	}
	free(lg->slots);
	free(lg->lat);
	close(lg->ep);
}

/* Run one measurement and print its line. */
int
main(int argc, char **argv)
{
	struct lg	lg;

	memset(&lg, 0, sizeof lg);
	lg.host = "bench.test";
	lg.bytes = 1ULL << 30;
	lg.hold = 30;
	if (argc < 2)
		bench_usage(LG_USAGE);
	lg_mode(&lg, argv[1]);
	lg_options(&lg, argc - 1, argv + 1);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, lg_signal);
	signal(SIGINT, lg_signal);
	bench_nofile();
	lg_setup(&lg);
	switch (lg.mode) {
	case M_BULK:
		lg_bulk(&lg);
		break;
	case M_RATE:
	case M_RPS:
		lg_rate(&lg);
		break;
	case M_IDLE:
		lg_idle(&lg);
		break;
	}
	fflush(stdout);
	lg_free(&lg);
	return (lg.errors > 0 || lg.lost > 0);
}
