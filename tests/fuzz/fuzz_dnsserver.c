/*
 * Fuzz the DNS server whole: the query goes in over a real socket on
 * 127.0.0.1 (UDP, or TCP with its length prefix) and takes the path a
 * sandbox's query takes: server.c reads it, answer.c decides (policy,
 * grants, fake addresses, PTR of fake addresses, ask mode, the relay of
 * other types to an upstream that refuses), querylog.c writes the audit
 * line.  The first byte picks the server's switches; the rest is the
 * message.  Every answer must parse and carry the query's ID.
 *
 * Corpus: tests/fuzz/dnsserver/.
 */
#include "config.h"

#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "proxy/audit/audit.h"
#include "proxy/dns/dns.h"
#include "proxy/dns/fakeip.h"
#include "proxy/escalate/escalate.h"
#include "proxy/resolver/resolver.h"
#include "proxy/wire/dnsmsg.h"
#include "rules/policy.h"
#include "rules/rules.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CHECK(x)	do { if (!(x)) abort(); } while (0)
#define F_ASK		0x01
#define F_REFUSE	0x02
#define F_REAL		0x04
#define F_TCP		0x08
#define NSERVERS	8		/* every mix of ask, refuse, real */

static const char policy[] =
    "allow *.example.org\n"
    "allow ok.test:443\n"
    "deny bad.example.org\n"
    "allow 203.0.113.0/24\n"
    "allow-private 127.0.0.0/8\n";

/* One server and the sockets it answers on. */
struct fz_server {
	struct dns_server	*srv;
	struct sockaddr_in	 udp, tcp;
};

static struct event_base	*base;
static struct policy		*policy_in_force;
static struct fz_server		 servers[NSERVERS];
static int			 client = -1;

/* A socket bound to 127.0.0.1 on a free port, listening if TCP. */
static int
fz_bound(int type, struct sockaddr_in *sin)
{
	socklen_t	len = sizeof *sin;
	int		fd;

	memset(sin, 0, sizeof *sin);
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK((fd = socket(AF_INET, type | SOCK_NONBLOCK, 0)) != -1);
	CHECK(bind(fd, (struct sockaddr *)sin, sizeof *sin) == 0);
	CHECK(getsockname(fd, (struct sockaddr *)sin, &len) == 0);
	if (type == SOCK_STREAM)
		CHECK(listen(fd, 16) == 0);
	return (fd);
}

/* Start every server once: the same policy, log and upstream. */
static void
fz_init(void)
{
	static const char	*upstream[] = { "127.0.0.1:9", NULL };
	struct dns_server_params p;
	struct resolver		*res;
	struct fakeip		*fake;
	struct audit		*audit;
	struct escalate		*esc;
	struct rules		*rules;
	struct host		 h;
	const char		*errstr;
	char			 err[256];
	int			 i;

	CHECK((base = event_base_new()) != NULL);
	CHECK((rules = rules_create()) != NULL);
	CHECK(rules_load_text(rules, "fuzz", policy, strlen(policy), err,
	    sizeof err) == 0);
	CHECK((policy_in_force = policy_create(NULL)) != NULL);
	policy_set_rules(policy_in_force, rules);
	CHECK(host_parse("granted.test", 12, &h, &errstr) == 0);
	CHECK(policy_grant(policy_in_force, NULL, &h, 443, GRANT_SESSION, 0,
	    NULL, NULL, NULL) == 0);
	CHECK((res = resolver_create(base, upstream, err, sizeof err)) != NULL);
	CHECK((fake = fakeip_create(NULL, 256, FAKEIP_GRACE, err,
	    sizeof err)) != NULL);
	CHECK((audit = audit_open("/dev/null", err, sizeof err)) != NULL);
	CHECK((esc = escalate_create(base, "fuzz", NULL)) != NULL);
	for (i = 0; i < NSERVERS; i++) {
		memset(&p, 0, sizeof p);
		p.base = base;
		p.policy = policy_in_force;
		p.resolver = res;
		p.audit = audit;
		p.esc = esc;
		p.fakeip = fake;
		p.session = "fuzz";
		p.ask = (i & F_ASK) != 0;
		p.refuse = (i & F_REFUSE) != 0;
		p.real = (i & F_REAL) != 0;
		CHECK((servers[i].srv = dns_server_create(&p, err,
		    sizeof err)) != NULL);
		CHECK(dns_server_listen_fd(servers[i].srv, fz_bound(SOCK_DGRAM,
		    &servers[i].udp), NULL, err, sizeof err) == 0);
		CHECK(dns_server_listen_fd(servers[i].srv, fz_bound(SOCK_STREAM,
		    &servers[i].tcp), NULL, err, sizeof err) == 0);
	}
	client = fz_bound(SOCK_DGRAM, &(struct sockaddr_in){ 0 });
}

/* Run the loop a little: what is ready, then what became ready. */
static void
fz_turn(void)
{
	int	i;

	for (i = 0; i < 3; i++)
		event_base_loop(base, EVLOOP_NONBLOCK);
}

/* An answer must parse and carry the ID the query had. */
static void
fz_answer(const uint8_t *q, size_t qlen, const uint8_t *a, size_t alen)
{
	struct dns_msg	 m;
	const char	*errstr;

	if (alen == 0)
		return;
	CHECK(dns_msg_parse(a, alen, &m, &errstr) == 0);
	CHECK(m.flags & DNS_F_QR);
	if (qlen >= 2)
		CHECK(a[0] == q[0] && a[1] == q[1]);
}

/* Ask over UDP; take whatever answers came back. */
static void
fz_udp(const struct fz_server *s, const uint8_t *q, size_t len)
{
	uint8_t	buf[DNS_MSG_MAX];
	ssize_t	n;

	if (sendto(client, q, len, 0, (const struct sockaddr *)&s->udp,
	    sizeof s->udp) == -1)
		return;
	fz_turn();
	while ((n = recv(client, buf, sizeof buf, 0)) > 0) {
		/* An answer of an earlier query (upstream) has its own ID. */
		if (n >= 2 && len >= 2 && (buf[0] != q[0] || buf[1] != q[1]))
			fz_answer(buf, n, buf, n);
		else
			fz_answer(q, len, buf, n);
	}
}

/* Ask over a new TCP connection; read the answer if one comes. */
static void
fz_tcp(const struct fz_server *s, const uint8_t *q, size_t len)
{
	uint8_t		buf[2 + DNS_MSG_MAX], hdr[2] = { len >> 8, len & 0xff };
	size_t		got = 0, want = 0;
	ssize_t		n;
	int		fd, i;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0)) == -1)
		return;
	if (connect(fd, (const struct sockaddr *)&s->tcp, sizeof s->tcp) ==
	    -1 && errno != EINPROGRESS)
		goto out;
	fz_turn();
	if (write(fd, hdr, 2) != 2 || write(fd, q, len) != (ssize_t)len)
		goto out;
	for (i = 0; i < 6 && (want == 0 || got < want); i++) {
		fz_turn();
		while ((n = read(fd, buf + got, sizeof buf - got)) > 0)
			got += n;
		if (n == 0)
			break;
		if (got >= 2)
			want = 2 + (buf[0] << 8 | buf[1]);
	}
	if (want != 0 && got >= want)
		fz_answer(q, len, buf + 2, want - 2);
out:
	close(fd);
	fz_turn();
}

/* One query, to the server the first byte picks. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	const struct fz_server	*s;

	if (client == -1)
		fz_init();
	if (len < 1 || len - 1 > DNS_MSG_MAX)
		return (0);
	s = &servers[data[0] & (NSERVERS - 1)];
	if (data[0] & F_TCP)
		fz_tcp(s, data + 1, len - 1);
	else
		fz_udp(s, data + 1, len - 1);
	return (0);
}
