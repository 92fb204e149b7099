/*
 * RELP: the frames sent, and the reading of the collector's frames,
 * answers and offers.
 */
#include "config.h"

#include <sys/types.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "proxy/audit/relp.h"

/* Frame msg as cmd; compare with what is expected. */
static void
frame(uint32_t txnr, const char *cmd, const char *msg, const char *want)
{
	char	buf[RELP_HEAD_MAX + 64];
	size_t	n;

	memset(buf, '#', sizeof buf);
	memcpy(buf + RELP_HEAD_MAX, msg, strlen(msg));
	n = relp_frame(buf, txnr, cmd, strlen(msg));
	assert_int_equal(n, strlen(want));
	assert_memory_equal(buf, want, n);
}

static void
test_frame(void **state)
{
	(void)state;
	frame(1, "open", "relp_version=0", "1 open 14 relp_version=0\n");
	frame(2, "syslog", "<14>1 x", "2 syslog 7 <14>1 x\n");
	frame(999999999, "syslog", "m", "999999999 syslog 1 m\n");
	frame(12, "close", "", "12 close 0\n");
	assert_int_equal(relp_txnr_next(1), 2);
	assert_int_equal(relp_txnr_next(RELP_TXNR_MAX), 1);
}

/* A head with the largest number still fits before the data. */
static void
test_frame_long(void **state)
{
	char	buf[RELP_HEAD_MAX + 1000 + 1], want[64];
	size_t	n, len = sizeof buf - RELP_HEAD_MAX - 1;

	(void)state;
	memset(buf + RELP_HEAD_MAX, 'x', len);
	n = relp_frame(buf, 999999999, "syslog", len);
	snprintf(want, sizeof want, "999999999 syslog %zu x", len);
	assert_memory_equal(buf, want, strlen(want));
	assert_int_equal(n, strlen(want) - 1 + len + 1);
	assert_int_equal(buf[n - 1], '\n');
}

/* Parse s whole: the frame's length, and its parts. */
static ssize_t
parse(const char *s, struct relp_frame *f, const char **why)
{
	*why = NULL;
	return (relp_frame_parse(s, strlen(s), f, why));
}

static void
test_parse(void **state)
{
	struct relp_frame	 f;
	const char		*why;
	const char		*s = "3 rsp 6 200 OK\n4 rsp 6 200 OK\n";

	(void)state;
	assert_int_equal(parse(s, &f, &why), 15);
	assert_int_equal(f.txnr, 3);
	assert_string_equal(f.cmd, "rsp");
	assert_int_equal(f.len, 6);
	assert_memory_equal(f.data, "200 OK", 6);
	assert_int_equal(parse(s + 15, &f, &why), 15);
	assert_int_equal(f.txnr, 4);
	assert_int_equal(parse("0 serverclose 0\n", &f, &why), 16);
	assert_int_equal(f.txnr, 0);
	assert_string_equal(f.cmd, "serverclose");
	assert_int_equal(f.len, 0);
	/* Data may hold LFs: its length, not a line, ends it. */
	assert_int_equal(parse("1 rsp 10 200 OK\na=b\n", &f, &why), 20);
	assert_int_equal(f.len, 10);
}

/* Every prefix of a frame waits for more; none is an error. */
static void
test_parse_short(void **state)
{
	struct relp_frame	 f;
	const char		*why = NULL;
	const char		*s = "123456789 rsp 12 200 OK\nx=1,2\n";
	size_t			 i;

	(void)state;
	for (i = 0; i < strlen(s); i++)
		assert_int_equal(relp_frame_parse(s, i, &f, &why), 0);
	assert_int_equal(relp_frame_parse(s, i, &f, &why), (ssize_t)i);
	assert_null(why);
}

static void
test_parse_bad(void **state)
{
	static const char *const bad[] = {
		"x rsp 6 200 OK\n",		/* no txnr */
		"1234567890 rsp 6 200 OK\n",	/* txnr of 10 digits */
		"1  rsp 6 200 OK\n",		/* no command */
		"1 r5p 6 200 OK\n",		/* not letters */
		"1 abcdefghijklmnopqrstuvwxyzabcdefg 0\n", /* 33 letters */
		"1 rsp x\n",			/* no length */
		"1 rsp 1234567890 x\n",		/* length of 10 digits */
		"1 rsp 6200 OK\n",		/* no space before data */
		"1 rsp 6 200 OKX",		/* no LF after the data */
		"1 rsp 0 \n",			/* a space and no data */
		"1 rsp 4097 ",			/* more than any answer */
		"-1 rsp 0\n",
	};
	struct relp_frame	 f;
	const char		*why;
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		why = NULL;
		assert_int_equal(relp_frame_parse(bad[i], strlen(bad[i]), &f,
		    &why), -1);
		assert_non_null(why);
	}
}

static void
test_rsp(void **state)
{
	const char	*text, *offers;
	size_t		 tlen, olen;
	int		 code;
	const char	*s = "200 OK\nrelp_version=0\ncommands=syslog";

	(void)state;
	assert_int_equal(relp_rsp_parse(s, strlen(s), &code, &text, &tlen,
	    &offers, &olen), 0);
	assert_int_equal(code, 200);
	assert_int_equal(tlen, 2);
	assert_memory_equal(text, "OK", 2);
	assert_int_equal(olen, strlen("relp_version=0\ncommands=syslog"));
	assert_memory_equal(offers, "relp_version=0", 14);
	assert_int_equal(relp_rsp_parse("500", 3, &code, &text, &tlen,
	    &offers, &olen), 0);
	assert_int_equal(code, 500);
	assert_int_equal(tlen, 0);
	assert_int_equal(olen, 0);
	assert_int_equal(relp_rsp_parse("20", 2, &code, &text, &tlen,
	    &offers, &olen), -1);
	assert_int_equal(relp_rsp_parse("099 x", 5, &code, &text, &tlen,
	    &offers, &olen), -1);
	assert_int_equal(relp_rsp_parse("200OK", 5, &code, &text, &tlen,
	    &offers, &olen), -1);
	assert_int_equal(relp_rsp_parse("200 O\033K", 7, &code, &text, &tlen,
	    &offers, &olen), -1);
}

static void
test_offers(void **state)
{
	const char	*why;
	const char	*ok[] = {
		"relp_version=0\nrelp_software=librelp,1.11.0\ncommands=syslog",
		"commands=eventlog,syslog\nrelp_version=1\n",
	};
	const char	*bad[] = {
		"",
		"commands=syslog",			/* no version */
		"relp_version=\ncommands=syslog",	/* empty */
		"relp_version=0",			/* no commands */
		"relp_version=0\ncommands=sysl,yslog",
		"relp_version=0\ncommands",
		"relp_version=0\nxcommands=syslog",
	};
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof ok / sizeof ok[0]; i++)
		assert_int_equal(relp_offers_ok(ok[i], strlen(ok[i]), &why),
		    0);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		why = NULL;
		assert_int_equal(relp_offers_ok(bad[i], strlen(bad[i]), &why),
		    -1);
		assert_non_null(why);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frame),
		cmocka_unit_test(test_frame_long),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_short),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_rsp),
		cmocka_unit_test(test_offers),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
