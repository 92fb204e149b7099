/*
 * Secrets in requests: a request that carries a placeholder has the real
 * value put back in its header values when it goes, decrypted here, to a
 * host the secret is for; anywhere else (another host, a connection in
 * clear, the request's target) it is refused as an exfiltration attempt.
 * The value is never logged.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/bufferevent.h>

#include "proxy/conn/conn-int.h"
#include "proxy/wire/http.h"
#include "proxy/wire/secret.h"
#include "rules/rules.h"

/* The value a placeholder stands for, when it may go on this request. */
static const char *
conn_secret_lookup(void *arg, const char *name, size_t len, size_t *vlen)
{
	struct conn			*c = arg;
	const struct conn_secret	*s;
	size_t				 i;

	for (i = 0; i < c->set->nsecrets; i++) {
		s = &c->set->secrets[i];
		if (strlen(s->rule->name) != len ||
		    memcmp(s->rule->name, name, len) != 0)
			continue;
		if (!c->client_tls || s->value == NULL ||
		    !rules_secret_for(s->rule, &c->host))
			return (NULL);
		*vlen = s->len;
		return (s->value);
	}
	return (NULL);
}

/* Refuse a request carrying a placeholder where it may not go. */
static int
conn_secret_refuse(struct conn *c, const char *name, const char *where)
{
	char	why[256];

	snprintf(c->note, sizeof c->note, "secret %s in %s",
	    name[0] != '\0' ? name : "(unknown)", where);
	snprintf(why, sizeof why, "the request carries the placeholder of "
	    "secret %s in %s; it may go only %s", name[0] != '\0' ? name :
	    "(unknown)", where, c->client_tls ? "to the hosts the secret is "
	    "for, in a header" : "inside TLS the gateway inspects");
	snprintf(c->fix, sizeof c->fix, "%s (no grant changes that)", why);
	conn_refuse(c, 403, "secret-exfiltration", why);
	return (-1);
}

/*
 * Put secrets back in an allowed request's headers.  Returns 0 to go on,
 * -1 when the request was refused.
 */
int
conn_secrets(struct conn *c)
{
	struct http_request	*r = c->req;
	struct http_header	*hd;
	const char		*name;
	char			 bad[SECRET_NAME_MAX + 1], *out;
	size_t			 i, nlen, plen, outlen;
	int			 rv;

	if (secret_find(c->head, c->scan.total, &name, &nlen, &plen) == NULL)
		return (0);
	if (secret_find(r->target.p, r->target.len, &name, &nlen,
	    &plen) != NULL) {
		snprintf(bad, sizeof bad, "%.*s", (int)nlen, name);
		return (conn_secret_refuse(c, bad, "the target"));
	}
	/* A TRACE answer echoes the request: the value would come back. */
	if (r->method.len == 5 && memcmp(r->method.p, "TRACE", 5) == 0) {
		snprintf(bad, sizeof bad, "%.*s", (int)nlen, name);
		return (conn_secret_refuse(c, bad, "a TRACE request"));
	}
	for (i = 0; i < r->h.nheaders; i++) {
		hd = &r->h.headers[i];
		if (hd->hop)
			continue;
		rv = secret_swap(hd->value.p, hd->value.len,
		    conn_secret_lookup, c, &out, &outlen, bad, sizeof bad);
		if (rv == 0)
			continue;
		if (rv == -1)
			return (conn_secret_refuse(c, bad, "a header"));
		if (rv == -2 || c->nswapped == CONN_SWAP_MAX) {
			free(out);
			conn_refuse(c, 431, NULL, "too many secrets");
			return (-1);
		}
		c->swapped[c->nswapped].p = out;
		c->swapped[c->nswapped++].len = outlen;
		hd->value.p = out;
		hd->value.len = outlen;
	}
	return (0);
}
