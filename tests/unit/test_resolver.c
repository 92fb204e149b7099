/*
 * The resolver against a small DNS responder living in the test's own
 * event loop on 127.0.0.1: answers from a table, counts what reaches it,
 * and can be told to stay silent.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <event2/event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/metrics.h"
#include "proxy/resolver/resolver.h"

#define T_A	1
#define T_TXT	16
#define T_AAAA	28

struct fake_rr {
	const char	*name;
	int		 type;
	uint32_t	 ttl;
	const char	*data;
};

static const struct fake_rr fake_table[] = {
	{ "origin.test", T_AAAA, 120, "::1" },
	{ "origin.test", T_A, 300, "127.0.0.1" },
	{ "origin.test", T_A, 200, "127.0.0.2" },
	{ "short.test", T_A, 1, "127.0.0.3" },
	{ "v6only.test", T_AAAA, 60, "::2" },
	{ "txt.test", T_TXT, 60, "hello" },
	{ "other.test", T_A, 60, "127.0.0.4" },
	{ "big.test", T_A, 60, "127.0.0.9" },	/* truncated over UDP */
};

#define FAKE_CONNS	4

struct fake_conn {
	int		 fd;
	struct event	*ev;
	int		*ntcp;
};

struct fake_dns {
	int		 fd;
	struct event	*ev;
	int		 port;
	int		 silent;
	int		 nqueries;
	char		 last[256];
	int		 tfd;		/* TCP, for truncated answers */
	struct event	*tev;
	int		 ntcp;
	struct fake_conn conns[FAKE_CONNS];
};

struct fixture {
	struct event_base	*base;
	struct fake_dns		 dns;
	struct resolver		*r;
};

struct answer {
	int			 calls;
	int			 status;
	char			 errstr[64];
	struct resolver_result	 res;
	uint8_t			 msg[512];
	size_t			 len;
	struct resolver		*free_me;
};

/* Return monotonic milliseconds. */
static uint64_t
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000);
}

/* Read a query name; return the offset after it, or -1. */
static int
fake_qname(const uint8_t *p, size_t len, char *out, size_t outlen)
{
	size_t	off = 12, o = 0;

	while (off < len && p[off] != 0) {
		if (p[off] > 63 || off + 1 + p[off] > len ||
		    o + p[off] + 2 > outlen)
			return (-1);
		if (o > 0)
			out[o++] = '.';
		memcpy(out + o, p + off + 1, p[off]);
		o += p[off];
		off += 1 + p[off];
	}
	out[o] = '\0';
	return (off < len ? (int)off + 1 : -1);
}

/* Append one answer record for the question at offset 12. */
static size_t
fake_rr_put(uint8_t *out, size_t o, const struct fake_rr *rr)
{
	uint8_t	rdata[64];
	size_t	rdlen;

	if (rr->type == T_A) {
		inet_pton(AF_INET, rr->data, rdata);
		rdlen = 4;
	} else if (rr->type == T_AAAA) {
		inet_pton(AF_INET6, rr->data, rdata);
		rdlen = 16;
	} else {
		rdlen = strlen(rr->data);
		rdata[0] = rdlen;
		memcpy(rdata + 1, rr->data, rdlen++);
	}
	out[o++] = 0xc0;
	out[o++] = 12;
	out[o++] = 0;
	out[o++] = rr->type;
	out[o++] = 0;
	out[o++] = 1;
	out[o++] = rr->ttl >> 24;
	out[o++] = rr->ttl >> 16;
	out[o++] = rr->ttl >> 8;
	out[o++] = rr->ttl;
	out[o++] = 0;
	out[o++] = rdlen;
	memcpy(out + o, rdata, rdlen);
	return (o + rdlen);
}

/* Build the answer to a query from the table (over UDP: maybe cut). */
static size_t
fake_answer(const uint8_t *q, int udp, size_t qend, const char *name,
    uint8_t *out)
{
	size_t	o, i, n = 0;
	int	known = 0, type = q[qend] << 8 | q[qend + 1];

	memcpy(out, q, qend + 4);
	out[2] = 0x80 | (q[2] & 0x01);		/* QR, RD copied */
	out[3] = 0x80;				/* RA */
	out[6] = out[7] = out[8] = out[9] = out[10] = out[11] = 0;
	o = qend + 4;
	for (i = 0; i < sizeof fake_table / sizeof fake_table[0]; i++) {
		if (strcasecmp(fake_table[i].name, name) != 0)
			continue;
		known = 1;
		if (fake_table[i].type == type) {
			o = fake_rr_put(out, o, &fake_table[i]);
			n++;
		}
	}
	out[7] = n;
	if (n > 0 && strcmp(name, "big.test") == 0 && udp) {
		out[2] |= 0x02;			/* TC: ask again over TCP */
		out[7] = 0;
		o = qend + 4;
	}
	if (!known)
		out[3] |= 3;			/* NXDOMAIN */
	return (o);
}

/* Answer one query, unless told to be silent. */
static void
fake_dns_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fake_dns		*d = arg;
	struct sockaddr_storage	 ss;
	socklen_t		 sslen = sizeof ss;
	uint8_t			 q[512], out[1024];
	ssize_t			 n;
	int			 qend;

	n = recvfrom(fd, q, sizeof q, 0, (struct sockaddr *)&ss, &sslen);
	if (n < 12)
		return;
	d->nqueries++;
	if ((qend = fake_qname(q, n, d->last, sizeof d->last)) == -1 ||
	    qend + 4 > n || d->silent)
		return;
	sendto(fd, out, fake_answer(q, 1, qend, d->last, out), 0,
	    (struct sockaddr *)&ss, sslen);
}

/* Answer one query over TCP. */
static void
fake_tcp_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fake_conn	*c = arg;
	uint8_t			 q[514], out[1026];
	char			 name[256];
	size_t			 len;
	int			 qend;

	if (recv(fd, q, 2, MSG_WAITALL) != 2)
		goto close;
	len = q[0] << 8 | q[1];
	if (len < 12 || len > 512 ||
	    recv(fd, q, len, MSG_WAITALL) != (ssize_t)len)
		goto close;
	(*c->ntcp)++;
	if ((qend = fake_qname(q, len, name, sizeof name)) == -1 ||
	    (size_t)qend + 4 > len)
		goto close;
	len = fake_answer(q, 0, qend, name, out + 2);
	out[0] = len >> 8;
	out[1] = len;
	send(fd, out, len + 2, MSG_NOSIGNAL);
	return;
close:
	event_free(c->ev);
	c->ev = NULL;
	close(c->fd);
}

/* Take a TCP connection. */
static void
fake_tcp_accept_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fake_dns	*d = arg;
	struct timeval	 tv = { 1, 0 };
	int		 i, s;

	if ((s = accept(fd, NULL, NULL)) == -1)
		return;
	for (i = 0; i < FAKE_CONNS && d->conns[i].ev != NULL; i++)
		;
	if (i == FAKE_CONNS) {
		close(s);
		return;
	}
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	d->conns[i].fd = s;
	d->conns[i].ntcp = &d->ntcp;
	d->conns[i].ev = event_new(event_get_base(d->tev), s,
	    EV_READ | EV_PERSIST, fake_tcp_read_cb, &d->conns[i]);
	event_add(d->conns[i].ev, NULL);
}

/* Bind a TCP socket to the responder's port; -1 if it is taken. */
static int
fake_dns_reserve_tcp(struct fake_dns *d, const struct sockaddr_in *sin)
{
	int	fd;

	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return (-1);
	if (bind(fd, (const struct sockaddr *)sin, sizeof *sin) == -1) {
		close(fd);
		return (-1);
	}
	d->tfd = fd;
	return (0);
}

/* Listen over TCP on the responder's port too. */
static void
fake_dns_tcp_start(struct fake_dns *d, struct event_base *base)
{
	assert_true(d->tfd >= 0);
	assert_int_equal(listen(d->tfd, 4), 0);
	d->tev = event_new(base, d->tfd, EV_READ | EV_PERSIST,
	    fake_tcp_accept_cb, d);
	assert_non_null(d->tev);
	event_add(d->tev, NULL);
}

/* Stop the TCP side. */
static void
fake_dns_tcp_stop(struct fake_dns *d)
{
	int	i;

	for (i = 0; i < FAKE_CONNS; i++) {
		if (d->conns[i].ev != NULL) {
			event_free(d->conns[i].ev);
			close(d->conns[i].fd);
		}
	}
	event_free(d->tev);
	close(d->tfd);
	d->tfd = -1;
}

/* Start the responder on 127.0.0.1 (or ::1) and an ephemeral port. */
static void
fake_dns_start(struct fake_dns *d, struct event_base *base, int family)
{
	struct sockaddr_in6	sin6;
	struct sockaddr_in	sin;
	struct sockaddr		*sa;
	socklen_t		 len;
	int			 tries;

	memset(d, 0, sizeof *d);
	d->tfd = -1;
	for (tries = 0; tries < 100; tries++) {
		memset(&sin, 0, sizeof sin);
		memset(&sin6, 0, sizeof sin6);
		sin.sin_family = AF_INET;
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sin6.sin6_family = AF_INET6;
		sin6.sin6_addr = in6addr_loopback;
		sa = family == AF_INET ? (struct sockaddr *)&sin :
		    (struct sockaddr *)&sin6;
		len = family == AF_INET ? sizeof sin : sizeof sin6;
		d->fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK, 0);
		assert_true(d->fd >= 0);
		assert_int_equal(bind(d->fd, sa, len), 0);
		assert_int_equal(getsockname(d->fd, sa, &len), 0);
		d->port = ntohs(family == AF_INET ? sin.sin_port :
		    sin6.sin6_port);
		/*
		 * c-ares retries truncated answers over TCP on the same
		 * port: hold that TCP port now, or another test may take it.
		 */
		if (family != AF_INET || fake_dns_reserve_tcp(d, &sin) == 0)
			break;
		close(d->fd);
	}
	assert_true(tries < 100);
	d->ev = event_new(base, d->fd, EV_READ | EV_PERSIST, fake_dns_cb, d);
	assert_non_null(d->ev);
	event_add(d->ev, NULL);
}

/* Make the event loop, the responder and a resolver pointed at it. */
static int
setup(void **state)
{
	struct fixture	*f;
	char		 server[64], err[256];
	const char	*servers[] = { server, NULL };

	f = calloc(1, sizeof *f);
	assert_non_null(f);
	f->base = event_base_new();
	assert_non_null(f->base);
	fake_dns_start(&f->dns, f->base, AF_INET);
	snprintf(server, sizeof server, "127.0.0.1:%d", f->dns.port);
	f->r = resolver_create(f->base, servers, err, sizeof err);
	assert_non_null(f->r);
	*state = f;
	return (0);
}

/* Free everything. */
static int
teardown(void **state)
{
	struct fixture	*f = *state;

	resolver_free(f->r);
	if (f->dns.ev != NULL)
		event_free(f->dns.ev);
	if (f->dns.fd != -1)
		close(f->dns.fd);
	if (f->dns.tfd != -1)
		close(f->dns.tfd);
	event_base_free(f->base);
	free(f);
	return (0);
}

/* Wake the loop now and then. */
static void
tick_cb(evutil_socket_t fd, short what, void *arg)
{
}

/* Run the loop until *count reaches want or ms pass. */
static void
run_until(struct event_base *base, const int *count, int want, int ms)
{
	struct event	*tick = evtimer_new(base, tick_cb, NULL);
	struct timeval	 tv = { 0, 10000 };
	uint64_t	 deadline = now_ms() + ms;

	while ((count == NULL || *count < want) && now_ms() < deadline) {
		evtimer_add(tick, &tv);
		event_base_loop(base, EVLOOP_ONCE);
	}
	event_free(tick);
}

/* Record a lookup's answer. */
static void
lookup_cb(int status, const char *errstr, const struct resolver_result *res,
    void *arg)
{
	struct answer	*a = arg;

	a->calls++;
	a->status = status;
	if (errstr != NULL)
		snprintf(a->errstr, sizeof a->errstr, "%s", errstr);
	if (res != NULL)
		a->res = *res;
	if (a->free_me != NULL)
		resolver_free(a->free_me);
}

/* Record a raw answer. */
static void
raw_cb(int status, const char *errstr, const uint8_t *msg, size_t len,
    void *arg)
{
	struct answer	*a = arg;

	a->calls++;
	a->status = status;
	if (errstr != NULL)
		snprintf(a->errstr, sizeof a->errstr, "%s", errstr);
	if (msg != NULL && len <= sizeof a->msg) {
		memcpy(a->msg, msg, len);
		a->len = len;
	}
}

/* Check one address of a result. */
static void
check_addr(const struct resolver_addr *ra, const char *text)
{
	char	buf[INET6_ADDRSTRLEN];

	assert_non_null(inet_ntop(ra->family, ra->addr, buf, sizeof buf));
	assert_string_equal(buf, text);
}

/* A and AAAA come back IPv4 first, with the smallest TTL. */
static void
test_lookup(void **state)
{
	struct fixture	*f = *state;
	struct answer	 a = { 0 };

	assert_non_null(resolver_lookup(f->r, "origin.test", lookup_cb, &a));
	assert_int_equal(a.calls, 0);
	run_until(f->base, &a.calls, 1, 2000);
	assert_int_equal(a.calls, 1);
	assert_int_equal(a.status, 0);
	assert_int_equal(a.res.n, 3);
	check_addr(&a.res.a[0], "127.0.0.1");
	check_addr(&a.res.a[1], "127.0.0.2");
	check_addr(&a.res.a[2], "::1");
	assert_int_equal(a.res.ttl, 120);
	assert_int_equal(f->dns.nqueries, 2);
}

/* A second lookup is answered from the cache, still asynchronously. */
static void
test_cache_hit(void **state)
{
	struct fixture	*f = *state;
	struct answer	 a = { 0 }, b = { 0 };

	resolver_lookup(f->r, "origin.test", lookup_cb, &a);
	run_until(f->base, &a.calls, 1, 2000);
	assert_int_equal(f->dns.nqueries, 2);
	resolver_lookup(f->r, "origin.test", lookup_cb, &b);
	assert_int_equal(b.calls, 0);
	run_until(f->base, &b.calls, 1, 2000);
	assert_int_equal(b.calls, 1);
	assert_int_equal(b.status, 0);
	assert_int_equal(b.res.n, 3);
	assert_true(b.res.ttl > 0 && b.res.ttl <= 120);
	assert_int_equal(f->dns.nqueries, 2);
}

/* After its TTL, an answer is asked for again. */
static void
test_ttl_expiry(void **state)
{
	struct fixture	*f = *state;
	struct answer	 a = { 0 }, b = { 0 }, c = { 0 };

	resolver_lookup(f->r, "short.test", lookup_cb, &a);
	run_until(f->base, &a.calls, 1, 2000);
	assert_int_equal(a.status, 0);
	assert_int_equal(a.res.n, 1);
	assert_int_equal(a.res.ttl, 1);
	resolver_lookup(f->r, "short.test", lookup_cb, &b);
	run_until(f->base, &b.calls, 1, 2000);
	assert_int_equal(f->dns.nqueries, 2);
	run_until(f->base, NULL, 0, 1100);
	resolver_lookup(f->r, "short.test", lookup_cb, &c);
	run_until(f->base, &c.calls, 1, 2000);
	assert_int_equal(c.status, 0);
	assert_int_equal(f->dns.nqueries, 4);
}

/*
 * A flush forgets the cache: the next lookup asks again, and an answer
 * asked for before the flush reaches its query but is not kept.  The
 * metrics count hits (a cached answer, or one on its way) and misses.
 */
static void
test_flush(void **state)
{
	struct fixture	*f = *state;
	struct metrics	 m;
	struct answer	 a = { 0 }, b = { 0 }, c = { 0 }, d = { 0 };

	metrics_init(&m, 0);
	resolver_set_metrics(f->r, &m);
	resolver_lookup(f->r, "origin.test", lookup_cb, &a);
	run_until(f->base, &a.calls, 1, 2000);
	resolver_flush(f->r);
	resolver_lookup(f->r, "origin.test", lookup_cb, &b);	/* asks */
	resolver_flush(f->r);
	resolver_lookup(f->r, "origin.test", lookup_cb, &c);	/* again */
	run_until(f->base, &c.calls, 1, 2000);
	run_until(f->base, &b.calls, 1, 2000);
	assert_int_equal(b.status, 0);
	assert_int_equal(c.status, 0);
	assert_int_equal(f->dns.nqueries, 6);
	resolver_lookup(f->r, "origin.test", lookup_cb, &d);	/* c's */
	run_until(f->base, &d.calls, 1, 2000);
	assert_int_equal(d.res.n, 3);
	assert_int_equal(f->dns.nqueries, 6);
	assert_int_equal(m.resolver_cache[0], 1);
	assert_int_equal(m.resolver_cache[1], 3);
	resolver_set_metrics(f->r, NULL);
}

/* Identical lookups in flight share one upstream question. */
static void
test_coalesce(void **state)
{
	struct fixture	*f = *state;
	struct answer	 a[3] = { { 0 } };
	int		 i, total = 0;

	for (i = 0; i < 3; i++)
		resolver_lookup(f->r, "origin.test", lookup_cb, &a[i]);
	run_until(f->base, &a[2].calls, 1, 2000);
	run_until(f->base, NULL, 0, 50);
	for (i = 0; i < 3; i++) {
		assert_int_equal(a[i].status, 0);
		assert_int_equal(a[i].res.n, 3);
		total += a[i].calls;
	}
	assert_int_equal(total, 3);
	assert_int_equal(f->dns.nqueries, 2);
}

/* NXDOMAIN is "no such host", and cached for a short while. */
static void
test_nxdomain(void **state)
{
	struct fixture	*f = *state;
	struct answer	 a = { 0 }, b = { 0 };

	resolver_lookup(f->r, "nosuch.test", lookup_cb, &a);
	run_until(f->base, &a.calls, 1, 2000);
	assert_int_not_equal(a.status, 0);
	assert_string_equal(a.errstr, "no such host");
	resolver_lookup(f->r, "nosuch.test", lookup_cb, &b);
	run_until(f->base, &b.calls, 1, 2000);
	assert_string_equal(b.errstr, "no such host");
	assert_int_equal(f->dns.nqueries, 2);
}

/* A name with only AAAA, and one with no address at all. */
static void
test_nodata(void **state)
{
	struct fixture	*f = *state;
	struct answer	 a = { 0 }, b = { 0 };

	resolver_lookup(f->r, "v6only.test", lookup_cb, &a);
	resolver_lookup(f->r, "txt.test", lookup_cb, &b);
	run_until(f->base, &b.calls, 1, 2000);
	run_until(f->base, &a.calls, 1, 2000);
	assert_int_equal(a.status, 0);
	assert_int_equal(a.res.n, 1);
	check_addr(&a.res.a[0], "::2");
	assert_int_equal(a.res.ttl, 60);
	assert_int_not_equal(b.status, 0);
	assert_string_equal(b.errstr, "no address");
}

/* A server that never answers times out, within the set bounds. */
static void
test_timeout(void **state)
{
	struct fixture	*f = *state;
	struct answer	 a = { 0 };
	uint64_t	 t0;

	assert_int_equal(resolver_set_timeouts(f->r, 100, 1), 0);
	f->dns.silent = 1;
	t0 = now_ms();
	resolver_lookup(f->r, "origin.test", lookup_cb, &a);
	run_until(f->base, &a.calls, 1, 3000);
	assert_int_equal(a.calls, 1);
	assert_string_equal(a.errstr, "timed out");
	assert_true(now_ms() - t0 < 1500);
	assert_int_equal(resolver_set_timeouts(f->r, 100, 1), -1);
}

/* A cancelled query is never answered, whatever stage it was at. */
static void
test_cancel(void **state)
{
	struct fixture		*f = *state;
	struct answer		 a = { 0 }, b = { 0 }, c = { 0 }, d = { 0 };
	struct resolver_query	*q;

	q = resolver_lookup(f->r, "origin.test", lookup_cb, &a);
	resolver_cancel(q);
	q = resolver_raw(f->r, "txt.test", T_TXT, raw_cb, &b);
	resolver_cancel(q);
	run_until(f->base, &f->dns.nqueries, 3, 2000);
	run_until(f->base, NULL, 0, 100);
	assert_int_equal(a.calls, 0);
	assert_int_equal(b.calls, 0);
	/* The answer nobody waited for still filled the cache. */
	q = resolver_lookup(f->r, "origin.test", lookup_cb, &c);
	resolver_cancel(q);
	q = resolver_lookup(f->r, "localhost", lookup_cb, &d);
	resolver_cancel(q);
	run_until(f->base, NULL, 0, 50);
	assert_int_equal(c.calls, 0);
	assert_int_equal(d.calls, 0);
	assert_int_equal(f->dns.nqueries, 3);
}

/* Freeing the resolver drops pending queries without calling them. */
static void
test_free_pending(void **state)
{
	struct fixture	*f = *state;
	struct answer	 a = { 0 }, b = { 0 }, c = { 0 };

	f->dns.silent = 1;
	resolver_lookup(f->r, "origin.test", lookup_cb, &a);
	resolver_lookup(f->r, "other.test", lookup_cb, &b);
	resolver_raw(f->r, "txt.test", T_TXT, raw_cb, &c);
	run_until(f->base, &f->dns.nqueries, 5, 2000);
	resolver_free(f->r);
	f->r = NULL;
	run_until(f->base, NULL, 0, 50);
	assert_int_equal(a.calls + b.calls + c.calls, 0);
}

/* A callback may free the resolver. */
static void
test_free_in_callback(void **state)
{
	struct fixture	*f = *state;
	struct answer	 a = { 0 }, b = { 0 };

	a.free_me = f->r;
	resolver_lookup(f->r, "origin.test", lookup_cb, &a);
	resolver_lookup(f->r, "other.test", lookup_cb, &b);
	f->r = NULL;
	run_until(f->base, &a.calls, 1, 2000);
	run_until(f->base, NULL, 0, 50);
	assert_int_equal(a.calls, 1);
	assert_int_equal(b.calls, 0);
}

/* /etc/hosts and address literals are answered without asking upstream. */
static void
test_local(void **state)
{
	struct fixture	*f = *state;
	struct answer	 a = { 0 }, b = { 0 }, c = { 0 };

	resolver_lookup(f->r, "localhost", lookup_cb, &a);
	resolver_lookup(f->r, "192.0.2.1", lookup_cb, &b);
	resolver_lookup(f->r, "2001:db8::1", lookup_cb, &c);
	assert_int_equal(a.calls + b.calls + c.calls, 0);
	run_until(f->base, &c.calls, 1, 2000);
	assert_int_equal(a.status, 0);
	check_addr(&a.res.a[0], "127.0.0.1");
	check_addr(&b.res.a[0], "192.0.2.1");
	check_addr(&c.res.a[0], "2001:db8::1");
	assert_int_equal(f->dns.nqueries, 0);
}

/* A raw question returns the upstream's message, NXDOMAIN included. */
static void
test_raw(void **state)
{
	struct fixture	*f = *state;
	struct answer	 a = { 0 }, b = { 0 };

	resolver_raw(f->r, "txt.test", T_TXT, raw_cb, &a);
	resolver_raw(f->r, "nosuch.test", T_A, raw_cb, &b);
	assert_int_equal(a.calls + b.calls, 0);
	run_until(f->base, &a.calls, 1, 2000);
	run_until(f->base, &b.calls, 1, 2000);
	assert_int_equal(a.status, 0);
	assert_true(a.len > 12);
	assert_int_equal(a.msg[3] & 0x0f, 0);
	assert_int_equal(a.msg[7], 1);		/* one answer */
	assert_non_null(memmem(a.msg, a.len, "\005hello", 6));
	assert_int_equal(b.status, 0);
	assert_int_equal(b.msg[3] & 0x0f, 3);	/* NXDOMAIN */
	assert_int_equal(f->dns.nqueries, 2);
}

/* Bad server lists are refused with a message. */
static void
test_bad_servers(void **state)
{
	struct fixture	*f = *state;
	const char	*bad[] = { "not an address", NULL };
	const char	*comma[] = { "127.0.0.1,127.0.0.2", NULL };
	const char	*none[] = { NULL };
	char		 err[256] = "";

	assert_null(resolver_create(f->base, bad, err, sizeof err));
	assert_true(strlen(err) > 0);
	assert_null(resolver_create(f->base, comma, err, sizeof err));
	assert_null(resolver_create(f->base, none, err, sizeof err));
	assert_string_equal(err, "no resolver address given");
	/* /etc/resolv.conf: made and freed, never asked. */
	resolver_free(resolver_create(f->base, NULL, err, sizeof err));
}

/* An IPv6 server is written [ADDR]:PORT. */
static void
test_ipv6_server(void **state)
{
	struct fixture	*f = *state;
	struct fake_dns	 d6;
	struct answer	 a = { 0 };
	char		 server[64], err[256];
	const char	*servers[] = { server, NULL };
	struct resolver	*r;

	fake_dns_start(&d6, f->base, AF_INET6);
	snprintf(server, sizeof server, "[::1]:%d", d6.port);
	r = resolver_create(f->base, servers, err, sizeof err);
	assert_non_null(r);
	resolver_lookup(r, "origin.test", lookup_cb, &a);
	run_until(f->base, &a.calls, 1, 2000);
	assert_int_equal(a.status, 0);
	assert_int_equal(a.res.n, 3);
	assert_int_equal(d6.nqueries, 2);
	assert_int_equal(f->dns.nqueries, 0);
	resolver_free(r);
	event_free(d6.ev);
	close(d6.fd);
}

/* A truncated answer is asked again over TCP. */
static void
test_tcp_fallback(void **state)
{
	struct fixture	*f = *state;
	struct answer	 a = { 0 };

	fake_dns_tcp_start(&f->dns, f->base);
	resolver_lookup(f->r, "big.test", lookup_cb, &a);
	run_until(f->base, &a.calls, 1, 3000);
	assert_int_equal(a.status, 0);
	assert_int_equal(a.res.n, 1);
	check_addr(&a.res.a[0], "127.0.0.9");
	assert_int_equal(f->dns.ntcp, 1);
	resolver_free(f->r);
	f->r = NULL;
	fake_dns_tcp_stop(&f->dns);
}

/* Nobody listening on the server's port fails fast. */
static void
test_refused(void **state)
{
	struct fixture	*f = *state;
	struct answer	 a = { 0 };
	char		 server[64], err[256];
	const char	*servers[] = { server, NULL };
	struct resolver	*r;
	uint64_t	 t0;

	event_free(f->dns.ev);
	f->dns.ev = NULL;
	close(f->dns.fd);
	f->dns.fd = -1;
	snprintf(server, sizeof server, "127.0.0.1:%d", f->dns.port);
	r = resolver_create(f->base, servers, err, sizeof err);
	assert_non_null(r);
	t0 = now_ms();
	resolver_lookup(r, "origin.test", lookup_cb, &a);
	run_until(f->base, &a.calls, 1, 5000);
	assert_int_equal(a.calls, 1);
	assert_string_equal(a.errstr, "unreachable");
	assert_true(now_ms() - t0 < 1000);
	resolver_free(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_lookup, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_hit, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_ttl_expiry, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_coalesce, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flush, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nxdomain, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nodata, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_free_pending, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_free_in_callback, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_local, setup, teardown),
		cmocka_unit_test_setup_teardown(test_raw, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_servers, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ipv6_server, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_tcp_fallback, setup,
		    teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
