/*
 * The strict reader of audit lines, and the reader of their chain fields.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "proxy/audit/audit.h"

/* Parse a line held in a buffer of its exact size. */
static int
parse(const char *line, struct audit_rec *rec, char *store, size_t storelen)
{
	return (audit_rec_parse(line, strlen(line), store, storelen, rec));
}

/* Lines that are ours, and what they hold. */
static void
test_good(void **state)
{
	struct audit_rec	 rec;
	char			 store[256];
	const struct json_member *f;

	assert_int_equal(parse("{\"schema\":1,\"host\":\"a\\\"b\\\\c\","
	    "\"port\":443,\"t\":true,\"f\":false,\"z\":null,\"neg\":-5}\n",
	    &rec, store, sizeof store), 0);
	assert_int_equal(rec.n, 7);
	assert_string_equal(audit_rec_str(&rec, "host"), "a\"b\\c");
	assert_int_equal(audit_rec_num(&rec, "port"), 443);
	assert_int_equal(audit_rec_num(&rec, "neg"), -5);
	assert_int_equal(audit_rec_num(&rec, "host"), -1);
	assert_null(audit_rec_str(&rec, "port"));
	assert_null(audit_rec_get(&rec, "missing"));
	f = audit_rec_get(&rec, "t");
	assert_int_equal(f->type, JSON_BOOL);
	assert_int_equal(f->num, 1);
	assert_int_equal(audit_rec_get(&rec, "z")->type, JSON_NULL);
	f = audit_rec_get(&rec, "host");
	assert_int_equal(f->rawlen, 7);
	assert_memory_equal(f->raw, "a\\\"b\\\\c", 7);
	/* Escapes decode to UTF-8, surrogate pairs included. */
	assert_int_equal(parse("{\"d\":\"\\u001b\\u00e9\\u20ac\\ud83d\\ude00"
	    "\\/\\n\xc3\xa9\"}", &rec, store, sizeof store), 0);
	assert_string_equal(audit_rec_str(&rec, "d"),
	    "\033\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80/\n\xc3\xa9");
	assert_int_equal(parse(" { } ", &rec, store, sizeof store), 0);
	assert_int_equal(rec.n, 0);
	assert_int_equal(parse("{\"n\":9223372036854775807}", &rec, store,
	    sizeof store), 0);
	assert_int_equal(audit_rec_num(&rec, "n"), 9223372036854775807LL);
}

/* Everything else is refused. */
static void
test_bad(void **state)
{
	static const char	*bad[] = {
		"", "{", "}", "[]", "{\"a\":1", "{\"a\":1}x", "{\"a\":1}\n\n",
		"{\"a\":1,}", "{,\"a\":1}", "{\"a\" 1}", "{a:1}", "{'a':1}",
		"{\"a\":01}", "{\"a\":1.5}", "{\"a\":1e3}", "{\"a\":-}",
		"{\"a\":+1}", "{\"a\":9223372036854775808}", "{\"a\":tru}",
		"{\"a\":True}", "{\"a\":{}}", "{\"a\":[1]}", "{\"a\":1,\"a\":2}",
		"{\"a\":\"\x01\"}", "{\"a\":\"\n\"}", "{\"a\":\"\xff\"}",
		"{\"a\":\"\xc0\xaf\"}", "{\"a\":\"\xed\xa0\x80\"}",
		"{\"a\":\"\xe2\x82\"}", "{\"a\":\"\\x\"}", "{\"a\":\"\\u12\"}",
		"{\"a\":\"\\u0000\"}", "{\"a\":\"\\udc00\"}",
		"{\"a\":\"\\ud800\"}", "{\"a\":\"\\ud800\\u0041\"}",
		"{\"a\":\"abc}", "{\"a\":\"abc\\\"}", "{\"a\":1}\r",
	};
	struct audit_rec	 rec;
	char			 store[256];
	size_t			 i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		if (parse(bad[i], &rec, store, sizeof store) != -1)
			fail_msg("accepted: %s", bad[i]);
	}
}

/* Bounded: too many fields, or a store too small, is a refusal. */
static void
test_bounds(void **state)
{
	struct audit_rec	 rec;
	char			 line[2048], store[2048], *p = line;
	int			 i;

	p += sprintf(p, "{");
	for (i = 0; i < AUDIT_REC_MAX + 1; i++)
		p += sprintf(p, "%s\"k%d\":%d", i ? "," : "", i, i);
	sprintf(p, "}");
	assert_int_equal(parse(line, &rec, store, sizeof store), -1);
	assert_int_equal(parse("{\"abc\":\"defgh\"}", &rec, store, 9), -1);
	assert_int_equal(parse("{\"abc\":\"defgh\"}", &rec, store, 10), 0);
}

/* The chain fields are read from the end of a line. */
static void
test_link(void **state)
{
	struct audit_link	 lk;
	char			 line[512], h1[65], h2[65];

	memset(h1, 'a', 64);
	h1[64] = '\0';
	memset(h2, '7', 64);
	h2[64] = '\0';
	snprintf(line, sizeof line, "{\"event\":\"x\",\"detail\":\"%s\","
	    "\"seq\":42,\"chain\":\"%s\"}", h1, h2);
	assert_int_equal(audit_link_parse(line, strlen(line), &lk), 0);
	assert_int_equal(lk.seq, 42);
	assert_int_equal(lk.has_prev, 0);
	assert_int_equal(lk.chain[0], 0x77);
	assert_int_equal(lk.hashed, strstr(line, ",\"chain\"") - line);
	snprintf(line, sizeof line, "{\"event\":\"x\",\"prev_chain\":\"%s\","
	    "\"seq\":1,\"chain\":\"%s\"}", h1, h2);
	assert_int_equal(audit_link_parse(line, strlen(line), &lk), 0);
	assert_int_equal(lk.has_prev, 1);
	assert_int_equal(lk.prev[31], 0xaa);
	snprintf(line, sizeof line, "{\"seq\":0,\"chain\":\"%s\"}", h2);
	assert_int_equal(audit_link_parse(line, strlen(line), &lk), -1);
	snprintf(line, sizeof line, "{\"seq\":01,\"chain\":\"%s\"}", h2);
	assert_int_equal(audit_link_parse(line, strlen(line), &lk), -1);
	snprintf(line, sizeof line, "{\"seq\":1,\"chain\":\"%.63s\"}", h2);
	assert_int_equal(audit_link_parse(line, strlen(line), &lk), -1);
	snprintf(line, sizeof line, "{\"seq\":1,\"chain\":\"%sA\"}", h2);
	assert_int_equal(audit_link_parse(line, strlen(line), &lk), -1);
	assert_int_equal(audit_link_parse("\"}", 2, &lk), -1);
}

/* Sizes for --log-max-size. */
static void
test_size(void **state)
{
	long long	v;

	assert_int_equal(audit_parse_size("0", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(audit_parse_size("100M", &v), 0);
	assert_int_equal(v, 100LL << 20);
	assert_int_equal(audit_parse_size("2g", &v), 0);
	assert_int_equal(v, 2LL << 30);
	assert_int_equal(audit_parse_size("512K", &v), 0);
	assert_int_equal(v, 512 << 10);
	assert_int_equal(audit_parse_size("-1", &v), -1);
	assert_int_equal(audit_parse_size("1T", &v), -1);
	assert_int_equal(audit_parse_size("M", &v), -1);
	assert_int_equal(audit_parse_size("99999999999999999999", &v), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_link),
		cmocka_unit_test(test_size),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
