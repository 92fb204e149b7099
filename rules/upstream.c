/*
 * The upstream proxy a policy names: its URL read strictly, what each
 * load says of it merged into the policy (a later layer's upstream
 * replaces an earlier one's, and credentials never pass to an upstream
 * other than the one they were given for), and the hosts dialed
 * directly.  Pure: no file is read here.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "rules/rules-int.h"

/* Read "HOST:PORT" of len bytes: a name, an IPv4 address or "[V6]". */
static int
upstream_hostport(const char *s, size_t len, struct host *h, uint16_t *port,
    const char **errstr)
{
	const char	*colon, *host = s;
	size_t		 hlen;

	if ((colon = memrchr(s, ':', len)) == NULL) {
		*errstr = "give the port: http://HOST:PORT";
		return (-1);
	}
	if (port_parse(colon + 1, len - (colon + 1 - s), port) == -1) {
		*errstr = "the port must be a number from 1 to 65535";
		return (-1);
	}
	hlen = colon - s;
	if (hlen >= 2 && s[0] == '[' && s[hlen - 1] == ']') {
		host++;
		hlen -= 2;
		if (!host_is_v6_text(host, hlen)) {
			*errstr = "brackets are only for IPv6 addresses";
			return (-1);
		}
	} else if (memchr(s, ':', hlen) != NULL) {
		*errstr = "an IPv6 address goes in brackets: http://[ADDR]:PORT";
		return (-1);
	}
	if (hlen == 0 || host_parse(host, hlen, h, errstr) == -1) {
		if (hlen == 0)
			*errstr = "no host";
		return (-1);
	}
	return (0);
}

/* Read an upstream proxy's URL: "http://HOST:PORT", a "/" after it. */
int
rules_upstream_parse(const char *url, struct host *h, uint16_t *port,
    const char **errstr)
{
	const char	*s = url, *end;
	size_t		 len;

	if (strncmp(s, "https://", 8) == 0) {
		*errstr = "TLS to the upstream proxy is not supported: give "
		    "http://HOST:PORT (CONNECT still carries TLS end to end)";
		return (-1);
	}
	if (strncmp(s, "http://", 7) != 0) {
		*errstr = "give http://HOST:PORT";
		return (-1);
	}
	s += 7;
	len = strlen(s);
	if (len > 0 && s[len - 1] == '/')
		len--;
	end = s + len;
	if (memchr(s, '@', len) != NULL) {
		*errstr = "no credentials in the URL (they would show in ps "
		    "and in logs): give them in a file, upstream-auth FILE";
		return (-1);
	}
	if (memchr(s, '/', len) != NULL || memchr(s, '?', len) != NULL ||
	    memchr(s, '#', len) != NULL) {
		*errstr = "a proxy's URL has no path: http://HOST:PORT";
		return (-1);
	}
	return (upstream_hostport(s, end - s, h, port, errstr));
}

/*
 * Put what a load said of the upstream in force: its upstream (or its
 * "upstream none") replaces the policy's; credentials given before stay
 * only with the same upstream, those of this load go with the one in
 * force.
 */
void
rules_upstream_merge(struct rules *r, const struct upstream_load *u)
{
	struct hostlist	**tail;
	int		  same;

	if (u->set) {
		same = u->up.url != NULL && r->upstream.url != NULL &&
		    r->upstream.port == u->up.port &&
		    strcmp(r->upstream.host, u->up.host) == 0;
		if (!same) {
			r->upstream.auth = NULL;
			r->upstream.auth_origin = NULL;
		}
		r->upstream.url = u->up.url;
		r->upstream.host = u->up.host;
		r->upstream.port = u->up.port;
		r->upstream.origin = u->up.origin;
		if (u->up.url == NULL) {
			r->upstream.auth = NULL;
			r->upstream.auth_origin = NULL;
		}
	}
	if (u->auth != NULL) {
		r->upstream.auth = u->auth;
		r->upstream.auth_origin = u->auth_origin;
	}
	for (tail = &r->direct; *tail != NULL; tail = &(*tail)->next)
		;
	*tail = u->direct;
}

/* The upstream proxy, or NULL when connections are dialed directly. */
const struct rules_upstream *
rules_upstream(const struct rules *r)
{
	if (r == NULL || r->upstream.url == NULL)
		return (NULL);
	return (&r->upstream);
}

/* Credentials given with no upstream to go to, or NULL. */
const char *
rules_upstream_auth(const struct rules *r)
{
	return (r->upstream.url == NULL ? r->upstream.auth : NULL);
}

/* Is this host dialed directly, past the upstream (no-upstream)? */
int
rules_no_upstream(const struct rules *r, const struct host *h)
{
	const struct hostlist	*l;
	size_t			 i;

	for (l = r->direct; l != NULL; l = l->next) {
		for (i = 0; i < l->n; i++) {
			if (rules_spec_covers(&l->hosts[i], h))
				return (1);
		}
	}
	return (0);
}

/* The no-upstream patterns, as written back; stores at most max. */
size_t
rules_no_upstream_list(const struct rules *r, const char **out, size_t max)
{
	const struct hostlist	*l;
	size_t			 i, n = 0;

	for (l = r->direct; l != NULL; l = l->next) {
		for (i = 0; i < l->n; i++, n++) {
			if (n < max)
				out[n] = l->patterns[i];
		}
	}
	return (n);
}
