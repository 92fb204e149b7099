/*
 * Unit tests for lib/json's reader with a caller's members and store,
 * where its callers differ (white space, integer range), and for its
 * writer into a caller's buffer and its arrays of objects.
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
	struct json_reader	 r = { .m = m, .max = TEST_MEMBERS,
				    .store = store, .size = size,
				    .one_line = one_line,
				    .full_range = full_range };
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

/* Write a string value into a fixed buffer with str_max bytes kept. */
static const char *
test_quote(const char *s, size_t str_max, int *cut)
{
	static char		buf[64];
	struct json_writer	w;

	json_writer_buf(&w, buf, sizeof buf);
	w.str_max = str_max;
	json_put_quoted(&w, s, strlen(s));
	assert_false(w.failed);
	assert_ptr_equal(w.buf, buf);
	assert_int_equal(w.len, strlen(buf));
	*cut = w.cut;
	json_writer_free(&w);
	return (buf);
}

/* Escapes, and values cut at a character boundary after str_max bytes. */
static void
test_json_write_quoted(void **state)
{
	int	cut;

	assert_string_equal(test_quote("a\"b\\c\x01\x7f\xc2\x85\xe2\x80\xae"
	    "\xff\xc3\xa9z", 0, &cut), "\"a\\\"b\\\\c\\u0001\\u007f"
	    "\\u0085\\u202e\\ufffd\xc3\xa9z\"");
	assert_false(cut);
	assert_string_equal(test_quote("abcd", 4, &cut), "\"abcd\"");
	assert_false(cut);
	assert_string_equal(test_quote("abcde", 4, &cut), "\"abcd...\"");
	assert_true(cut);
	assert_string_equal(test_quote("abc\xc3\xa9" "de", 4, &cut),
	    "\"abc\xc3\xa9...\"");
	assert_true(cut);
	assert_string_equal(test_quote("abc\xff\xff" "e", 4, &cut),
	    "\"abc\\ufffd...\"");
	assert_true(cut);
}

/* A caller's buffer is never grown: what does not fit fails the writer. */
static void
test_json_write_fixed(void **state)
{
	struct json_writer	w;
	char			buf[24];

	memset(buf, 'x', sizeof buf);
	json_writer_buf(&w, buf, 15);
	json_open(&w);
	json_put_uint(&w, "n", 18446744073709551615ULL);
	assert_true(w.failed);
	assert_int_equal(buf[15], 'x');
	/* 16 bytes and the NUL fit exactly. */
	json_writer_buf(&w, buf, 17);
	json_open(&w);
	json_put_uint(&w, "n", 1844674407ULL);
	json_close(&w);
	assert_false(w.failed);
	assert_string_equal(buf, "{\"n\":1844674407}");
	json_close(&w);
	assert_true(w.failed);
	assert_int_equal(buf[17], 'x');
	json_writer_free(&w);
}

/* Nested members: only when asked, checked in full, kept as their text. */
static void
test_json_read_nested(void **state)
{
	static const struct {
		const char	*in;
		int		 ok;
		const char	*raw;	/* of member "a" */
	} t[] = {
		{ "{\"a\":{\"b\":[1.5e3,-0.25,true,null,\"x\"]}}", 1,
		    "{\"b\":[1.5e3,-0.25,true,null,\"x\"]}" },
		{ "{\"a\":[ ]}", 1, "[ ]" },
		{ "{\"a\":[1,]}", 0, NULL },
		{ "{\"a\":{\"b\"}}", 0, NULL },
		{ "{\"a\":[01]}", 0, NULL },
		{ "{\"a\":[1.]}", 0, NULL },
		{ "{\"a\":[\"\\u0000\"]}", 0, NULL },
		{ "{\"a\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}",
		    0, NULL },
	};
	static char		 store[256];
	struct json_member	 m[TEST_MEMBERS];
	struct json_reader	 r = { .m = m, .max = TEST_MEMBERS,
				    .store = store, .size = sizeof store };
	const char		*err;
	size_t			 i, n;

	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		r.nested = 0;
		assert_int_equal(json_read(&r, t[i].in, strlen(t[i].in), &n,
		    &err), -1);
		r.nested = 1;
		assert_int_equal(json_read(&r, t[i].in, strlen(t[i].in), &n,
		    &err), t[i].ok ? 0 : -1);
		if (!t[i].ok)
			continue;
		assert_int_equal(m[0].type, JSON_NULL);
		assert_int_equal(m[0].nested, t[i].raw[0]);
		assert_int_equal(m[0].rawlen, strlen(t[i].raw));
		assert_memory_equal(m[0].raw, t[i].raw, m[0].rawlen);
	}
}

/* Integers at their edges, in decimal. */
static void
test_json_integers(void **state)
{
	struct json_writer	w;

	json_writer_init(&w, 0);
	json_open(&w);
	json_put_int(&w, "a", 0);
	json_put_int(&w, "b", -7);
	json_put_int(&w, "c", INT64_MIN);
	json_put_int(&w, "d", INT64_MAX);
	json_put_uint(&w, "e", 0);
	json_put_uint(&w, "f", 18446744073709551615ULL);
	json_close(&w);
	assert_false(w.failed);
	assert_string_equal(w.buf, "{\"a\":0,\"b\":-7,"
	    "\"c\":-9223372036854775808,\"d\":9223372036854775807,"
	    "\"e\":0,\"f\":18446744073709551615}");
	json_writer_free(&w);
}

/* An empty array, and members after an array. */
static void
test_json_array(void **state)
{
	struct json_writer	w;

	json_writer_init(&w, 0);
	json_open(&w);
	json_open_array(&w, "a");
	json_close_array(&w);
	json_put_int(&w, "n", 1);
	json_open_array(&w, "b");
	json_open_elem(&w);
	json_close(&w);
	json_open_elem(&w);
	json_put_bool(&w, "x", 0);
	json_close(&w);
	json_close_array(&w);
	json_close(&w);
	assert_string_equal(w.buf, "{\"a\":[],\"n\":1,\"b\":[{},{\"x\":false}]}");
	json_writer_free(&w);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_read_options),
		cmocka_unit_test(test_json_read_raw),
		cmocka_unit_test(test_json_read_nested),
		cmocka_unit_test(test_json_write_quoted),
		cmocka_unit_test(test_json_write_fixed),
		cmocka_unit_test(test_json_array),
		cmocka_unit_test(test_json_integers),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
