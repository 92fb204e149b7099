/*
 * Unit tests for the pure parts of netns/: the address plan and exit
 * statuses.
 */
#include "config.h"

#include <sys/wait.h>
#include <arpa/inet.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "netns/netns.h"
#include "netns/netns-int.h"

/* Check one network's gateway and sandbox addresses. */
static void
check_net(const char *cidr, const char *gw, const char *sb, unsigned int len)
{
	struct netns_net	 net;
	const char		*errstr = NULL;
	char			 buf[INET_ADDRSTRLEN];

	assert_int_equal(netns_net_parse(cidr, &net, &errstr), 0);
	assert_string_equal(inet_ntop(AF_INET, &net.gateway, buf,
	    sizeof(buf)), gw);
	assert_string_equal(inet_ntop(AF_INET, &net.sandbox, buf,
	    sizeof(buf)), sb);
	assert_int_equal(net.prefixlen, len);
}

/* Networks that work. */
static void
test_net_good(void **state)
{
	check_net(NETNS_NET_DEFAULT, "198.51.100.253", "198.51.100.254", 30);
	check_net("10.200.0.0/24", "10.200.0.1", "10.200.0.2", 24);
	check_net("172.31.255.248/29", "172.31.255.249", "172.31.255.250", 29);
}

/* Networks refused, each with a reason. */
static void
test_net_bad(void **state)
{
	static const char	*bad[] = {
		"", "10.0.0.0", "10.0.0.0/", "10.0.0.0/31", "10.0.0.0/7",
		"10.0.0.1/30", "10.0.0.0/x", "10.0.0.0/24x", "10.0.0/24",
		"300.0.0.0/24", "127.0.0.0/30", "198.19.0.0/30",
		"198.16.0.0/13", "224.0.0.0/30", "0.0.0.0/8", "10.0.0.0/-1",
		"::1/64", "10.0.0.0/ 24", NULL
	};
	struct netns_net	 net;
	const char		**p, *errstr;

	for (p = bad; *p != NULL; p++) {
		errstr = NULL;
		if (netns_net_parse(*p, &net, &errstr) != -1)
			fail_msg("accepted %s", *p);
		assert_non_null(errstr);
	}
}

/* Wait statuses become shell statuses. */
static void
test_exit_status(void **state)
{
	assert_int_equal(netns_exit_status(0), 0);
	assert_int_equal(netns_exit_status(3 << 8), 3);
	assert_int_equal(netns_exit_status(SIGTERM), 128 + SIGTERM);
	assert_int_equal(netns_exit_status(SIGKILL | 0x80), 128 + SIGKILL);
}

/* The capture rule: every port with a listener left out, UDP if asked. */
static void
test_nft_ruleset(void **state)
{
	const uint16_t	ports[] = { 3128, 53, 80, 443, 3129, 2222 };
	char		buf[1024], small[64];
	size_t		n;

	n = netns_nft_ruleset(ports, 6, 3129, 0, buf, sizeof buf);
	assert_int_equal(n, strlen(buf));
	assert_non_null(strstr(buf, "iifname \"gw0\" tcp dport != "
	    "{ 3129, 3128, 53, 80, 443, 2222 } tproxy to :3129 accept\n"));
	assert_non_null(strstr(buf, "priority mangle"));
	assert_null(strstr(buf, "udp"));
	n = netns_nft_ruleset(ports, 6, 3129, 1, buf, sizeof buf);
	assert_non_null(strstr(buf, "iifname \"gw0\" udp dport != 53 "
	    "tproxy to :3129 accept\n"));
	assert_int_equal(buf[n - 1], '\n');
	assert_int_equal(netns_nft_ruleset(ports, 6, 3129, 1, small,
	    sizeof small), 0);
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(test_net_good),
		cmocka_unit_test(test_net_bad),
		cmocka_unit_test(test_exit_status),
		cmocka_unit_test(test_nft_ruleset),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
