/*
 * A request head: read and parse it, then see what it asks for (the
 * agent endpoint, the info page, or a host to decide; on a bound
 * connection, a request for its host).
 */
#include "config.h"

#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "proxy/audit/audit.h"
#include "proxy/conn/conn-int.h"
#include "proxy/escalate/agent.h"
#include "proxy/wire/http.h"
#include "rules/rules.h"

/* The short page for requests addressed to the proxy itself. */
static void
conn_info_page(struct conn *c)
{
	const char	*about = c->set->about;

	c->status = 200;
	conn_audit(c, "request", NULL, "info-page", 0);
	conn_reply(c, 200, NULL, 0,
	    "This is pinhole, a default-deny HTTP proxy: it lets programs\n"
	    "reach only the hosts its policy allows, and logs every attempt.\n"
	    "\n"
	    "Use it with HTTPS_PROXY / HTTP_PROXY set to this address.\n"
	    "Policy: %s\n"
	    "\n"
	    "A refused request gets 403 with a Pinhole-Error header saying\n"
	    "why.  To ask for a host:\n"
	    "    pinhole request HOST:PORT --reason \"why it is needed\"\n",
	    about != NULL ? about : "what the policy says (default: nothing)");
}

/*
 * Is an absolute-form request addressed to the proxy itself (as a client
 * with HTTP_PROXY set sends $PINHOLE_AGENT/pinhole/...)?  Its host and
 * port are the address the client connected to.
 */
static int
conn_to_self(struct conn *c)
{
	struct sockaddr_storage	ss;
	socklen_t		len = sizeof ss;
	struct host		h;
	const char		*errstr;
	char			text[INET6_ADDRSTRLEN];
	uint16_t		port;
	const void		*a;

	if (getsockname(bufferevent_getfd(c->client), (struct sockaddr *)&ss,
	    &len) == -1 || host_parse(c->req->host.p, c->req->host.len, &h,
	    &errstr) == -1 || h.kind == HOST_NAME)
		return (0);
	if (ss.ss_family == AF_INET) {
		a = &((struct sockaddr_in *)&ss)->sin_addr;
		port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	} else {
		a = &((struct sockaddr_in6 *)&ss)->sin6_addr;
		port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	}
	if (inet_ntop(ss.ss_family, a, text, sizeof text) == NULL)
		return (0);
	return (port == c->req->port && strcmp(text, h.text) == 0);
}

/* A request head has been parsed: decide it and set it going. */
static void
conn_request(struct conn *c)
{
	struct http_request	*r = c->req;
	const char		*errstr;

	event_base_gettimeofday_cached(c->set->base, &c->start);
	if (conn_audit_ready(c) == -1)
		return;
	if (c->bound) {
		if (conn_bound_request(c) == -1)
			return;
		c->client_ka = r->h.keep_alive;
		if (conn_decide(c) != 0)
			return;
		conn_go(c);
		return;
	}
	if (c->set->esc != NULL && ((r->form == HTTP_FORM_ORIGIN &&
	    agent_match(r->target.p, r->target.len)) ||
	    (r->form == HTTP_FORM_ABSOLUTE && !r->is_connect &&
	    agent_match(r->path.p, r->path.len) && conn_to_self(c)))) {
		conn_agent_start(c);
		return;
	}
	if (r->form == HTTP_FORM_ORIGIN || r->form == HTTP_FORM_ASTERISK) {
		conn_info_page(c);
		return;
	}
	c->via = r->is_connect ? "connect" : "forward";
	if (host_parse(r->host.p, r->host.len, &c->host, &errstr) == -1) {
		conn_refuse(c, 400, NULL, errstr);
		return;
	}
	if (conn_unfake(c) == -1)
		return;
	c->have_host = 1;
	c->port = r->port;
	c->client_ka = !r->is_connect && r->h.keep_alive;
	if (!r->is_connect)
		conn_keep_path(c, &r->path);
	if (conn_decide(c) != 0)
		return;
	if (c->inspect && r->is_connect)
		conn_bound_connect(c);
	else
		conn_go(c);
}

/*
 * Keep a parsed request with room for its own headers only.  The
 * parser's struct has a slot for each of HTTP_HEADERS_MAX headers (10
 * KiB); a request has a few, and the copy is never used past
 * h.headers[h.nheaders].  Its strings still point into s->head.
 */
static struct http_request *
conn_req_copy(const struct http_request *r)
{
	struct http_request	*copy;
	size_t			 len;

	len = offsetof(struct http_request, h.headers) +
	    r->h.nheaders * sizeof r->h.headers[0];
	if ((copy = malloc(len)) != NULL)
		memcpy(copy, r, len);
	return (copy);
}

/* Look for a complete request head in the client's input. */
void
conn_read_head(struct conn *c)
{
	struct evbuffer		*in = bufferevent_get_input(c->client);
	struct http_request	 r;
	size_t			 len, avail;
	unsigned char		*p;
	int			 st;

	if (c->tls_wait && conn_bound_tls(c) != 1)
		return;
	len = evbuffer_get_length(in);
	avail = len < c->set->lim.max_head ? len : c->set->lim.max_head;
	if (avail <= c->scan.total)
		return;
	if ((p = evbuffer_pullup(in, avail)) == NULL) {
		conn_close(c, "out of memory");
		return;
	}
	if (http_scan_feed(&c->scan, p + c->scan.total,
	    avail - c->scan.total) == 0) {
		if (avail >= c->set->lim.max_head)
			conn_refuse(c, 431, NULL, "request head too large");
		return;
	}
	free(c->head);
	free(c->req);
	c->req = NULL;
	if ((c->head = malloc(c->scan.total + 1)) == NULL) {
		conn_close(c, "out of memory");
		return;
	}
	evbuffer_remove(in, c->head, c->scan.total);
	c->head[c->scan.total] = '\0';
	if ((st = http_request_parse(c->head, c->scan.total, &c->set->lim,
	    &r)) != 0) {
		conn_refuse(c, st, NULL, st == 431 ?
		    "request head too large" : st == 501 ?
		    "not supported by this proxy" : "malformed request");
		return;
	}
	if ((c->req = conn_req_copy(&r)) == NULL) {
		conn_close(c, "out of memory");
		return;
	}
	c->have_req = 1;
	if (!c->req->is_connect) {
		len = c->req->method.len < sizeof c->method - 1 ?
		    c->req->method.len : sizeof c->method - 1;
		memcpy(c->method, c->req->method.p, len);
		c->method[len] = '\0';
	}
	conn_request(c);
}
