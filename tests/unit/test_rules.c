/*
 * Unit tests for the policy parser and matcher: every rule form, every
 * refusal, deny-wins, includes and presets, allow-private and ports.
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

static char	tmpdir[] = "/tmp/test_rules.XXXXXX";
static char	errbuf[1024];

/* Load text into a new policy; fail the test if it is refused. */
static struct rules *
policy(const char *text)
{
	struct rules	*r = rules_create();

	assert_non_null(r);
	if (rules_load_text(r, "policy", text, strlen(text), errbuf,
	    sizeof errbuf) != 0)
		fail_msg("refused: %s", errbuf);
	return (r);
}

/* Load text that must be refused; return the message. */
static const char *
refused(const char *text)
{
	struct rules	*r = rules_create();

	errbuf[0] = '\0';
	if (rules_load_text(r, "policy", text, strlen(text), errbuf,
	    sizeof errbuf) == 0)
		fail_msg("accepted: %s", text);
	rules_free(r);
	return (errbuf);
}

/* The verdict for "HOST[:PORT]" (default port 443). */
static int
verdict(const struct rules *r, const char *target, struct rules_verdict *v)
{
	struct rules_verdict	 tmp;
	struct host		 h;
	uint16_t		 port;
	const char		*errstr;

	if (host_port_parse(target, &h, &port, 443, &errstr) != 0)
		fail_msg("bad target %s: %s", target, errstr);
	return (rules_match(r, &h, port, v != NULL ? v : &tmp));
}

/* Write a file in the test's temp dir; return its path (static buffer). */
static const char *
write_file(const char *name, const char *text)
{
	static char	 path[4][512];
	static int	 n;
	FILE		*f;
	char		*p = path[n++ % 4];

	snprintf(p, 512, "%s/%s", tmpdir, name);
	assert_non_null(f = fopen(p, "w"));
	fputs(text, f);
	fclose(f);
	return (p);
}

/* Exact names: only that name, any case, with or without a dot. */
static void
test_exact(void **state)
{
	struct rules	*r = policy("allow pypi.org\n");

	assert_true(verdict(r, "pypi.org", NULL));
	assert_true(verdict(r, "PYPI.org.:80", NULL));
	assert_false(verdict(r, "evilpypi.org", NULL));
	assert_false(verdict(r, "www.pypi.org", NULL));
	assert_false(verdict(r, "pypi.org.evil.com", NULL));
	assert_false(verdict(r, "pypi.org:8080", NULL));
	assert_false(verdict(r, "pypi.or", NULL));
	rules_free(r);
}

/* Wildcards: any subdomain at any depth, never the apex. */
static void
test_wildcard(void **state)
{
	struct rules	*r = policy("allow *.pypi.org\n");

	assert_true(verdict(r, "files.pypi.org", NULL));
	assert_true(verdict(r, "a.b.c.pypi.org:80", NULL));
	assert_false(verdict(r, "pypi.org", NULL));
	assert_false(verdict(r, "pypi.org.evil.com", NULL));
	assert_false(verdict(r, "evilpypi.org", NULL));
	assert_false(verdict(r, "x.evilpypi.org", NULL));
	assert_false(verdict(r, "org", NULL));
	rules_free(r);
}

/* Port forms: default 80 and 443, lists, ranges, every port. */
static void
test_ports(void **state)
{
	struct rules	*r = policy("allow a.example\n"
	    "allow b.example:22,443\n"
	    "allow c.example:8000-8100\n"
	    "allow d.example:*\n"
	    "allow e.example:22,8000-8002\n");

	assert_true(verdict(r, "a.example:80", NULL));
	assert_true(verdict(r, "a.example:443", NULL));
	assert_false(verdict(r, "a.example:22", NULL));
	assert_true(verdict(r, "b.example:22", NULL));
	assert_false(verdict(r, "b.example:80", NULL));
	assert_true(verdict(r, "c.example:8000", NULL));
	assert_true(verdict(r, "c.example:8100", NULL));
	assert_false(verdict(r, "c.example:8101", NULL));
	assert_true(verdict(r, "d.example:1", NULL));
	assert_true(verdict(r, "d.example:65535", NULL));
	assert_true(verdict(r, "e.example:8001", NULL));
	assert_false(verdict(r, "e.example:8003", NULL));
	rules_free(r);
}

/* Addresses and prefixes, matched as addresses whatever the spelling. */
static void
test_addresses(void **state)
{
	struct rules	*r = policy("allow 203.0.113.0/24:443\n"
	    "allow 2130706433:80\n"
	    "allow [2001:db8::1]:443\n"
	    "allow [2001:db8:1::/48]:*\n"
	    "allow 2001:db8:2::7\n"
	    "allow [::ffff:198.51.100.0/120]:443\n");

	assert_true(verdict(r, "203.0.113.9", NULL));
	assert_true(verdict(r, "3405803785", NULL));	/* 203.0.113.9 */
	assert_false(verdict(r, "203.0.114.9", NULL));
	assert_false(verdict(r, "203.0.113.9:80", NULL));
	assert_true(verdict(r, "127.0.0.1:80", NULL));
	assert_true(verdict(r, "0x7f.1:80", NULL));
	assert_true(verdict(r, "0177.0.0.1:80", NULL));
	assert_true(verdict(r, "[::ffff:127.0.0.1]:80", NULL));
	assert_true(verdict(r, "[2001:DB8:0::1]", NULL));
	assert_false(verdict(r, "[2001:db8::2]", NULL));
	assert_true(verdict(r, "[2001:db8:1:ffff::1]:22", NULL));
	assert_true(verdict(r, "[2001:db8:2::7]:80", NULL));
	assert_true(verdict(r, "198.51.100.200", NULL));
	assert_false(verdict(r, "198.51.101.1", NULL));
	rules_free(r);
	r = policy("allow 127.0.0.1\n");
	assert_false(verdict(r, "localhost", NULL));
	rules_free(r);
}

/* A matching deny wins whatever the order; its default is every port. */
static void
test_deny_wins(void **state)
{
	struct rules_verdict	 v;
	struct rules		*r = policy("allow *.pypi.org\n"
	    "allow pypi.org:*\n"
	    "deny upload.pypi.org\n"
	    "allow upload.pypi.org\n"
	    "deny pypi.org:22\n"
	    "deny *.evil.pypi.org\n"
	    "allow 10.0.0.0/8:*\n"
	    "deny 10.1.0.0/16:443\n");

	assert_false(verdict(r, "upload.pypi.org", &v));
	assert_int_equal(v.line, 3);
	assert_string_equal(v.text, "deny upload.pypi.org");
	assert_false(verdict(r, "upload.pypi.org:8443", NULL));
	assert_true(verdict(r, "files.pypi.org", NULL));
	assert_false(verdict(r, "pypi.org:22", NULL));
	assert_true(verdict(r, "pypi.org:23", NULL));
	assert_false(verdict(r, "a.evil.pypi.org", NULL));
	assert_true(verdict(r, "evil.pypi.org", NULL));
	assert_false(verdict(r, "10.1.2.3:443", NULL));
	assert_true(verdict(r, "10.1.2.3:80", NULL));
	assert_true(verdict(r, "10.2.2.3:443", NULL));
	rules_free(r);
}

/* The verdict says what decided. */
static void
test_verdict_fields(void **state)
{
	struct rules_verdict	 v;
	struct rules		*r = policy("# comment\n\n"
	    "  allow pypi.org   # why\n");

	assert_true(verdict(r, "pypi.org", &v));
	assert_int_equal(v.allow, 1);
	assert_string_equal(v.file, "policy");
	assert_int_equal(v.line, 3);
	assert_string_equal(v.text, "allow pypi.org");
	assert_false(verdict(r, "evil.example", &v));
	assert_null(v.file);
	assert_string_equal(v.why, "no rule matches: default deny");
	assert_false(verdict(r, "pypi.org:8080", &v));
	assert_non_null(strstr(v.why, "port"));
	rules_free(r);
	r = rules_create();
	assert_int_equal(rules_load_text(r, "--allow", "allow x.example", 15,
	    errbuf, sizeof errbuf), 0);
	assert_true(verdict(r, "x.example", &v));
	assert_string_equal(v.file, "--allow");
	assert_int_equal(v.line, 0);
	rules_free(r);
}

/* Refusals: each bad line and a part of the message it must give. */
static const struct {
	const char	*text;
	const char	*msg;
} refusal_table[] = {
	{ "alow pypi.org\n", "policy:1: unknown directive 'alow' "
	    "(did you mean 'allow'?)" },
	{ "\nallow-privat 10.0.0.0/8\n", "policy:2: unknown directive "
	    "'allow-privat' (did you mean 'allow-private'?)" },
	{ "frobnicate x\n", "unknown directive 'frobnicate'\0" },
	{ "allow\n", "missing argument" },
	{ "allow a.example b.example\n", "unexpected 'b.example'" },
	{ "allow a.example:0\n", "bad port '0'" },
	{ "allow a.example:65536\n", "bad port" },
	{ "allow a.example:\n", "bad port" },
	{ "allow a.example:http\n", "bad port 'http'" },
	{ "allow a.example:9000-8000\n", "bad port '9000-8000'" },
	{ "allow a.example:22,,443\n", "bad port" },
	{ "allow a.example:1-2-3\n", "bad port" },
	{ "allow *\n", "'*' alone" },
	{ "deny *\n", "'*' alone" },
	{ "allow *:443\n", "'*' alone" },
	{ "allow *.com\n", "public suffix" },
	{ "allow *.co.uk\n", "public suffix" },
	{ "allow *.github.io\n", "public suffix" },
	{ "allow *.COM.\n", "public suffix" },
	{ "allow *.*.example.com\n", "'*'" },
	{ "allow www.*.example.com\n", "'*'" },
	{ "allow *.10.0.0.1\n", "wildcard needs a name" },
	{ "allow 10.0.0.1/8\n", "did you mean 10.0.0.0/8?" },
	{ "allow 10.0.0.0/33\n", "prefix length" },
	{ "allow [2001:db8::/129]\n", "prefix length" },
	{ "allow 10.0.0.0/x\n", "bad prefix length" },
	{ "allow 10.0.0.0/\n", "bad prefix length" },
	{ "allow pypi.org/24\n", "bad address" },
	{ "allow 0.0.0.0/0\n", "/0" },
	{ "allow [::/0]:*\n", "/0" },
	{ "allow 256.0.0.1\n", "IPv4" },
	{ "allow 1.2.3.4.5\n", "IPv4" },
	{ "allow [2001:db8::1\n", "missing ']'" },
	{ "allow [2001:db8::1]443\n", "after ']'" },
	{ "allow 2001:db8::zz\n", "IPv6" },
	{ "allow b\xc3\xbc" "cher.de\n", "punycode" },
	{ "allow a..b\n", "empty label" },
	{ "allow-private 10.0.0.0/8:443\n", "takes no port" },
	{ "allow-private pypi.org\n", "not a name" },
	{ "allow-private 0.0.0.0/0\n", "/0" },
	{ "include\n", "missing argument" },
	{ "include preset:../etc\n", "bad preset name" },
	{ "include preset:nonesuch\n", "cannot read" },
	{ "include /nonexistent/policy\n", "policy:1: cannot read "
	    "'/nonexistent/policy': No such file or directory" },
	{ "include /tmp\n", "not a regular file" },
	{ "include /dev/zero\n", "too large" },
	{ "allow a\0b\n", "NUL" },
	{ "allow good.example\nallow bad.example:0\n", "policy:2:" },
};

/* Every refusal gives FILE:LINE and says what is wrong. */
static void
test_refusals(void **state)
{
	const char	*msg;
	size_t		 i, len;
	struct rules	*r;

	for (i = 0; i < sizeof refusal_table / sizeof refusal_table[0]; i++) {
		r = rules_create();
		len = strlen(refusal_table[i].text);
		if (strncmp(refusal_table[i].text, "allow a\0", 8) == 0)
			len = 10;
		errbuf[0] = '\0';
		if (rules_load_text(r, "policy", refusal_table[i].text, len,
		    errbuf, sizeof errbuf) == 0)
			fail_msg("accepted: %s", refusal_table[i].text);
		msg = refusal_table[i].msg;
		if (strstr(errbuf, msg) == NULL)
			fail_msg("%s: got '%s', want '%s'",
			    refusal_table[i].text, errbuf, msg);
		if (strncmp(errbuf, "policy:", 7) != 0)
			fail_msg("no location in '%s'", errbuf);
		rules_free(r);
	}
}

/* Deny rules may name public suffixes (only allow is limited). */
static void
test_deny_suffix(void **state)
{
	struct rules	*r = policy("allow example.co.uk\ndeny *.co.uk\n");

	assert_false(verdict(r, "www.example.co.uk", NULL));
	assert_false(verdict(r, "example.co.uk", NULL));
	assert_true(verdict(r, "co.uk", NULL) == 0);
	rules_free(r);
}

/* Overlong lines and names are refused. */
static void
test_long(void **state)
{
	char	line[2048];

	memset(line, 'a', sizeof line);
	memcpy(line, "allow ", 6);
	line[sizeof line - 2] = '\n';
	line[sizeof line - 1] = '\0';
	assert_non_null(strstr(refused(line), "longer than 1024"));
	memset(line + 6, 'a', 300);
	memcpy(line + 306, "\n", 2);
	assert_non_null(strstr(refused(line), "253"));
	memset(line + 6, 'a', 64);
	memcpy(line + 70, ".com\n", 6);
	assert_non_null(strstr(refused(line), "63"));
}

/* A refused load adds nothing: earlier rules stay, later ones are gone. */
static void
test_atomic(void **state)
{
	struct rules	*r = policy("allow a.example\n");
	const char	*text = "allow b.example\nallow c.example:0\n";

	assert_int_equal(rules_load_text(r, "more", text, strlen(text), errbuf,
	    sizeof errbuf), -1);
	assert_string_equal(errbuf, "more:2: bad port '0' (a port 1 to 65535, "
	    "a list like 22,443, a range like 8000-8100, or *)");
	assert_true(verdict(r, "a.example", NULL));
	assert_false(verdict(r, "b.example", NULL));
	rules_free(r);
}

/* Includes: relative to the including file; deny wins across files. */
static void
test_include(void **state)
{
	struct rules_verdict	 v;
	struct rules		*r = rules_create();
	const char		*top;

	assert_int_equal(mkdir(strcat(strcpy(errbuf, tmpdir), "/sub"), 0700), 0);
	write_file("sub/deny", "# denies\ndeny upload.pypi.org\n");
	write_file("sub/allow", "allow *.pypi.org\ninclude deny\n");
	top = write_file("top", "include sub/allow\nallow pypi.org\n");
	assert_int_equal(rules_load_file(r, top, errbuf, sizeof errbuf), 0);
	assert_true(verdict(r, "pypi.org", NULL));
	assert_true(verdict(r, "files.pypi.org", NULL));
	assert_false(verdict(r, "upload.pypi.org", &v));
	assert_non_null(strstr(v.file, "sub/deny"));
	assert_int_equal(v.line, 2);
	rules_free(r);
}

/* Include loops and missing files are refused with the include's place. */
static void
test_include_errors(void **state)
{
	struct rules	*r = rules_create();
	const char	*a, *b;
	char		 want[600];

	a = write_file("loop-a", "allow a.example\ninclude loop-b\n");
	b = write_file("loop-b", "\n\ninclude loop-a\n");
	assert_int_equal(rules_load_file(r, a, errbuf, sizeof errbuf), -1);
	snprintf(want, sizeof want, "%s:3: include loop", b);
	assert_non_null(strstr(errbuf, want));
	a = write_file("self", "include self\n");
	assert_int_equal(rules_load_file(r, a, errbuf, sizeof errbuf), -1);
	assert_non_null(strstr(errbuf, "include loop"));
	a = write_file("missing", "allow x.example\ninclude nothere\n");
	assert_int_equal(rules_load_file(r, a, errbuf, sizeof errbuf), -1);
	snprintf(want, sizeof want, "%s:2: cannot read", a);
	assert_non_null(strstr(errbuf, want));
	snprintf(want, sizeof want, "%s/nothere", tmpdir);
	assert_int_equal(rules_load_file(r, want, errbuf, sizeof errbuf), -1);
	assert_non_null(strstr(errbuf, "No such file"));
	assert_false(verdict(r, "a.example", NULL));
	assert_false(verdict(r, "x.example", NULL));
	rules_free(r);
}

/* Presets are found through PINHOLE_PRESETDIR. */
static void
test_presets(void **state)
{
	struct rules	*r;
	const char	*dir = getenv("PINHOLE_PRESETDIR");

	if (dir == NULL || *dir == '\0')
		skip();
	r = policy("include preset:python\ninclude preset:github\n"
	    "include preset:node\ninclude preset:rust\ninclude preset:go\n"
	    "include preset:debian\n");
	assert_true(verdict(r, "pypi.org", NULL));
	assert_true(verdict(r, "files.pythonhosted.org", NULL));
	assert_true(verdict(r, "github.com:22", NULL));
	assert_true(verdict(r, "registry.npmjs.org", NULL));
	assert_true(verdict(r, "index.crates.io", NULL));
	assert_true(verdict(r, "proxy.golang.org", NULL));
	assert_true(verdict(r, "deb.debian.org:80", NULL));
	assert_false(verdict(r, "evil.example", NULL));
	rules_free(r);
}

/* allow-private: CIDR and single addresses; v4-mapped counts as v4. */
static void
test_private(void **state)
{
	static const uint8_t	in[4] = { 10, 20, 3, 4 }, out[4] = { 10, 21 };
	static const uint8_t	mapped[16] = { [10] = 0xff, [11] = 0xff,
	    10, 20, 0, 1 };
	static const uint8_t	ula[16] = { 0xfd, 0x12, [15] = 1 };
	static const uint8_t	one[4] = { 192, 168, 1, 5 };
	struct rules_verdict	 v;
	struct rules		*r = policy("allow-private 10.20.0.0/16\n"
	    "allow-private [fd12::/16]\nallow-private 192.168.1.5\n"
	    "allow 10.0.0.0/8\n");

	assert_true(rules_private_ok(r, in, 4, &v));
	assert_int_equal(v.line, 1);
	assert_string_equal(v.text, "allow-private 10.20.0.0/16");
	assert_false(rules_private_ok(r, out, 4, &v));
	assert_non_null(v.why);
	assert_true(rules_private_ok(r, mapped, 16, &v));
	assert_true(rules_private_ok(r, ula, 16, &v));
	assert_true(rules_private_ok(r, one, 4, &v));
	assert_false(rules_private_ok(r, one, 3, &v));
	/* allow-private alone allows no connection. */
	assert_true(verdict(r, "10.20.3.4:443", NULL));
	assert_false(verdict(r, "192.168.1.5", NULL));
	rules_free(r);
}

/* The ports allow rules name explicitly, sorted and unique. */
static void
test_rules_ports(void **state)
{
	uint16_t	 ports[16];
	struct rules	*r = policy("allow a.example\nallow b.example:22,443\n"
	    "allow c.example:8000-8002\nallow d.example:*\n"
	    "deny e.example:25\nallow f.example:22\n");

	assert_int_equal(rules_ports(r, ports, 16), 5);
	assert_int_equal(ports[0], 22);
	assert_int_equal(ports[1], 443);
	assert_int_equal(ports[2], 8000);
	assert_int_equal(ports[4], 8002);
	assert_int_equal(rules_ports(r, ports, 2), 2);
	rules_free(r);
}

/* The user's policy path follows XDG_CONFIG_HOME, then HOME. */
static void
test_default_path(void **state)
{
	char	buf[256];

	setenv("XDG_CONFIG_HOME", "/x/conf", 1);
	assert_int_equal(rules_default_path(buf, sizeof buf), 0);
	assert_string_equal(buf, "/x/conf/pinhole/policy");
	setenv("XDG_CONFIG_HOME", "", 1);
	setenv("HOME", "/home/u", 1);
	assert_int_equal(rules_default_path(buf, sizeof buf), 0);
	assert_string_equal(buf, "/home/u/.config/pinhole/policy");
	unsetenv("XDG_CONFIG_HOME");
	assert_int_equal(rules_default_path(buf, 10), -1);
	unsetenv("HOME");
	assert_int_equal(rules_default_path(buf, sizeof buf), -1);
}

/* Comments, blank lines, tabs and CRLF are all fine. */
static void
test_layout(void **state)
{
	struct rules	*r = policy("# top\r\n\t\r\nallow\ta.example  # x\r\n"
	    "   deny\t b.example\r\nallow c.example#no space\n");

	assert_true(verdict(r, "a.example", NULL));
	assert_false(verdict(r, "b.example", NULL));
	assert_true(verdict(r, "c.example", NULL));
	rules_free(r);
}

/* Make and remove the temp dir the include tests write to. */
static int
setup(void **state)
{
	return (mkdtemp(tmpdir) == NULL ? -1 : 0);
}

static int
teardown(void **state)
{
	char	cmd[600];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return (system(cmd) == 0 ? 0 : -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact),
		cmocka_unit_test(test_wildcard),
		cmocka_unit_test(test_ports),
		cmocka_unit_test(test_addresses),
		cmocka_unit_test(test_deny_wins),
		cmocka_unit_test(test_verdict_fields),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_deny_suffix),
		cmocka_unit_test(test_long),
		cmocka_unit_test(test_atomic),
		cmocka_unit_test(test_include),
		cmocka_unit_test(test_include_errors),
		cmocka_unit_test(test_presets),
		cmocka_unit_test(test_private),
		cmocka_unit_test(test_rules_ports),
		cmocka_unit_test(test_default_path),
		cmocka_unit_test(test_layout),
	};

	return (cmocka_run_group_tests(tests, setup, teardown));
}
