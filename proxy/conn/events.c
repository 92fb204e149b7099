/*
 * Where every event of a connection enters: its sockets, its timer, the
 * resolver's answer, a person's decision, the end of a long poll.  Each
 * hands the event to the step below and then runs the pump, which steps
 * the state machine while the state changes.  Also the set's door:
 * opening, stopping, closing and reaping connections.
 */
#include "config.h"

#include <sys/socket.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "lib/log.h"
#include "proxy/audit/audit.h"
#include "proxy/conn/conn-int.h"
#include "proxy/escalate/agent.h"
#include "proxy/resolver/resolver.h"

static void	conn_pump(struct conn *);
static void	conn_client_read_cb(struct bufferevent *, void *);
static void	conn_client_write_cb(struct bufferevent *, void *);
static void	conn_client_event_cb(struct bufferevent *, short, void *);
static void	conn_timer_cb(evutil_socket_t, short, void *);

/* Take over an accepted client connection. */
int
conn_open(struct conn_set *set, int fd, const struct sockaddr *sa,
    socklen_t salen, enum conn_kind kind, struct sandbox *sb)
{
	struct conn	*c;

	if ((c = calloc(1, sizeof *c)) == NULL)
		goto fail;
	c->set = set;
	c->id = ++set->next_id;
	c->sandbox = sandbox_ref(sb);
	c->up_pipe.fd[0] = c->up_pipe.fd[1] = -1;
	c->down_pipe.fd[0] = c->down_pipe.fd[1] = -1;
	addr_sockaddr_text(sa, c->client_addr, sizeof c->client_addr);
	c->timer = evtimer_new(set->base, conn_timer_cb, c);
	c->client = bufferevent_socket_new(set->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (c->timer == NULL || c->client == NULL)
		goto fail;
	bufferevent_setcb(c->client, conn_client_read_cb,
	    conn_client_write_cb, conn_client_event_cb, c);
	bufferevent_setwatermark(c->client, EV_WRITE, CONN_LOW, 0);
	conn_out_own(c);
	TAILQ_INSERT_TAIL(&set->conns, c, entry);
	set->nconns++;
	c->transparent = kind == CONN_TRANSPARENT;
	c->sniffed = !c->transparent;
	c->socks = kind == CONN_SOCKS;
	if (c->transparent)
		conn_transparent_start(c, fd);
	else if (c->socks)
		conn_socks_start(c);
	else
		conn_head_start(c);
	if (!c->dead)
		conn_pump(c);
	if (!c->dead && c->state == S_HEAD)
		conn_read_client(c);
	return (0);
fail:
	log_warnx("%s: out of memory", __func__);
	if (c != NULL) {
		if (c->client != NULL)
			bufferevent_free(c->client);
		else
			evutil_closesocket(fd);
		if (c->timer != NULL)
			event_free(c->timer);
		sandbox_unref(c->sandbox);
		free(c);
	} else
		evutil_closesocket(fd);
	return (-1);
}

/* Finish an answer of our own: close after it, or read the next request. */
static void
conn_replied(struct conn *c)
{
	if (c->close_after || c->set->stopping) {
		conn_close(c, c->pending == P_NONE ? "done" : "closed");
		return;
	}
	c->nrequests++;
	conn_head_start(c);
}

/* Do whatever the state allows with the bytes at hand. */
static void
conn_step(struct conn *c)
{
	switch (c->state) {
	case S_HEAD:
		conn_read_head(c);
		break;
	case S_FORWARD:
		conn_forward_request(c);
		if (!c->dead && c->state == S_FORWARD)
			conn_forward_response(c);
		break;
	case S_SOCKS:
		conn_socks_read(c);
		break;
	case S_UPSTREAM:
		if (conn_upstream_read(c) == 1)
			conn_dialed(c);
		break;
	case S_SNIFF:
		if (conn_sniff(c) == 1)
			conn_transparent_go(c);
		break;
	case S_TUNNEL:
		if (conn_sniff(c) != -1)
			conn_tunnel(c);
		break;
	case S_AGENT:
		if (c->await == NULL)
			conn_agent_body(c);
		break;
	case S_REPLY:
		if (conn_outlen(c->client) == 0)
			conn_replied(c);
		break;
	default:
		break;
	}
}

/*
 * Run the steps: each one returns having changed the state or not, and
 * a change runs the new state's step at once (a reply sent makes way
 * for the next head, a dialed server for the tunnel).  Then read from
 * each side only as far as its peer can take.
 */
static void
conn_pump(struct conn *c)
{
	enum conn_state	st;

	do {
		st = c->state;
		conn_step(c);
	} while (!c->dead && c->state != st);
	if (!c->dead)
		conn_update_io(c);
}

/* The client sent bytes. */
static void
conn_client_read_cb(struct bufferevent *bev, void *arg)
{
	struct conn	*c = arg;

	c->last_active = conn_now(c);
	conn_pump(c);
}

/* The client's output drained to the low-water mark. */
static void
conn_client_write_cb(struct bufferevent *bev, void *arg)
{
	struct conn	*c = arg;

	c->last_active = conn_now(c);
	conn_out_drained(c);
	if (c->state == S_REPLY && conn_outlen(c->client) != 0)
		return;
	conn_pump(c);
}

/*
 * The end of a pass: write the clients' output queued in it, the audit
 * lines first (conn_flush()), and go on as a drained output does.
 */
static void
conn_flush_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn_set	*set = arg;
	struct conn	*c;

	while ((c = TAILQ_FIRST(&set->flushq)) != NULL)
		if (conn_flush(c) == 0)
			conn_client_write_cb(c->client, c);
}

/* EOF or error from the client, or its TLS handshake done. */
static void
conn_client_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn	*c = arg;

	if (what & BEV_EVENT_CONNECTED) {
		c->tls_up = 1;
		conn_pump(c);
		return;
	}
	if (c->client_tls && !c->tls_up) {
		conn_tls_failed(c, 0);
		return;
	}
	if ((what & BEV_EVENT_EOF) && conn_client_between(c)) {
		/* Done sending: answer the request, then close. */
		c->client_eof = 1;
		c->close_after = 1;
		conn_pump(c);
		return;
	}
	if ((what & BEV_EVENT_EOF) && (c->state == S_TUNNEL ||
	    conn_tunnel_next(c))) {
		c->client_eof = 1;
		conn_pump(c);
		return;
	}
	if (what & BEV_EVENT_ERROR)
		conn_close(c, "client connection error");
	else
		conn_close(c, "client closed");
}

/* The server sent bytes. */
static void
conn_server_read_cb(struct bufferevent *bev, void *arg)
{
	struct conn	*c = arg;

	c->last_active = conn_now(c);
	if (c->srv_idle && c->state != S_FORWARD) {
		/* Nothing was asked: an idle server must stay quiet. */
		conn_server_free(c);
		conn_update_io(c);
		return;
	}
	conn_pump(c);
}

/* The server's output drained to the low-water mark. */
static void
conn_server_write_cb(struct bufferevent *bev, void *arg)
{
	struct conn	*c = arg;

	c->last_active = conn_now(c);
	conn_pump(c);
}

/* Connected, EOF or error from the server. */
static void
conn_server_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn	*c = arg;

	if (c->state == S_DIAL) {
		if (what & BEV_EVENT_CONNECTED) {
			conn_dialed(c);
			if (!c->dead)
				conn_pump(c);
			return;
		}
		if (c->server_tls) {
			conn_tls_failed(c, 1);
			if (!c->dead)
				conn_pump(c);
			return;
		}
		c->dial_err = EVUTIL_SOCKET_ERROR();
		if (c->dial_err == 0)
			c->dial_err = ECONNREFUSED;
		conn_dial_next(c);
		if (!c->dead)
			conn_pump(c);
		return;
	}
	if (c->state == S_UPSTREAM) {
		conn_upstream_failed(c, "upstream-failed", "%s before "
		    "answering CONNECT", what & BEV_EVENT_ERROR ?
		    "failed" : "closed the connection");
		return;
	}
	if (c->state == S_TUNNEL && (what & BEV_EVENT_EOF)) {
		c->server_eof = 1;
		conn_pump(c);
		return;
	}
	if (c->state == S_TUNNEL) {
		conn_close(c, "upstream connection error");
		return;
	}
	if (c->state == S_FORWARD) {
		if (!conn_server_gone(c) && !conn_retry(c))
			conn_refuse(c, 502, NULL, what & BEV_EVENT_ERROR ?
			    "upstream connection failed" :
			    "upstream closed the connection without answering");
		if (!c->dead)
			conn_pump(c);
		return;
	}
	conn_server_free(c);
	conn_update_io(c);
}

/*
 * The connection's timer: its state's deadline passed, or, moving bytes,
 * the idle check is due.  Returns 1 when the timer was armed again.
 */
static int
conn_timed_out(struct conn *c)
{
	struct timeval	rest;
	time_t		idle;

	/* Armed for idleness by an earlier exchange: wait the rest. */
	if (c->timer_idle && conn_idle_rest(c, &rest)) {
		evtimer_add(c->timer, &rest);
		return (1);
	}
	switch (c->state) {
	case S_SNIFF:
	case S_TUNNEL:
		if (!c->sniffed && evbuffer_get_length(
		    bufferevent_get_input(c->client)) > 0) {
			conn_transparent_refuse(c, 403, "first-bytes",
			    "the first bytes did not come in time");
			return (0);
		}
		if (c->state == S_TUNNEL)
			break;
		/* Nothing came: the name of the fake address decides. */
		conn_transparent_go(c);
		return (0);
	case S_HEAD:
		if (evbuffer_get_length(bufferevent_get_input(c->client)) > 0)
			conn_refuse(c, 408, NULL, "request head not received "
			    "in time");
		else
			conn_close(c, "idle");
		return (0);
	case S_RESOLVE:
		if (c->query != NULL) {
			resolver_cancel(c->query);
			c->query = NULL;
			c->refs--;
		}
		conn_refuse(c, 504, "resolve-failed", "name resolution "
		    "timed out");
		return (0);
	case S_DIAL:
		c->dial_err = ETIMEDOUT;
		c->dial_timeouts++;
		conn_dial_next(c);
		return (0);
	case S_SOCKS:
		conn_close(c, "SOCKS5 handshake not received in time");
		return (0);
	case S_UPSTREAM:
		conn_upstream_failed(c, "upstream-failed", "did not answer "
		    "CONNECT in %d s", c->set->connect_timeout);
		return (0);
	case S_AGENT:
	case S_ASK:
		conn_close(c, "timeout");
		return (0);
	default:
		break;
	}
	idle = conn_now(c) - c->last_active;
	if (idle < c->set->idle_timeout) {
		conn_timer(c, c->set->idle_timeout - idle);
		c->timer_idle = 1;
		return (1);
	}
	if (c->state == S_FORWARD && !c->resp_head_done)
		conn_refuse(c, 504, NULL, "upstream did not answer in time");
	else
		conn_close(c, "idle timeout");
	return (0);
}

/* Nothing came in time. */
static void
conn_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn	*c = arg;

	if (conn_timed_out(c) == 0 && !c->dead)
		conn_pump(c);
}

/* The resolver's answer. */
static void
conn_resolved_cb(int status, const char *errstr,
    const struct resolver_result *res, void *arg)
{
	struct conn	*c = arg;

	c->query = NULL;
	c->refs--;
	if (c->dead)
		return;
	conn_resolved(c, status, errstr, res);
	if (!c->dead)
		conn_pump(c);
}

/* Ask mode: the person decided, or the time ran out. */
static void
conn_asked_cb(const struct escalate_request *r, int timed_out, void *arg)
{
	struct conn	*c = arg;

	c->ask = NULL;
	if (c->dead)
		return;
	conn_asked(c, r, timed_out);
	if (!c->dead)
		conn_pump(c);
}

/* A long poll on the agent endpoint is over. */
static void
conn_agent_waited_cb(struct agent_response *final, void *arg)
{
	struct conn	*c = arg;

	c->await = NULL;
	if (!c->dead)
		conn_agent_send(c, final);
	agent_response_free(final);
	if (!c->dead)
		conn_pump(c);
}

/* A spliced tunnel's socket is ready. */
static void
conn_splice_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn	*c = arg;

	c->last_active = conn_now(c);
	conn_splice_move(c);
}

static const struct conn_events conn_events = {
	.client_read = conn_client_read_cb,
	.client_write = conn_client_write_cb,
	.client_event = conn_client_event_cb,
	.server_read = conn_server_read_cb,
	.server_write = conn_server_write_cb,
	.server_event = conn_server_event_cb,
	.splice = conn_splice_cb,
	.resolved = conn_resolved_cb,
	.asked = conn_asked_cb,
	.agent_waited = conn_agent_waited_cb
};

/* Start an empty set of connections. */
void
conn_set_init(struct conn_set *set, struct event_base *base,
    struct event *reaper)
{
	memset(set, 0, sizeof *set);
	set->base = base;
	set->reaper = reaper;
	set->ev = &conn_events;
	TAILQ_INIT(&set->conns);
	TAILQ_INIT(&set->dead);
	TAILQ_INIT(&set->flushq);
	/* Without it, clients' output is written by their bufferevents. */
	set->flusher = event_new(base, -1, 0, conn_flush_cb, set);
	conn_own_load(set);
}

/* Free what the set holds (its connections are closed and reaped). */
void
conn_set_free(struct conn_set *set)
{
	if (set->flusher != NULL)
		event_free(set->flusher);
	set->flusher = NULL;
}

/* The gateway is stopping: close the connections idle between requests. */
void
conn_stop_all(struct conn_set *set)
{
	struct conn	*c, *next;

	for (c = TAILQ_FIRST(&set->conns); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if ((c->state == S_HEAD || c->state == S_SOCKS) &&
		    evbuffer_get_length(bufferevent_get_input(c->client)) == 0)
			conn_close(c, "stopping");
	}
}

/* Close every connection. */
void
conn_close_all(struct conn_set *set, const char *reason)
{
	struct conn	*c;

	while ((c = TAILQ_FIRST(&set->conns)) != NULL)
		conn_close(c, reason);
}

/* Close the connections that came from one sandbox. */
void
conn_close_sandbox(struct conn_set *set, const struct sandbox *sb,
    const char *reason)
{
	struct conn	*c, *next;

	for (c = TAILQ_FIRST(&set->conns); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (c->sandbox == sb)
			conn_close(c, reason);
	}
}

/*
 * Free the closed connections no asynchronous step still holds (all of
 * them when force is set).  Returns how many were freed.
 */
size_t
conn_reap(struct conn_set *set, int force)
{
	struct conn	*c, *next;
	size_t		 n = 0;

	for (c = TAILQ_FIRST(&set->dead); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (c->refs > 0 && !force)
			continue;
		TAILQ_REMOVE(&set->dead, c, entry);
		conn_free(c);
		n++;
	}
	set->nconns -= n;
	return (n);
}
