/*
 * SOCKS5 (RFC 1928) and its username/password authentication (RFC
 * 1929), the pure part: the client's greeting, its credentials and its
 * request parsed strictly, and the server's reply built.  No I/O, no
 * globals, no allocation.
 */
#ifndef WIRE_SOCKS5_H
#define WIRE_SOCKS5_H

#include <sys/socket.h>

#include <stddef.h>
#include <stdint.h>

#include "rules/rules.h"

#define SOCKS_VERSION		0x05
#define SOCKS_AUTH_VERSION	0x01	/* RFC 1929 */

/* Authentication methods. */
#define SOCKS_METHOD_NONE	0x00
#define SOCKS_METHOD_USERPASS	0x02
#define SOCKS_METHOD_REFUSED	0xff	/* no acceptable method */

/* Commands. */
#define SOCKS_CMD_CONNECT	0x01
#define SOCKS_CMD_BIND		0x02
#define SOCKS_CMD_UDP		0x03

/* Address types. */
#define SOCKS_ATYP_IPV4		0x01
#define SOCKS_ATYP_NAME		0x03
#define SOCKS_ATYP_IPV6		0x04

/* Reply codes. */
#define SOCKS_REP_OK		0x00
#define SOCKS_REP_FAILURE	0x01	/* general SOCKS server failure */
#define SOCKS_REP_NOT_ALLOWED	0x02	/* not allowed by ruleset */
#define SOCKS_REP_NET_UNREACH	0x03
#define SOCKS_REP_HOST_UNREACH	0x04
#define SOCKS_REP_REFUSED	0x05
#define SOCKS_REP_TTL		0x06
#define SOCKS_REP_COMMAND	0x07	/* command not supported */
#define SOCKS_REP_ATYP		0x08	/* address type not supported */

/* The longest message a client sends before its request is answered. */
#define SOCKS_MSG_MAX		513	/* RFC 1929: 1 + 1 + 255 + 1 + 255 */
#define SOCKS_REPLY_MAX		22	/* IPv6 BND.ADDR */

enum socks_status {
	SOCKS_NEED_MORE = 0,	/* a prefix: wait for more bytes */
	SOCKS_OK,		/* parsed: len bytes used */
	SOCKS_ERROR		/* refuse: error says why */
};

/* A greeting: the method chosen (SOCKS_METHOD_REFUSED is an error). */
struct socks_greeting {
	size_t		 len;
	uint8_t		 method;
	const char	*error;		/* static */
};

/* RFC 1929 credentials: parsed, checked, not kept. */
struct socks_auth {
	size_t		 len;
	const char	*error;		/* static */
};

/* A request: CONNECT to (host, port), or the reply code refusing it. */
struct socks_request {
	size_t		 len;
	uint8_t		 cmd;
	struct host	 host;
	uint16_t	 port;
	uint8_t		 reply;		/* ERROR: the code to answer */
	const char	*error;		/* static */
};

/*
 * The greeting (VER NMETHODS METHODS): username/password is chosen when
 * offered, then no authentication; neither is an error with method
 * SOCKS_METHOD_REFUSED.
 */
enum socks_status socks_greeting_parse(const uint8_t *, size_t,
	    struct socks_greeting *);

/* RFC 1929 (VER ULEN UNAME PLEN PASSWD): any well-formed pair is taken. */
enum socks_status socks_auth_parse(const uint8_t *, size_t,
	    struct socks_auth *);

/*
 * The request (VER CMD RSV ATYP DST.ADDR DST.PORT).  Only CONNECT is
 * OK; BIND and UDP ASSOCIATE are an error with SOCKS_REP_COMMAND, an
 * unknown address type with SOCKS_REP_ATYP, anything else malformed
 * with SOCKS_REP_FAILURE.
 */
enum socks_status socks_request_parse(const uint8_t *, size_t,
	    struct socks_request *);

/*
 * Build a reply with code rep and BND.ADDR/BND.PORT from sa (IPv4 or
 * IPv6; NULL or another family gives 0.0.0.0:0) into buf of
 * SOCKS_REPLY_MAX bytes.  Returns its length.
 */
size_t	socks_reply_build(uint8_t, const struct sockaddr *, uint8_t *);

#endif
