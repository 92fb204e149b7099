/*
 * SOCKS5 and RFC 1929, the pure part: the client's three messages
 * parsed strictly, byte by byte, and the server's reply built.
 */
#include "config.h"

#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <string.h>

#include "proxy/wire/socks5.h"
#include "rules/rules.h"

/* Stop parsing with an error. */
static enum socks_status
socks_fail(const char **error, const char *why)
{
	*error = why;
	return (SOCKS_ERROR);
}

/* Parse the greeting and choose a method. */
enum socks_status
socks_greeting_parse(const uint8_t *p, size_t len, struct socks_greeting *g)
{
	size_t	i, n;
	int	none = 0, userpass = 0;

	memset(g, 0, sizeof *g);
	g->method = SOCKS_METHOD_REFUSED;
	if (len < 1)
		return (SOCKS_NEED_MORE);
	if (p[0] != SOCKS_VERSION)
		return (socks_fail(&g->error, "not a SOCKS5 greeting"));
	if (len < 2)
		return (SOCKS_NEED_MORE);
	if ((n = p[1]) == 0)
		return (socks_fail(&g->error, "SOCKS5 greeting offers no "
		    "method"));
	if (len < 2 + n)
		return (SOCKS_NEED_MORE);
	for (i = 0; i < n; i++) {
		none |= p[2 + i] == SOCKS_METHOD_NONE;
		userpass |= p[2 + i] == SOCKS_METHOD_USERPASS;
	}
	g->len = 2 + n;
	if (userpass)
		g->method = SOCKS_METHOD_USERPASS;
	else if (none)
		g->method = SOCKS_METHOD_NONE;
	else
		return (socks_fail(&g->error, "no acceptable SOCKS5 "
		    "authentication method"));
	return (SOCKS_OK);
}

/* Parse RFC 1929 credentials: both fields 1 to 255 bytes. */
enum socks_status
socks_auth_parse(const uint8_t *p, size_t len, struct socks_auth *a)
{
	size_t	ulen, plen;

	memset(a, 0, sizeof *a);
	if (len < 1)
		return (SOCKS_NEED_MORE);
	if (p[0] != SOCKS_AUTH_VERSION)
		return (socks_fail(&a->error, "bad username/password "
		    "version"));
	if (len < 2)
		return (SOCKS_NEED_MORE);
	if ((ulen = p[1]) == 0)
		return (socks_fail(&a->error, "empty SOCKS5 username"));
	if (len < 2 + ulen + 1)
		return (SOCKS_NEED_MORE);
	if ((plen = p[2 + ulen]) == 0)
		return (socks_fail(&a->error, "empty SOCKS5 password"));
	if (len < 3 + ulen + plen)
		return (SOCKS_NEED_MORE);
	a->len = 3 + ulen + plen;
	return (SOCKS_OK);
}

/* Refuse a request with a reply code. */
static enum socks_status
socks_refuse(struct socks_request *r, uint8_t reply, const char *why)
{
	r->reply = reply;
	return (socks_fail(&r->error, why));
}

/*
 * Parse DST.ADDR (of type atyp, at p, with len bytes there) into
 * r->host.  Returns its length, 0 when more bytes are needed, -1 on
 * error (r says why).
 */
static int
socks_addr(const uint8_t *p, size_t len, uint8_t atyp,
    struct socks_request *r)
{
	char		 text[INET6_ADDRSTRLEN];
	const char	*errstr;
	size_t		 n;

	switch (atyp) {
	case SOCKS_ATYP_IPV4:
		if (len < 4)
			return (0);
		inet_ntop(AF_INET, p, text, sizeof text);
		n = 4;
		break;
	case SOCKS_ATYP_IPV6:
		if (len < 16)
			return (0);
		inet_ntop(AF_INET6, p, text, sizeof text);
		n = 16;
		break;
	case SOCKS_ATYP_NAME:
		if (len < 1)
			return (0);
		if (p[0] == 0) {
			socks_refuse(r, SOCKS_REP_FAILURE, "empty SOCKS5 "
			    "domain name");
			return (-1);
		}
		if (len < 1 + (size_t)p[0])
			return (0);
		if (host_parse((const char *)p + 1, p[0], &r->host,
		    &errstr) == -1) {
			socks_refuse(r, SOCKS_REP_FAILURE, errstr);
			return (-1);
		}
		return (1 + p[0]);
	default:
		socks_refuse(r, SOCKS_REP_ATYP, "SOCKS5 address type not "
		    "supported");
		return (-1);
	}
	if (host_parse(text, strlen(text), &r->host, &errstr) == -1) {
		socks_refuse(r, SOCKS_REP_FAILURE, errstr);
		return (-1);
	}
	return ((int)n);
}

/* Parse a request: CONNECT only. */
enum socks_status
socks_request_parse(const uint8_t *p, size_t len, struct socks_request *r)
{
	int	n;

	memset(r, 0, sizeof *r);
	r->reply = SOCKS_REP_FAILURE;
	if (len < 1)
		return (SOCKS_NEED_MORE);
	if (p[0] != SOCKS_VERSION)
		return (socks_refuse(r, SOCKS_REP_FAILURE, "not a SOCKS5 "
		    "request"));
	if (len < 3)
		return (SOCKS_NEED_MORE);
	r->cmd = p[1];
	if (p[2] != 0)
		return (socks_refuse(r, SOCKS_REP_FAILURE, "SOCKS5 reserved "
		    "byte is not zero"));
	if (len < 4)
		return (SOCKS_NEED_MORE);
	if ((n = socks_addr(p + 4, len - 4, p[3], r)) == -1)
		return (SOCKS_ERROR);
	if (n == 0 || len < 4 + (size_t)n + 2)
		return (SOCKS_NEED_MORE);
	r->port = (uint16_t)(p[4 + n] << 8 | p[4 + n + 1]);
	r->len = 4 + (size_t)n + 2;
	if (r->cmd != SOCKS_CMD_CONNECT)
		return (socks_refuse(r, SOCKS_REP_COMMAND, "SOCKS5 command "
		    "not supported"));
	if (r->port == 0)
		return (socks_refuse(r, SOCKS_REP_FAILURE, "SOCKS5 port 0"));
	r->reply = SOCKS_REP_OK;
	return (SOCKS_OK);
}

/* Build a reply: VER REP RSV ATYP BND.ADDR BND.PORT. */
size_t
socks_reply_build(uint8_t rep, const struct sockaddr *sa, uint8_t *buf)
{
	const struct sockaddr_in	*in = (const struct sockaddr_in *)sa;
	const struct sockaddr_in6	*in6 = (const struct sockaddr_in6 *)sa;
	size_t				 n = 4;
	uint16_t			 port = 0;

	buf[0] = SOCKS_VERSION;
	buf[1] = rep;
	buf[2] = 0;
	if (sa != NULL && sa->sa_family == AF_INET6) {
		buf[3] = SOCKS_ATYP_IPV6;
		memcpy(buf + n, &in6->sin6_addr, 16);
		n += 16;
		port = ntohs(in6->sin6_port);
	} else {
		buf[3] = SOCKS_ATYP_IPV4;
		memset(buf + n, 0, 4);
		if (sa != NULL && sa->sa_family == AF_INET) {
			memcpy(buf + n, &in->sin_addr, 4);
			port = ntohs(in->sin_port);
		}
		n += 4;
	}
	buf[n++] = port >> 8;
	buf[n++] = port & 0xff;
	return (n);
}
