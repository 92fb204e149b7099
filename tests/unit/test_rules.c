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

/*
 * Check the verdict for each space-separated "HOST[:PORT]" of targets
 * (default port 443): allowed when allow is 1, denied when 0.
 */
static void
expect(const struct rules *r, int allow, const char *targets)
{
	char	buf[1024], *t, *save = NULL;

	snprintf(buf, sizeof buf, "%s", targets);
	for (t = strtok_r(buf, " ", &save); t != NULL;
	    t = strtok_r(NULL, " ", &save)) {
		if (verdict(r, t, NULL) != allow)
			fail_msg("%s: %s, want %s", t, allow ? "denied" :
			    "allowed", allow ? "allowed" : "denied");
	}
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

/* Policies, the targets each must allow and those it must deny. */
static const struct {
	const char	*policy;
	const char	*allowed;
	const char	*denied;
} match_table[] = {
	/* Exact names: only that name, any case, with or without a dot. */
	{ "allow pypi.org\n",
	    "pypi.org PYPI.org.:80",
	    "evilpypi.org www.pypi.org pypi.org.evil.com pypi.org:8080 "
	    "pypi.or" },
	/* Wildcards: any subdomain at any depth, never the apex. */
	{ "allow *.pypi.org\n",
	    "files.pypi.org a.b.c.pypi.org:80",
	    "pypi.org pypi.org.evil.com evilpypi.org x.evilpypi.org org" },
	/* Port forms: default 80 and 443, lists, ranges, every port. */
	{ "allow a.example\nallow b.example:22,443\n"
	    "allow c.example:8000-8100\nallow d.example:*\n"
	    "allow e.example:22,8000-8002\n",
	    "a.example:80 a.example:443 b.example:22 c.example:8000 "
	    "c.example:8100 d.example:1 d.example:65535 e.example:8001",
	    "a.example:22 b.example:80 c.example:8101 e.example:8003" },
	/* Addresses and prefixes, any spelling (3405803785: 203.0.113.9). */
	{ "allow 203.0.113.0/24:443\nallow 2130706433:80\n"
	    "allow [2001:db8::1]:443\nallow [2001:db8:1::/48]:*\n"
	    "allow 2001:db8:2::7\nallow [::ffff:198.51.100.0/120]:443\n",
	    "203.0.113.9 3405803785 127.0.0.1:80 0x7f.1:80 0177.0.0.1:80 "
	    "[::ffff:127.0.0.1]:80 [2001:DB8:0::1] [2001:db8:1:ffff::1]:22 "
	    "[2001:db8:2::7]:80 198.51.100.200",
	    "203.0.114.9 203.0.113.9:80 [2001:db8::2] 198.51.101.1" },
	/* An address rule is never a name. */
	{ "allow 127.0.0.1\n", "", "localhost" },
	/* A deny over a public suffix is fine, and covers all below it. */
	{ "allow example.co.uk\ndeny *.co.uk\n", "",
	    "www.example.co.uk example.co.uk co.uk" },
	/* Comments, blank lines, tabs and CRLF are all fine. */
	{ "# top\r\n\t\r\nallow\ta.example  # x\r\n"
	    "   deny\t b.example\r\nallow c.example#no space\n",
	    "a.example c.example", "b.example" },
};

/* Each policy of the table allows and denies what it should. */
static void
test_match_table(void **state)
{
	struct rules	*r;
	size_t		 i;

	for (i = 0; i < sizeof match_table / sizeof match_table[0]; i++) {
		r = policy(match_table[i].policy);
		expect(r, 1, match_table[i].allowed);
		expect(r, 0, match_table[i].denied);
		rules_free(r);
	}
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
	expect(r, 0, "upload.pypi.org:8443 pypi.org:22 a.evil.pypi.org "
	    "10.1.2.3:443");
	expect(r, 1, "files.pypi.org pypi.org:23 evil.pypi.org 10.1.2.3:80 "
	    "10.2.2.3:443");
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
	{ "allow a.example until\n", "until: missing time" },
	{ "allow a.example until 2030-01-01\n", "until: bad time "
	    "'2030-01-01'" },
	{ "allow a.example until 2030-13-01T00:00:00Z\n", "until: bad time" },
	{ "allow a.example until 2030-02-29T00:00:00Z\n", "until: bad time" },
	{ "allow a.example until 2030-01-01T00:00:00+01:00\n", "bad time" },
	{ "allow a.example until 2030-01-01T00:00:00Z x\n", "unexpected 'x'" },
	{ "allow *.com until 2020-01-01T00:00:00Z\n", "public suffix" },
	{ "deny a.example until 2030-01-01T00:00:00Z\n", "unexpected 'until'" },
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
	{ "allow [pypi.org]:443\n", "only for IPv6" },
	{ "allow-private [10.0.0.0/8]\n", "only for IPv6" },
	{ "allow b\xc3\xbc" "cher.de\n", "punycode" },
	{ "allow a..b\n", "empty label" },
	{ "allow-private 10.0.0.0/8:443\n", "takes no port" },
	{ "allow-private pypi.org\n", "not a name" },
	{ "allow-private 0.0.0.0/0\n", "/0" },
	{ "allow-vsock 1\n", "allow-vsock takes no argument" },
	{ "allow-vsock until 2030-01-01T00:00:00Z\n", "takes no argument" },
	{ "allow-socket\n", "missing argument (allow-socket PATH)" },
	{ "allow-socket run/x.sock\n", "takes an absolute path" },
	{ "allow-socket $1/x\n", "takes an absolute path" },
	{ "allow-socket ${HOME\n", "takes an absolute path" },
	{ "allow-socket $HOMEx.sock\n", "policy:1: allow-socket takes an "
	    "absolute path, or one that starts with $NAME, ${NAME} or ~/, "
	    "not '$HOMEx.sock'" },
	{ "allow-socket ~user/x\n", "takes an absolute path" },
	{ "allow-socket /a b\n", "unexpected 'b'" },
	{ "allow-socket /x\x01y\n", "control character in '/x\\x01y'" },
	{ "allow-socket /run/dbus/system_bus_socket\n", "policy:1: "
	    "allow-socket: /run/dbus/system_bus_socket resolves names around "
	    "the gateway; it stays closed" },
	{ "allow-socket /var/run/avahi-daemon/socket\n", "resolves names" },
	{ "allow-socket /run/systemd/resolve/io.systemd.Resolve\n",
	    "resolves names" },
	{ "allow-socket /run/nscd/socket\n", "resolves names" },
	{ "allow-socket /" "0123456789012345678901234567890123456789"
	    "0123456789012345678901234567890123456789"
	    "012345678901234567890123456789\n", "at most 107 bytes" },
	{ "include\n", "missing argument" },
	{ "include preset:../etc\n", "bad preset name" },
	{ "include preset:nonesuch\n", "no preset 'nonesuch' in " },
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
	expect(r, 1, "a.example");
	expect(r, 0, "b.example");
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
	expect(r, 1, "pypi.org files.pypi.org");
	assert_false(verdict(r, "upload.pypi.org", &v));
	assert_non_null(strstr(v.file, "sub/deny"));
	assert_int_equal(v.line, 2);
	rules_free(r);
}

/*
 * rules_text: every rule in force as written, files (with includes) and
 * one-line rules alike, in load order; ended rules and comments left out;
 * only whole lines when the buffer is short.
 */
static void
test_text(void **state)
{
	struct rules	*r = rules_create();
	const char	*top;
	char		 text[256];

	write_file("inc", "deny upload.pypi.org  # no uploads\n");
	top = write_file("main", "allow pypi.org:443\ninclude inc\n"
	    "allow old.example until 2001-01-01T00:00:00Z\n");
	assert_int_equal(rules_load_file(r, top, errbuf, sizeof errbuf), 0);
	assert_int_equal(rules_load_text(r, "--allow", "allow-private "
	    "127.0.0.0/8", 25, errbuf, sizeof errbuf), 0);
	assert_int_equal(rules_load_text(r, "--allow", "allow cli.example",
	    17, errbuf, sizeof errbuf), 0);
	assert_int_equal(rules_text(r, text, sizeof text), 84);
	assert_string_equal(text, "allow pypi.org:443\n"
	    "deny upload.pypi.org\n"
	    "allow-private 127.0.0.0/8\n"
	    "allow cli.example\n");
	assert_int_equal(rules_text(r, text, 30), 19);
	assert_string_equal(text, "allow pypi.org:443\n");
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
	expect(r, 0, "a.example x.example");
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
	expect(r, 1, "pypi.org files.pythonhosted.org github.com:22 "
	    "registry.npmjs.org index.crates.io "
	    "proxy.golang.org deb.debian.org:80");
	expect(r, 0, "evil.example");
	rules_free(r);
}

/* A preset that is not there: the one meant, and where they are. */
static void
test_preset_near(void **state)
{
	const char	*dir = getenv("PINHOLE_PRESETDIR");
	char		 near[RULES_PRESET_LEN], names[16][RULES_PRESET_LEN];

	if (dir == NULL || *dir == '\0')
		skip();
	assert_non_null(strstr(refused("include preset:pyton\n"),
	    "policy:1: no preset 'pyton' in "));
	assert_non_null(strstr(errbuf, " (did you mean 'python'?); pinhole "
	    "check --presets lists them"));
	assert_null(strstr(refused("include preset:zzzzzz\n"), "did you"));
	rules_preset_near("gihtub", near, sizeof near);
	assert_string_equal(near, "github");
	assert_int_equal(rules_presets(names, 16), 6);
	assert_string_equal(names[0], "debian");
	assert_string_equal(names[5], "rust");
	rules_preset_about("python", near, sizeof near);
	assert_string_equal(near, "Python packages: pip and friends.");
}

/* A host written as a URL is said back as the host to write. */
static void
test_url(void **state)
{
	struct host	 h;
	uint16_t	 port;
	const char	*errstr;
	char		 buf[512];

	assert_string_equal(refused("allow https://pypi.org\n"),
	    "policy:1: bad host 'https://pypi.org': write the host, not a "
	    "URL: allow pypi.org");
	assert_string_equal(refused("allow pypi.org/simple\n"),
	    "policy:1: bad host 'pypi.org/simple': write the host, not a "
	    "URL: allow pypi.org (a path goes on the rule as a constraint: "
	    "allow pypi.org path /simple/**)");
	assert_string_equal(refused("deny http://x.example:8080/path/\n"),
	    "policy:1: bad host 'http://x.example:8080/path/': write the "
	    "host, not a URL: deny x.example:8080");
	assert_string_equal(refused("allow-private http://10.1.2.3/\n"),
	    "policy:1: bad host 'http://10.1.2.3/': write the host, not a "
	    "URL: 10.1.2.3");
	assert_non_null(strstr(refused("secret T for https://a.example\n"),
	    "write the host, not a URL: a.example"));
	assert_int_equal(host_url_hint("http://u:p@[::1]:81/a?q#f", 25, NULL,
	    buf, sizeof buf), 1);
	assert_string_equal(buf, "write the host, not a URL: [::1]:81 (paths "
	    "go in 'path /a/**' on an allow rule)");
	assert_int_equal(host_url_hint("https://*.Example.ORG/", 21, "allow",
	    buf, sizeof buf), 1);
	assert_string_equal(buf, "write the host, not a URL: allow "
	    "*.example.org");
	/* Not URLs: prefixes, addresses, and what is no host at all. */
	assert_int_equal(host_url_hint("10.0.0.0/8", 10, NULL, buf,
	    sizeof buf), 0);
	assert_int_equal(host_url_hint("fe80::/10", 9, NULL, buf, sizeof buf),
	    0);
	assert_int_equal(host_url_hint("pypi.org", 8, NULL, buf, sizeof buf),
	    0);
	assert_int_equal(host_url_hint("https://a..b/", 13, NULL, buf,
	    sizeof buf), 0);
	assert_int_equal(host_url_hint("x://y:99999", 11, NULL, buf,
	    sizeof buf), 0);
	/* check and request read hosts with host_port_parse(). */
	assert_int_equal(host_port_parse("https://pypi.org/simple", &h, &port,
	    443, &errstr), -1);
	assert_string_equal(errstr, "write the host, not a URL: pypi.org "
	    "(paths go in 'path /simple/**' on an allow rule)");
	assert_int_equal(host_port_parse("pypi.org:8080", &h, &port, 443,
	    &errstr), 0);
	assert_int_equal(port, 8080);
}

/* Join the lines a command line's words make with '|'. */
static const char *
lines(const char *a0, const char *a1, const char *a2, const char *a3,
    const char *a4)
{
	static char		 out[2048];
	const char		*args[] = { a0, a1, a2, a3, a4 };
	struct rules_lines	 l;
	size_t			 n = 0, i;

	while (n < 5 && args[n] != NULL)
		n++;
	if (rules_args_lines(args, n, &l, errbuf, sizeof errbuf) == -1) {
		snprintf(out, sizeof out, "error: %s", errbuf);
		return (out);
	}
	out[0] = '\0';
	for (i = 0; i < l.n; i++)
		snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s",
		    i > 0 ? "|" : "", l.v[i]);
	rules_lines_free(&l);
	return (out);
}

/* A command line's words make whole policy lines, never wrong ones. */
static void
test_args(void **state)
{
	assert_string_equal(lines("pypi.org", "github.com:22", NULL, NULL,
	    NULL), "allow pypi.org|allow github.com:22");
	assert_string_equal(lines("allow-private", "127.0.0.0/8", NULL, NULL,
	    NULL), "allow-private 127.0.0.0/8");
	assert_string_equal(lines("github.com", "read-only", "path",
	    "/x/**", "pypi.org"),
	    "allow github.com read-only path /x/**|allow pypi.org");
	assert_string_equal(lines("github.com read-only  methods GET until",
	    "2030-01-01T00:00:00Z", NULL, NULL, NULL),
	    "allow github.com read-only methods GET until "
	    "2030-01-01T00:00:00Z");
	assert_string_equal(lines("deny", "evil.example", "include",
	    "preset:python", "allow-vsock"),
	    "deny evil.example|include preset:python|allow-vsock");
	assert_string_equal(lines("secret", "TOKEN", "for",
	    "a.example,b.example", "from /run/t"),
	    "secret TOKEN for a.example,b.example from /run/t");
	assert_string_equal(lines("allow-socket /run/x.sock allow a.example",
	    NULL, NULL, NULL, NULL),
	    "allow-socket /run/x.sock|allow a.example");
	/* A comment ends the words: log --propose's lines as they are. */
	assert_string_equal(lines("allow pypi.org:443      # 3 refused",
	    "x.example", NULL, NULL, NULL), "allow pypi.org:443");
	/* Left for the parser to refuse, whole. */
	assert_string_equal(lines("deny", NULL, NULL, NULL, NULL), "deny");
	assert_string_equal(lines("github.com", "methods", NULL, NULL, NULL),
	    "allow github.com methods");
	/* A word that is no host is refused, not made a rule of its own. */
	assert_string_equal(lines("github.com", "readonly", NULL, NULL, NULL),
	    "error: 'readonly' is neither a directive nor a constraint (did "
	    "you mean 'read-only'?), and not a host a rule names");
	assert_string_equal(lines("alow-private", "10.0.0.0/8", NULL, NULL,
	    NULL), "error: 'alow-private' is neither a directive nor a "
	    "constraint (did you mean 'allow-private'?), and not a host a "
	    "rule names");
	assert_string_equal(lines("read-only", "github.com", NULL, NULL,
	    NULL), "error: 'read-only' is not a host: it goes after one "
	    "(HOST read-only)");
	assert_string_equal(lines("deny", "evil.example", "path", "/x", NULL),
	    "error: 'path' is not a host: it goes after one (HOST path "
	    "/PREFIX/**)");
	assert_string_equal(lines("  ", "# nothing", NULL, NULL, NULL),
	    "error: no rule given");
	/* A host is a host, whatever it looks like. */
	assert_string_equal(lines("path.example", "readonly.example", NULL,
	    NULL, NULL), "allow path.example|allow readonly.example");
}

/* "Did you mean": near enough, or nothing. */
static void
test_nearest(void **state)
{
	const char	*names[] = { "allow", "allow-private", "check",
	    "policy", NULL };

	assert_string_equal(rules_nearest("alow", names), "allow");
	assert_string_equal(rules_nearest("polcy", names), "policy");
	assert_string_equal(rules_nearest("chekc", names), "check");
	assert_null(rules_nearest("allow", names));
	assert_null(rules_nearest("xyz", names));
	assert_null(rules_nearest("chx", names));
	assert_int_equal(rules_distance("kitten", "sitting"), 3);
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
	expect(r, 1, "10.20.3.4:443");
	expect(r, 0, "192.168.1.5");
	rules_free(r);
}

/* allow-socket: the paths as written, in load order, nothing else. */
static void
test_allow_socket(void **state)
{
	struct rules	*r = policy("allow a.example\n");
	const char	*s[4];

	assert_int_equal(rules_sockets(r, s, 4), 0);
	rules_free(r);
	r = policy("allow-socket $SSH_AUTH_SOCK   # git over ssh\n"
	    "allow-socket /var/run/docker.sock\nallow-socket ~/.gnupg/S.x\n"
	    "allow-socket ${XDG_RUNTIME_DIR}/bus\n");
	assert_int_equal(rules_sockets(r, s, 4), 4);
	assert_string_equal(s[0], "$SSH_AUTH_SOCK");
	assert_string_equal(s[1], "/var/run/docker.sock");
	assert_string_equal(s[2], "~/.gnupg/S.x");
	assert_string_equal(s[3], "${XDG_RUNTIME_DIR}/bus");
	/* It allows no connection by itself. */
	expect(r, 0, "docker.sock:443");
	rules_free(r);
	/* A refused load adds none of it. */
	r = policy("allow a.example\n");
	assert_int_not_equal(rules_load_text(r, "p", "allow-socket /x\n"
	    "allow-vsock\nallow-socket rel\n", 45, errbuf, sizeof errbuf), 0);
	assert_int_equal(rules_sockets(r, s, 4), 0);
	assert_false(rules_allow_vsock(r));
	rules_free(r);
}

/* Collect what rules_dead() says, a line each. */
static int
dead_collect(const struct rules_dead *d, void *arg)
{
	char	line[1024];

	rules_dead_text(d, line, sizeof line);
	strncat(arg, line, 4095 - strlen(arg));
	strncat(arg, "\n", 4095 - strlen(arg));
	return (0);
}

/* Rules that cannot take effect: under a deny, or constraints under an
   allow without them; and rules that can. */
static void
test_dead(void **state)
{
	static char	 out[4096];
	struct rules	*r;

	out[0] = '\0';
	r = policy("allow github.com:22,443\n"
	    "allow github.com read-only path /myorg/**\n"
	    "allow api.example.org read-only\n"	/* alive */
	    "allow *.example.com:443\n"
	    "allow x.api.example.com methods GET\n"	/* 80 alive */
	    "allow *.api.example.com:* methods GET\n"	/* all but 443 */
	    "deny upload.pypi.org\n"
	    "allow upload.pypi.org\n"
	    "allow *.pypi.org:443\n"			/* alive */
	    "deny 10.0.0.0/8\n"
	    "allow 10.1.0.0/16:443\n"
	    "allow 11.0.0.0/8:443\n"			/* alive */
	    "allow until.test:443 read-only\n"
	    "allow until.test:443 until 2099-01-01T00:00:00Z\n");
	assert_int_equal(rules_dead(r, dead_collect, out), 5);
	assert_string_equal(out,
	    "policy:2: the constraints of 'allow github.com read-only path "
	    "/myorg/**' never apply on port 443: 'allow github.com:22,443' "
	    "(policy:1) allows it there without constraints, and a request "
	    "any allow rule lets through is allowed\n"
	    "policy:5: the constraints of 'allow x.api.example.com methods "
	    "GET' never apply on port 443: 'allow *.example.com:443' "
	    "(policy:4) allows it there without constraints, and a request "
	    "any allow rule lets through is allowed\n"
	    "policy:6: the constraints of 'allow *.api.example.com:* methods "
	    "GET' never apply on port 443: 'allow *.example.com:443' "
	    "(policy:4) allows it there without constraints, and a request "
	    "any allow rule lets through is allowed\n"
	    "policy:8: 'allow upload.pypi.org' never allows anything on any "
	    "of its ports: 'deny upload.pypi.org' (policy:7) denies it there, "
	    "and a deny always wins\n"
	    "policy:11: 'allow 10.1.0.0/16:443' never allows anything on any "
	    "of its ports: 'deny 10.0.0.0/8' (policy:10) denies it there, and "
	    "a deny always wins\n");
	rules_free(r);
	/* A deny in the system layer, many of them, an apex. */
	r = policy("allow a.test:8000-8100 path /x\nallow a.test:8050-8200\n"
	    "deny *.a.test\nallow a.test:80\n");
	out[0] = '\0';
	assert_int_equal(rules_dead(r, dead_collect, out), 1);
	assert_non_null(strstr(out, "policy:1: the constraints of 'allow "
	    "a.test:8000-8100 path /x' never apply on ports 8050-8100:"));
	rules_free(r);
}

/* allow-vsock: off unless a file of the policy says it. */
static void
test_allow_vsock(void **state)
{
	struct rules	*r = policy("allow a.example\n");

	assert_false(rules_allow_vsock(r));
	rules_free(r);
	r = policy("allow a.example\nallow-vsock   # the host's agent\n");
	assert_true(rules_allow_vsock(r));
	/* It allows no connection by itself. */
	expect(r, 0, "allow-vsock:443");
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

/* A rule with an end: in force until then, left out after. */
static void
test_until(void **state)
{
	struct rules	*r;
	time_t		 t;
	char		 when[32], text[128];

	(void)state;
	r = policy("allow a.example until 2999-01-01T00:00:00Z\n"
	    "allow b.example until 2000-01-01T00:00:00Z\n"
	    "allow c.example until 2998-06-30T12:00:00Z\n"
	    "allow d.example\n");
	expect(r, 1, "a.example c.example d.example");
	expect(r, 0, "b.example");
	assert_int_equal(rules_time_parse("2998-06-30T12:00:00Z", 20, &t), 0);
	assert_int_equal(rules_next_end(r), t);
	rules_free(r);
	r = policy("allow b.example until 1970-01-02T00:00:00Z\n");
	assert_int_equal(rules_next_end(r), 0);
	expect(r, 0, "b.example");
	rules_free(r);
	/* Passed by once it has ended, without a reload. */
	rules_time_format(time(NULL) + 1, when, sizeof when);
	snprintf(text, sizeof text, "allow soon.example until %s\n", when);
	r = policy(text);
	expect(r, 1, "soon.example");
	sleep(2);
	expect(r, 0, "soon.example");
	rules_free(r);
	assert_int_equal(rules_time_parse("2024-02-29T23:59:59Z", 20, &t), 0);
	assert_int_equal(t, 1709251199);
	assert_int_equal(rules_time_parse("2023-02-29T00:00:00Z", 20, &t), -1);
	assert_int_equal(rules_time_parse("2024-02-29T24:00:00Z", 20, &t), -1);
	assert_int_equal(rules_time_parse("2024-02-29t00:00:00Z", 20, &t), -1);
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

/* upstream, upstream-auth and no-upstream: what is taken, refused. */
static void
test_upstream_lines(void **state)
{
	struct rules	*r;
	struct host	 h;
	uint16_t	 port;
	const char	*errstr;

	assert_int_equal(rules_upstream_parse("http://10.0.0.1:3128", &h,
	    &port, &errstr), 0);
	assert_string_equal(h.text, "10.0.0.1");
	assert_int_equal(port, 3128);
	assert_int_equal(rules_upstream_parse("http://Proxy.Example:80/", &h,
	    &port, &errstr), 0);
	assert_string_equal(h.text, "proxy.example");
	assert_int_equal(rules_upstream_parse("http://[2001:db8::1]:8080", &h,
	    &port, &errstr), 0);
	assert_string_equal(h.text, "2001:db8::1");
	assert_int_equal(rules_upstream_parse("http://proxy.example", &h,
	    &port, &errstr), -1);
	assert_non_null(strstr(errstr, "port"));
	assert_int_equal(rules_upstream_parse("http://u:p@proxy.example:1",
	    &h, &port, &errstr), -1);
	assert_non_null(strstr(errstr, "upstream-auth FILE"));
	assert_int_equal(rules_upstream_parse("https://proxy.example:1", &h,
	    &port, &errstr), -1);
	assert_int_equal(rules_upstream_parse("http://proxy.example:1/x", &h,
	    &port, &errstr), -1);
	assert_int_equal(rules_upstream_parse("http://2001:db8::1:80", &h,
	    &port, &errstr), -1);
	assert_int_equal(rules_upstream_parse("http://:80", &h, &port,
	    &errstr), -1);
	assert_int_equal(rules_upstream_parse("http://p.example:0", &h, &port,
	    &errstr), -1);
	assert_int_equal(rules_upstream_parse("socks5://p.example:1", &h,
	    &port, &errstr), -1);

	r = policy("upstream http://127.0.0.1:3128\nupstream-auth /a\n"
	    "no-upstream host.example,*.corp.example,192.168.0.0/16\n");
	assert_non_null(rules_upstream(r));
	assert_string_equal(rules_upstream(r)->auth, "/a");
	assert_string_equal(rules_upstream(r)->auth_origin, "policy:2");
	/* Nothing of it allows a host. */
	expect(r, 0, "127.0.0.1:3128 host.example");
	rules_free(r);
	r = policy("allow x.example\n");
	assert_null(rules_upstream(r));
	rules_free(r);
	assert_non_null(strstr(refused("upstream http://a:1\n"
	    "upstream http://b:2\n"), "policy:2: upstream is given twice "
	    "(first at policy:1)"));
	assert_non_null(strstr(refused("upstream-auth /a\nupstream-auth /b\n"),
	    "upstream-auth is given twice"));
	assert_non_null(strstr(refused("upstream http://a\n"),
	    "give the port"));
	assert_non_null(strstr(refused("no-upstream a.example:443\n"),
	    "names a port"));
	assert_non_null(strstr(refused("no-upstream a,,b\n"),
	    "bad host list"));
	assert_non_null(strstr(refused("no-upstream *\n"), "every host"));
	assert_non_null(strstr(refused("upstream http://a:1 extra\n"),
	    "unexpected"));
	assert_non_null(strstr(refused("upstrem http://a:1\n"),
	    "did you mean 'upstream'"));
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
		cmocka_unit_test(test_match_table),
		cmocka_unit_test(test_deny_wins),
		cmocka_unit_test(test_verdict_fields),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_long),
		cmocka_unit_test(test_atomic),
		cmocka_unit_test(test_include),
		cmocka_unit_test(test_include_errors),
		cmocka_unit_test(test_presets),
		cmocka_unit_test(test_private),
		cmocka_unit_test(test_allow_vsock),
		cmocka_unit_test(test_allow_socket),
		cmocka_unit_test(test_dead),
		cmocka_unit_test(test_preset_near),
		cmocka_unit_test(test_url),
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_nearest),
		cmocka_unit_test(test_rules_ports),
		cmocka_unit_test(test_default_path),
		cmocka_unit_test(test_until),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_upstream_lines),
	};

	return (cmocka_run_group_tests(tests, setup, teardown));
}
