/*
 * A host and a port as a command or an option writes them: "HOST[:PORT]",
 * "[V6]:PORT", "ADDR:PORT".  A host written as a URL is said back
 * (url.c); the host itself is parsed by host.c.
 */
#include "config.h"

#include <sys/socket.h>

#include <netdb.h>
#include <stdio.h>
#include <string.h>

#include "rules/rules-int.h"

/* Split "HOST[:PORT]", "[V6]:PORT" or a bare IPv6 address, and parse. */
int
host_port_parse(const char *s, struct host *h, uint16_t *port,
    uint16_t defport, const char **errstr)
{
	const char	*colon = NULL, *end = s + strlen(s), *close;
	size_t		 hlen;

	if (host_url_hint(s, (size_t)(end - s), NULL, h->text,
	    sizeof h->text)) {
		*errstr = h->text;
		return (-1);
	}
	if (s[0] == '[') {
		if ((close = strchr(s, ']')) == NULL) {
			*errstr = "missing ']' after IPv6 address";
			return (-1);
		}
		if (close[1] != '\0' && close[1] != ':') {
			*errstr = "unexpected text after ']'";
			return (-1);
		}
		colon = close[1] == ':' ? close + 1 : NULL;
		hlen = close + 1 - s;
	} else if ((colon = strchr(s, ':')) != NULL &&
	    strchr(colon + 1, ':') != NULL) {
		colon = NULL;
		hlen = end - s;
	} else
		hlen = colon != NULL ? (size_t)(colon - s) : (size_t)(end - s);
	*port = defport;
	if (colon != NULL && port_parse(colon + 1, end - colon - 1, port) == -1) {
		*errstr = "invalid port (1 to 65535)";
		return (-1);
	}
	return (host_parse(s, hlen, h, errstr));
}

/* Parse a socket address: an IP address and a port. */
int
addr_port_parse(const char *s, struct host *h, uint16_t *port,
    uint16_t defport, const char **errstr)
{
	if (host_port_parse(s, h, port, defport, errstr) == -1)
		return (-1);
	if (h->kind == HOST_NAME) {
		*errstr = "not an IP address";
		return (-1);
	}
	if (*port == 0) {
		*errstr = "no port (ADDR:PORT, [IPV6]:PORT)";
		return (-1);
	}
	return (0);
}

/* The address to bind for "ADDR:PORT" (addr_port_parse() says what). */
struct addrinfo *
addr_port_addrinfo(const char *spec, int type, char *err, size_t errlen)
{
	struct addrinfo	 hints, *ai;
	struct host	 h;
	uint16_t	 port;
	const char	*errstr;
	char		 serv[8];
	int		 gai;

	if (addr_port_parse(spec, &h, &port, 0, &errstr) == -1) {
		snprintf(err, errlen, "%s: %s", spec, errstr);
		return (NULL);
	}
	snprintf(serv, sizeof serv, "%u", port);
	memset(&hints, 0, sizeof hints);
	hints.ai_socktype = type;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
	if ((gai = getaddrinfo(h.text, serv, &hints, &ai)) != 0) {
		snprintf(err, errlen, "%s: %s", spec, gai_strerror(gai));
		return (NULL);
	}
	return (ai);
}
