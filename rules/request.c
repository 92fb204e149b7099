/*
 * Request-level rules: the one canonical form of a path, the checks an
 * allow rule's constraints make of a request (read-only, methods, path
 * patterns), and the hosts whose connections must be read to make them.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rules/rules-int.h"

/* The value of a hex digit, or -1. */
static int
hex_value(int c)
{
	if (c >= '0' && c <= '9')
		return (c - '0');
	if (c >= 'a' && c <= 'f')
		return (c - 'a' + 10);
	if (c >= 'A' && c <= 'F')
		return (c - 'A' + 10);
	return (-1);
}

/*
 * Is s[0..len) valid UTF-8: shortest forms only, no surrogates, nothing
 * past U+10FFFF?  (An overlong '.' or '/' reads as one to some servers.)
 */
static int
utf8_ok(const unsigned char *s, size_t len)
{
	size_t		i = 0, n, k;
	unsigned int	cp, min;

	while (i < len) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		if ((s[i] & 0xe0) == 0xc0) {
			n = 1; cp = s[i] & 0x1f; min = 0x80;
		} else if ((s[i] & 0xf0) == 0xe0) {
			n = 2; cp = s[i] & 0x0f; min = 0x800;
		} else if ((s[i] & 0xf8) == 0xf0) {
			n = 3; cp = s[i] & 0x07; min = 0x10000;
		} else
			return (0);
		if (len - i <= n)
			return (0);
		for (k = 1; k <= n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return (0);
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return (0);
		i += n + 1;
	}
	return (1);
}

/* Decode a path's escapes once, refusing what reads more than one way. */
static int
path_decode(const char *s, size_t len, char *out, size_t outlen,
    size_t *n, const char **errstr)
{
	size_t		i, o = 0;
	int		hi, lo, c;

	for (i = 0; i < len; i++) {
		c = (unsigned char)s[i];
		if (c == '%') {
			if (len - i < 3 || (hi = hex_value(s[i + 1])) == -1 ||
			    (lo = hex_value(s[i + 2])) == -1) {
				*errstr = "a bad %-escape";
				return (-1);
			}
			c = hi << 4 | lo;
			i += 2;
			if (c == '/' || c == '\\') {
				*errstr = "an encoded '/' or '\\'";
				return (-1);
			}
			if (c == '%') {
				*errstr = "an encoded '%' (it would decode "
				    "again elsewhere)";
				return (-1);
			}
			if (c == '?' || c == '#') {
				*errstr = "an encoded '?' or '#'";
				return (-1);
			}
		} else if (c == '\\') {
			*errstr = "a '\\'";
			return (-1);
		}
		if (c < 0x20 || c == 0x7f) {
			*errstr = "a NUL or control byte";
			return (-1);
		}
		if (o + 1 >= outlen) {
			*errstr = "a path too long";
			return (-1);
		}
		out[o++] = (char)c;
	}
	out[o] = '\0';
	if (!utf8_ok((const unsigned char *)out, o)) {
		*errstr = "bytes that are not UTF-8 (or an overlong form)";
		return (-1);
	}
	*n = o;
	return (0);
}

/* Does a segment read as "." or ".." to a server that drops ";params"? */
static int
seg_dot_param(const char *seg, size_t len)
{
	return ((len >= 2 && seg[0] == '.' && seg[1] == ';') ||
	    (len >= 3 && seg[0] == '.' && seg[1] == '.' && seg[2] == ';'));
}

/* The canonical form of a path: see rules.h. */
int
rules_path_canon(const char *target, size_t len, char *out, size_t outlen,
    const char **errstr)
{
	char		 dec[RULES_PATH_LEN];
	const char	*q, *seg, *end;
	size_t		 n, o = 0, slen;
	int		 empty = 0, dotdot = 0;

	if ((q = memchr(target, '?', len)) != NULL)
		len = (size_t)(q - target);
	if (len == 0 || target[0] != '/') {
		*errstr = "a path must start with '/'";
		return (-1);
	}
	if (outlen < 2 || path_decode(target, len, dec, sizeof dec, &n,
	    errstr) == -1)
		return (-1);
	end = dec + n;
	out[o++] = '/';
	for (seg = dec + 1; seg <= end; seg += slen + 1) {
		slen = (size_t)((q = memchr(seg, '/', (size_t)(end - seg))) ?
		    q - seg : end - seg);
		if (seg_dot_param(seg, slen)) {
			*errstr = "a '.' or '..' segment with ';' parameters";
			return (-1);
		}
		if (slen == 0 && seg < end)
			empty = 1;
		if (slen == 2 && seg[0] == '.' && seg[1] == '.')
			dotdot = 1;
		if (empty && dotdot) {
			/*
			 * "/a//../b": folded first, /b; by RFC 3986 alone
			 * the ".." takes the empty segment, /a/b.
			 */
			*errstr = "a '..' segment and a '//' (servers differ "
			    "on which goes first)";
			return (-1);
		}
		if (slen == 0 && seg < end)
			continue;			/* "//" folded */
		if (slen == 1 && seg[0] == '.')
			continue;
		if (slen == 2 && seg[0] == '.' && seg[1] == '.') {
			if (o > 1) {			/* drop the last segment */
				o--;
				while (o > 0 && out[o - 1] != '/')
					o--;
			}
			continue;
		}
		if (o + slen + 2 > outlen) {
			*errstr = "a path too long";
			return (-1);
		}
		memcpy(out + o, seg, slen);
		o += slen;
		if (seg + slen < end)
			out[o++] = '/';
	}
	out[o] = '\0';
	return ((int)o);
}

/*
 * Does a canonical path match a pattern: '*' within one segment, a final
 * "/\*\*" (slash, two stars) the directory itself and all below it?
 */
static int
path_match(const char *pat, const char *s)
{
	while (*pat != '\0') {
		if (strcmp(pat, "/**") == 0)
			return (*s == '\0' || *s == '/');
		if (*pat == '*') {
			pat++;
			for (;;) {
				if (path_match(pat, s))
					return (1);
				if (*s == '\0' || *s == '/')
					return (0);
				s++;
			}
		}
		if (*pat != *s)
			return (0);
		pat++;
		s++;
	}
	return (*s == '\0');
}

/* Is a path pattern canonical: "/" segments, no dots, escapes or "//"? */
int
rules_pattern_ok(const char *pat, size_t len, const char **errstr)
{
	size_t	i;

	if (len == 0 || pat[0] != '/') {
		*errstr = "a path pattern starts with '/'";
		return (-1);
	}
	for (i = 0; i < len; i++) {
		if (pat[i] == '%' || pat[i] == '\\' ||
		    (unsigned char)pat[i] < 0x21 || pat[i] == 0x7f ||
		    pat[i] == '?' || pat[i] == ',') {
			*errstr = "a path pattern takes no escapes, '\\', '?', "
			    "',' or spaces";
			return (-1);
		}
		if (pat[i] == '/' && i + 1 < len && pat[i + 1] == '/') {
			*errstr = "a path pattern has no '//'";
			return (-1);
		}
		if (pat[i] == '/' && pat[i + 1 < len ? i + 1 : i] == '.' &&
		    (i + 2 >= len || pat[i + 2] == '/' || (pat[i + 2] == '.' &&
		    (i + 3 >= len || pat[i + 3] == '/')))) {
			*errstr = "a path pattern has no '.' or '..' segments";
			return (-1);
		}
		if (pat[i] == '*' && i + 1 < len && pat[i + 1] == '*' &&
		    (i + 2 != len || i == 0 || pat[i - 1] != '/')) {
			*errstr = "'**' goes only at the end, after '/'";
			return (-1);
		}
	}
	return (0);
}

/* Does the path end with this last segment? */
static int
path_ends(const char *path, const char *seg)
{
	size_t	n = strlen(path), k = strlen(seg);

	return (n > k && path[n - k - 1] == '/' &&
	    strcmp(path + n - k, seg) == 0);
}

/* Is the segment before the last one this? ("/x/info/refs") */
static int
path_ends_dir(const char *path, const char *dir)
{
	const char	*last = strrchr(path, '/');
	size_t		 k = strlen(dir);

	return (last != NULL && (size_t)(last - path) > k &&
	    last[-(long)k - 1] == '/' && strncmp(last - k, dir, k) == 0);
}

/*
 * Is a query parameter's name "service" in any case, its escapes decoded
 * as git http-backend decodes them ("servic%65")?
 */
static int
param_is_service(const char *p, size_t n)
{
	char	name[8];
	size_t	i, o = 0;
	int	hi, lo;

	for (i = 0; i < n; i++) {
		if (o == sizeof name - 1)
			return (0);
		if (p[i] == '%' && n - i >= 3 &&
		    (hi = hex_value(p[i + 1])) != -1 &&
		    (lo = hex_value(p[i + 2])) != -1) {
			name[o++] = (char)(hi << 4 | lo);
			i += 2;
		} else
			name[o++] = p[i];
	}
	name[o] = '\0';
	return (strcasecmp(name, "service") == 0);
}

/*
 * Does the query name a git service other than fetch's (any spelling of
 * "service=" with another value: push, or something to refuse unread)?
 */
static int
query_not_fetch(const char *q, size_t len)
{
	static const char	 want[] = "git-upload-pack";
	const char		*end = q + len, *amp, *eq;
	size_t			 n, k;

	for (; q < end; q = amp + 1) {
		if ((amp = memchr(q, '&', (size_t)(end - q))) == NULL)
			amp = end;
		n = (size_t)(amp - q);
		if ((eq = memchr(q, '=', n)) == NULL)
			continue;
		k = (size_t)(eq - q);
		if (param_is_service(q, k) && (n - k - 1 != sizeof want - 1 ||
		    memcmp(eq + 1, want, n - k - 1) != 0))
			return (1);
	}
	return (0);
}

/* Is a method this word: as sent, or (fold) in any case? */
static int
method_eq(const char *m, size_t n, const char *word, int fold)
{
	return (n == strlen(word) && (fold ? strncasecmp(m, word, n) :
	    memcmp(m, word, n)) == 0);
}

/*
 * Is a method one that read-only lets through on this path: GET, HEAD,
 * OPTIONS, or git's fetch (POST .../git-upload-pack)?  fold: in any
 * case (a method an override header names).
 */
static int
method_reads(const char *m, size_t n, const char *path, int fold)
{
	return (method_eq(m, n, "GET", fold) || method_eq(m, n, "HEAD", fold) ||
	    method_eq(m, n, "OPTIONS", fold) || (method_eq(m, n, "POST",
	    fold) && path_ends(path, "git-upload-pack")));
}

/*
 * A method whose body has no meaning (GET, HEAD, OPTIONS, TRACE): many
 * servers do not read one, so its bytes would be read as the next
 * request, one no rule looked at.
 */
static int
method_bodiless(const char *m, size_t n)
{
	return (method_eq(m, n, "GET", 1) || method_eq(m, n, "HEAD", 1) ||
	    method_eq(m, n, "OPTIONS", 1) || method_eq(m, n, "TRACE", 1));
}

/* Is a method one of a rule's methods? */
static int
method_listed(const struct rule_req *q, const char *m, size_t n, int fold)
{
	size_t	i;

	for (i = 0; i < q->nmethods; i++) {
		if (method_eq(m, n, q->methods[i], fold))
			return (1);
	}
	return (0);
}

/* The method override header as the request names it, for messages. */
static const char *
override_name(const struct rules_request *rq)
{
	return (rq->override_name != NULL ? rq->override_name :
	    "a method override header");
}

/* read-only: a read (the overriding method too), never git's push. */
static int
req_read_only(const struct rules_request *rq, const char *path, char *buf,
    size_t len)
{
	const char	*qs;
	size_t		 qlen = 0;
	int		 m = (int)rq->method_len;

	qs = memchr(rq->target, '?', rq->target_len);
	if (qs != NULL) {
		qs++;
		qlen = rq->target_len - (size_t)(qs - rq->target);
	}
	if (path_ends(path, "git-receive-pack") ||
	    (path_ends(path, "refs") && path_ends_dir(path, "info") &&
	    qs != NULL && query_not_fetch(qs, qlen))) {
		snprintf(buf, len, "read-only: %.*s %s is a git push, not a "
		    "read", m, rq->method, path);
		return (0);
	}
	if (!method_reads(rq->method, rq->method_len, path, 0)) {
		snprintf(buf, len, "read-only: %.*s %s is not a read", m,
		    rq->method, path);
		return (0);
	}
	if (rq->override != NULL && !method_reads(rq->override,
	    rq->override_len, path, 1)) {
		snprintf(buf, len, "read-only: %.*s %s with %s: %.*s is not a "
		    "read", m, rq->method, path, override_name(rq),
		    (int)rq->override_len, rq->override);
		return (0);
	}
	return (1);
}

/* methods: one of the rule's, and so is the overriding method. */
static int
req_methods(const struct rule_req *q, const struct rules_request *rq,
    char *buf, size_t len)
{
	if (!method_listed(q, rq->method, rq->method_len, 0)) {
		snprintf(buf, len, "methods: %.*s is not one of %s",
		    (int)rq->method_len, rq->method, q->methods_text);
		return (0);
	}
	if (rq->override != NULL && !method_listed(q, rq->override,
	    rq->override_len, 1)) {
		snprintf(buf, len, "methods: %s: %.*s is not one of %s",
		    override_name(rq), (int)rq->override_len, rq->override,
		    q->methods_text);
		return (0);
	}
	return (1);
}

/* path: one of the rule's patterns. */
static int
req_path(const struct rule_req *q, const char *path, char *buf, size_t len)
{
	size_t	i;

	for (i = 0; i < q->npaths && !path_match(q->paths[i], path); i++)
		;
	if (i == q->npaths) {
		snprintf(buf, len, "path: %s is outside %s", path,
		    q->paths_text);
		return (0);
	}
	return (1);
}

/*
 * An upgrade: to websocket alone, as a GET, and (ws) on a rule that
 * says websocket.  After the 101 the connection is a tunnel whose
 * bytes no rule reads.
 */
static int
req_upgrade(int ws, const struct rules_request *rq, const char *path,
    char *buf, size_t len)
{
	if (rq->upgrade_len != 9 ||
	    strncasecmp(rq->upgrade, "websocket", 9) != 0) {
		snprintf(buf, len, "upgrade: Upgrade: %.*s would make the "
		    "connection a tunnel no rule reads (only websocket is "
		    "let through)",
		    (int)(rq->upgrade_len < 64 ? rq->upgrade_len : 64),
		    rq->upgrade);
		return (0);
	}
	if (!ws) {
		snprintf(buf, len, "upgrade: a WebSocket to %s needs a rule "
		    "that says websocket (its frames are not read)", path);
		return (0);
	}
	if (!method_eq(rq->method, rq->method_len, "GET", 0)) {
		snprintf(buf, len, "upgrade: a WebSocket opens with GET, not "
		    "%.*s", (int)rq->method_len, rq->method);
		return (0);
	}
	return (1);
}

/*
 * A request on a host an allow rule without constraints lets through
 * (inspected for a secret): only an upgrade to anything but a WebSocket
 * is refused, the connection would carry requests no one reads.
 */
int
rules_req_open(const struct rules_request *rq, const char *path, char *buf,
    size_t len)
{
	return (rq->upgrade == NULL || req_upgrade(1, rq, path, buf, len));
}

/*
 * Does a request meet one rule's constraints?  Returns 1, or 0 with the
 * constraint that refused and why in buf.  A method override header is
 * checked by read-only and methods as the method is; one repeated or
 * malformed is refused by them.
 */
int
rules_req_check(const struct rule *rule, const struct rules_request *rq,
    const char *path, const char **constraint, char *buf, size_t len)
{
	const struct rule_req	*q = rule->req;

	*constraint = "body";
	if (rq->body && method_bodiless(rq->method, rq->method_len)) {
		snprintf(buf, len, "body: a %.*s carries a body, which a server "
		    "that does not read one would take for the next request",
		    (int)rq->method_len, rq->method);
		return (0);
	}
	*constraint = q->read_only ? "read-only" : "methods";
	if ((q->read_only || q->nmethods > 0) && rq->override_bad) {
		snprintf(buf, len, "%s: %s is given twice, or does not name "
		    "one method", *constraint, override_name(rq));
		return (0);
	}
	if (q->read_only && !req_read_only(rq, path, buf, len))
		return (0);
	*constraint = "methods";
	if (q->nmethods > 0 && !req_methods(q, rq, buf, len))
		return (0);
	*constraint = "path";
	if (q->npaths > 0 && !req_path(q, path, buf, len))
		return (0);
	*constraint = "upgrade";
	if (rq->upgrade != NULL && !req_upgrade(q->websocket, rq, path, buf,
	    len))
		return (0);
	return (1);
}

/* Does a parsed host pattern cover this host? */
int
rules_spec_covers(const struct rule_spec *sp, const struct host *h)
{
	size_t	n, k;

	switch (sp->kind) {
	case TARGET_NAME:
		return (h->kind == HOST_NAME && strcmp(h->text, sp->name) == 0);
	case TARGET_WILD:
		n = strlen(h->text);
		k = strlen(sp->name);
		return (h->kind == HOST_NAME && n > k + 1 &&
		    h->text[n - k - 1] == '.' &&
		    strcmp(h->text + n - k, sp->name) == 0);
	case TARGET_ADDR:
		if (h->kind == HOST_NAME ||
		    (h->kind == HOST_IPV4 ? 4U : 16U) != sp->alen)
			return (0);
		return (addr_in(h->addr, sp->addr, sp->alen, sp->plen));
	}
	return (0);
}

/* A parsed host pattern as text ("name", "*.name", "ADDR", "ADDR/LEN"). */
int
rules_spec_pattern(struct arena *a, const struct rule_spec *sp,
    const char **out)
{
	char	buf[HOST_TEXT_LEN + 8];
	size_t	n;

	if (sp->kind == TARGET_NAME)
		snprintf(buf, sizeof buf, "%s", sp->name);
	else if (sp->kind == TARGET_WILD)
		snprintf(buf, sizeof buf, "*.%s", sp->name);
	else {
		n = addr_format(buf, sizeof buf, sp->addr, sp->alen);
		if (sp->plen != 8 * sp->alen)
			snprintf(buf + n, sizeof buf - n, "/%u", sp->plen);
	}
	return ((*out = arena_strndup(a, buf, strlen(buf))) == NULL ? -1 : 0);
}
