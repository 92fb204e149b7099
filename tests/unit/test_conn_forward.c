/*
 * Unit tests: forwarded HTTP (S_FORWARD): kept-alive requests and their
 * idle timeout, bodies, what an origin answers that cannot be relayed,
 * upgrades and WebSockets, method overrides on a host whose rule checks
 * requests, and the length sent upstream.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "proxy/gateway.h"
#include "tests/unit/conn-fixture.h"

/* Milliseconds on the monotonic clock. */
static int64_t
mono_now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

/* An absolute-form GET to origin.test asking to upgrade to proto. */
static const char *
upgrade_to(struct fx *f, const char *path, const char *proto)
{
	static char	req[512];

	snprintf(req, sizeof req, "GET http://origin.test:%d%s HTTP/1.1\r\n"
	    "Host: origin.test\r\nConnection: upgrade\r\nUpgrade: %s\r\n"
	    "\r\n", oport(f), path, proto);
	return (req);
}

/* An absolute-form GET of origin.test's /x with these header lines. */
static const char *
get_x(struct fx *f, const char *headers)
{
	static char	req[512];

	snprintf(req, sizeof req, "GET http://origin.test:%d/x HTTP/1.1\r\n"
	    "Host: origin.test\r\n%s\r\n", oport(f), headers);
	return (req);
}

/* Has the origin read the request's body? */
static int
origin_got_body(struct fx *f)
{
	return (memmem(f->o.in, f->o.inlen, "\r\n\r\nhi", 6) != NULL);
}

/* Forwarding: two requests on one connection and one server, chunked. */
static void
test_forward_keepalive(void **state)
{
	struct fx	*f = *state;
	char		 req[512];

	f->o.mode = O_HTTP;
	snprintf(req, sizeof req, "GET http://origin.test:%d/a HTTP/1.1\r\n"
	    "Host: origin.test:%d\r\n\r\n", oport(f), oport(f));
	client(f, req);
	expect_status(f, "HTTP/1.1 200 OK\r\n");
	expect(f, "\r\n\r\nok");
	assert_null(strstr(f->cbuf, "Connection: close"));
	client_clear(f);
	snprintf(req, sizeof req, "POST http://origin.test:%d/b HTTP/1.1\r\n"
	    "Host: origin.test:%d\r\nTransfer-Encoding: chunked\r\n\r\n"
	    "3\r\nabc\r\n0\r\n\r\n", oport(f), oport(f));
	put(f->c, req, strlen(req));
	expect(f, "5\r\nhello\r\n0\r\n\r\n");
	assert_int_equal(f->o.accepts, 1);
	assert_int_equal(f->o.requests, 2);
	assert_int_equal(count_audit(f, "request", "allow", NULL, 200), 2);
	assert_false(f->ceof);
}

/*
 * A kept-alive connection waits the whole idle timeout (1 s here) after
 * its last answer, though its timer was armed by an earlier request.
 */
static void
test_forward_keepalive_idle(void **state)
{
	struct fx	*f = *state;
	char		 req[512];
	int64_t		 answered;

	f->o.mode = O_HTTP;
	snprintf(req, sizeof req, "GET http://origin.test:%d/a HTTP/1.1\r\n"
	    "Host: origin.test:%d\r\n\r\n", oport(f), oport(f));
	client(f, req);
	expect(f, "\r\n\r\nok");
	run_until(f, never, 600);
	assert_false(f->ceof);
	client_clear(f);
	put(f->c, req, strlen(req));
	expect(f, "\r\n\r\nok");
	answered = mono_now_ms();
	expect_eof(f);
	if (mono_now_ms() - answered < 900)
		fail_msg("closed %lld ms after the last answer",
		    (long long)(mono_now_ms() - answered));
	assert_int_equal(f->o.requests, 2);
}

/* A broken chunked request body: 400. */
static void
test_forward_broken_chunked(void **state)
{
	struct fx	*f = *state;
	char		 req[512];

	f->o.mode = O_HTTP;
	snprintf(req, sizeof req, "POST http://origin.test:%d/ HTTP/1.1\r\n"
	    "Host: origin.test\r\nTransfer-Encoding: chunked\r\n\r\n"
	    "zz\r\n", oport(f));
	client(f, req);
	expect_status(f, "HTTP/1.1 400 ");
	expect_eof(f);
	expect_audit(f, "request", "deny", "broken chunked body", 400);
}

/* The origin answers what cannot be relayed: 502 each time. */
static void
test_forward_bad_upstream(void **state)
{
	static const struct {
		enum origin_mode	 mode;
		const char		*why;
	} cases[] = {
		{ O_BAD, "malformed response from upstream" },
		{ O_SHUT, "upstream closed the connection without answering" },
		{ O_UPGRADE, "unexpected upgrade from upstream" }
	};
	struct fx	*f = *state;
	char		 req[512];
	size_t		 i;

	snprintf(req, sizeof req, "GET http://origin.test:%d/ HTTP/1.1\r\n"
	    "Host: origin.test\r\n\r\n", oport(f));
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		f->o.mode = cases[i].mode;
		client(f, req);
		expect_refusal(f, 502, "bad-gateway", "request", "allow",
		    cases[i].why);
		expect(f, cases[i].why);
		client_close(f);
	}
}

/* An upgrade asked for and given: the exchange becomes a tunnel. */
static void
test_forward_upgrade(void **state)
{
	struct fx	*f = *state;
	char		 req[512];

	f->o.mode = O_UPGRADE;
	snprintf(req, sizeof req, "GET http://origin.test:%d/ HTTP/1.1\r\n"
	    "Host: origin.test\r\nConnection: upgrade\r\nUpgrade: x\r\n\r\n",
	    oport(f));
	client(f, req);
	expect_status(f, "HTTP/1.1 101 ");
	client_clear(f);
	put(f->c, "up", 2);
	expect(f, "up");
	expect_audit(f, "request", "allow", "upgrade", 101);
}

/*
 * On a host whose rule checks requests, an upgrade would leave a tunnel
 * no rule reads: h2c is refused, and so is a WebSocket unless the rule
 * says websocket; the origin is never asked, and the audit line says
 * why.
 */
static void
test_forward_upgrade_checked(void **state)
{
	struct fx	*f = *state;

	use_policy(f, "allow origin.test:%u methods GET\nallow-private 127.0.0.0/8\n");
	f->o.mode = O_UPGRADE;
	client(f, upgrade_to(f, "/", "h2c"));
	expect_refusal(f, 403, "constraint", "request", "deny", "constraint");
	assert_int_equal(f->o.accepts, 0);
	client_close(f);
	client(f, upgrade_to(f, "/live", "WebSocket"));
	expect_status(f, "HTTP/1.1 403 ");
	expect(f, "Pinhole-Error: constraint\r\n");
	expect(f, "needs a rule that says websocket");
	assert_int_equal(f->o.accepts, 0);
	assert_int_equal(count_audit_field(f, "detail", "upgrade: a WebSocket "
	    "to /live needs a rule that says websocket (its frames are not "
	    "read)"), 1);
	assert_int_equal(count_audit(f, "request", "allow", "upgrade", 101), 0);
}

/*
 * A rule that says websocket lets a WebSocket through as a GET on its
 * paths, and the exchange becomes a tunnel; elsewhere on the host, or
 * to h2c, the upgrade is refused.
 */
static void
test_forward_websocket(void **state)
{
	struct fx	*f = *state;

	use_policy(f, "allow origin.test:%u read-only websocket path /live/**\n"
	    "allow-private 127.0.0.0/8\n");
	f->o.mode = O_UPGRADE;
	client(f, upgrade_to(f, "/other", "websocket"));
	expect_refusal(f, 403, "constraint", "request", "deny", "constraint");
	client_close(f);
	client(f, upgrade_to(f, "/live/x", "h2c"));
	expect_status(f, "HTTP/1.1 403 ");
	assert_int_equal(f->o.accepts, 0);
	client_close(f);
	client(f, upgrade_to(f, "/live/x", "websocket"));
	expect_status(f, "HTTP/1.1 101 ");
	client_clear(f);
	put(f->c, "frame", 5);
	expect(f, "frame");
	expect_audit(f, "request", "allow", "upgrade", 101);
}

/*
 * A method override header names the method a framework acts on: on a
 * host whose rule checks methods, a GET carrying DELETE is refused, one
 * given twice too, and the origin never sees them; the GET alone, or
 * naming an allowed method, goes through on the same connection.
 */
static void
test_forward_override(void **state)
{
	struct fx	*f = *state;

	use_policy(f, "allow origin.test:%u read-only\nallow-private 127.0.0.0/8\n");
	f->o.mode = O_HTTP;
	client(f, get_x(f, "X-HTTP-Method-Override: DELETE\r\n"));
	expect_refusal(f, 403, "constraint", "request", "deny", "constraint");
	expect(f, "X-HTTP-Method-Override: DELETE is not a read");
	assert_int_equal(count_audit_field(f, "detail", "read-only: GET /x "
	    "with X-HTTP-Method-Override: DELETE is not a read"), 1);
	client_clear(f);
	say(f, get_x(f, "X-HTTP-Method: HEAD\r\nX-Method-Override: HEAD\r\n"));
	expect(f, "is given twice");
	client_clear(f);
	say(f, get_x(f, "x-method-override: head\r\n"));
	expect_status(f, "HTTP/1.1 200 OK\r\n");
	expect(f, "\r\n\r\nok");
	client_clear(f);
	say(f, get_x(f, ""));
	expect_status(f, "HTTP/1.1 200 OK\r\n");
	expect(f, "\r\n\r\nok");
	assert_int_equal(f->o.requests, 2);
	assert_null(memmem(f->o.in, f->o.inlen, "DELETE", 6));
	assert_int_equal(count_audit(f, "request", "deny", "constraint", 403),
	    2);
	/* The allowed requests' lines carry no refusal's detail. */
	assert_int_equal(count_audit_field(f, "detail", "read-only: "
	    "X-HTTP-Method is given twice, or does not name one method"), 1);
}

/*
 * The length goes upstream as the gateway framed the body, once: a
 * list another parser could read otherwise (", 2" as 0) never does.
 */
static void
test_forward_length_canonical(void **state)
{
	struct fx	*f = *state;
	char		 req[512];

	snprintf(req, sizeof req, "POST http://origin.test:%d/ HTTP/1.1\r\n"
	    "Host: origin.test\r\nContent-Length: 2, 2\r\n"
	    "Content-Length: 2\r\n\r\nhi", oport(f));
	client(f, req);
	expect_that(f, origin_got_body, "the body at the origin");
	assert_non_null(memmem(f->o.in, f->o.inlen, "\r\nContent-Length: 2\r\n",
	    21));
	assert_null(memmem(f->o.in, f->o.inlen, "2, 2", 4));
	assert_null(memmem(f->o.in, f->o.inlen, "Content-Length: 2\r\n"
	    "Content-Length", 33));
}

/* The origin says nothing: 504 at the idle timeout. */
static void
test_forward_silent(void **state)
{
	struct fx	*f = *state;
	char		 req[512];

	f->o.mode = O_SILENT;
	snprintf(req, sizeof req, "GET http://origin.test:%d/ HTTP/1.1\r\n"
	    "Host: origin.test\r\n\r\n", oport(f));
	client(f, req);
	expect_status(f, "HTTP/1.1 504 ");
	expect_audit(f, "request", "allow", "upstream did not answer in time",
	    504);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		CONN_TEST(test_forward_keepalive),
		CONN_TEST(test_forward_keepalive_idle),
		CONN_TEST(test_forward_broken_chunked),
		CONN_TEST(test_forward_bad_upstream),
		CONN_TEST(test_forward_upgrade),
		CONN_TEST(test_forward_upgrade_checked),
		CONN_TEST(test_forward_websocket),
		CONN_TEST(test_forward_override),
		CONN_TEST(test_forward_length_canonical),
		CONN_TEST(test_forward_silent),
	};

	return (cmocka_run_group_tests(tests, conn_group_setup, NULL));
}
