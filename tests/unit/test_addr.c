/*
 * Unit tests for special-purpose address classes: every range of the
 * list the gateway refuses to dial, and public addresses around them.
 */
#include "config.h"

#include <arpa/inet.h>
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classes),
		cmocka_unit_test(test_names),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
