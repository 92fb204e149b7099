/*
 * Unit tests for the SOCKS5 parsers and reply builder
 * (proxy/wire/socks5.c): the method chosen from a greeting, RFC 1929
 * credentials, requests of each address type and command, every
 * prefix asking for more, and the replies' bytes.
 */
#include "config.h"

#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "proxy/wire/socks5.h"

/* A request: VER CMD RSV ATYP, then addr of n bytes, then the port. */
static size_t
request(uint8_t *out, uint8_t cmd, uint8_t atyp, const void *addr,
    size_t n, uint16_t port)
{
	out[0] = SOCKS_VERSION;
	out[1] = cmd;
	out[2] = 0;
	out[3] = atyp;
	memcpy(out + 4, addr, n);
	out[4 + n] = port >> 8;
	out[5 + n] = port & 0xff;
	return (6 + n);
}

/* Parse a request, checking that every shorter prefix asks for more. */
static enum socks_status
request_all(const uint8_t *p, size_t len, struct socks_request *r)
{
	size_t	i;

	for (i = 0; i < len; i++)
		assert_int_equal(socks_request_parse(p, i, r),
		    SOCKS_NEED_MORE);
	return (socks_request_parse(p, len, r));
}

/* Greetings: the method chosen, or none acceptable, or malformed. */
static void
test_greeting(void **state)
{
	struct socks_greeting	g;
	const uint8_t		none[] = { 5, 1, 0 };
	const uint8_t		both[] = { 5, 3, 0, 1, 2 };
	const uint8_t		gss[] = { 5, 1, 1 };
	const uint8_t		zero[] = { 5, 0 };
	const uint8_t		v4[] = { 4, 1, 0, 80, 127, 0, 0, 1, 0 };

	assert_int_equal(socks_greeting_parse(none, 0, &g), SOCKS_NEED_MORE);
	assert_int_equal(socks_greeting_parse(none, 2, &g), SOCKS_NEED_MORE);
	assert_int_equal(socks_greeting_parse(none, 3, &g), SOCKS_OK);
	assert_int_equal(g.len, 3);
	assert_int_equal(g.method, SOCKS_METHOD_NONE);
	assert_int_equal(socks_greeting_parse(both, 4, &g), SOCKS_NEED_MORE);
	assert_int_equal(socks_greeting_parse(both, 5, &g), SOCKS_OK);
	assert_int_equal(g.method, SOCKS_METHOD_USERPASS);
	assert_int_equal(g.len, 5);
	assert_int_equal(socks_greeting_parse(gss, 3, &g), SOCKS_ERROR);
	assert_int_equal(g.method, SOCKS_METHOD_REFUSED);
	assert_non_null(g.error);
	assert_int_equal(socks_greeting_parse(zero, 2, &g), SOCKS_ERROR);
	assert_int_equal(socks_greeting_parse(v4, 1, &g), SOCKS_ERROR);
	assert_int_equal(socks_greeting_parse((const uint8_t *)"GET /", 5,
	    &g), SOCKS_ERROR);
}

/* RFC 1929: any non-empty username and password, strictly framed. */
static void
test_auth(void **state)
{
	struct socks_auth	a;
	uint8_t			p[600];
	size_t			i;

	memcpy(p, "\001\004user\004pass", 11);
	for (i = 0; i < 11; i++)
		assert_int_equal(socks_auth_parse(p, i, &a), SOCKS_NEED_MORE);
	assert_int_equal(socks_auth_parse(p, 11, &a), SOCKS_OK);
	assert_int_equal(a.len, 11);
	assert_int_equal(socks_auth_parse(p, 20, &a), SOCKS_OK);
	assert_int_equal(a.len, 11);
	p[0] = 5;
	assert_int_equal(socks_auth_parse(p, 11, &a), SOCKS_ERROR);
	assert_non_null(a.error);
	memcpy(p, "\001\000", 2);
	assert_int_equal(socks_auth_parse(p, 2, &a), SOCKS_ERROR);
	memcpy(p, "\001\004user\000", 7);
	assert_int_equal(socks_auth_parse(p, 7, &a), SOCKS_ERROR);
	p[0] = 1;
	p[1] = 255;
	memset(p + 2, 'u', 255);
	p[257] = 255;
	memset(p + 258, 'p', 255);
	assert_int_equal(socks_auth_parse(p, 512, &a), SOCKS_NEED_MORE);
	assert_int_equal(socks_auth_parse(p, 513, &a), SOCKS_OK);
	assert_int_equal(a.len, SOCKS_MSG_MAX);
}

/* CONNECT to a name, an IPv4 and an IPv6 address. */
static void
test_connect(void **state)
{
	struct socks_request	r;
	uint8_t			p[300], v4[4] = { 192, 0, 2, 7 }, v6[16];
	size_t			n;

	n = request(p, SOCKS_CMD_CONNECT, SOCKS_ATYP_NAME,
	    "\013Example.COM", 12, 443);
	assert_int_equal(request_all(p, n, &r), SOCKS_OK);
	assert_int_equal(r.len, n);
	assert_int_equal(r.host.kind, HOST_NAME);
	assert_string_equal(r.host.text, "example.com");
	assert_int_equal(r.port, 443);
	n = request(p, SOCKS_CMD_CONNECT, SOCKS_ATYP_IPV4, v4, 4, 8080);
	assert_int_equal(request_all(p, n, &r), SOCKS_OK);
	assert_int_equal(r.host.kind, HOST_IPV4);
	assert_string_equal(r.host.text, "192.0.2.7");
	assert_int_equal(r.port, 8080);
	inet_pton(AF_INET6, "2001:db8::1", v6);
	n = request(p, SOCKS_CMD_CONNECT, SOCKS_ATYP_IPV6, v6, 16, 80);
	assert_int_equal(request_all(p, n, &r), SOCKS_OK);
	assert_int_equal(r.host.kind, HOST_IPV6);
	assert_int_equal(memcmp(r.host.addr, v6, 16), 0);
	/* A name that is an address literal is that address. */
	n = request(p, SOCKS_CMD_CONNECT, SOCKS_ATYP_NAME, "\01010.0.0.1",
	    9, 22);
	assert_int_equal(request_all(p, n, &r), SOCKS_OK);
	assert_int_equal(r.host.kind, HOST_IPV4);
	/* Bytes after the request are the tunnel's. */
	memcpy(p + n, "SSH-2.0", 7);
	assert_int_equal(socks_request_parse(p, n + 7, &r), SOCKS_OK);
	assert_int_equal(r.len, n);
}

/* BIND, UDP ASSOCIATE, unknown address types, malformed requests. */
static void
test_refused(void **state)
{
	struct socks_request	r;
	uint8_t			p[300], v4[4] = { 0 };
	size_t			n;

	n = request(p, SOCKS_CMD_BIND, SOCKS_ATYP_IPV4, v4, 4, 0);
	assert_int_equal(request_all(p, n, &r), SOCKS_ERROR);
	assert_int_equal(r.reply, SOCKS_REP_COMMAND);
	n = request(p, SOCKS_CMD_UDP, SOCKS_ATYP_IPV4, v4, 4, 0);
	assert_int_equal(request_all(p, n, &r), SOCKS_ERROR);
	assert_int_equal(r.reply, SOCKS_REP_COMMAND);
	n = request(p, 9, SOCKS_ATYP_NAME, "\001a", 2, 80);
	assert_int_equal(request_all(p, n, &r), SOCKS_ERROR);
	assert_int_equal(r.reply, SOCKS_REP_COMMAND);
	n = request(p, SOCKS_CMD_CONNECT, 2, v4, 4, 80);
	assert_int_equal(socks_request_parse(p, 4, &r), SOCKS_ERROR);
	assert_int_equal(r.reply, SOCKS_REP_ATYP);
	n = request(p, SOCKS_CMD_CONNECT, SOCKS_ATYP_IPV4, v4, 4, 0);
	assert_int_equal(request_all(p, n, &r), SOCKS_ERROR);
	assert_int_equal(r.reply, SOCKS_REP_FAILURE);
	n = request(p, SOCKS_CMD_CONNECT, SOCKS_ATYP_NAME, "\000", 1, 80);
	assert_int_equal(socks_request_parse(p, n, &r), SOCKS_ERROR);
	assert_int_equal(r.reply, SOCKS_REP_FAILURE);
	n = request(p, SOCKS_CMD_CONNECT, SOCKS_ATYP_NAME, "\003a b", 4, 80);
	assert_int_equal(socks_request_parse(p, n, &r), SOCKS_ERROR);
	assert_int_equal(r.reply, SOCKS_REP_FAILURE);
	assert_non_null(r.error);
	n = request(p, SOCKS_CMD_CONNECT, SOCKS_ATYP_IPV4, v4, 4, 80);
	p[2] = 1;
	assert_int_equal(socks_request_parse(p, n, &r), SOCKS_ERROR);
	p[2] = 0;
	p[0] = 4;
	assert_int_equal(socks_request_parse(p, n, &r), SOCKS_ERROR);
}

/* Replies carry the bound address, or zeros. */
static void
test_reply(void **state)
{
	struct sockaddr_in	in;
	struct sockaddr_in6	in6;
	uint8_t			buf[SOCKS_REPLY_MAX];
	const uint8_t		ok4[] = { 5, 0, 0, 1, 127, 0, 0, 1, 0x1f, 0x90 };
	const uint8_t		fail[] = { 5, 2, 0, 1, 0, 0, 0, 0, 0, 0 };

	memset(&in, 0, sizeof in);
	in.sin_family = AF_INET;
	in.sin_port = htons(8080);
	inet_pton(AF_INET, "127.0.0.1", &in.sin_addr);
	assert_int_equal(socks_reply_build(SOCKS_REP_OK,
	    (struct sockaddr *)&in, buf), sizeof ok4);
	assert_memory_equal(buf, ok4, sizeof ok4);
	assert_int_equal(socks_reply_build(SOCKS_REP_NOT_ALLOWED, NULL, buf),
	    sizeof fail);
	assert_memory_equal(buf, fail, sizeof fail);
	memset(&in6, 0, sizeof in6);
	in6.sin6_family = AF_INET6;
	in6.sin6_port = htons(443);
	inet_pton(AF_INET6, "::1", &in6.sin6_addr);
	assert_int_equal(socks_reply_build(SOCKS_REP_OK,
	    (struct sockaddr *)&in6, buf), 22);
	assert_int_equal(buf[3], SOCKS_ATYP_IPV6);
	assert_int_equal(buf[19], 1);
	assert_int_equal(buf[20], 443 >> 8);
	assert_int_equal(buf[21], 443 & 0xff);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_greeting),
		cmocka_unit_test(test_auth),
		cmocka_unit_test(test_connect),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_reply),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
