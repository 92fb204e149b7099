/*
 * A host written as a URL ("https://pypi.org", "pypi.org/simple",
 * "http://x:8080/path") where a rule or a command takes a host: said
 * back as the host (and port) to write instead, and the path as the
 * constraint it would be.  Pure.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "rules/rules-int.h"

#define URL_PATH_MAX	200		/* longest path said back */

/* The length of a URL's "SCHEME://" at the start of s, or 0. */
static size_t
url_scheme(const char *s, size_t n)
{
	size_t	i;

	if (n == 0 || !isalpha((unsigned char)s[0]))
		return (0);
	for (i = 1; i < n && (isalnum((unsigned char)s[i]) ||
	    strchr("+.-", s[i]) != NULL); i++)
		;
	if (n - i >= 3 && memcmp(s + i, "://", 3) == 0)
		return (i + 3);
	return (0);
}

/* May a URL's path be said back: a path's characters only, and short? */
static int
url_path_ok(const char *s, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (!isalnum((unsigned char)s[i]) &&
		    strchr("-._~!$&'()*+,;=:@%/", s[i]) == NULL)
			return (0);
	}
	return (n > 0 && n <= URL_PATH_MAX);
}

/* A URL's parts: the host (as written), its port, its path. */
struct url_parts {
	const char	*host;
	size_t		 hlen;
	const char	*port;		/* NULL: none */
	size_t		 plen;
	const char	*path;
	size_t		 pathlen;
};

/* Split "[USER@]HOST[:PORT]" of n bytes; -1 when it is none. */
static int
url_authority(const char *a, size_t n, struct url_parts *u)
{
	const char	*at, *close, *colon;

	for (at = a + n; at > a && at[-1] != '@'; at--)
		;
	n -= (size_t)(at - a);
	a = at;
	u->host = a;
	u->port = NULL;
	if (n > 0 && a[0] == '[') {
		if ((close = memchr(a, ']', n)) == NULL)
			return (-1);
		u->host = a + 1;
		u->hlen = (size_t)(close - a - 1);
		colon = close + 1 < a + n ? close + 1 : NULL;
		if (colon != NULL && *colon != ':')
			return (-1);
	} else {
		colon = memchr(a, ':', n);
		if (colon != NULL && memchr(colon + 1, ':', n - (size_t)(colon -
		    a) - 1) != NULL)
			colon = NULL;		/* a bare IPv6 address */
		u->hlen = colon != NULL ? (size_t)(colon - a) : n;
	}
	if (colon != NULL && colon + 1 < a + n) {
		u->port = colon + 1;
		u->plen = (size_t)(a + n - colon - 1);
	}
	return (0);
}

/* Write what to write instead of the URL, its parts read. */
static void
url_say(const struct url_parts *u, const struct host *h, int wild,
    const char *kw, char *buf, size_t size)
{
	const char	*v6 = h->kind == HOST_IPV6 ? "[" : "";
	char		 target[HOST_TEXT_LEN + 16];
	size_t		 plen = u->pathlen;
	int		 n;

	snprintf(target, sizeof target, "%s%s%s%s%s%.*s", wild ? "*." : "",
	    v6, h->text, v6[0] != '\0' ? "]" : "", u->port != NULL ? ":" : "",
	    u->port != NULL ? (int)u->plen : 0, u->port != NULL ? u->port : "");
	n = snprintf(buf, size, "write the host, not a URL: %s%s%s",
	    kw != NULL ? kw : "", kw != NULL ? " " : "", target);
	while (plen > 0 && u->path[plen - 1] == '/')
		plen--;
	if (n < 0 || (size_t)n >= size || !url_path_ok(u->path, plen) ||
	    (kw != NULL && strcmp(kw, "allow") != 0))
		return;
	if (kw != NULL)
		snprintf(buf + n, size - n, " (a path goes on the rule as a "
		    "constraint: allow %s path %.*s/**)", target, (int)plen,
		    u->path);
	else
		snprintf(buf + n, size - n, " (paths go in 'path %.*s/**' on "
		    "an allow rule)", (int)plen, u->path);
}

/*
 * Is s (n bytes) a host written as a URL: "SCHEME://HOST[:PORT][/PATH]",
 * or "NAME[:PORT]/PATH" (not ADDRESS/LEN, nor NAME/LEN)?  Then write to
 * buf what to write instead, "write the host, not a URL: KW HOST[:PORT]"
 * (and, when kw is NULL or "allow", where the path goes), and return 1.
 * 0 when it is not one.
 */
int
host_url_hint(const char *s, size_t n, const char *kw, char *buf,
    size_t size)
{
	struct url_parts	 u;
	struct host		 h;
	const char		*errstr, *end = s + n, *a;
	size_t			 sch = url_scheme(s, n), alen;
	uint16_t		 port;
	int			 wild;

	a = s + sch;
	for (alen = 0; a + alen < end && strchr("/?#", a[alen]) == NULL;
	    alen++)
		;
	if (sch == 0 && (a + alen == end || a[alen] != '/' ||
	    strspn(a + alen + 1, "0123456789") == (size_t)(end - a - alen - 1)))
		return (0);		/* no path, or NAME/LEN */
	if (url_authority(a, alen, &u) == -1)
		return (0);
	u.path = a + alen;
	for (u.pathlen = 0; u.path + u.pathlen < end &&
	    strchr("?#", u.path[u.pathlen]) == NULL; u.pathlen++)
		;
	wild = u.hlen > 2 && u.host[0] == '*' && u.host[1] == '.';
	if (wild) {
		u.host += 2;
		u.hlen -= 2;
	}
	if (host_parse(u.host, u.hlen, &h, &errstr) == -1 ||
	    ((sch == 0 || wild) && h.kind != HOST_NAME) ||
	    (u.port != NULL && port_parse(u.port, u.plen, &port) == -1))
		return (0);
	url_say(&u, &h, wild, kw, buf, size);
	return (1);
}
