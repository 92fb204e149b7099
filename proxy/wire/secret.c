/*
 * Placeholders for secrets, found and put back: see secret.h.
 */
#include "config.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proxy/wire/secret.h"

#define PREFIX_LEN	(sizeof SECRET_PREFIX - 1)
#define SUFFIX_LEN	(sizeof SECRET_SUFFIX - 1)

/* A growing output buffer. */
struct sbuf {
	char	*p;
	size_t	 len;
	size_t	 cap;
};

/* Is c a character of a secret's name? */
static int
secret_name_char(int c)
{
	return (isalnum((unsigned char)c) || c == '_');
}

/* The placeholder for a name. */
int
secret_placeholder(const char *name, char *buf, size_t len)
{
	size_t	i, n = strlen(name);

	if (n == 0 || n > SECRET_NAME_MAX || isdigit((unsigned char)name[0]))
		return (-1);
	for (i = 0; i < n; i++) {
		if (!secret_name_char(name[i]))
			return (-1);
	}
	if ((size_t)snprintf(buf, len, "%s%s%s", SECRET_PREFIX, name,
	    SECRET_SUFFIX) >= len)
		return (-1);
	return ((int)(PREFIX_LEN + n + SUFFIX_LEN));
}

/* Find the first placeholder, or the prefix of one, in any case. */
const char *
secret_find(const char *s, size_t len, const char **name, size_t *namelen,
    size_t *plen)
{
	const char	*p, *end = s + len;
	size_t		 n;

	for (p = s; (size_t)(end - p) >= PREFIX_LEN; p++) {
		if ((*p != 'P' && *p != 'p') ||
		    strncasecmp(p, SECRET_PREFIX, PREFIX_LEN) != 0)
			continue;
		*name = p + PREFIX_LEN;
		for (n = 0; *name + n < end && secret_name_char((*name)[n]);
		    n++)
			;
		if (n > 0 && n <= SECRET_NAME_MAX &&
		    (size_t)(end - (*name + n)) >= SUFFIX_LEN &&
		    memcmp(*name + n, SECRET_SUFFIX, SUFFIX_LEN) == 0 &&
		    memcmp(p, SECRET_PREFIX, PREFIX_LEN) == 0) {
			*namelen = n;
			*plen = PREFIX_LEN + n + SUFFIX_LEN;
		} else {
			*namelen = 0;
			*plen = PREFIX_LEN;
		}
		return (p);
	}
	return (NULL);
}

/* Append n bytes.  Returns 0, or -1 out of memory. */
static int
sbuf_add(struct sbuf *b, const void *p, size_t n)
{
	char	*np;
	size_t	 cap;

	if (b->len + n + 1 > b->cap) {
		cap = (b->len + n + 1) * 2;
		if ((np = realloc(b->p, cap)) == NULL)
			return (-1);
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = '\0';
	return (0);
}

/* Copy a placeholder's name into bad, for the refusal. */
static int
secret_bad(const char *name, size_t n, char *bad, size_t badlen)
{
	snprintf(bad, badlen, "%.*s", (int)n, name);
	return (-1);
}

/* Put back every placeholder of s into b.  1 changed, 0 none, -1, -2. */
static int
secret_swap_plain(const char *s, size_t len, secret_lookup_fn lookup,
    void *arg, struct sbuf *b, char *bad, size_t badlen)
{
	const char	*p, *name, *val;
	size_t		 pos = 0, nlen, plen, vlen;
	int		 changed = 0;

	while ((p = secret_find(s + pos, len - pos, &name, &nlen,
	    &plen)) != NULL) {
		if (nlen == 0 || (val = lookup(arg, name, nlen, &vlen)) == NULL)
			return (secret_bad(name, nlen, bad, badlen));
		if (sbuf_add(b, s + pos, (size_t)(p - (s + pos))) == -1 ||
		    sbuf_add(b, val, vlen) == -1)
			return (-2);
		pos = (size_t)(p - s) + plen;
		changed = 1;
	}
	if (changed && sbuf_add(b, s + pos, len - pos) == -1)
		return (-2);
	return (changed);
}

static const char b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* One base64 digit's value, or -1. */
static int
b64_value(int c)
{
	const char	*p;

	if (c == '\0' || (p = strchr(b64, c)) == NULL)
		return (-1);
	return ((int)(p - b64));
}

/*
 * Decode padded base64 (as Basic credentials are) into out, which holds
 * at least len bytes.  Returns the length, or -1 for anything else.
 */
static long
b64_decode(const char *s, size_t len, unsigned char *out)
{
	size_t		i, n = 0;
	int		v[4], k, pad;

	if (len == 0 || len % 4 != 0)
		return (-1);
	for (i = 0; i < len; i += 4) {
		pad = 0;
		for (k = 0; k < 4; k++) {
			if (s[i + k] == '=' && i + 4 == len && k >= 2 &&
			    (k == 3 || s[i + 3] == '=')) {
				v[k] = 0;
				pad++;
			} else if ((v[k] = b64_value(s[i + k])) == -1)
				return (-1);
		}
		out[n++] = (unsigned char)(v[0] << 2 | v[1] >> 4);
		if (pad < 2)
			out[n++] = (unsigned char)((v[1] & 15) << 4 | v[2] >> 2);
		if (pad < 1)
			out[n++] = (unsigned char)((v[2] & 3) << 6 | v[3]);
	}
	return ((long)n);
}

/* Encode n bytes as padded base64 onto b. */
static int
b64_encode(struct sbuf *b, const unsigned char *p, size_t n)
{
	char		q[4];
	uint32_t	w;
	size_t		i;

	for (i = 0; i < n; i += 3) {
		w = (uint32_t)p[i] << 16;
		if (i + 1 < n)
			w |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < n)
			w |= p[i + 2];
		q[0] = b64[w >> 18 & 63];
		q[1] = b64[w >> 12 & 63];
		q[2] = i + 1 < n ? b64[w >> 6 & 63] : '=';
		q[3] = i + 2 < n ? b64[w & 63] : '=';
		if (sbuf_add(b, q, 4) == -1)
			return (-1);
	}
	return (0);
}

/* Basic credentials: put back what the decoded user:password holds. */
static int
secret_swap_basic(const char *s, size_t len, secret_lookup_fn lookup,
    void *arg, struct sbuf *b, char *bad, size_t badlen)
{
	struct sbuf	 plain = { NULL, 0, 0 };
	unsigned char	*dec;
	size_t		 skip = 6;
	long		 n;
	int		 rv;

	if (len <= skip || strncasecmp(s, "Basic ", skip) != 0)
		return (0);
	while (skip < len && s[skip] == ' ')
		skip++;
	if ((dec = malloc(len)) == NULL)
		return (-2);
	if ((n = b64_decode(s + skip, len - skip, dec)) == -1) {
		free(dec);
		return (0);
	}
	rv = secret_swap_plain((const char *)dec, (size_t)n, lookup, arg,
	    &plain, bad, badlen);
	free(dec);
	if (rv == 1 && (sbuf_add(b, s, skip) == -1 ||
	    b64_encode(b, (unsigned char *)plain.p, plain.len) == -1))
		rv = -2;
	free(plain.p);
	return (rv);
}

/* One header value with its placeholders put back. */
int
secret_swap(const char *s, size_t len, secret_lookup_fn lookup, void *arg,
    char **out, size_t *outlen, char *bad, size_t badlen)
{
	struct sbuf	 plain = { NULL, 0, 0 }, basic = { NULL, 0, 0 };
	struct sbuf	*done;
	int		 rv, rvb;

	*out = NULL;
	*outlen = 0;
	rv = secret_swap_plain(s, len, lookup, arg, &plain, bad, badlen);
	if (rv >= 0) {
		rvb = rv == 1 ? secret_swap_basic(plain.p, plain.len, lookup,
		    arg, &basic, bad, badlen) : secret_swap_basic(s, len,
		    lookup, arg, &basic, bad, badlen);
		rv = rvb < 0 ? rvb : (rv | rvb);
	}
	if (rv != 1) {
		free(plain.p);
		free(basic.p);
		return (rv);
	}
	done = basic.p != NULL ? &basic : &plain;
	if (done == &basic)
		free(plain.p);
	*out = done->p;
	*outlen = done->len;
	return (1);
}
