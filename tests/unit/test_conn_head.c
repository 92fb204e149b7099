/*
 * Unit tests: a client connection's head, before any host is asked for
 * (S_HEAD, S_REPLY): malformed, unsupported or too large heads, a host
 * that is no host, the info page, and the handshake timeout.
 */
#include "config.h"

#include <sys/socket.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "proxy/gateway.h"
#include "tests/unit/conn-fixture.h"

/* The socket idle got EOF. */
static int
idle_closed(struct fx *f)
{
	char	b;

	return (recv(f->idle, &b, 1, MSG_DONTWAIT | MSG_PEEK) == 0);
}

/* A raw client to the proxy, sending text. */
static int
raw_client(struct fx *f, const char *text)
{
	int	fd;

	assert_true((fd = socket(AF_INET, SOCK_STREAM, 0)) >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&f->gwsin,
	    sizeof f->gwsin), 0);
	if (text[0] != '\0')
		put(fd, text, strlen(text));
	return (fd);
}

/* A raw client is closed without a byte of answer. */
static void
expect_quiet_close(struct fx *f, int fd)
{
	f->idle = fd;
	expect_that(f, idle_closed, "closed without an answer");
	close(fd);
	f->idle = -1;
}

/* A malformed head: 400, closed (S_HEAD, S_REPLY). */
static void
test_malformed(void **state)
{
	struct fx	*f = *state;

	client(f, "BLAH\r\n\r\n");
	expect_status(f, "HTTP/1.1 400 ");
	expect(f, "Connection: close\r\n");
	expect_eof(f);
	expect_audit(f, "request", "deny", "malformed request", 400);
}

/* An unknown transfer coding: 501. */
static void
test_unsupported(void **state)
{
	struct fx	*f = *state;

	client(f, "POST http://origin.test/ HTTP/1.1\r\nHost: origin.test\r\n"
	    "Transfer-Encoding: gzip\r\n\r\n");
	expect_status(f, "HTTP/1.1 501 ");
	expect_eof(f);
	/* Audited "allow" today, as every refusal of 500 and up. */
	expect_audit(f, "request", "*", "not supported by this proxy", 501);
}

/* A head past max_head: 431. */
static void
test_head_too_large(void **state)
{
	struct fx	*f = *state;
	char		 big[5000];

	memset(big, 'a', sizeof big);
	memcpy(big, "GET http://origin.test/ HTTP/1.1\r\nX: ", 37);
	big[sizeof big - 1] = '\0';
	client(f, big);
	expect_status(f, "HTTP/1.1 431 ");
	expect_eof(f);
	expect_audit(f, "request", "deny", "request head too large", 431);
}

/* A host that is no host: 400. */
static void
test_bad_host(void **state)
{
	struct fx	*f = *state;

	client(f, connect_to(f, "bad_name!", 443));
	expect_status(f, "HTTP/1.1 400 ");
	expect_eof(f);
	expect_audit(f, "connect", "deny", "*", 400);
}

/* The info page, twice on one connection (S_REPLY back to S_HEAD). */
static void
test_info_page(void **state)
{
	struct fx	*f = *state;

	client(f, "GET / HTTP/1.1\r\nHost: proxy\r\n\r\n");
	expect_status(f, "HTTP/1.1 200 ");
	expect(f, "This is pinhole");
	expect(f, "Connection: keep-alive\r\n");
	client_clear(f);
	say(f, "GET / HTTP/1.1\r\nHost: proxy\r\n\r\n");
	expect_status(f, "HTTP/1.1 200 ");
	expect(f, "(default: nothing)");
	assert_int_equal(count_audit(f, "request", NULL, "info-page", 200), 2);
	assert_false(f->ceof);
}

/*
 * The handshake timeout: nothing sent is closed quietly, half a head
 * gets 408, half an agent request body is closed quietly (S_AGENT).
 */
static void
test_handshake_timeout(void **state)
{
	struct fx	*f = *state;
	int		 idle, agent;

	use_escalate(f, 0);
	idle = raw_client(f, "");
	agent = raw_client(f, "POST /pinhole/request HTTP/1.1\r\nHost: p\r\n"
	    "Content-Length: 10\r\n\r\nhost=");
	client(f, "GET http://origin.test/ HTTP/1.1\r\n");
	expect_status(f, "HTTP/1.1 408 ");
	expect_eof(f);
	expect_audit(f, "request", "deny", "request head not received in time",
	    408);
	expect_quiet_close(f, idle);
	expect_quiet_close(f, agent);
	assert_int_equal(count_audit(f, "*", "*", "*", -1), 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		CONN_TEST(test_malformed),
		CONN_TEST(test_unsupported),
		CONN_TEST(test_head_too_large),
		CONN_TEST(test_bad_host),
		CONN_TEST(test_info_page),
		CONN_TEST(test_handshake_timeout),
	};

	return (cmocka_run_group_tests(tests, conn_group_setup, NULL));
}
