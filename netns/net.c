/*
 * The link's address plan (pure: no I/O) and wait statuses.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <stdlib.h>
#include <string.h>

#include "netns/netns.h"

/* Does network/len overlap base/blen? */
static int
overlaps(uint32_t network, unsigned int len, uint32_t base, unsigned int blen)
{
	unsigned int	shortest = len < blen ? len : blen;
	uint32_t	mask = 0xffffffffU << (32 - shortest);

	return ((network & mask) == (base & mask));
}

/* Refuse networks that already mean something to the sandbox. */
static const char *
netns_net_reserved(uint32_t network, unsigned int len)
{
	if (overlaps(network, len, 0x00000000, 8))
		return ("0.0.0.0/8 cannot be used");
	if (overlaps(network, len, 0x7f000000, 8))
		return ("overlaps loopback 127.0.0.0/8");
	if (overlaps(network, len, 0xc6120000, 15))
		return ("overlaps 198.18.0.0/15, the DNS fake-address range");
	if (overlaps(network, len, 0xe0000000, 3))
		return ("multicast and class E cannot be used");
	return (NULL);
}

/* Parse "A.B.C.D/N" into the gateway and sandbox addresses. */
int
netns_net_parse(const char *text, struct netns_net *net, const char **errstr)
{
	char		 buf[INET_ADDRSTRLEN];
	const char	*slash;
	char		*end;
	unsigned long	 n;
	uint32_t	 addr, mask;
	size_t		 len;

	if ((slash = strchr(text, '/')) == NULL) {
		*errstr = "needs a prefix length (A.B.C.D/N)";
		return (-1);
	}
	len = slash - text;
	if (len == 0 || len >= sizeof(buf)) {
		*errstr = "bad IPv4 address";
		return (-1);
	}
	memcpy(buf, text, len);
	buf[len] = '\0';
	if (inet_pton(AF_INET, buf, &addr) != 1) {
		*errstr = "bad IPv4 address";
		return (-1);
	}
	n = strtoul(slash + 1, &end, 10);
	if (slash[1] < '0' || slash[1] > '9' || *end != '\0' ||
	    n < 8 || n > 30) {
		*errstr = "prefix length must be from 8 to 30";
		return (-1);
	}
	mask = htonl(0xffffffffU << (32 - n));
	if ((addr & ~mask) != 0) {
		*errstr = "host bits set: give the network address";
		return (-1);
	}
	if ((*errstr = netns_net_reserved(ntohl(addr), n)) != NULL)
		return (-1);
	net->gateway.s_addr = htonl(ntohl(addr) + 1);
	net->sandbox.s_addr = htonl(ntohl(addr) + 2);
	net->prefixlen = n;
	return (0);
}

/* A wait status as a shell exit status. */
int
netns_exit_status(int status)
{
	if (WIFEXITED(status))
		return (WEXITSTATUS(status));
	if (WIFSIGNALED(status))
		return (128 + WTERMSIG(status));
	return (1);
}
