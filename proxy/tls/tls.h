/*
 * TLS inspection's OpenSSL side: the session's CA (ECDSA P-256, made at
 * start, its key in memory only), leaf certificates made per host on
 * first use and cached, the SSL objects for ending a client's TLS and
 * beginning it again upstream, verified.  No libevent here: conn/ wraps
 * the SSL objects in bufferevents.
 */
#ifndef TLS_H
#define TLS_H

#include <stddef.h>

#include <openssl/ssl.h>

struct host;
struct tls;

/*
 * Make a CA for session (its name, up to 64 bytes, is the subject's OU),
 * name-constrained to n host patterns as rules_inspected() gives them
 * ("name", "*.name", an address, "ADDR/LEN"; "*" or n == 0: no
 * constraints).  Writes the CA
 * certificate to PREFIX.ca.pem and the trust bundle (the system's, or
 * $SSL_CERT_FILE's, and the CA) to PREFIX.trust.pem, both 0644.
 * Returns NULL with err.
 */
struct tls	*tls_new(const char *, const char *const *, size_t,
		    const char *, char *, size_t);
void		 tls_free(struct tls *);	/* the files stay */
const char	*tls_ca_path(const struct tls *);
const char	*tls_trust_path(const struct tls *);

/*
 * The inspected hosts changed (a policy reload): when they are not all
 * within the CA's constraints, make a new CA for them and rewrite both
 * files in place (same inodes: a bind mount of them sees the change);
 * the trust bundle keeps the earlier CAs, so clients that read it before
 * still trust the leaves they were given.  Returns 0 or -1 with err.
 */
int	tls_set_names(struct tls *, const char *const *, size_t, char *,
	    size_t);

/*
 * An SSL object to end a client's TLS for host (SSL_set_accept_state
 * done): a leaf for the host from the cache or made now, ALPN offering
 * http/1.1 only, and an SNI that must name host (an IP host takes no
 * SNI or its own text); another name fails the handshake, and
 * tls_fronting() says which it was.  NULL with err.
 */
SSL	*tls_accept_new(struct tls *, const struct host *, char *, size_t);

/*
 * An SSL object to begin TLS with host's server (SSL_set_connect_state
 * done): verified against the system's trust store (OpenSSL's default
 * paths; $SSL_CERT_FILE honoured) and for the host's name or address,
 * SNI set for names, ALPN http/1.1.  NULL with err.
 */
SSL	*tls_connect_new(struct tls *, const struct host *, char *, size_t);

/*
 * Why a handshake failed, in words: the verification result upstream
 * ("certificate has expired", "certificate is for another name"), else
 * the alert or error seen.
 */
void	 tls_error_text(SSL *, int, char *, size_t);

/* The name a client's SNI gave when it was not the host's, or NULL. */
const char	*tls_fronting(SSL *);

/*
 * Did the client end the handshake rejecting our certificate (an alert
 * such as unknown_ca or bad_certificate: it does not trust the CA, or
 * pins another)?
 */
int	 tls_client_rejected(SSL *);

#endif
