/*
 * One client connection: read a request head, decide it, resolve and
 * vet the addresses, dial, then either tunnel bytes (CONNECT) or relay
 * one request and its response at a time (absolute-form HTTP), with
 * keep-alive on both sides.
 *
 * The session owns both bufferevents, its timer, its resolver query and
 * its pending audit line.  session_close() is the one teardown; the
 * struct itself is freed later by the gateway's reaper, so callers may
 * still look at s->dead after closing.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/time.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "cli/log.h"
#include "proxy/agent.h"
#include "proxy/audit.h"
#include "proxy/dns.h"
#include "proxy/pipebuf.h"
#include "proxy/escalate.h"
#include "proxy/resolver.h"
#include "proxy/session.h"
#include "proxy/transparent.h"
#include "rules/grants.h"
#include "rules/rules.h"

#define SESSION_HIGH	(256 * 1024)	/* stop reading the other side */
#define SESSION_LOW	(64 * 1024)	/* and start again */
#define SESSION_RESP_HEAD_MAX	(64 * 1024)
#define SESSION_TUNNEL_IO	(256 * 1024)	/* per read/write syscall */
#define SESSION_SPLICE_AFTER	(64 * 1024)	/* tunnel bytes before splicing */
#define SESSION_PIPE		(256 * 1024)	/* kernel buffer per direction */
#define SESSION_SPLICE_ROUNDS	4		/* per callback, then yield */
#define SESSION_ESTABLISHED	"HTTP/1.1 200 Connection established\r\n\r\n"

enum session_state {
	S_HEAD,			/* reading a request head */
	S_SNIFF,		/* captured: waiting for the first bytes */
	S_RESOLVE,		/* waiting for the resolver */
	S_DIAL,			/* connecting to one vetted address */
	S_FORWARD,		/* relaying one request and its response */
	S_TUNNEL,		/* CONNECT: bytes both ways */
	S_REPLY,		/* sending our own answer */
	S_AGENT,		/* agent endpoint: body, or a long poll */
	S_ASK			/* ask mode: held for a person's decision */
};

enum session_pending {
	P_NONE,
	P_TUNNEL,		/* a "close" line is owed */
	P_REQUEST		/* a "request" line is owed */
};

struct session {
	struct gateway		*gw;
	TAILQ_ENTRY(session)	 entry;
	unsigned long long	 id;
	int			 refs;
	int			 dead;
	enum session_state	 state;
	struct bufferevent	*client;
	struct bufferevent	*server;
	struct event		*timer;
	struct resolver_query	*query;
	char			 client_addr[INET6_ADDRSTRLEN + 8];
	struct timeval		 start;
	time_t			 last_active;
	int			 nrequests;

	/* The request being handled. */
	struct http_scan	 scan;
	char			*head;
	struct http_request	*req;
	int			 have_req;
	char			 method[32];
	struct host		 host;
	uint16_t		 port;
	int			 have_host;
	const char		*via;
	char			 rule[512];
	struct resolver_addr	*addrs;		/* vetted, to dial in turn */
	size_t			 naddrs;
	size_t			 next_addr;
	char			 addr[INET6_ADDRSTRLEN];
	int			 dial_err;
	int			 dial_timeouts;
	int			 client_ka;
	int			 close_after;
	int			 status;
	int64_t			 up;
	int64_t			 down;
	enum session_pending	 pending;

	/* Escalation. */
	struct agent_wait	*await;		/* a long poll */
	struct escalate_waiter	*ask;		/* a held connection */
	char			 grant_id[GRANT_ID_LEN];
	char			 fix[ESCALATE_FIX_LEN];	/* no grant can help */

	/* Forwarding. */
	int			 reused;
	int			 req_done;
	uint64_t		 req_remain;
	struct http_chunked	 req_ch;
	struct http_scan	 rscan;
	char			*rhead;
	struct http_response	*resp;
	int			 resp_head_done;
	int			 resp_done;
	int			 resp_got;
	uint64_t		 resp_remain;
	struct http_chunked	 resp_ch;
	char			*srv_name;	/* what an idle server is for */
	uint16_t		 srv_port;
	int			 srv_idle;

	/* Tunnel. */
	int			 client_eof;
	int			 server_eof;
	int			 client_shut;
	int			 server_shut;

	/* Transparent capture. */
	int			 transparent;	/* from a capture listener */
	int			 sniffed;	/* first bytes judged, or moot */
	int			 sniff_armed;	/* their deadline is set */
	size_t			 sniff_need;
	enum sni_proto		 sniff_proto;
	const char		*name_from;	/* fake-ip, sni or host */
	char			 dst[INET6_ADDRSTRLEN];	/* connected to */
	char			 note[SNI_NAME_MAX + 64];	/* detail */
	int			 reset;		/* close with a RST */
	int			 splice_tried;
	int			 spliced;	/* bytes move by splice(2) */
	struct pipebuf		 up_pipe;	/* client to server */
	struct pipebuf		 down_pipe;	/* server to client */
	struct event		*cev;		/* edge-triggered, both ways */
	struct event		*sev;
};

static void	session_close(struct session *, const char *);
static void	session_pump(struct session *);
static void	session_dial_next(struct session *);
static void	session_head_start(struct session *);
static void	session_tunnel_io(struct session *);
static void	session_agent_body(struct session *);
static void	session_go(struct session *);
static void	session_client_read_cb(struct bufferevent *, void *);
static void	session_client_write_cb(struct bufferevent *, void *);
static void	session_client_event_cb(struct bufferevent *, short, void *);
static void	session_server_read_cb(struct bufferevent *, void *);
static void	session_server_write_cb(struct bufferevent *, void *);
static void	session_server_event_cb(struct bufferevent *, short, void *);
static void	session_timer_cb(evutil_socket_t, short, void *);
static void	session_transparent_start(struct session *, int);
static void	session_transparent_go(struct session *);
static void	session_transparent_refuse(struct session *, int,
		    const char *, const char *);
static int	session_sniff(struct session *);
static void	session_splice_cb(evutil_socket_t, short, void *);
static void	session_send(struct bufferevent *, const void *, size_t);

/* Seconds on the event loop's clock. */
static time_t
session_now(struct session *s)
{
	struct timeval	tv;

	event_base_gettimeofday_cached(s->gw->base, &tv);
	return (tv.tv_sec);
}

/* Milliseconds since the current exchange or tunnel started. */
static int64_t
session_ms(struct session *s)
{
	struct timeval	now, d;

	event_base_gettimeofday_cached(s->gw->base, &now);
	timersub(&now, &s->start, &d);
	return ((int64_t)d.tv_sec * 1000 + d.tv_usec / 1000);
}

/* Arm the session's one timer. */
static void
session_timer(struct session *s, int seconds)
{
	struct timeval	tv = { seconds, 0 };

	if (seconds <= 0)
		evtimer_del(s->timer);
	else
		evtimer_add(s->timer, &tv);
}

/* Write one audit line about this session. */
static void
session_audit(struct session *s, const char *event, const char *verdict,
    const char *reason, int bytes)
{
	struct audit_event	e;
	char			hint[HOST_TEXT_LEN + 32];

	if (s->gw->audit == NULL)
		return;
	audit_event_init(&e);
	e.event = event;
	e.verdict = verdict;
	e.reason = reason;
	e.session = s->gw->cfg.session;
	e.client = s->client_addr;
	e.host = s->have_host ? s->host.text : NULL;
	e.port = s->have_host ? s->port : -1;
	e.addr = s->addr[0] != '\0' ? s->addr : NULL;
	e.via = s->via;
	e.name_from = s->name_from;
	e.rule = s->rule[0] != '\0' ? s->rule : NULL;
	e.status = s->status > 0 ? s->status : -1;
	e.bytes_up = bytes ? s->up : -1;
	e.bytes_down = bytes ? s->down : -1;
	e.ms = bytes ? session_ms(s) : -1;
	/* The method only: targets may carry secrets. */
	if (s->note[0] != '\0')
		e.detail = s->note;
	else if (s->method[0] != '\0')
		e.detail = s->method;
	/* A refusal a grant could lift names the command to ask for one. */
	if (verdict != NULL && strcmp(verdict, "deny") == 0 && s->have_host &&
	    s->fix[0] == '\0' && reason != NULL &&
	    (strcmp(reason, "denied-by-policy") == 0 ||
	    strcmp(reason, "ip-literal") == 0 || strcmp(reason, "port") == 0)) {
		escalate_hint(&s->host, s->port, hint, sizeof hint);
		e.ask = hint;
	}
	audit_write(s->gw->audit, &e);
}

/* Write the line owed for a tunnel or an exchange, once. */
static void
session_audit_pending(struct session *s, const char *reason)
{
	enum session_pending	p = s->pending;

	s->pending = P_NONE;
	if (p == P_TUNNEL)
		session_audit(s, "close", NULL, reason, 1);
	else if (p == P_REQUEST)
		session_audit(s, "request", "allow", reason, 1);
}

/* Drop the upstream connection. */
static void
session_server_free(struct session *s)
{
	if (s->server != NULL)
		bufferevent_free(s->server);
	s->server = NULL;
	free(s->srv_name);
	s->srv_name = NULL;
	s->srv_idle = 0;
	s->server_eof = s->server_shut = 0;
}

/* Stop splicing: drop the events, close the pipes. */
static void
session_splice_free(struct session *s)
{
	if (s->cev != NULL)
		event_free(s->cev);
	if (s->sev != NULL)
		event_free(s->sev);
	s->cev = s->sev = NULL;
	pipebuf_close(&s->up_pipe);
	pipebuf_close(&s->down_pipe);
	s->spliced = 0;
}

/* Tear the session down: the one way out. */
static void
session_close(struct session *s, const char *reason)
{
	struct gateway	*gw = s->gw;

	if (s->dead)
		return;
	log_debug("%s: #%llu %s: %s", __func__, s->id, s->client_addr,
	    reason);
	session_audit_pending(s, reason);
	s->dead = 1;
	session_splice_free(s);
	agent_wait_cancel(s->await);
	s->await = NULL;
	escalate_wait_cancel(s->ask);
	s->ask = NULL;
	if (s->query != NULL) {
		resolver_cancel(s->query);
		s->query = NULL;
		s->refs--;
	}
	session_server_free(s);
	if (s->client != NULL && s->reset) {
		struct linger	l = { 1, 0 };

		setsockopt(bufferevent_getfd(s->client), SOL_SOCKET,
		    SO_LINGER, &l, sizeof l);
	}
	if (s->client != NULL)
		bufferevent_free(s->client);
	s->client = NULL;
	if (s->timer != NULL)
		event_free(s->timer);
	s->timer = NULL;
	TAILQ_REMOVE(&gw->sessions, s, entry);
	TAILQ_INSERT_TAIL(&gw->dead, s, entry);
	event_active(gw->reaper, EV_TIMEOUT, 0);
}

/*
 * Drop the parsed request and response, the heads they point into and
 * the addresses to dial: about 20 KiB that an open tunnel no longer
 * needs.
 */
static void
session_http_free(struct session *s)
{
	free(s->head);
	free(s->rhead);
	free(s->req);
	free(s->resp);
	free(s->addrs);
	s->head = s->rhead = NULL;
	s->req = NULL;
	s->resp = NULL;
	s->addrs = NULL;
	s->naddrs = s->next_addr = 0;
	s->have_req = 0;
}

/* Free a dead session's memory. */
static void
session_free(struct session *s)
{
	session_http_free(s);
	free(s);
}

/* Text of a sockaddr as "addr:port" ("[v6]:port"). */
static void
session_sockaddr_text(const struct sockaddr *sa, char *buf, size_t len)
{
	char	a[INET6_ADDRSTRLEN] = "?";

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		inet_ntop(AF_INET, &in->sin_addr, a, sizeof a);
		snprintf(buf, len, "%s:%u", a, ntohs(in->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 =
		    (const struct sockaddr_in6 *)sa;

		inet_ntop(AF_INET6, &in6->sin6_addr, a, sizeof a);
		snprintf(buf, len, "[%s]:%u", a, ntohs(in6->sin6_port));
	} else
		snprintf(buf, len, "local");
}

/* Take over an accepted client connection. */
int
session_open(struct gateway *gw, int fd, const struct sockaddr *sa,
    socklen_t salen, int transparent)
{
	struct session	*s;

	if ((s = calloc(1, sizeof *s)) == NULL)
		goto fail;
	s->gw = gw;
	s->id = ++gw->next_id;
	s->up_pipe.fd[0] = s->up_pipe.fd[1] = -1;
	s->down_pipe.fd[0] = s->down_pipe.fd[1] = -1;
	session_sockaddr_text(sa, s->client_addr, sizeof s->client_addr);
	s->timer = evtimer_new(gw->base, session_timer_cb, s);
	s->client = bufferevent_socket_new(gw->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (s->timer == NULL || s->client == NULL)
		goto fail;
	bufferevent_setcb(s->client, session_client_read_cb,
	    session_client_write_cb, session_client_event_cb, s);
	bufferevent_setwatermark(s->client, EV_WRITE, SESSION_LOW, 0);
	TAILQ_INSERT_TAIL(&gw->sessions, s, entry);
	gw->nsessions++;
	s->sniffed = !transparent;
	s->transparent = transparent;
	if (transparent)
		session_transparent_start(s, fd);
	else
		session_head_start(s);
	if (!s->dead)
		session_pump(s);
	return (0);
fail:
	log_warnx("%s: out of memory", __func__);
	if (s != NULL) {
		if (s->client != NULL)
			bufferevent_free(s->client);
		else
			evutil_closesocket(fd);
		if (s->timer != NULL)
			event_free(s->timer);
		free(s);
	} else
		evutil_closesocket(fd);
	return (-1);
}

/* Wait for the next request head. */
static void
session_head_start(struct session *s)
{
	s->state = S_HEAD;
	http_scan_init(&s->scan);
	free(s->head);
	s->head = NULL;
	s->have_host = s->have_req = 0;
	s->method[0] = '\0';
	s->via = NULL;
	s->rule[0] = s->addr[0] = s->fix[0] = '\0';
	s->status = 0;
	s->up = s->down = 0;
	s->close_after = 0;
	bufferevent_setwatermark(s->client, EV_READ, 0, s->gw->lim.max_head);
	session_timer(s, s->nrequests == 0 ? s->gw->cfg.handshake_timeout :
	    s->gw->cfg.idle_timeout);
}

/* Bytes waiting to be written to a side. */
static size_t
session_outlen(struct bufferevent *bev)
{
	return (bev == NULL ? 0 : evbuffer_get_length(bufferevent_get_output(bev)));
}

/* Turn reading on or off. */
static void
session_reading(struct bufferevent *bev, int on)
{
	if (bev == NULL)
		return;
	if (on)
		bufferevent_enable(bev, EV_READ);
	else
		bufferevent_disable(bev, EV_READ);
}

/* Read from each side only when its peer can take more (back-pressure). */
static void
session_update_io(struct session *s)
{
	int	cr = 0, sr = 0;

	switch (s->state) {
	case S_HEAD:
		cr = 1;
		sr = s->srv_idle;
		break;
	case S_SNIFF:
		cr = 1;
		break;
	case S_FORWARD:
		cr = !s->req_done && session_outlen(s->server) < SESSION_HIGH;
		sr = !s->resp_done && session_outlen(s->client) < SESSION_HIGH;
		break;
	case S_TUNNEL:
		if (s->spliced)
			return;
		cr = !s->client_eof && session_outlen(s->server) < SESSION_HIGH;
		sr = !s->server_eof && session_outlen(s->client) < SESSION_HIGH;
		break;
	case S_REPLY:
		sr = s->srv_idle;
		break;
	case S_AGENT:
	case S_ASK:
		cr = 1;		/* a body, or the EOF that ends a wait */
		break;
	default:
		break;
	}
	session_reading(s->client, cr);
	if (s->state != S_DIAL && s->state != S_RESOLVE)
		session_reading(s->server, sr);
}

/* Finish an answer of our own: close after it, or read the next request. */
static void
session_replied(struct session *s)
{
	if (s->close_after || s->gw->stopping) {
		session_close(s, s->pending == P_NONE ? "done" : "closed");
		return;
	}
	s->nrequests++;
	session_head_start(s);
	session_pump(s);
}

/* Once the client's output drains, close or go on. */
static void
session_drain(struct session *s, int close_after)
{
	s->state = S_REPLY;
	s->close_after = s->close_after || close_after;
	session_timer(s, s->gw->cfg.idle_timeout);
	if (session_outlen(s->client) == 0)
		session_replied(s);
	else
		session_update_io(s);
}

/* The label of a refusal for programs (Pinhole-Error). */
static const char *
session_perr(int status)
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
static void
session_reply(struct session *s, int status, const char *perr,
    int close_after, const char *fmt, ...)
{
	struct evbuffer	*out = bufferevent_get_output(s->client);
	char		 body[2048], hint[HOST_TEXT_LEN + 32];
	va_list		 ap;
	int		 n;

	va_start(ap, fmt);
	n = vsnprintf(body, sizeof body, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof body)
		n = strlen(body);
	if (!s->have_req || s->req->h.body != HTTP_BODY_NONE ||
	    !s->req->h.keep_alive || (s->req->is_connect && status != 200) ||
	    status == 400 || status == 431)
		close_after = 1;
	s->status = status;
	evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\n"
	    "Content-Type: text/plain; charset=utf-8\r\n"
	    "Content-Length: %d\r\nCache-Control: no-store\r\n",
	    status, http_status_text(status), n);
	if (perr == NULL)
		perr = session_perr(status);
	if (perr != NULL)
		evbuffer_add_printf(out, "Pinhole-Error: %s\r\n", perr);
	if (status == 403 && s->have_host && s->fix[0] == '\0') {
		escalate_hint(&s->host, s->port, hint, sizeof hint);
		evbuffer_add_printf(out, "Pinhole-Request: %s\r\n", hint);
	}
	evbuffer_add_printf(out, "Connection: %s\r\n\r\n",
	    close_after ? "close" : "keep-alive");
	if (!s->have_req || !s->req->is_head)
		evbuffer_add(out, body, n);
	session_drain(s, close_after);
}

/*
 * Answer 403 for the host: why, then the command that asks for it, or,
 * when no grant can help, what the policy would have to change.
 */
static void
session_forbid(struct session *s, const char *perr, int close_after,
    const char *why)
{
	char	target[HOST_TEXT_LEN + 16];

	escalate_target(&s->host, s->port, target, sizeof target);
	if (s->fix[0] != '\0')
		session_reply(s, 403, perr, close_after,
		    "pinhole: %s is not allowed: %s.\n", target, s->fix);
	else
		session_reply(s, 403, perr, close_after,
		    "pinhole: %s is not allowed: %s.\n\n"
		    "To ask for access, run:\n"
		    "    pinhole request %s --reason \"why it is needed\"\n",
		    target, why, target);
}

/* Refuse a request: audit it, then tell the client. */
static void
session_refuse(struct session *s, int status, const char *perr,
    const char *why)
{
	const char	*event = s->via != NULL &&
	    strcmp(s->via, "connect") == 0 ? "connect" : "request";

	if (s->transparent) {
		session_transparent_refuse(s, status, perr, why);
		return;
	}
	if (s->state == S_FORWARD)
		session_server_free(s);	/* it holds half an exchange */
	s->pending = P_NONE;
	s->status = status;
	session_audit(s, event, status < 500 ? "deny" : "allow",
	    perr != NULL ? perr : why, 0);
	if (status == 403 && s->have_host)
		session_forbid(s, perr, 0, why);
	else if (s->have_host)
		session_reply(s, status, perr, 0, "pinhole: %s:%u: %s.\n",
		    s->host.text, s->port, why);
	else
		session_reply(s, status, perr, 0, "pinhole: %s.\n", why);
}

/* The short page for requests addressed to the proxy itself. */
static void
session_info_page(struct session *s)
{
	const char	*about = s->gw->cfg.about;

	s->status = 200;
	session_audit(s, "request", NULL, "info-page", 0);
	session_reply(s, 200, NULL, 0,
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

/* Send the agent endpoint's answer. */
static void
session_agent_send(struct session *s, const struct agent_response *resp)
{
	struct evbuffer	*out = bufferevent_get_output(s->client);
	int		 close_after = !s->req->h.keep_alive;

	s->status = resp->status;
	session_audit(s, "request", NULL, "agent-endpoint", 0);
	evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n"
	    "Content-Length: %zu\r\nCache-Control: no-store\r\n"
	    "Connection: %s\r\n\r\n", resp->status,
	    http_status_text(resp->status), resp->ctype, resp->body.len,
	    close_after ? "close" : "keep-alive");
	if (!s->req->is_head && resp->body.len > 0)
		evbuffer_add(out, resp->body.buf, resp->body.len);
	session_drain(s, close_after);
}

/* A long poll on the agent endpoint is over. */
static void
session_agent_waited_cb(struct agent_response *final, void *arg)
{
	struct session	*s = arg;

	s->await = NULL;
	if (!s->dead)
		session_agent_send(s, final);
	agent_response_free(final);
}

/* Point an agent_str at a header's value, or leave it empty. */
static void
session_agent_header(struct session *s, const char *name,
    struct agent_str *out)
{
	const struct http_header	*h = http_header_find(&s->req->h, name);

	out->p = h != NULL ? h->value.p : "";
	out->len = h != NULL ? h->value.len : 0;
}

/* The whole body is in: answer, or hold for a long poll. */
static void
session_agent_body(struct session *s)
{
	struct evbuffer		*in = bufferevent_get_input(s->client);
	struct agent_request	 ar;
	struct agent_response	 resp;
	const struct http_str	*t;
	int			 wait;

	if (evbuffer_get_length(in) < s->req_remain)
		return;
	memset(&ar, 0, sizeof ar);
	ar.method.p = s->req->method.p;
	ar.method.len = s->req->method.len;
	t = s->req->form == HTTP_FORM_ORIGIN ? &s->req->target :
	    &s->req->path;
	ar.target.p = t->p;
	ar.target.len = t->len;
	session_agent_header(s, "Content-Type", &ar.content_type);
	session_agent_header(s, "Accept", &ar.accept);
	ar.body.len = s->req_remain;
	ar.body.p = s->req_remain > 0 ?
	    (const char *)evbuffer_pullup(in, s->req_remain) : "";
	agent_handle(s->gw->esc, &ar, &resp);
	evbuffer_drain(in, s->req_remain);
	s->req_remain = 0;
	wait = resp.wait;
	if (wait > 0 && (s->await = agent_wait_start(s->gw->esc, &resp,
	    session_agent_waited_cb, s)) != NULL) {
		agent_response_free(&resp);
		session_timer(s, wait + 10);
		return;
	}
	session_agent_send(s, &resp);
	agent_response_free(&resp);
}

/* A request for the agent endpoint: read its body first. */
static void
session_agent_start(struct session *s)
{
	const struct http_request	*r = s->req;

	if (r->h.body == HTTP_BODY_CHUNKED) {
		session_refuse(s, 411, NULL, "send the body with a "
		    "Content-Length");
		return;
	}
	if (r->h.body == HTTP_BODY_LENGTH && r->h.length > AGENT_BODY_MAX) {
		session_refuse(s, 413, NULL, "body too long");
		return;
	}
	s->req_remain = r->h.body == HTTP_BODY_LENGTH ? r->h.length : 0;
	s->state = S_AGENT;
	session_timer(s, s->gw->cfg.handshake_timeout);
	session_agent_body(s);
}

/* Would this host be allowed on another port? */
static int
session_port_only(struct session *s)
{
	struct rules_verdict	v;
	uint16_t		ports[64];
	size_t			n, i;

	n = rules_ports(s->gw->rules, ports, 62);
	if (n > 62)
		n = 62;
	ports[n++] = 80;
	ports[n++] = 443;
	for (i = 0; i < n; i++) {
		if (ports[i] != s->port &&
		    rules_match(s->gw->rules, &s->host, ports[i], &v))
			return (1);
	}
	return (0);
}

/* Remember what decided: the grant used, or the rule as "file:line". */
static void
session_rule(struct session *s, const struct rules_verdict *v)
{
	if (s->grant_id[0] != '\0')
		snprintf(s->rule, sizeof s->rule, "grant %s", s->grant_id);
	else
		policy_rule_text(v, s->rule, sizeof s->rule);
}

/*
 * Decide (host, port) by the policy, then by the grants in force (as
 * policy_decide: a deny rule wins over a grant); a once grant is used
 * up here, by this connection.  The addresses are vetted later, as for
 * any allowed host.
 */
static int
session_policy(struct session *s, struct rules_verdict *v)
{
	struct gateway	*gw = s->gw;
	struct grant	 g;

	memset(v, 0, sizeof *v);
	v->why = "no policy loaded";
	if (gw->rules == NULL)
		return (0);
	if (rules_match(gw->rules, &s->host, s->port, v))
		return (1);
	if (gw->eg.grants == NULL || v->file != NULL ||
	    !grants_match(gw->eg.grants, &s->host, s->port,
	    escalate_grants_now_ms(), &g))
		return (0);
	snprintf(s->grant_id, sizeof s->grant_id, "%s", g.id);
	if (g.scope == GRANT_ONCE)
		grants_consume(gw->eg.grants, g.id);
	return (1);
}

/* Refuse a host the policy denies, saying how to ask for it. */
static void
session_deny(struct session *s, const struct rules_verdict *v)
{
	const char	*perr;
	char		 why[512];

	if (v->file != NULL || s->gw->rules == NULL)
		perr = "denied-by-policy";
	else if (s->host.kind != HOST_NAME)
		perr = "ip-literal";
	else if (session_port_only(s))
		perr = "port";
	else
		perr = "denied-by-policy";
	if (v->file != NULL && v->text != NULL)
		policy_deny_text(v, why, sizeof why);
	else
		snprintf(why, sizeof why, "%s", v->why != NULL ? v->why :
		    "denied");
	session_refuse(s, 403, perr, why);
}

/* Ask mode: the person decided, or the time ran out. */
static void
session_asked_cb(const struct escalate_request *r, int timed_out, void *arg)
{
	struct session		*s = arg;
	struct rules_verdict	 v;
	char			 why[ESCALATE_BY_LEN + ESCALATE_TEXT_LEN + 16];

	s->ask = NULL;
	if (s->dead)
		return;
	if (r->state == ESCALATE_APPROVED && session_policy(s, &v)) {
		session_rule(s, &v);
		session_go(s);
		return;
	}
	if (timed_out)
		snprintf(why, sizeof why, "no answer in time");
	else if (r->state == ESCALATE_DENIED)
		snprintf(why, sizeof why, "denied by %s%s%s", r->by,
		    r->answer[0] != '\0' ? ": " : "", r->answer);
	else if (r->state == ESCALATE_APPROVED)
		snprintf(why, sizeof why, "approved once, and used by another "
		    "connection");
	else
		snprintf(why, sizeof why, "not approved");
	session_refuse(s, 403, "denied-by-policy", why);
}

/* Ask mode: hold the connection while the person decides. */
static int
session_hold(struct session *s)
{
	enum escalate_filed	f;

	s->ask = escalate_ask(s->gw->esc, &s->host, s->port, s->via,
	    s->gw->ask, session_asked_cb, s, &f);
	if (s->ask == NULL)
		return (-1);
	s->state = S_ASK;
	session_timer(s, s->gw->ask + 5);
	session_update_io(s);
	return (0);
}

/*
 * Apply the policy and grants to (host, port).  Returns 0 to go on, 1
 * when held for a decision (ask mode), -1 when refused.
 */
static int
session_decide(struct session *s)
{
	struct rules_verdict	v;

	s->grant_id[0] = '\0';
	if (session_policy(s, &v)) {
		session_rule(s, &v);
		return (0);
	}
	session_rule(s, &v);
	policy_grantable(s->gw->rules, &s->host, s->port, s->fix,
	    sizeof s->fix);
	if (s->gw->esc != NULL) {
		escalate_blocked(s->gw->esc, &s->host, s->port, s->via,
		    s->fix[0] != '\0' ? s->fix : NULL);
		if (s->gw->ask > 0 && v.file == NULL && s->fix[0] == '\0' &&
		    session_hold(s) == 0)
			return (1);
	}
	session_deny(s, &v);
	return (-1);
}

/*
 * May this address be dialed?  A public one may, unless it is the host's
 * own; a special-purpose one only under allow-private.  *what names the
 * kind of address refused.
 */
static int
session_vet(struct session *s, const struct resolver_addr *a,
    const char **what)
{
	struct rules_verdict	v;
	size_t			len = a->family == AF_INET ? 4 : 16;
	enum addr_class		cls;

	cls = addr_classify(a->addr, len);
	if (cls == ADDR_PUBLIC && !gateway_own(s->gw, a))
		return (1);
	*what = cls == ADDR_PUBLIC ? "this host's own" : addr_class_name(cls);
	return (s->gw->rules != NULL &&
	    rules_private_ok(s->gw->rules, a->addr, len, &v));
}

/* Keep the addresses that may be dialed; refuse if none is left. */
static void
session_vet_all(struct session *s, const struct resolver_addr *a, size_t n)
{
	const char	*what = "special-purpose", *w = NULL;
	char		 text[INET6_ADDRSTRLEN] = "";
	size_t		i;

	s->naddrs = s->next_addr = 0;
	free(s->addrs);
	if (n > RESOLVER_MAX_ADDRS)
		n = RESOLVER_MAX_ADDRS;
	if ((s->addrs = calloc(n > 0 ? n : 1, sizeof *s->addrs)) == NULL) {
		session_refuse(s, 502, NULL, "out of memory");
		return;
	}
	for (i = 0; i < n; i++) {
		if (session_vet(s, &a[i], &w)) {
			s->addrs[s->naddrs++] = a[i];
		} else if (text[0] == '\0') {
			what = w;
			inet_ntop(a[i].family, a[i].addr, text, sizeof text);
		}
	}
	if (s->naddrs == 0) {
		char	why[256];

		snprintf(why, sizeof why, "%s is a %s address and no "
		    "allow-private rule covers it", text, what);
		snprintf(s->addr, sizeof s->addr, "%s", text);
		policy_private_fix(text, what, s->fix, sizeof s->fix);
		if (s->gw->esc != NULL)
			escalate_blocked(s->gw->esc, &s->host, s->port, s->via,
			    s->fix);
		session_refuse(s, 403, "private-address", why);
		return;
	}
	s->dial_err = 0;
	s->dial_timeouts = 0;
	session_dial_next(s);
}

/* The resolver's answer. */
static void
session_resolved_cb(int status, const char *errstr,
    const struct resolver_result *res, void *arg)
{
	struct session	*s = arg;
	char		 why[256];

	s->query = NULL;
	s->refs--;
	if (s->dead)
		return;
	if (status != 0) {
		snprintf(why, sizeof why, "name resolution failed: %s",
		    errstr != NULL ? errstr : "unknown error");
		session_refuse(s, errstr != NULL &&
		    strstr(errstr, "timed out") != NULL ? 504 : 502,
		    "resolve-failed", why);
		return;
	}
	session_vet_all(s, res->a, res->n);
}

/* Find the addresses for the host: it is one, or ask the resolver. */
static void
session_resolve(struct session *s)
{
	struct resolver_addr	a;

	if (s->host.kind != HOST_NAME) {
		memset(&a, 0, sizeof a);
		a.family = s->host.kind == HOST_IPV4 ? AF_INET : AF_INET6;
		memcpy(a.addr, s->host.addr, sizeof a.addr);
		session_vet_all(s, &a, 1);
		return;
	}
	s->state = S_RESOLVE;
	session_update_io(s);
	session_timer(s, s->gw->cfg.connect_timeout);
	s->refs++;
	s->query = resolver_lookup(s->gw->resolver, s->host.text,
	    session_resolved_cb, s);
	if (s->query == NULL) {
		s->refs--;
		session_refuse(s, 502, "resolve-failed", "resolver failure");
	}
}

/* Fill a sockaddr for a vetted address. */
static socklen_t
session_sockaddr(const struct resolver_addr *a, uint16_t port,
    struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof *ss);
	if (a->family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		memcpy(&in->sin_addr, a->addr, 4);
		return (sizeof *in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		memcpy(&in6->sin6_addr, a->addr, 16);
		return (sizeof *in6);
	}
}

/* All addresses failed: say why. */
static void
session_dial_failed(struct session *s)
{
	char	why[256];

	if (s->dial_timeouts > 0 && s->dial_err == ETIMEDOUT) {
		snprintf(why, sizeof why, "connection to %s timed out", s->addr);
		session_refuse(s, 504, "timeout", why);
	} else {
		snprintf(why, sizeof why, "cannot connect to %s: %s", s->addr,
		    strerror(s->dial_err != 0 ? s->dial_err : ECONNREFUSED));
		session_refuse(s, 502, "connect-failed", why);
	}
}

/* Dial the next vetted address, with a bounded connect timeout. */
static void
session_dial_next(struct session *s)
{
	struct sockaddr_storage	 ss;
	struct bufferevent	*bev;
	const struct resolver_addr *a;
	socklen_t		 len;

	session_server_free(s);
	while (s->next_addr < s->naddrs) {
		a = &s->addrs[s->next_addr++];
		inet_ntop(a->family, a->addr, s->addr, sizeof s->addr);
		len = session_sockaddr(a, s->port, &ss);
		bev = bufferevent_socket_new(s->gw->base, -1,
		    BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
		if (bev == NULL) {
			s->dial_err = ENOMEM;
			break;
		}
		bufferevent_setcb(bev, session_server_read_cb,
		    session_server_write_cb, session_server_event_cb, s);
		if (bufferevent_socket_connect(bev, (struct sockaddr *)&ss,
		    len) == 0) {
			s->server = bev;
			s->state = S_DIAL;
			session_timer(s, s->gw->cfg.connect_timeout);
			return;
		}
		s->dial_err = errno;
		bufferevent_free(bev);
	}
	session_dial_failed(s);
}

/* Append the request head as it goes upstream. */
static void
session_upstream_head(struct session *s, struct evbuffer *out)
{
	const struct http_request	*r = s->req;
	const struct http_header	*hd;
	size_t				 i;

	evbuffer_add_printf(out, "%.*s %s%.*s HTTP/1.%d\r\nHost: %.*s\r\n",
	    (int)r->method.len, r->method.p,
	    r->path.len == 0 || r->path.p[0] != '/' ? "/" : "",
	    (int)r->path.len, r->path.p, r->h.minor,
	    (int)r->authority.len, r->authority.p);
	for (i = 0; i < r->h.nheaders; i++) {
		hd = &r->h.headers[i];
		if (hd->hop || http_str_eq(&hd->name, "host"))
			continue;
		evbuffer_add_printf(out, "%.*s: %.*s\r\n", (int)hd->name.len,
		    hd->name.p, (int)hd->value.len, hd->value.p);
	}
	if (r->h.upgrade &&
	    (hd = http_header_find(&r->h, "upgrade")) != NULL)
		evbuffer_add_printf(out, "Connection: upgrade\r\n"
		    "Upgrade: %.*s\r\n", (int)hd->value.len, hd->value.p);
	else if (r->h.minor == 0)
		evbuffer_add_printf(out, "Connection: close\r\n");
	evbuffer_add_printf(out, "Via: 1.%d pinhole\r\n\r\n", r->h.minor);
}

/* Send the request head upstream and start relaying. */
static void
session_send_request(struct session *s)
{
	struct evbuffer	*out = bufferevent_get_output(s->server);
	size_t		 before = evbuffer_get_length(out);

	session_upstream_head(s, out);
	s->up += evbuffer_get_length(out) - before;
	s->state = S_FORWARD;
	s->pending = P_REQUEST;
	s->srv_idle = 0;
	s->req_done = s->req->h.body == HTTP_BODY_NONE;
	s->req_remain = s->req->h.length;
	http_chunked_init(&s->req_ch);
	http_scan_init(&s->rscan);
	s->resp_head_done = s->resp_done = s->resp_got = 0;
	s->last_active = session_now(s);
	session_timer(s, s->gw->cfg.idle_timeout);
	session_pump(s);
}

/* Connected: open the tunnel, or send the request. */
static void
session_dialed(struct session *s)
{
	int	one = 1;

	setsockopt(bufferevent_getfd(s->server), IPPROTO_TCP, TCP_NODELAY,
	    &one, sizeof one);
	bufferevent_setwatermark(s->server, EV_WRITE, SESSION_LOW, 0);
	s->srv_port = s->port;
	s->reused = 0;
	if (!s->transparent && !s->req->is_connect) {
		s->srv_name = strdup(s->host.text);	/* NULL: no reuse */
		session_send_request(s);
		return;
	}
	if (!s->transparent)
		s->status = 200;
	session_audit(s, "connect", "allow", NULL, 0);
	s->pending = P_TUNNEL;
	session_http_free(s);
	if (!s->transparent)
		session_send(s->client, SESSION_ESTABLISHED,
		    sizeof SESSION_ESTABLISHED - 1);
	if (s->sniffed)
		bufferevent_setwatermark(s->client, EV_READ, 0, 0);
	session_tunnel_io(s);
	s->state = S_TUNNEL;
	event_base_gettimeofday_cached(s->gw->base, &s->start);
	s->last_active = session_now(s);
	session_timer(s, s->gw->cfg.idle_timeout);
	session_pump(s);
}

/* A fake address stands for the name the DNS side gave it. */
static int
session_unfake(struct session *s)
{
	const char	*name, *errstr;

	if (s->host.kind != HOST_IPV4 || s->gw->fakeip == NULL ||
	    !fakeip_contains(s->gw->fakeip, s->host.addr, 4))
		return (0);
	if ((name = fakeip_lookup_name(s->gw->fakeip, s->host.addr,
	    4)) == NULL) {
		session_refuse(s, 502, NULL, "fake address not in use");
		return (-1);
	}
	if (host_parse(name, strlen(name), &s->host, &errstr) == -1) {
		session_refuse(s, 502, NULL, errstr);
		return (-1);
	}
	return (0);
}

/* Go on with an allowed request: reuse the idle server, or resolve. */
static void
session_go(struct session *s)
{
	if (s->srv_idle && s->srv_name != NULL && s->srv_port == s->port &&
	    strcmp(s->srv_name, s->host.text) == 0) {
		s->reused = 1;
		session_send_request(s);
		return;
	}
	session_server_free(s);
	session_resolve(s);
}

/*
 * Is an absolute-form request addressed to the proxy itself (as a client
 * with HTTP_PROXY set sends $PINHOLE_AGENT/pinhole/...)?  Its host and
 * port are the address the client connected to.
 */
static int
session_to_self(struct session *s)
{
	struct sockaddr_storage	ss;
	socklen_t		len = sizeof ss;
	struct host		h;
	const char		*errstr;
	char			text[INET6_ADDRSTRLEN];
	uint16_t		port;
	const void		*a;

	if (getsockname(bufferevent_getfd(s->client), (struct sockaddr *)&ss,
	    &len) == -1 || host_parse(s->req->host.p, s->req->host.len, &h,
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
	return (port == s->req->port && strcmp(text, h.text) == 0);
}

/*
 * Refuse anything new while the audit log cannot be written (unless
 * --log-fail=open): 503, or a captured connection closed.  The line is
 * counted as lost.  Returns -1 when refused.
 */
static int
session_audit_ready(struct session *s)
{
	if (audit_ready(s->gw->audit))
		return (0);
	s->status = 503;
	session_audit(s, "connect", "deny", "audit-log-unwritable", 0);
	if (s->transparent) {
		s->reset = 1;
		session_close(s, "the audit log cannot be written");
		return (-1);
	}
	session_reply(s, 503, "audit-log-unwritable", 1, "pinhole: the audit "
	    "log cannot be written, so no new connection is let through "
	    "(--log-fail=closed).\n");
	return (-1);
}

/* A request head has been parsed: decide it and set it going. */
static void
session_request(struct session *s)
{
	struct http_request	*r = s->req;
	const char		*errstr;

	event_base_gettimeofday_cached(s->gw->base, &s->start);
	if (session_audit_ready(s) == -1)
		return;
	if (s->gw->esc != NULL && ((r->form == HTTP_FORM_ORIGIN &&
	    agent_match(r->target.p, r->target.len)) ||
	    (r->form == HTTP_FORM_ABSOLUTE && !r->is_connect &&
	    agent_match(r->path.p, r->path.len) && session_to_self(s)))) {
		session_agent_start(s);
		return;
	}
	if (r->form == HTTP_FORM_ORIGIN || r->form == HTTP_FORM_ASTERISK) {
		session_info_page(s);
		return;
	}
	s->via = r->is_connect ? "connect" : "forward";
	if (host_parse(r->host.p, r->host.len, &s->host, &errstr) == -1) {
		session_refuse(s, 400, NULL, errstr);
		return;
	}
	if (session_unfake(s) == -1)
		return;
	s->have_host = 1;
	s->port = r->port;
	s->client_ka = !r->is_connect && r->h.keep_alive;
	if (session_decide(s) != 0)
		return;
	session_go(s);
}

/*
 * Keep a parsed request with room for its own headers only.  The
 * parser's struct has a slot for each of HTTP_HEADERS_MAX headers (10
 * KiB); a request has a few, and the copy is never used past
 * h.headers[h.nheaders].  Its strings still point into s->head.
 */
static struct http_request *
session_req_copy(const struct http_request *r)
{
	struct http_request	*c;
	size_t			 len;

	len = offsetof(struct http_request, h.headers) +
	    r->h.nheaders * sizeof r->h.headers[0];
	if ((c = malloc(len)) != NULL)
		memcpy(c, r, len);
	return (c);
}

/* Look for a complete request head in the client's input. */
static void
session_read_head(struct session *s)
{
	struct evbuffer		*in = bufferevent_get_input(s->client);
	struct http_request	 r;
	size_t			 len, avail;
	unsigned char		*p;
	int			 st;

	len = evbuffer_get_length(in);
	avail = len < s->gw->lim.max_head ? len : s->gw->lim.max_head;
	if (avail <= s->scan.total)
		return;
	if ((p = evbuffer_pullup(in, avail)) == NULL) {
		session_close(s, "out of memory");
		return;
	}
	if (http_scan_feed(&s->scan, p + s->scan.total,
	    avail - s->scan.total) == 0) {
		if (avail >= s->gw->lim.max_head)
			session_refuse(s, 431, NULL, "request head too large");
		return;
	}
	free(s->head);
	free(s->req);
	s->req = NULL;
	if ((s->head = malloc(s->scan.total + 1)) == NULL) {
		session_close(s, "out of memory");
		return;
	}
	evbuffer_remove(in, s->head, s->scan.total);
	s->head[s->scan.total] = '\0';
	if ((st = http_request_parse(s->head, s->scan.total, &s->gw->lim,
	    &r)) != 0) {
		session_refuse(s, st, NULL, st == 431 ?
		    "request head too large" : st == 501 ?
		    "not supported by this proxy" : "malformed request");
		return;
	}
	if ((s->req = session_req_copy(&r)) == NULL) {
		session_close(s, "out of memory");
		return;
	}
	s->have_req = 1;
	if (!s->req->is_connect)
		snprintf(s->method, sizeof s->method, "%.*s",
		    (int)s->req->method.len, s->req->method.p);
	session_request(s);
}

/* Move up to n bytes from one buffer to another, counting them. */
static size_t
session_move(struct evbuffer *from, struct evbuffer *to, size_t n,
    int64_t *count)
{
	int	moved;

	if (n == 0)
		return (0);
	if ((moved = evbuffer_remove_buffer(from, to, n)) <= 0)
		return (0);
	*count += moved;
	return ((size_t)moved);
}

/*
 * Queue bytes for a side, writing them straight to its socket first
 * when nothing is queued before them: a small message then costs one
 * system call instead of a round through the event loop (and two
 * epoll_ctl calls).  What the socket does not take, or an error, is
 * left to the bufferevent, which reports the error as usual.
 */
static void
session_send(struct bufferevent *to, const void *p, size_t len)
{
	ssize_t	n = 0;

	if (session_outlen(to) == 0 &&
	    (n = send(bufferevent_getfd(to), p, len, MSG_NOSIGNAL)) < 0)
		n = 0;
	if ((size_t)n < len)
		evbuffer_add(bufferevent_get_output(to), (const char *)p + n,
		    len - (size_t)n);
}

/* Relay all of one side's input to the other, as session_send() does. */
static void
session_relay(struct evbuffer *in, struct bufferevent *to, int64_t *count)
{
	int	n;

	if (evbuffer_get_length(in) == 0)
		return;
	if (session_outlen(to) == 0 &&
	    (n = evbuffer_write(in, bufferevent_getfd(to))) > 0)
		*count += n;
	session_move(in, bufferevent_get_output(to), evbuffer_get_length(in),
	    count);
}

/*
 * Relay the body of a message as its framing says.  Returns 1 when the
 * body is complete, 0 when more is to come, -1 on broken framing.
 */
static int
session_relay_body(struct evbuffer *in, struct evbuffer *out,
    enum http_body body, uint64_t *remain, struct http_chunked *ch,
    int64_t *count)
{
	struct evbuffer_iovec	v;
	ssize_t			n;
	size_t			len;
	int			done = 0;

	while ((len = evbuffer_get_length(in)) > 0 &&
	    evbuffer_get_length(out) < SESSION_HIGH) {
		switch (body) {
		case HTTP_BODY_NONE:
			return (1);
		case HTTP_BODY_LENGTH:
			*remain -= session_move(in, out,
			    len < *remain ? len : *remain, count);
			return (*remain == 0);
		case HTTP_BODY_CLOSE:
			session_move(in, out, len, count);
			return (0);
		case HTTP_BODY_CHUNKED:
			if (evbuffer_peek(in, -1, NULL, &v, 1) < 1)
				return (0);
			if ((n = http_chunked_feed(ch, v.iov_base, v.iov_len,
			    &done)) == -1)
				return (-1);
			session_move(in, out, (size_t)n, count);
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
static void
session_forward_request(struct session *s)
{
	int	rv;

	if (s->req_done)
		return;
	rv = session_relay_body(bufferevent_get_input(s->client),
	    bufferevent_get_output(s->server), s->req->h.body, &s->req_remain,
	    &s->req_ch, &s->up);
	if (rv == -1) {
		if (s->resp_got)
			session_close(s, "broken chunked request body");
		else
			session_refuse(s, 400, NULL, "broken chunked body");
		return;
	}
	s->req_done = rv;
}

/* Append the response head as it goes to the client. */
static void
session_client_head(struct session *s, struct evbuffer *out)
{
	const struct http_response	*r = s->resp;
	const struct http_header	*hd;
	size_t				 i;

	evbuffer_add_printf(out, "HTTP/1.1 %d %.*s\r\n", r->status,
	    (int)r->reason.len, r->reason.p);
	for (i = 0; i < r->h.nheaders; i++) {
		hd = &r->h.headers[i];
		if (hd->hop)
			continue;
		evbuffer_add_printf(out, "%.*s: %.*s\r\n", (int)hd->name.len,
		    hd->name.p, (int)hd->value.len, hd->value.p);
	}
	if (r->status == 101 &&
	    (hd = http_header_find(&r->h, "upgrade")) != NULL)
		evbuffer_add_printf(out, "Connection: upgrade\r\n"
		    "Upgrade: %.*s\r\n", (int)hd->value.len, hd->value.p);
	else if (r->status >= 200 && !s->client_ka)
		evbuffer_add_printf(out, "Connection: close\r\n");
	evbuffer_add_printf(out, "Via: 1.%d pinhole\r\n\r\n", r->h.minor);
}

/* Let a tunnel's bufferevents move big chunks per system call. */
static void
session_tunnel_io(struct session *s)
{
	bufferevent_set_max_single_read(s->client, SESSION_TUNNEL_IO);
	bufferevent_set_max_single_write(s->client, SESSION_TUNNEL_IO);
	bufferevent_set_max_single_read(s->server, SESSION_TUNNEL_IO);
	bufferevent_set_max_single_write(s->server, SESSION_TUNNEL_IO);
}

/* Switch an upgraded exchange (101) into a tunnel. */
static void
session_upgraded(struct session *s)
{
	session_audit(s, "request", "allow", "upgrade", 0);
	s->pending = P_TUNNEL;
	s->state = S_TUNNEL;
	session_http_free(s);
	bufferevent_setwatermark(s->client, EV_READ, 0, 0);
	session_tunnel_io(s);
}

/*
 * Read a response head from the server.  Returns 1 once a final head
 * has been passed on, 0 to wait for more.
 */
static int
session_read_response_head(struct session *s)
{
	struct evbuffer	*in = bufferevent_get_input(s->server);
	size_t		 len, avail;
	unsigned char	*p;

	len = evbuffer_get_length(in);
	avail = len < SESSION_RESP_HEAD_MAX ? len : SESSION_RESP_HEAD_MAX;
	if (avail > 0)
		s->resp_got = 1;
	if (avail <= s->rscan.total)
		return (0);
	p = evbuffer_pullup(in, avail);
	if (p == NULL || http_scan_feed(&s->rscan, p + s->rscan.total,
	    avail - s->rscan.total) == 0) {
		if (p == NULL || avail >= SESSION_RESP_HEAD_MAX)
			session_refuse(s, 502, NULL, "response head too large");
		return (0);
	}
	free(s->rhead);
	s->rhead = NULL;
	if (s->resp == NULL)
		s->resp = malloc(sizeof *s->resp);
	if (s->resp == NULL ||
	    (s->rhead = malloc(s->rscan.total)) == NULL) {
		session_close(s, "out of memory");
		return (0);
	}
	evbuffer_remove(in, s->rhead, s->rscan.total);
	if (http_response_parse(s->rhead, s->rscan.total, &s->gw->lim,
	    s->req->is_head, s->resp) == -1) {
		session_refuse(s, 502, NULL, "malformed response from upstream");
		return (0);
	}
	http_scan_init(&s->rscan);
	return (1);
}

/* Handle one response head: interim, upgrade or final. */
static int
session_response_head(struct session *s)
{
	struct http_response	*r = s->resp;
	struct evbuffer		*out = bufferevent_get_output(s->client);
	size_t			 before = evbuffer_get_length(out);

	if (r->status == 101 && !s->req->h.upgrade) {
		session_refuse(s, 502, NULL, "unexpected upgrade from upstream");
		return (-1);
	}
	if (r->status >= 200) {
		s->status = r->status;
		s->resp_head_done = 1;
		s->client_ka = s->client_ka && r->h.body != HTTP_BODY_CLOSE &&
		    !s->gw->stopping;
		s->resp_remain = r->h.length;
		http_chunked_init(&s->resp_ch);
	}
	session_client_head(s, out);
	s->down += evbuffer_get_length(out) - before;
	if (r->status == 101) {
		s->status = 101;
		session_upgraded(s);
		return (-1);
	}
	return (0);
}

/* This exchange is over: log it, keep or drop the server, go on. */
static void
session_exchange_done(struct session *s)
{
	int	reuse;

	session_audit_pending(s, NULL);
	reuse = s->resp->h.keep_alive && s->req_done &&
	    s->resp->h.body != HTTP_BODY_CLOSE &&
	    evbuffer_get_length(bufferevent_get_input(s->server)) == 0;
	if (reuse)
		s->srv_idle = 1;
	else
		session_server_free(s);
	session_drain(s, !s->client_ka || !s->req_done);
}

/* Relay the response: its head, then its body. */
static void
session_forward_response(struct session *s)
{
	int	rv;

	while (!s->resp_head_done) {
		if (session_read_response_head(s) == 0)
			return;
		if (session_response_head(s) == -1)
			return;
	}
	if (s->resp_done)
		return;
	rv = session_relay_body(bufferevent_get_input(s->server),
	    bufferevent_get_output(s->client), s->resp->h.body,
	    &s->resp_remain, &s->resp_ch, &s->down);
	if (rv == -1) {
		session_close(s, "broken chunked response body");
		return;
	}
	if ((s->resp_done = rv))
		session_exchange_done(s);
}

/* Half-close: pass an EOF on once everything before it is written. */
static void
session_tunnel_shut(struct session *s)
{
	if (s->client_eof && !s->server_shut && session_outlen(s->server) == 0 &&
	    evbuffer_get_length(bufferevent_get_input(s->client)) == 0) {
		shutdown(bufferevent_getfd(s->server), SHUT_WR);
		s->server_shut = 1;
	}
	if (s->server_eof && !s->client_shut && session_outlen(s->client) == 0 &&
	    evbuffer_get_length(bufferevent_get_input(s->server)) == 0) {
		shutdown(bufferevent_getfd(s->client), SHUT_WR);
		s->client_shut = 1;
	}
	if (s->client_shut && s->server_shut)
		session_close(s, "eof");
}

/* Half-close a spliced tunnel: pass an EOF on once all before it went. */
static void
session_splice_shut(struct session *s)
{
	if (s->client_eof && !s->server_shut && s->up_pipe.len == 0 &&
	    session_outlen(s->server) == 0) {
		shutdown(bufferevent_getfd(s->server), SHUT_WR);
		s->server_shut = 1;
	}
	if (s->server_eof && !s->client_shut && s->down_pipe.len == 0 &&
	    session_outlen(s->client) == 0) {
		shutdown(bufferevent_getfd(s->client), SHUT_WR);
		s->client_shut = 1;
	}
	if (s->client_shut && s->server_shut)
		session_close(s, "eof");
}

/*
 * Move one direction's bytes: what the bufferevent still held, then the
 * pipe, into the peer; then fill the pipe from the source.  Returns 1 if
 * anything moved, 0 if both ends must wait, -1 on an error (*errfd is
 * the failed descriptor).
 */
static int
session_splice_dir(struct evbuffer *held, struct pipebuf *p, int from,
    int to, int *eof, int64_t *count, int *errfd)
{
	ssize_t	n = 0;
	int	moved = 0;

	if (evbuffer_get_length(held) > 0) {
		if ((n = evbuffer_write(held, to)) > 0)
			moved = 1;
	}
	if (evbuffer_get_length(held) == 0 && (n = pipebuf_drain(p, to)) > 0)
		moved = 1;
	else if (n == -1 && errno != EAGAIN) {
		*errfd = to;
		return (-1);
	}
	if (*eof)
		return (moved);
	if ((n = pipebuf_fill(p, from)) > 0) {
		*count += n;
		moved = 1;
	} else if (n == 0) {
		*eof = 1;
		moved = 1;
	} else if (errno != EAGAIN) {
		*errfd = from;
		return (-1);
	}
	return (moved);
}

/*
 * A spliced tunnel's socket is ready.  Its events are edge-triggered:
 * move until both directions wait on a socket, or yield to the other
 * sessions after a few rounds and come back.  Only a pipe with room is
 * filled, so a slow reader stops the sender (back-pressure).
 */
static void
session_splice_cb(evutil_socket_t fd, short what, void *arg)
{
	struct session	*s = arg;
	int		 cfd = bufferevent_getfd(s->client);
	int		 sfd = bufferevent_getfd(s->server);
	int		 i, up, down, errfd = -1;

	s->last_active = session_now(s);
	for (i = 0; i < SESSION_SPLICE_ROUNDS; i++) {
		up = session_splice_dir(bufferevent_get_output(s->server),
		    &s->up_pipe, cfd, sfd, &s->client_eof, &s->up, &errfd);
		down = session_splice_dir(bufferevent_get_output(s->client),
		    &s->down_pipe, sfd, cfd, &s->server_eof, &s->down, &errfd);
		if (up == -1 || down == -1) {
			session_close(s, errfd == cfd ?
			    "client connection error" :
			    "upstream connection error");
			return;
		}
		if (!up && !down)
			break;
	}
	if (i == SESSION_SPLICE_ROUNDS)
		event_active(s->cev, EV_READ | EV_WRITE, 0);
	session_splice_shut(s);
}

/*
 * May a tunnel leave its bufferevents for splice(2)?  Once it has moved
 * some bytes: idle and chatty tunnels keep theirs and spare the four
 * pipe descriptors.
 */
static int
session_splice_ready(struct session *s)
{
	return (!s->splice_tried && s->sniffed && !s->client_eof &&
	    !s->server_eof &&
	    s->up + s->down >= SESSION_SPLICE_AFTER &&
	    (event_base_get_features(s->gw->base) & EV_FEATURE_ET));
}

/*
 * Move the tunnel's bytes with splice(2) from now on: one pipe per
 * direction, one edge-triggered event per socket.  What the
 * bufferevents read is queued on their peer's output, written before
 * the pipe's bytes.  Without pipes (out of descriptors) the tunnel
 * stays on its bufferevents.
 */
static void
session_splice_start(struct session *s)
{
	struct event_base	*base = s->gw->base;
	short			 ev = EV_READ | EV_WRITE | EV_PERSIST | EV_ET;

	s->splice_tried = 1;
	if (pipebuf_open(&s->up_pipe, SESSION_PIPE) == -1 ||
	    pipebuf_open(&s->down_pipe, SESSION_PIPE) == -1 ||
	    (s->cev = event_new(base, bufferevent_getfd(s->client), ev,
	    session_splice_cb, s)) == NULL ||
	    (s->sev = event_new(base, bufferevent_getfd(s->server), ev,
	    session_splice_cb, s)) == NULL)
		goto fail;
	bufferevent_disable(s->client, EV_READ | EV_WRITE);
	bufferevent_disable(s->server, EV_READ | EV_WRITE);
	/* Socket bufferevents lock their output's start; we write it now. */
	evbuffer_unfreeze(bufferevent_get_output(s->client), 1);
	evbuffer_unfreeze(bufferevent_get_output(s->server), 1);
	session_move(bufferevent_get_input(s->client),
	    bufferevent_get_output(s->server),
	    evbuffer_get_length(bufferevent_get_input(s->client)), &s->up);
	session_move(bufferevent_get_input(s->server),
	    bufferevent_get_output(s->client),
	    evbuffer_get_length(bufferevent_get_input(s->server)), &s->down);
	if (event_add(s->cev, NULL) == -1 || event_add(s->sev, NULL) == -1)
		goto fail;
	s->spliced = 1;
	event_active(s->cev, EV_READ | EV_WRITE, 0);
	return;
fail:
	log_debug("%s: #%llu: %s", __func__, s->id, strerror(errno));
	session_splice_free(s);
}

/* Move bytes both ways, as far as the other side can take them. */
static void
session_tunnel(struct session *s)
{
	struct evbuffer	*cin = bufferevent_get_input(s->client);
	struct evbuffer	*sin = bufferevent_get_input(s->server);

	if (s->spliced) {
		session_splice_shut(s);
		return;
	}
	/* A capture's first bytes go up only once judged. */
	if (s->sniffed && session_outlen(s->server) < SESSION_HIGH)
		session_relay(cin, s->server, &s->up);
	if (session_outlen(s->client) < SESSION_HIGH)
		session_relay(sin, s->client, &s->down);
	session_tunnel_shut(s);
	if (!s->dead && session_splice_ready(s))
		session_splice_start(s);
}

/* Do whatever the state allows with the bytes at hand. */
static void
session_pump(struct session *s)
{
	switch (s->state) {
	case S_HEAD:
		session_read_head(s);
		break;
	case S_FORWARD:
		session_forward_request(s);
		if (!s->dead && s->state == S_FORWARD)
			session_forward_response(s);
		if (!s->dead && s->state == S_TUNNEL)
			session_tunnel(s);
		break;
	case S_SNIFF:
		if (session_sniff(s) == 1)
			session_transparent_go(s);
		break;
	case S_TUNNEL:
		if (session_sniff(s) != -1)
			session_tunnel(s);
		break;
	case S_AGENT:
		if (s->await == NULL)
			session_agent_body(s);
		break;
	default:
		break;
	}
	if (!s->dead)
		session_update_io(s);
}

/* The client sent bytes. */
static void
session_client_read_cb(struct bufferevent *bev, void *arg)
{
	struct session	*s = arg;

	s->last_active = session_now(s);
	session_pump(s);
}

/* The client's output drained to the low-water mark. */
static void
session_client_write_cb(struct bufferevent *bev, void *arg)
{
	struct session	*s = arg;

	s->last_active = session_now(s);
	if (s->state == S_REPLY) {
		if (session_outlen(s->client) == 0)
			session_replied(s);
		return;
	}
	session_pump(s);
}

/* EOF or error from the client. */
static void
session_client_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct session	*s = arg;

	if ((what & BEV_EVENT_EOF) && s->state == S_TUNNEL) {
		s->client_eof = 1;
		session_pump(s);
		return;
	}
	if (what & BEV_EVENT_ERROR)
		session_close(s, "client connection error");
	else
		session_close(s, "client closed");
}

/* The server sent bytes. */
static void
session_server_read_cb(struct bufferevent *bev, void *arg)
{
	struct session	*s = arg;

	s->last_active = session_now(s);
	if (s->srv_idle && s->state != S_FORWARD) {
		/* Nothing was asked: an idle server must stay quiet. */
		session_server_free(s);
		session_update_io(s);
		return;
	}
	session_pump(s);
}

/* The server's output drained to the low-water mark. */
static void
session_server_write_cb(struct bufferevent *bev, void *arg)
{
	struct session	*s = arg;

	s->last_active = session_now(s);
	session_pump(s);
}

/* A kept-alive connection failed before answering: dial afresh once. */
static int
session_retry(struct session *s)
{
	if (!s->reused || s->resp_got || s->req->h.body != HTTP_BODY_NONE)
		return (0);
	s->reused = 0;
	session_server_free(s);
	s->up = 0;
	session_resolve(s);
	return (1);
}

/* The server closed while an exchange was under way. */
static void
session_server_gone(struct session *s, short what)
{
	if (s->resp_head_done && s->resp->h.body == HTTP_BODY_CLOSE) {
		session_move(bufferevent_get_input(s->server),
		    bufferevent_get_output(s->client),
		    evbuffer_get_length(bufferevent_get_input(s->server)),
		    &s->down);
		s->resp_done = 1;
		session_exchange_done(s);
		return;
	}
	if (s->resp_head_done) {
		session_close(s, "upstream closed mid-response");
		return;
	}
	if (session_retry(s))
		return;
	session_refuse(s, 502, NULL, what & BEV_EVENT_ERROR ?
	    "upstream connection failed" :
	    "upstream closed the connection without answering");
}

/* Connected, EOF or error from the server. */
static void
session_server_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct session	*s = arg;

	if (s->state == S_DIAL) {
		if (what & BEV_EVENT_CONNECTED) {
			session_dialed(s);
			return;
		}
		s->dial_err = EVUTIL_SOCKET_ERROR();
		if (s->dial_err == 0)
			s->dial_err = ECONNREFUSED;
		session_dial_next(s);
		return;
	}
	if (s->state == S_TUNNEL && (what & BEV_EVENT_EOF)) {
		s->server_eof = 1;
		session_pump(s);
		return;
	}
	if (s->state == S_TUNNEL) {
		session_close(s, "upstream connection error");
		return;
	}
	if (s->state == S_FORWARD) {
		session_server_gone(s, what);
		return;
	}
	session_server_free(s);
	session_update_io(s);
}

/*
 * Refuse a captured connection: audit it, then answer 403 when it spoke
 * HTTP and nothing was dialed yet, else close at once with a RST (the
 * protocol is not ours to speak).
 */
static void
session_transparent_refuse(struct session *s, int status, const char *perr,
    const char *why)
{
	session_audit(s, "connect", status < 500 ? "deny" : "allow",
	    perr != NULL ? perr : why, 0);
	if (s->sniff_proto == SNI_PROTO_HTTP && s->server == NULL &&
	    s->state != S_TUNNEL && status == 403) {
		s->pending = P_NONE;
		session_forbid(s, perr, 1, why);
		return;
	}
	s->reset = 1;
	session_close(s, perr != NULL ? perr : why);
}

/*
 * Where a captured connection was going: a fake address stands for its
 * name; any other address is itself the host (only an IP rule allows
 * it).  Returns -1 when the connection was refused.
 */
static int
session_transparent_dest(struct session *s, const struct sockaddr_storage *ss)
{
	const struct sockaddr_in	*in = (const struct sockaddr_in *)ss;
	const uint8_t			*a = (const uint8_t *)&in->sin_addr;
	const char			*name, *errstr;

	if (ss->ss_family != AF_INET) {
		session_close(s, "captured connection is not IPv4");
		return (-1);
	}
	s->port = ntohs(in->sin_port);
	inet_ntop(AF_INET, &in->sin_addr, s->dst, sizeof s->dst);
	if (host_parse(s->dst, strlen(s->dst), &s->host, &errstr) == -1) {
		session_close(s, "bad destination address");
		return (-1);
	}
	s->have_host = 1;
	if (s->gw->fakeip == NULL || !fakeip_contains(s->gw->fakeip, a, 4))
		return (0);
	name = fakeip_lookup_name(s->gw->fakeip, a, 4);
	if (name == NULL ||
	    host_parse(name, strlen(name), &s->host, &errstr) == -1) {
		session_transparent_refuse(s, 403, "unknown-fake-address",
		    "no name has this address now (an old DNS answer?)");
		return (-1);
	}
	s->name_from = "fake-ip";
	return (0);
}

/*
 * A connection captured on its way to any address and port: find the
 * name it is for, then wait for its first bytes on ports where TLS or
 * HTTP is expected, or decide at once.
 */
static void
session_transparent_start(struct session *s, int fd)
{
	struct sockaddr_storage	ss;
	socklen_t		len = sizeof ss;

	s->state = S_SNIFF;
	s->via = "transparent";
	event_base_gettimeofday_cached(s->gw->base, &s->start);
	s->last_active = session_now(s);
	if (session_audit_ready(s) == -1)
		return;
	bufferevent_setwatermark(s->client, EV_READ, 0, SNI_PEEK_MAX);
	if (getsockname(fd, (struct sockaddr *)&ss, &len) == -1) {
		session_close(s, "getsockname failed");
		return;
	}
	if (session_transparent_dest(s, &ss) == -1)
		return;
	if (s->name_from == NULL)
		s->sniffed = 1;		/* an address: no name to check */
	if (!s->sniffed && transparent_wait_port(s->port)) {
		session_timer(s, TRANSPARENT_PEEK_SECONDS);
		return;
	}
	session_transparent_go(s);
}

/* Decide a captured connection by its name and port; dial if allowed. */
static void
session_transparent_go(struct session *s)
{
	if (session_decide(s) != 0)
		return;		/* refused, or held for a person (ask mode) */
	session_resolve(s);
}

/* The first bytes name another host: refuse as fronting. */
static void
session_fronting(struct session *s, const struct transparent_sniff *t)
{
	const char	*what = t->proto == SNI_PROTO_TLS ? "TLS SNI" : "Host";
	char		 why[SNI_NAME_MAX + HOST_TEXT_LEN + 64];

	snprintf(s->note, sizeof s->note, "%s %s", what, t->name);
	snprintf(why, sizeof why, "%s names %s, not %s", what, t->name,
	    s->host.text);
	session_transparent_refuse(s, 403, "fronting", why);
}

/* The first bytes have been judged: let them go up. */
static void
session_sniffed(struct session *s)
{
	s->sniffed = 1;
	if (s->state == S_TUNNEL) {
		bufferevent_setwatermark(s->client, EV_READ, 0, 0);
		session_timer(s, s->gw->cfg.idle_timeout);
	}
}

/*
 * Judge a captured connection's first bytes, kept in its input to go
 * upstream later.  Returns 1 once judged, 0 to wait for more, -1 when
 * the connection was refused.
 */
static int
session_sniff(struct session *s)
{
	struct evbuffer			*in = bufferevent_get_input(s->client);
	struct transparent_sniff	 t;
	enum transparent_verdict	 v;
	unsigned char			*p;
	size_t				 len;

	if (s->sniffed)
		return (1);
	len = evbuffer_get_length(in);
	if (len == 0 || len < s->sniff_need)
		return (0);
	if (len > SNI_PEEK_MAX)
		len = SNI_PEEK_MAX;
	if ((p = evbuffer_pullup(in, len)) == NULL) {
		session_close(s, "out of memory");
		return (-1);
	}
	v = transparent_check(p, len, &s->host, s->dst, &t);
	s->sniff_proto = t.proto;
	switch (v) {
	case TRANSPARENT_NEED_MORE:
		s->sniff_need = t.need;
		if (s->state == S_TUNNEL && !s->sniff_armed)
			session_timer(s, TRANSPARENT_PEEK_SECONDS);
		s->sniff_armed = 1;
		return (0);
	case TRANSPARENT_FRONTING:
		session_fronting(s, &t);
		return (-1);
	case TRANSPARENT_MALFORMED:
		snprintf(s->note, sizeof s->note, "%s", t.error);
		session_transparent_refuse(s, 403, "malformed",
		    t.proto == SNI_PROTO_TLS ? "a malformed TLS ClientHello" :
		    "a malformed HTTP request head");
		return (-1);
	case TRANSPARENT_MATCH:
		s->name_from = transparent_name_from(&t);
		break;
	default:
		break;
	}
	session_sniffed(s);
	return (1);
}

/* Nothing came in time. */
static void
session_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct session	*s = arg;
	time_t		 idle;

	switch (s->state) {
	case S_SNIFF:
	case S_TUNNEL:
		if (!s->sniffed && evbuffer_get_length(
		    bufferevent_get_input(s->client)) > 0) {
			session_transparent_refuse(s, 403, "first-bytes",
			    "the first bytes did not come in time");
			return;
		}
		if (s->state == S_TUNNEL)
			break;
		/* Nothing came: the name of the fake address decides. */
		session_transparent_go(s);
		if (!s->dead)
			session_update_io(s);
		return;
	case S_HEAD:
		if (evbuffer_get_length(bufferevent_get_input(s->client)) > 0)
			session_refuse(s, 408, NULL, "request head not received "
			    "in time");
		else
			session_close(s, "idle");
		return;
	case S_RESOLVE:
		if (s->query != NULL) {
			resolver_cancel(s->query);
			s->query = NULL;
			s->refs--;
		}
		session_refuse(s, 504, "resolve-failed", "name resolution "
		    "timed out");
		return;
	case S_DIAL:
		s->dial_err = ETIMEDOUT;
		s->dial_timeouts++;
		session_dial_next(s);
		return;
	case S_AGENT:
	case S_ASK:
		session_close(s, "timeout");
		return;
	default:
		break;
	}
	idle = session_now(s) - s->last_active;
	if (idle < s->gw->cfg.idle_timeout) {
		session_timer(s, s->gw->cfg.idle_timeout - idle);
		return;
	}
	if (s->state == S_FORWARD && !s->resp_head_done)
		session_refuse(s, 504, NULL, "upstream did not answer in time");
	else
		session_close(s, "idle timeout");
}

/* The gateway is stopping: close the sessions idle between requests. */
void
session_stop_all(struct gateway *gw)
{
	struct session	*s, *next;

	for (s = TAILQ_FIRST(&gw->sessions); s != NULL; s = next) {
		next = TAILQ_NEXT(s, entry);
		if (s->state == S_HEAD &&
		    evbuffer_get_length(bufferevent_get_input(s->client)) == 0)
			session_close(s, "stopping");
	}
}

/* Close every session. */
void
session_close_all(struct gateway *gw, const char *reason)
{
	struct session	*s;

	while ((s = TAILQ_FIRST(&gw->sessions)) != NULL)
		session_close(s, reason);
}

/*
 * Free the closed sessions no asynchronous step still holds (all of
 * them when force is set).  Returns how many were freed.
 */
size_t
session_reap(struct gateway *gw, int force)
{
	struct session	*s, *next;
	size_t		 n = 0;

	for (s = TAILQ_FIRST(&gw->dead); s != NULL; s = next) {
		next = TAILQ_NEXT(s, entry);
		if (s->refs > 0 && !force)
			continue;
		TAILQ_REMOVE(&gw->dead, s, entry);
		session_free(s);
		n++;
	}
	return (n);
}
