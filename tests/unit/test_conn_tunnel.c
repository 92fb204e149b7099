/*
 * Unit tests: CONNECT, step by step (S_RESOLVE, S_DIAL, S_TUNNEL): the
 * policy's refusals before any name is resolved, resolution that fails,
 * times out or answers late, a dial refused or timed out, and a tunnel
 * both ways, half-closed, or closed at the idle timeout.
 */
#include "config.h"

#include <sys/socket.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "proxy/gateway.h"
#include "tests/unit/conn-fixture.h"

/* The origin saw EOF. */
static int
origin_eof(struct fx *f)
{
	return (f->o.eof);
}

/* CONNECT allowed: resolve, dial, tunnel both ways, half-close. */
static void
test_connect_tunnel(void **state)
{
	struct fx	*f = *state;

	client(f, connect_to(f, "origin.test", oport(f)));
	expect(f, "HTTP/1.1 200 Connection established\r\n\r\n");
	expect_audit(f, "connect", "allow", NULL, 200);
	client_clear(f);
	put(f->c, "ping", 4);
	expect(f, "ping");
	shutdown(f->c, SHUT_WR);
	expect_that(f, origin_eof, "EOF passed to the origin");
	expect(f, "pingbye");
	expect_eof(f);
	assert_string_equal(f->o.in, "ping");
	assert_int_equal(f->o.accepts, 1);
	expect_audit(f, "close", NULL, "eof", 200);
	expect_that(f, no_conns, "connection freed");
}

/* A quiet tunnel is closed at the idle timeout. */
static void
test_idle_timeout(void **state)
{
	struct fx	*f = *state;

	client(f, connect_to(f, "origin.test", oport(f)));
	expect(f, "HTTP/1.1 200 Connection established\r\n\r\n");
	expect_eof(f);
	expect_audit(f, "close", NULL, "idle timeout", 200);
}

/* Refusals by policy: host, port, IP literal, private address. */
static void
test_denied(void **state)
{
	struct fx	*f = *state;

	client(f, connect_to(f, "other.test", 443));
	expect_refusal(f, 403, "denied-by-policy", "connect", "deny",
	    "denied-by-policy");
	expect(f, "Pinhole-Request: pinhole request other.test:443\r\n");
	expect(f, "pinhole request other.test");
	expect_eof(f);
	assert_int_equal(fake_open + fake_cancels, 0);	/* never resolved */
}

/* A host allowed on another port only. */
static void
test_denied_port(void **state)
{
	struct fx	*f = *state;

	client(f, connect_to(f, "origin.test", oport(f) == 1 ? 2 : 1));
	expect_refusal(f, 403, "port", "connect", "deny", "port");
}

/* An address literal no rule allows. */
static void
test_denied_ip_literal(void **state)
{
	struct fx	*f = *state;

	client(f, connect_to(f, "127.0.0.1", oport(f)));
	expect_refusal(f, 403, "ip-literal", "connect", "deny", "ip-literal");
	assert_int_equal(f->o.accepts, 0);
}

/* A name that resolves to a private address no rule covers. */
static void
test_denied_private(void **state)
{
	struct fx	*f = *state;

	use_policy(f, "allow private.test:443\nallow-private 127.0.0.0/8\n");
	client(f, connect_to(f, "private.test", 443));
	expect_refusal(f, 403, "private-address", "connect", "deny",
	    "private-address");
	expect(f, "10.1.2.3");
}

/* No policy at all denies everything. */
static void
test_no_policy(void **state)
{
	struct fx	*f = *state;

	gateway_set_rules(f->gw, NULL);
	client(f, connect_to(f, "origin.test", oport(f)));
	expect_status(f, "HTTP/1.1 403 ");
	expect(f, "no policy loaded");
	expect_audit(f, "connect", "deny", "denied-by-policy", 403);
}

/* Resolution fails: 502, or 504 when it timed out. */
static void
test_resolve_failed(void **state)
{
	struct fx	*f = *state;

	use_policy(f, "allow gone.test:443\nallow slow.test:443\n");
	client(f, connect_to(f, "gone.test", 443));
	expect_refusal(f, 502, "resolve-failed", "connect", "allow",
	    "resolve-failed");
	expect(f, "name resolution failed: no such host");
	client_close(f);
	client(f, connect_to(f, "slow.test", 443));
	expect_refusal(f, 504, "resolve-failed", "connect", "allow",
	    "resolve-failed");
	assert_int_equal(fake_cancels, 0);
}

/* The resolver cannot take the query: 502. */
static void
test_resolve_refused(void **state)
{
	struct fx	*f = *state;

	use_policy(f, "allow nomem.test:443\n");
	client(f, connect_to(f, "nomem.test", 443));
	expect_refusal(f, 502, "resolve-failed", "connect", "allow",
	    "resolve-failed");
	expect(f, "resolver failure");
	assert_int_equal(fake_open, 0);
}

/* The resolver never answers: 504 at the connect timeout, query dropped. */
static void
test_resolve_timeout(void **state)
{
	struct fx	*f = *state;

	use_policy(f, "allow held.test:443\n");
	client(f, connect_to(f, "held.test", 443));
	expect_that(f, query_held, "query held");
	expect_status(f, "HTTP/1.1 504 ");
	expect(f, "name resolution timed out");
	assert_null(fake_held);
	assert_int_equal(fake_cancels, 1);
	expect_audit(f, "connect", "allow", "resolve-failed", 504);
}

/* A held answer let go late still tunnels (S_RESOLVE left by its answer). */
static void
test_resolve_late(void **state)
{
	static const struct fake_answer	late = { "held.test", "127.0.0.1",
	    NULL };
	struct fx	*f = *state;

	use_policy(f, "allow held.test:%u\nallow-private 127.0.0.0/8\n");
	client(f, connect_to(f, "held.test", oport(f)));
	expect_that(f, query_held, "query held");
	assert_int_equal(f->o.accepts, 0);
	fake_release(&late);
	expect(f, "HTTP/1.1 200 Connection established\r\n\r\n");
	assert_int_equal(fake_cancels, 0);
}

/* Nothing listens: 502 connect-failed. */
static void
test_dial_refused(void **state)
{
	struct fx	*f = *state;
	int		 port = oport(f);

	origin_stop(&f->o);	/* its port is now refused */
	client(f, connect_to(f, "origin.test", port));
	expect_refusal(f, 502, "connect-failed", "connect", "allow",
	    "connect-failed");
	expect(f, "Connection refused");
}

/*
 * A server that takes no connection: its accept queue full, the kernel
 * drops the SYNs, so dialing times out: 504.
 */
static void
test_dial_timeout(void **state)
{
	struct fx	*f = *state;

	blackhole(f);
	client(f, connect_to(f, "origin.test", f->bhport));
	expect_refusal(f, 504, "timeout", "connect", "allow", "timeout");
	expect(f, "timed out");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		CONN_TEST(test_connect_tunnel),
		CONN_TEST(test_idle_timeout),
		CONN_TEST(test_denied),
		CONN_TEST(test_denied_port),
		CONN_TEST(test_denied_ip_literal),
		CONN_TEST(test_denied_private),
		CONN_TEST(test_no_policy),
		CONN_TEST(test_resolve_failed),
		CONN_TEST(test_resolve_refused),
		CONN_TEST(test_resolve_timeout),
		CONN_TEST(test_resolve_late),
		CONN_TEST(test_dial_refused),
		CONN_TEST(test_dial_timeout),
	};

	return (cmocka_run_group_tests(tests, conn_group_setup, NULL));
}
