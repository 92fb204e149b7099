/*
 * Unit tests for the pure parts of netns/: the address plan, exit
 * statuses and the capture rule's netlink batch.
 */
#include "config.h"

#include <sys/wait.h>
#include <arpa/inet.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "netns/netns-int.h"
#include "netns/netns.h"

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

/* Count the elements of a nested attribute's list. */
static int
count_nested(const struct nlattr *list)
{
	const struct nlattr	*a;
	int			 left, n = 0;

	left = list->nla_len - NLA_HDRLEN;
	for (a = (const struct nlattr *)((const char *)list + NLA_HDRLEN);
	    left >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
	    a->nla_len <= left; left -= NLA_ALIGN(a->nla_len),
	    a = (const struct nlattr *)((const char *)a +
	    NLA_ALIGN(a->nla_len)))
		n++;
	return (n);
}

/* The set elements in a NEWSETELEM message. */
static int
count_elements(const struct nlmsghdr *nh)
{
	const struct nlattr	*a;
	int			 left;

	left = nh->nlmsg_len - NLMSG_LENGTH(sizeof(struct nfgenmsg));
	a = (const struct nlattr *)((const char *)NLMSG_DATA(nh) +
	    NLMSG_ALIGN(sizeof(struct nfgenmsg)));
	for (; left >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
	    a->nla_len <= left; left -= NLA_ALIGN(a->nla_len),
	    a = (const struct nlattr *)((const char *)a +
	    NLA_ALIGN(a->nla_len))) {
		if ((a->nla_type & NLA_TYPE_MASK) ==
		    NFTA_SET_ELEM_LIST_ELEMENTS)
			return (count_nested(a));
	}
	return (-1);
}

/* Walk a batch: its message types in order, elements of its set. */
static int
walk_batch(const char *buf, size_t len, int *types, int max, int *elems)
{
	const struct nlmsghdr	*nh;
	size_t			 off = 0;
	int			 n = 0;

	for (; off + sizeof *nh <= len; off += NLMSG_ALIGN(nh->nlmsg_len)) {
		nh = (const struct nlmsghdr *)(buf + off);
		assert_true(nh->nlmsg_len >= sizeof *nh &&
		    nh->nlmsg_len <= len - off);
		if (n < max)
			types[n] = nh->nlmsg_type;
		if (nh->nlmsg_type == ((NFNL_SUBSYS_NFTABLES << 8) |
		    NFT_MSG_NEWSETELEM))
			*elems = count_elements(nh);
		assert_int_equal(nh->nlmsg_seq, 7 + n);
		n++;
	}
	assert_int_equal(off, len);
	return (n);
}

/* The capture rule: every port with a listener left out, UDP if asked. */
static void
test_nft_batch(void **state)
{
	const uint16_t	ports[] = { 3128, 53, 80, 443, 3129, 2222, 80 };
	const int	want[] = { NFNL_MSG_BATCH_BEGIN,
	    (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWTABLE,
	    (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWCHAIN,
	    (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWSET,
	    (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWSETELEM,
	    (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWRULE,
	    (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWRULE,
	    NFNL_MSG_BATCH_END };
	char		buf[4096], small[256];
	int		types[16], elems = 0, i, n;
	size_t		len;

	len = netns_nft_batch(ports, 7, 3129, 0, 7, buf, sizeof buf);
	assert_true(len > 0);
	n = walk_batch(buf, len, types, 16, &elems);
	assert_int_equal(n, 7);
	assert_int_equal(elems, 6);	/* 3129 first, 80 once */
	for (i = 0; i < 6; i++)
		assert_int_equal(types[i], want[i]);
	assert_int_equal(types[6], NFNL_MSG_BATCH_END);
	assert_non_null(memmem(buf, len, "tproxy", 7));
	assert_non_null(memmem(buf, len, "gw0\0\0", 5));

	len = netns_nft_batch(ports, 7, 3129, 1, 7, buf, sizeof buf);
	assert_int_equal(walk_batch(buf, len, types, 16, &elems), 8);
	for (i = 0; i < 8; i++)
		assert_int_equal(types[i], want[i]);
	assert_int_equal(netns_nft_batch(ports, 7, 3129, 1, 7, small,
	    sizeof small), 0);
}

/* Lines of /proc/net/unix, as the kernel writes them. */
static void
test_unix_line(void **state)
{
	struct netns_unix_ent	e;
	const char		*l;

	(void)state;
	l = "0000000000000000: 00000002 00000000 00010000 0001 01 12345 "
	    "/run/user/1000/bus";
	assert_int_equal(netns_unix_line(l, strlen(l), &e), 0);
	assert_int_equal(e.flags, 0x10000);
	assert_int_equal(e.type, 1);
	assert_int_equal(e.state, 1);
	assert_int_equal(e.pathlen, strlen("/run/user/1000/bus"));
	assert_memory_equal(e.path, "/run/user/1000/bus", e.pathlen);
	/* Unbound, the inode padded with spaces. */
	l = "00000000a1b2c3d4: 00000003 00000000 00000000 0001 03  1084";
	assert_int_equal(netns_unix_line(l, strlen(l), &e), 0);
	assert_null(e.path);
	/* A name with spaces is the rest of the line. */
	l = "ffff8881: 00000002 00000000 00000000 0002 01 7 /tmp/a b  c";
	assert_int_equal(netns_unix_line(l, strlen(l), &e), 0);
	assert_int_equal(e.type, 2);
	assert_memory_equal(e.path, "/tmp/a b  c", e.pathlen);
	/* Not entries. */
	const char *bad[] = {
	    "Num       RefCount Protocol Flags    Type St Inode Path",
	    "", ":", "0000: 1 2 3 4 5",
	    "0000: 00000002 00000000 00010000 0001 01 /x",
	    "0000: 00000002 00000000 000100000 0001 01 5 /x",
	    "00000000000000000: 00000002 00000000 00010000 0001 01 5 /x",
	    "0000: 00000002 00000000 00010000 0001 01 5 ",
	    "0000: 0000000g 00000000 00010000 0001 01 5 /x",
	    "0000:00000002 00000000 00010000 0001 01 5 /x",
	    "0000: 00000002 00000000 00010000 0001 01 5x /x",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(netns_unix_line(bad[i], strlen(bad[i]), &e), -1);
}

/* The names a listing binds, listening or not yet, pathname or not. */
static void
test_unix_names(void **state)
{
	const char	*text =
	    "Num       RefCount Protocol Flags    Type St Inode Path\n"
	    "0000000000000000: 00000002 00000000 00010000 0001 01 11 /b.sock\n"
	    "0000000000000000: 00000003 00000000 00000000 0001 03 12 /b.sock\n"
	    "0000000000000000: 00000002 00000000 00010000 0001 01 13 @abstract\n"
	    "0000000000000000: 00000002 00000000 00000000 0002 01 14 /dgram\n"
	    "0000000000000000: 00000002 00000000 00000000 0001 01 15 /unlistening\n"
	    "0000000000000000: 00000002 00000000 00010000 0005 01 16 rel.sock\n"
	    "0000000000000000: 00000002 00000000 00010000 0001 01 17 /new\n"
	    "line\n";
	char		**names;
	size_t		  n, i;

	(void)state;
	assert_int_equal(netns_unix_names(text, strlen(text), &names, &n), 0);
	/* Each name, each joined with what follows while it fits. */
	const char *want[] = { "/b.sock",
	    "/b.sock\n0000000000000000: 00000002 00000000 00010000 0001 01 13 "
	    "@abstract",
	    "/b.sock\n0000000000000000: 00000003 00000000 00000000 0001 03 12 "
	    "/b.sock",
	    "/dgram",
	    "/dgram\n0000000000000000: 00000002 00000000 00000000 0001 01 15 "
	    "/unlistening",
	    "/new", "/new\nline", "/unlistening",
	    "/unlistening\n0000000000000000: 00000002 00000000 00010000 0005 01 "
	    "16 rel.sock",
	    "rel.sock",
	    "rel.sock\n0000000000000000: 00000002 00000000 00010000 0001 01 17 "
	    "/new", "rel.sock\n0000000000000000: 00000002 00000000 00010000 "
	    "0001 01 17 /new\nline" };
	assert_int_equal(n, sizeof want / sizeof want[0]);
	for (i = 0; i < n; i++) {
		assert_string_equal(names[i], want[i]);
		free(names[i]);
	}
	free(names);
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(test_net_good),
		cmocka_unit_test(test_net_bad),
		cmocka_unit_test(test_exit_status),
		cmocka_unit_test(test_nft_batch),
		cmocka_unit_test(test_unix_line),
		cmocka_unit_test(test_unix_names),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
