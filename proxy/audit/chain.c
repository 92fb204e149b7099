/*
 * The audit chain: each line's "chain" is H(previous chain || the line's
 * bytes up to ,"chain"), H being SHA-256, or HMAC-SHA-256 with a key
 * (docs/audit-log.md, "The chain").  The hash functions and the reader of
 * a line's chain fields are shared by the writer and by
 * `pinhole log verify`.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>

#include "proxy/audit/chain.h"

struct audit_hash {
	EVP_MD		*md;
	EVP_MD_CTX	*dctx;
	EVP_MAC		*mac;
	EVP_MAC_CTX	*mctx;
};

/* Make a hasher: SHA-256, or HMAC-SHA-256 when a key is given. */
struct audit_hash *
audit_hash_create(const unsigned char *key, size_t keylen)
{
	struct audit_hash	*h;
	OSSL_PARAM		 params[2];

	if ((h = calloc(1, sizeof *h)) == NULL)
		return (NULL);
	if (keylen == 0) {
		if ((h->md = EVP_MD_fetch(NULL, "SHA256", NULL)) == NULL ||
		    (h->dctx = EVP_MD_CTX_new()) == NULL)
			goto fail;
		return (h);
	}
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
	    (char *)"SHA256", 0);
	params[1] = OSSL_PARAM_construct_end();
	if ((h->mac = EVP_MAC_fetch(NULL, "HMAC", NULL)) == NULL ||
	    (h->mctx = EVP_MAC_CTX_new(h->mac)) == NULL ||
	    !EVP_MAC_init(h->mctx, key, keylen, params))
		goto fail;
	return (h);

fail:
	audit_hash_free(h);
	return (NULL);
}

/* Free a hasher. */
void
audit_hash_free(struct audit_hash *h)
{
	if (h == NULL)
		return;
	EVP_MD_CTX_free(h->dctx);
	EVP_MD_free(h->md);
	EVP_MAC_CTX_free(h->mctx);
	EVP_MAC_free(h->mac);
	free(h);
}

/* Hash prev (if any) then data into out. */
static int
audit_hash_run(struct audit_hash *h, const unsigned char *prev,
    const void *data, size_t len, unsigned char *out)
{
	unsigned int	n;
	size_t		outl;

	if (h->mctx != NULL) {
		if (!EVP_MAC_init(h->mctx, NULL, 0, NULL) ||
		    (prev != NULL &&
		    !EVP_MAC_update(h->mctx, prev, AUDIT_HASH_LEN)) ||
		    !EVP_MAC_update(h->mctx, data, len) ||
		    !EVP_MAC_final(h->mctx, out, &outl, AUDIT_HASH_LEN))
			return (-1);
		return (outl == AUDIT_HASH_LEN ? 0 : -1);
	}
	if (!EVP_DigestInit_ex(h->dctx, h->md, NULL) ||
	    (prev != NULL && !EVP_DigestUpdate(h->dctx, prev, AUDIT_HASH_LEN)) ||
	    !EVP_DigestUpdate(h->dctx, data, len) ||
	    !EVP_DigestFinal_ex(h->dctx, out, &n))
		return (-1);
	return (n == AUDIT_HASH_LEN ? 0 : -1);
}

/* Give chain_0, the value before the first line: H("pinhole-audit-v1"). */
int
audit_hash_seed(struct audit_hash *h, unsigned char *out)
{
	return (audit_hash_run(h, NULL, AUDIT_SEED, strlen(AUDIT_SEED), out));
}

/* Give the chain value of a line from the one before it. */
int
audit_hash_step(struct audit_hash *h, const unsigned char *prev,
    const char *line, size_t len, unsigned char *out)
{
	return (audit_hash_run(h, prev, line, len, out));
}

/* Write a hash as 64 lower-case hex digits and a NUL. */
void
audit_hex(const unsigned char *hash, char *out)
{
	static const char	digits[] = "0123456789abcdef";
	size_t			i;

	for (i = 0; i < AUDIT_HASH_LEN; i++) {
		out[2 * i] = digits[hash[i] >> 4];
		out[2 * i + 1] = digits[hash[i] & 0xf];
	}
	out[AUDIT_HEX_LEN] = '\0';
}

/* Read 64 lower-case hex digits into a hash. */
int
audit_unhex(const char *s, size_t len, unsigned char *out)
{
	size_t	i;
	int	hi = 0, lo;

	if (len != AUDIT_HEX_LEN)
		return (-1);
	for (i = 0; i < AUDIT_HEX_LEN; i++) {
		if (s[i] >= '0' && s[i] <= '9')
			lo = s[i] - '0';
		else if (s[i] >= 'a' && s[i] <= 'f')
			lo = s[i] - 'a' + 10;
		else
			return (-1);
		if (i % 2 == 0)
			hi = lo;
		else
			out[i / 2] = (hi << 4) | lo;
	}
	return (0);
}

/* Read a key file whole: at least 16 bytes, at most AUDIT_KEY_MAX. */
int
audit_read_key(const char *path, unsigned char *key, size_t *keylen,
    char *err, size_t errlen)
{
	ssize_t	n;
	size_t	len = 0;
	int	fd, rv = -1;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (-1);
	}
	while (len < AUDIT_KEY_MAX &&
	    (n = read(fd, key + len, AUDIT_KEY_MAX - len)) > 0)
		len += n;
	if (len < 16)
		snprintf(err, errlen, "%s: key too short (%zu bytes; make one "
		    "with 'openssl rand -hex 32 > %s')", path, len, path);
	else if (len == AUDIT_KEY_MAX && read(fd, key, 1) > 0)
		snprintf(err, errlen, "%s: key too long (more than %d bytes)",
		    path, AUDIT_KEY_MAX);
	else {
		*keylen = len;
		rv = 0;
	}
	close(fd);
	return (rv);
}

/* Strip a literal suffix from the end of s..*len. */
static int
audit_strip(const char *s, size_t *len, const char *suffix)
{
	size_t	n = strlen(suffix);

	if (*len < n || memcmp(s + *len - n, suffix, n) != 0)
		return (-1);
	*len -= n;
	return (0);
}

/* Take 64 hex digits from the end of s..*len. */
static int
audit_strip_hex(const char *s, size_t *len, unsigned char *out)
{
	if (*len < AUDIT_HEX_LEN ||
	    audit_unhex(s + *len - AUDIT_HEX_LEN, AUDIT_HEX_LEN, out) == -1)
		return (-1);
	*len -= AUDIT_HEX_LEN;
	return (0);
}

/* Take a decimal number (no leading zero, at most 19 digits) from the end. */
static int
audit_strip_seq(const char *s, size_t *len, unsigned long long *seq)
{
	size_t	end = *len, start = *len;

	while (start > 0 && s[start - 1] >= '0' && s[start - 1] <= '9')
		start--;
	if (start == end || end - start > 19 ||
	    (s[start] == '0' && end - start > 1))
		return (-1);
	*seq = strtoull(s + start, NULL, 10);
	*len = start;
	return (0);
}

/*
 * Read the chain fields from the end of a line (without its newline):
 * [,"prev_chain":"HEX"],"seq":N,"chain":"HEX"}.  Says where the hashed
 * bytes end.  The rest of the line is not looked at.
 */
int
audit_link_parse(const char *line, size_t len, struct audit_link *lk)
{
	size_t	n;

	memset(lk, 0, sizeof *lk);
	if (audit_strip(line, &len, "\"}") == -1 ||
	    audit_strip_hex(line, &len, lk->chain) == -1 ||
	    audit_strip(line, &len, ",\"chain\":\"") == -1)
		return (-1);
	lk->hashed = len;
	if (audit_strip_seq(line, &len, &lk->seq) == -1 ||
	    audit_strip(line, &len, ",\"seq\":") == -1 || lk->seq == 0)
		return (-1);
	n = len;
	if (audit_strip(line, &n, "\"") == 0 &&
	    audit_strip_hex(line, &n, lk->prev) == 0 &&
	    audit_strip(line, &n, ",\"prev_chain\":\"") == 0)
		lk->has_prev = 1;
	else
		memset(lk->prev, 0, sizeof lk->prev);
	return (len > 0 && line[0] == '{' ? 0 : -1);
}
