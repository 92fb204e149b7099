/*
 * Transparent capture, its pure part: on which ports the gateway waits
 * for a client's first bytes before deciding, and what those bytes (a
 * TLS ClientHello, an HTTP/1.x request head, or neither) say about the
 * name the connection is for.  No I/O, no globals.
 */
#ifndef TRANSPARENT_H
#define TRANSPARENT_H

#include <stddef.h>
#include <stdint.h>

#include "proxy/wire/sni.h"

struct host;

/* How long a capture waits for the client's first bytes (s). */
#define TRANSPARENT_PEEK_SECONDS	3

enum transparent_verdict {
	TRANSPARENT_NEED_MORE = 0,	/* undecided: wait for more bytes */
	TRANSPARENT_OTHER,		/* neither TLS nor HTTP: no name */
	TRANSPARENT_NO_NAME,		/* TLS or HTTP naming no server */
	TRANSPARENT_MATCH,		/* names the host expected */
	TRANSPARENT_FRONTING,		/* names another host */
	TRANSPARENT_MALFORMED		/* looks like TLS or HTTP, is not */
};

struct transparent_sniff {
	enum sni_proto	 proto;		/* TLS, HTTP, or unknown */
	size_t		 need;		/* NEED_MORE: bytes in all */
	const char	*error;		/* MALFORMED: why (static) */
	char		 name[SNI_NAME_MAX + 1];	/* the name they give */
};

/*
 * Is this a port where clients speak TLS or HTTP first (80, 443, 8000,
 * 8008, 8080, 8443, 8888)?  There the gateway waits up to
 * TRANSPARENT_PEEK_SECONDS for the first bytes before it decides.
 */
int	transparent_wait_port(uint16_t);

/*
 * Look at the first bytes of a connection made to the host want (its
 * destination address, as text, is addr).  An address literal in SNI or
 * Host matches when it is that destination address.
 */
enum transparent_verdict transparent_check(const uint8_t *, size_t,
	    const struct host *, const char *, struct transparent_sniff *);

/* The audit's name_from for a MATCH: "sni" or "host". */
const char *transparent_name_from(const struct transparent_sniff *);

const char *transparent_verdict_name(enum transparent_verdict);

#endif
