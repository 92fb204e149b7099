/*
 * Secrets in requests: a request that carries a placeholder has the real
 * value put back in the headers the secret is for (Authorization and
 * Proxy-Authorization unless the policy names others) when it goes,
 * decrypted here, to a host the secret is for; anywhere else (another
 * header, another host, a connection in clear, the request line, a
 * TRACE, an upgrade whose tunnel no scrubber reads) it is refused as an
 * exfiltration attempt.  Bodies are not looked at: a placeholder there
 * goes as it is.  The value is never logged.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/bufferevent.h>

#include "proxy/conn/conn-int.h"
#include "proxy/wire/http.h"
#include "proxy/wire/placeholder.h"
#include "rules/rules.h"

/* One header's swap: where, and why a placeholder may not go there. */
struct conn_swap {
	struct conn			*c;
	const struct http_header	*hd;
	char				 why[256];
	char				 name[SECRET_NAME_MAX + 1];
};

/* May the secret go in this header (one of its header words)? */
static int
conn_secret_header(const struct rules_secret *rs, const struct http_str *h,
    char *why, size_t len)
{
	const char *const	*names;
	size_t			 i, n, k = 0;

	n = rules_secret_headers(rs, &names);
	for (i = 0; i < n; i++) {
		if (http_str_eq(h, names[i]))
			return (1);
	}
	k = (size_t)snprintf(why, len, "it may go only in the header%s ",
	    n > 1 ? "s" : "");
	for (i = 0; i < n && k < len; i++)
		k += (size_t)snprintf(why + k, len - k, "%s%s", i > 0 ? ", " :
		    "", names[i]);
	return (0);
}

/* The value a placeholder stands for, when it may go in this header. */
static const char *
conn_secret_lookup(void *arg, const char *name, size_t len, size_t *vlen)
{
	struct conn_swap		*sw = arg;
	struct conn			*c = sw->c;
	const struct conn_secret	*s;
	size_t				 i;

	snprintf(sw->name, sizeof sw->name, "%.*s", (int)len, name);
	for (i = 0; i < c->set->nsecrets; i++) {
		s = &c->set->secrets[i];
		if (strlen(s->rule->name) != len ||
		    memcmp(s->rule->name, name, len) != 0)
			continue;
		/* A hop-by-hop header stays here: only its name matters. */
		if (sw->hd->hop && conn_secret_header(s->rule, &sw->hd->name,
		    sw->why, sizeof sw->why)) {
			*vlen = 0;
			return ("");
		}
		if (!c->client_tls)
			snprintf(sw->why, sizeof sw->why, "it may go only "
			    "inside TLS the gateway inspects");
		else if (!rules_secret_for(s->rule, &c->host))
			snprintf(sw->why, sizeof sw->why, "it may go only to "
			    "the hosts the secret is for");
		else if (!conn_secret_header(s->rule, &sw->hd->name, sw->why,
		    sizeof sw->why))
			;
		else if (s->value == NULL)
			snprintf(sw->why, sizeof sw->why, "its value could not "
			    "be read when the policy was loaded");
		else {
			*vlen = s->len;
			return (s->value);
		}
		return (NULL);
	}
	snprintf(sw->why, sizeof sw->why, "the policy has no such secret");
	return (NULL);
}

/* Refuse a request carrying a placeholder where it may not go. */
static int
conn_secret_refuse(struct conn *c, const char *name, const char *where,
    const char *may)
{
	char	why[512];

	conn_note_set(c, "secret %s in %s",
	    name[0] != '\0' ? name : "(unknown)", where);
	snprintf(why, sizeof why, "the request carries the placeholder of "
	    "secret %s in %s; %s", name[0] != '\0' ? name : "(unknown)",
	    where, may);
	conn_fix_set(c, "%s (no grant changes that)", why);
	conn_refuse(c, 403, "secret-exfiltration", why);
	return (-1);
}

/* Refuse a placeholder in s (a part of the request line): -1, or 0. */
static int
conn_secret_in(struct conn *c, const struct http_str *s, const char *where)
{
	const char	*name;
	char		 bad[SECRET_NAME_MAX + 1];
	size_t		 nlen, plen;

	if (secret_find(s->p, s->len, &name, &nlen, &plen) == NULL)
		return (0);
	snprintf(bad, sizeof bad, "%.*s", (int)nlen, name);
	return (conn_secret_refuse(c, bad, where, c->client_tls ?
	    "it may go only in a header the secret is for" :
	    "it may go only inside TLS the gateway inspects"));
}

/*
 * Put the values back in one header.  A hop-by-hop header does not go
 * upstream: a placeholder in it is refused only when the secret may not
 * go in a header of that name, and never replaced.  0, or -1 when
 * refused.
 */
static int
conn_secret_header_swap(struct conn *c, struct http_header *hd)
{
	struct conn_swap	 sw = { c, hd, "", "" };
	char			 where[RULES_SECRET_HEADER_LEN + 16], *out;
	size_t			 outlen;
	int			 rv;

	if (conn_secret_in(c, &hd->name, "a header's name") == -1)
		return (-1);
	rv = secret_swap(hd->value.p, hd->value.len, conn_secret_lookup, &sw,
	    &out, &outlen, sw.name, sizeof sw.name);
	if (rv == 0)
		return (0);
	if (rv == -1) {
		snprintf(where, sizeof where, "header %.*s",
		    (int)(hd->name.len < RULES_SECRET_HEADER_LEN ?
		    hd->name.len : RULES_SECRET_HEADER_LEN), hd->name.p);
		return (conn_secret_refuse(c, sw.name, where, sw.why[0] !=
		    '\0' ? sw.why : "it is not a whole placeholder"));
	}
	if (!hd->hop && rv != -2 && c->swaps == NULL &&
	    (c->swaps = calloc(1, sizeof *c->swaps)) == NULL) {
		free(out);
		conn_refuse(c, 502, NULL, "out of memory");
		return (-1);
	}
	if (hd->hop || rv == -2 || c->swaps->n == CONN_SWAP_MAX) {
		free(out);
		if (hd->hop)
			return (0);
		conn_refuse(c, 431, NULL, "too many secrets");
		return (-1);
	}
	c->swaps->v[c->swaps->n].p = out;
	c->swaps->v[c->swaps->n++].len = outlen;
	hd->value.p = out;
	hd->value.len = outlen;
	snprintf(c->swaps->name, sizeof c->swaps->name, "%s", sw.name);
	return (0);
}

/*
 * Put secrets back in an allowed request's headers.  Returns 0 to go on,
 * -1 when the request was refused.
 */
int
conn_secrets(struct conn *c)
{
	struct http_request	*r = c->req;
	const char		*name;
	size_t			 i, nlen, plen;

	if (c->swaps != NULL)
		c->swaps->name[0] = '\0';
	if (secret_find(c->head, c->scan.total, &name, &nlen, &plen) == NULL)
		return (0);
	if (conn_secret_in(c, &r->method, "the method") == -1 ||
	    conn_secret_in(c, &r->target, "the target") == -1)
		return (-1);
	for (i = 0; i < r->h.nheaders; i++) {
		if (conn_secret_header_swap(c, &r->h.headers[i]) == -1)
			return (-1);
	}
	if (c->swaps == NULL || c->swaps->name[0] == '\0')
		return (0);
	/* A TRACE answer echoes the request: the value would come back. */
	if (r->method.len == 5 && memcmp(r->method.p, "TRACE", 5) == 0)
		return (conn_secret_refuse(c, c->swaps->name,
		    "a TRACE request", "its answer would echo the value"));
	/* After a 101 the connection is a tunnel no scrubber reads. */
	if (r->h.upgrade)
		return (conn_secret_refuse(c, c->swaps->name,
		    "an upgrade request", "the tunnel after it is not checked "
		    "for the value"));
	return (0);
}
