/*
 * Unit tests: connections through an upstream proxy: CONNECT and
 * forwarded requests with the gateway's credentials, the upstream's
 * refusals told apart from the origin's, and the private-address guard
 * before the upstream.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "proxy/gateway.h"
#include "rules/rules.h"
#include "tests/unit/conn-fixture.h"

/*
 * The origin as the upstream proxy, answering reply to each request;
 * with credentials "alice:s3cret" when auth.  Names are never resolved
 * here then: origin.test's entry goes, so asking the resolver fails.
 */
static void
via_upstream(struct fx *f, const char *reply, int auth)
{
	struct conn_upstream	*u;
	struct rules		*r;
	char			 text[512], path[128], err[256];
	FILE			*fp;

	snprintf(path, sizeof path, "%s/auth", f->dir);
	assert_non_null(fp = fopen(path, "w"));
	fputs("alice:s3cret\n", fp);
	fclose(fp);
	assert_int_equal(chmod(path, 0600), 0);
	snprintf(text, sizeof text, "upstream http://127.0.0.1:%d\n%s%s\n",
	    oport(f), auth ? "upstream-auth " : "", auth ? path : "");
	assert_non_null(r = rules_create());
	if (rules_load_text(r, "test", text, strlen(text), err,
	    sizeof err) == -1)
		fail_msg("%s", err);
	if ((u = conn_upstream_create(rules_upstream(r), err,
	    sizeof err)) == NULL)
		fail_msg("%s", err);
	unlink(path);
	rules_free(r);
	gateway_set_upstream(f->gw, u);
	conn_upstream_unref(u);
	f->o.mode = O_PROXY;
	f->o.proxy_reply = reply;
	f->nscript = 0;
	script(f, "private.test", "10.1.2.3", NULL);
}

/* The policy with the test's upstream lines, as gateway_set_rules. */
static void
policy_upstream(struct fx *f, const char *extra)
{
	char	text[512];

	snprintf(text, sizeof text, "allow origin.test:443\n"
	    "allow origin.test:80\nallow 10.1.2.3:443\nallow private.test:443\n"
	    "allow-private 127.0.0.0/8\n%s", extra);
	use_policy_port(f, text, 0);
}

/* The origin has had want_asks requests. */
static int
origin_asked(struct fx *f)
{
	return (f->o.requests >= f->want_asks);
}

/* The audit lines with this detail. */
static int
audit_detail(struct fx *f, const char *detail)
{
	return (count_audit_field(f, "detail", detail));
}

/*
 * CONNECT through the upstream: the name goes to it unresolved, with
 * the credentials; its 200 opens the tunnel; every line names it.
 */
static void
test_upstream_connect(void **state)
{
	struct fx	*f = *state;
	char		 want[256];

	via_upstream(f, "HTTP/1.1 200 Connection established\r\n\r\n", 1);
	policy_upstream(f, "");
	client(f, connect_to(f, "origin.test", 443));
	expect(f, "HTTP/1.1 200 Connection established\r\n\r\n");
	assert_string_equal(f->o.heads, "CONNECT origin.test:443 HTTP/1.1\r\n"
	    "Host: origin.test:443\r\n"
	    "Proxy-Authorization: Basic YWxpY2U6czNjcmV0\r\n\r\n");
	client_clear(f);
	put(f->c, "ping", 4);
	expect(f, "ping");
	shutdown(f->c, SHUT_WR);
	expect(f, "pingbye");
	expect_eof(f);
	expect_audit(f, "connect", "allow", NULL, 200);
	expect_audit(f, "close", NULL, "eof", 200);
	snprintf(want, sizeof want, "upstream 127.0.0.1:%d", oport(f));
	assert_int_equal(audit_detail(f, want), 2);
	assert_int_equal(count_audit_field(f, "addr", "127.0.0.1"), 2);
	assert_int_equal(fake_cancels, 0);
}

/* Forwarded HTTP goes to the upstream in absolute form. */
static void
test_upstream_forward(void **state)
{
	struct fx	*f = *state;

	via_upstream(f, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 1);
	policy_upstream(f, "");
	client(f, "GET http://origin.test/a?b HTTP/1.1\r\nHost: origin.test\r\n"
	    "Proxy-Authorization: Basic c2FuZGJveDp4\r\n\r\n");
	expect_status(f, "HTTP/1.1 200 OK\r\n");
	expect(f, "\r\n\r\nok");
	assert_non_null(strstr(f->o.heads, "GET http://origin.test:80/a?b "
	    "HTTP/1.1\r\nHost: origin.test\r\n"));
	/* Ours only: the client's are not passed on. */
	assert_non_null(strstr(f->o.heads, "Proxy-Authorization: Basic "
	    "YWxpY2U6czNjcmV0\r\n"));
	assert_null(strstr(f->o.heads, "c2FuZGJveDp4"));
	expect_audit(f, "request", "allow", NULL, 200);
}

/* The upstream's refusals: 502, which side refused, never relayed. */
static void
test_upstream_refusals(void **state)
{
	struct fx	*f = *state;

	via_upstream(f, "HTTP/1.1 407 Proxy Authentication Required\r\n"
	    "Proxy-Authenticate: Basic realm=\"x\"\r\nContent-Length: 0\r\n\r\n",
	    0);
	policy_upstream(f, "");
	client(f, connect_to(f, "origin.test", 443));
	expect_refusal(f, 502, "upstream-auth", "connect", "allow",
	    "upstream-auth");
	expect(f, "wants credentials (407 Proxy Authentication Required): "
	    "give them with upstream-auth FILE");
	assert_null(strstr(f->o.heads, "Proxy-Authorization"));
	client_close(f);

	f->o.proxy_reply = "HTTP/1.1 403 Forbidden\r\nX-Squid-Error: "
	    "ERR_ACCESS_DENIED 0\r\nContent-Length: 3\r\n\r\nno!";
	client(f, "GET http://origin.test/ HTTP/1.1\r\nHost: origin.test\r\n"
	    "\r\n");
	expect_refusal(f, 502, "upstream-denied", "request", "allow",
	    "upstream-denied");
	assert_null(strstr(f->cbuf, "no!"));
	client_close(f);

	/* The origin's own 403, through the upstream, is the origin's. */
	f->o.proxy_reply = "HTTP/1.1 403 Forbidden\r\nContent-Length: 3\r\n"
	    "\r\nno!";
	client(f, "GET http://origin.test/ HTTP/1.1\r\nHost: origin.test\r\n"
	    "\r\n");
	expect_status(f, "HTTP/1.1 403 Forbidden\r\n");
	expect(f, "\r\n\r\nno!");
	client_close(f);

	f->o.proxy_reply = "garbage\r\n\r\n";
	client(f, connect_to(f, "origin.test", 443));
	expect_refusal(f, 502, "upstream-failed", "connect", "allow",
	    "upstream-failed");
	client_close(f);

	/* No answer in time; a client gone meanwhile leaves nothing. */
	f->o.proxy_reply = "";
	client(f, connect_to(f, "origin.test", 443));
	expect_status(f, "HTTP/1.1 502 ");
	expect(f, "did not answer CONNECT in 1 s");
	client_close(f);
	f->want_asks = f->o.requests + 1;
	client(f, connect_to(f, "origin.test", 443));
	expect_that(f, origin_asked, "CONNECT sent");
	client_close(f);
	expect_that(f, no_conns, "connection freed");

	origin_stop(&f->o);	/* nothing listens there now */
	client(f, connect_to(f, "origin.test", 443));
	expect_refusal(f, 502, "upstream-unreachable", "connect", "allow",
	    "upstream-unreachable");
	expect(f, "cannot be reached (127.0.0.1: Connection refused)");
	assert_int_equal(fake_cancels, 0);
}

/*
 * The guard holds for what the sandbox asks for: an address literal is
 * vetted before the upstream sees it.  no-upstream hosts are dialed
 * (and resolved) directly.
 */
static void
test_upstream_guard(void **state)
{
	struct fx	*f = *state;
	char		 req[256];

	via_upstream(f, "HTTP/1.1 200 Connection established\r\n\r\n", 0);
	policy_upstream(f, "");
	client(f, connect_to(f, "10.1.2.3", 443));
	expect_refusal(f, 403, "private-address", "connect", "deny",
	    "private-address");
	client_close(f);
	assert_int_equal(f->o.accepts, 0);

	/* A name is the upstream's to resolve: no guard on its answer. */
	client(f, connect_to(f, "private.test", 443));
	expect(f, "HTTP/1.1 200 Connection established\r\n\r\n");
	client_close(f);
	assert_int_equal(f->o.accepts, 1);

	script(f, "origin.test", f->otext, NULL);
	f->o.mode = O_PROXY;
	f->o.proxy_reply = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
	f->o.heads[0] = '\0';
	use_policy_port(f, "allow origin.test:%u\nallow-private 127.0.0.0/8\n"
	    "no-upstream *.test,192.0.2.0/24\n", oport(f));
	snprintf(req, sizeof req, "GET http://origin.test:%d/x HTTP/1.1\r\n"
	    "Host: x\r\n\r\n", oport(f));
	client(f, req);
	expect_status(f, "HTTP/1.1 200 OK\r\n");
	assert_non_null(strstr(f->o.heads, "GET /x HTTP/1.1\r\n"));
	assert_null(strstr(f->o.heads, "Proxy-Authorization"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		CONN_TEST(test_upstream_connect),
		CONN_TEST(test_upstream_forward),
		CONN_TEST(test_upstream_refusals),
		CONN_TEST(test_upstream_guard),
	};

	return (cmocka_run_group_tests(tests, conn_group_setup, NULL));
}
