/*
 * Unit tests for TLS inspection's OpenSSL side, in memory: the CA and its
 * files, name constraints a verifier honours, leaves cached per host,
 * handshakes through BIO pairs (ALPN, the SNI check, a client that does
 * not trust the CA), upstream verification (a good, an expired and a
 * wrong-name certificate of a test CA) and a new CA after a reload that
 * rewrites the files in place.
 */
#include "config.h"

#include <sys/stat.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "proxy/tls/tls.h"
#include "rules/rules.h"

static char	 dir[] = "/tmp/test_tls.XXXXXX";
static char	 prefix[64], upca[80];
static EVP_PKEY	*upkey;		/* the test upstream CA's key */
static X509	*upcert;

/* A host as the gateway has it. */
static struct host
host(const char *s)
{
	struct host	 h;
	const char	*errstr;

	assert_int_equal(host_parse(s, strlen(s), &h, &errstr), 0);
	return (h);
}

/* Count the certificates in a PEM file. */
static int
pem_count(const char *path)
{
	FILE	*f = fopen(path, "r");
	char	 line[256];
	int	 n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof line, f) != NULL)
		n += strncmp(line, "-----BEGIN CERTIFICATE-----", 27) == 0;
	fclose(f);
	return (n);
}

/* Run a handshake between two SSL objects joined by a BIO pair. */
static int
handshake(SSL *client, SSL *server)
{
	BIO	*a, *b;
	int	 i, c = 0, s = 0;

	assert_int_equal(BIO_new_bio_pair(&a, 0, &b, 0), 1);
	SSL_set_bio(client, a, a);
	SSL_set_bio(server, b, b);
	for (i = 0; i < 50 && (c != 1 || s != 1); i++) {
		if (c != 1 && (c = SSL_do_handshake(client)) <= 0 &&
		    SSL_get_error(client, c) != SSL_ERROR_WANT_READ) {
			SSL_do_handshake(server);	/* reads the alert */
			return (-1);
		}
		if (s != 1 && (s = SSL_do_handshake(server)) <= 0 &&
		    SSL_get_error(server, s) != SSL_ERROR_WANT_READ)
			return (-2);
	}
	return (c == 1 && s == 1 ? 0 : -3);
}

/* A client that trusts the file given and wants this name. */
static SSL *
client(const char *trust, const char *sni, const char *want)
{
	static const unsigned char	 alpn[] = "\x02h2\x08http/1.1";
	SSL_CTX				*ctx = SSL_CTX_new(TLS_client_method());
	SSL				*ssl;

	assert_non_null(ctx);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	assert_int_equal(SSL_CTX_load_verify_locations(ctx, trust, NULL), 1);
	SSL_CTX_set_alpn_protos(ctx, alpn, sizeof alpn - 1);
	ssl = SSL_new(ctx);
	SSL_CTX_free(ctx);
	if (sni != NULL)
		SSL_set_tlsext_host_name(ssl, sni);
	if (want != NULL)
		SSL_set1_host(ssl, want);
	SSL_set_connect_state(ssl);
	return (ssl);
}

/* A certificate of the test upstream CA for name, valid days from now. */
static X509 *
upstream_cert(const char *name, long days)
{
	X509		*x = X509_new();
	X509V3_CTX	 ctx;
	X509_EXTENSION	*ext;
	char		 san[300];

	X509_set_version(x, X509_VERSION_3);
	ASN1_INTEGER_set(X509_get_serialNumber(x), (long)random());
	X509_gmtime_adj(X509_getm_notBefore(x), days < 0 ? -86400L * 30 : -60);
	X509_gmtime_adj(X509_getm_notAfter(x), 86400L * days);
	X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN",
	    MBSTRING_UTF8, (const unsigned char *)name, -1, -1, 0);
	X509_set_issuer_name(x, X509_get_subject_name(upcert));
	X509_set_pubkey(x, upkey);
	snprintf(san, sizeof san, "DNS:%s", name);
	X509V3_set_ctx(&ctx, upcert, x, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, NID_subject_alt_name, san);
	X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	assert_true(X509_sign(x, upkey, EVP_sha256()) > 0);
	return (x);
}

/* A server of the test upstream CA presenting a certificate for name. */
static SSL *
upstream(const char *name, long days)
{
	SSL_CTX	*ctx = SSL_CTX_new(TLS_server_method());
	SSL	*ssl;
	X509	*x = upstream_cert(name, days);

	SSL_CTX_use_certificate(ctx, x);
	SSL_CTX_use_PrivateKey(ctx, upkey);
	ssl = SSL_new(ctx);
	SSL_CTX_free(ctx);
	X509_free(x);
	SSL_set_accept_state(ssl);
	return (ssl);
}

/* The test upstream CA, written where $SSL_CERT_FILE points. */
static int
setup(void **state)
{
	X509V3_CTX	 ctx;
	X509_EXTENSION	*ext;
	FILE		*f;

	(void)state;
	if (mkdtemp(dir) == NULL)
		return (-1);
	snprintf(prefix, sizeof prefix, "%s/s1", dir);
	snprintf(upca, sizeof upca, "%s/upstream-ca.pem", dir);
	upkey = EVP_EC_gen("P-256");
	upcert = X509_new();
	X509_set_version(upcert, X509_VERSION_3);
	ASN1_INTEGER_set(X509_get_serialNumber(upcert), 1);
	X509_gmtime_adj(X509_getm_notBefore(upcert), -86400L * 60);
	X509_gmtime_adj(X509_getm_notAfter(upcert), 86400L * 60);
	X509_NAME_add_entry_by_txt(X509_get_subject_name(upcert), "CN",
	    MBSTRING_UTF8, (const unsigned char *)"upstream test CA", -1, -1, 0);
	X509_set_issuer_name(upcert, X509_get_subject_name(upcert));
	X509_set_pubkey(upcert, upkey);
	X509V3_set_ctx(&ctx, upcert, upcert, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, NID_basic_constraints,
	    "critical,CA:TRUE");
	X509_add_ext(upcert, ext, -1);
	X509_EXTENSION_free(ext);
	X509_sign(upcert, upkey, EVP_sha256());
	if ((f = fopen(upca, "w")) == NULL)
		return (-1);
	PEM_write_X509(f, upcert);
	fclose(f);
	setenv("SSL_CERT_FILE", upca, 1);
	return (0);
}

static int
teardown(void **state)
{
	char	cmd[128];

	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	EVP_PKEY_free(upkey);
	X509_free(upcert);
	return (system(cmd) == 0 ? 0 : -1);
}

/* The CA's files; its leaves chain to it within its constraints only. */
static void
test_ca(void **state)
{
	const char	*names[] = { "origin.test", "*.example.test",
	    "127.0.0.1" };
	struct host	 h;
	struct tls	*t;
	SSL		*s, *c;
	char		 err[256];

	(void)state;
	t = tls_new("s1", names, 3, prefix, err, sizeof err);
	if (t == NULL)
		fail_msg("%s", err);
	assert_int_equal(pem_count(tls_ca_path(t)), 1);
	assert_int_equal(pem_count(tls_trust_path(t)), 2);  /* system + CA */
	h = host("origin.test");
	s = tls_accept_new(t, &h, err, sizeof err);
	c = client(tls_ca_path(t), "origin.test", "origin.test");
	assert_int_equal(handshake(c, s), 0);
	{
		const unsigned char	*p;
		unsigned int		 n;

		SSL_get0_alpn_selected(c, &p, &n);
		assert_int_equal(n, 8);
		assert_memory_equal(p, "http/1.1", 8);
	}
	SSL_free(s);
	SSL_free(c);
	h = host("a.b.example.test");
	s = tls_accept_new(t, &h, err, sizeof err);
	c = client(tls_trust_path(t), "a.b.example.test", "a.b.example.test");
	assert_int_equal(handshake(c, s), 0);
	SSL_free(s);
	SSL_free(c);
	/* A host outside the constraints: the client's verifier refuses. */
	h = host("other.test");
	s = tls_accept_new(t, &h, err, sizeof err);
	c = client(tls_ca_path(t), "other.test", "other.test");
	assert_int_not_equal(handshake(c, s), 0);
	assert_int_equal(SSL_get_verify_result(c),
	    X509_V_ERR_PERMITTED_VIOLATION);
	assert_true(tls_client_rejected(s));
	SSL_free(s);
	SSL_free(c);
	tls_free(t);
}

/* A SNI that names another host fails the handshake: fronting. */
static void
test_fronting(void **state)
{
	const char	*names[] = { "origin.test", "evil.test" };
	struct host	 h = host("origin.test");
	struct tls	*t;
	SSL		*s, *c;
	char		 err[256], why[256];

	(void)state;
	assert_non_null(t = tls_new("s1", names, 2, prefix, err, sizeof err));
	s = tls_accept_new(t, &h, err, sizeof err);
	c = client(tls_ca_path(t), "evil.test", NULL);
	assert_int_not_equal(handshake(c, s), 0);
	assert_string_equal(tls_fronting(s), "evil.test");
	tls_error_text(s, 0, why, sizeof why);
	assert_non_null(strstr(why, "evil.test"));
	SSL_free(s);
	SSL_free(c);
	/* No SNI at all is the host's. */
	s = tls_accept_new(t, &h, err, sizeof err);
	c = client(tls_ca_path(t), NULL, "origin.test");
	assert_int_equal(handshake(c, s), 0);
	assert_null(tls_fronting(s));
	SSL_free(s);
	SSL_free(c);
	tls_free(t);
}

/* A client that trusts another CA (a pinned one) says so. */
static void
test_client_rejects(void **state)
{
	const char	*names[] = { "origin.test" };
	struct host	 h = host("origin.test");
	struct tls	*t;
	SSL		*s, *c;
	char		 err[256], why[256];

	(void)state;
	assert_non_null(t = tls_new("s1", names, 1, prefix, err, sizeof err));
	s = tls_accept_new(t, &h, err, sizeof err);
	c = client(upca, "origin.test", "origin.test");
	assert_int_not_equal(handshake(c, s), 0);
	assert_true(tls_client_rejected(s));
	tls_error_text(s, 0, why, sizeof why);
	assert_non_null(strstr(why, "unknown CA"));
	SSL_free(s);
	SSL_free(c);
	tls_free(t);
}

/* Upstream: verified against $SSL_CERT_FILE and for the host's name. */
static void
test_upstream(void **state)
{
	const char	*names[] = { "origin.test" };
	struct host	 h = host("origin.test");
	struct tls	*t;
	SSL		*s, *c;
	char		 err[256], why[256];

	(void)state;
	assert_non_null(t = tls_new("s1", names, 1, prefix, err, sizeof err));
	c = tls_connect_new(t, &h, err, sizeof err);
	s = upstream("origin.test", 30);
	assert_int_equal(handshake(c, s), 0);
	SSL_free(s);
	SSL_free(c);
	c = tls_connect_new(t, &h, err, sizeof err);
	s = upstream("origin.test", -1);		/* expired */
	assert_int_not_equal(handshake(c, s), 0);
	tls_error_text(c, 1, why, sizeof why);
	assert_non_null(strstr(why, "expired"));
	SSL_free(s);
	SSL_free(c);
	c = tls_connect_new(t, &h, err, sizeof err);
	s = upstream("nothing.test", 30);		/* another name */
	assert_int_not_equal(handshake(c, s), 0);
	tls_error_text(c, 1, why, sizeof why);
	assert_non_null(strstr(why, "ostname mismatch"));
	SSL_free(s);
	SSL_free(c);
	tls_free(t);
}

/* A reload naming a host outside the CA: a new CA, the files in place. */
static void
test_set_names(void **state)
{
	const char	*one[] = { "origin.test" };
	const char	*two[] = { "origin.test", "new.test" };
	struct host	 h = host("new.test");
	struct stat	 st1, st2;
	struct tls	*t;
	SSL		*s, *c;
	char		 err[256];

	(void)state;
	assert_non_null(t = tls_new("s1", one, 1, prefix, err, sizeof err));
	assert_int_equal(stat(tls_trust_path(t), &st1), 0);
	assert_int_equal(tls_set_names(t, one, 1, err, sizeof err), 0);
	assert_int_equal(pem_count(tls_ca_path(t)), 1);	/* unchanged */
	assert_int_equal(tls_set_names(t, two, 2, err, sizeof err), 0);
	assert_int_equal(stat(tls_trust_path(t), &st2), 0);
	assert_int_equal(st1.st_ino, st2.st_ino);
	assert_int_equal(pem_count(tls_ca_path(t)), 2);
	assert_int_equal(pem_count(tls_trust_path(t)), 3);
	s = tls_accept_new(t, &h, err, sizeof err);
	c = client(tls_trust_path(t), "new.test", "new.test");
	assert_int_equal(handshake(c, s), 0);
	SSL_free(s);
	SSL_free(c);
	tls_free(t);
}

/* A session name as long as a session name may be: its CA is made, and names it. */
static void
test_long_name(void **state)
{
	const char	*names[] = { "origin.test" };
	char		 name[65], ou[65], err[256];
	struct tls	*t;
	X509		*x;
	FILE		*f;

	(void)state;
	memset(name, 'u', 64);
	name[64] = '\0';
	t = tls_new(name, names, 1, prefix, err, sizeof err);
	if (t == NULL)
		fail_msg("%s", err);
	assert_non_null(f = fopen(tls_ca_path(t), "r"));
	assert_non_null(x = PEM_read_X509(f, NULL, NULL, NULL));
	fclose(f);
	assert_int_equal(X509_NAME_get_text_by_NID(X509_get_subject_name(x),
	    NID_organizationalUnitName, ou, sizeof ou), 64);
	assert_string_equal(ou, name);
	X509_free(x);
	tls_free(t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ca),
		cmocka_unit_test(test_fronting),
		cmocka_unit_test(test_client_rejects),
		cmocka_unit_test(test_upstream),
		cmocka_unit_test(test_set_names),
		cmocka_unit_test(test_long_name),
	};

	return (cmocka_run_group_tests(tests, setup, teardown));
}
