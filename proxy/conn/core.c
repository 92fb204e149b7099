/*
 * One client connection's life, under every step: the clock, the one
 * timer, the audit line, the one teardown (conn_close(); the struct is
 * freed later by conn_reap(), so callers may still look at c->dead),
 * the references to an upstream proxy, and the moving of bytes between
 * the two sides.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/time.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_struct.h>
#include <event2/event.h>

#include "lib/log.h"
#include "lib/metrics.h"
#include "proxy/audit/audit.h"
#include "proxy/audit/budget.h"
#include "proxy/conn/conn-int.h"
#include "proxy/escalate/agent.h"
#include "proxy/escalate/escalate.h"
#include "proxy/resolver/resolver.h"
#include "proxy/wire/scrub.h"

/* The policy that decides: the sandbox's, or the gateway's. */
struct policy *
conn_policy_in_force(const struct conn *c)
{
	return (sandbox_policy(c->sandbox, c->set->policy));
}

/* Seconds on the event loop's clock. */
time_t
conn_now(struct conn *c)
{
	struct timeval	tv;

	event_base_gettimeofday_cached(c->set->base, &tv);
	return (tv.tv_sec);
}

/* Milliseconds since the current exchange or tunnel started. */
static int64_t
conn_ms(struct conn *c)
{
	struct timeval	now, d;

	event_base_gettimeofday_cached(c->set->base, &now);
	timersub(&now, &c->start, &d);
	return ((int64_t)d.tv_sec * 1000 + d.tv_usec / 1000);
}

/* Arm the connection's one timer. */
void
conn_timer(struct conn *c, int seconds)
{
	struct timeval	tv = { seconds, 0 };

	c->timer_idle = 0;
	if (seconds <= 0)
		evtimer_del(c->timer);
	else
		evtimer_add(c->timer, &tv);
}

/*
 * Arm the timer for idle_timeout from now.  A timer armed so before is
 * left as it is: when it fires, conn_timed_out() finds the time since
 * idle_since (or last_active) short of idle_timeout and arms it for the
 * rest, so a busy kept-alive connection adds no timer work per request.
 */
void
conn_idle_timer(struct conn *c)
{
	event_base_gettimeofday_cached(c->set->base, &c->idle_since);
	if (c->timer_idle && evtimer_pending(c->timer, NULL))
		return;
	conn_timer(c, c->set->idle_timeout);
	c->timer_idle = 1;
}

/* The time left of idle_timeout after idle_since; 0 when none is. */
int
conn_idle_rest(struct conn *c, struct timeval *rest)
{
	struct timeval	now, end = { c->set->idle_timeout, 0 };

	event_base_gettimeofday_cached(c->set->base, &now);
	timeradd(&c->idle_since, &end, &end);
	if (!timercmp(&now, &end, <))
		return (0);
	timersub(&end, &now, rest);
	return (1);
}

/* Count what an audit line says: a decision, bytes moved. */
static void
conn_count(struct conn *c, const char *event, const char *verdict,
    const char *reason, int bytes)
{
	struct metrics	*m = c->set->metrics;

	if (strcmp(event, "connect") == 0)
		metrics_decision(m, 0, verdict, reason);
	else if (strcmp(event, "request") == 0)
		metrics_decision(m, 1, verdict, reason);
	if (bytes)
		metrics_bytes(m, c->up, c->down);
}

/* Count the connection in the tunnels gauge (on), or no longer. */
void
conn_count_tunnel(struct conn *c, int on)
{
	if (c->counted_tunnel == on)
		return;
	c->counted_tunnel = on;
	metrics_add(c->set->metrics, MG_TUNNELS, on ? 1 : -1);
}

/* Count the connection as held for a person's decision, or no longer. */
void
conn_count_held(struct conn *c, int on)
{
	if (c->counted_held == on)
		return;
	c->counted_held = on;
	metrics_add(c->set->metrics, MG_HELD, on ? 1 : -1);
}

/*
 * Write one audit line about this connection (flags: CONN_AUDIT_*).
 * Refusals, and lines that name secrets scrubbed, are written one by
 * one; other allowed lines within the sandbox's log budget.
 */
void
conn_audit(struct conn *c, const char *event, const char *verdict,
    const char *reason, int flags)
{
	struct audit_event	e;
	char			hint[HOST_TEXT_LEN + 32], scrubbed[256];
	int			bytes = (flags & CONN_AUDIT_BYTES) != 0;
	int			deny = verdict != NULL &&
				    strcmp(verdict, "deny") == 0;

	conn_count(c, event, verdict, reason, bytes);
	if (c->set->audit == NULL)
		return;
	audit_event_init(&e);
	e.event = event;
	e.verdict = verdict;
	e.reason = reason;
	e.session = c->set->session;
	audit_event_sandbox(&e, sandbox_ident(c->sandbox));
	e.conn = (int64_t)c->id;
	e.client = c->client_addr;
	e.host = c->have_host ? c->host.text : NULL;
	e.port = c->have_host ? c->port : -1;
	e.addr = c->addr[0] != '\0' ? c->addr : NULL;
	e.via = c->via;
	e.name_from = c->name_from;
	e.rule = conn_rule(c)[0] != '\0' ? conn_rule(c) : NULL;
	e.status = c->status > 0 ? c->status : -1;
	e.bytes_up = bytes ? c->up : -1;
	e.bytes_down = bytes ? c->down : -1;
	e.ms = bytes ? conn_ms(c) : -1;
	/* The path without its query: queries may carry secrets. */
	e.method = c->method[0] != '\0' ? c->method : NULL;
	e.path = conn_path(c)[0] != '\0' ? conn_path(c) : NULL;
	if (conn_note(c) != NULL)
		e.detail = conn_note(c);
	else if (c->upstream != NULL && c->server != NULL && !c->srv_idle)
		e.detail = c->upstream->detail;
	/* A refusal a grant could lift names the command to ask for one. */
	if (deny && conn_grantable(c, reason, hint, sizeof hint))
		e.ask = hint;
	/* The secrets whose values were taken out of the response. */
	if (c->scrubbing && c->scrub != NULL &&
	    scrub_found_names(c->scrub, scrubbed, sizeof scrubbed) > 0)
		e.secret_scrubbed = scrubbed;
	if (deny || (flags & CONN_AUDIT_REFUSAL) || e.secret_scrubbed != NULL ||
	    c->set->budget == NULL)
		audit_write(c->set->audit, &e);
	else
		audit_budget_write(c->set->budget, sandbox_ident(c->sandbox),
		    sandbox_log_bucket(c->sandbox), &e);
}

/*
 * Could a grant lift a refusal labelled perr (the policy's, a request
 * rule's checks), nothing in c->fix saying that none can?  Then hint
 * (when not NULL) is the command that asks for one.  Refusal pages,
 * audit lines and the notices of refusals all ask here.
 */
int
conn_grantable(const struct conn *c, const char *perr, char *hint,
    size_t len)
{
	static const char *const	 lifted[] = { "denied-by-policy",
	    "ip-literal", "port", "constraint", NULL };
	const char *const		*p;

	if (!c->have_host || conn_fix(c) != NULL || perr == NULL)
		return (0);
	for (p = lifted; *p != NULL; p++) {
		if (strcmp(perr, *p) != 0)
			continue;
		if (hint != NULL)
			escalate_hint(&c->host, c->port, hint, len);
		return (1);
	}
	return (0);
}

/* Write the line owed for a tunnel or an exchange, once. */
void
conn_audit_pending(struct conn *c, const char *reason)
{
	enum conn_pending	p = c->pending;

	c->pending = P_NONE;
	if (p == P_TUNNEL)
		conn_audit(c, "close", NULL, reason, CONN_AUDIT_BYTES);
	else if (p == P_REQUEST)
		conn_audit(c, "request", "allow", reason, CONN_AUDIT_BYTES);
}

/* Drop the upstream connection. */
void
conn_server_free(struct conn *c)
{
	conn_read_release(c->server, &c->srd);
	if (c->server != NULL)
		bufferevent_free(c->server);
	c->server = NULL;
	free(c->srv_name);
	c->srv_name = NULL;
	c->srv_idle = 0;
	c->server_tls = 0;
	c->server_eof = c->server_shut = 0;
	c->upstream_open = 0;
}

/* Stop splicing: drop the events, close the pipes. */
void
conn_splice_free(struct conn *c)
{
	if (c->cev != NULL)
		event_free(c->cev);
	if (c->sev != NULL)
		event_free(c->sev);
	c->cev = c->sev = NULL;
	pipebuf_close(&c->up_pipe);
	pipebuf_close(&c->down_pipe);
	c->spliced = 0;
}

/* Tear the connection down: the one way out. */
void
conn_close(struct conn *c, const char *reason)
{
	struct conn_set	*set = c->set;

	if (c->dead)
		return;
	log_debug("%s: #%llu %s: %s", __func__, c->id, c->client_addr,
	    reason);
	conn_audit_pending(c, reason);
	conn_count_tunnel(c, 0);
	conn_count_held(c, 0);
	c->dead = 1;
	conn_splice_free(c);
	agent_wait_cancel(c->await);
	c->await = NULL;
	escalate_wait_cancel(c->ask);
	c->ask = NULL;
	if (c->query != NULL) {
		resolver_cancel(c->query);
		c->query = NULL;
		c->refs--;
	}
	conn_server_free(c);
	conn_out_release(c);
	conn_read_release(c->client, &c->crd);
	if (c->client != NULL && c->reset) {
		struct linger	l = { 1, 0 };

		setsockopt(bufferevent_getfd(c->client), SOL_SOCKET,
		    SO_LINGER, &l, sizeof l);
	}
	if (c->tls_drained != NULL)
		evbuffer_remove_cb_entry(bufferevent_get_output(
		    bufferevent_get_underlying(c->client)), c->tls_drained);
	c->tls_drained = NULL;
	if (c->client != NULL)
		bufferevent_free(c->client);
	c->client = NULL;
	if (c->timer != NULL)
		event_free(c->timer);
	c->timer = NULL;
	TAILQ_REMOVE(&set->conns, c, entry);
	TAILQ_INSERT_TAIL(&set->dead, c, entry);
	event_active(set->reaper, EV_TIMEOUT, 0);
}

/* Free the header values secrets were put back in. */
void
conn_secrets_free(struct conn *c)
{
	size_t	i;

	if (c->swaps == NULL)
		return;
	for (i = 0; i < c->swaps->n; i++) {
		explicit_bzero(c->swaps->v[i].p, c->swaps->v[i].len);
		free(c->swaps->v[i].p);
	}
	c->swaps->n = 0;
}

/* Forget the scrubber of responses (and the values it holds). */
void
conn_scrub_free(struct conn *c)
{
	scrub_free(c->scrub);
	c->scrub = NULL;
	if (c->scrub_out != NULL)
		evbuffer_free(c->scrub_out);
	c->scrub_out = NULL;
	c->scrub_mask = 0;
	c->scrubbing = c->scrub_body = c->scrub_chunked = 0;
}

/*
 * Drop the parsed request and response, the heads they point into and
 * the addresses to dial: about 20 KiB that an open tunnel no longer
 * needs.
 */
void
conn_http_free(struct conn *c)
{
	conn_secrets_free(c);
	conn_scrub_free(c);
	free(c->head);
	free(c->req);
	conn_resp_free(c);
	free(c->fwd);
	free(c->addrs);
	c->head = NULL;
	c->req = NULL;
	c->fwd = NULL;
	c->addrs = NULL;
	c->naddrs = c->next_addr = 0;
	c->have_req = 0;
}

/*
 * Begin reading a response head (to a request, or to CONNECT sent to
 * an upstream proxy), the framing's room made the first time.  Returns
 * -1 when out of memory.
 */
int
conn_fwd_start(struct conn *c)
{
	if (c->fwd == NULL && (c->fwd = calloc(1, sizeof *c->fwd)) == NULL)
		return (-1);
	http_scan_init(&c->fwd->rscan);
	return (0);
}

/* Drop the last response's head and what parsing it made. */
void
conn_resp_free(struct conn *c)
{
	if (c->fwd == NULL)
		return;
	free(c->fwd->rhead);
	free(c->fwd->resp);
	c->fwd->rhead = NULL;
	c->fwd->resp = NULL;
}

/* Take a reference to an upstream proxy (conn.h). */
struct conn_upstream *
conn_upstream_ref(struct conn_upstream *u)
{
	if (u != NULL)
		u->refs++;
	return (u);
}

/* Drop a reference; the last one frees it, the credentials wiped. */
void
conn_upstream_unref(struct conn_upstream *u)
{
	if (u == NULL || --u->refs > 0)
		return;
	if (u->auth != NULL) {
		explicit_bzero(u->auth, strlen(u->auth));
		free(u->auth);
	}
	free(u);
}

/*
 * The texts a refusal carries, what must change when no grant can lift
 * it (fix) and its detail (note), are kept on the heap, and only once
 * there is one: few connections are refused, and an idle tunnel should
 * not carry their room.  Each is NULL when empty.
 */
const char *
conn_fix(const struct conn *c)
{
	return (c->fix != NULL && c->fix[0] != '\0' ? c->fix : NULL);
}

const char *
conn_note(const struct conn *c)
{
	return (c->note != NULL && c->note[0] != '\0' ? c->note : NULL);
}

/* Forget both, for the next request. */
void
conn_texts_free(struct conn *c)
{
	free(c->fix);
	free(c->note);
	c->fix = c->note = NULL;
}

/*
 * Set one (cut to len).  Without memory it stays empty: the refusal
 * stands, only its hint or detail is lost.
 */
static void
conn_text_set(char **p, size_t len, const char *fmt, va_list ap)
{
	if (*p == NULL && (*p = malloc(len)) == NULL)
		return;
	vsnprintf(*p, len, fmt, ap);
}

void
conn_fix_set(struct conn *c, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	conn_text_set(&c->fix, ESCALATE_FIX_LEN, fmt, ap);
	va_end(ap);
}

void
conn_note_set(struct conn *c, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	conn_text_set(&c->note, CONN_NOTE_LEN, fmt, ap);
	va_end(ap);
}

/*
 * What decided, "file:line" or "grant ID", kept on the heap in room
 * that fits it (a rule's text may be long, most are a few bytes) and
 * is kept for the next request.  Without memory it stays empty.
 */
const char *
conn_rule(const struct conn *c)
{
	return (c->rule != NULL ? c->rule : "");
}

void
conn_rule_set(struct conn *c, const char *text)
{
	size_t	 n = strlen(text);
	char	*p;

	if (n >= c->rule_size) {
		if ((p = realloc(c->rule, n + 1)) == NULL) {
			if (c->rule != NULL)
				c->rule[0] = '\0';
			return;
		}
		c->rule = p;
		c->rule_size = n + 1;
	}
	memcpy(c->rule, text, n + 1);
}

/* The request's path kept for the audit (conn_keep_path), or "". */
const char *
conn_path(const struct conn *c)
{
	return (c->path != NULL ? c->path : "");
}

/* Free a dead connection's memory. */
void
conn_free(struct conn *c)
{
	conn_texts_free(c);
	conn_http_free(c);
	free(c->rule);
	free(c->path);
	free(c->swaps);
	conn_upstream_unref(c->upstream);
	sandbox_unref(c->sandbox);
	free(c);
}

/*
 * Bytes waiting to be written to a side: for TLS, what the socket below
 * has still to write too (records already made).
 */
size_t
conn_outlen(struct bufferevent *bev)
{
	struct bufferevent	*under;
	size_t			 n;

	if (bev == NULL)
		return (0);
	n = evbuffer_get_length(bufferevent_get_output(bev));
	if ((under = bufferevent_get_underlying(bev)) != NULL)
		n += evbuffer_get_length(bufferevent_get_output(under));
	return (n);
}

/*
 * A plain socket is read here, by its bufferevent's own read event
 * borrowed (conn_reading()): an event of the connection's own would
 * cost 144 bytes a side.  The event is in libevent's public struct
 * (event2/bufferevent_struct.h), which it asks not to rely on lightly:
 * only ev_read is touched, as bufferevent_setfd() assigns it, and its
 * callback is put back before the bufferevent reads again.
 */
static struct event *
conn_rd_event(struct bufferevent *bev)
{
	return (&bev->ev_read);
}

/* A socket bufferevent's own read callback, the same for all of them. */
static event_callback_fn	conn_bev_readcb;

/*
 * A side's socket is readable: read it with one recv(), as far as its
 * read high-water mark allows, into its bufferevent's input, then hand
 * on what came, its EOF or its error as the bufferevent would.  Saves
 * the ioctl(FIONREAD) the bufferevent makes before every read.  The
 * bytes are read on the stack and added at their size: a chain as big
 * as the read would be allocated and freed each time.
 */
static void
conn_read_side(struct conn *c, struct bufferevent *bev,
    bufferevent_data_cb readcb, bufferevent_event_cb eventcb)
{
	struct evbuffer	*in = bufferevent_get_input(bev);
	struct event	*rd = conn_rd_event(bev);
	char		 buf[CONN_READ];
	size_t		 high = 0, len, want = sizeof buf;
	ssize_t		 n;
	int		 rv = 0;

	if (bufferevent_getwatermark(bev, EV_READ, NULL, &high) == 0 &&
	    high > 0) {
		if ((len = evbuffer_get_length(in)) >= high) {
			event_del(rd);
			return;
		}
		if (high - len < want)
			want = high - len;
	}
	if ((n = recv(event_get_fd(rd), buf, want, 0)) > 0) {
		/* A socket bufferevent locks its input's end. */
		evbuffer_unfreeze(in, 0);
		rv = evbuffer_add(in, buf, (size_t)n);
		evbuffer_freeze(in, 0);
		if (rv == 0) {
			readcb(bev, c);
			return;
		}
	}
	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK ||
	    errno == EINTR))
		return;
	event_del(rd);
	eventcb(bev, BEV_EVENT_READING |
	    (n == 0 ? BEV_EVENT_EOF : BEV_EVENT_ERROR), c);
}

/* The client's socket is readable. */
static void
conn_client_rd_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn	*c = arg;

	conn_read_side(c, c->client, c->set->ev->client_read,
	    c->set->ev->client_event);
}

/* The server's socket is readable. */
static void
conn_server_rd_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn	*c = arg;

	conn_read_side(c, c->server, c->set->ev->server_read,
	    c->set->ev->server_event);
}

/*
 * Read the client now, without waiting for the loop to say it is
 * readable: a new client's request head has often come with its
 * handshake, and reading it at once saves the loop turn.  A client
 * with nothing yet costs one recv() that finds nothing.
 */
void
conn_read_client(struct conn *c)
{
	if (c->crd)
		conn_client_rd_cb(bufferevent_getfd(c->client), EV_READ, c);
}

/*
 * Take a socket's read event from its bufferevent (*rd set), to read
 * the socket here with cb; its bufferevent stops reading.
 */
static void
conn_read_take(struct conn *c, struct bufferevent *bev, int *rd,
    event_callback_fn cb)
{
	struct event	*ev = conn_rd_event(bev);

	bufferevent_disable(bev, EV_READ);
	if (conn_bev_readcb == NULL)
		conn_bev_readcb = event_get_callback(ev);
	event_assign(ev, c->set->base, event_get_fd(ev),
	    EV_READ | EV_PERSIST | EV_FINALIZE, cb, c);
	*rd = 1;
}

/*
 * Give a socket's read event back to its bufferevent (closing,
 * splicing, or TLS over the socket, whose filter enables reading it):
 * stopped, with the bufferevent's own callback.
 */
void
conn_read_release(struct bufferevent *bev, int *rd)
{
	struct event	*ev;

	if (!*rd)
		return;
	*rd = 0;
	ev = conn_rd_event(bev);
	event_del(ev);
	event_assign(ev, event_get_base(ev), event_get_fd(ev),
	    EV_READ | EV_PERSIST | EV_FINALIZE, conn_bev_readcb, bev);
}

/*
 * Turn reading a side on or off.  A plain socket is read here
 * (conn_read_side()), by its bufferevent's read event taken the first
 * time; a TLS filter, or a spliced tunnel's socket, by its bufferevent.
 */
static void
conn_reading(struct conn *c, struct bufferevent *bev, int tls, int *rd,
    event_callback_fn cb, int on)
{
	if (bev == NULL)
		return;
	if (!*rd && on && !tls && !c->spliced &&
	    bufferevent_get_underlying(bev) == NULL &&
	    bufferevent_getfd(bev) != -1)
		conn_read_take(c, bev, rd, cb);
	if (*rd) {
		if (on)
			event_add(conn_rd_event(bev), NULL);
		else
			event_del(conn_rd_event(bev));
	} else if (on)
		bufferevent_enable(bev, EV_READ);
	else
		bufferevent_disable(bev, EV_READ);
}

/*
 * Between a request read whole and the next head, go on reading the
 * client while little has come (a pipelined request, or its EOF, which
 * conn_client_event_cb() then only marks): turning reading off and on
 * for every exchange would cost two epoll_ctl calls.
 */
int
conn_client_between(const struct conn *c)
{
	return (!c->client_tls && ((c->state == S_FORWARD && c->req_done) ||
	    c->state == S_REPLY));
}

/* Tell whether to go on reading the client between exchanges. */
static int
conn_keep_reading(const struct conn *c)
{
	return (conn_client_between(c) && !c->close_after &&
	    !c->client_eof && evbuffer_get_length(
	    bufferevent_get_input(c->client)) < c->set->lim.max_head);
}

/*
 * Is the connection resolving or dialing what will be a tunnel (a
 * CONNECT or a SOCKS5 request, neither bound nor captured)?  Then the
 * client stays readable while the server is resolved and dialed rather
 * than have reading turned off and on again (two epoll_ctl calls): what
 * it sends early waits in its input, bounded by the head's high-water
 * mark, and its EOF is kept for the tunnel (conn_client_event_cb()).
 */
int
conn_tunnel_next(const struct conn *c)
{
	return ((c->state == S_RESOLVE || c->state == S_DIAL) &&
	    !c->bound && !c->transparent && !c->client_tls &&
	    (c->socks || (c->have_req && c->req != NULL &&
	    c->req->is_connect)));
}

/* Read from each side only when its peer can take more (back-pressure). */
void
conn_update_io(struct conn *c)
{
	int	cr = 0, sr = 0;

	switch (c->state) {
	case S_HEAD:
		cr = 1;
		sr = c->srv_idle;
		break;
	case S_SNIFF:
	case S_SOCKS:
		cr = 1;
		break;
	case S_UPSTREAM:
		sr = 1;
		break;
	case S_FORWARD:
		cr = c->req_done ? conn_keep_reading(c) :
		    conn_outlen(c->server) < CONN_HIGH;
		sr = !c->resp_done && conn_outlen(c->client) < CONN_HIGH;
		break;
	case S_TUNNEL:
		if (c->spliced)
			return;
		cr = !c->client_eof && conn_outlen(c->server) < CONN_HIGH;
		sr = !c->server_eof && conn_outlen(c->client) < CONN_HIGH;
		break;
	case S_REPLY:
		cr = conn_keep_reading(c);
		sr = c->srv_idle;
		break;
	case S_RESOLVE:
	case S_DIAL:
		cr = conn_tunnel_next(c) && !c->client_eof;
		break;
	case S_AGENT:
	case S_ASK:
		cr = 1;		/* a body, or the EOF that ends a wait */
		break;
	default:
		break;
	}
	conn_reading(c, c->client, c->client_tls, &c->crd, conn_client_rd_cb,
	    cr);
	if (c->state != S_DIAL && c->state != S_RESOLVE)
		conn_reading(c, c->server, c->server_tls, &c->srd,
		    conn_server_rd_cb, sr);
}

/* Move up to n bytes from one buffer to another, counting them. */
size_t
conn_move(struct evbuffer *from, struct evbuffer *to, size_t n,
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
 * left to the bufferevent, which reports the error as usual.  A side
 * with TLS (a filter over the socket) is always queued.
 */
void
conn_send(struct bufferevent *to, const void *p, size_t len)
{
	ssize_t	n = 0;

	if (conn_outlen(to) == 0 && bufferevent_get_underlying(to) == NULL &&
	    (n = send(bufferevent_getfd(to), p, len, MSG_NOSIGNAL)) < 0)
		n = 0;
	if ((size_t)n < len)
		evbuffer_add(bufferevent_get_output(to), (const char *)p + n,
		    len - (size_t)n);
}

/*
 * The audit log holds lines until the end of the event loop's pass
 * (audit_flush()).  Before the client can read something in this pass,
 * those lines are written, so that an answer a client has seen always
 * has its line in the file: bytes written straight to its socket, or
 * added after bytes already queued (its socket may have been found
 * writable in this pass).  Bytes added to an empty output go out in a
 * later pass, after the lines.
 */
void
conn_audit_barrier(struct conn *c)
{
	audit_flush(c->set->audit);
}

/* Send bytes to the client as conn_send() does, its lines written first. */
void
conn_send_client(struct conn *c, const void *p, size_t len)
{
	conn_audit_barrier(c);
	conn_send(c->client, p, len);
}

/* Relay all of one side's input to the other, as conn_send() does. */
void
conn_relay(struct evbuffer *in, struct bufferevent *to, int64_t *count)
{
	int	n;

	if (evbuffer_get_length(in) == 0)
		return;
	if (conn_outlen(to) == 0 && bufferevent_get_underlying(to) == NULL &&
	    (n = evbuffer_write(in, bufferevent_getfd(to))) > 0)
		*count += n;
	conn_move(in, bufferevent_get_output(to), evbuffer_get_length(in),
	    count);
}

/*
 * The client's output grew from nothing: queue the connection for the
 * set's flusher, which writes it at the end of the pass.
 */
static void
conn_out_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct conn	*c = arg;

	if (info->n_added == 0 || info->orig_size != 0 || c->flushing ||
	    c->dead || c->spliced)
		return;
	c->flushing = 1;
	TAILQ_INSERT_TAIL(&c->set->flushq, c, flush_entry);
	event_active(c->set->flusher, EV_WRITE, 0);
}

/*
 * Write the client's output ourselves (conn_flush()) rather than have
 * its bufferevent wait for the socket to be writable: an answer then
 * costs one writev and no epoll_ctl to arm and disarm EPOLLOUT.  Its
 * bufferevent writes only what a full socket left (backpressure).
 */
void
conn_out_own(struct conn *c)
{
	struct evbuffer	*out = bufferevent_get_output(c->client);

	if (c->set->flusher == NULL ||
	    (c->out_cb = evbuffer_add_cb(out, conn_out_cb, c)) == NULL)
		return;
	bufferevent_disable(c->client, EV_WRITE);
}

/*
 * Give the client's output back to its bufferevent: closing, splicing,
 * or a TLS filter going over the socket (which enables its writing).
 */
void
conn_out_release(struct conn *c)
{
	struct bufferevent	*bev = c->client;

	if (c->out_cb == NULL)
		return;
	if (bufferevent_get_underlying(bev) != NULL)
		bev = bufferevent_get_underlying(bev);
	evbuffer_remove_cb_entry(bufferevent_get_output(bev), c->out_cb);
	c->out_cb = NULL;
	if (c->flushing)
		TAILQ_REMOVE(&c->set->flushq, c, flush_entry);
	c->flushing = 0;
}

/*
 * Write a queued client's output, its audit lines first.  What the
 * socket does not take is left to the bufferevent, which waits for the
 * socket (and reports an error).  Returns 0 when all of it went.
 */
int
conn_flush(struct conn *c)
{
	struct evbuffer	*out = bufferevent_get_output(c->client);
	int		 n;

	TAILQ_REMOVE(&c->set->flushq, c, flush_entry);
	c->flushing = 0;
	if (c->dead || c->spliced || c->out_cb == NULL)
		return (-1);
	conn_audit_barrier(c);
	/* A socket bufferevent locks its output's start; it waits now. */
	evbuffer_unfreeze(out, 1);
	n = evbuffer_write(out, bufferevent_getfd(c->client));
	evbuffer_freeze(out, 1);
	if (n < 0 || evbuffer_get_length(out) > 0) {
		bufferevent_enable(c->client, EV_WRITE);
		return (-1);
	}
	return (0);
}

/*
 * The client's bufferevent wrote all it was left: from now on the
 * flusher writes again (its write event is already off).
 */
void
conn_out_drained(struct conn *c)
{
	if (c->out_cb != NULL && !c->dead &&
	    evbuffer_get_length(bufferevent_get_output(c->client)) == 0)
		bufferevent_disable(c->client, EV_WRITE);
}
