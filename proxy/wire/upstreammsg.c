/*
 * Talking to an upstream proxy (upstreammsg.h).  Pure.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "lib/base64.h"
#include "proxy/wire/http.h"
#include "proxy/wire/upstreammsg.h"
#include "rules/rules.h"

/* The credentials' first line as "Basic BASE64". */
int
upstream_credentials(const char *text, size_t len, char *out, size_t outlen,
    const char **errstr)
{
	const char	*colon;
	size_t		 n, i;

	for (n = 0; n < len && text[n] != '\r' && text[n] != '\n'; n++)
		;
	for (i = 0; i < n; i++) {
		if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f) {
			*errstr = "a control character in the first line";
			return (-1);
		}
	}
	if (n > UPSTREAM_CRED_MAX) {
		*errstr = "the first line is too long";
		return (-1);
	}
	if ((colon = memchr(text, ':', n)) == NULL || colon == text) {
		*errstr = "the first line must be USER:PASSWORD";
		return (-1);
	}
	if (outlen < 6 + BASE64_LEN(n) + 1) {
		*errstr = "no room";
		return (-1);
	}
	memcpy(out, "Basic ", 6);
	base64_encode(text, n, out + 6);
	return (0);
}

/* "HOST:PORT", IPv6 in brackets, into buf; its length, or -1. */
static int
upstream_target(char *buf, size_t len, const struct host *h, uint16_t port)
{
	int	n;

	n = snprintf(buf, len, h->kind == HOST_IPV6 ? "[%s]:%u" : "%s:%u",
	    h->text, port);
	return (n < 0 || (size_t)n >= len ? -1 : n);
}

/* Write the CONNECT request for (host, port). */
int
upstream_connect_head(char *buf, size_t len, const struct host *h,
    uint16_t port, const char *auth)
{
	char	target[HOST_TEXT_LEN + 16];
	int	n;

	if (upstream_target(target, sizeof target, h, port) == -1)
		return (-1);
	n = snprintf(buf, len, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n%s%s%s"
	    "\r\n", target, target, auth != NULL ? "Proxy-Authorization: " :
	    "", auth != NULL ? auth : "", auth != NULL ? "\r\n" : "");
	return (n < 0 || (size_t)n >= len ? -1 : n);
}

/* Copy a header value or phrase as printable ASCII, cut to fit. */
static void
upstream_copy(char *out, size_t outlen, const char *p, size_t len)
{
	size_t	i, n = 0;

	for (i = 0; i < len && n + 1 < outlen; i++)
		out[n++] = (unsigned char)p[i] >= 0x20 &&
		    (unsigned char)p[i] < 0x7f ? p[i] : '?';
	out[n] = '\0';
}

/* Does the answer say it is the proxy's own error? */
static int
upstream_own_error(const struct http_response *r)
{
	const struct http_header	*hd;
	size_t				 i;

	if (http_header_find(&r->h, "x-squid-error") != NULL)
		return (1);
	for (i = 0; i < r->h.nheaders; i++) {
		hd = &r->h.headers[i];
		if (http_str_eq(&hd->name, "proxy-status") &&
		    memmem(hd->value.p, hd->value.len, "error=", 6) != NULL)
			return (1);
	}
	return (0);
}

/* What the upstream's answer means. */
void
upstream_answer_read(const struct http_response *r, int connect,
    struct upstream_verdict *v)
{
	const struct http_header	*hd;
	size_t				 n;

	memset(v, 0, sizeof *v);
	v->status = r->status;
	upstream_copy(v->reason, sizeof v->reason, r->reason.p, r->reason.len);
	if (connect && r->status >= 200 && r->status <= 299)
		v->answer = UPSTREAM_OPEN;
	else if (r->status == 407) {
		v->answer = UPSTREAM_AUTH;
		if ((hd = http_header_find(&r->h, "proxy-authenticate")) ==
		    NULL)
			return;
		for (n = 0; n < hd->value.len && hd->value.p[n] != ' ' &&
		    hd->value.p[n] != ','; n++)
			;
		upstream_copy(v->scheme, sizeof v->scheme, hd->value.p, n);
	} else if (!connect && (r->status < 400 || !upstream_own_error(r)))
		v->answer = UPSTREAM_RELAY;
	else
		v->answer = r->status == 403 ? UPSTREAM_DENIED :
		    UPSTREAM_FAILED;
}

/* The Pinhole-Error label of the upstream's refusal. */
const char *
upstream_label(enum upstream_answer a)
{
	switch (a) {
	case UPSTREAM_AUTH:
		return ("upstream-auth");
	case UPSTREAM_DENIED:
		return ("upstream-denied");
	default:
		return ("upstream-failed");
	}
}

/* Say who refused, and why. */
void
upstream_why(const struct upstream_verdict *v, const char *upstream,
    int with_auth, char *buf, size_t len)
{
	if (v->answer == UPSTREAM_AUTH && v->scheme[0] != '\0' &&
	    strcasecmp(v->scheme, "basic") != 0)
		snprintf(buf, len, "the upstream proxy %s wants %s "
		    "authentication (%d %s), and pinhole speaks Basic only",
		    upstream, v->scheme, v->status, v->reason);
	else if (v->answer == UPSTREAM_AUTH)
		snprintf(buf, len, "the upstream proxy %s %s (%d %s)%s",
		    upstream, with_auth ? "refused the credentials" :
		    "wants credentials", v->status, v->reason, with_auth ? "" :
		    ": give them with upstream-auth FILE");
	else
		snprintf(buf, len, "the upstream proxy %s refused it (%d %s)",
		    upstream, v->status, v->reason);
}
