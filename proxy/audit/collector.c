/*
 * A shipping destination's collector: its address and TLS (collector.h).
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "proxy/audit/collector.h"

#define COLLECTOR_PORT_MAX	8	/* "65535" and its NUL, with room */

/* Split "HOST:PORT" ([v6]:PORT) and resolve it, once. */
int
collector_open(struct collector *c, const char *dest, const char *hp,
    size_t hplen, const char *usage, char *err, size_t errlen)
{
	struct addrinfo	 hints;
	const char	*colon;
	size_t		 hlen;
	int		 rv;

	memset(c, 0, sizeof *c);
	if ((c->dest = strdup(dest)) == NULL ||
	    (c->hostport = strndup(hp, hplen)) == NULL) {
		snprintf(err, errlen, "%s: out of memory", dest);
		return (-1);
	}
	if ((colon = strrchr(c->hostport, ':')) == NULL || colon[1] == '\0' ||
	    strlen(colon + 1) >= COLLECTOR_PORT_MAX ||
	    strspn(colon + 1, "0123456789") != strlen(colon + 1))
		goto bad;
	hp = c->hostport;
	hlen = colon - hp;
	if (hlen >= 2 && hp[0] == '[' && hp[hlen - 1] == ']') {
		hp++;
		hlen -= 2;
	}
	if (hlen == 0 || (c->host = strndup(hp, hlen)) == NULL)
		goto bad;
	memset(&hints, 0, sizeof hints);
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	if ((rv = getaddrinfo(c->host, colon + 1, &hints, &c->ai)) != 0) {
		c->ai = NULL;
		snprintf(err, errlen, "%s: %s", dest, gai_strerror(rv));
		return (-1);
	}
	return (0);
bad:
	snprintf(err, errlen, "%s: give %s", dest, usage);
	return (-1);
}

/* OpenSSL's name of an error, or dflt when it has none. */
static const char *
collector_reason(unsigned long e, const char *dflt)
{
	const char	*s = e != 0 ? ERR_reason_error_string(e) : NULL;

	return (s != NULL ? s : dflt);
}

/* Make the TLS context: verify the collector, maybe show our own. */
int
collector_tls(struct collector *c, const char *ca, const char *cert,
    const char *key, char *err, size_t errlen)
{
	const char	*what = "TLS";

	if ((c->ctx = SSL_CTX_new(TLS_client_method())) == NULL)
		goto fail;
	SSL_CTX_set_min_proto_version(c->ctx, TLS1_2_VERSION);
	SSL_CTX_set_verify(c->ctx, SSL_VERIFY_PEER, NULL);
	what = ca != NULL ? ca : "the system's CA store";
	if (ca != NULL ? SSL_CTX_load_verify_locations(c->ctx, ca, NULL) != 1 :
	    SSL_CTX_set_default_verify_paths(c->ctx) != 1)
		goto fail;
	if (cert == NULL && key == NULL)
		return (0);
	what = "--log-tls-cert and --log-tls-key go together";
	if (cert == NULL || key == NULL)
		goto fail;
	what = cert;
	if (SSL_CTX_use_certificate_chain_file(c->ctx, cert) != 1)
		goto fail;
	what = key;
	if (SSL_CTX_use_PrivateKey_file(c->ctx, key, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_check_private_key(c->ctx) != 1)
		goto fail;
	return (0);
fail:
	snprintf(err, errlen, "%s: %s: %s", c->dest, what,
	    collector_reason(ERR_peek_last_error(), "bad value"));
	ERR_clear_error();
	return (-1);
}

/* A TLS session that checks the collector's name or address. */
SSL *
collector_ssl(const struct collector *c)
{
	struct in6_addr	 a6;
	SSL		*ssl;

	if ((ssl = SSL_new(c->ctx)) == NULL)
		return (NULL);
	if (inet_pton(AF_INET, c->host, &a6) == 1 ||
	    inet_pton(AF_INET6, c->host, &a6) == 1) {
		if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl),
		    c->host) == 1)
			return (ssl);
	} else if (SSL_set1_host(ssl, c->host) == 1 &&
	    SSL_set_tlsext_host_name(ssl, c->host) == 1)
		return (ssl);
	SSL_free(ssl);
	return (NULL);
}

/*
 * Say why a TLS connection failed: the certificate's verdict, else the
 * first error TLS kept (what the later ones followed from); buf is left
 * as it is when TLS has nothing to say.  The errors are taken either way.
 */
void
collector_tls_why(struct bufferevent *bev, char *buf, size_t len)
{
	SSL		*ssl = bufferevent_openssl_get_ssl(bev);
	unsigned long	 e, first = 0;
	long		 v;

	while ((e = bufferevent_get_openssl_error(bev)) != 0)
		first = e;	/* they come back last first */
	if (ssl != NULL && (v = SSL_get_verify_result(ssl)) != X509_V_OK)
		snprintf(buf, len, "TLS: the collector's certificate: %s",
		    X509_verify_cert_error_string(v));
	else if (first != 0)
		snprintf(buf, len, "TLS: %s",
		    collector_reason(first, "an error without a name"));
}

/* Free what collector_open() and collector_tls() made. */
void
collector_close(struct collector *c)
{
	if (c->ctx != NULL)
		SSL_CTX_free(c->ctx);
	if (c->ai != NULL)
		freeaddrinfo(c->ai);
	free(c->host);
	free(c->hostport);
	free(c->dest);
	memset(c, 0, sizeof *c);
}
