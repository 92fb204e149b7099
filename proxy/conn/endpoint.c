/*
 * The agent endpoint (/pinhole/...) on the proxy port: read the body,
 * let proxy/escalate/agent.c answer, or hold a long poll.
 */
#include "config.h"

#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "proxy/conn/conn-int.h"
#include "proxy/escalate/agent.h"
#include "proxy/wire/http.h"

/* Send the agent endpoint's answer. */
void
conn_agent_send(struct conn *c, const struct agent_response *resp)
{
	struct evbuffer	*out = bufferevent_get_output(c->client);
	int		 close_after = !c->req->h.keep_alive;

	c->status = resp->status;
	conn_audit(c, "request", NULL, "agent-endpoint", 0);
	evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n"
	    "Content-Length: %zu\r\nCache-Control: no-store\r\n"
	    "Connection: %s\r\n\r\n", resp->status,
	    http_status_text(resp->status), resp->ctype, resp->body.len,
	    close_after ? "close" : "keep-alive");
	if (!c->req->is_head && resp->body.len > 0)
		evbuffer_add(out, resp->body.buf, resp->body.len);
	conn_drain(c, close_after);
}

/* Point an agent_str at a header's value, or leave it empty. */
static void
conn_agent_header(struct conn *c, const char *name,
    struct agent_str *out)
{
	const struct http_header	*h = http_header_find(&c->req->h, name);

	out->p = h != NULL ? h->value.p : "";
	out->len = h != NULL ? h->value.len : 0;
}

/* The whole body is in: answer, or hold for a long poll. */
void
conn_agent_body(struct conn *c)
{
	struct evbuffer		*in = bufferevent_get_input(c->client);
	struct agent_request	 ar;
	struct agent_response	 resp;
	const struct http_str	*t;
	int			 wait;

	if (evbuffer_get_length(in) < c->req_remain)
		return;
	memset(&ar, 0, sizeof ar);
	ar.method.p = c->req->method.p;
	ar.method.len = c->req->method.len;
	t = c->req->form == HTTP_FORM_ORIGIN ? &c->req->target :
	    &c->req->path;
	ar.target.p = t->p;
	ar.target.len = t->len;
	conn_agent_header(c, "Content-Type", &ar.content_type);
	conn_agent_header(c, "Accept", &ar.accept);
	ar.body.len = c->req_remain;
	ar.body.p = c->req_remain > 0 ?
	    (const char *)evbuffer_pullup(in, c->req_remain) : "";
	ar.sandbox = c->sandbox;
	agent_handle(c->set->esc, &ar, &resp);
	evbuffer_drain(in, c->req_remain);
	c->req_remain = 0;
	wait = resp.wait;
	if (wait > 0 && (c->await = agent_wait_start(c->set->esc, &resp,
	    c->set->ev->agent_waited, c)) != NULL) {
		agent_response_free(&resp);
		conn_timer(c, wait + 10);
		return;
	}
	conn_agent_send(c, &resp);
	agent_response_free(&resp);
}

/* A request for the agent endpoint: read its body first. */
void
conn_agent_start(struct conn *c)
{
	const struct http_request	*r = c->req;

	if (r->h.body == HTTP_BODY_CHUNKED) {
		conn_refuse(c, 411, NULL, "send the body with a "
		    "Content-Length");
		return;
	}
	if (r->h.body == HTTP_BODY_LENGTH && r->h.length > AGENT_BODY_MAX) {
		conn_refuse(c, 413, NULL, "body too long");
		return;
	}
	c->req_remain = r->h.body == HTTP_BODY_LENGTH ? r->h.length : 0;
	c->state = S_AGENT;
	conn_timer(c, c->set->handshake_timeout);
	conn_agent_body(c);
}
