/*
 * Unit tests: the DNS server on a real event loop and loopback sockets
 * given as descriptors, for what `pinhole proxy` cannot switch on from
 * its command line: grants, ask mode, REFUSED mode.
 */
#include "config.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

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
#include <event2/event.h>

#include "proxy/audit/audit.h"
#include "proxy/dns/dns.h"
#include "proxy/dns/fakeip.h"
#include "proxy/resolver/resolver.h"
#include "proxy/wire/dnsmsg.h"
#include "lib/clock.h"
#include "rules/policy.h"
#include "rules/rules.h"

static const char policy[] =
    "allow allowed.test\n"
    "deny denied.test\n";

struct fixture {
	struct event_base	*base;
	struct policy		*policy;
	struct grants		*grants;	/* the policy's */
	struct resolver		*resolver;
	struct fakeip		*fakeip;
	struct dns_server	*srv;
	int			 udp;		/* the server's socket */
	int			 tcp;
	struct sockaddr_in	 sin;		/* its address */
	struct sockaddr_in	 tsin;
	int			 client;
};

/* A loopback socket of a type, bound to a free port. */
static int
bound_socket(int type, struct sockaddr_in *sin)
{
	socklen_t	len = sizeof *sin;
	int		fd;

	memset(sin, 0, sizeof *sin);
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true((fd = socket(AF_INET, type, 0)) >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)sin, sizeof *sin), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)sin, &len), 0);
	if (type == SOCK_STREAM)
		assert_int_equal(listen(fd, 4), 0);
	return (fd);
}

/* Start a server with the given switches. */
static struct fixture *
start(int ask, int refuse)
{
	struct fixture			*f;
	struct dns_server_params	 p;
	const char			*servers[] = { "127.0.0.1:9", NULL };
	char				 err[256];
	struct timeval			 tv = { 2, 0 };
	struct rules			*r;

	assert_non_null(f = calloc(1, sizeof *f));
	assert_non_null(f->base = event_base_new());
	assert_non_null(r = rules_create());
	assert_int_equal(rules_load_text(r, "test", policy,
	    strlen(policy), err, sizeof err), 0);
	assert_non_null(f->policy = policy_create(mono_ms));
	policy_set_rules(f->policy, r);
	f->grants = policy_grants(f->policy);
	assert_non_null(f->resolver = resolver_create(f->base, servers, err,
	    sizeof err));
	assert_non_null(f->fakeip = fakeip_create(NULL, 0, FAKEIP_GRACE, err,
	    sizeof err));
	memset(&p, 0, sizeof p);
	p.base = f->base;
	p.policy = f->policy;
	p.resolver = f->resolver;
	p.fakeip = f->fakeip;
	p.ask = ask;
	p.refuse = refuse;
	assert_non_null(f->srv = dns_server_create(&p, err, sizeof err));
	f->udp = bound_socket(SOCK_DGRAM, &f->sin);
	f->tcp = bound_socket(SOCK_STREAM, &f->tsin);
	assert_int_equal(dns_server_listen_fd(f->srv, f->udp, NULL, err,
	    sizeof err), 0);
	assert_int_equal(dns_server_listen_fd(f->srv, f->tcp, NULL, err,
	    sizeof err), 0);
	assert_true((f->client = socket(AF_INET, SOCK_DGRAM, 0)) >= 0);
	setsockopt(f->client, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	return (f);
}

/* Stop it all. */
static void
stop(struct fixture *f)
{
	close(f->client);
	dns_server_free(f->srv);
	fakeip_free(f->fakeip);
	resolver_free(f->resolver);
	policy_free(f->policy);
	event_base_free(f->base);
	free(f);
}

/* A query for name and type, as a client sends it. */
static size_t
make_query(const char *name, uint16_t type, uint8_t *buf)
{
	size_t	n;
	int	len;

	memcpy(buf, "\x51\x52\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00", 12);
	assert_true((len = dns_name_wire(name, buf + 12)) > 0);
	n = 12 + (size_t)len;
	buf[n++] = type >> 8;
	buf[n++] = type & 0xff;
	buf[n++] = 0;
	buf[n++] = 1;
	return (n);
}

/* Send a query over UDP, run the loop, parse the reply. */
static void
ask_udp(struct fixture *f, const char *name, uint16_t type, uint8_t *buf,
    struct dns_msg *m)
{
	const char	*errstr;
	size_t		 n = make_query(name, type, buf);
	ssize_t		 got = -1;
	int		 i;

	assert_int_equal(sendto(f->client, buf, n, 0,
	    (struct sockaddr *)&f->sin, sizeof f->sin), (ssize_t)n);
	for (i = 0; i < 100 && got == -1; i++) {
		event_base_loop(f->base, EVLOOP_NONBLOCK);
		got = recv(f->client, buf, 4096, MSG_DONTWAIT);
		if (got == -1)
			usleep(10000);
	}
	assert_true(got > 0);
	assert_int_equal(dns_msg_parse(buf, (size_t)got, m, &errstr), 0);
	assert_int_equal(m->id, 0x5152);
}

/* The first answer's rdata. */
static const uint8_t *
rdata(const uint8_t *buf, const struct dns_msg *m)
{
	assert_true(m->nans > 0);
	return (buf + m->ans[0].rdoff);
}

/* Allowed: a fake address; denied: NXDOMAIN; PTR: the name back. */
static void
test_basic(void **state)
{
	struct fixture	*f = start(0, 0);
	struct dns_msg	 m;
	uint8_t		 buf[4096], a[4];
	char		 rev[64];

	ask_udp(f, "allowed.test", DNS_T_A, buf, &m);
	assert_int_equal(DNS_RCODE(m.flags), DNS_R_NOERROR);
	assert_int_equal(m.ancount, 1);
	memcpy(a, rdata(buf, &m), 4);
	assert_int_equal(a[0], 198);
	ask_udp(f, "denied.test", DNS_T_A, buf, &m);
	assert_int_equal(DNS_RCODE(m.flags), DNS_R_NXDOMAIN);
	ask_udp(f, "other.test", DNS_T_AAAA, buf, &m);
	assert_int_equal(DNS_RCODE(m.flags), DNS_R_NXDOMAIN);
	snprintf(rev, sizeof rev, "%u.%u.%u.%u.in-addr.arpa", a[3], a[2],
	    a[1], a[0]);
	ask_udp(f, rev, DNS_T_PTR, buf, &m);
	assert_int_equal(m.ancount, 1);
	assert_memory_equal(rdata(buf, &m), "\x07" "allowed" "\x04" "test",
	    13);
	stop(f);
}

/* A live grant makes a name resolve; a deny rule still wins over one. */
static void
test_grants(void **state)
{
	struct fixture	*f = start(0, 0);
	struct dns_msg	 m;
	struct host	 h;
	const char	*errstr;
	uint8_t		 buf[4096];
	struct timespec	 ts;
	uint64_t	 now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	ask_udp(f, "granted.test", DNS_T_A, buf, &m);
	assert_int_equal(DNS_RCODE(m.flags), DNS_R_NXDOMAIN);
	assert_int_equal(host_parse("granted.test", 12, &h, &errstr), 0);
	assert_int_equal(grants_add(f->grants, &h, 443, GRANT_SESSION, 0,
	    NULL, NULL, NULL, now, NULL), 0);
	assert_int_equal(host_parse("denied.test", 11, &h, &errstr), 0);
	assert_int_equal(grants_add(f->grants, &h, 443, GRANT_SESSION, 0,
	    NULL, NULL, NULL, now, NULL), 0);
	ask_udp(f, "granted.test", DNS_T_A, buf, &m);
	assert_int_equal(DNS_RCODE(m.flags), DNS_R_NOERROR);
	assert_int_equal(m.ancount, 1);
	ask_udp(f, "denied.test", DNS_T_A, buf, &m);
	assert_int_equal(DNS_RCODE(m.flags), DNS_R_NXDOMAIN);
	stop(f);
}

/* Ask mode: a denied name gets a fake address, but nothing upstream. */
static void
test_ask(void **state)
{
	struct fixture	*f = start(1, 0);
	struct dns_msg	 m;
	uint8_t		 buf[4096];

	ask_udp(f, "held.test", DNS_T_A, buf, &m);
	assert_int_equal(DNS_RCODE(m.flags), DNS_R_NOERROR);
	assert_int_equal(m.ancount, 1);
	assert_int_equal(rdata(buf, &m)[0], 198);
	assert_string_equal(fakeip_lookup_name(f->fakeip, rdata(buf, &m), 4, ""),
	    "held.test");
	ask_udp(f, "held.test", DNS_T_AAAA, buf, &m);
	assert_int_equal(DNS_RCODE(m.flags), DNS_R_NOERROR);
	assert_int_equal(m.ancount, 0);
	ask_udp(f, "held.test", DNS_T_MX, buf, &m);
	assert_int_equal(DNS_RCODE(m.flags), DNS_R_NXDOMAIN);
	stop(f);
}

/* REFUSED mode, and a TCP query on a descriptor given to the server. */
static void
test_refuse_tcp(void **state)
{
	struct fixture	*f = start(0, 1);
	struct dns_msg	 m;
	const char	*errstr;
	uint8_t		 buf[4096], pfx[2];
	size_t		 n;
	ssize_t		 got = 0;
	int		 s, i;

	ask_udp(f, "denied.test", DNS_T_A, buf, &m);
	assert_int_equal(DNS_RCODE(m.flags), DNS_R_REFUSED);
	assert_true((s = socket(AF_INET, SOCK_STREAM, 0)) >= 0);
	assert_int_equal(connect(s, (struct sockaddr *)&f->tsin,
	    sizeof f->tsin), 0);
	n = make_query("allowed.test", DNS_T_A, buf + 2);
	buf[0] = n >> 8;
	buf[1] = n & 0xff;
	assert_int_equal(send(s, buf, n + 2, 0), (ssize_t)(n + 2));
	for (i = 0; i < 100 && got < 2; i++) {
		event_base_loop(f->base, EVLOOP_NONBLOCK);
		got = recv(s, pfx, 2, MSG_DONTWAIT | MSG_PEEK);
		if (got < 2)
			usleep(10000);
	}
	assert_int_equal(recv(s, pfx, 2, MSG_WAITALL), 2);
	n = (size_t)pfx[0] << 8 | pfx[1];
	assert_int_equal(recv(s, buf, n, MSG_WAITALL), (ssize_t)n);
	assert_int_equal(dns_msg_parse(buf, n, &m, &errstr), 0);
	assert_int_equal(m.ancount, 1);
	close(s);
	stop(f);
}

#define BATCH	40	/* queries sent at once: more than one recvmmsg */

/* Read one reply on fd, running the loop until it comes. */
static ssize_t
read_reply(struct fixture *f, int fd, uint8_t *buf, size_t size)
{
	ssize_t	got = -1;
	int	i;

	for (i = 0; i < 100 && got == -1; i++) {
		event_base_loop(f->base, EVLOOP_NONBLOCK);
		got = recv(fd, buf, size, MSG_DONTWAIT);
		if (got == -1)
			usleep(10000);
	}
	return (got);
}

/*
 * Queries that arrive together are answered in batches, the replies sent
 * together: each reaches the socket it came from, with its own ID and its
 * own answer, byte for byte the answer to the same query asked alone.
 */
static void
test_batch(void **state)
{
	struct fixture	*f = start(0, 0);
	struct dns_msg	 m;
	const char	*errstr;
	uint8_t		 buf[4096], alone[2][512], q[512];
	size_t		 alen[2], n;
	ssize_t		 got;
	int		 fds[2], i, id, seen[BATCH];
	const char	*names[2] = { "allowed.test", "denied.test" };

	for (i = 0; i < 2; i++) {
		ask_udp(f, names[i], DNS_T_A, buf, &m);
		alen[i] = m.end;
		memcpy(alone[i], buf, alen[i]);
	}
	fds[0] = f->client;
	assert_true((fds[1] = socket(AF_INET, SOCK_DGRAM, 0)) >= 0);
	for (i = 0; i < BATCH; i++) {
		n = make_query(names[i % 2], DNS_T_A, q);
		q[0] = i >> 8;
		q[1] = i & 0xff;
		assert_int_equal(sendto(fds[i % 2], q, n, 0,
		    (struct sockaddr *)&f->sin, sizeof f->sin), (ssize_t)n);
	}
	memset(seen, 0, sizeof seen);
	for (i = 0; i < BATCH; i++) {
		got = read_reply(f, fds[i % 2], buf, sizeof buf);
		assert_true(got > 0);
		assert_int_equal(dns_msg_parse(buf, (size_t)got, &m, &errstr),
		    0);
		id = m.id;
		assert_true(id < BATCH && id % 2 == i % 2 && !seen[id]);
		seen[id] = 1;
		assert_int_equal((size_t)got, alen[id % 2]);
		assert_memory_equal(buf + 2, alone[id % 2] + 2,
		    alen[id % 2] - 2);
	}
	close(fds[1]);
	stop(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic),
		cmocka_unit_test(test_grants),
		cmocka_unit_test(test_ask),
		cmocka_unit_test(test_refuse_tcp),
		cmocka_unit_test(test_batch),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
