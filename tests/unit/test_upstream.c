/*
 * Unit tests for talking to an upstream proxy (proxy/wire/upstreammsg.c):
 * the credentials file as a Proxy-Authorization value, the CONNECT
 * request, and what its answers mean, said as which side refused.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "proxy/wire/http.h"
#include "proxy/wire/upstreammsg.h"
#include "rules/rules.h"

/* Read a credentials file's text. */
static int
cred(const char *text, char *out, const char **errstr)
{
	*errstr = NULL;
	return (upstream_credentials(text, strlen(text), out,
	    UPSTREAM_AUTH_MAX, errstr));
}

static void
test_credentials(void **state)
{
	char		 out[UPSTREAM_AUTH_MAX], big[UPSTREAM_CRED_MAX + 8];
	const char	*errstr;

	assert_int_equal(cred("alice:s3cret\n", out, &errstr), 0);
	assert_string_equal(out, "Basic YWxpY2U6czNjcmV0");
	assert_int_equal(cred("a:b\r\nignored", out, &errstr), 0);
	assert_string_equal(out, "Basic YTpi");
	assert_int_equal(cred("ab:\n", out, &errstr), 0);
	assert_string_equal(out, "Basic YWI6");
	assert_int_equal(cred("user:p:w", out, &errstr), 0);
	assert_string_equal(out, "Basic dXNlcjpwOnc=");
	assert_int_equal(cred("nocolon\n", out, &errstr), -1);
	assert_non_null(strstr(errstr, "USER:PASSWORD"));
	assert_int_equal(cred(":nouser\n", out, &errstr), -1);
	assert_int_equal(cred("", out, &errstr), -1);
	assert_int_equal(cred("a:b\tc\n", out, &errstr), -1);
	assert_non_null(strstr(errstr, "control"));
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	big[1] = ':';
	assert_int_equal(cred(big, out, &errstr), -1);
	assert_non_null(strstr(errstr, "too long"));
	/* Not NUL-terminated: only len bytes are read. */
	assert_int_equal(upstream_credentials("a:bXYZ", 3, out, sizeof out,
	    &errstr), 0);
	assert_string_equal(out, "Basic YTpi");
}

static void
test_connect_head(void **state)
{
	struct host	 h;
	const char	*errstr;
	char		 buf[UPSTREAM_HEAD_MAX];

	assert_int_equal(host_parse("pypi.org", 8, &h, &errstr), 0);
	assert_int_equal(upstream_connect_head(buf, sizeof buf, &h, 443,
	    NULL), 53);
	assert_string_equal(buf, "CONNECT pypi.org:443 HTTP/1.1\r\n"
	    "Host: pypi.org:443\r\n\r\n");
	assert_int_equal(host_parse("2001:db8::1", 11, &h, &errstr), 0);
	assert_true(upstream_connect_head(buf, sizeof buf, &h, 22,
	    "Basic YTpi") > 0);
	assert_string_equal(buf, "CONNECT [2001:db8::1]:22 HTTP/1.1\r\n"
	    "Host: [2001:db8::1]:22\r\n"
	    "Proxy-Authorization: Basic YTpi\r\n\r\n");
	assert_int_equal(upstream_connect_head(buf, 20, &h, 22, NULL), -1);
}

/* What the answer head text means. */
static enum upstream_answer
answer(const char *head, int connect, struct upstream_verdict *v)
{
	static struct http_response	r;
	struct http_limits		lim = { HTTP_MAX_HEAD, HTTP_MAX_HEADERS };

	assert_int_equal(http_response_parse(head, strlen(head), &lim, 0, &r),
	    0);
	upstream_answer_read(&r, connect, v);
	return (v->answer);
}

static void
test_answers(void **state)
{
	struct upstream_verdict	v;
	char			why[512];

	assert_int_equal(answer("HTTP/1.1 200 Connection established\r\n\r\n",
	    1, &v), UPSTREAM_OPEN);
	assert_int_equal(answer("HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\n",
	    1, &v), UPSTREAM_OPEN);
	assert_int_equal(answer("HTTP/1.1 407 Proxy Authentication Required"
	    "\r\nProxy-Authenticate: Basic realm=\"corp\"\r\n\r\n", 1, &v),
	    UPSTREAM_AUTH);
	assert_string_equal(v.scheme, "Basic");
	upstream_why(&v, "proxy:3128", 1, why, sizeof why);
	assert_string_equal(why, "the upstream proxy proxy:3128 refused the "
	    "credentials (407 Proxy Authentication Required)");
	upstream_why(&v, "proxy:3128", 0, why, sizeof why);
	assert_non_null(strstr(why, "wants credentials (407 "));
	assert_non_null(strstr(why, "upstream-auth FILE"));
	assert_int_equal(answer("HTTP/1.1 407 x\r\nProxy-Authenticate: "
	    "Negotiate\r\nProxy-Authenticate: NTLM\r\n\r\n", 0, &v),
	    UPSTREAM_AUTH);
	upstream_why(&v, "proxy:3128", 1, why, sizeof why);
	assert_string_equal(why, "the upstream proxy proxy:3128 wants "
	    "Negotiate authentication (407 x), and pinhole speaks Basic only");
	assert_string_equal(upstream_label(v.answer), "upstream-auth");
	assert_int_equal(answer("HTTP/1.1 403 Forbidden\r\n\r\n", 1, &v),
	    UPSTREAM_DENIED);
	upstream_why(&v, "proxy:3128", 1, why, sizeof why);
	assert_string_equal(why, "the upstream proxy proxy:3128 refused it "
	    "(403 Forbidden)");
	assert_string_equal(upstream_label(v.answer), "upstream-denied");
	assert_int_equal(answer("HTTP/1.1 503 Service Unavailable\r\n\r\n", 1,
	    &v), UPSTREAM_FAILED);
	assert_string_equal(upstream_label(v.answer), "upstream-failed");
	assert_int_equal(answer("HTTP/1.1 101 Switching\r\n\r\n", 1, &v),
	    UPSTREAM_FAILED);

	/* Forwarded: the origin's answers pass, the upstream's do not. */
	assert_int_equal(answer("HTTP/1.1 200 OK\r\n\r\n", 0, &v),
	    UPSTREAM_RELAY);
	assert_int_equal(answer("HTTP/1.1 403 Forbidden\r\n\r\n", 0, &v),
	    UPSTREAM_RELAY);
	assert_int_equal(answer("HTTP/1.1 404 Not Found\r\nX-Squid-Error: x"
	    "\r\n\r\n", 0, &v), UPSTREAM_FAILED);
	assert_int_equal(answer("HTTP/1.1 403 Forbidden\r\nX-Squid-Error: "
	    "ERR_ACCESS_DENIED 0\r\n\r\n", 0, &v), UPSTREAM_DENIED);
	assert_int_equal(answer("HTTP/1.1 502 Bad Gateway\r\nProxy-Status: "
	    "corp; error=dns_error\r\n\r\n", 0, &v), UPSTREAM_FAILED);
	assert_int_equal(answer("HTTP/1.1 502 Bad Gateway\r\nProxy-Status: "
	    "corp; received-status=502\r\n\r\n", 0, &v), UPSTREAM_RELAY);
	assert_int_equal(answer("HTTP/1.1 302 Found\r\nX-Squid-Error: x\r\n"
	    "\r\n", 0, &v), UPSTREAM_RELAY);
	/* A reason phrase is kept as printable ASCII. */
	assert_int_equal(answer("HTTP/1.1 403 No\xff" "way\r\n\r\n", 1, &v),
	    UPSTREAM_DENIED);
	assert_string_equal(v.reason, "No?way");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_credentials),
		cmocka_unit_test(test_connect_head),
		cmocka_unit_test(test_answers),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
