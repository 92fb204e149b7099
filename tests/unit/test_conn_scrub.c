/*
 * Unit tests: a secret's value kept out of forwarded responses: replaced
 * in heads and bodies of any framing, across reads, re-framed for the
 * client, refused when coded; a host no secret is for left alone.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "proxy/gateway.h"
#include "rules/rules.h"
#include "tests/unit/conn-fixture.h"

#define SCRUB_VALUE	"s3cr3t-v@lue/42"
#define SCRUB_PH	"PINHOLE-SECRET-TOK-MASKED"

/*
 * A policy with secret TOK for origin.test, its value SCRUB_VALUE; the
 * gateway is given it as cli/gwopts.c gives it.
 */
static void
policy_secret(struct fx *f)
{
	static struct conn_secret	 sec;
	const struct rules_secret	*rs;
	struct rules			*r;
	char				 text[256], err[256];

	snprintf(text, sizeof text, "allow origin.test:%d\n"
	    "allow 127.0.0.1:%d\nallow-private 127.0.0.0/8\n"
	    "secret TOK for origin.test\n", oport(f), oport(f));
	assert_non_null(r = rules_create());
	if (rules_load_text(r, "test", text, strlen(text), err,
	    sizeof err) == -1)
		fail_msg("%s", err);
	assert_int_equal(rules_secrets(r, &rs, 1), 1);
	sec.rule = rs;
	sec.value = SCRUB_VALUE;
	sec.len = strlen(SCRUB_VALUE);
	gateway_set_rules(f->gw, r);
	gateway_set_secrets(f->gw, &sec, 1);
}

/*
 * Forward one GET for origin.test over HTTP/1.minor, the origin's
 * answer being reply; wait for want.
 */
static void
scrub_exchange(struct fx *f, int minor, const char *reply, const char *want)
{
	char	req[512];

	f->o.mode = O_REPLY;
	f->o.reply = reply;
	snprintf(req, sizeof req, "GET http://origin.test:%d/echo HTTP/1.%d\r\n"
	    "Host: origin.test\r\nAccept-Encoding: gzip, br\r\n\r\n",
	    oport(f), minor);
	client(f, req);
	expect(f, want);
}

/*
 * A response from a host a secret is for: the value, raw, base64 and
 * percent-encoded, in the head and in a body of any framing, is replaced
 * by the placeholder; the body goes chunked (the length changed), the
 * origin was asked for no coding, and the line names the secret.
 */
static void
test_forward_scrub(void **state)
{
	static const char *const replies[] = {
	    "HTTP/1.1 200 OK\r\nX-Echo: Bearer " SCRUB_VALUE "\r\n"
	    "Content-Length: 32\r\n\r\n{\"t\":\"" SCRUB_VALUE "\",\"end\":1}\n",
	    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
	    "Trailer: X-T\r\n\r\n9\r\nb64=czNjc\r\n"
	    "b\r\njN0LXZAbHVl\r\n8\r\nLzQy end\r\n0\r\nX-T: " SCRUB_VALUE
	    "\r\n\r\n",
	    ("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n"
	    "q=s3cr3t-v%40lue%2F42 end"),
	};
	struct fx	*f = *state;
	size_t		 i;

	policy_secret(f);
	for (i = 0; i < sizeof replies / sizeof replies[0]; i++) {
		f->o.close_after = i == 2;
		scrub_exchange(f, 1, replies[i], "0\r\n\r\n");
		assert_null(strstr(f->cbuf, "s3cr3t"));
		assert_null(strstr(f->cbuf, "czNjcjN0LXZAbHVlLzQy"));
		assert_non_null(strstr(f->cbuf, SCRUB_PH));
		assert_non_null(strstr(f->cbuf, "Transfer-Encoding: chunked"));
		assert_null(strstr(f->cbuf, "Content-Length"));
		assert_null(strstr(f->cbuf, "X-T"));
		assert_non_null(strstr(f->cbuf, "end"));
		assert_non_null(strstr(f->o.head, "Accept-Encoding: identity"));
		assert_null(strstr(f->o.head, "gzip"));
		client_close(f);
	}
	assert_int_equal(count_audit_field(f, "secret_scrubbed", "TOK"), 3);
}

/*
 * A value cut between two reads, in the chunks of a body that comes in
 * two pieces: held back, then replaced whole.
 */
static void
test_forward_scrub_split(void **state)
{
	struct fx	*f = *state;
	static const char rest[] = "8\r\nv@lue/42\r\n0\r\n\r\n";

	policy_secret(f);
	scrub_exchange(f, 1, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked"
	    "\r\n\r\n8\r\n=s3cr3t-\r\n", "\r\n\r\n");
	run_until(f, never, 100);
	assert_null(strstr(f->cbuf, "s3cr3t"));
	put(f->o.fd, rest, sizeof rest - 1);
	expect(f, "0\r\n\r\n");
	assert_non_null(strstr(f->cbuf, "1\r\n=\r\n"));
	assert_non_null(strstr(f->cbuf, "\r\n" SCRUB_PH "\r\n0\r\n\r\n"));
	assert_null(strstr(f->cbuf, "s3cr3t"));
	assert_int_equal(count_audit_field(f, "secret_scrubbed", "TOK"), 1);
}

/*
 * To an HTTP/1.0 client the scrubbed body ends with the connection; a
 * HEAD's answer keeps its length; a coded body cannot be read: 502.
 */
static void
test_forward_scrub_framing(void **state)
{
	struct fx	*f = *state;
	char		 req[512];

	policy_secret(f);
	scrub_exchange(f, 0, "HTTP/1.1 200 OK\r\nContent-Length: 16\r\n"
	    "\r\n=" SCRUB_VALUE, "Connection: close");
	expect_eof(f);
	assert_non_null(strstr(f->cbuf, "\r\n\r\n=" SCRUB_PH));
	assert_null(strstr(f->cbuf, "chunked"));
	client_close(f);
	f->o.reply = "HTTP/1.1 200 OK\r\nContent-Length: 16\r\n\r\n";
	snprintf(req, sizeof req, "HEAD http://origin.test:%d/ HTTP/1.1\r\n"
	    "Host: origin.test\r\n\r\n", oport(f));
	client(f, req);
	expect(f, "Content-Length: 16\r\n");
	client_close(f);
	scrub_exchange(f, 1, "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n"
	    "Content-Length: 16\r\n\r\n=" SCRUB_VALUE, "\r\n\r\n");
	expect_refusal(f, 502, "secret-unscannable", "request", "allow",
	    "secret-unscannable");
	assert_null(strstr(f->cbuf, "s3cr3t"));
	assert_int_equal(count_audit_field(f, "secret_scrubbed", "TOK"), 1);
}

/* A host no secret is for: its answer as it came. */
static void
test_forward_scrub_other(void **state)
{
	struct fx	*f = *state;
	char		 req[512];

	policy_secret(f);
	f->o.mode = O_REPLY;
	f->o.reply = "HTTP/1.1 200 OK\r\nContent-Length: 16\r\n\r\n="
	    SCRUB_VALUE;
	snprintf(req, sizeof req, "GET http://127.0.0.1:%d/ HTTP/1.1\r\n"
	    "Host: 127.0.0.1\r\nAccept-Encoding: gzip\r\n\r\n", oport(f));
	client(f, req);
	expect(f, "=" SCRUB_VALUE);
	assert_non_null(strstr(f->cbuf, "Content-Length: 16"));
	assert_non_null(strstr(f->o.head, "gzip"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		CONN_TEST(test_forward_scrub),
		CONN_TEST(test_forward_scrub_split),
		CONN_TEST(test_forward_scrub_framing),
		CONN_TEST(test_forward_scrub_other),
	};

	return (cmocka_run_group_tests(tests, conn_group_setup, NULL));
}
