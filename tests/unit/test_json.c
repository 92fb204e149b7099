/*
 * Unit tests for lib/json's reader with a caller's members and store,
 * where its callers differ (white space, integer range), and for its
 * writer into a caller's buffer.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lib/json.h"

#define TEST_MEMBERS	3

/* Read text with a reader of TEST_MEMBERS members and a store of size. */
static int
test_read(const char *text, size_t size, int one_line, int full_range,
    struct json_member *m, size_t *n)
{
	static char		 store[256];
	struct json_reader	 r = { m, TEST_MEMBERS, store, size, one_line,
				    full_range };
	const char		*err = NULL;
	int			 rv;

	rv = json_read(&r, text, strlen(text), n, &err);
	assert_true(rv == 0 ? err == NULL : err != NULL && *n == 0);
	return (rv);
}

/* White space and integer range, as each kind of caller wants them. */
static void
test_json_read_options(void **state)
{
	static const struct {
		const char	*in;
		int		 ok[4];	/* plain, one_line, full_range, both */
	} t[] = {
		{ "{\"a\":1}", { 1, 1, 1, 1 } },
		{ " {\t\"a\" :\t1 , \"b\":2 } ", { 1, 1, 1, 1 } },
		{ "{\"a\":1}\n", { 1, 0, 1, 0 } },
		{ "{\r\n\"a\":1}", { 1, 0, 1, 0 } },
		{ "{\"a\":\"\n\"}", { 0, 0, 0, 0 } },
		{ "{\"a\":999999999999999}", { 1, 1, 1, 1 } },
		{ "{\"a\":-999999999999999}", { 1, 1, 1, 1 } },
		{ "{\"a\":1000000000000000}", { 0, 0, 1, 1 } },
		{ "{\"a\":9223372036854775807}", { 0, 0, 1, 1 } },
		{ "{\"a\":-9223372036854775807}", { 0, 0, 1, 1 } },
		{ "{\"a\":9223372036854775808}", { 0, 0, 0, 0 } },
		{ "{\"a\":-9223372036854775808}", { 0, 0, 0, 0 } },
		{ "{\"a\":1,\"a\":2}", { 0, 0, 0, 0 } },
		{ "{\"a\":1,\"b\":2,\"c\":3}", { 1, 1, 1, 1 } },
		{ "{\"a\":1,\"b\":2,\"c\":3,\"d\":4}", { 0, 0, 0, 0 } },
	};
	struct json_member	m[TEST_MEMBERS];
	size_t			i, j, n;

	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		for (j = 0; j < 4; j++) {
			if ((test_read(t[i].in, 256, j & 1, j >> 1, m, &n) ==
			    0) != t[i].ok[j])
				fail_msg("%s: %s with options %zu", t[i].in,
				    t[i].ok[j] ? "refused" : "accepted", j);
		}
	}
}

/* Each value's text as written, and the store's bound. */
static void
test_json_read_raw(void **state)
{
	struct json_member	m[TEST_MEMBERS];
	size_t			n;

	assert_int_equal(test_read("{\"s\" : \"a\\u00e9\\\"\", \"n\":-12,"
	    "\"t\":true}", 256, 1, 1, m, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(m[0].str, "a\xc3\xa9\"");
	assert_int_equal(m[0].rawlen, 9);
	assert_memory_equal(m[0].raw, "a\\u00e9\\\"", 9);
	assert_int_equal(m[1].num, -12);
	assert_int_equal(m[1].rawlen, 3);
	assert_memory_equal(m[1].raw, "-12", 3);
	assert_int_equal(m[2].rawlen, 4);
	assert_memory_equal(m[2].raw, "true", 4);
	assert_ptr_equal(json_find(m, n, "t"), &m[2]);
	assert_null(json_find(m, n, "x"));
	/* "abc\0" and "defgh\0" take 10 bytes. */
	assert_int_equal(test_read("{\"abc\":\"defgh\"}", 9, 0, 0, m, &n), -1);
	assert_int_equal(test_read("{\"abc\":\"defgh\"}", 10, 0, 0, m, &n), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_read_options),
		cmocka_unit_test(test_json_read_raw),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
