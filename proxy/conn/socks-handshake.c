/*
 * A SOCKS5 client (RFC 1928): its greeting (no authentication, or RFC
 * 1929 username and password, which mean nothing here and are
 * dropped), then its CONNECT, decided as a CONNECT over HTTP is; the
 * reply is sent once dialed (dial.c) or refused (reply.c).
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "proxy/conn/conn-int.h"
#include "proxy/wire/socks5.h"

/* A SOCKS5 client connected: wait for its greeting. */
void
conn_socks_start(struct conn *c)
{
	c->state = S_SOCKS;
	c->socks_phase = SOCKS_HELLO;
	c->via = "socks";
	event_base_gettimeofday_cached(c->set->base, &c->start);
	c->last_active = conn_now(c);
	bufferevent_setwatermark(c->client, EV_READ, 0, SOCKS_MSG_MAX);
	conn_timer(c, c->set->handshake_timeout);
}

/*
 * The greeting or the credentials: answer it (the method chosen, or
 * success) and go on to the next message, or refuse.
 */
static void
conn_socks_handshake(struct conn *c, const uint8_t *p, size_t len)
{
	struct socks_greeting	 g;
	struct socks_auth	 a;
	enum socks_status	 st;
	enum conn_socks_phase	 next = SOCKS_REQUEST;
	const char		*error;
	uint8_t			 msg[2];
	size_t			 n;

	if (c->socks_phase == SOCKS_HELLO) {
		st = socks_greeting_parse(p, len, &g);
		n = g.len;
		error = g.error;
		msg[0] = SOCKS_VERSION;
		msg[1] = g.method;
		if (g.method == SOCKS_METHOD_USERPASS)
			next = SOCKS_AUTH;
	} else {
		st = socks_auth_parse(p, len, &a);	/* taken, not kept */
		n = a.len;
		error = a.error;
		msg[0] = SOCKS_AUTH_VERSION;
		msg[1] = 0;
	}
	if (st == SOCKS_NEED_MORE)
		return;
	if (st == SOCKS_ERROR) {
		conn_socks_refuse(c, 400, error, SOCKS_REP_FAILURE);
		return;
	}
	evbuffer_drain(bufferevent_get_input(c->client), n);
	conn_send_client(c, msg, sizeof msg);
	c->socks_phase = next;
}

/* The request: decide (host, port) as a CONNECT, then dial. */
static void
conn_socks_request(struct conn *c, const uint8_t *p, size_t len)
{
	struct socks_request	r;
	enum socks_status	st;

	if ((st = socks_request_parse(p, len, &r)) == SOCKS_NEED_MORE)
		return;
	evbuffer_drain(bufferevent_get_input(c->client), r.len);
	event_base_gettimeofday_cached(c->set->base, &c->start);
	if (st == SOCKS_ERROR) {
		conn_socks_refuse(c, 400, r.error, r.reply);
		return;
	}
	if (conn_audit_ready(c) == -1)
		return;
	c->host = r.host;
	c->port = r.port;
	if (conn_unfake(c) == -1)
		return;
	c->have_host = 1;
	if (conn_decide(c) != 0)
		return;		/* refused, or held for a person (ask mode) */
	if (c->inspect)
		conn_bound_connect(c);
	else
		conn_go(c);
}

/* Read the handshake's messages as far as they have come. */
void
conn_socks_read(struct conn *c)
{
	struct evbuffer		*in = bufferevent_get_input(c->client);
	enum conn_socks_phase	 phase;
	unsigned char		*p;
	size_t			 len;

	do {
		phase = c->socks_phase;
		if ((len = evbuffer_get_length(in)) == 0)
			return;
		if (len > SOCKS_MSG_MAX)
			len = SOCKS_MSG_MAX;
		if ((p = evbuffer_pullup(in, len)) == NULL) {
			conn_close(c, "out of memory");
			return;
		}
		if (phase == SOCKS_REQUEST)
			conn_socks_request(c, p, len);
		else
			conn_socks_handshake(c, p, len);
	} while (!c->dead && c->state == S_SOCKS && c->socks_phase != phase);
}
