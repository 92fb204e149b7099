/*
 * Unit tests: a connection's end in every state: the gateway stopped
 * with a grace period, the client gone, or the gateway freed under it;
 * nothing leaks, and no query stays open.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "proxy/escalate/escalate.h"
#include "proxy/gateway.h"
#include "tests/unit/conn-fixture.h"

/* The states test_client_closes and test_free_in leave a connection in. */
enum reach {
	R_HEAD,		/* half a head */
	R_RESOLVE,	/* the query held */
	R_DIAL,		/* connecting to a server that never accepts */
	R_TUNNEL,
	R_FORWARD,	/* the request sent, no answer */
	R_ASK,		/* held for a decision */
	R_AGENT,	/* half a body */
	R_REPLY,	/* answers the client does not read */
	R_MAX
};

/* The origin has a connection. */
static int
origin_connected(struct fx *f)
{
	return (f->o.accepts > 0);
}

/* The gateway said it stopped. */
static int
is_stopped(struct fx *f)
{
	return (f->stopped);
}

/* The gateway was stopped. */
static void
stopped_cb(void *arg)
{
	((struct fx *)arg)->stopped = 1;
}

/*
 * Stopping: an idle connection closes at once, a tunnel may finish
 * within the grace period, then the done callback runs.
 */
static void
test_stop(void **state)
{
	struct fx	*f = *state;
	int		 tunnel;

	client(f, connect_to(f, "origin.test", oport(f)));
	expect(f, "HTTP/1.1 200 Connection established\r\n\r\n");
	tunnel = f->c;
	event_free(f->cev);
	f->cev = NULL;
	client_clear(f);
	client(f, NULL);
	run_until(f, got_eof, 50);
	gateway_stop(f->gw, 5, stopped_cb, f);
	expect_eof(f);
	assert_int_equal(gateway_connections(f->gw), 1);
	assert_false(f->stopped);
	close(tunnel);
	expect_that(f, is_stopped, "stopped");
	assert_int_equal(gateway_connections(f->gw), 0);
}

/* Reach a state, then either close the client or free the gateway. */
static void
reach(struct fx *f, int state)
{
	char	req[256];
	int	i;

	switch (state) {
	case R_HEAD:	/* S_HEAD, half a head */
		client(f, "GET http://origin.test/ HTTP/1.1\r\n");
		break;
	case R_RESOLVE:	/* S_RESOLVE */
		use_policy(f, "allow held.test:443\n");
		client(f, connect_to(f, "held.test", 443));
		expect_that(f, query_held, "query held");
		break;
	case R_DIAL:	/* S_DIAL */
		blackhole(f);
		client(f, connect_to(f, "origin.test", f->bhport));
		break;
	case R_TUNNEL:	/* S_TUNNEL */
		client(f, connect_to(f, "origin.test", oport(f)));
		expect(f, "Connection established\r\n\r\n");
		break;
	case R_FORWARD:	/* S_FORWARD, no answer yet */
		f->o.mode = O_SILENT;
		snprintf(req, sizeof req, "GET http://origin.test:%d/ "
		    "HTTP/1.1\r\nHost: origin.test\r\n\r\n", oport(f));
		client(f, req);
		expect_that(f, origin_connected, "dialed");
		break;
	case R_ASK:	/* S_ASK */
		use_escalate(f, 5);
		client(f, connect_to(f, "asked.test", 443));
		expect_that(f, ask_pending, "request filed");
		break;
	case R_AGENT:	/* S_AGENT, half a body */
		use_escalate(f, 0);
		client(f, "POST /pinhole/request HTTP/1.1\r\nHost: p\r\n"
		    "Content-Length: 10\r\n\r\nhost=");
		break;
	case R_REPLY:	/* S_REPLY: a reply the client does not read */
		f->rcvbuf = 2048;
		client(f, NULL);
		f->rcvbuf = 0;
		event_del(f->cev);
		for (i = 0; i < 1500; i++)
			say(f, "GET / HTTP/1.1\r\nHost: proxy\r\n\r\n");
		run_until(f, got_eof, 100);
		break;
	}
	run_until(f, got_eof, 50);
	assert_false(f->ceof);
	assert_int_equal(gateway_connections(f->gw), 1);
}

/* Close the client in each state: the connection goes, nothing leaks. */
static void
test_client_closes(void **state)
{
	static const struct fake_answer	answer = { "held.test", "127.0.0.1",
	    NULL };
	static const char	ok[] = "HTTP/1.1 200 OK\r\n"
	    "Content-Length: 0\r\n\r\n";
	struct fx	*f = *state;
	const struct escalate_request *r;
	char		 err[256];
	int		 s;

	for (s = 0; s < R_MAX; s++) {
		reach(f, s);
		client_close(f);
		/*
		 * Resolving and forwarding, nothing is read from the client
		 * (it has nothing to say), so its EOF is seen only once the
		 * next step writes to it: let that step have its input.
		 */
		if (s == R_RESOLVE)
			fake_release(&answer);
		else if (s == R_FORWARD)
			put(f->o.fd, ok, sizeof ok - 1);
		expect_that(f, no_conns, "connection closed");
		/* A decision after the client left finds no one waiting. */
		if (s == R_ASK) {
			assert_non_null(r = escalate_next(f->esc, NULL));
			assert_int_equal(escalate_deny(f->esc, r->id, "late",
			    "tester", err, sizeof err), 0);
		}
		assert_int_equal(fake_open, 0);
		origin_drop(&f->o);
		f->o.accepts = 0;
		f->o.mode = O_ECHO;
		blackhole_stop(f);
		gateway_set_escalate(f->gw, NULL, NULL, 0);
		escalate_free(f->esc);
		f->esc = NULL;
		use_policy(f, default_policy);
	}
}

/* Free the gateway in a state (the test's prestate). */
static void
test_free_in(void **state)
{
	struct fx	*f = *state;

	reach(f, f->which);
	gateway_free(f->gw);
	f->gw = NULL;
	assert_int_equal(fake_open, 0);
	if (f->which != R_REPLY)
		expect_eof(f);
}

int
main(void)
{
	static int		states[R_MAX] = { R_HEAD, R_RESOLVE, R_DIAL,
	    R_TUNNEL, R_FORWARD, R_ASK, R_AGENT, R_REPLY };
	const struct CMUnitTest tests[] = {
		CONN_TEST(test_stop),
		CONN_TEST(test_client_closes),
#define FREE_IN(i) \
		cmocka_unit_test_prestate_setup_teardown(test_free_in, \
		    fx_setup, fx_teardown, &states[i])
		FREE_IN(R_HEAD), FREE_IN(R_RESOLVE), FREE_IN(R_DIAL),
		FREE_IN(R_TUNNEL), FREE_IN(R_FORWARD), FREE_IN(R_ASK),
		FREE_IN(R_AGENT), FREE_IN(R_REPLY),
	};

	return (cmocka_run_group_tests(tests, conn_group_setup, NULL));
}
