/*
 * Answers of our own: a status with a Pinhole-Error label for programs
 * and a text for people, a refusal (audited; a captured connection gets
 * a RST instead unless it spoke HTTP, a SOCKS5 one its reply code),
 * then S_REPLY until it drains.
 */
#include "config.h"

#include <sys/socket.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "proxy/audit/audit.h"
#include "proxy/conn/conn-int.h"
#include "proxy/escalate/escalate.h"
#include "proxy/wire/http.h"
#include "proxy/wire/socks5.h"

/* Once the client's output drains, close or go on (the pump's S_REPLY). */
void
conn_drain(struct conn *c, int close_after)
{
	c->state = S_REPLY;
	c->close_after = c->close_after || close_after;
	conn_idle_timer(c);
}

/* The label of a refusal for programs (Pinhole-Error). */
static const char *
conn_perr(int status)
{
	switch (status) {
	case 502:
		return ("bad-gateway");
	case 504:
		return ("timeout");
	default:
		return (NULL);
	}
}

/*
 * Answer the client ourselves: status, a Pinhole-Error label for
 * programs and a text for people.  Closes afterwards when close_after
 * or when the request left a body unread.
 */
void
conn_reply(struct conn *c, int status, const char *perr,
    int close_after, const char *fmt, ...)
{
	struct evbuffer	*out = bufferevent_get_output(c->client);
	char		 body[2048], hint[HOST_TEXT_LEN + 32];
	va_list		 ap;
	size_t		 queued = conn_outlen(c->client);
	int		 n;

	va_start(ap, fmt);
	n = vsnprintf(body, sizeof body, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof body)
		n = strlen(body);
	if (!c->have_req || c->req->h.body != HTTP_BODY_NONE ||
	    !c->req->h.keep_alive || (c->req->is_connect && status != 200) ||
	    status == 400 || status == 431)
		close_after = 1;
	c->status = status;
	evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\n"
	    "Content-Type: text/plain; charset=utf-8\r\n"
	    "Content-Length: %d\r\nCache-Control: no-store\r\n",
	    status, http_status_text(status), n);
	if (perr == NULL)
		perr = conn_perr(status);
	if (perr != NULL)
		evbuffer_add_printf(out, "Pinhole-Error: %s\r\n", perr);
	if (status == 403 && conn_grantable(c, perr, hint, sizeof hint))
		evbuffer_add_printf(out, "Pinhole-Request: %s\r\n", hint);
	evbuffer_add_printf(out, "Connection: %s\r\n\r\n",
	    close_after ? "close" : "keep-alive");
	if (!c->have_req || !c->req->is_head)
		evbuffer_add(out, body, n);
	if (queued > 0)
		conn_audit_barrier(c);
	conn_drain(c, close_after);
}

/* The request refused, "GET /path", or "" when a whole connection is. */
static void
conn_request_text(const struct conn *c, char *buf, size_t len)
{
	if (c->method[0] != '\0' && conn_path(c)[0] != '\0')
		snprintf(buf, len, "%s %s", c->method, conn_path(c));
	else if (len > 0)
		buf[0] = '\0';
}

/* Did a rule's request checks refuse (which a grant lifts)? */
static int
conn_constrained(const char *perr)
{
	return (perr != NULL && strcmp(perr, "constraint") == 0);
}

/*
 * Answer 403 for the host: why, then the commands that ask for it and
 * wait for the answer, or, when no grant can help, what the policy would have to change.
 */
static void
conn_forbid(struct conn *c, const char *perr, int close_after,
    const char *why)
{
	char	target[HOST_TEXT_LEN + 16], req[ESCALATE_WHAT_LEN];
	char	what[ESCALATE_WHAT_LEN + HOST_TEXT_LEN + 32];

	escalate_target(&c->host, c->port, target, sizeof target);
	conn_request_text(c, req, sizeof req);
	snprintf(what, sizeof what, "%s%s%s", req, req[0] != '\0' ? " on " :
	    "", target);
	if (!conn_grantable(c, perr, NULL, 0))
		conn_reply(c, 403, perr, close_after,
		    "pinhole: %s is not allowed: %s.\n", what,
		    conn_fix(c) != NULL ? conn_fix(c) : why);
	else
		conn_reply(c, 403, perr, close_after,
		    "pinhole: %s is not allowed: %s.\n\n"
		    "To ask for access%s%s%s, run:\n"
		    "    pinhole request %s --reason \"why it is needed\"\n"
		    "It prints the request's ID; wait for the answer with:\n"
		    "    pinhole request --status ID --wait\n",
		    what, why, conn_constrained(perr) ? " (an approval "
		    "lifts the request checks of the rule " : "",
		    conn_constrained(perr) ? conn_rule(c) : "",
		    conn_constrained(perr) ? " for this host and port)" : "",
		    target);
}

/*
 * Tell the escalation queue of a refusal by the policy (403), for the
 * sandbox's ring and its run's stderr: what, why, and whether a grant
 * could lift it or what the policy would have to change.
 */
static void
conn_refused(struct conn *c, int status, const char *perr, const char *why)
{
	struct sandbox_refusal	f;

	if (status != 403 || !c->have_host || c->set->esc == NULL)
		return;
	memset(&f, 0, sizeof f);
	f.host = c->host;
	f.port = c->port;
	snprintf(f.via, sizeof f.via, "%s", c->via != NULL ? c->via : "");
	conn_request_text(c, f.what, sizeof f.what);
	snprintf(f.why, sizeof f.why, "%s", why);
	snprintf(f.fix, sizeof f.fix, "%s",
	    conn_fix(c) != NULL ? conn_fix(c) : "");
	f.ask = conn_grantable(c, perr, NULL, 0);
	escalate_refused(c->set->esc, c->sandbox, &f);
}

/* The SOCKS5 reply code for a refusal (RFC 1928, section 6). */
static uint8_t
conn_socks_code(const struct conn *c, int status, const char *perr)
{
	if (status == 403)
		return (SOCKS_REP_NOT_ALLOWED);
	if (perr != NULL && (strcmp(perr, "resolve-failed") == 0 ||
	    strcmp(perr, "timeout") == 0))
		return (SOCKS_REP_HOST_UNREACH);
	if (perr == NULL || strcmp(perr, "connect-failed") != 0)
		return (SOCKS_REP_FAILURE);
	switch (c->dial_err) {
	case 0:
	case ECONNREFUSED:
		return (SOCKS_REP_REFUSED);
	case ENETUNREACH:
		return (SOCKS_REP_NET_UNREACH);
	case EHOSTUNREACH:
	case ETIMEDOUT:
		return (SOCKS_REP_HOST_UNREACH);
	default:
		return (SOCKS_REP_FAILURE);
	}
}

/* Refuse a request: audit it, then tell the client. */
void
conn_refuse(struct conn *c, int status, const char *perr,
    const char *why)
{
	const char	*event = !c->bound && c->via != NULL &&
	    strcmp(c->via, "connect") == 0 ? "connect" : "request";

	if (c->transparent && !c->bound) {
		conn_transparent_refuse(c, status, perr, why);
		return;
	}
	conn_refused(c, status, perr, why);
	if (c->socks && !c->bound) {
		conn_socks_refuse(c, status, perr != NULL ? perr : why,
		    conn_socks_code(c, status, perr));
		return;
	}
	if (c->state == S_FORWARD)
		conn_server_free(c);	/* it holds half an exchange */
	c->pending = P_NONE;
	c->status = status;
	conn_audit(c, event, status < 500 ? "deny" : "allow",
	    perr != NULL ? perr : why, CONN_AUDIT_REFUSAL);
	if (status == 403 && c->have_host)
		conn_forbid(c, perr, 0, why);
	else if (c->have_host)
		conn_reply(c, status, perr, 0, "pinhole: %s:%u: %s.\n",
		    c->host.text, c->port, why);
	else
		conn_reply(c, status, perr, 0, "pinhole: %s.\n", why);
}

/*
 * Refuse anything new while the audit log cannot be written (unless
 * --log-fail=open): 503, or a captured connection closed.  The line is
 * counted as lost.  Returns -1 when refused.
 */
int
conn_audit_ready(struct conn *c)
{
	if (audit_ready(c->set->audit))
		return (0);
	c->status = 503;
	conn_audit(c, "connect", "deny", "audit-log-unwritable", 0);
	if (c->transparent) {
		c->reset = 1;
		conn_close(c, "the audit log cannot be written");
		return (-1);
	}
	if (c->socks) {
		conn_socks_send(c, SOCKS_REP_FAILURE);
		conn_drain(c, 1);
		return (-1);
	}
	conn_reply(c, 503, "audit-log-unwritable", 1, "pinhole: the audit "
	    "log cannot be written, so no new connection is let through "
	    "(--log-fail=closed).\n");
	return (-1);
}

/*
 * Refuse a captured connection: audit it, then answer 403 when it spoke
 * HTTP and nothing was dialed yet, else close at once with a RST (the
 * protocol is not ours to speak).
 */
void
conn_transparent_refuse(struct conn *c, int status, const char *perr,
    const char *why)
{
	conn_refused(c, status, perr, why);
	conn_audit(c, "connect", status < 500 ? "deny" : "allow",
	    perr != NULL ? perr : why, CONN_AUDIT_REFUSAL);
	if (c->sniff_proto == SNI_PROTO_HTTP && c->server == NULL &&
	    c->state != S_TUNNEL && status == 403) {
		c->pending = P_NONE;
		conn_forbid(c, perr, 1, why);
		return;
	}
	c->reset = 1;
	conn_close(c, perr != NULL ? perr : why);
}

/*
 * Send a SOCKS5 client the reply to its request: rep, and on success
 * the gateway's own address of the upstream socket (zeros otherwise).
 * Before the request, a refusal is the answer to the greeting (no
 * acceptable method) or to the credentials (failure).
 */
void
conn_socks_send(struct conn *c, uint8_t rep)
{
	struct sockaddr_storage	ss;
	socklen_t		len = sizeof ss;
	uint8_t			buf[SOCKS_REPLY_MAX];
	size_t			n = 2;

	memset(&ss, 0, sizeof ss);
	if (c->socks_phase == SOCKS_HELLO) {
		buf[0] = SOCKS_VERSION;
		buf[1] = SOCKS_METHOD_REFUSED;
	} else if (c->socks_phase == SOCKS_AUTH) {
		buf[0] = SOCKS_AUTH_VERSION;
		buf[1] = SOCKS_REP_FAILURE;
	} else {
		if (rep != SOCKS_REP_OK || c->server == NULL ||
		    getsockname(bufferevent_getfd(c->server),
		    (struct sockaddr *)&ss, &len) == -1)
			ss.ss_family = AF_UNSPEC;
		n = socks_reply_build(rep, (struct sockaddr *)&ss, buf);
	}
	conn_send_client(c, buf, n);
}

/*
 * Refuse a SOCKS5 client: audit it as a connect (a request the policy
 * denies names how to ask in the line: the client gets only the code),
 * send the reply code, close once it has drained.
 */
void
conn_socks_refuse(struct conn *c, int status, const char *reason,
    uint8_t rep)
{
	c->pending = P_NONE;
	conn_audit(c, "connect", status < 500 ? "deny" : "allow", reason,
	    CONN_AUDIT_REFUSAL);
	conn_server_free(c);
	conn_socks_send(c, rep);
	conn_drain(c, 1);
}
