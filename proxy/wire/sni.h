/*
 * Protocol sniffers for transparent capture: the server name a client
 * names in the first bytes it sends, from a TLS ClientHello (SNI) or an
 * HTTP/1.x request (Host).  Pure: bytes in, a result out; no I/O, no
 * globals, no state between calls.
 *
 * Each function is given every byte peeked from the connection so far
 * (from its first byte) and decides as soon as it can.  The answer for a
 * prefix is either SNI_NEED_MORE or the answer for any longer input:
 * nothing after the bytes that decided is ever looked at.
 */
#ifndef SNI_H
#define SNI_H

#include <stddef.h>
#include <stdint.h>

#define SNI_NAME_MAX	253		/* longest name (no trailing dot) */
#define SNI_HELLO_MAX	65536		/* largest ClientHello message taken */
#define SNI_HTTP_MAX	8192		/* largest HTTP request head taken */
/* No answer ever needs more input than this: beyond it, SNI_ERROR. */
#define SNI_PEEK_MAX	(SNI_HELLO_MAX + 4096)

enum sni_status {
	SNI_NEED_MORE = 0,	/* undecided: wait for r->need bytes in all */
	SNI_OTHER,		/* not this protocol (not TLS / not HTTP) */
	SNI_NO_NAME,		/* this protocol, naming no server */
	SNI_NAME,		/* this protocol; r->name is the server */
	SNI_ERROR		/* looks like this protocol, but malformed */
};

enum sni_proto {
	SNI_PROTO_UNKNOWN = 0,
	SNI_PROTO_TLS,
	SNI_PROTO_HTTP
};

struct sni_result {
	enum sni_proto	 proto;		/* what the bytes are, when known */
	size_t		 need;		/* NEED_MORE: at least this many bytes */
	size_t		 used;		/* decided: the bytes that decided */
	const char	*error;		/* ERROR: why (static text) */
	int		 ech;		/* TLS: encrypted_client_hello offered;
					   name is then the outer, public name */
	int		 sslv2;		/* TLS: SSLv2-compatible hello */
	int		 iplit;		/* name is an address literal */
	uint16_t	 port;		/* HTTP: the port in Host, 0 if none */
	/*
	 * Lowercase, without trailing dot; letters, digits, '-' and '.'
	 * only, labels of 1 to 63.  An address literal (iplit) is an IPv4
	 * spelling (the last label is numeric, as no DNS name's is) or,
	 * from HTTP only, "[IPv6]" with its brackets.
	 */
	char		 name[SNI_NAME_MAX + 1];
};

/*
 * A TLS ClientHello, reassembled from consecutive handshake records.
 * SNI_OTHER when the first bytes are not a TLS handshake record;
 * SNI_NO_NAME when there is no server_name host_name (and for an
 * SSLv2-compatible hello, which cannot carry one: r->sslv2 = 1).
 */
enum sni_status	 sni_tls_parse(const uint8_t *, size_t, struct sni_result *);

/*
 * An HTTP/1.x request head: request line, then headers up to the empty
 * line.  SNI_NAME with the Host header's host (port in r->port);
 * SNI_NO_NAME for HTTP/1.0 without Host or an empty Host; SNI_ERROR for
 * a missing HTTP/1.1 Host, several Hosts or a bad one.
 */
enum sni_status	 sni_http_parse(const uint8_t *, size_t, struct sni_result *);

/*
 * Tell TLS from HTTP/1.x from anything else by the first byte, then
 * parse as that.  SNI_OTHER: neither, do not wait for more.
 */
enum sni_status	 sni_sniff(const uint8_t *, size_t, struct sni_result *);

const char	*sni_status_name(enum sni_status);

#endif
