/*
 * Canonical hosts: every spelling of a name or an address is turned into
 * one form, used for matching, dialing and logging alike.
 */
#include "config.h"

#include <sys/socket.h>

#include <arpa/inet.h>

#include <ctype.h>
#include <string.h>

#include "rules/rules-int.h"

/* Parse one part of an IPv4 address: decimal, 0octal or 0xhex. */
static int
ipv4_part(const char *s, size_t len, uint64_t *v)
{
	unsigned int	base = 10, d;
	size_t		i = 0;

	if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	} else if (len >= 2 && s[0] == '0') {
		base = 8;
		i = 1;
	}
	if (i == len)
		return (-1);
	for (*v = 0; i < len; i++) {
		if (isdigit((unsigned char)s[i]))
			d = s[i] - '0';
		else if (isxdigit((unsigned char)s[i]))
			d = tolower((unsigned char)s[i]) - 'a' + 10;
		else
			return (-1);
		if (d >= base)
			return (-1);
		*v = *v * base + d;
		if (*v > 0xffffffffU)
			return (-1);
	}
	return (0);
}

/*
 * Parse any IPv4 spelling inet_aton(3) knows (1 to 4 parts, each decimal,
 * octal or hex, the last filling the remaining bytes), and nothing more.
 */
static int
ipv4_parse(const char *s, size_t len, uint8_t *addr)
{
	uint64_t	part[4], v;
	size_t		n = 0, i, start = 0;
	unsigned int	k;

	for (i = 0; i <= len; i++) {
		if (i < len && s[i] != '.')
			continue;
		if (n == 4 || ipv4_part(s + start, i - start, &part[n]) == -1)
			return (-1);
		n++;
		start = i + 1;
	}
	for (i = 0; i + 1 < n; i++) {
		if (part[i] > 255)
			return (-1);
	}
	if (part[n - 1] >> (8 * (5 - n)) != 0)
		return (-1);
	v = part[n - 1];
	for (i = 0; i + 1 < n; i++)
		v |= part[i] << (8 * (3 - i));
	for (k = 0; k < 4; k++)
		addr[k] = (v >> (8 * (3 - k))) & 0xff;
	return (0);
}

/* Does the last label look like a number (so the host must be IPv4)? */
static int
ends_in_number(const char *s, size_t len)
{
	size_t	i = len;

	while (i > 0 && s[i - 1] != '.')
		i--;
	if (i == len)
		return (0);
	if (len - i >= 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
		for (i += 2; i < len; i++) {
			if (!isxdigit((unsigned char)s[i]))
				return (0);
		}
		return (1);
	}
	for (; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return (0);
	}
	return (1);
}

/* Does this text need the IPv6 parser (it has a colon)? */
int
host_is_v6_text(const char *s, size_t len)
{
	return (memchr(s, ':', len) != NULL);
}

/* Fill h from an address; ::ffff:a.b.c.d becomes that IPv4 address. */
static void
host_set_addr(struct host *h, const uint8_t *addr, size_t alen)
{
	static const uint8_t	mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	    0xff, 0xff };

	uint8_t			copy[16];

	if (alen == 16 && memcmp(addr, mapped, sizeof mapped) == 0) {
		addr += 12;
		alen = 4;
	}
	memcpy(copy, addr, alen);
	memset(h->addr, 0, sizeof h->addr);
	memcpy(h->addr, copy, alen);
	h->kind = alen == 4 ? HOST_IPV4 : HOST_IPV6;
	addr_format(h->text, sizeof h->text, h->addr, alen);
}

/* Parse an IPv6 address, brackets already removed. */
static int
host_parse_v6(const char *s, size_t len, struct host *h, const char **errstr)
{
	char	buf[INET6_ADDRSTRLEN + 1];
	uint8_t	addr[16];

	if (len >= sizeof buf || memchr(s, '\0', len) != NULL) {
		*errstr = "invalid IPv6 address";
		return (-1);
	}
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (inet_pton(AF_INET6, buf, addr) != 1) {
		*errstr = "invalid IPv6 address";
		return (-1);
	}
	host_set_addr(h, addr, sizeof addr);
	return (0);
}

/* Check one label of a lowercased name. */
static const char *
label_check(const char *s, size_t len)
{
	size_t	i;

	if (len == 0)
		return ("empty label in name");
	if (len > LABEL_LEN)
		return ("label longer than 63 bytes");
	for (i = 0; i < len; i++) {
		if (s[i] == '*')
			return ("'*' is only allowed as a whole first label");
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' &&
		    s[i] != '_')
			return ("invalid character in name");
	}
	return (NULL);
}

/* Check a lowercased name, label by label. */
static const char *
name_check(const char *s, size_t len)
{
	const char	*dot, *err;

	for (;;) {
		dot = memchr(s, '.', len);
		if ((err = label_check(s, dot ? (size_t)(dot - s) : len)) != NULL)
			return (err);
		if (dot == NULL)
			return (NULL);
		len -= dot - s + 1;
		s = dot + 1;
	}
}

/* Check the raw bytes of a name before anything else. */
static const char *
raw_check(const char *s, size_t len)
{
	size_t	i;

	for (i = 0; i < len; i++) {
		if ((unsigned char)s[i] >= 0x80)
			return ("non-ASCII name: write it in punycode (xn--...)");
		if (s[i] == '\0')
			return ("NUL byte in name");
	}
	return (NULL);
}

/* Canonicalise a host name or address. */
int
host_parse(const char *s, size_t len, struct host *h, const char **errstr)
{
	char	name[HOST_TEXT_LEN + 1];
	uint8_t	v4[4];
	size_t	i;

	if (len >= 2 && s[0] == '[' && s[len - 1] == ']')
		return (host_parse_v6(s + 1, len - 2, h, errstr));
	if (host_is_v6_text(s, len))
		return (host_parse_v6(s, len, h, errstr));
	if ((*errstr = raw_check(s, len)) != NULL)
		return (-1);
	if (len > 0 && s[len - 1] == '.')
		len--;
	if (len == 0) {
		*errstr = "empty host";
		return (-1);
	}
	if (len > HOST_NAME_LEN) {
		*errstr = "name longer than 253 bytes";
		return (-1);
	}
	for (i = 0; i < len; i++)
		name[i] = tolower((unsigned char)s[i]);
	name[len] = '\0';
	if (ends_in_number(name, len)) {
		if (ipv4_parse(name, len, v4) == -1) {
			*errstr = "invalid IPv4 address";
			return (-1);
		}
		host_set_addr(h, v4, 4);
		return (0);
	}
	if ((*errstr = name_check(name, len)) != NULL)
		return (-1);
	h->kind = HOST_NAME;
	memset(h->addr, 0, sizeof h->addr);
	memcpy(h->text, name, len + 1);
	return (0);
}

/* Parse a port number, 1 to 65535, decimal digits only (the one parser). */
int
port_parse(const char *s, size_t len, uint16_t *port)
{
	unsigned int	v = 0;
	size_t		i;

	if (len == 0 || len > 5)
		return (-1);
	for (i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return (-1);
		v = v * 10 + (s[i] - '0');
	}
	if (v == 0 || v > 65535)
		return (-1);
	*port = v;
	return (0);
}
