/*
 * Unit tests for the decider's protocol (proxy/wire/decidermsg.c): its
 * URL, the question as JSON (read back by the JSON reader), and the
 * answer reader, accepting each decision and refusing what does not
 * belong.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "lib/json.h"
#include "proxy/wire/decidermsg.h"

/* Read an answer given as a C string. */
static int
answer(const char *s, struct decider_answer *a, const char **errstr)
{
	*errstr = NULL;
	return (decider_answer_parse(s, strlen(s), a, errstr));
}

static void
test_url(void **state)
{
	struct decider_url	 u;
	const char		*errstr;

	assert_int_equal(decider_url_parse("http://127.0.0.1:8080/decide",
	    &u, &errstr), 0);
	assert_int_equal(u.kind, DECIDER_TCP);
	assert_string_equal(u.addr, "127.0.0.1");
	assert_int_equal(u.port, 8080);
	assert_string_equal(u.path, "/decide");
	assert_int_equal(decider_url_parse("http://[::1]", &u, &errstr), 0);
	assert_string_equal(u.addr, "::1");
	assert_int_equal(u.port, 80);
	assert_string_equal(u.path, "/");
	assert_int_equal(decider_url_parse("unix:/run/d.sock", &u, &errstr),
	    0);
	assert_int_equal(u.kind, DECIDER_UNIX);
	assert_string_equal(u.sock, "/run/d.sock");
	assert_int_equal(decider_url_parse("/run/d.sock", &u, &errstr), 0);
	assert_string_equal(u.sock, "/run/d.sock");
	assert_int_equal(decider_url_parse("http://example.com/", &u,
	    &errstr), -1);
	assert_non_null(strstr(errstr, "a name needs https://"));
	assert_int_equal(decider_url_parse("https://Decide.Example.NET/q",
	    &u, &errstr), 0);
	assert_int_equal(u.kind, DECIDER_TLS);
	assert_string_equal(u.addr, "decide.example.net");
	assert_int_equal(u.port, 443);
	assert_string_equal(u.path, "/q");
	assert_int_equal(decider_url_parse("https://127.0.0.1:8443", &u,
	    &errstr), 0);
	assert_string_equal(u.addr, "127.0.0.1");
	assert_int_equal(u.port, 8443);
	assert_string_equal(u.path, "/");
	assert_int_equal(decider_url_parse("https://[::1]:8443/d", &u,
	    &errstr), 0);
	assert_string_equal(u.addr, "::1");
	assert_int_equal(decider_url_parse("https://bad_name!/", &u,
	    &errstr), -1);
	assert_int_equal(decider_url_parse("https://0x7f.1/", &u, &errstr),
	    -1);
	assert_int_equal(decider_url_parse("ftp://127.0.0.1/", &u, &errstr),
	    -1);
	assert_int_equal(decider_url_parse("http://127.0.0.1:0/", &u,
	    &errstr), -1);
	assert_int_equal(decider_url_parse("http://127.0.0.1:99999/", &u,
	    &errstr), -1);
	assert_int_equal(decider_url_parse("http://127.0.0.1x/", &u,
	    &errstr), -1);
	assert_int_equal(decider_url_parse("http://127.0.0.1/a b", &u,
	    &errstr), -1);
	assert_int_equal(decider_url_parse("relative.sock", &u, &errstr), -1);
}

static void
test_question(void **state)
{
	struct decider_question	 q;
	struct json_writer	 w;
	struct json_obj		 o;
	const char		*errstr;
	int64_t			 v;

	memset(&q, 0, sizeof q);
	q.request = "r1a2b";
	q.session = "s1";
	q.sandbox = "sb1";
	q.cmd = "curl \"x\"";
	q.pid = 42;
	q.host = "example.com";
	q.port = 443;
	q.via = "connect";
	q.refused = "no rule allows example.com:443";
	q.reason = "fetch\nthe docs";
	q.timeout = 30;
	json_writer_init(&w, DECIDER_BODY_MAX);
	decider_question_write(&w, &q);
	assert_false(w.failed);
	assert_int_equal(json_parse(w.buf, w.len, &o, &errstr), 0);
	assert_string_equal(json_get_str(&o, "request"), "r1a2b");
	assert_string_equal(json_get_str(&o, "cmd"), "curl \"x\"");
	assert_string_equal(json_get_str(&o, "reason"), "fetch\nthe docs");
	assert_string_equal(json_get_str(&o, "host"), "example.com");
	assert_int_equal(json_get_int(&o, "port", &v), 0);
	assert_int_equal(v, 443);
	assert_int_equal(json_get_int(&o, "pid", &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(json_get_int(&o, "timeout", &v), 0);
	assert_int_equal(v, 30);
	assert_null(json_get(&o, "method"));
	json_writer_free(&w);

	/* No sandbox, no pid: left out. */
	q.sandbox = q.cmd = NULL;
	q.pid = -1;
	q.method = "GET";
	q.path = "/x?y";
	json_writer_init(&w, DECIDER_BODY_MAX);
	decider_question_write(&w, &q);
	assert_int_equal(json_parse(w.buf, w.len, &o, &errstr), 0);
	assert_null(json_get(&o, "pid"));
	assert_null(json_get(&o, "sandbox"));
	assert_string_equal(json_get_str(&o, "path"), "/x?y");
	json_writer_free(&w);
}

static void
test_answer_good(void **state)
{
	struct decider_answer	 a;
	const char		*errstr;

	assert_int_equal(answer("{\"decision\":\"allow\"}", &a, &errstr), 0);
	assert_int_equal(a.decision, DECIDER_ALLOW);
	assert_int_equal(a.scope, DECIDER_ONCE);
	assert_int_equal(a.ttl, 0);
	assert_string_equal(a.approver, "");
	assert_int_equal(answer(" {\"decision\":\"allow\",\"scope\":\"always\","
	    "\"ttl\":3600,\"approver\":\"alice@example\"}\r\n", &a, &errstr),
	    0);
	assert_int_equal(a.scope, DECIDER_ALWAYS);
	assert_int_equal(a.ttl, 3600);
	assert_string_equal(a.approver, "alice@example");
	assert_int_equal(answer("{\"decision\":\"allow\",\"scope\":\"session\""
	    "}", &a, &errstr), 0);
	assert_int_equal(a.scope, DECIDER_SESSION);
	assert_int_equal(answer("{\"decision\":\"deny\",\"note\":\"use the "
	    "mirror, caf\\u00e9\",\"approver\":\"bob\"}", &a, &errstr), 0);
	assert_int_equal(a.decision, DECIDER_DENY);
	assert_string_equal(a.note, "use the mirror, caf\xc3\xa9");
	assert_string_equal(a.approver, "bob");
	assert_int_equal(answer("{\"decision\":\"ask\"}", &a, &errstr), 0);
	assert_int_equal(a.decision, DECIDER_ASK);
}

static void
test_answer_bad(void **state)
{
	static const char	*bad[] = {
		"",
		"allow",
		"[\"allow\"]",
		"{\"decision\":\"allow\"",
		"{}",
		"{\"decision\":1}",
		"{\"decision\":\"yes\"}",
		"{\"decision\":\"Allow\"}",
		"{\"decision\":\"allow\",\"decision\":\"deny\"}",
		"{\"decision\":\"allow\",\"scope\":\"forever\"}",
		"{\"decision\":\"allow\",\"scope\":1}",
		"{\"decision\":\"allow\",\"ttl\":-1}",
		"{\"decision\":\"allow\",\"ttl\":\"1h\"}",
		"{\"decision\":\"allow\",\"ttl\":99999999999}",
		"{\"decision\":\"allow\",\"note\":\"x\"}",
		"{\"decision\":\"deny\",\"scope\":\"once\"}",
		"{\"decision\":\"ask\",\"ttl\":5}",
		"{\"decision\":\"allow\",\"extra\":true}",
		"{\"decision\":\"allow\",\"approver\":\"a\\nb\"}",
		"{\"decision\":\"allow\",\"approver\":\"caf\\u00e9\"}",
		("{\"decision\":\"allow\",\"approver\":"
		    "\"0123456789abcdef0123456789abcdefX\"}"),
		"{\"decision\":\"deny\",\"note\":\"\\u001b[31m\"}",
		"{\"decision\":\"deny\",\"note\":\"\\u202e\"}",
		"{\"decision\":\"allow\"} {}",
	};
	struct decider_answer	 a;
	const char		*errstr;
	char			 big[DECIDER_BODY_MAX + 64];
	size_t			 i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_equal(answer(bad[i], &a, &errstr), -1);
		assert_non_null(errstr);
		assert_int_equal(a.decision, DECIDER_ALLOW);
		assert_string_equal(a.approver, "");
	}
	/* A note of 201 bytes; a body past the bound. */
	snprintf(big, sizeof big, "{\"decision\":\"deny\",\"note\":\"%0201d\"}",
	    0);
	assert_int_equal(answer(big, &a, &errstr), -1);
	memset(big, ' ', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	memcpy(big, "{\"decision\":\"ask\"}", 18);
	assert_int_equal(answer(big, &a, &errstr), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_url),
		cmocka_unit_test(test_question),
		cmocka_unit_test(test_answer_good),
		cmocka_unit_test(test_answer_bad),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
