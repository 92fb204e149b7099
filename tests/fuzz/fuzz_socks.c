/*
 * Fuzz the SOCKS5 parsers (proxy/wire/socks5.c): the first input byte
 * picks the message (greeting, RFC 1929 credentials, request), the rest
 * is what the client sent.  It checks what the connection code relies
 * on:
 *  - a parsed message used no more bytes than it was given, and every
 *    shorter prefix of it asks for more;
 *  - an error says why, and a refused request carries a reply code;
 *  - a parsed request is a CONNECT to a host and a port, and the reply
 *    built for any address is 10 or 22 bytes;
 *  - more bytes never change a decided result.
 * Corpus: tests/fuzz/socks/ (real clients' messages, a byte before
 * each).
 */
#include "config.h"

#include <sys/socket.h>

#include <netinet/in.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/wire/socks5.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* What one parse said, whatever the message. */
struct outcome {
	enum socks_status	 st;
	size_t			 len;
	uint8_t			 code;		/* method or reply */
	const char		*error;
	char			 host[HOST_TEXT_LEN];
	uint16_t		 port;
};

/* Stop loudly when an invariant breaks. */
static void
check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_socks: invariant broken: %s\n", what);
		abort();
	}
}

/* Parse one message of kind k. */
static void
parse(int k, const uint8_t *p, size_t len, struct outcome *o)
{
	struct socks_greeting	g;
	struct socks_auth	a;
	struct socks_request	r;

	memset(o, 0, sizeof *o);
	if (k == 0) {
		o->st = socks_greeting_parse(p, len, &g);
		o->len = g.len;
		o->code = g.method;
		o->error = g.error;
	} else if (k == 1) {
		o->st = socks_auth_parse(p, len, &a);
		o->len = a.len;
		o->error = a.error;
	} else {
		o->st = socks_request_parse(p, len, &r);
		o->len = r.len;
		o->code = r.reply;
		o->error = r.error;
		o->port = r.port;
		if (o->st == SOCKS_OK) {
			check(r.cmd == SOCKS_CMD_CONNECT, "not a CONNECT");
			check(r.host.text[0] != '\0', "no host");
		}
		memcpy(o->host, r.host.text, sizeof o->host);
	}
}

/* Hold one outcome to the invariants. */
static void
check_one(int k, const struct outcome *o, size_t len)
{
	switch (o->st) {
	case SOCKS_NEED_MORE:
		break;
	case SOCKS_OK:
		check(o->len > 0 && o->len <= len, "length");
		check(o->len <= SOCKS_MSG_MAX, "too long");
		check(k != 2 || o->port != 0, "port 0");
		break;
	case SOCKS_ERROR:
		check(o->error != NULL, "error without why");
		check(k != 2 || o->code != SOCKS_REP_OK, "error without code");
		check(k != 0 || o->code == SOCKS_METHOD_REFUSED, "method");
		break;
	default:
		check(0, "status");
	}
}

/* Build replies from the input's bytes as an address. */
static void
check_reply(const uint8_t *p, size_t len)
{
	struct sockaddr_in6	in6;
	struct sockaddr_in	in;
	uint8_t			buf[SOCKS_REPLY_MAX];

	memset(&in, 0, sizeof in);
	memset(&in6, 0, sizeof in6);
	in.sin_family = AF_INET;
	in6.sin6_family = AF_INET6;
	memcpy(&in.sin_addr, p, len < 4 ? len : 4);
	memcpy(&in6.sin6_addr, p, len < 16 ? len : 16);
	check(socks_reply_build(len > 0 ? p[0] : 0,
	    (struct sockaddr *)&in, buf) == 10, "IPv4 reply");
	check(socks_reply_build(0, (struct sockaddr *)&in6, buf) == 22,
	    "IPv6 reply");
	check(socks_reply_build(1, NULL, buf) == 10, "empty reply");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct outcome	 o, q;
	const uint8_t	*p;
	uint8_t		*more;
	size_t		 len, i;
	int		 k;

	if (size < 1)
		return (0);
	k = data[0] % 3;
	p = data + 1;
	len = size - 1;
	parse(k, p, len, &o);
	check_one(k, &o, len);
	check_reply(p, len);
	if (o.st == SOCKS_OK) {
		for (i = 0; i < o.len; i++) {
			parse(k, p, i, &q);
			check(q.st == SOCKS_NEED_MORE, "a prefix decided");
		}
	}
	if (o.st == SOCKS_NEED_MORE)
		return (0);
	/* More bytes after a decided message change nothing. */
	if ((more = malloc(len + 8)) == NULL)
		return (0);
	memcpy(more, p, len);
	memset(more + len, 0x41, 8);
	parse(k, more, len + 8, &q);
	free(more);
	check(q.st == o.st && q.len == o.len && q.code == o.code &&
	    q.port == o.port && strcmp(q.host, o.host) == 0, "more bytes");
	return (0);
}
