/*
 * Unit tests for pinhole doctor's report: which verdicts keep pinhole
 * run from working, the text and the JSON.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/doctor.h"
#include "lib/json.h"

/* Three checks: two needed, one not. */
static void
checks(struct doctor_check *c)
{
	memset(c, 0, 3 * sizeof *c);
	c[0].name = "userns";
	c[1].name = "tproxy";
	c[2].name = "policy";
	c[0].required = c[2].required = 1;
	doctor_set(&c[0], DOCTOR_OK, "made in %d ms", 3);
	doctor_set(&c[1], DOCTOR_WARN, "no capture rule");
	doctor_set(&c[2], DOCTOR_OK, "/p parses");
}

/* Only a needed check that failed or was not tried fails the whole. */
static void
test_doctor_ok(void **state)
{
	struct doctor_check	c[3];

	checks(c);
	assert_string_equal(c[0].detail, "made in 3 ms");
	assert_true(doctor_ok(c, 3));
	c[1].verdict = DOCTOR_FAIL;
	assert_true(doctor_ok(c, 3));
	c[2].verdict = DOCTOR_WARN;
	assert_true(doctor_ok(c, 3));
	c[2].verdict = DOCTOR_SKIP;
	assert_false(doctor_ok(c, 3));
	c[2].verdict = DOCTOR_FAIL;
	assert_false(doctor_ok(c, 3));
	assert_true(doctor_ok(c, 2));
}

/* The text: aligned, the fix under its check, the verdict last. */
static void
test_doctor_print(void **state)
{
	struct doctor_check	 c[3];
	char			*buf = NULL;
	size_t			 len = 0;
	FILE			*f;

	checks(c);
	doctor_set(&c[2], DOCTOR_FAIL, "/p:2: unknown directive 'x\033'");
	doctor_fix(&c[2], "edit line %d of %s", 2, "/p");
	assert_non_null(f = open_memstream(&buf, &len));
	doctor_print(f, c, 3);
	fclose(f);
	assert_string_equal(buf,
	    "userns  ok    made in 3 ms\n"
	    "tproxy  warn  no capture rule (pinhole run works without it)\n"
	    "policy  FAIL  /p:2: unknown directive 'x\\x1b'\n"
	    "              fix: edit line 2 of /p\n"
	    "pinhole run will not work: 1 check failed\n");
	free(buf);
}

/* The JSON: ok, and an array of checks; a fix or null. */
static void
test_doctor_json(void **state)
{
	struct doctor_check	c[3];
	struct json_writer	w;

	checks(c);
	doctor_fix(&c[1], "modprobe \"x\"");
	json_writer_init(&w, 0);
	doctor_json(&w, c, 3);
	assert_false(w.failed);
	assert_string_equal(w.buf, "{\"ok\":true,\"checks\":["
	    "{\"name\":\"userns\",\"verdict\":\"ok\",\"required\":true,"
	    "\"detail\":\"made in 3 ms\",\"fix\":null},"
	    "{\"name\":\"tproxy\",\"verdict\":\"warn\",\"required\":false,"
	    "\"detail\":\"no capture rule\",\"fix\":\"modprobe \\\"x\\\"\"},"
	    "{\"name\":\"policy\",\"verdict\":\"ok\",\"required\":true,"
	    "\"detail\":\"/p parses\",\"fix\":null}]}");
	json_writer_free(&w);
	c[0].verdict = DOCTOR_FAIL;
	json_writer_init(&w, 0);
	doctor_json(&w, c, 1);
	assert_string_equal(w.buf, "{\"ok\":false,\"checks\":["
	    "{\"name\":\"userns\",\"verdict\":\"fail\",\"required\":true,"
	    "\"detail\":\"made in 3 ms\",\"fix\":null}]}");
	json_writer_free(&w);
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(test_doctor_ok),
		cmocka_unit_test(test_doctor_print),
		cmocka_unit_test(test_doctor_json),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
