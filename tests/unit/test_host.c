/*
 * Unit tests for host canonicalisation: every IPv4 spelling, IPv6 forms,
 * case, trailing dots, length limits, punycode and raw non-ASCII.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rules/rules.h"

struct canon_case {
	const char	*in;
	enum host_kind	 kind;
	const char	*text;
};

/* Spellings and the one canonical form each must have. */
static const struct canon_case canon_table[] = {
	{ "pypi.org", HOST_NAME, "pypi.org" },
	{ "PyPI.ORG", HOST_NAME, "pypi.org" },
	{ "pypi.org.", HOST_NAME, "pypi.org" },
	{ "xn--bcher-kva.example", HOST_NAME, "xn--bcher-kva.example" },
	{ "XN--BCHER-KVA.example", HOST_NAME, "xn--bcher-kva.example" },
	{ "_dmarc.example.com", HOST_NAME, "_dmarc.example.com" },
	{ "localhost", HOST_NAME, "localhost" },
	{ "127.0.0.1", HOST_IPV4, "127.0.0.1" },
	{ "2130706433", HOST_IPV4, "127.0.0.1" },
	{ "0x7f000001", HOST_IPV4, "127.0.0.1" },
	{ "0X7F000001", HOST_IPV4, "127.0.0.1" },
	{ "0177.0.0.1", HOST_IPV4, "127.0.0.1" },
	{ "127.1", HOST_IPV4, "127.0.0.1" },
	{ "0x7f.1", HOST_IPV4, "127.0.0.1" },
	{ "127.0.1", HOST_IPV4, "127.0.0.1" },
	{ "0x7f.0.0.0x1", HOST_IPV4, "127.0.0.1" },
	{ "127.0.0.1.", HOST_IPV4, "127.0.0.1" },
	{ "0", HOST_IPV4, "0.0.0.0" },
	{ "4294967295", HOST_IPV4, "255.255.255.255" },
	{ "169.254.43518", HOST_IPV4, "169.254.169.254" },
	{ "::1", HOST_IPV6, "::1" },
	{ "[::1]", HOST_IPV6, "::1" },
	{ "2001:DB8:0:0:0:0:0:1", HOST_IPV6, "2001:db8::1" },
	{ "2001:0db8:0000:0000:0001:0000:0000:0001", HOST_IPV6,
	    "2001:db8::1:0:0:1" },
	{ "[2001:db8::]", HOST_IPV6, "2001:db8::" },
	{ "::ffff:127.0.0.1", HOST_IPV4, "127.0.0.1" },
	{ "::FFFF:7f00:1", HOST_IPV4, "127.0.0.1" },
	{ "[::ffff:10.1.2.3]", HOST_IPV4, "10.1.2.3" },
	{ "64:ff9b::a01:203", HOST_IPV6, "64:ff9b::a01:203" },
};

/* Inputs refused, and a word the reason must contain. */
static const struct {
	const char	*in;
	const char	*why;
} refuse_table[] = {
	{ "", "empty" },
	{ ".", "empty" },
	{ "a..b", "empty label" },
	{ ".pypi.org", "empty label" },
	{ "pypi.org..", "empty label" },
	{ "b\xc3\xbc" "cher.de", "punycode" },
	{ "1.2.3.4.5", "IPv4" },
	{ "256.1.1.1", "IPv4" },
	{ "1.2.3.256", "IPv4" },
	{ "1.2.65536", "IPv4" },
	{ "4294967296", "IPv4" },
	{ "0x100000000", "IPv4" },
	{ "08.1.1.1", "IPv4" },
	{ "0x", "IPv4" },
	{ "foo.123", "IPv4" },
	{ "example.0x10", "IPv4" },
	{ "exa mple.com", "character" },
	{ "*.example.com", "'*'" },
	{ "a*b.com", "'*'" },
	{ "::1::2", "IPv6" },
	{ "[::1", "IPv6" },
	{ "fe80::1%eth0", "IPv6" },
	{ "1.2.3.4:80", "IPv6" },
};

/* Each spelling gives the expected canonical form. */
static void
test_canonical(void **state)
{
	struct host	 h;
	const char	*errstr;
	size_t		 i;

	for (i = 0; i < sizeof canon_table / sizeof canon_table[0]; i++) {
		errstr = NULL;
		if (host_parse(canon_table[i].in, strlen(canon_table[i].in), &h,
		    &errstr) != 0)
			fail_msg("'%s' refused: %s", canon_table[i].in, errstr);
		assert_int_equal(h.kind, canon_table[i].kind);
		assert_string_equal(h.text, canon_table[i].text);
	}
}

/* Each bad input is refused with a reason that says why. */
static void
test_refused(void **state)
{
	struct host	 h;
	const char	*errstr;
	size_t		 i;

	for (i = 0; i < sizeof refuse_table / sizeof refuse_table[0]; i++) {
		errstr = NULL;
		if (host_parse(refuse_table[i].in, strlen(refuse_table[i].in),
		    &h, &errstr) == 0)
			fail_msg("'%s' accepted as %s", refuse_table[i].in, h.text);
		assert_non_null(errstr);
		if (strstr(errstr, refuse_table[i].why) == NULL)
			fail_msg("'%s': '%s' lacks '%s'", refuse_table[i].in,
			    errstr, refuse_table[i].why);
	}
}

/* The address bytes match the text. */
static void
test_addr_bytes(void **state)
{
	static const uint8_t	 v4[4] = { 127, 0, 0, 1 };
	static const uint8_t	 v6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	struct host		 h;
	const char		*errstr;

	assert_int_equal(host_parse("0x7f.1", 6, &h, &errstr), 0);
	assert_memory_equal(h.addr, v4, 4);
	assert_int_equal(host_parse("[2001:db8::1]", 13, &h, &errstr), 0);
	assert_memory_equal(h.addr, v6, 16);
	assert_int_equal(host_parse("::ffff:127.0.0.1", 16, &h, &errstr), 0);
	assert_memory_equal(h.addr, v4, 4);
}

/* Names up to 253 bytes and labels up to 63 pass; longer ones do not. */
static void
test_lengths(void **state)
{
	struct host	 h;
	const char	*errstr;
	char		 name[300];
	size_t		 i;

	memset(name, 'a', 63);
	memcpy(name + 63, ".com", 5);
	assert_int_equal(host_parse(name, strlen(name), &h, &errstr), 0);
	memset(name, 'a', 64);
	memcpy(name + 64, ".com", 5);
	assert_int_equal(host_parse(name, strlen(name), &h, &errstr), -1);
	assert_non_null(strstr(errstr, "63"));
	for (i = 0; i < 253; i++)
		name[i] = i % 2 ? '.' : 'a';
	name[252] = 'a';
	assert_int_equal(host_parse(name, 253, &h, &errstr), 0);
	name[253] = '.';
	assert_int_equal(host_parse(name, 254, &h, &errstr), 0);
	assert_int_equal(strlen(h.text), 253);
	name[253] = 'a';
	assert_int_equal(host_parse(name, 254, &h, &errstr), -1);
	assert_non_null(strstr(errstr, "253"));
}

/* A NUL byte inside the given length is refused, never truncated. */
static void
test_nul(void **state)
{
	struct host	 h;
	const char	*errstr;

	assert_int_equal(host_parse("pypi.org\0.evil", 14, &h, &errstr), -1);
	assert_int_equal(host_parse("::1\0x", 5, &h, &errstr), -1);
}

/* HOST[:PORT] splitting and the default port. */
static void
test_host_port(void **state)
{
	struct host	 h;
	uint16_t	 port;
	const char	*errstr;

	assert_int_equal(host_port_parse("pypi.org", &h, &port, 443, &errstr), 0);
	assert_int_equal(port, 443);
	assert_int_equal(host_port_parse("PyPI.org.:80", &h, &port, 443,
	    &errstr), 0);
	assert_string_equal(h.text, "pypi.org");
	assert_int_equal(port, 80);
	assert_int_equal(host_port_parse("[2001:db8::1]:22", &h, &port, 443,
	    &errstr), 0);
	assert_int_equal(h.kind, HOST_IPV6);
	assert_int_equal(port, 22);
	assert_int_equal(host_port_parse("[::1]", &h, &port, 443, &errstr), 0);
	assert_int_equal(port, 443);
	assert_int_equal(host_port_parse("2001:db8::1", &h, &port, 443,
	    &errstr), 0);
	assert_string_equal(h.text, "2001:db8::1");
	assert_int_equal(host_port_parse("2130706433:8080", &h, &port, 443,
	    &errstr), 0);
	assert_string_equal(h.text, "127.0.0.1");
	assert_int_equal(port, 8080);
	assert_int_equal(host_port_parse("a.b:0", &h, &port, 443, &errstr), -1);
	assert_int_equal(host_port_parse("a.b:65536", &h, &port, 443,
	    &errstr), -1);
	assert_int_equal(host_port_parse("a.b:", &h, &port, 443, &errstr), -1);
	assert_int_equal(host_port_parse("a.b:+1", &h, &port, 443, &errstr), -1);
	assert_int_equal(host_port_parse("[::1]x", &h, &port, 443, &errstr), -1);
	assert_int_equal(host_port_parse("[::1", &h, &port, 443, &errstr), -1);
}

/* Ports: the one parser every port goes through; 0 in want is refused. */
static const struct {
	const char	*in;
	uint16_t	 want;
} port_table[] = {
	{ "1", 1 }, { "80", 80 }, { "443", 443 }, { "65535", 65535 },
	{ "080", 80 }, { "00443", 443 },
	{ "0", 0 }, { "00000", 0 }, { "65536", 0 }, { "99999", 0 },
	{ "100000", 0 }, { "4294967377", 0 }, { "-1", 0 }, { "+80", 0 },
	{ " 80", 0 }, { "80 ", 0 }, { "0x50", 0 }, { "8O", 0 }, { "", 0 },
	{ "80\n", 0 }, { "1e3", 0 }, { "٣", 0 },
};

/* Every port is 1 to 65535 in plain digits, nothing else. */
static void
test_port(void **state)
{
	uint16_t	port;
	size_t		i;
	int		rv;

	(void)state;
	for (i = 0; i < sizeof port_table / sizeof port_table[0]; i++) {
		port = 7;
		rv = port_parse(port_table[i].in, strlen(port_table[i].in),
		    &port);
		if (rv != (port_table[i].want != 0 ? 0 : -1) ||
		    (rv == 0 && port != port_table[i].want) ||
		    (rv == -1 && port != 7))
			fail_msg("port '%s': rv %d port %u", port_table[i].in,
			    rv, port);
	}
	/* The length is respected: "80" of "8080". */
	assert_int_equal(port_parse("8080", 2, &port), 0);
	assert_int_equal(port, 80);
}

/* Socket addresses ("--listen", "--resolver"): an IP address and a port. */
static const struct {
	const char	*in;
	uint16_t	 defport;
	const char	*text;		/* NULL: refused */
	uint16_t	 port;
} addr_port_table[] = {
	{ "127.0.0.1:3128", 0, "127.0.0.1", 3128 },
	{ "[::1]:53", 0, "::1", 53 },
	{ "[::ffff:127.0.0.1]:80", 0, "127.0.0.1", 80 },
	{ "0.0.0.0:1", 0, "0.0.0.0", 1 },
	{ "127.0.0.1", 53, "127.0.0.1", 53 },
	{ "::1", 53, "::1", 53 },
	{ "[::1]", 53, "::1", 53 },
	{ "127.0.0.1:5353", 53, "127.0.0.1", 5353 },
	{ "127.0.0.1:99999", 0, NULL, 0 },
	{ "127.0.0.1:0", 0, NULL, 0 },
	{ "127.0.0.1:65536", 0, NULL, 0 },
	{ "127.0.0.1:-1", 0, NULL, 0 },
	{ "127.0.0.1:+80", 0, NULL, 0 },
	{ "127.0.0.1: 80", 0, NULL, 0 },
	{ "127.0.0.1:0x50", 0, NULL, 0 },
	{ "127.0.0.1:", 0, NULL, 0 },
	{ "127.0.0.1:99999", 53, NULL, 0 },
	{ "[::1]:65536", 53, NULL, 0 },
	{ "127.0.0.1", 0, NULL, 0 },
	{ "[::1]", 0, NULL, 0 },
	{ "::1", 0, NULL, 0 },
	{ "localhost:53", 0, NULL, 0 },
	{ "localhost", 53, NULL, 0 },
	{ ":53", 0, NULL, 0 },
	{ "", 53, NULL, 0 },
};

/* Socket addresses are refused unless address and port both are right. */
static void
test_addr_port(void **state)
{
	struct host	 h;
	uint16_t	 port;
	const char	*errstr;
	size_t		 i;
	int		 rv;

	(void)state;
	for (i = 0; i < sizeof addr_port_table / sizeof addr_port_table[0];
	    i++) {
		errstr = NULL;
		rv = addr_port_parse(addr_port_table[i].in, &h, &port,
		    addr_port_table[i].defport, &errstr);
		if (addr_port_table[i].text == NULL) {
			if (rv != -1 || errstr == NULL)
				fail_msg("'%s' taken", addr_port_table[i].in);
			continue;
		}
		if (rv != 0)
			fail_msg("'%s' refused: %s", addr_port_table[i].in,
			    errstr);
		assert_string_equal(h.text, addr_port_table[i].text);
		assert_int_equal(port, addr_port_table[i].port);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_canonical),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_addr_bytes),
		cmocka_unit_test(test_lengths),
		cmocka_unit_test(test_nul),
		cmocka_unit_test(test_host_port),
		cmocka_unit_test(test_port),
		cmocka_unit_test(test_addr_port),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
