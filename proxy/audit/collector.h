/*
 * What the shipping transports (ship.c's syslog, otlpship.c's OTLP/HTTP)
 * share about the collector they send to: its HOST:PORT, resolved once,
 * and for TLS the client context made from --log-tls-ca, --log-tls-cert
 * and --log-tls-key, the SSL object that checks the collector's name or
 * address, and the words for why a handshake failed.
 */
#ifndef COLLECTOR_H
#define COLLECTOR_H

#include <stddef.h>

#include <openssl/ssl.h>

struct addrinfo;
struct bufferevent;

struct collector {
	char		*dest;		/* the --log value, for messages */
	char		*hostport;	/* "HOST:PORT", for a Host header */
	char		*host;		/* HOST, no brackets: what TLS checks */
	struct addrinfo	*ai;		/* its addresses */
	SSL_CTX		*ctx;		/* TLS, or NULL */
};

/*
 * Take dest and the hplen bytes of "HOST:PORT" at hp ([v6]:PORT), and
 * resolve them.  -1 with err set ("DEST: give USAGE" when HOST:PORT is
 * not one); collector_close() frees what it made either way.
 */
int	 collector_open(struct collector *, const char *, const char *,
	    size_t, const char *, char *, size_t);
/*
 * Make the TLS context: the collector verified against ca (NULL: the
 * system's store), our certificate and key shown when both are given.
 */
int	 collector_tls(struct collector *, const char *, const char *,
	    const char *, char *, size_t);
/* A TLS session that checks the collector's name or address; or NULL. */
SSL	*collector_ssl(const struct collector *);
/* Say in buf why the TLS connection of a bufferevent_openssl failed. */
void	 collector_tls_why(struct bufferevent *, char *, size_t);
/* Free what collector_open() and collector_tls() made. */
void	 collector_close(struct collector *);

#endif
