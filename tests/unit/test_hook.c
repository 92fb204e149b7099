/*
 * Unit tests for the harness hook's pure half: reading a call, naming
 * its session, quoting, and the answer it writes.
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

#include "cli/hook.h"
#include "lib/json.h"

static char	store[HOOK_STORE_SIZE(4096)];

/* Read a call of text. */
static int
parse(const char *text, struct hook_call *c, const char **err)
{
	*err = NULL;
	return (hook_parse(text, strlen(text), store, c, err));
}

/* A Bash call is read, its input kept; other tools are not looked into. */
static void
test_hook_parse(void **state)
{
	struct hook_call	 c;
	const char		*err;

	assert_int_equal(parse("{\"session_id\":\"s1\",\"cwd\":\"/w\","
	    "\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\","
	    "\"tool_input\":{\"command\":\"ls 'a b'\",\"timeout\":5,"
	    "\"x\":{\"y\":[1.5]}}}", &c, &err), 0);
	assert_true(hook_wraps(&c));
	assert_string_equal(c.command, "ls 'a b'");
	assert_string_equal(c.session, "s1");
	assert_int_equal(c.ninput, 3);
	assert_int_equal(parse("{\"session_id\":\"s1\",\"hook_event_name\":"
	    "\"PreToolUse\",\"tool_name\":\"Edit\",\"tool_input\":"
	    "{\"edits\":[{\"a\":1e5}]}}", &c, &err), 0);
	assert_false(hook_wraps(&c));
	assert_int_equal(c.ninput, 0);
	assert_int_equal(parse("{\"session_id\":\"s1\",\"hook_event_name\":"
	    "\"PostToolUse\",\"tool_name\":\"Bash\"}", &c, &err), 0);
	assert_false(hook_wraps(&c));
}

/* What is refused, and says why. */
static void
test_hook_parse_refused(void **state)
{
	static const char	*bad[] = {
		"",
		"[]",
		"{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\"}",
		"{\"session_id\":\"\",\"hook_event_name\":\"PreToolUse\","
		    "\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"x\"}}",
		"{\"session_id\":\"s\",\"hook_event_name\":\"PreToolUse\","
		    "\"tool_name\":\"Bash\"}",
		"{\"session_id\":\"s\",\"hook_event_name\":\"PreToolUse\","
		    "\"tool_name\":\"Bash\",\"tool_input\":\"x\"}",
		"{\"session_id\":\"s\",\"hook_event_name\":\"PreToolUse\","
		    "\"tool_name\":\"Bash\",\"tool_input\":{\"command\":[]}}",
		"{\"session_id\":\"s\",\"hook_event_name\":\"PreToolUse\","
		    "\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"a\\u0000\"}}",
		"{\"session_id\":\"s\",\"hook_event_name\":\"PreToolUse\","
		    "\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"x\","
		    "\"command\":\"y\"}}",
		"{\"session_id\":\"s\",\"tool_name\":\"Read\",\"hook_event_name\":"
		    "\"PreToolUse\",\"tool_input\":{\"a\":01}}",
		"{\"session_id\":\"s\",\"tool_name\":\"Read\",\"hook_event_name\":"
		    "\"PreToolUse\",\"tool_input\":{\"a\":[1,]}}",
	};
	struct hook_call	 c;
	const char		*err;
	size_t			 i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_equal(parse(bad[i], &c, &err), -1);
		assert_non_null(err);
	}
}

/* A session id pinhole takes is the name; any other is hashed, stably. */
static void
test_hook_session_name(void **state)
{
	char	a[HOOK_NAME_MAX + 1], b[HOOK_NAME_MAX + 1];
	char	longid[HOOK_NAME_MAX + 2];

	hook_session_name("4d1c0b7e-5f7a-4c1e-9d0e-2b1f3a4c5d6e", a);
	assert_string_equal(a, "4d1c0b7e-5f7a-4c1e-9d0e-2b1f3a4c5d6e");
	hook_session_name("a/b", a);
	hook_session_name("a/b", b);
	assert_string_equal(a, b);
	assert_int_equal(strlen(a), 34);
	assert_memory_equal(a, "h-", 2);
	hook_session_name("a/c", b);
	assert_string_not_equal(a, b);
	hook_session_name("..", a);
	assert_memory_equal(a, "h-", 2);
	memset(longid, 'x', sizeof longid - 1);
	longid[sizeof longid - 1] = '\0';
	hook_session_name(longid, a);
	assert_memory_equal(a, "h-", 2);
}

/* Quotes, and nothing else, are escaped. */
static void
test_hook_quote(void **state)
{
	struct json_writer	w;

	json_writer_init(&w, 0);
	hook_quote(&w, "it's $HOME \\ \"x\"\n'");
	assert_string_equal(w.buf, "'it'\\''s $HOME \\ \"x\"\n'\\'''");
	json_writer_free(&w);
}

/* The answer keeps every member but command, which is wrapped. */
static void
test_hook_answer(void **state)
{
	struct hook_call	 c;
	struct json_writer	 w;
	const char		*err;

	assert_int_equal(parse("{\"session_id\":\"s1\",\"hook_event_name\":"
	    "\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":"
	    "\"echo 'a'\",\"description\":\"d\\\"q\",\"timeout\":600000,"
	    "\"run_in_background\":true,\"x\":{\"y\":[1.5,null]}}}", &c, &err),
	    0);
	json_writer_init(&w, 0);
	hook_answer(&w, &c, "/bin/pinhole", "s1", "/bin/bash", "ask");
	assert_false(w.failed);
	assert_string_equal(w.buf, "{\"hookSpecificOutput\":{"
	    "\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"ask\","
	    "\"permissionDecisionReason\":\"runs in pinhole session s1\","
	    "\"updatedInput\":{\"command\":\"'/bin/pinhole' run --session "
	    "'s1' -- '/bin/bash' -c 'echo '\\\\''a'\\\\'''\","
	    "\"description\":\"d\\\"q\",\"timeout\":600000,"
	    "\"run_in_background\":true,\"x\":{\"y\":[1.5,null]}}}}");
	json_writer_free(&w);
}

/* The tool call in Claude Code's shell string: what its eval runs. */
static void
test_hook_shell_label(void **state)
{
	char	buf[64], small[5];

	(void)state;
	assert_int_equal(hook_shell_label("source /h/s.sh 2>/dev/null || "
	    "true && { \\builtin unalias -- 'which'; } || true && eval "
	    "'curl -s http://a.test/' < /dev/null && pwd -P >| /tmp/c-1-cwd",
	    buf, sizeof buf), 0);
	assert_string_equal(buf, "curl -s http://a.test/");
	assert_int_equal(hook_shell_label("true && eval pwd < /dev/null && "
	    "pwd -P >| /tmp/c-cwd", buf, sizeof buf), 0);
	assert_string_equal(buf, "pwd");
	/* One quoted word, however the harness quoted it, unquoted. */
	assert_int_equal(hook_shell_label("true && eval 'echo '\\''x'\\''' "
	    "< /dev/null && pwd -P >| /tmp/c-cwd", buf, sizeof buf), 0);
	assert_string_equal(buf, "echo 'x'");
	assert_int_equal(hook_shell_label("true && eval 'a '\"'\"'b c'\"'\"'' "
	    "< /dev/null && pwd -P >| /tmp/c-cwd", buf, sizeof buf), 0);
	assert_string_equal(buf, "a 'b c'");
	/* Not one word: as written. */
	assert_int_equal(hook_shell_label("true && eval 'a' \"$b\" "
	    "< /dev/null && pwd -P >| /tmp/c-cwd", buf, sizeof buf), 0);
	assert_string_equal(buf, "'a' \"$b\"");
	/* Cut to fit. */
	assert_int_equal(hook_shell_label("true && eval 'long command' "
	    "< /dev/null && pwd -P >| /tmp/c-cwd", small, sizeof small), 0);
	assert_string_equal(small, "long");
	/* Not the harness's string: no label. */
	assert_int_equal(hook_shell_label("echo hello", buf, sizeof buf), -1);
	assert_int_equal(hook_shell_label("a && eval < /dev/null && pwd -P "
	    ">| x", buf, sizeof buf), -1);
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(test_hook_parse),
		cmocka_unit_test(test_hook_parse_refused),
		cmocka_unit_test(test_hook_session_name),
		cmocka_unit_test(test_hook_quote),
		cmocka_unit_test(test_hook_answer),
		cmocka_unit_test(test_hook_shell_label),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
