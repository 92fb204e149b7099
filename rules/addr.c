/*
 * Special-purpose addresses: the ranges the gateway refuses to dial
 * unless an allow-private rule covers them.  Also the prefix helpers.
 */
#include "config.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "rules/rules-int.h"

struct addr_range {
	uint8_t			prefix[16];
	unsigned int		plen;
	enum addr_class		class;
};

/* IPv4, most specific first: the first range that holds an address wins. */
static const struct addr_range addr_v4[] = {
	{ { 0, 0, 0, 0 }, 32, ADDR_UNSPECIFIED },
	{ { 0 }, 8, ADDR_RESERVED },			/* "this network" */
	{ { 127 }, 8, ADDR_LOOPBACK },
	{ { 10 }, 8, ADDR_PRIVATE },
	{ { 172, 16 }, 12, ADDR_PRIVATE },
	{ { 192, 168 }, 16, ADDR_PRIVATE },
	{ { 169, 254, 169, 254 }, 32, ADDR_METADATA },	/* AWS, GCP, Azure, ... */
	{ { 169, 254, 170, 2 }, 32, ADDR_METADATA },	/* AWS ECS tasks */
	{ { 169, 254 }, 16, ADDR_LINK_LOCAL },
	{ { 100, 100, 100, 200 }, 32, ADDR_METADATA },	/* Alibaba Cloud */
	{ { 100, 64 }, 10, ADDR_CGNAT },
	{ { 168, 63, 129, 16 }, 32, ADDR_METADATA },	/* Azure wire server */
	{ { 192, 0, 0 }, 24, ADDR_RESERVED },		/* IETF assignments */
	{ { 192, 0, 2 }, 24, ADDR_RESERVED },		/* documentation */
	{ { 198, 51, 100 }, 24, ADDR_RESERVED },	/* documentation */
	{ { 203, 0, 113 }, 24, ADDR_RESERVED },		/* documentation */
	{ { 192, 88, 99 }, 24, ADDR_RESERVED },		/* 6to4 relays */
	{ { 198, 18 }, 15, ADDR_RESERVED },		/* benchmarking, fakes */
	{ { 224 }, 4, ADDR_MULTICAST },
	{ { 240 }, 4, ADDR_RESERVED },			/* and broadcast */
};

/* IPv6, most specific first. */
static const struct addr_range addr_v6[] = {
	{ { 0 }, 128, ADDR_UNSPECIFIED },
	{ { [15] = 1 }, 128, ADDR_LOOPBACK },
	{ { [10] = 0xff, [11] = 0xff }, 96, ADDR_EMBEDDED_V4 },	/* mapped */
	{ { [8] = 0xff, [9] = 0xff }, 96, ADDR_EMBEDDED_V4 },	/* SIIT */
	{ { 0 }, 96, ADDR_EMBEDDED_V4 },			/* compatible */
	{ { 0x00, 0x64, 0xff, 0x9b }, 96, ADDR_EMBEDDED_V4 },	/* NAT64 */
	{ { 0x00, 0x64, 0xff, 0x9b, 0x00, 0x01 }, 48, ADDR_EMBEDDED_V4 },
	{ { 0x01, 0x00 }, 64, ADDR_RESERVED },			/* discard */
	{ { 0x20, 0x01, 0x0d, 0xb8 }, 32, ADDR_RESERVED },	/* documentation */
	{ { 0x20, 0x01, 0x00, 0x02 }, 48, ADDR_RESERVED },	/* benchmarking */
	{ { 0x20, 0x01 }, 32, ADDR_EMBEDDED_V4 },		/* Teredo */
	{ { 0x20, 0x01 }, 23, ADDR_RESERVED },		/* IETF assignments */
	{ { 0x20, 0x02 }, 16, ADDR_EMBEDDED_V4 },		/* 6to4 */
	{ { 0x3f, 0xff }, 20, ADDR_RESERVED },			/* documentation */
	{ { 0x20 }, 3, ADDR_PUBLIC },				/* global unicast */
	{ { 0xfd, 0x00, 0x0e, 0xc2 }, 32, ADDR_METADATA },	/* AWS */
	{ { 0xfc }, 7, ADDR_PRIVATE },				/* ULA */
	{ { 0xfe, 0x80 }, 10, ADDR_LINK_LOCAL },
	{ { 0xff }, 8, ADDR_MULTICAST },
	{ { 0 }, 0, ADDR_RESERVED },			/* the rest: unassigned */
};

static const char *const addr_class_names[] = {
	[ADDR_PUBLIC] = "public",
	[ADDR_UNSPECIFIED] = "unspecified",
	[ADDR_LOOPBACK] = "loopback",
	[ADDR_PRIVATE] = "private",
	[ADDR_LINK_LOCAL] = "link-local",
	[ADDR_METADATA] = "cloud metadata",
	[ADDR_CGNAT] = "carrier-grade NAT",
	[ADDR_MULTICAST] = "multicast",
	[ADDR_RESERVED] = "reserved",
	[ADDR_EMBEDDED_V4] = "IPv6 embedding IPv4",
};

/* Copy addr (len bytes) into out with all but the first plen bits zeroed. */
void
addr_mask(uint8_t *out, const uint8_t *addr, size_t len, unsigned int plen)
{
	size_t	i;

	for (i = 0; i < len; i++) {
		if (plen >= 8 * (i + 1))
			out[i] = addr[i];
		else if (plen > 8 * i)
			out[i] = addr[i] & (0xff << (8 - (plen - 8 * i)));
		else
			out[i] = 0;
	}
}

/* Is addr inside prefix/plen (both len bytes)? */
int
addr_in(const uint8_t *addr, const uint8_t *prefix, size_t len,
    unsigned int plen)
{
	uint8_t	masked[16];

	addr_mask(masked, addr, len, plen);
	return (memcmp(masked, prefix, len) == 0);
}

/*
 * Write an address in its standard text form; returns its length.  An
 * IPv4 address is written by hand: it is written for each DNS answer
 * and each request to an address, and inet_ntop() goes through printf.
 */
size_t
addr_format(char *buf, size_t size, const uint8_t *addr, size_t len)
{
	char	 v4[INET_ADDRSTRLEN];
	size_t	 i, n = 0;

	if (len != 4) {
		if (inet_ntop(AF_INET6, addr, buf, size) == NULL)
			buf[0] = '\0';
		return (strlen(buf));
	}
	for (i = 0; i < 4; i++) {
		if (addr[i] >= 100)
			v4[n++] = '0' + addr[i] / 100;
		if (addr[i] >= 10)
			v4[n++] = '0' + addr[i] / 10 % 10;
		v4[n++] = '0' + addr[i] % 10;
		v4[n++] = i < 3 ? '.' : '\0';
	}
	if (n > size) {
		if (size > 0)
			buf[0] = '\0';
		return (0);
	}
	memcpy(buf, v4, n);
	return (n - 1);
}

/* A socket address as text, "ADDR:PORT" or "[V6]:PORT". */
void
addr_sockaddr_text(const struct sockaddr *sa, char *buf, size_t size)
{
	char	a[INET6_ADDRSTRLEN];

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in	*in = (const void *)sa;

		addr_format(a, sizeof a, (const uint8_t *)&in->sin_addr, 4);
		snprintf(buf, size, "%s:%u", a, ntohs(in->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6	*in6 = (const void *)sa;

		addr_format(a, sizeof a, in6->sin6_addr.s6_addr, 16);
		snprintf(buf, size, "[%s]:%u", a, ntohs(in6->sin6_port));
	} else
		snprintf(buf, size, "%s", sa->sa_family == AF_UNIX ? "local" :
		    "?");
}

/* Classify an address as public or special-purpose. */
enum addr_class
addr_classify(const uint8_t *addr, size_t len)
{
	const struct addr_range	*t;
	size_t			 i, n;

	if (len == 4) {
		t = addr_v4;
		n = sizeof addr_v4 / sizeof addr_v4[0];
	} else if (len == 16) {
		t = addr_v6;
		n = sizeof addr_v6 / sizeof addr_v6[0];
	} else
		return (ADDR_RESERVED);
	for (i = 0; i < n; i++) {
		if (addr_in(addr, t[i].prefix, len, t[i].plen))
			return (t[i].class);
	}
	return (ADDR_PUBLIC);
}

/* Name a class for messages and logs. */
const char *
addr_class_name(enum addr_class c)
{
	if ((unsigned int)c >= sizeof addr_class_names /
	    sizeof addr_class_names[0])
		return ("unknown");
	return (addr_class_names[c]);
}
