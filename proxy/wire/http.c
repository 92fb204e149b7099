/*
 * HTTP/1.x message heads and chunked framing (RFC 9110, RFC 9112).
 *
 * Strict where leniency lets two parsers disagree about where a message
 * ends: no obs-fold, no whitespace before a colon, no bare CR, no NUL, no
 * request with both Content-Length and Transfer-Encoding, no conflicting
 * Content-Lengths, no transfer coding but "chunked", CRLF everywhere in a
 * chunked body.  Errors are HTTP status codes the caller sends back.
 */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "proxy/wire/http.h"
#include "rules/rules.h"

struct http_cursor {
	const char	*p;
	const char	*end;
};

/* Lines of a head, before it is taken apart. */
struct http_line {
	const char	*p;
	size_t		 len;
};

enum {
	CH_SIZE, CH_BWS, CH_EXT, CH_SIZE_LF, CH_DATA, CH_DATA_CR, CH_DATA_LF,
	CH_TRAILER, CH_TRAILER_LINE, CH_TRAILER_LF, CH_END_LF, CH_DONE
};

/* Is c a tchar (RFC 9110 5.6.2)? */
static int
http_is_tchar(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9'))
		return (1);
	return (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* Is c allowed in a field value (VCHAR, SP, HTAB, obs-text)? */
static int
http_is_vchar(unsigned char c)
{
	return (c == '\t' || (c >= 0x20 && c != 0x7f));
}

/* Compare a piece of the buffer with a string, ignoring case. */
int
http_str_eq(const struct http_str *s, const char *lit)
{
	size_t	n = strlen(lit);

	return (s->len == n && strncasecmp(s->p, lit, n) == 0);
}

/* Find the first header with this name. */
const struct http_header *
http_header_find(const struct http_head *h, const char *name)
{
	size_t	i;

	for (i = 0; i < h->nheaders; i++) {
		if (http_str_eq(&h->headers[i].name, name))
			return (&h->headers[i]);
	}
	return (NULL);
}

/* Start looking for the end of a head. */
void
http_scan_init(struct http_scan *sc)
{
	memset(sc, 0, sizeof *sc);
	sc->bol = 1;
}

/*
 * Feed the next bytes.  Returns 0 while the head goes on, or how many of
 * these bytes belong to the head (the blank line included).
 */
size_t
http_scan_feed(struct http_scan *sc, const void *buf, size_t len)
{
	const unsigned char	*p = buf;
	size_t			 i;

	for (i = 0; i < len; i++) {
		sc->total++;
		if (p[i] == '\r')
			continue;
		if (p[i] != '\n') {
			sc->started = 1;
			sc->bol = 0;
		} else if (!sc->started)
			continue;
		else if (sc->bol)
			return (i + 1);
		else
			sc->bol = 1;
	}
	return (0);
}

/* Take the next line; a line ends in LF, optionally preceded by CR. */
static int
http_next_line(struct http_cursor *c, struct http_line *l)
{
	const char	*nl;
	size_t		 i;

	nl = memchr(c->p, '\n', c->end - c->p);
	if (nl == NULL)
		return (-1);
	l->p = c->p;
	l->len = nl - c->p;
	if (l->len > 0 && l->p[l->len - 1] == '\r')
		l->len--;
	for (i = 0; i < l->len; i++) {
		if (l->p[i] == '\r' || l->p[i] == '\0')
			return (-1);
	}
	c->p = nl + 1;
	return (0);
}

/* Skip the empty lines allowed before a start line. */
static void
http_skip_blank(struct http_cursor *c)
{
	while (c->p < c->end && (*c->p == '\r' || *c->p == '\n'))
		c->p++;
}

/* Parse "HTTP/1.x"; returns the minor version or -1. */
static int
http_version_parse(const char *p, size_t len)
{
	if (len != 8 || memcmp(p, "HTTP/", 5) != 0)
		return (-1);
	if (p[5] != '1' || p[6] != '.' || p[7] < '0' || p[7] > '9')
		return (-2);
	return (p[7] - '0' > 1 ? 1 : p[7] - '0');
}

/* Trim optional whitespace from both ends. */
static void
http_trim(struct http_str *s)
{
	while (s->len > 0 && (s->p[0] == ' ' || s->p[0] == '\t')) {
		s->p++;
		s->len--;
	}
	while (s->len > 0 && (s->p[s->len - 1] == ' ' ||
	    s->p[s->len - 1] == '\t'))
		s->len--;
}

/* Split one header line into name and value. */
static int
http_header_parse(const struct http_line *l, struct http_header *hd)
{
	size_t	i;

	for (i = 0; i < l->len && l->p[i] != ':'; i++) {
		if (!http_is_tchar((unsigned char)l->p[i]))
			return (-1);
	}
	if (i == 0 || i == l->len)
		return (-1);
	hd->name.p = l->p;
	hd->name.len = i;
	hd->value.p = l->p + i + 1;
	hd->value.len = l->len - i - 1;
	for (i = 0; i < hd->value.len; i++) {
		if (!http_is_vchar((unsigned char)hd->value.p[i]))
			return (-1);
	}
	http_trim(&hd->value);
	hd->hop = 0;
	return (0);
}

/*
 * Call fn on each element of a comma-separated list value; stops and
 * returns -1 when fn does.
 */
static int
http_list_each(const struct http_str *v,
    int (*fn)(const struct http_str *, void *), void *arg)
{
	const char	*p = v->p, *end = v->p + v->len, *comma;
	struct http_str	 el;

	while (p <= end) {
		comma = memchr(p, ',', end - p);
		if (comma == NULL)
			comma = end;
		el.p = p;
		el.len = comma - p;
		http_trim(&el);
		if (el.len > 0 && fn(&el, arg) == -1)
			return (-1);
		p = comma + 1;
	}
	return (0);
}

/* Parse a Content-Length value element: digits only, no overflow. */
static int
http_length_el(const struct http_str *el, void *arg)
{
	int64_t		*prev = arg;
	uint64_t	 v = 0;
	size_t		 i;

	if (el->len > 18)
		return (-1);
	for (i = 0; i < el->len; i++) {
		if (el->p[i] < '0' || el->p[i] > '9')
			return (-1);
		v = v * 10 + (el->p[i] - '0');
	}
	if (*prev >= 0 && (uint64_t)*prev != v)
		return (-1);
	*prev = (int64_t)v;
	return (0);
}

/* Transfer-Encoding: exactly one coding, "chunked". */
static int
http_te_el(const struct http_str *el, void *arg)
{
	int	*n = arg;

	if (!http_str_eq(el, "chunked") || ++*n > 1)
		return (-1);
	return (0);
}

/* Connection options: close, keep-alive, upgrade, and names to drop. */
struct http_conn_opts {
	struct http_head	*h;
	int			 close;
	int			 keep_alive;
	int			 upgrade;
};

/*
 * Note one Connection option and mark the header it names.  An option
 * naming a header that frames the message or names its host is refused:
 * dropped on the way upstream, the body the gateway relayed would be
 * read there as the next request, one no rule checked.
 */
static int
http_conn_el(const struct http_str *el, void *arg)
{
	struct http_conn_opts	*o = arg;
	size_t			 i;

	if (http_str_eq(el, "content-length") ||
	    http_str_eq(el, "transfer-encoding") || http_str_eq(el, "host"))
		return (-1);
	if (http_str_eq(el, "close"))
		o->close = 1;
	else if (http_str_eq(el, "keep-alive"))
		o->keep_alive = 1;
	else if (http_str_eq(el, "upgrade"))
		o->upgrade = 1;
	for (i = 0; i < o->h->nheaders; i++) {
		if (el->len == o->h->headers[i].name.len &&
		    strncasecmp(el->p, o->h->headers[i].name.p, el->len) == 0)
			o->h->headers[i].hop = 1;
	}
	return (0);
}

/* Is this header hop-by-hop whatever Connection says? */
static int
http_is_hop(const struct http_str *name)
{
	static const char	*hop[] = {
		"connection", "keep-alive", "proxy-connection",
		"proxy-authorization", "proxy-authenticate", "te", "upgrade",
		NULL
	};
	const char		**h;

	for (h = hop; *h != NULL; h++) {
		if (http_str_eq(name, *h))
			return (1);
	}
	return (0);
}

/* Read the header lines up to the blank line. */
static int
http_headers_parse(struct http_cursor *c, const struct http_limits *lim,
    struct http_head *h)
{
	struct http_line	l;
	size_t			max = lim->max_headers;

	if (max > HTTP_HEADERS_MAX)
		max = HTTP_HEADERS_MAX;
	h->nheaders = 0;
	for (;;) {
		if (http_next_line(c, &l) == -1)
			return (400);
		if (l.len == 0)
			return (0);
		if (l.p[0] == ' ' || l.p[0] == '\t')
			return (400);		/* obs-fold */
		if (h->nheaders == max)
			return (431);
		if (http_header_parse(&l, &h->headers[h->nheaders]) == -1)
			return (400);
		h->headers[h->nheaders].hop =
		    http_is_hop(&h->headers[h->nheaders].name);
		h->nheaders++;
	}
}

/*
 * Work out framing and persistence from the headers.  Returns 0, 400 for
 * a malformed or ambiguous message, 501 for an unknown transfer coding.
 */
static int
http_framing(struct http_head *h)
{
	struct http_conn_opts	 o;
	int64_t			 len = -1;
	int			 nte = 0, te = 0, upgrade_hdr = 0;
	size_t			 i;

	memset(&o, 0, sizeof o);
	o.h = h;
	for (i = 0; i < h->nheaders; i++) {
		struct http_header	*hd = &h->headers[i];

		if (http_str_eq(&hd->name, "content-length")) {
			if (hd->value.len == 0 ||
			    http_list_each(&hd->value, http_length_el, &len) == -1 ||
			    len < 0)
				return (400);
		} else if (http_str_eq(&hd->name, "transfer-encoding")) {
			te = 1;
			if (http_list_each(&hd->value, http_te_el, &nte) == -1)
				return (501);
		} else if (http_str_eq(&hd->name, "connection")) {
			if (http_list_each(&hd->value, http_conn_el, &o) == -1)
				return (400);
		} else if (http_str_eq(&hd->name, "upgrade"))
			upgrade_hdr = 1;
	}
	if (te && (len >= 0 || nte == 0))
		return (400);
	if (te && h->minor == 0)
		return (400);
	h->body = te ? HTTP_BODY_CHUNKED :
	    len > 0 ? HTTP_BODY_LENGTH : HTTP_BODY_NONE;
	h->length = len > 0 ? (uint64_t)len : 0;
	h->keep_alive = h->minor >= 1 ? !o.close : (o.keep_alive && !o.close);
	h->upgrade = o.upgrade && upgrade_hdr;
	return (0);
}

/*
 * Split an authority into host and port.  Userinfo is refused: it must
 * never be mistaken for the host.
 */
static int
http_authority_parse(struct http_request *r, int need_port)
{
	const char	*p = r->authority.p, *end = p + r->authority.len;
	const char	*colon;

	if (r->authority.len == 0 || memchr(p, '@', end - p) != NULL)
		return (-1);
	if (*p == '[') {
		const char *rb = memchr(p, ']', end - p);

		if (rb == NULL || rb == p + 1)
			return (-1);
		r->host.p = p + 1;
		r->host.len = rb - p - 1;
		colon = rb + 1 < end ? rb + 1 : NULL;
		if (colon != NULL && *colon != ':')
			return (-1);
	} else {
		colon = memchr(p, ':', end - p);
		r->host.p = p;
		r->host.len = (colon != NULL ? colon : end) - p;
		if (r->host.len == 0)
			return (-1);
	}
	r->port = 80;
	if (colon == NULL || colon + 1 == end)
		return (need_port ? -1 : 0);
	return (port_parse(colon + 1, end - colon - 1, &r->port));
}

/* Take the request target apart according to its form. */
static int
http_target_parse(struct http_request *r)
{
	const char	*p = r->target.p, *end = p + r->target.len, *q;

	if (memchr(p, '#', end - p) != NULL)
		return (400);
	if (r->is_connect) {
		r->form = HTTP_FORM_AUTHORITY;
		r->authority = r->target;
		return (http_authority_parse(r, 1) == -1 ? 400 : 0);
	}
	if (r->target.len == 1 && *p == '*') {
		r->form = HTTP_FORM_ASTERISK;
		return (0);
	}
	if (*p == '/') {
		r->form = HTTP_FORM_ORIGIN;
		r->path = r->target;
		return (0);
	}
	if (r->target.len < 7 || strncasecmp(p, "http://", 7) != 0)
		return (memmem(p, end - p, "://", 3) != NULL ? 501 : 400);
	r->form = HTTP_FORM_ABSOLUTE;
	p += 7;
	for (q = p; q < end && *q != '/' && *q != '?'; q++)
		;
	r->authority.p = p;
	r->authority.len = q - p;
	r->path.p = q;
	r->path.len = end - q;
	return (http_authority_parse(r, 0) == -1 ? 400 : 0);
}

/* Parse "METHOD SP TARGET SP HTTP/1.x". */
static int
http_request_line(const struct http_line *l, struct http_request *r)
{
	const char	*p = l->p, *end = l->p + l->len, *sp1, *sp2;
	size_t		 i;

	if ((sp1 = memchr(p, ' ', end - p)) == NULL || sp1 == p)
		return (400);
	if ((sp2 = memchr(sp1 + 1, ' ', end - sp1 - 1)) == NULL ||
	    sp2 == sp1 + 1)
		return (400);
	r->method.p = p;
	r->method.len = sp1 - p;
	for (i = 0; i < r->method.len; i++) {
		if (!http_is_tchar((unsigned char)p[i]))
			return (400);
	}
	r->target.p = sp1 + 1;
	r->target.len = sp2 - sp1 - 1;
	for (i = 0; i < r->target.len; i++) {
		unsigned char c = r->target.p[i];

		if (c <= 0x20 || c >= 0x7f)
			return (400);
	}
	r->h.minor = http_version_parse(sp2 + 1, end - sp2 - 1);
	if (r->h.minor == -2)
		return (505);
	if (r->h.minor < 0)
		return (400);
	r->is_connect = http_str_eq(&r->method, "CONNECT") &&
	    memcmp(r->method.p, "CONNECT", 7) == 0;
	r->is_head = r->method.len == 4 && memcmp(r->method.p, "HEAD", 4) == 0;
	return (http_target_parse(r));
}

/* Checks that need both the request line and the headers. */
static int
http_request_check(struct http_request *r)
{
	size_t	i, nhost = 0;

	for (i = 0; i < r->h.nheaders; i++) {
		if (http_str_eq(&r->h.headers[i].name, "host"))
			nhost++;
	}
	if (nhost > 1 || (nhost == 0 && r->h.minor >= 1 && !r->is_connect))
		return (400);
	if (r->is_connect && r->h.body != HTTP_BODY_NONE)
		return (400);
	return (0);
}

/*
 * Headers that name a method for the server to act on in place of the
 * request's own (frameworks honour them on a POST or a GET).
 */
static const char *const http_override_names[] = {
	"X-HTTP-Method-Override", "X-HTTP-Method", "X-Method-Override", NULL
};

/* Is a value one method: a token of 1 to 32 bytes? */
static int
http_is_method(const struct http_str *v)
{
	size_t	i;

	for (i = 0; i < v->len; i++) {
		if (!http_is_tchar((unsigned char)v->p[i]))
			return (0);
	}
	return (v->len > 0 && v->len <= 32);
}

/*
 * Does a header's name read as this one to a server that takes '_' for
 * '-' (CGI, WSGI), case aside?
 */
static int
http_name_like(const struct http_str *s, const char *lit)
{
	size_t	i, n = strlen(lit);
	char	a, b;

	if (s->len != n)
		return (0);
	for (i = 0; i < n; i++) {
		a = s->p[i] == '_' ? '-' : s->p[i];
		b = lit[i];
		if (a != b && (a | 0x20) != (b | 0x20))
			return (0);
	}
	return (1);
}

/*
 * Find the method-override header (spelled with '-' or '_'): the method
 * it names, or bad when such a header comes twice (the same or another
 * name) or its value is not one method, which the origin could read in
 * more than one way.
 */
static void
http_override_parse(struct http_request *r)
{
	const char *const	*n;
	size_t			 i;

	for (i = 0; i < r->h.nheaders; i++) {
		for (n = http_override_names; *n != NULL; n++) {
			if (!http_name_like(&r->h.headers[i].name, *n))
				continue;
			if (r->override_name != NULL ||
			    !http_is_method(&r->h.headers[i].value))
				r->override_bad = 1;
			else
				r->override = r->h.headers[i].value;
			if (r->override_name == NULL)
				r->override_name = *n;
		}
	}
	if (r->override_bad)
		memset(&r->override, 0, sizeof r->override);
}

/* The request as the policy's request rules see it. */
void
http_request_rules(const struct http_request *r, struct rules_request *rq)
{
	const struct http_header	*up;

	memset(rq, 0, sizeof *rq);
	rq->method = r->method.p;
	rq->method_len = r->method.len;
	rq->target = r->path.len > 0 ? r->path.p : "/";
	rq->target_len = r->path.len > 0 ? r->path.len : 1;
	if (r->h.upgrade && (up = http_header_find(&r->h, "upgrade")) != NULL) {
		rq->upgrade = up->value.p;
		rq->upgrade_len = up->value.len;
	}
	rq->override = r->override.p;
	rq->override_len = r->override.len;
	rq->override_name = r->override_name;
	rq->override_bad = r->override_bad;
	rq->body = r->h.body == HTTP_BODY_CHUNKED ||
	    (r->h.body == HTTP_BODY_LENGTH && r->h.length > 0);
}

/* Compare a piece of the buffer with a string, case and all. */
static int
http_str_is(const struct http_str *s, const char *lit)
{
	size_t	n = strlen(lit);

	return (s->len == n && memcmp(s->p, lit, n) == 0);
}

/* Decide a request for the one resource a small server has. */
int
http_request_route(const char *buf, size_t len, const struct http_limits *lim,
    const char *path, struct http_request *r)
{
	int	st;

	if ((st = http_request_parse(buf, len, lim, r)) != 0)
		return (st);
	if (r->form != HTTP_FORM_ORIGIN || !http_str_is(&r->path, path))
		return (404);
	if (!http_str_is(&r->method, "GET"))
		return (405);
	return (200);
}

/*
 * Parse a request head of len bytes (as found by http_scan_feed).
 * Returns 0, or the status to answer with: 400, 431, 501 or 505.
 */
int
http_request_parse(const char *buf, size_t len, const struct http_limits *lim,
    struct http_request *r)
{
	struct http_cursor	c;
	struct http_line	l;
	int			rv;

	memset(r, 0, offsetof(struct http_request, h));
	memset(&r->h, 0, offsetof(struct http_head, headers));
	if (len > lim->max_head)
		return (431);
	c.p = buf;
	c.end = buf + len;
	http_skip_blank(&c);
	if (http_next_line(&c, &l) == -1)
		return (400);
	if ((rv = http_request_line(&l, r)) != 0)
		return (rv);
	if ((rv = http_headers_parse(&c, lim, &r->h)) != 0)
		return (rv);
	if ((rv = http_framing(&r->h)) != 0)
		return (rv);
	http_override_parse(r);
	return (http_request_check(r));
}

/* Parse "HTTP/1.x SP 3DIGIT [SP reason]". */
static int
http_status_line(const struct http_line *l, struct http_response *r)
{
	const char	*p = l->p;
	size_t		 i;

	if (l->len < 12 || p[8] != ' ')
		return (-1);
	if ((r->h.minor = http_version_parse(p, 8)) < 0)
		return (-1);
	r->status = 0;
	for (i = 9; i < 12; i++) {
		if (p[i] < '0' || p[i] > '9')
			return (-1);
		r->status = r->status * 10 + (p[i] - '0');
	}
	if (r->status < 100 || (l->len > 12 && p[12] != ' '))
		return (-1);
	r->reason.p = l->len > 12 ? p + 13 : p + 12;
	r->reason.len = l->len > 12 ? l->len - 13 : 0;
	for (i = 0; i < r->reason.len; i++) {
		if (!http_is_vchar((unsigned char)r->reason.p[i]))
			return (-1);
	}
	return (0);
}

/*
 * Parse a response head.  head_req says the request was HEAD (so no
 * body follows whatever the headers say).  Returns 0 or -1.
 */
int
http_response_parse(const char *buf, size_t len, const struct http_limits *lim,
    int head_req, struct http_response *r)
{
	struct http_cursor	c;
	struct http_line	l;
	const struct http_header *te, *cl;

	memset(r, 0, offsetof(struct http_response, h));
	memset(&r->h, 0, offsetof(struct http_head, headers));
	c.p = buf;
	c.end = buf + len;
	http_skip_blank(&c);
	if (http_next_line(&c, &l) == -1 || http_status_line(&l, r) == -1)
		return (-1);
	if (http_headers_parse(&c, lim, &r->h) != 0)
		return (-1);
	te = http_header_find(&r->h, "transfer-encoding");
	cl = http_header_find(&r->h, "content-length");
	if (te != NULL && cl != NULL)
		return (-1);
	if (http_framing(&r->h) != 0) {
		if (te == NULL)
			return (-1);
		/* An unknown coding: the body runs until close. */
		r->h.body = HTTP_BODY_CLOSE;
		r->h.keep_alive = 0;
	} else if (te == NULL && cl == NULL)
		r->h.body = HTTP_BODY_CLOSE;
	if (head_req || r->status < 200 || r->status == 204 || r->status == 304)
		r->h.body = HTTP_BODY_NONE;
	if (r->h.body == HTTP_BODY_CLOSE)
		r->h.keep_alive = 0;
	return (0);
}

/* Start following a chunked body. */
void
http_chunked_init(struct http_chunked *ch)
{
	memset(ch, 0, sizeof *ch);
	ch->state = CH_SIZE;
}

/* Value of a hex digit, or -1. */
int
http_hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return (c - '0');
	if (c >= 'a' && c <= 'f')
		return (c - 'a' + 10);
	if (c >= 'A' && c <= 'F')
		return (c - 'A' + 10);
	return (-1);
}

/* One byte of the chunk-size line. */
static int
http_chunked_size(struct http_chunked *ch, unsigned char c)
{
	int	v;

	if (++ch->line > HTTP_CHUNK_LINE_MAX)
		return (-1);
	if (ch->state == CH_SIZE && (v = http_hexval(c)) >= 0) {
		if (++ch->digits > 15)
			return (-1);
		ch->remain = ch->remain * 16 + v;
		return (0);
	}
	if (ch->digits == 0)
		return (-1);
	if (c == '\r') {
		ch->state = CH_SIZE_LF;
		return (0);
	}
	if (ch->state != CH_EXT && (c == ' ' || c == '\t')) {
		ch->state = CH_BWS;
		return (0);
	}
	if (ch->state != CH_EXT && c != ';')
		return (-1);
	if (c != '\t' && (c < 0x20 || c == 0x7f))
		return (-1);
	ch->state = CH_EXT;
	return (0);
}

/* One byte after the data, or of the trailer section. */
static int
http_chunked_tail(struct http_chunked *ch, unsigned char c)
{
	if (ch->state != CH_DATA_CR && ch->state != CH_DATA_LF &&
	    ++ch->trailer > HTTP_TRAILER_MAX)
		return (-1);
	switch (ch->state) {
	case CH_DATA_CR:
		ch->state = CH_DATA_LF;
		return (c == '\r' ? 0 : -1);
	case CH_DATA_LF:
		ch->state = CH_SIZE;
		ch->line = ch->digits = 0;
		ch->remain = 0;
		return (c == '\n' ? 0 : -1);
	case CH_TRAILER:
		ch->state = c == '\r' ? CH_END_LF : CH_TRAILER_LINE;
		return (c == '\n' || c == '\0' ? -1 : 0);
	case CH_TRAILER_LINE:
		if (c == '\r')
			ch->state = CH_TRAILER_LF;
		return (c == '\n' || c == '\0' ? -1 : 0);
	case CH_TRAILER_LF:
		ch->state = CH_TRAILER;
		return (c == '\n' ? 0 : -1);
	case CH_END_LF:
		ch->state = CH_DONE;
		return (c == '\n' ? 0 : -1);
	}
	return (-1);
}

/* One byte of a chunked body's framing: sizes, line ends, trailers. */
static int
http_chunked_frame(struct http_chunked *ch, unsigned char c)
{
	if (ch->state <= CH_EXT)
		return (http_chunked_size(ch, c));
	if (ch->state == CH_SIZE_LF) {
		if (c != '\n')
			return (-1);
		ch->state = ch->remain > 0 ? CH_DATA : CH_TRAILER;
		return (0);
	}
	return (http_chunked_tail(ch, c));
}

/*
 * Feed bytes of a chunked body.  Returns how many of them belong to the
 * body (fewer than len only when it ended: *done is then set), or -1 when
 * the framing is broken.
 */
ssize_t
http_chunked_feed(struct http_chunked *ch, const void *buf, size_t len,
    int *done)
{
	const unsigned char	*p = buf;
	size_t			 i = 0, n;

	*done = 0;
	while (i < len && ch->state != CH_DONE) {
		if (ch->state == CH_DATA) {
			n = len - i < ch->remain ? len - i : ch->remain;
			i += n;
			if ((ch->remain -= n) == 0)
				ch->state = CH_DATA_CR;
			continue;
		}
		if (http_chunked_frame(ch, p[i]) == -1)
			return (-1);
		i++;
	}
	*done = ch->state == CH_DONE;
	return ((ssize_t)i);
}

/* Follow a chunked body up to where its data starts or stops. */
ssize_t
http_chunked_step(struct http_chunked *ch, const void *buf, size_t len,
    int *data, int *done)
{
	const unsigned char	*p = buf;
	size_t			 i = 0;

	*done = 0;
	if ((*data = ch->state == CH_DATA)) {
		i = len < ch->remain ? len : ch->remain;
		if ((ch->remain -= i) == 0)
			ch->state = CH_DATA_CR;
		return ((ssize_t)i);
	}
	while (i < len && ch->state != CH_DATA && ch->state != CH_DONE) {
		if (http_chunked_frame(ch, p[i]) == -1)
			return (-1);
		i++;
	}
	*done = ch->state == CH_DONE;
	return ((ssize_t)i);
}

/* The reason phrase for the statuses the gateway sends. */
const char *
http_status_text(int status)
{
	switch (status) {
	case 200: return ("OK");
	case 400: return ("Bad Request");
	case 403: return ("Forbidden");
	case 404: return ("Not Found");
	case 405: return ("Method Not Allowed");
	case 408: return ("Request Timeout");
	case 413: return ("Content Too Large");
	case 414: return ("URI Too Long");
	case 431: return ("Request Header Fields Too Large");
	case 501: return ("Not Implemented");
	case 502: return ("Bad Gateway");
	case 503: return ("Service Unavailable");
	case 504: return ("Gateway Timeout");
	case 505: return ("HTTP Version Not Supported");
	}
	return ("Error");
}
