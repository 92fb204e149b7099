/*
 * Unit tests: escalation on a connection (S_AGENT, S_ASK): the agent
 * endpoint and its refusals, a long poll cut by the client, and a
 * connection held for a person's decision until it comes or times out.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "proxy/escalate/escalate.h"
#include "proxy/gateway.h"
#include "tests/unit/conn-fixture.h"

/* The agent endpoint: answered, and its refusals (S_AGENT). */
static void
test_agent(void **state)
{
	struct fx	*f = *state;

	use_escalate(f, 0);
	client(f, "GET /pinhole/allowed HTTP/1.1\r\nHost: proxy\r\n\r\n");
	expect_status(f, "HTTP/1.1 200 ");
	expect(f, "origin.test");
	expect_audit(f, "request", NULL, "agent-endpoint", 200);
	client_clear(f);
	say(f, "POST /pinhole/request HTTP/1.1\r\nHost: p\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n");
	expect_status(f, "HTTP/1.1 411 ");
	expect_eof(f);
	client_close(f);
	client(f, "POST /pinhole/request HTTP/1.1\r\nHost: p\r\n"
	    "Content-Length: 5000\r\n\r\n");
	expect_status(f, "HTTP/1.1 413 ");
	expect_eof(f);
	expect_audit(f, "request", "deny", "send the body with a "
	    "Content-Length", 411);
	expect_audit(f, "request", "deny", "body too long", 413);
}

/* An agent request filed, and its long poll cut by the client. */
static void
test_agent_wait(void **state)
{
	struct fx	*f = *state;
	const struct escalate_request *r;
	char		 req[256];

	use_escalate(f, 0);
	client(f, "POST /pinhole/request HTTP/1.1\r\nHost: p\r\n"
	    "Content-Type: application/x-www-form-urlencoded\r\n"
	    "Content-Length: 33\r\n\r\nhost=asked.test&port=443&reason=x");
	expect_status(f, "HTTP/1.1 201 ");
	assert_non_null(r = escalate_next(f->esc, NULL));
	client_clear(f);
	snprintf(req, sizeof req, "GET /pinhole/request/%s?wait=30 HTTP/1.1"
	    "\r\nHost: p\r\n\r\n", r->id);
	put(f->c, req, strlen(req));
	run_until(f, got_eof, 200);
	assert_int_equal(f->clen, 0);	/* held */
	assert_int_equal(gateway_connections(f->gw), 1);
	client_close(f);
	expect_that(f, no_conns, "the waiting connection closed");
}

/* Ask mode: held, then refused when no one answers in time (S_ASK). */
static void
test_ask_timeout(void **state)
{
	struct fx	*f = *state;

	use_escalate(f, 1);
	client(f, connect_to(f, "asked.test", 443));
	expect_that(f, ask_pending, "request filed");
	assert_int_equal(f->clen, 0);
	expect_refusal(f, 403, "denied-by-policy", "connect", "deny",
	    "denied-by-policy");
	expect(f, "no answer in time");
}

/* Ask mode: a person denies, or approves once (then it tunnels). */
static void
test_ask_decided(void **state)
{
	struct fx	*f = *state;
	const struct escalate_request *r;
	char		 err[256];

	use_escalate(f, 5);
	script(f, "asked.test", "127.0.0.1", NULL);
	client(f, connect_to(f, "asked.test", oport(f)));
	expect_that(f, ask_pending, "request filed");
	assert_non_null(r = escalate_next(f->esc, NULL));
	assert_int_equal(escalate_deny(f->esc, r->id, "not today", "tester",
	    err, sizeof err), 0);
	expect_status(f, "HTTP/1.1 403 ");
	expect(f, "denied by tester: not today");
	client_close(f);

	client(f, connect_to(f, "asked.test", oport(f)));
	expect_that(f, ask_pending, "request filed again");
	r = NULL;
	while ((r = escalate_next(f->esc, r)) != NULL &&
	    r->state != ESCALATE_PENDING)
		;
	assert_non_null(r);
	if (escalate_approve(f->esc, r->id, ESCALATE_SCOPE_ONCE, 0, NULL,
	    "tester", err, sizeof err) == -1)
		fail_msg("approve: %s", err);
	expect(f, "HTTP/1.1 200 Connection established\r\n\r\n");
	assert_int_equal(count_audit(f, "connect", "allow", NULL, 200), 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		CONN_TEST(test_agent),
		CONN_TEST(test_agent_wait),
		CONN_TEST(test_ask_timeout),
		CONN_TEST(test_ask_decided),
	};

	return (cmocka_run_group_tests(tests, conn_group_setup, NULL));
}
