/*
 * The capture rule: one nftables rule in the gateway netns hands every
 * TCP connection from the sandbox to a port with no listener of its own
 * to one catch-all listener (tproxy, so that the listener's accepted
 * sockets keep the original destination as their local address).  Set
 * up by the setup child with libnftables when pinhole was built with it.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#ifdef HAVE_NFTABLES
#include <nftables/libnftables.h>
#endif

#include "netns/netns.h"
#include "netns/netns-int.h"

#define NFT_RULE_MAX	(1024 + NETNS_MAX_PORTS * 8)

/*
 * Write the ruleset: TCP from the sandbox's link to any port but these
 * goes to the catch-all port, and so does UDP to any port but DNS's when
 * udp is set.  Pure.  Returns its length, or 0 if it does not fit.
 */
size_t
netns_nft_ruleset(const uint16_t *ports, size_t n, uint16_t to, int udp,
    char *buf, size_t len)
{
	size_t	off;
	int	w;

	w = snprintf(buf, len, "table ip pinhole {\n"
	    "\tchain capture {\n"
	    "\t\ttype filter hook prerouting priority mangle; policy accept;\n"
	    "\t\tiifname \"%s\" tcp dport != { %u", NETNS_GATEWAY_IF, to);
	if (w < 0 || (size_t)w >= len)
		return (0);
	off = w;
	for (; n > 0; n--, ports++) {
		if (*ports == to)
			continue;
		w = snprintf(buf + off, len - off, ", %u", *ports);
		if (w < 0 || (size_t)w >= len - off)
			return (0);
		off += w;
	}
	w = snprintf(buf + off, len - off, " } tproxy to :%u accept\n", to);
	if (w < 0 || (size_t)w >= len - off)
		return (0);
	off += w;
	if (udp) {
		w = snprintf(buf + off, len - off, "\t\tiifname \"%s\" "
		    "udp dport != %u tproxy to :%u accept\n",
		    NETNS_GATEWAY_IF, NETNS_DNS_PORT, to);
		if (w < 0 || (size_t)w >= len - off)
			return (0);
		off += w;
	}
	w = snprintf(buf + off, len - off, "\t}\n}\n");
	if (w < 0 || (size_t)w >= len - off)
		return (0);
	return (off + w);
}

#ifdef HAVE_NFTABLES
/* Keep the first line of libnftables' error text. */
static void
nft_error(struct nft_ctx *ctx, char *err, size_t errlen)
{
	const char	*text = nft_ctx_get_error_buffer(ctx);
	size_t		 n;

	if (text == NULL || *text == '\0')
		text = "nftables refused the rule";
	n = strcspn(text, "\n");
	snprintf(err, errlen, "nftables: %.*s", (int)n, text);
}

/* Install the capture rule in the current netns. */
int
netns_nft_capture(const uint16_t *ports, size_t n, uint16_t to, int udp,
    char *err, size_t errlen)
{
	struct nft_ctx	*ctx;
	char		 rules[NFT_RULE_MAX];
	int		 rv = -1;

	if (netns_nft_ruleset(ports, n, to, udp, rules, sizeof rules) == 0) {
		snprintf(err, errlen, "nftables: too many ports");
		return (-1);
	}
	if ((ctx = nft_ctx_new(NFT_CTX_DEFAULT)) == NULL) {
		snprintf(err, errlen, "nftables: cannot make a context");
		return (-1);
	}
	if (nft_ctx_buffer_output(ctx) != 0 ||
	    nft_ctx_buffer_error(ctx) != 0) {
		snprintf(err, errlen, "nftables: cannot buffer its output");
		goto out;
	}
	if (nft_run_cmd_from_buffer(ctx, rules) != 0) {
		nft_error(ctx, err, errlen);
		goto out;
	}
	rv = 0;
out:
	nft_ctx_free(ctx);
	return (rv);
}
#else
/* Built without libnftables: no capture rule. */
int
netns_nft_capture(const uint16_t *ports, size_t n, uint16_t to, int udp,
    char *err, size_t errlen)
{
	snprintf(err, errlen, "pinhole was built without libnftables");
	return (-1);
}
#endif
