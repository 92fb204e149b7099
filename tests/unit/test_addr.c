/*
 * Unit tests for special-purpose address classes: every range of the
 * list the gateway refuses to dial, and public addresses around them;
 * addresses and socket addresses written as text.
 */
#include "config.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rules/rules.h"

/* An address in text and the class it belongs to. */
static const struct {
	const char	*text;
	enum addr_class	 class;
} class_table[] = {
	{ "0.0.0.0", ADDR_UNSPECIFIED },
	{ "0.1.2.3", ADDR_RESERVED },
	{ "127.0.0.1", ADDR_LOOPBACK },
	{ "127.255.255.254", ADDR_LOOPBACK },
	{ "10.0.0.1", ADDR_PRIVATE },
	{ "172.16.0.1", ADDR_PRIVATE },
	{ "172.31.255.255", ADDR_PRIVATE },
	{ "172.32.0.1", ADDR_PUBLIC },
	{ "192.168.1.1", ADDR_PRIVATE },
	{ "169.254.169.254", ADDR_METADATA },
	{ "169.254.170.2", ADDR_METADATA },
	{ "169.254.1.1", ADDR_LINK_LOCAL },
	{ "100.100.100.200", ADDR_METADATA },
	{ "168.63.129.16", ADDR_METADATA },
	{ "168.63.129.17", ADDR_PUBLIC },
	{ "100.64.0.1", ADDR_CGNAT },
	{ "100.127.255.255", ADDR_CGNAT },
	{ "100.128.0.1", ADDR_PUBLIC },
	{ "224.0.0.1", ADDR_MULTICAST },
	{ "239.255.255.250", ADDR_MULTICAST },
	{ "240.0.0.1", ADDR_RESERVED },
	{ "255.255.255.255", ADDR_RESERVED },
	{ "192.0.0.8", ADDR_RESERVED },
	{ "192.0.2.1", ADDR_RESERVED },
	{ "198.51.100.1", ADDR_RESERVED },
	{ "203.0.113.1", ADDR_RESERVED },
	{ "198.18.0.1", ADDR_RESERVED },
	{ "198.19.255.255", ADDR_RESERVED },
	{ "198.20.0.1", ADDR_PUBLIC },
	{ "8.8.8.8", ADDR_PUBLIC },
	{ "151.101.0.223", ADDR_PUBLIC },
	{ "::", ADDR_UNSPECIFIED },
	{ "::1", ADDR_LOOPBACK },
	{ "::ffff:8.8.8.8", ADDR_EMBEDDED_V4 },
	{ "::ffff:0:8.8.8.8", ADDR_EMBEDDED_V4 },
	{ "::8.8.8.8", ADDR_EMBEDDED_V4 },
	{ "64:ff9b::808:808", ADDR_EMBEDDED_V4 },
	{ "64:ff9b:1::a00:1", ADDR_EMBEDDED_V4 },
	{ "2001::1", ADDR_EMBEDDED_V4 },
	{ "2001:0:4136:e378::1", ADDR_EMBEDDED_V4 },
	{ "2002:a00:1::1", ADDR_EMBEDDED_V4 },
	{ "2001:db8::1", ADDR_RESERVED },
	{ "2001:2::1", ADDR_RESERVED },
	{ "3fff::1", ADDR_RESERVED },
	{ "100::1", ADDR_RESERVED },
	{ "fd00:ec2::254", ADDR_METADATA },
	{ "fd00::1", ADDR_PRIVATE },
	{ "fc00::1", ADDR_PRIVATE },
	{ "fe80::1", ADDR_LINK_LOCAL },
	{ "ff02::1", ADDR_MULTICAST },
	{ "2a00:1450:4001::1", ADDR_PUBLIC },
	{ "2606:4700::6810:85e5", ADDR_PUBLIC },
	{ "4000::1", ADDR_RESERVED },
};

/* Every address lands in its class. */
static void
test_classes(void **state)
{
	uint8_t	addr[16];
	size_t	i, len;
	int	v6;

	for (i = 0; i < sizeof class_table / sizeof class_table[0]; i++) {
		v6 = strchr(class_table[i].text, ':') != NULL;
		len = v6 ? 16 : 4;
		assert_int_equal(inet_pton(v6 ? AF_INET6 : AF_INET,
		    class_table[i].text, addr), 1);
		if (addr_classify(addr, len) != class_table[i].class)
			fail_msg("%s: %s, want %s", class_table[i].text,
			    addr_class_name(addr_classify(addr, len)),
			    addr_class_name(class_table[i].class));
	}
}

/* Wrong lengths and every class have names; no class is unnamed. */
static void
test_names(void **state)
{
	static const uint8_t	addr[16] = { 0 };
	int			c;

	assert_int_equal(addr_classify(addr, 5), ADDR_RESERVED);
	for (c = ADDR_PUBLIC; c <= ADDR_EMBEDDED_V4; c++) {
		assert_non_null(addr_class_name(c));
		assert_string_not_equal(addr_class_name(c), "unknown");
	}
	assert_string_equal(addr_class_name(ADDR_EMBEDDED_V4 + 1), "unknown");
}

/* Every IPv4 address in the table, and some IPv6, written as inet_ntop. */
static void
test_format(void **state)
{
	static const char	*v6[] = { "::", "::1", "2001:db8::1",
				    "::ffff:10.0.0.1", "fe80::1:2:3:4" };
	uint8_t			 a[16];
	char			 want[INET6_ADDRSTRLEN], buf[INET6_ADDRSTRLEN];
	size_t			 i;
	unsigned int		 b;

	for (i = 0; i < sizeof class_table / sizeof class_table[0]; i++) {
		if (inet_pton(AF_INET, class_table[i].text, a) != 1)
			continue;
		assert_int_equal(addr_format(buf, sizeof buf, a, 4),
		    strlen(class_table[i].text));
		assert_string_equal(buf, class_table[i].text);
	}
	for (b = 0; b < 256; b++) {
		memset(a, b, 4);
		a[1] = 255 - b;
		inet_ntop(AF_INET, a, want, sizeof want);
		addr_format(buf, sizeof buf, a, 4);
		assert_string_equal(buf, want);
	}
	for (i = 0; i < sizeof v6 / sizeof v6[0]; i++) {
		assert_int_equal(inet_pton(AF_INET6, v6[i], a), 1);
		assert_int_equal(addr_format(buf, sizeof buf, a, 16),
		    strlen(v6[i]));
		assert_string_equal(buf, v6[i]);
	}
	/* No room: nothing written past the buffer, an empty string. */
	memset(a, 255, 4);
	memset(buf, 'x', sizeof buf);
	assert_int_equal(addr_format(buf, 15, a, 4), 0);
	assert_string_equal(buf, "");
	assert_int_equal(buf[15], 'x');
	assert_int_equal(addr_format(buf, 16, a, 4), 15);
	assert_string_equal(buf, "255.255.255.255");
}

/* The text of the socket address of a numeric host and port. */
static void
expect_sockaddr(const char *host, const char *port, size_t size,
    const char *want)
{
	struct addrinfo	 hints, *ai;
	char		 buf[64];

	memset(&hints, 0, sizeof hints);
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	assert_int_equal(getaddrinfo(host, port, &hints, &ai), 0);
	addr_sockaddr_text(ai->ai_addr, buf, size);
	freeaddrinfo(ai);
	assert_string_equal(buf, want);
}

/* Socket addresses as "ADDR:PORT", "[V6]:PORT", "local". */
static void
test_sockaddr(void **state)
{
	struct sockaddr	 un;
	char		 buf[64];

	expect_sockaddr("192.0.2.10", "53", 64, "192.0.2.10:53");
	expect_sockaddr("2001:db8::2", "65535", 64, "[2001:db8::2]:65535");
	/* Cut to the buffer. */
	expect_sockaddr("192.0.2.10", "53", 8, "192.0.2");
	memset(&un, 0, sizeof un);
	un.sa_family = AF_UNIX;
	addr_sockaddr_text(&un, buf, sizeof buf);
	assert_string_equal(buf, "local");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classes),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_sockaddr),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
