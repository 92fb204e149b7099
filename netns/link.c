/*
 * The veth link, its addresses and routes, configured with libnl-route-3.
 *
 * Gateway netns: gw0 holds the gateway address; the local table says every
 * IPv4 address is local (local 0.0.0.0/0 dev lo), except the sandbox's
 * address, routed back out through gw0.  Sandbox netns: ph0 holds the
 * sandbox address and the default route goes to the gateway.
 */
#include "config.h"

#include <sys/socket.h>
#include <arpa/inet.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/veth.h>
#include <netlink/route/route.h>

#include "netns/netns-int.h"
#include "netns/netns.h"

/* Report a libnl error for one step. */
static int
link_error(char *err, size_t errlen, const char *step, int nlerr)
{
	const char	*hint = "";

	if (nlerr == -NLE_OPNOTSUPP && strncmp(step, "create", 6) == 0)
		hint = " (is the kernel built without veth, CONFIG_VETH?)";
	snprintf(err, errlen, "libnl: %s: %s%s", step, nl_geterror(nlerr),
	    hint);
	return (-1);
}

/* Open a route netlink socket in the current network namespace. */
struct nl_sock *
netns_link_socket(char *err, size_t errlen)
{
	struct nl_sock	*sk;
	int		 r;

	if ((sk = nl_socket_alloc()) == NULL) {
		snprintf(err, errlen, "libnl: out of memory");
		return (NULL);
	}
	if ((r = nl_connect(sk, NETLINK_ROUTE)) < 0) {
		link_error(err, errlen, "connect to rtnetlink", r);
		nl_socket_free(sk);
		return (NULL);
	}
	return (sk);
}

/* Bring a link up by name; returns its index or -1. */
static int
link_up(struct nl_sock *sk, const char *name, char *err, size_t errlen)
{
	struct rtnl_link	*link = NULL, *change = NULL;
	char			 step[64];
	int			 r, ifindex = -1;

	snprintf(step, sizeof(step), "find link %s", name);
	if ((r = rtnl_link_get_kernel(sk, 0, name, &link)) < 0) {
		link_error(err, errlen, step, r);
		goto out;
	}
	snprintf(step, sizeof(step), "bring link %s up", name);
	if ((change = rtnl_link_alloc()) == NULL) {
		link_error(err, errlen, step, -NLE_NOMEM);
		goto out;
	}
	rtnl_link_set_flags(change, IFF_UP);
	if ((r = rtnl_link_change(sk, link, change, 0)) < 0) {
		link_error(err, errlen, step, r);
		goto out;
	}
	ifindex = rtnl_link_get_ifindex(link);
out:
	if (change != NULL)
		rtnl_link_put(change);
	if (link != NULL)
		rtnl_link_put(link);
	return (ifindex);
}

/* Create the veth pair, its peer in the sandbox netns. */
static int
link_veth(struct nl_sock *sk, int sandbox_fd, char *err, size_t errlen)
{
	struct rtnl_link	*link, *peer;
	int			 r;

	if ((link = rtnl_link_veth_alloc()) == NULL)
		return (link_error(err, errlen, "create veth", -NLE_NOMEM));
	rtnl_link_set_name(link, NETNS_GATEWAY_IF);
	peer = rtnl_link_veth_get_peer(link);
	rtnl_link_set_name(peer, NETNS_SANDBOX_IF);
	rtnl_link_set_ns_fd(peer, sandbox_fd);
	rtnl_link_put(peer);
	r = rtnl_link_add(sk, link, NLM_F_CREATE | NLM_F_EXCL);
	rtnl_link_veth_release(link);
	if (r < 0)
		return (link_error(err, errlen, "create veth pair", r));
	return (0);
}

/* Make an nl_addr for an IPv4 address and prefix length. */
static struct nl_addr *
link_nladdr(struct in_addr in, unsigned int prefixlen)
{
	struct nl_addr	*a;

	if ((a = nl_addr_build(AF_INET, &in, sizeof(in))) != NULL)
		nl_addr_set_prefixlen(a, prefixlen);
	return (a);
}

/* Add an IPv4 address to a link. */
static int
link_address(struct nl_sock *sk, int ifindex, struct in_addr in,
    unsigned int prefixlen, char *err, size_t errlen)
{
	struct rtnl_addr	*addr = NULL;
	struct nl_addr		*local = NULL;
	int			 r = -NLE_NOMEM, ret = -1;

	if ((addr = rtnl_addr_alloc()) == NULL ||
	    (local = link_nladdr(in, prefixlen)) == NULL)
		goto out;
	rtnl_addr_set_ifindex(addr, ifindex);
	rtnl_addr_set_family(addr, AF_INET);
	if ((r = rtnl_addr_set_local(addr, local)) < 0)
		goto out;
	if ((r = rtnl_addr_add(sk, addr, 0)) < 0)
		goto out;
	ret = 0;
out:
	if (ret != 0)
		link_error(err, errlen, "add address", r);
	if (local != NULL)
		nl_addr_put(local);
	if (addr != NULL)
		rtnl_addr_put(addr);
	return (ret);
}

/* One route to add. */
struct link_route {
	const char	*step;
	int		 table;
	int		 type;
	int		 scope;
	struct in_addr	 dst;
	unsigned int	 dstlen;
	struct in_addr	 via;		/* INADDR_ANY: none */
	int		 ifindex;
};

/* Add one IPv4 route. */
static int
link_route_add(struct nl_sock *sk, const struct link_route *lr, char *err,
    size_t errlen)
{
	struct rtnl_route	*route = NULL;
	struct rtnl_nexthop	*nh = NULL;
	struct nl_addr		*dst = NULL, *via = NULL;
	int			 r = -NLE_NOMEM, ret = -1;

	if ((route = rtnl_route_alloc()) == NULL ||
	    (nh = rtnl_route_nh_alloc()) == NULL ||
	    (dst = link_nladdr(lr->dst, lr->dstlen)) == NULL)
		goto out;
	rtnl_route_set_family(route, AF_INET);
	rtnl_route_set_table(route, lr->table);
	rtnl_route_set_type(route, lr->type);
	rtnl_route_set_scope(route, lr->scope);
	rtnl_route_set_protocol(route, RTPROT_STATIC);
	if ((r = rtnl_route_set_dst(route, dst)) < 0)
		goto out;
	rtnl_route_nh_set_ifindex(nh, lr->ifindex);
	if (lr->via.s_addr != INADDR_ANY) {
		if ((via = link_nladdr(lr->via, 32)) == NULL) {
			r = -NLE_NOMEM;
			goto out;
		}
		rtnl_route_nh_set_gateway(nh, via);
	}
	rtnl_route_add_nexthop(route, nh);
	nh = NULL;
	if ((r = rtnl_route_add(sk, route, NLM_F_CREATE | NLM_F_EXCL)) < 0)
		goto out;
	ret = 0;
out:
	if (ret != 0)
		link_error(err, errlen, lr->step, r);
	if (nh != NULL)
		rtnl_route_nh_free(nh);
	if (via != NULL)
		nl_addr_put(via);
	if (dst != NULL)
		nl_addr_put(dst);
	if (route != NULL)
		rtnl_route_put(route);
	return (ret);
}

/* Configure the gateway netns: lo, the veth pair, gw0, the routes. */
int
netns_link_gateway(struct nl_sock *sk, int sandbox_fd,
    const struct netns_net *net, char *err, size_t errlen)
{
	struct link_route	lr;
	int			lo, gw;

	if ((lo = link_up(sk, "lo", err, errlen)) < 0)
		return (-1);
	if (link_veth(sk, sandbox_fd, err, errlen) != 0)
		return (-1);
	if ((gw = link_up(sk, NETNS_GATEWAY_IF, err, errlen)) < 0)
		return (-1);
	if (link_address(sk, gw, net->gateway, net->prefixlen, err,
	    errlen) != 0)
		return (-1);

	memset(&lr, 0, sizeof(lr));
	lr.step = "add route local 0.0.0.0/0 dev lo table local";
	lr.table = RT_TABLE_LOCAL;
	lr.type = RTN_LOCAL;
	lr.scope = RT_SCOPE_HOST;
	lr.ifindex = lo;
	if (link_route_add(sk, &lr, err, errlen) != 0)
		return (-1);

	lr.step = "add route to the sandbox address";
	lr.type = RTN_UNICAST;
	lr.scope = RT_SCOPE_LINK;
	lr.dst = net->sandbox;
	lr.dstlen = 32;
	lr.ifindex = gw;
	return (link_route_add(sk, &lr, err, errlen));
}

/* Configure the sandbox netns: lo, ph0 and the default route. */
int
netns_link_sandbox(struct nl_sock *sk, const struct netns_net *net, char *err,
    size_t errlen)
{
	struct link_route	lr;
	int			ph;

	if (link_up(sk, "lo", err, errlen) < 0)
		return (-1);
	if ((ph = link_up(sk, NETNS_SANDBOX_IF, err, errlen)) < 0)
		return (-1);
	if (link_address(sk, ph, net->sandbox, net->prefixlen, err,
	    errlen) != 0)
		return (-1);

	memset(&lr, 0, sizeof(lr));
	lr.step = "add default route in the sandbox";
	lr.table = RT_TABLE_MAIN;
	lr.type = RTN_UNICAST;
	lr.scope = RT_SCOPE_UNIVERSE;
	lr.via = net->gateway;
	lr.ifindex = ph;
	return (link_route_add(sk, &lr, err, errlen));
}
