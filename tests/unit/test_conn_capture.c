/*
 * Unit tests: connections that do not name their host in a proxy
 * request: transparent capture (a fake address, a Host header, a
 * ClientHello's name) and SOCKS5.
 */
#include "config.h"

#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "proxy/gateway.h"
#include "tests/unit/conn-fixture.h"

#define SNIFF_PORT	8888	/* a port where capture waits for bytes */

/* Say why a capture test cannot run, and skip it. */
#define skip_busy() do {						\
	print_message("port %d on 127.77/16 or 127.78/16 is taken\n",	\
	    SNIFF_PORT);						\
	skip();								\
} while (0)

/* The client has received f->want_len bytes. */
static int
got_len(struct fx *f)
{
	return (f->clen >= f->want_len);
}

/*
 * Transparent capture: the origin on 127.78.x.y:SNIFF_PORT, the listener
 * on origin.test's fake address and the same port.  Returns -1 (skip)
 * when a port is taken.
 */
static int
use_transparent(struct fx *f, struct sockaddr_in *dst)
{
	char		 oaddr[INET_ADDRSTRLEN], fake[INET_ADDRSTRLEN];
	char		 err[256];
	int		 fd;

	origin_stop(&f->o);
	snprintf(oaddr, sizeof oaddr, "127.78.%d.%d", (getpid() >> 8) & 0xff,
	    1 + getpid() % 250);
	if (origin_start(f, oaddr, SNIFF_PORT) == -1)
		return (-1);
	use_policy(f, default_policy);
	use_fakeip(f, f->fake);
	inet_ntop(AF_INET, f->fake, fake, sizeof fake);
	if ((fd = listen_on(fake, SNIFF_PORT, dst)) == -1)
		return (-1);
	assert_int_equal(gateway_listen_fd(f->gw, fd,
	    CONN_TRANSPARENT, NULL, err, sizeof err), 0);
	return (0);
}

/* A SOCKS5 listener beside the proxy's; the client connects to it. */
static void
socks_client(struct fx *f)
{
	struct sockaddr_in	sin;
	char			err[256];
	int			fd;

	assert_true((fd = listen_on("127.0.0.1", 0, &sin)) >= 0);
	assert_int_equal(gateway_listen_fd(f->gw, fd, CONN_SOCKS,
	    NULL, err, sizeof err), 0);
	client_to(f, &sin);
}

/* The greeting (no authentication) and a CONNECT, sent at once. */
static void
socks_connect(struct fx *f, uint8_t atyp, const void *addr, size_t n,
    int port)
{
	uint8_t	m[300] = { 5, 1, 0, 5, 1, 0 };

	m[6] = atyp;
	memcpy(m + 7, addr, n);
	m[7 + n] = port >> 8;
	m[8 + n] = port & 0xff;
	put(f->c, m, 9 + n);
}

/* The same to a name. */
static void
socks_connect_name(struct fx *f, const char *name, int port)
{
	uint8_t	a[256];
	size_t	n = strlen(name);

	a[0] = n;
	memcpy(a + 1, name, n);
	socks_connect(f, 3, a, n + 1, port);
}

/* The method chosen, then a reply with code rep (BND.ADDR IPv4). */
static void
expect_socks(struct fx *f, uint8_t rep)
{
	f->want_len = 12;
	expect_that(f, got_len, "a SOCKS5 reply");
	assert_memory_equal(f->cbuf, "\005\000\005", 3);
	assert_int_equal((uint8_t)f->cbuf[3], rep);
	assert_int_equal((uint8_t)f->cbuf[4], 0);
	assert_int_equal((uint8_t)f->cbuf[5], 1);
}

/* A request to a fake address no name has now: 502. */
static void
test_fake_unused(void **state)
{
	struct fx	*f = *state;
	uint8_t		 a[4];

	use_fakeip(f, a);
	client(f, connect_to(f, fake_unused(a), 443));
	expect_status(f, "HTTP/1.1 502 ");
	expect(f, "fake address not in use");
	expect_audit(f, "connect", "allow", "fake address not in use", 502);
}

/*
 * A captured connection whose Host names its host: allowed, then read
 * request by request (each one decided and logged with its method).
 */
static void
test_transparent_host(void **state)
{
	struct fx	*f = *state;
	struct sockaddr_in dst;

	if (use_transparent(f, &dst) == -1)
		skip_busy();
	f->o.mode = O_HTTP;
	client_to(f, &dst);
	say(f, "GET / HTTP/1.1\r\nHost: origin.test\r\n\r\n");
	expect_status(f, "HTTP/1.1 200 OK\r\n");
	expect(f, "\r\n\r\nok");
	assert_int_equal(f->o.requests, 1);
	expect_audit(f, "connect", "allow", NULL, -1);
	assert_int_equal(count_audit_field(f, "name_from", "host"), 2);
	assert_int_equal(count_audit_field(f, "method", "GET"), 1);
	assert_int_equal(count_audit_field(f, "path", "/"), 1);
}

/*
 * A captured plain-HTTP connection is decided request by request: on a
 * host whose rule checks methods, a refused request (a method, an
 * upgrade, a method override) is answered and the next one on the
 * connection goes through.
 */
static void
test_transparent_requests(void **state)
{
	struct fx	*f = *state;
	struct sockaddr_in dst;

	if (use_transparent(f, &dst) == -1)
		skip_busy();
	use_policy(f, "allow origin.test:%u methods GET\nallow-private 127.0.0.0/8\n");
	f->o.mode = O_HTTP;
	client_to(f, &dst);
	say(f, "DELETE /x HTTP/1.1\r\nHost: origin.test\r\n\r\n");
	expect_status(f, "HTTP/1.1 403 ");
	expect(f, "methods: DELETE is not one of GET");
	expect(f, "why it is needed\"\n");
	expect(f, "    pinhole request --status ID --wait\n");
	client_clear(f);
	say(f, "GET /ws HTTP/1.1\r\nHost: origin.test\r\n"
	    "Connection: upgrade\r\nUpgrade: websocket\r\n\r\n");
	expect_status(f, "HTTP/1.1 403 ");
	expect(f, "needs a rule that says websocket");
	client_clear(f);
	say(f, "GET / HTTP/1.1\r\nHost: origin.test\r\n"
	    "X-HTTP-Method-Override: DELETE\r\n\r\n");
	expect_status(f, "HTTP/1.1 403 ");
	expect(f, "X-HTTP-Method-Override: DELETE is not one of GET");
	client_clear(f);
	say(f, "GET / HTTP/1.1\r\nHost: origin.test\r\n\r\n");
	expect_status(f, "HTTP/1.1 200 OK\r\n");
	expect(f, "\r\n\r\nok");
	assert_int_equal(f->o.requests, 1);
	assert_int_equal(count_audit_field(f, "method", "DELETE"), 1);
	assert_int_equal(count_audit_field(f, "reason", "constraint"), 3);
}

/* A captured ClientHello naming its host: tunneled as is. */
static void
test_transparent_sni(void **state)
{
	struct fx	*f = *state;
	struct sockaddr_in dst;
	const char	*dir = getenv("top_srcdir");
	char		 path[1024], hello[4096];
	FILE		*fp;
	size_t		 n;

	if (use_transparent(f, &dst) == -1)
		skip_busy();
	snprintf(path, sizeof path, "%s/tests/unit/data/"
	    "hello-openssl-tls13.bin", dir != NULL ? dir : ".");
	assert_non_null(fp = fopen(path, "rb"));
	n = fread(hello, 1, sizeof hello, fp);
	fclose(fp);
	assert_true(n > 5);
	client_to(f, &dst);
	put(f->c, hello, n);
	f->want_len = n;
	expect_that(f, got_len, "the ClientHello echoed");
	assert_int_equal(f->clen, n);
	assert_memory_equal(f->cbuf, hello, n);
	expect_audit(f, "connect", "allow", NULL, -1);
	assert_int_equal(count_audit_field(f, "name_from", "sni"), 1);
}

/* A captured connection whose Host names another host: 403 fronting. */
static void
test_transparent_fronting(void **state)
{
	struct fx	*f = *state;
	struct sockaddr_in dst;

	if (use_transparent(f, &dst) == -1)
		skip_busy();
	client_to(f, &dst);
	say(f, "GET / HTTP/1.1\r\nHost: other.test\r\n\r\n");
	expect_status(f, "HTTP/1.1 403 ");
	expect(f, "Pinhole-Error: fronting\r\n");
	expect_eof(f);
	expect_audit(f, "connect", "deny", "fronting", -1);
	assert_int_equal(f->o.accepts, 0);
}

/* Captured to a fake address no name has, or to a real one: a reset. */
static void
test_transparent_refused(void **state)
{
	struct fx	*f = *state;
	struct sockaddr_in dst, other, real;
	char		 err[256];
	int		 fd;

	if (use_transparent(f, &dst) == -1)
		skip_busy();
	if ((fd = listen_on(fake_unused(f->fake), SNIFF_PORT, &other)) == -1)
		skip_busy();
	assert_int_equal(gateway_listen_fd(f->gw, fd,
	    CONN_TRANSPARENT, NULL, err, sizeof err), 0);
	client_to(f, &other);
	expect_eof(f);
	assert_true(f->creset);
	expect_audit(f, "connect", "deny", "unknown-fake-address", -1);
	client_close(f);

	assert_true((fd = listen_on("127.0.0.1", 0, &real)) >= 0);
	assert_int_equal(gateway_listen_fd(f->gw, fd,
	    CONN_TRANSPARENT, NULL, err, sizeof err), 0);
	client_to(f, &real);
	expect_eof(f);
	assert_true(f->creset);
	expect_audit(f, "connect", "deny", "ip-literal", -1);
}

/* SOCKS5 CONNECT allowed: the reply names our end, then a tunnel. */
static void
test_socks_tunnel(void **state)
{
	struct fx	*f = *state;

	socks_client(f);
	socks_connect_name(f, "origin.test", oport(f));
	expect_socks(f, 0);
	assert_memory_equal(f->cbuf + 6, "\177\000\000\001", 4);
	assert_true(f->cbuf[10] != 0 || f->cbuf[11] != 0);
	expect_audit(f, "connect", "allow", NULL, -1);
	put(f->c, "ping", 4);
	shutdown(f->c, SHUT_WR);
	f->want_len = 12 + 7;
	expect_that(f, got_len, "the echo through the tunnel");
	assert_memory_equal(f->cbuf + 12, "pingbye", 7);
	expect_eof(f);
	expect_audit(f, "close", NULL, "eof", -1);
	assert_int_equal(count_audit_field(f, "via", "socks"), 2);
	expect_that(f, no_conns, "connection freed");
}

/* A SOCKS5 request to a fake address is decided as its name. */
static void
test_socks_fake(void **state)
{
	struct fx	*f = *state;

	use_fakeip(f, f->fake);
	socks_client(f);
	socks_connect(f, 1, f->fake, 4, oport(f));
	expect_socks(f, 0);
	expect_audit(f, "connect", "allow", NULL, -1);
	assert_int_equal(count_audit_field(f, "host", "origin.test"), 1);
}

/* Refusals: each its reply code, closed, and its audit line. */
static void
test_socks_refused(void **state)
{
	struct fx	*f = *state;
	const uint8_t	 lo[4] = { 127, 0, 0, 1 };

	socks_client(f);
	socks_connect_name(f, "denied.test", 443);
	expect_socks(f, 2);
	expect_eof(f);
	expect_audit(f, "connect", "deny", "denied-by-policy", -1);
	assert_int_equal(count_audit_field(f, "ask",
	    "pinhole request denied.test:443"), 1);
	client_close(f);
	socks_client(f);
	socks_connect(f, 1, lo, 4, oport(f));
	expect_socks(f, 2);
	expect_eof(f);
	expect_audit(f, "connect", "deny", "ip-literal", -1);
	client_close(f);
	use_policy(f, "allow origin.test:%u\nallow private.test\n"
	    "allow gone.test\nallow-private 127.0.0.0/8\n");
	socks_client(f);
	socks_connect_name(f, "private.test", 443);
	expect_socks(f, 2);
	expect_eof(f);
	expect_audit(f, "connect", "deny", "private-address", -1);
	client_close(f);
	socks_client(f);
	socks_connect_name(f, "gone.test", 443);
	expect_socks(f, 4);
	expect_eof(f);
	expect_audit(f, "connect", "allow", "resolve-failed", -1);
	assert_int_equal(f->o.accepts, 0);
}

/* A SOCKS5 handshake cut short is closed at the handshake timeout. */
static void
test_socks_handshake(void **state)
{
	struct fx	*f = *state;

	socks_client(f);
	put(f->c, "\005\001", 2);
	expect_eof(f);
	assert_int_equal(f->clen, 0);
	expect_that(f, no_conns, "connection freed");
	client_close(f);
	socks_client(f);
	put(f->c, "\004\001", 2);
	f->want_len = 2;
	expect_that(f, got_len, "no acceptable method");
	assert_memory_equal(f->cbuf, "\005\377", 2);
	expect_eof(f);
	expect_audit(f, "connect", "deny", "not a SOCKS5 greeting", -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		CONN_TEST(test_fake_unused),
		CONN_TEST(test_transparent_host),
		CONN_TEST(test_transparent_requests),
		CONN_TEST(test_transparent_sni),
		CONN_TEST(test_transparent_fronting),
		CONN_TEST(test_transparent_refused),
		CONN_TEST(test_socks_tunnel),
		CONN_TEST(test_socks_fake),
		CONN_TEST(test_socks_refused),
		CONN_TEST(test_socks_handshake),
	};

	return (cmocka_run_group_tests(tests, conn_group_setup, NULL));
}
