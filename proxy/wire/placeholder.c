/*
 * Placeholders for secrets, found and put back: see placeholder.h.
 */
#include "config.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/base64.h"
#include "proxy/wire/placeholder.h"

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

/* Basic credentials: put back what the decoded user:password holds. */
static int
secret_swap_basic(const char *s, size_t len, secret_lookup_fn lookup,
    void *arg, struct sbuf *b, char *bad, size_t badlen)
{
	struct sbuf	 plain = { NULL, 0, 0 };
	unsigned char	*dec;
	char		*enc;
	size_t		 skip = 6;
	long		 n;
	int		 rv;

	if (len <= skip || strncasecmp(s, "Basic ", skip) != 0)
		return (0);
	while (skip < len && s[skip] == ' ')
		skip++;
	if ((dec = malloc(len)) == NULL)
		return (-2);
	if ((n = base64_decode(s + skip, len - skip, dec)) == -1) {
		free(dec);
		return (0);
	}
	rv = secret_swap_plain((const char *)dec, (size_t)n, lookup, arg,
	    &plain, bad, badlen);
	free(dec);
	if (rv == 1 && (enc = malloc(BASE64_LEN(plain.len) + 1)) == NULL)
		rv = -2;
	else if (rv == 1) {
		base64_encode(plain.p, plain.len, enc);
		if (sbuf_add(b, s, skip) == -1 ||
		    sbuf_add(b, enc, BASE64_LEN(plain.len)) == -1)
			rv = -2;
		free(enc);
	}
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
