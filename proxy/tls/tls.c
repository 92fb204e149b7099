/*
 * TLS inspection's OpenSSL side: see tls.h.  The CA's key and the one
 * key all leaves share are made here and live only in this process's
 * memory; what is written is certificates.
 */
#include "config.h"

#include <sys/stat.h>

#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "lib/io.h"
#include "proxy/tls/tls.h"
#include "rules/rules.h"

#define TLS_GENERATIONS		16		/* CAs a session keeps */
#define TLS_LEAVES		1024		/* leaves cached, then flushed */
#define TLS_BUCKETS		256
#define TLS_SESSIONS		256		/* upstream sessions kept */
#define TLS_CA_DAYS		365
#define TLS_BUNDLE_MAX		(16 << 20)	/* largest system bundle */
#define TLS_CONSTRAINTS_MAX	16384

/* One CA of the session, and the names it may vouch for. */
struct tls_ca {
	X509		*cert;
	EVP_PKEY	*key;
	char		**names;	/* NULL: no constraints */
	size_t		 nnames;
};

/* A leaf certificate made for one host. */
struct tls_leaf {
	struct tls_leaf	*next;
	char		 host[HOST_TEXT_LEN];
	X509		*cert;
	X509		*issuer;	/* its CA's certificate */
};

/* An upstream session to resume, per host. */
struct tls_session {
	char		 host[HOST_TEXT_LEN];
	SSL_SESSION	*sess;
};

struct tls {
	char			*session;
	char			*ca_path;
	char			*trust_path;
	char			*system;	/* the system bundle, PEM */
	size_t			 system_len;
	struct tls_ca		*gens[TLS_GENERATIONS];
	size_t			 ngens;		/* the newest is last */
	EVP_PKEY		*leaf_key;
	struct tls_leaf		*leaves[TLS_BUCKETS];
	size_t			 nleaves;
	struct tls_session	 sessions[TLS_SESSIONS];
	SSL_CTX			*server;
	SSL_CTX			*client;
};

/* What one SSL object of ours remembers (its ex_data). */
struct tls_info {
	struct tls	*tls;
	char		 host[HOST_TEXT_LEN];
	int		 is_name;
	char		 fronting[HOST_TEXT_LEN];
	int		 alert;		/* a fatal alert the peer sent, or -1 */
};

static int	tls_info_idx = -1;

/* Free an SSL object's info with it. */
static void
tls_info_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx,
    long argl, void *argp)
{
	(void)parent; (void)ad; (void)idx; (void)argl; (void)argp;
	free(ptr);
}

/* The info of an SSL object, or NULL. */
static struct tls_info *
tls_info(const SSL *ssl)
{
	return (ssl == NULL ? NULL : SSL_get_ex_data(ssl, tls_info_idx));
}

/* Say what OpenSSL said last. */
static void
tls_err(char *err, size_t len, const char *what)
{
	unsigned long	e = ERR_get_error();
	char		buf[256];

	if (e == 0)
		snprintf(err, len, "%s", what);
	else {
		ERR_error_string_n(e, buf, sizeof buf);
		snprintf(err, len, "%s: %s", what, buf);
	}
	ERR_clear_error();
}

/* A new P-256 key. */
static EVP_PKEY *
tls_key_new(void)
{
	return (EVP_EC_gen("P-256"));
}

/* Give a certificate a random 128-bit serial number. */
static int
tls_serial(X509 *x)
{
	BIGNUM		*bn;
	ASN1_INTEGER	*ai;
	int		 rv = -1;

	if ((bn = BN_new()) == NULL)
		return (-1);
	if (BN_rand(bn, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) == 1 &&
	    (ai = BN_to_ASN1_INTEGER(bn, NULL)) != NULL) {
		rv = X509_set_serialNumber(x, ai) == 1 ? 0 : -1;
		ASN1_INTEGER_free(ai);
	}
	BN_free(bn);
	return (rv);
}

/* Add one extension written as OpenSSL's configuration text. */
static int
tls_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX	 ctx;
	X509_EXTENSION	*ext;
	int		 rv;

	X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
	if ((ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value)) == NULL)
		return (-1);
	rv = X509_add_ext(x, ext, -1) == 1 ? 0 : -1;
	X509_EXTENSION_free(ext);
	return (rv);
}

/* The netmask of a prefix length, as text of the address's family. */
static void
tls_mask(char *buf, size_t len, size_t alen, unsigned int plen)
{
	uint8_t		m[16] = { 0 };
	unsigned int	i;

	for (i = 0; i < plen && i < 8 * alen; i++)
		m[i / 8] |= (uint8_t)(0x80 >> (i % 8));
	inet_ntop(alen == 4 ? AF_INET : AF_INET6, m, buf, (socklen_t)len);
}

/*
 * One pattern as a permitted subtree: "*.name" and "name" as DNS:name
 * (which permits the name and all below it), an address as IP:ADDR/MASK.
 * Returns 0, or -1 for a pattern that is none of these.
 */
static int
tls_permit(char *buf, size_t len, const char *pat, int *have_ip)
{
	struct host	 h;
	const char	*slash, *errstr;
	char		 addr[HOST_TEXT_LEN], mask[64];
	unsigned int	 plen;
	size_t		 alen;

	if (strncmp(pat, "*.", 2) == 0)
		pat += 2;
	slash = strchr(pat, '/');
	snprintf(addr, sizeof addr, "%.*s", slash != NULL ?
	    (int)(slash - pat) : (int)strlen(pat), pat);
	if (host_parse(addr, strlen(addr), &h, &errstr) == -1)
		return (-1);
	if (h.kind == HOST_NAME) {
		if (slash != NULL)
			return (-1);
		snprintf(buf, len, "permitted;DNS:%s", h.text);
		return (0);
	}
	alen = h.kind == HOST_IPV4 ? 4 : 16;
	plen = slash != NULL ? (unsigned int)strtoul(slash + 1, NULL, 10) :
	    (unsigned int)(8 * alen);
	tls_mask(mask, sizeof mask, alen, plen);
	snprintf(buf, len, "permitted;IP:%s/%s", h.text, mask);
	*have_ip = 1;
	return (0);
}

/*
 * The nameConstraints of a CA for these patterns, as configuration
 * text; no address at all is permitted unless one is named.  "" when
 * there is to be none.
 */
static int
tls_constraints(char *buf, size_t len, char *const *names, size_t n)
{
	char	one[HOST_TEXT_LEN + 96];
	size_t	i, o;
	int	have_ip = 0;

	o = (size_t)snprintf(buf, len, "critical");
	for (i = 0; i < n; i++) {
		if (strcmp(names[i], "*") == 0) {
			buf[0] = '\0';
			return (0);
		}
		if (tls_permit(one, sizeof one, names[i], &have_ip) == -1)
			continue;
		if (o + strlen(one) + 2 >= len)
			return (-1);
		o += (size_t)snprintf(buf + o, len - o, ",%s", one);
	}
	if (!have_ip && o + 64 < len)
		snprintf(buf + o, len - o, ",excluded;IP:0.0.0.0/0.0.0.0,"
		    "excluded;IP:::/::");
	return (0);
}

/* Free one CA. */
static void
tls_ca_free(struct tls_ca *ca)
{
	size_t	i;

	if (ca == NULL)
		return;
	X509_free(ca->cert);
	EVP_PKEY_free(ca->key);
	for (i = 0; i < ca->nnames; i++)
		free(ca->names[i]);
	free(ca->names);
	free(ca);
}

/* Keep a copy of the names a CA is constrained to (none: "*" or n 0). */
static int
tls_ca_names(struct tls_ca *ca, const char *const *names, size_t n)
{
	size_t	i, k;

	for (i = 0; i < n; i++) {
		if (strcmp(names[i], "*") == 0)
			return (0);
	}
	if (n == 0)
		return (0);
	if ((ca->names = calloc(n, sizeof *ca->names)) == NULL)
		return (-1);
	for (i = 0; i < n; i++) {
		for (k = 0; k < ca->nnames && strcmp(ca->names[k],
		    names[i]) != 0; k++)
			;
		if (k < ca->nnames)
			continue;		/* given twice */
		if ((ca->names[ca->nnames] = strdup(names[i])) == NULL)
			return (-1);
		ca->nnames++;
	}
	return (0);
}

/* Make a CA for the session, constrained to these names. */
static struct tls_ca *
tls_ca_new(const char *session, const char *const *names, size_t n,
    char *err, size_t len)
{
	struct tls_ca	*ca;
	X509_NAME	*subj;
	char		 nc[TLS_CONSTRAINTS_MAX];

	if ((ca = calloc(1, sizeof *ca)) == NULL ||
	    tls_ca_names(ca, names, n) == -1 ||
	    tls_constraints(nc, sizeof nc, ca->names, ca->nnames) == -1) {
		snprintf(err, len, "out of memory, or too many hosts to "
		    "constrain the CA to");
		tls_ca_free(ca);
		return (NULL);
	}
	if ((ca->key = tls_key_new()) == NULL ||
	    (ca->cert = X509_new()) == NULL ||
	    X509_set_version(ca->cert, X509_VERSION_3) != 1 ||
	    tls_serial(ca->cert) == -1 ||
	    X509_gmtime_adj(X509_getm_notBefore(ca->cert), -3600) == NULL ||
	    X509_time_adj_ex(X509_getm_notAfter(ca->cert), TLS_CA_DAYS, 0,
	    NULL) == NULL ||
	    (subj = X509_get_subject_name(ca->cert)) == NULL ||
	    X509_NAME_add_entry_by_txt(subj, "O", MBSTRING_UTF8,
	    (const unsigned char *)"pinhole", -1, -1, 0) != 1 ||
	    X509_NAME_add_entry_by_txt(subj, "OU", MBSTRING_UTF8,
	    (const unsigned char *)session, -1, -1, 0) != 1 ||
	    X509_NAME_add_entry_by_txt(subj, "CN", MBSTRING_UTF8,
	    (const unsigned char *)"pinhole session CA", -1, -1, 0) != 1 ||
	    X509_set_issuer_name(ca->cert, subj) != 1 ||
	    X509_set_pubkey(ca->cert, ca->key) != 1 ||
	    tls_ext(ca->cert, ca->cert, NID_basic_constraints,
	    "critical,CA:TRUE,pathlen:0") == -1 ||
	    tls_ext(ca->cert, ca->cert, NID_key_usage,
	    "critical,keyCertSign,cRLSign") == -1 ||
	    tls_ext(ca->cert, ca->cert, NID_subject_key_identifier,
	    "hash") == -1 ||
	    (nc[0] != '\0' && tls_ext(ca->cert, ca->cert, NID_name_constraints,
	    nc) == -1) ||
	    X509_sign(ca->cert, ca->key, EVP_sha256()) == 0) {
		tls_err(err, len, "cannot make the CA");
		tls_ca_free(ca);
		return (NULL);
	}
	return (ca);
}

/* The CA leaves are made by now. */
static struct tls_ca *
tls_ca(const struct tls *t)
{
	return (t->gens[t->ngens - 1]);
}

/*
 * Rewrite a file in place (the same inode: a sandbox's bind mount of it
 * sees the new text): the prefix given, then every CA of the session.
 */
static int
tls_write_file(const struct tls *t, const char *path, const char *pre,
    size_t prelen, char *err, size_t len)
{
	BIO	*bio;
	char	*pem;
	long	 n;
	size_t	 i;
	int	 fd, rv = -1;

	if ((bio = BIO_new(BIO_s_mem())) == NULL)
		goto fail;
	for (i = 0; i < t->ngens; i++) {
		if (PEM_write_bio_X509(bio, t->gens[i]->cert) != 1) {
			BIO_free(bio);
			goto fail;
		}
	}
	n = BIO_get_mem_data(bio, &pem);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
	    0644)) == -1) {
		snprintf(err, len, "%s: %s", path, strerror(errno));
		BIO_free(bio);
		return (-1);
	}
	if (fchmod(fd, 0644) == 0 && ftruncate(fd, 0) == 0 &&
	    (prelen == 0 || write_all(fd, pre, prelen) == 0) &&
	    (prelen == 0 || pre[prelen - 1] == '\n' ||
	    write_all(fd, "\n", 1) == 0) &&
	    write_all(fd, pem, (size_t)n) == 0)
		rv = 0;
	else
		snprintf(err, len, "%s: %s", path, strerror(errno));
	close(fd);
	BIO_free(bio);
	return (rv);
fail:
	tls_err(err, len, "cannot write the CA certificate");
	return (-1);
}

/* Write the CA certificates and the trust bundle. */
static int
tls_write_files(const struct tls *t, char *err, size_t len)
{
	if (tls_write_file(t, t->ca_path, NULL, 0, err, len) == -1 ||
	    tls_write_file(t, t->trust_path, t->system, t->system_len, err,
	    len) == -1)
		return (-1);
	return (0);
}

/* Read the system's trust bundle ($SSL_CERT_FILE first), if any. */
static void
tls_read_system(struct tls *t)
{
	const char	*path = getenv("SSL_CERT_FILE");
	struct stat	 st;
	FILE		*f;
	char		*buf;
	size_t		 n;

	if (path == NULL || *path == '\0')
		path = X509_get_default_cert_file();
	if ((f = fopen(path, "re")) == NULL)
		return;
	if (fstat(fileno(f), &st) == 0 && st.st_size > 0 &&
	    st.st_size < TLS_BUNDLE_MAX &&
	    (buf = malloc((size_t)st.st_size)) != NULL) {
		n = fread(buf, 1, (size_t)st.st_size, f);
		if (n > 0) {
			t->system = buf;
			t->system_len = n;
		} else
			free(buf);
	}
	fclose(f);
}

/* Remember a fatal alert the peer sent. */
static void
tls_info_cb(const SSL *ssl, int where, int ret)
{
	struct tls_info	*info;

	if ((where & SSL_CB_READ_ALERT) && (ret >> 8) == SSL3_AL_FATAL &&
	    (info = tls_info(ssl)) != NULL)
		info->alert = ret & 0xff;
}

/* The client's SNI must name the host the connection is for. */
static int
tls_sni_cb(SSL *ssl, int *al, void *arg)
{
	struct tls_info	*info = tls_info(ssl);
	const char	*sni = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);

	(void)arg;
	if (info == NULL || sni == NULL || strcasecmp(sni, info->host) == 0)
		return (SSL_TLSEXT_ERR_OK);
	snprintf(info->fronting, sizeof info->fronting, "%s", sni);
	*al = SSL_AD_UNRECOGNIZED_NAME;
	return (SSL_TLSEXT_ERR_ALERT_FATAL);
}

/* ALPN: http/1.1 or nothing (what is read here is HTTP/1.x). */
static int
tls_alpn_cb(SSL *ssl, const unsigned char **out, unsigned char *outlen,
    const unsigned char *in, unsigned int inlen, void *arg)
{
	unsigned int	i;

	(void)ssl; (void)arg;
	for (i = 0; i + 1 <= inlen && i + 1 + in[i] <= inlen; i += 1 + in[i]) {
		if (in[i] == 8 && memcmp(in + i + 1, "http/1.1", 8) == 0) {
			*out = in + i + 1;
			*outlen = 8;
			return (SSL_TLSEXT_ERR_OK);
		}
	}
	return (SSL_TLSEXT_ERR_NOACK);
}

/* The slot of a host's upstream session. */
static struct tls_session *
tls_session_slot(struct tls *t, const char *host)
{
	unsigned int	h = 5381;
	const char	*p;

	for (p = host; *p != '\0'; p++)
		h = h * 33 + (unsigned char)*p;
	return (&t->sessions[h % TLS_SESSIONS]);
}

/* Keep a new upstream session to resume the next connection with. */
static int
tls_new_session_cb(SSL *ssl, SSL_SESSION *sess)
{
	struct tls_info		*info = tls_info(ssl);
	struct tls_session	*s;

	if (info == NULL)
		return (0);
	s = tls_session_slot(info->tls, info->host);
	SSL_SESSION_free(s->sess);
	s->sess = sess;
	snprintf(s->host, sizeof s->host, "%s", info->host);
	return (1);
}

/* The two contexts: ending clients' TLS, and beginning it upstream. */
static int
tls_contexts(struct tls *t, char *err, size_t len)
{
	static const unsigned char	alpn[] = "\x08http/1.1";

	if ((t->server = SSL_CTX_new(TLS_server_method())) == NULL ||
	    (t->client = SSL_CTX_new(TLS_client_method())) == NULL) {
		tls_err(err, len, "cannot make a TLS context");
		return (-1);
	}
	SSL_CTX_set_min_proto_version(t->server, TLS1_2_VERSION);
	SSL_CTX_set_min_proto_version(t->client, TLS1_2_VERSION);
	SSL_CTX_set_tlsext_servername_callback(t->server, tls_sni_cb);
	SSL_CTX_set_alpn_select_cb(t->server, tls_alpn_cb, NULL);
	SSL_CTX_set_info_callback(t->server, tls_info_cb);
	SSL_CTX_set_session_id_context(t->server,
	    (const unsigned char *)"pinhole", 7);
	SSL_CTX_set_mode(t->server, SSL_MODE_RELEASE_BUFFERS);
	SSL_CTX_set_mode(t->client, SSL_MODE_RELEASE_BUFFERS);
	SSL_CTX_set_verify(t->client, SSL_VERIFY_PEER, NULL);
	SSL_CTX_set_info_callback(t->client, tls_info_cb);
	SSL_CTX_set_session_cache_mode(t->client, SSL_SESS_CACHE_CLIENT |
	    SSL_SESS_CACHE_NO_INTERNAL_STORE);
	SSL_CTX_sess_set_new_cb(t->client, tls_new_session_cb);
	if (SSL_CTX_set_default_verify_paths(t->client) != 1 ||
	    SSL_CTX_set_alpn_protos(t->client, alpn, sizeof alpn - 1) != 0) {
		tls_err(err, len, "cannot set up upstream verification");
		return (-1);
	}
	return (0);
}

/* Make the session's CA, its files and the contexts. */
struct tls *
tls_new(const char *session, const char *const *names, size_t n,
    const char *prefix, char *err, size_t len)
{
	struct tls	*t;

	if (tls_info_idx == -1 && (tls_info_idx = SSL_get_ex_new_index(0,
	    NULL, NULL, NULL, tls_info_free)) == -1) {
		tls_err(err, len, "cannot set up TLS");
		return (NULL);
	}
	if ((t = calloc(1, sizeof *t)) == NULL ||
	    (t->session = strdup(session)) == NULL ||
	    asprintf(&t->ca_path, "%s.ca.pem", prefix) == -1 ||
	    asprintf(&t->trust_path, "%s.trust.pem", prefix) == -1) {
		snprintf(err, len, "out of memory");
		if (t != NULL)
			t->ca_path = t->trust_path = NULL;
		tls_free(t);
		return (NULL);
	}
	tls_read_system(t);
	if ((t->gens[0] = tls_ca_new(session, names, n, err, len)) == NULL) {
		tls_free(t);
		return (NULL);
	}
	t->ngens = 1;
	if ((t->leaf_key = tls_key_new()) == NULL) {
		tls_err(err, len, "cannot make a key");
		tls_free(t);
		return (NULL);
	}
	if (tls_contexts(t, err, len) == -1 ||
	    tls_write_files(t, err, len) == -1) {
		tls_free(t);
		return (NULL);
	}
	return (t);
}

/* Forget the cached leaves. */
static void
tls_leaves_flush(struct tls *t)
{
	struct tls_leaf	*l, *next;
	size_t		 i;

	for (i = 0; i < TLS_BUCKETS; i++) {
		for (l = t->leaves[i]; l != NULL; l = next) {
			next = l->next;
			X509_free(l->cert);
			X509_free(l->issuer);
			free(l);
		}
		t->leaves[i] = NULL;
	}
	t->nleaves = 0;
}

/* Free everything; the files stay (their owner removes them). */
void
tls_free(struct tls *t)
{
	size_t	i;

	if (t == NULL)
		return;
	tls_leaves_flush(t);
	for (i = 0; i < t->ngens; i++)
		tls_ca_free(t->gens[i]);
	for (i = 0; i < TLS_SESSIONS; i++)
		SSL_SESSION_free(t->sessions[i].sess);
	EVP_PKEY_free(t->leaf_key);
	SSL_CTX_free(t->server);
	SSL_CTX_free(t->client);
	free(t->system);
	free(t->session);
	free(t->ca_path);
	free(t->trust_path);
	free(t);
}

/* Where the CA certificates are. */
const char *
tls_ca_path(const struct tls *t)
{
	return (t->ca_path);
}

/* Where the trust bundle (the system's and the CAs) is. */
const char *
tls_trust_path(const struct tls *t)
{
	return (t->trust_path);
}

/* Is a pattern within the names a CA may vouch for? */
static int
tls_ca_covers(const struct tls_ca *ca, const char *pat)
{
	const char	*c;
	size_t		 i, n, k;

	if (ca->names == NULL)
		return (1);
	if (strncmp(pat, "*.", 2) == 0)
		pat += 2;
	n = strlen(pat);
	for (i = 0; i < ca->nnames; i++) {
		c = ca->names[i];
		if (strncmp(c, "*.", 2) == 0)
			c += 2;
		k = strlen(c);
		if (strcmp(pat, c) == 0 || (n > k + 1 && pat[n - k - 1] == '.' &&
		    strcmp(pat + n - k, c) == 0 && strchr(c, ':') == NULL))
			return (1);
	}
	return (0);
}

/* The inspected hosts changed: a new CA when the old cannot vouch. */
int
tls_set_names(struct tls *t, const char *const *names, size_t n, char *err,
    size_t len)
{
	struct tls_ca	*ca;
	size_t		 i;

	for (i = 0; i < n && tls_ca_covers(tls_ca(t), names[i]); i++)
		;
	if (i == n && (n > 0 || tls_ca(t)->names == NULL))
		return (0);
	if ((ca = tls_ca_new(t->session, names, n, err, len)) == NULL)
		return (-1);
	if (t->ngens == TLS_GENERATIONS) {
		tls_ca_free(t->gens[0]);
		memmove(t->gens, t->gens + 1, (t->ngens - 1) * sizeof *t->gens);
		t->ngens--;
		tls_leaves_flush(t);	/* some were the dropped CA's */
	}
	t->gens[t->ngens++] = ca;
	return (tls_write_files(t, err, len));
}

/* A bucket of the leaf cache. */
static struct tls_leaf **
tls_leaf_bucket(struct tls *t, const char *host)
{
	unsigned int	h = 5381;
	const char	*p;

	for (p = host; *p != '\0'; p++)
		h = h * 33 + (unsigned char)*p;
	return (&t->leaves[h % TLS_BUCKETS]);
}

/* Make a leaf certificate for a host, signed by the newest CA. */
static X509 *
tls_leaf_make(struct tls *t, const struct host *h, char *err, size_t len)
{
	struct tls_ca	*ca = tls_ca(t);
	X509		*x;
	X509_NAME	*subj;
	char		 san[HOST_TEXT_LEN + 8];

	snprintf(san, sizeof san, "%s:%s", h->kind == HOST_NAME ? "DNS" :
	    "IP", h->text);
	if ((x = X509_new()) == NULL ||
	    X509_set_version(x, X509_VERSION_3) != 1 ||
	    tls_serial(x) == -1 ||
	    X509_gmtime_adj(X509_getm_notBefore(x), -3600) == NULL ||
	    X509_set1_notAfter(x, X509_get0_notAfter(ca->cert)) != 1 ||
	    (subj = X509_get_subject_name(x)) == NULL ||
	    X509_NAME_add_entry_by_txt(subj, "CN", MBSTRING_UTF8,
	    (const unsigned char *)h->text, -1, -1, 0) != 1 ||
	    X509_set_issuer_name(x, X509_get_subject_name(ca->cert)) != 1 ||
	    X509_set_pubkey(x, t->leaf_key) != 1 ||
	    tls_ext(x, ca->cert, NID_basic_constraints, "critical,CA:FALSE") ==
	    -1 || tls_ext(x, ca->cert, NID_key_usage,
	    "critical,digitalSignature") == -1 ||
	    tls_ext(x, ca->cert, NID_ext_key_usage, "serverAuth") == -1 ||
	    tls_ext(x, ca->cert, NID_subject_alt_name, san) == -1 ||
	    tls_ext(x, ca->cert, NID_authority_key_identifier, "keyid") == -1 ||
	    X509_sign(x, ca->key, EVP_sha256()) == 0) {
		tls_err(err, len, "cannot make a certificate");
		X509_free(x);
		return (NULL);
	}
	return (x);
}

/* The leaf for a host, from the cache or made now. */
static struct tls_leaf *
tls_leaf(struct tls *t, const struct host *h, char *err, size_t len)
{
	struct tls_leaf	**b, *l;

	for (l = *tls_leaf_bucket(t, h->text); l != NULL; l = l->next) {
		if (strcmp(l->host, h->text) == 0)
			return (l);
	}
	if (t->nleaves >= TLS_LEAVES)
		tls_leaves_flush(t);
	if ((l = calloc(1, sizeof *l)) == NULL) {
		snprintf(err, len, "out of memory");
		return (NULL);
	}
	if ((l->cert = tls_leaf_make(t, h, err, len)) == NULL) {
		free(l);
		return (NULL);
	}
	l->issuer = tls_ca(t)->cert;
	X509_up_ref(l->issuer);
	snprintf(l->host, sizeof l->host, "%s", h->text);
	b = tls_leaf_bucket(t, h->text);
	l->next = *b;
	*b = l;
	t->nleaves++;
	return (l);
}

/* An SSL object of a context with our info on it. */
static SSL *
tls_ssl_new(struct tls *t, SSL_CTX *ctx, const struct host *h, char *err,
    size_t len)
{
	struct tls_info	*info;
	SSL		*ssl;

	if ((ssl = SSL_new(ctx)) == NULL || (info = calloc(1,
	    sizeof *info)) == NULL) {
		SSL_free(ssl);
		tls_err(err, len, "out of memory");
		return (NULL);
	}
	info->tls = t;
	info->alert = -1;
	info->is_name = h->kind == HOST_NAME;
	snprintf(info->host, sizeof info->host, "%s", h->text);
	if (SSL_set_ex_data(ssl, tls_info_idx, info) != 1) {
		free(info);
		SSL_free(ssl);
		tls_err(err, len, "out of memory");
		return (NULL);
	}
	return (ssl);
}

/* An SSL object to end a client's TLS for host. */
SSL *
tls_accept_new(struct tls *t, const struct host *h, char *err, size_t len)
{
	struct tls_leaf	*l;
	SSL		*ssl;

	if ((l = tls_leaf(t, h, err, len)) == NULL ||
	    (ssl = tls_ssl_new(t, t->server, h, err, len)) == NULL)
		return (NULL);
	if (SSL_use_certificate(ssl, l->cert) != 1 ||
	    SSL_use_PrivateKey(ssl, t->leaf_key) != 1 ||
	    SSL_add1_chain_cert(ssl, l->issuer) != 1) {
		tls_err(err, len, "cannot use the certificate");
		SSL_free(ssl);
		return (NULL);
	}
	SSL_set_accept_state(ssl);
	return (ssl);
}

/* An SSL object to begin TLS with host's server, verified. */
SSL *
tls_connect_new(struct tls *t, const struct host *h, char *err, size_t len)
{
	struct tls_session	*s;
	SSL			*ssl;
	int			 ok;

	if ((ssl = tls_ssl_new(t, t->client, h, err, len)) == NULL)
		return (NULL);
	if (h->kind == HOST_NAME)
		ok = SSL_set1_host(ssl, h->text) == 1 &&
		    SSL_set_tlsext_host_name(ssl, h->text) == 1;
	else
		ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl),
		    h->text) == 1;
	if (!ok) {
		tls_err(err, len, "cannot set the name to verify");
		SSL_free(ssl);
		return (NULL);
	}
	s = tls_session_slot(t, h->text);
	if (s->sess != NULL && strcmp(s->host, h->text) == 0)
		SSL_set_session(ssl, s->sess);
	SSL_set_connect_state(ssl);
	return (ssl);
}

/* Why a handshake failed, in words. */
void
tls_error_text(SSL *ssl, int upstream, char *buf, size_t len)
{
	struct tls_info	*info = tls_info(ssl);
	long		 vr;

	if (upstream && ssl != NULL &&
	    (vr = SSL_get_verify_result(ssl)) != X509_V_OK) {
		snprintf(buf, len, "the upstream certificate is refused: %s",
		    X509_verify_cert_error_string(vr));
		return;
	}
	if (info != NULL && info->fronting[0] != '\0') {
		snprintf(buf, len, "the TLS server name is %s, not %s",
		    info->fronting, info->host);
		return;
	}
	if (info != NULL && info->alert != -1) {
		snprintf(buf, len, "%s sent the alert \"%s\"", upstream ?
		    "the upstream server" : "the client",
		    SSL_alert_desc_string_long(info->alert));
		return;
	}
	snprintf(buf, len, "the TLS handshake %s failed", upstream ?
	    "with the upstream server" : "with the client");
}

/* The name a client's SNI gave when it was not the host's, or NULL. */
const char *
tls_fronting(SSL *ssl)
{
	struct tls_info	*info = tls_info(ssl);

	return (info != NULL && info->fronting[0] != '\0' ? info->fronting :
	    NULL);
}

/* Did the client refuse our certificate? */
int
tls_client_rejected(SSL *ssl)
{
	struct tls_info	*info = tls_info(ssl);

	if (info == NULL)
		return (0);
	switch (info->alert) {
	case SSL_AD_BAD_CERTIFICATE:
	case SSL_AD_UNSUPPORTED_CERTIFICATE:
	case SSL_AD_CERTIFICATE_REVOKED:
	case SSL_AD_CERTIFICATE_EXPIRED:
	case SSL_AD_CERTIFICATE_UNKNOWN:
	case SSL_AD_UNKNOWN_CA:
	case SSL_AD_ACCESS_DENIED:
		return (1);
	}
	return (0);
}
