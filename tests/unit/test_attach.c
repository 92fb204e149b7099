/*
 * The attach protocol's messages (proxy/wire/attachmsg.c): each kind read
 * and written back, and what is refused.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "proxy/wire/attachmsg.h"

/* Read a message; its op, or -1 with the error kept in *why. */
static int
parse(const char *s, struct attach_msg *m, const char **why)
{
	*why = NULL;
	if (attach_parse(s, strlen(s), m, why) == -1)
		return (-1);
	return ((int)m->op);
}

/* Every kind of message reads, and writes back as it was. */
static void
test_roundtrip(void **state)
{
	static const char *const msgs[] = {
		"{\"op\":\"attach\",\"cmd\":\"uv lock\"}",
		"{\"op\":\"config\",\"sandbox\":\"7\",\"ports\":\"80 443 22\","
		    "\"vsock\":true,\"guards\":\"d /a\\u000ah /b c\\u000a"
		    "s $SSH_AUTH_SOCK\\u000as ~/x\\u000as /r\\u000a\"}",
		"{\"op\":\"listeners\",\"pid\":42,\"fds\":\"proxy dns dns "
		    "capture udp raw\"}",
		"{\"op\":\"ok\"}",
		"{\"op\":\"exit\",\"status\":7}",
		"{\"op\":\"error\",\"error\":\"no\"}",
		"{\"op\":\"notice\",\"kind\":\"refused\",\"host\":\"x.test\","
		    "\"port\":443,\"via\":\"connect\",\"what\":\"GET /a\","
		    "\"text\":\"no rule matches\",\"ask\":true}",
	};
	static const char *const notices[] = {
		"{\"op\":\"attach\",\"cmd\":\"uv lock\",\"notices\":true}",
		"{\"op\":\"notice\",\"kind\":\"held\",\"host\":\"::1\","
		    "\"port\":8080,\"request\":\"r1a2b\",\"secs\":60}",
		"{\"op\":\"notice\",\"kind\":\"decided\",\"host\":\"y.test\","
		    "\"port\":0,\"text\":\"no\",\"request\":\"r1a2b\","
		    "\"state\":\"denied\",\"by\":\"uid 0 via cli\"}",
	};
	struct attach_msg	m;
	const char		*why;
	char			buf[ATTACH_MSG_MAX];
	size_t			i, len;

	(void)state;
	for (i = 0; i < sizeof msgs / sizeof msgs[0]; i++) {
		assert_int_equal(parse(msgs[i], &m, &why), (int)i);
		len = attach_build(&m, buf, sizeof buf);
		assert_int_equal(len, strlen(msgs[i]));
		assert_memory_equal(buf, msgs[i], len);
	}
	assert_int_equal(parse(msgs[1], &m, &why), ATTACH_CONFIG);
	assert_int_equal(m.nports, 3);
	assert_int_equal(m.ports[2], 22);
	assert_true(m.vsock);
	assert_string_equal(m.guards, "d /a\nh /b c\ns $SSH_AUTH_SOCK\ns ~/x\n"
	    "s /r\n");
	assert_int_equal(parse(msgs[2], &m, &why), ATTACH_LISTENERS);
	assert_int_equal(m.nfds, 6);
	assert_int_equal(m.fds[0], ATTACH_FD_PROXY);
	assert_int_equal(m.fds[5], ATTACH_FD_RAW);
	assert_int_equal(m.pid, 42);
	assert_int_equal(parse(msgs[6], &m, &why), ATTACH_NOTICE);
	assert_int_equal(m.notice.kind, ATTACH_NOTICE_REFUSED);
	assert_string_equal(m.notice.host.text, "x.test");
	assert_int_equal(m.notice.port, 443);
	assert_true(m.notice.ask);
	for (i = 0; i < sizeof notices / sizeof notices[0]; i++) {
		assert_int_not_equal(parse(notices[i], &m, &why), -1);
		len = attach_build(&m, buf, sizeof buf);
		assert_int_equal(len, strlen(notices[i]));
		assert_memory_equal(buf, notices[i], len);
	}
	assert_int_equal(parse(notices[0], &m, &why), ATTACH_ATTACH);
	assert_true(m.notices);
	assert_int_equal(parse(notices[1], &m, &why), ATTACH_NOTICE);
	assert_int_equal(m.notice.host.kind, HOST_IPV6);
	assert_int_equal(m.notice.secs, 60);
}

/* What is not a message is refused, saying why. */
static void
test_refused(void **state)
{
	static const char *const bad[] = {
		"",
		"{}",
		"{\"op\":\"bind\"}",
		"{\"op\":\"attach\"}",
		"{\"op\":\"attach\",\"cmd\":7}",
		"{\"op\":\"config\",\"ports\":\"80\"}",
		"{\"op\":\"config\",\"sandbox\":\"1\",\"ports\":\"0\"}",
		"{\"op\":\"config\",\"sandbox\":\"1\",\"ports\":\"65536\"}",
		"{\"op\":\"config\",\"sandbox\":\"1\",\"ports\":\"-1\"}",
		"{\"op\":\"config\",\"sandbox\":\"1\",\"ports\":\"80x\"}",
		"{\"op\":\"config\",\"sandbox\":\"1\",\"guards\":\"x /a\\n\"}",
		"{\"op\":\"config\",\"sandbox\":\"1\",\"guards\":\"d a\\n\"}",
		"{\"op\":\"config\",\"sandbox\":\"1\",\"guards\":\"d /a\"}",
		"{\"op\":\"config\",\"sandbox\":\"1\",\"guards\":\"s a\\n\"}",
		"{\"op\":\"config\",\"sandbox\":\"1\",\"guards\":\"s ~a\\n\"}",
		"{\"op\":\"config\",\"sandbox\":\"1\",\"guards\":\"d $a\\n\"}",
		"{\"op\":\"config\",\"sandbox\":\"12345678901234567\"}",
		"{\"op\":\"listeners\",\"pid\":0,\"fds\":\"proxy\"}",
		"{\"op\":\"listeners\",\"pid\":1,\"fds\":\"proxy tap\"}",
		"{\"op\":\"listeners\",\"pid\":1}",
		"{\"op\":\"exit\",\"status\":256}",
		"{\"op\":\"exit\"}",
		"{\"op\":\"error\"}",
		"{\"op\":\"ok\",\"op\":\"ok\"}",
		"{\"op\":\"notice\",\"host\":\"x.test\",\"port\":1}",
		"{\"op\":\"notice\",\"kind\":\"told\",\"host\":\"x.test\","
		    "\"port\":1}",
		"{\"op\":\"notice\",\"kind\":\"refused\",\"port\":1}",
		"{\"op\":\"notice\",\"kind\":\"refused\",\"host\":\"a b\","
		    "\"port\":1}",
		"{\"op\":\"notice\",\"kind\":\"refused\",\"host\":\"x.test\","
		    "\"port\":65536}",
		"{\"op\":\"notice\",\"kind\":\"refused\",\"host\":\"x.test\"}",
		"{\"op\":\"notice\",\"kind\":\"held\",\"host\":\"x.test\","
		    "\"port\":1}",
		"{\"op\":\"notice\",\"kind\":\"held\",\"host\":\"x.test\","
		    "\"port\":1,\"request\":\"r1\",\"secs\":-1}",
		"{\"op\":\"notice\",\"kind\":\"held\",\"host\":\"x.test\","
		    "\"port\":1,\"request\":\"\"}",
	};
	struct attach_msg	m;
	const char		*why;
	size_t			i;

	(void)state;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_equal(parse(bad[i], &m, &why), -1);
		assert_non_null(why);
	}
}

/* A message that does not fit is not written. */
static void
test_build_small(void **state)
{
	struct attach_msg	m;
	char			buf[8];

	(void)state;
	attach_msg_init(&m, ATTACH_ATTACH);
	strcpy(m.cmd, "a long command line");
	assert_int_equal(attach_build(&m, buf, sizeof buf), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_build_small),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
