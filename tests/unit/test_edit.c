/*
 * Unit tests for policy editing: rules_edit_add / rules_edit_remove on
 * text (comments, blank lines, CRLF, no final newline, includes,
 * duplicates, canonical forms, refusals) and rules_file_edit on files
 * (mode kept, symlink target edited, a bad include refused).
 */
#include "config.h"

#include <sys/stat.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rules/rules.h"

static char	errbuf[1024];

/* "allow RULE" for the tests written with allow rules' arguments. */
static const char *
allow(const char *rule)
{
	static char	line[2][2048];
	static int	k;

	k = !k;
	snprintf(line[k], sizeof line[k], "allow %s", rule);
	return (line[k]);
}

/* Add a line to text; check the return, the new text (or NULL), the line. */
static void
addl(const char *text, const char *rule, int want_rv, const char *want,
    unsigned int want_line)
{
	struct rules_edit	e;
	int			rv;

	errbuf[0] = '\0';
	rv = rules_edit_add(text, strlen(text), rule, "policy", &e, errbuf,
	    sizeof errbuf);
	if (rv != want_rv)
		fail_msg("add %s to '%s': %d (%s), want %d", rule, text, rv,
		    errbuf, want_rv);
	if (want == NULL)
		assert_null(e.text);
	else {
		assert_non_null(e.text);
		assert_string_equal(e.text, want);
		assert_int_equal(e.len, strlen(want));
	}
	if (rv >= 0)
		assert_int_equal(e.line, want_line);
	free(e.text);
}

/* Add "allow RULE" to text, as addl(). */
static void
add(const char *text, const char *rule, int want_rv, const char *want,
    unsigned int want_line)
{
	addl(text, allow(rule), want_rv, want, want_line);
}

/* Remove a line from text; check the count and the new text (or NULL). */
static void
rml(const char *text, const char *rule, int want_rv, const char *want)
{
	struct rules_edit	e;
	int			rv;

	errbuf[0] = '\0';
	rv = rules_edit_remove(text, strlen(text), rule, "disallow", &e,
	    errbuf, sizeof errbuf);
	if (rv != want_rv)
		fail_msg("remove %s from '%s': %d (%s), want %d", rule, text,
		    rv, errbuf, want_rv);
	if (want == NULL)
		assert_null(e.text);
	else {
		assert_non_null(e.text);
		assert_string_equal(e.text, want);
	}
	free(e.text);
}

/* Remove "allow RULE" from text, as rml(). */
static void
rm(const char *text, const char *rule, int want_rv, const char *want)
{
	rml(text, allow(rule), want_rv, want);
}

/* The canonical form a line is written in. */
static const char *
canonl(const char *line)
{
	static char		buf[RULES_RULE_LEN];
	struct rules_edit	e;

	if (rules_edit_add("", 0, line, "policy", &e, errbuf,
	    sizeof errbuf) != 1)
		fail_msg("%s refused: %s", line, errbuf);
	snprintf(buf, sizeof buf, "%s", e.rule);
	free(e.text);
	return (buf);
}

/* The canonical form of an allow rule's argument. */
static const char *
canon(const char *rule)
{
	const char	*c = canonl(allow(rule));

	assert_int_equal(strncmp(c, "allow ", 6), 0);
	return (c + 6);
}

/* Appending keeps every other byte and numbers the new line. */
static void
test_add_keeps_text(void **state)
{
	(void)state;
	add("", "pypi.org", 1, "allow pypi.org\n", 1);
	add("# python\n\nallow a.example   # a\n", "b.example", 1,
	    "# python\n\nallow a.example   # a\nallow b.example\n", 4);
	add("  # indented comment\n\t\n", "b.example", 1,
	    "  # indented comment\n\t\nallow b.example\n", 3);
}

/* The line ending of the file is used; an unfinished line is ended. */
static void
test_add_line_endings(void **state)
{
	(void)state;
	add("allow a.example\r\n# c\r\n", "b.example", 1,
	    "allow a.example\r\n# c\r\nallow b.example\r\n", 3);
	add("allow a.example", "b.example", 1,
	    "allow a.example\nallow b.example\n", 2);
	add("allow a.example\r\n# no newline", "b.example", 1,
	    "allow a.example\r\n# no newline\r\nallow b.example\r\n", 3);
	add("allow a.example\r\n", "A.example.", 0, NULL, 1);
}

/* The same rule in another spelling is already there. */
static void
test_add_duplicate(void **state)
{
	const char	*text = "# keep\nallow pypi.org # python\n"
			    "allow github.com:443,22\n";

	(void)state;
	add(text, "pypi.org", 0, NULL, 2);
	add(text, "PyPI.org.", 0, NULL, 2);
	add(text, "pypi.org:443,80", 0, NULL, 2);
	add(text, "github.com:22,443", 0, NULL, 3);
	add(text, "github.com:22", 1,
	    "# keep\nallow pypi.org # python\nallow github.com:443,22\n"
	    "allow github.com:22\n", 4);
	add("deny pypi.org\n", "pypi.org", 1,
	    "deny pypi.org\nallow pypi.org\n", 2);
	add("allow pypi.org extra\nallow\n#allow pypi.org\n", "pypi.org", 1,
	    "allow pypi.org extra\nallow\n#allow pypi.org\nallow pypi.org\n", 4);
}

/* An end is part of the rule when adding, not when removing. */
static void
test_until(void **state)
{
	const char	*text = "allow a.example until 2030-01-02T03:04:05Z\n";

	(void)state;
	assert_string_equal(canon("A.example.:443,80  until\t"
	    "2030-01-02T03:04:05Z"), "a.example until 2030-01-02T03:04:05Z");
	add(text, "a.example until 2030-01-02T03:04:05Z", 0, NULL, 1);
	add(text, "a.example", 1, "allow a.example until "
	    "2030-01-02T03:04:05Z\nallow a.example\n", 2);
	add(text, "a.example until 2031-01-01T00:00:00Z", 1, "allow a.example "
	    "until 2030-01-02T03:04:05Z\nallow a.example until "
	    "2031-01-01T00:00:00Z\n", 2);
	add("", "a.example until tomorrow", -1, NULL, 0);
	add("", "a.example until 2001-01-01T00:00:00Z", -1, NULL, 0);
	assert_non_null(strstr(errbuf, "2001-01-01T00:00:00Z has passed"));
	add("", "a.example until 2030-02-30T00:00:00Z", -1, NULL, 0);
	add("", "a.example soon", -1, NULL, 0);
	add("", "a.example until 2030-01-02T03:04:05Z x", -1, NULL, 0);
	rm("allow a.example until 2030-01-02T03:04:05Z\nallow a.example:22\n"
	    "allow a.example\n", "a.example", 2, "allow a.example:22\n");
	rm(text, "a.example until 2040-01-01T00:00:00Z", 1, "");
}

/* An include is not looked into: the rule is added to this text. */
static void
test_add_include(void **state)
{
	(void)state;
	add("include preset:python\n", "pypi.org", 1,
	    "include preset:python\nallow pypi.org\n", 2);
	rm("include preset:python\n", "pypi.org", 0, NULL);
}

/* Rules are written canonically. */
static void
test_canonical(void **state)
{
	(void)state;
	assert_string_equal(canon("PyPI.org."), "pypi.org");
	assert_string_equal(canon("*.Example.ORG"), "*.example.org");
	assert_string_equal(canon("github.com:443,22"), "github.com:22,443");
	assert_string_equal(canon("x.example:80,443"), "x.example");
	assert_string_equal(canon("x.example:443,80-80"), "x.example");
	assert_string_equal(canon("x.example:1-65535"), "x.example:*");
	assert_string_equal(canon("x.example:*"), "x.example:*");
	assert_string_equal(canon("x.example:8050,8000-8100,22,23"),
	    "x.example:22-23,8000-8100");
	assert_string_equal(canon("2130706433:443"), "127.0.0.1:443");
	assert_string_equal(canon("203.0.113.0/24:443"), "203.0.113.0/24:443");
	assert_string_equal(canon("[2001:DB8::/32]:*"), "[2001:db8::/32]:*");
	assert_string_equal(canon("2001:db8:0::1"), "[2001:db8::1]");
	assert_string_equal(canon("[::ffff:1.2.3.4]:22"), "1.2.3.4:22");
	/* Constraints in one order: read-only, methods, websocket, path. */
	assert_string_equal(canon("GitHub.com path /o/** read-only"),
	    "github.com read-only path /o/**");
	assert_string_equal(canon("api.example path /v1/** methods GET,HEAD"),
	    "api.example methods GET,HEAD path /v1/**");
	assert_string_equal(canon("chat.example path /live/** websocket "
	    "read-only"), "chat.example read-only websocket path /live/**");
}

/* What the parser refuses is refused, naming no line: it is in no file. */
static void
test_add_refused(void **state)
{
	(void)state;
	add("allow a.example\n", "*.com", -1, NULL, 0);
	assert_string_equal(errbuf, "policy: '*.com' would match every "
	    "site under the public suffix 'com': name the site "
	    "(*.example.com)");
	add("", "*", -1, NULL, 0);
	assert_string_equal(errbuf, "policy: '*' alone would match every "
	    "host: name the hosts (a wildcard needs a domain: *.example.com)");
	add("", "a..b", -1, NULL, 0);
	assert_non_null(strstr(errbuf, "policy: bad host 'a..b'"));
	add("", "x.example:0", -1, NULL, 0);
	assert_non_null(strstr(errbuf, "bad port '0'"));
	add("", "a.example b.example", -1, NULL, 0);
	assert_non_null(strstr(errbuf, "HOST[:PORTS] [read-only] [methods"));
	add("", "a.example read-only read-only", -1, NULL, 0);
	add("", "a.example websocket path /x websocket", -1, NULL, 0);
	add("", "a.example websocket", -1, NULL, 0);
	assert_non_null(strstr(errbuf, "websocket: goes with read-only"));
	add("", "a.example methods", -1, NULL, 0);
	add("", "a.example methods get()", -1, NULL, 0);
	assert_non_null(strstr(errbuf, "methods: bad 'get()'"));
	add("", "a.example path /a/../b", -1, NULL, 0);
	assert_non_null(strstr(errbuf, "path: bad '/a/../b'"));
	add("", "a.example#x", -1, NULL, 0);
	add("", "", -1, NULL, 0);
	add("", "0.0.0.0/0", -1, NULL, 0);
	rm("", "a..b", -1, NULL);
	assert_non_null(strstr(errbuf, "disallow: bad host 'a..b'"));
}

/* Removing takes out every allow line for the rule, nothing else. */
static void
test_remove(void **state)
{
	(void)state;
	rm("# top\nallow a.example\n\nallow b.example\n", "a.example", 1,
	    "# top\n\nallow b.example\n");
	rm("allow A.example.\n# keep\nallow a.example:443,80 # old\n"
	    "allow a.example:22\ndeny a.example\n", "a.example", 2,
	    "# keep\nallow a.example:22\ndeny a.example\n");
	rm("allow a.example\n", "b.example", 0, NULL);
	rm("deny a.example\n", "a.example", 0, NULL);
	rm("allow a.example:22\n", "a.example", 0, NULL);
	rm("", "a.example", 0, NULL);
	rm("allow *.com\n", "*.com", 1, "");
}

/* Line endings survive a removal; a last line without newline goes. */
static void
test_remove_line_endings(void **state)
{
	(void)state;
	rm("allow a.example\r\n# c\r\nallow b.example\r\n", "b.example", 1,
	    "allow a.example\r\n# c\r\n");
	rm("# c\nallow b.example", "b.example", 1, "# c\n");
	rm("allow b.example", "b.example", 1, "");
	rm("\tallow\tb.example\t\r\n", "b.example", 1, "");
}

/* The line of the first rule removed is reported. */
static void
test_remove_line(void **state)
{
	struct rules_edit	e;
	const char		*t = "# 1\n# 2\nallow x.example\nallow x.example\n";

	(void)state;
	assert_int_equal(rules_edit_remove(t, strlen(t), "allow x.example",
	    "disallow", &e, errbuf, sizeof errbuf), 2);
	assert_int_equal(e.line, 3);
	assert_int_equal(e.count, 2);
	assert_string_equal(e.text, "# 1\n# 2\n");
	free(e.text);
}

/* Every line of a policy can be added and removed, canonically. */
static void
test_lines(void **state)
{
	(void)state;
	assert_string_equal(canonl("deny Evil.example."), "deny evil.example");
	assert_string_equal(canonl("deny evil.example:1-65535"),
	    "deny evil.example");
	assert_string_equal(canonl("deny evil.example:443,80"),
	    "deny evil.example:80,443");
	assert_string_equal(canonl("allow-private 127.0.0.1"),
	    "allow-private 127.0.0.1");
	assert_string_equal(canonl("allow-private 2130706432/8"),
	    "allow-private 127.0.0.0/8");
	assert_string_equal(canonl("include   preset:python"),
	    "include preset:python");
	assert_string_equal(canonl("allow-vsock"), "allow-vsock");
	assert_string_equal(canonl("allow-socket\t/run/x.sock"),
	    "allow-socket /run/x.sock");
	assert_string_equal(canonl("secret TOKEN  for a.example from /t"),
	    "secret TOKEN for a.example from /t");
	addl("allow a.example\n", "deny b.example", 1,
	    "allow a.example\ndeny b.example\n", 2);
	addl("deny b.example:*\n", "deny B.example", 0, NULL, 1);
	addl("allow-private 10.0.0.0/8 # lan\n", "allow-private 10.0.0.0/8",
	    0, NULL, 1);
	addl("", "allow-private 10.0.0.1/8", -1, NULL, 0);
	assert_non_null(strstr(errbuf, "has bits set past the prefix"));
	addl("", "allow-private pypi.org", -1, NULL, 0);
	assert_non_null(strstr(errbuf, "allow-private takes an address"));
	addl("", "deny", -1, NULL, 0);
	assert_string_equal(errbuf, "policy: deny: missing argument (deny "
	    "HOST[:PORTS])");
	addl("", "alow x.example", -1, NULL, 0);
	assert_string_equal(errbuf, "policy: unknown directive 'alow' (did "
	    "you mean 'allow'?)");
	addl("", "allow-vsock now", -1, NULL, 0);
	addl("", "include", -1, NULL, 0);
	/* Removing a deny leaves the allow rule for the host. */
	rml("allow x.example\ndeny x.example:*\n", "deny x.example", 1,
	    "allow x.example\n");
	rml("allow-vsock\n# vsock\n", "allow-vsock", 1, "# vsock\n");
	rml("include preset:python\n", "include preset:python", 1, "");
	rml("include preset:python\n", "include preset:node", 0, NULL);
}

/* Read a whole small file into buf. */
static const char *
slurp(const char *path, char *buf, size_t size)
{
	FILE	*f = fopen(path, "r");
	size_t	 n;

	if (f == NULL)
		return (NULL);
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
	return (buf);
}

/* Write a small file. */
static void
spit(const char *path, const char *text)
{
	FILE	*f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A vet that sees the text before and after, and refuses the edit. */
static int
refuse_vet(void *arg, const char *path, const char *old, size_t oldlen,
    const char *text, size_t len, const struct rules_edit *res, size_t n,
    char *err, size_t errlen)
{
	int	*seen = arg;

	(void)path;
	*seen = oldlen == strlen("allow a.example\n") &&
	    strncmp(old, "allow a.example\n", oldlen) == 0 &&
	    len == strlen("allow a.example\ndeny b.example\n") &&
	    strncmp(text, "allow a.example\ndeny b.example\n", len) == 0 &&
	    n == 1 && res[0].line == 2 && res[0].count == 1;
	snprintf(err, errlen, "no");
	return (-1);
}

/* A file is edited in place: mode kept, new files made, bad edits refused. */
static void
test_file(void **state)
{
	char			 dir[] = "/tmp/test_edit.XXXXXX", p[256], q[256];
	char			 buf[1024], cmd[300], want[600];
	const char		*two[] = { "allow a.example",
	    "allow b.example" };
	struct rules_edit	 res[2];
	struct stat		 st;
	int			 seen = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(p, sizeof p, "%s/new/sub/policy", dir);
	assert_int_equal(rules_file_append(p, "pypi.org", NULL, errbuf,
	    sizeof errbuf), 1);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	snprintf(q, sizeof q, "%s/new/sub", dir);
	assert_int_equal(stat(q, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_non_null(strstr(slurp(p, buf, sizeof buf), "\nallow pypi.org\n"));

	snprintf(p, sizeof p, "%s/policy", dir);
	spit(p, "# mine\nallow a.example\n");
	assert_int_equal(chmod(p, 0640), 0);
	assert_int_equal(rules_file_edit(p, 0, two, 2, res, NULL, errbuf,
	    sizeof errbuf), 1);
	assert_int_equal(res[0].line, 2);
	assert_null(res[0].text);
	assert_int_equal(res[1].line, 3);
	assert_string_equal(slurp(p, buf, sizeof buf),
	    "# mine\nallow a.example\nallow b.example\n");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_int_equal(rules_file_edit(p, 1, two, 2, res, NULL, errbuf,
	    sizeof errbuf), 2);
	assert_string_equal(slurp(p, buf, sizeof buf), "# mine\n");
	assert_int_equal(rules_file_edit(p, 1, two, 1, res, NULL, errbuf,
	    sizeof errbuf), 0);
	assert_int_equal(res[0].count, 0);

	/* A vet refuses: the file is left as it was. */
	spit(p, "allow a.example\n");
	{
		const struct rules_file_vet	vet = { refuse_vet, &seen };
		const char			*deny[] = { "deny b.example" };

		assert_int_equal(rules_file_edit(p, 0, deny, 1, res, &vet,
		    errbuf, sizeof errbuf), -1);
	}
	assert_true(seen);
	assert_string_equal(errbuf, "no");
	assert_string_equal(slurp(p, buf, sizeof buf), "allow a.example\n");

	/* A bad rule is blamed, not a line of the file. */
	assert_int_equal(rules_file_append(p, "bad!x", NULL, errbuf,
	    sizeof errbuf), -1);
	assert_string_equal(errbuf, "pinhole allow: bad host 'bad!x': "
	    "invalid character in name");
	/* '#' is a valid method, but it would start a comment in the file. */
	assert_int_equal(rules_file_append(p, "a.example methods GET,X#Y",
	    NULL, errbuf, sizeof errbuf), -1);
	assert_string_equal(errbuf, "pinhole allow: bad rule 'allow a.example "
	    "methods GET,X#Y': '#' starts a comment in a policy file");

	/* A missing include refuses the edit; the file is left as it was. */
	spit(p, "include missing.policy\n");
	assert_int_equal(rules_file_append(p, "c.example", NULL, errbuf,
	    sizeof errbuf), -1);
	snprintf(want, sizeof want, "%s:1: cannot read '%s/missing.policy'",
	    p, dir);
	assert_non_null(strstr(errbuf, want));
	assert_string_equal(slurp(p, buf, sizeof buf),
	    "include missing.policy\n");

	/* A symlink's target is edited; the link stays a link. */
	snprintf(q, sizeof q, "%s/link", dir);
	spit(p, "allow a.example\n");
	assert_int_equal(symlink("policy", q), 0);
	assert_int_equal(rules_file_append(q, "d.example", NULL, errbuf,
	    sizeof errbuf), 1);
	assert_int_equal(lstat(q, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_string_equal(slurp(p, buf, sizeof buf),
	    "allow a.example\nallow d.example\n");

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(test_add_keeps_text),
		cmocka_unit_test(test_add_line_endings),
		cmocka_unit_test(test_add_duplicate),
		cmocka_unit_test(test_until),
		cmocka_unit_test(test_add_include),
		cmocka_unit_test(test_canonical),
		cmocka_unit_test(test_add_refused),
		cmocka_unit_test(test_remove),
		cmocka_unit_test(test_remove_line_endings),
		cmocka_unit_test(test_remove_line),
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_file),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
