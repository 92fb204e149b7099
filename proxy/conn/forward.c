/*
 * Absolute-form HTTP: one request at a time goes upstream with its body,
 * its response comes back (interim, upgrade or final, then the body as
 * its framing says), and the server is kept for the next request when
 * both sides allow it.  To an upstream proxy a request goes in absolute
 * form with its credentials, and its own refusals come back as ours.
 */
#include "config.h"

#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "lib/digits.h"
#include "proxy/conn/conn-int.h"
#include "proxy/wire/http.h"
#include "proxy/wire/upstreammsg.h"

/*
 * A head built in a buffer of cap bytes; len counts what it needs, so
 * a head that does not fit is built again in one of that size.
 */
struct conn_head {
	char	*p;
	size_t	 cap;
	size_t	 len;
};

/* Append bytes to a head. */
static void
conn_head_add(struct conn_head *h, const char *s, size_t n)
{
	if (h->len + n <= h->cap)
		memcpy(h->p + h->len, s, n);
	h->len += n;
}

/* Append a string to a head. */
static void
conn_head_str(struct conn_head *h, const char *s)
{
	conn_head_add(h, s, strlen(s));
}

/* Append a number to a head. */
static void
conn_head_num(struct conn_head *h, unsigned long long v)
{
	char	 num[DIGITS_MAX], *p = digits(num + sizeof num, v);

	conn_head_add(h, p, num + sizeof num - p);
}

/* Append "name: value\r\n" to a head. */
static void
conn_head_field(struct conn_head *h, const struct http_str *name,
    const struct http_str *value)
{
	conn_head_add(h, name->p, name->len);
	conn_head_add(h, ": ", 2);
	conn_head_add(h, value->p, value->len);
	conn_head_add(h, "\r\n", 2);
}

/*
 * The request line's target: origin-form, or to an upstream proxy the
 * absolute form, for the host decided (a fake address the client used
 * is not what the upstream should dial).
 */
static void
conn_head_target(struct conn *c, struct conn_head *h)
{
	const struct http_request	*r = c->req;

	if (c->upstream != NULL && !c->upstream_open) {
		conn_head_str(h, c->host.kind == HOST_IPV6 ? " http://[" :
		    " http://");
		conn_head_str(h, c->host.text);
		conn_head_str(h, c->host.kind == HOST_IPV6 ? "]:" : ":");
		conn_head_num(h, c->port);
		conn_head_str(h, r->path.len == 0 || r->path.p[0] != '/' ?
		    "/" : "");
	} else
		conn_head_str(h, r->path.len == 0 || r->path.p[0] != '/' ?
		    " /" : " ");
	conn_head_add(h, r->path.p, r->path.len);
}

/* Build the request head as it goes upstream. */
static void
conn_upstream_head(struct conn *c, struct conn_head *h)
{
	const struct http_request	*r = c->req;
	const struct http_header	*hd;
	size_t				 i;

	conn_head_add(h, r->method.p, r->method.len);
	conn_head_target(c, h);
	conn_head_str(h, r->h.minor == 0 ? " HTTP/1.0\r\nHost: " :
	    " HTTP/1.1\r\nHost: ");
	conn_head_add(h, r->authority.p, r->authority.len);
	conn_head_add(h, "\r\n", 2);
	for (i = 0; i < r->h.nheaders; i++) {
		hd = &r->h.headers[i];
		if (hd->hop || http_str_eq(&hd->name, "host") ||
		    http_str_eq(&hd->name, "content-length") ||
		    (c->scrubbing &&
		    http_str_eq(&hd->name, "accept-encoding")))
			continue;
		conn_head_field(h, &hd->name, &hd->value);
	}
	/* A coded body could not be scrubbed (scrub-response.c). */
	if (c->scrubbing)
		conn_head_str(h, "Accept-Encoding: identity\r\n");
	/*
	 * The length as the gateway framed the body, once: a list ("5, 5")
	 * could read otherwise to a lenient origin (", 48" as 0).
	 */
	if (http_header_find(&r->h, "content-length") != NULL) {
		conn_head_str(h, "Content-Length: ");
		conn_head_num(h, (unsigned long long)r->h.length);
		conn_head_add(h, "\r\n", 2);
	}
	if (r->h.upgrade &&
	    (hd = http_header_find(&r->h, "upgrade")) != NULL) {
		conn_head_str(h, "Connection: upgrade\r\nUpgrade: ");
		conn_head_add(h, hd->value.p, hd->value.len);
		conn_head_add(h, "\r\n", 2);
	} else if (r->h.minor == 0)
		conn_head_str(h, "Connection: close\r\n");
	if (c->upstream != NULL && !c->upstream_open &&
	    c->upstream->auth != NULL) {
		conn_head_str(h, "Proxy-Authorization: ");
		conn_head_str(h, c->upstream->auth);
		conn_head_add(h, "\r\n", 2);
	}
	conn_head_str(h, r->h.minor == 0 ? "Via: 1.0 pinhole\r\n\r\n" :
	    "Via: 1.1 pinhole\r\n\r\n");
}

/*
 * Build a head with build() and queue it for a side: straight to the
 * socket when nothing waits before it (conn_send()), or, for the
 * client, after what its output holds.  Returns its length, or -1 when
 * out of memory.
 */
static ssize_t
conn_put_head(struct conn *c, struct bufferevent *to,
    void (*build)(struct conn *, struct conn_head *), int direct)
{
	char		 stack[CONN_HEAD_STACK];
	struct conn_head h = { stack, sizeof stack, 0 };
	char		*heap = NULL;

	build(c, &h);
	if (h.len > h.cap) {
		if ((heap = malloc(h.len)) == NULL)
			return (-1);
		h.p = heap;
		h.cap = h.len;
		h.len = 0;
		build(c, &h);
	}
	if (direct)
		conn_send(to, h.p, h.len);
	else
		evbuffer_add(bufferevent_get_output(to), h.p, h.len);
	if (c->upstream != NULL)
		explicit_bzero(h.p, h.len);	/* it held the credentials */
	free(heap);
	return ((ssize_t)h.len);
}

/* Send the request head upstream and start relaying. */
void
conn_send_request(struct conn *c)
{
	ssize_t	n;

	if (conn_fwd_start(c) == -1 || conn_scrub_start(c) == -1 ||
	    (n = conn_put_head(c, c->server, conn_upstream_head, 1)) == -1) {
		conn_close(c, "out of memory");
		return;
	}
	c->up += n;
	c->state = S_FORWARD;
	c->pending = P_REQUEST;
	c->srv_idle = 0;
	c->req_done = c->req->h.body == HTTP_BODY_NONE;
	c->req_remain = c->req->h.length;
	http_chunked_init(&c->fwd->req_ch);
	c->resp_head_done = c->resp_done = c->resp_got = 0;
	c->last_active = conn_now(c);
	conn_idle_timer(c);
}

/*
 * Relay the body of a message as its framing says.  Returns 1 when the
 * body is complete, 0 when more is to come, -1 on broken framing.
 */
static int
conn_relay_body(struct evbuffer *in, struct evbuffer *out,
    enum http_body body, uint64_t *remain, struct http_chunked *ch,
    int64_t *count)
{
	struct evbuffer_iovec	v;
	ssize_t			n;
	size_t			len;
	int			done = 0;

	while ((len = evbuffer_get_length(in)) > 0 &&
	    evbuffer_get_length(out) < CONN_HIGH) {
		switch (body) {
		case HTTP_BODY_NONE:
			return (1);
		case HTTP_BODY_LENGTH:
			*remain -= conn_move(in, out,
			    len < *remain ? len : *remain, count);
			return (*remain == 0);
		case HTTP_BODY_CLOSE:
			conn_move(in, out, len, count);
			return (0);
		case HTTP_BODY_CHUNKED:
			if (evbuffer_peek(in, -1, NULL, &v, 1) < 1)
				return (0);
			if ((n = http_chunked_feed(ch, v.iov_base, v.iov_len,
			    &done)) == -1)
				return (-1);
			conn_move(in, out, (size_t)n, count);
			if (done)
				return (1);
			break;
		}
	}
	if (body == HTTP_BODY_NONE || (body == HTTP_BODY_LENGTH && *remain == 0))
		return (1);
	return (0);
}

/* Relay what the client has of the request body. */
void
conn_forward_request(struct conn *c)
{
	int	rv;

	if (c->req_done)
		return;
	rv = conn_relay_body(bufferevent_get_input(c->client),
	    bufferevent_get_output(c->server), c->req->h.body, &c->req_remain,
	    &c->fwd->req_ch, &c->up);
	if (rv == -1) {
		if (c->resp_got)
			conn_close(c, "broken chunked request body");
		else
			conn_refuse(c, 400, NULL, "broken chunked body");
		return;
	}
	c->req_done = rv;
}

/* Build the response head as it goes to the client. */
static void
conn_client_head(struct conn *c, struct conn_head *h)
{
	const struct http_response	*r = c->fwd->resp;
	const struct http_header	*hd;
	size_t				 i;

	conn_head_str(h, "HTTP/1.1 ");
	conn_head_num(h, (unsigned long long)r->status);
	conn_head_add(h, " ", 1);
	conn_head_add(h, r->reason.p, r->reason.len);
	conn_head_add(h, "\r\n", 2);
	for (i = 0; i < r->h.nheaders; i++) {
		hd = &r->h.headers[i];
		if (hd->hop || (c->scrub_body &&
		    (http_str_eq(&hd->name, "content-length") ||
		    http_str_eq(&hd->name, "transfer-encoding") ||
		    http_str_eq(&hd->name, "trailer"))))
			continue;
		conn_head_field(h, &hd->name, &hd->value);
	}
	/* A scrubbed body's length is what the replacements made it. */
	if (c->scrub_chunked)
		conn_head_str(h, "Transfer-Encoding: chunked\r\n");
	if (r->status == 101 &&
	    (hd = http_header_find(&r->h, "upgrade")) != NULL) {
		conn_head_str(h, "Connection: upgrade\r\nUpgrade: ");
		conn_head_add(h, hd->value.p, hd->value.len);
		conn_head_add(h, "\r\n", 2);
	} else if (r->status >= 200 && !c->client_ka)
		conn_head_str(h, "Connection: close\r\n");
	conn_head_str(h, r->h.minor == 0 ? "Via: 1.0 pinhole\r\n\r\n" :
	    "Via: 1.1 pinhole\r\n\r\n");
}

/* Switch an upgraded exchange (101) into a tunnel. */
static void
conn_upgraded(struct conn *c)
{
	conn_audit(c, "request", "allow", "upgrade", 0);
	conn_audit_barrier(c);
	c->pending = P_TUNNEL;
	conn_count_tunnel(c, 1);
	c->state = S_TUNNEL;
	conn_http_free(c);
	bufferevent_setwatermark(c->client, EV_READ, 0, 0);
	conn_tunnel_io(c);
}

/*
 * Read a response head from the server.  Returns 1 once a final head
 * has been passed on, 0 to wait for more.
 */
static int
conn_read_response_head(struct conn *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->server);
	size_t		 len, avail, hlen;
	unsigned char	*p;

	len = evbuffer_get_length(in);
	avail = len < CONN_RESP_HEAD_MAX ? len : CONN_RESP_HEAD_MAX;
	if (avail > 0)
		c->resp_got = 1;
	if (avail <= c->fwd->rscan.total)
		return (0);
	p = evbuffer_pullup(in, avail);
	if (p == NULL || http_scan_feed(&c->fwd->rscan, p + c->fwd->rscan.total,
	    avail - c->fwd->rscan.total) == 0) {
		if (p == NULL || avail >= CONN_RESP_HEAD_MAX)
			conn_refuse(c, 502, NULL, "response head too large");
		return (0);
	}
	free(c->fwd->rhead);
	c->fwd->rhead = NULL;
	if (c->fwd->resp == NULL)
		c->fwd->resp = malloc(sizeof *c->fwd->resp);
	if (c->fwd->resp == NULL ||
	    (c->fwd->rhead = malloc(c->fwd->rscan.total)) == NULL) {
		conn_close(c, "out of memory");
		return (0);
	}
	evbuffer_remove(in, c->fwd->rhead, c->fwd->rscan.total);
	hlen = c->fwd->rscan.total;
	if (conn_scrub_head(c, &hlen) == -1) {
		conn_close(c, "out of memory");
		return (0);
	}
	if (http_response_parse(c->fwd->rhead, hlen, &c->set->lim,
	    c->req->is_head, c->fwd->resp) == -1) {
		conn_refuse(c, 502, NULL, "malformed response from upstream");
		return (0);
	}
	http_scan_init(&c->fwd->rscan);
	return (1);
}

/* Handle one response head: interim, upgrade or final. */
static int
conn_response_head(struct conn *c)
{
	struct http_response	*r = c->fwd->resp;
	struct upstream_verdict	 v;
	ssize_t			 n;

	if (c->upstream != NULL && !c->upstream_open) {
		upstream_answer_read(r, 0, &v);
		if (v.answer != UPSTREAM_RELAY) {
			conn_upstream_refuse(c, &v);
			return (-1);
		}
	}
	if (r->status == 101 && !c->req->h.upgrade) {
		conn_refuse(c, 502, NULL, "unexpected upgrade from upstream");
		return (-1);
	}
	if (r->status >= 200) {
		c->status = r->status;
		c->resp_head_done = 1;
		c->client_ka = c->client_ka && r->h.body != HTTP_BODY_CLOSE &&
		    !c->set->stopping;
		c->fwd->resp_remain = r->h.length;
		http_chunked_init(&c->fwd->resp_ch);
		if (conn_scrub_check(c) == -1)
			return (-1);
	}
	if ((n = conn_put_head(c, c->client, conn_client_head, 0)) == -1) {
		conn_close(c, "out of memory");
		return (-1);
	}
	c->down += n;
	if (r->status == 101) {
		c->status = 101;
		conn_upgraded(c);
		return (-1);
	}
	return (0);
}

/*
 * This exchange is over: log it, keep or drop the server, go on.  When
 * the client's output held bytes before the last ones were added
 * (queued), the line is written now (conn_audit_barrier()).
 */
static void
conn_exchange_done(struct conn *c, size_t queued)
{
	int	reuse;

	conn_audit_pending(c, NULL);
	if (queued > 0)
		conn_audit_barrier(c);
	reuse = c->fwd->resp->h.keep_alive && c->req_done &&
	    c->fwd->resp->h.body != HTTP_BODY_CLOSE &&
	    evbuffer_get_length(bufferevent_get_input(c->server)) == 0;
	if (reuse)
		c->srv_idle = 1;
	else
		conn_server_free(c);
	conn_drain(c, !c->client_ka || !c->req_done);
}

/* Relay the response: its head, then its body. */
void
conn_forward_response(struct conn *c)
{
	size_t	queued = conn_outlen(c->client);
	int	rv;

	while (!c->resp_head_done) {
		if (conn_read_response_head(c) == 0)
			return;
		if (conn_response_head(c) == -1)
			return;
	}
	if (c->resp_done)
		return;
	if (c->scrub_body)
		rv = conn_scrub_body(c, 0);
	else
		rv = conn_relay_body(bufferevent_get_input(c->server),
		    bufferevent_get_output(c->client), c->fwd->resp->h.body,
		    &c->fwd->resp_remain, &c->fwd->resp_ch, &c->down);
	if (rv == -1) {
		conn_close(c, "broken chunked response body");
		return;
	}
	if ((c->resp_done = rv))
		conn_exchange_done(c, queued);
}

/*
 * The server closed while an exchange was under way: finish a response
 * that ends with the connection, or close mid-response.  Returns 0 when
 * nothing of the response had come (retry, or refuse).
 */
int
conn_server_gone(struct conn *c)
{
	size_t	queued = conn_outlen(c->client);

	if (c->resp_head_done && c->fwd->resp->h.body == HTTP_BODY_CLOSE) {
		if (c->scrub_body)
			conn_scrub_body(c, 1);
		else
			conn_move(bufferevent_get_input(c->server),
			    bufferevent_get_output(c->client),
			    evbuffer_get_length(bufferevent_get_input(
			    c->server)), &c->down);
		c->resp_done = 1;
		conn_exchange_done(c, queued);
		return (1);
	}
	if (c->resp_head_done) {
		conn_close(c, "upstream closed mid-response");
		return (1);
	}
	return (0);
}
