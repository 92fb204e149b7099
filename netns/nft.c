/*
 * The capture rule: one nftables chain in the gateway netns hands every
 * TCP connection from the sandbox to a port with no listener of its own
 * to one catch-all listener (tproxy, so that the listener's accepted
 * sockets keep the original destination as their local address):
 *
 *	table ip pinhole {
 *		chain capture {
 *			type filter hook prerouting priority mangle; policy accept;
 *			iifname "gw0" tcp dport != { 3129, 53, ... } tproxy to :3129 accept
 *			iifname "gw0" udp dport != 53 tproxy to :3129 accept
 *		}
 *	}
 *
 * The sandbox child sends it as one nf_tables netlink batch written here
 * (the same messages nft(8) sends for that text).  libnftables would
 * parse the text, fill its caches and bring six more shared libraries
 * into pinhole: some 15 ms of every start, against well under one.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/time.h>
#include <arpa/inet.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <net/if.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "netns/netns-int.h"
#include "netns/netns.h"

#define NFT_TABLE	"pinhole"
#define NFT_CHAIN	"capture"
#define NFT_SET		"__set0"
#define NFT_SET_ID	1
#define NFT_PRIO_MANGLE	(-150)
#define NFT_TYPE_INET_SERVICE	13	/* nft's data type of a port */
#define NFT_BATCH_MAX	(2048 + NETNS_MAX_PORTS * 32)
#define NFT_MSG(t)	((NFNL_SUBSYS_NFTABLES << 8) | (t))

/* A netlink batch being written into a caller's buffer. */
struct nft_batch {
	char		*buf;
	size_t		 len;
	size_t		 off;
	uint32_t	 seq;
	int		 full;
};

/* Append bytes, padded to the netlink alignment. */
static void
nft_put(struct nft_batch *b, const void *p, size_t n)
{
	size_t	pad = NLA_ALIGN(n) - n;

	if (b->full || b->len - b->off < n + pad) {
		b->full = 1;
		return;
	}
	if (n > 0)
		memcpy(b->buf + b->off, p, n);
	memset(b->buf + b->off + n, 0, pad);
	b->off += n + pad;
}

/* Start a message: header and nfgenmsg; returns where it starts. */
static size_t
nft_msg_begin(struct nft_batch *b, uint16_t type, uint16_t flags,
    uint8_t family, uint16_t resid)
{
	struct nlmsghdr	nh;
	struct nfgenmsg	nfg;
	size_t		start = b->off;

	memset(&nh, 0, sizeof nh);
	nh.nlmsg_type = type;
	nh.nlmsg_flags = NLM_F_REQUEST | flags;
	nh.nlmsg_seq = b->seq++;
	nft_put(b, &nh, sizeof nh);
	memset(&nfg, 0, sizeof nfg);
	nfg.nfgen_family = family;
	nfg.version = NFNETLINK_V0;
	nfg.res_id = htons(resid);
	nft_put(b, &nfg, sizeof nfg);
	return (start);
}

/* Set a message's (or an attribute's) length from where it started. */
static void
nft_end(struct nft_batch *b, size_t start, int nest)
{
	uint32_t	nlen;
	uint16_t	alen;

	if (b->full)
		return;
	if (nest) {
		alen = (uint16_t)(b->off - start);
		memcpy(b->buf + start, &alen, sizeof alen);
	} else {
		nlen = (uint32_t)(b->off - start);
		memcpy(b->buf + start, &nlen, sizeof nlen);
	}
}

/* Append one attribute. */
static void
nft_attr(struct nft_batch *b, uint16_t type, const void *p, size_t n)
{
	struct nlattr	a;

	a.nla_len = (uint16_t)(NLA_HDRLEN + n);
	a.nla_type = type;
	nft_put(b, &a, sizeof a);
	nft_put(b, p, n);
}

/* Append a big-endian 32-bit attribute. */
static void
nft_u32(struct nft_batch *b, uint16_t type, uint32_t v)
{
	v = htonl(v);
	nft_attr(b, type, &v, sizeof v);
}

/* Append a string attribute, its NUL included. */
static void
nft_str(struct nft_batch *b, uint16_t type, const char *s)
{
	nft_attr(b, type, s, strlen(s) + 1);
}

/* Open a nested attribute; returns where it starts. */
static size_t
nft_nest(struct nft_batch *b, uint16_t type)
{
	size_t	start = b->off;

	nft_attr(b, type | NLA_F_NESTED, NULL, 0);
	return (start);
}

/* A data attribute holding a value: NFTA_..._DATA { VALUE }. */
static void
nft_value(struct nft_batch *b, uint16_t type, const void *p, size_t n)
{
	size_t	d = nft_nest(b, type);

	nft_attr(b, NFTA_DATA_VALUE, p, n);
	nft_end(b, d, 1);
}

/* One expression of a rule: open it; the caller fills its data. */
static void
nft_expr_begin(struct nft_batch *b, const char *name, size_t *elem,
    size_t *data)
{
	*elem = nft_nest(b, NFTA_LIST_ELEM);
	nft_str(b, NFTA_EXPR_NAME, name);
	*data = nft_nest(b, NFTA_EXPR_DATA);
}

/* Close an expression. */
static void
nft_expr_end(struct nft_batch *b, size_t elem, size_t data)
{
	nft_end(b, data, 1);
	nft_end(b, elem, 1);
}

/* meta load KEY => reg 1 */
static void
nft_meta(struct nft_batch *b, uint32_t key)
{
	size_t	e, d;

	nft_expr_begin(b, "meta", &e, &d);
	nft_u32(b, NFTA_META_DREG, NFT_REG_1);
	nft_u32(b, NFTA_META_KEY, key);
	nft_expr_end(b, e, d);
}

/* cmp OP reg 1 DATA */
static void
nft_cmp(struct nft_batch *b, uint32_t op, const void *p, size_t n)
{
	size_t	e, d;

	nft_expr_begin(b, "cmp", &e, &d);
	nft_u32(b, NFTA_CMP_SREG, NFT_REG_1);
	nft_u32(b, NFTA_CMP_OP, op);
	nft_value(b, NFTA_CMP_DATA, p, n);
	nft_expr_end(b, e, d);
}

/* iifname "gw0" PROTO dport => reg 1 */
static void
nft_match_dport(struct nft_batch *b, uint8_t proto)
{
	char	ifname[IFNAMSIZ];
	size_t	e, d;

	memset(ifname, 0, sizeof ifname);
	snprintf(ifname, sizeof ifname, "%s", NETNS_GATEWAY_IF);
	nft_meta(b, NFT_META_IIFNAME);
	nft_cmp(b, NFT_CMP_EQ, ifname, sizeof ifname);
	nft_meta(b, NFT_META_L4PROTO);
	nft_cmp(b, NFT_CMP_EQ, &proto, sizeof proto);
	nft_expr_begin(b, "payload", &e, &d);
	nft_u32(b, NFTA_PAYLOAD_DREG, NFT_REG_1);
	nft_u32(b, NFTA_PAYLOAD_BASE, NFT_PAYLOAD_TRANSPORT_HEADER);
	nft_u32(b, NFTA_PAYLOAD_OFFSET, 2);
	nft_u32(b, NFTA_PAYLOAD_LEN, 2);
	nft_expr_end(b, e, d);
}

/* tproxy to :PORT accept */
static void
nft_tproxy_accept(struct nft_batch *b, uint16_t port)
{
	size_t	e, d, v, c;

	port = htons(port);
	nft_expr_begin(b, "immediate", &e, &d);
	nft_u32(b, NFTA_IMMEDIATE_DREG, NFT_REG_1);
	nft_value(b, NFTA_IMMEDIATE_DATA, &port, sizeof port);
	nft_expr_end(b, e, d);
	nft_expr_begin(b, "tproxy", &e, &d);
	nft_u32(b, NFTA_TPROXY_FAMILY, NFPROTO_IPV4);
	nft_u32(b, NFTA_TPROXY_REG_PORT, NFT_REG_1);
	nft_expr_end(b, e, d);
	nft_expr_begin(b, "immediate", &e, &d);
	nft_u32(b, NFTA_IMMEDIATE_DREG, NFT_REG_VERDICT);
	v = nft_nest(b, NFTA_IMMEDIATE_DATA);
	c = nft_nest(b, NFTA_DATA_VERDICT);
	nft_u32(b, NFTA_VERDICT_CODE, NF_ACCEPT);
	nft_end(b, c, 1);
	nft_end(b, v, 1);
	nft_expr_end(b, e, d);
}

/* Start a rule message in the chain; returns message and list starts. */
static void
nft_rule_begin(struct nft_batch *b, size_t *msg, size_t *list)
{
	*msg = nft_msg_begin(b, NFT_MSG(NFT_MSG_NEWRULE), NLM_F_CREATE |
	    NLM_F_APPEND | NLM_F_ACK, NFPROTO_IPV4, 0);
	nft_str(b, NFTA_RULE_TABLE, NFT_TABLE);
	nft_str(b, NFTA_RULE_CHAIN, NFT_CHAIN);
	*list = nft_nest(b, NFTA_RULE_EXPRESSIONS);
}

/* iifname "gw0" tcp dport != @set tproxy to :TO accept */
static void
nft_rule_tcp(struct nft_batch *b, uint16_t to)
{
	size_t	m, l, e, d;

	nft_rule_begin(b, &m, &l);
	nft_match_dport(b, IPPROTO_TCP);
	nft_expr_begin(b, "lookup", &e, &d);
	nft_str(b, NFTA_LOOKUP_SET, NFT_SET);
	nft_u32(b, NFTA_LOOKUP_SET_ID, NFT_SET_ID);
	nft_u32(b, NFTA_LOOKUP_SREG, NFT_REG_1);
	nft_u32(b, NFTA_LOOKUP_FLAGS, NFT_LOOKUP_F_INV);
	nft_expr_end(b, e, d);
	nft_tproxy_accept(b, to);
	nft_end(b, l, 1);
	nft_end(b, m, 0);
}

/* iifname "gw0" udp dport != 53 tproxy to :TO accept */
static void
nft_rule_udp(struct nft_batch *b, uint16_t to)
{
	uint16_t	dns = htons(NETNS_DNS_PORT);
	size_t		m, l;

	nft_rule_begin(b, &m, &l);
	nft_match_dport(b, IPPROTO_UDP);
	nft_cmp(b, NFT_CMP_NEQ, &dns, sizeof dns);
	nft_tproxy_accept(b, to);
	nft_end(b, l, 1);
	nft_end(b, m, 0);
}

/* The table and its base chain. */
static void
nft_table_chain(struct nft_batch *b)
{
	size_t	m, h;

	m = nft_msg_begin(b, NFT_MSG(NFT_MSG_NEWTABLE), NLM_F_CREATE |
	    NLM_F_ACK, NFPROTO_IPV4, 0);
	nft_str(b, NFTA_TABLE_NAME, NFT_TABLE);
	nft_end(b, m, 0);
	m = nft_msg_begin(b, NFT_MSG(NFT_MSG_NEWCHAIN), NLM_F_CREATE |
	    NLM_F_ACK, NFPROTO_IPV4, 0);
	nft_str(b, NFTA_CHAIN_TABLE, NFT_TABLE);
	nft_str(b, NFTA_CHAIN_NAME, NFT_CHAIN);
	h = nft_nest(b, NFTA_CHAIN_HOOK);
	nft_u32(b, NFTA_HOOK_HOOKNUM, NF_INET_PRE_ROUTING);
	nft_u32(b, NFTA_HOOK_PRIORITY, (uint32_t)NFT_PRIO_MANGLE);
	nft_end(b, h, 1);
	nft_u32(b, NFTA_CHAIN_POLICY, NF_ACCEPT);
	nft_str(b, NFTA_CHAIN_TYPE, "filter");
	nft_end(b, m, 0);
}

/* Is ports[i] the catch-all's port, or one before it? */
static int
nft_port_seen(const uint16_t *ports, size_t i, uint16_t to)
{
	size_t	j;

	if (ports[i] == to)
		return (1);
	for (j = 0; j < i; j++) {
		if (ports[j] == ports[i])
			return (1);
	}
	return (0);
}

/* The anonymous, constant set of the ports with a listener. */
static void
nft_port_set(struct nft_batch *b, const uint16_t *ports, size_t n,
    uint16_t to)
{
	uint16_t	port;
	size_t		m, list, elem, i;

	m = nft_msg_begin(b, NFT_MSG(NFT_MSG_NEWSET), NLM_F_CREATE |
	    NLM_F_ACK, NFPROTO_IPV4, 0);
	nft_str(b, NFTA_SET_TABLE, NFT_TABLE);
	nft_str(b, NFTA_SET_NAME, NFT_SET);
	nft_u32(b, NFTA_SET_FLAGS, NFT_SET_ANONYMOUS | NFT_SET_CONSTANT);
	nft_u32(b, NFTA_SET_KEY_TYPE, NFT_TYPE_INET_SERVICE);
	nft_u32(b, NFTA_SET_KEY_LEN, sizeof port);
	nft_u32(b, NFTA_SET_ID, NFT_SET_ID);
	nft_end(b, m, 0);
	m = nft_msg_begin(b, NFT_MSG(NFT_MSG_NEWSETELEM), NLM_F_CREATE |
	    NLM_F_ACK, NFPROTO_IPV4, 0);
	nft_str(b, NFTA_SET_ELEM_LIST_TABLE, NFT_TABLE);
	nft_str(b, NFTA_SET_ELEM_LIST_SET, NFT_SET);
	nft_u32(b, NFTA_SET_ELEM_LIST_SET_ID, NFT_SET_ID);
	list = nft_nest(b, NFTA_SET_ELEM_LIST_ELEMENTS);
	for (i = 0; i <= n; i++) {
		/* The catch-all's own port first, then the others once. */
		if (i > 0 && nft_port_seen(ports, i - 1, to))
			continue;
		port = htons(i == 0 ? to : ports[i - 1]);
		elem = nft_nest(b, NFTA_LIST_ELEM);
		nft_value(b, NFTA_SET_ELEM_KEY, &port, sizeof port);
		nft_end(b, elem, 1);
	}
	nft_end(b, list, 1);
	nft_end(b, m, 0);
}

/*
 * Write the batch: TCP from the sandbox's link to any port but these
 * goes to the catch-all port, and so does UDP to any port but DNS's when
 * udp is set.  Pure.  Returns its length, or 0 if it does not fit.
 */
size_t
netns_nft_batch(const uint16_t *ports, size_t n, uint16_t to, int udp,
    uint32_t seq, char *buf, size_t len)
{
	struct nft_batch	b;
	size_t			m;

	memset(&b, 0, sizeof b);
	b.buf = buf;
	b.len = len;
	b.seq = seq;
	m = nft_msg_begin(&b, NFNL_MSG_BATCH_BEGIN, 0, AF_UNSPEC,
	    NFNL_SUBSYS_NFTABLES);
	nft_end(&b, m, 0);
	nft_table_chain(&b);
	nft_port_set(&b, ports, n, to);
	nft_rule_tcp(&b, to);
	if (udp)
		nft_rule_udp(&b, to);
	m = nft_msg_begin(&b, NFNL_MSG_BATCH_END, 0, AF_UNSPEC,
	    NFNL_SUBSYS_NFTABLES);
	nft_end(&b, m, 0);
	return (b.full ? 0 : b.off);
}

#ifdef HAVE_NFTABLES
/* Step names for errors, by message (after the batch begin). */
static const char *
nft_step(uint32_t seq, uint32_t first)
{
	static const char	*steps[] = { "add table", "add chain",
	    "add set", "add set elements", "add rule", "add rule" };

	if (seq <= first || seq - first > sizeof steps / sizeof steps[0])
		return ("batch");
	return (steps[seq - first - 1]);
}

/*
 * Read the kernel's answers: one ack per message, or an error.  The
 * kernel handles a netlink batch while sending it, so every answer is
 * queued by the time sendto() returns.
 */
static int
nft_answers(int fd, size_t want, uint32_t first, char *err, size_t errlen)
{
	union {
		char		buf[4096];
		struct nlmsghdr	align;
	}			 u;
	struct nlmsghdr		*nh;
	struct nlmsgerr		*e;
	ssize_t			 r;
	size_t			 acks = 0, off;

	while (acks < want) {
		if ((r = recv(fd, u.buf, sizeof u.buf, MSG_DONTWAIT)) <= 0) {
			snprintf(err, errlen, "nftables: %s", r == 0 ||
			    errno == EAGAIN ? "no answer" : strerror(errno));
			return (-1);
		}
		/* Each message whole within what was read, or stop. */
		for (off = 0; off + sizeof *nh <= (size_t)r;
		    off += NLMSG_ALIGN(nh->nlmsg_len)) {
			nh = (struct nlmsghdr *)(u.buf + off);
			if (nh->nlmsg_len < sizeof *nh ||
			    nh->nlmsg_len > (size_t)r - off)
				break;
			if (nh->nlmsg_type != NLMSG_ERROR ||
			    nh->nlmsg_len < NLMSG_LENGTH(sizeof *e))
				continue;
			e = NLMSG_DATA(nh);
			if (e->error != 0) {
				snprintf(err, errlen, "nftables: %s: %s",
				    nft_step(nh->nlmsg_seq, first),
				    strerror(-e->error));
				return (-1);
			}
			acks++;
		}
	}
	return (0);
}

/* Install the capture rule in the current netns. */
int
netns_nft_capture(const uint16_t *ports, size_t n, uint16_t to, int udp,
    char *err, size_t errlen)
{
	struct sockaddr_nl	sa;
	char			buf[NFT_BATCH_MAX];
	size_t			len;
	uint32_t		seq = 1;
	int			fd, rv = -1;

	if ((len = netns_nft_batch(ports, n, to, udp, seq, buf,
	    sizeof buf)) == 0) {
		snprintf(err, errlen, "nftables: too many ports");
		return (-1);
	}
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
	if (fd == -1) {
		snprintf(err, errlen, "nftables: netlink: %s", strerror(errno));
		return (-1);
	}
	memset(&sa, 0, sizeof sa);
	sa.nl_family = AF_NETLINK;
	if (sendto(fd, buf, len, 0, (struct sockaddr *)&sa,
	    sizeof sa) != (ssize_t)len)
		snprintf(err, errlen, "nftables: send: %s", strerror(errno));
	else if (nft_answers(fd, udp ? 6 : 5, seq, err, errlen) == 0)
		rv = 0;
	close(fd);
	return (rv);
}
#else
/* Built without nftables: no capture rule. */
int
netns_nft_capture(const uint16_t *ports, size_t n, uint16_t to, int udp,
    char *err, size_t errlen)
{
	snprintf(err, errlen, "pinhole was built without nftables");
	return (-1);
}
#endif
