/*
 * A tunnel (CONNECT, a capture, an upgrade): bytes both ways as far as
 * the other side takes them, half-closes passed on; once it has moved
 * enough, by splice(2) through a pipe per direction.
 */
#include "config.h"

#include <sys/socket.h>

#include <errno.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "lib/log.h"
#include "proxy/conn/conn-int.h"
#include "proxy/conn/pipebuf.h"

/* Let a tunnel's bufferevents move big chunks per system call. */
void
conn_tunnel_io(struct conn *c)
{
	bufferevent_set_max_single_read(c->client, CONN_TUNNEL_IO);
	bufferevent_set_max_single_write(c->client, CONN_TUNNEL_IO);
	bufferevent_set_max_single_read(c->server, CONN_TUNNEL_IO);
	bufferevent_set_max_single_write(c->server, CONN_TUNNEL_IO);
}

/*
 * Pass an EOF on once everything before it is written: up_sent and
 * down_sent say that all the client's, and all the server's, bytes went.
 * When both sides have ended and all went, close: close() sends the
 * last FIN itself, sparing a shutdown() (nothing unread is left to turn
 * it into a RST).
 */
static void
conn_tunnel_pass(struct conn *c, int up_sent, int down_sent)
{
	if (c->client_eof && c->server_eof && up_sent && down_sent) {
		conn_close(c, "eof");
		return;
	}
	if (c->client_eof && !c->server_shut && up_sent) {
		shutdown(bufferevent_getfd(c->server), SHUT_WR);
		c->server_shut = 1;
	}
	if (c->server_eof && !c->client_shut && down_sent) {
		shutdown(bufferevent_getfd(c->client), SHUT_WR);
		c->client_shut = 1;
	}
}

/*
 * Half-close: pass an EOF on once everything before it is written.  TLS
 * ended here has no half-close to pass on: the first EOF, once written
 * out, ends both.
 */
static void
conn_tunnel_shut(struct conn *c)
{
	if (c->client_tls || c->server_tls) {
		if ((c->client_eof || c->server_eof) &&
		    conn_outlen(c->server) == 0 && conn_outlen(c->client) == 0)
			conn_close(c, "eof");
		return;
	}
	conn_tunnel_pass(c,
	    conn_outlen(c->server) == 0 &&
	    evbuffer_get_length(bufferevent_get_input(c->client)) == 0,
	    conn_outlen(c->client) == 0 &&
	    evbuffer_get_length(bufferevent_get_input(c->server)) == 0);
}

/* Half-close a spliced tunnel: pass an EOF on once all before it went. */
static void
conn_splice_shut(struct conn *c)
{
	conn_tunnel_pass(c, c->up_pipe.len == 0 && conn_outlen(c->server) == 0,
	    c->down_pipe.len == 0 && conn_outlen(c->client) == 0);
}

/*
 * Move one direction's bytes: what the bufferevent still held, then the
 * pipe, into the peer; then fill the pipe from the source.  Returns 1 if
 * anything moved, 0 if both ends must wait, -1 on an error (*errfd is
 * the failed descriptor).
 */
static int
conn_splice_dir(struct evbuffer *held, struct pipebuf *p, int from,
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
 * connections after a few rounds and come back.  Only a pipe with room is
 * filled, so a slow reader stops the sender (back-pressure).
 */
void
conn_splice_move(struct conn *c)
{
	int	cfd = bufferevent_getfd(c->client);
	int	sfd = bufferevent_getfd(c->server);
	int	i, up, down, errfd = -1;

	conn_audit_barrier(c);
	for (i = 0; i < CONN_SPLICE_ROUNDS; i++) {
		up = conn_splice_dir(bufferevent_get_output(c->server),
		    &c->up_pipe, cfd, sfd, &c->client_eof, &c->up, &errfd);
		down = conn_splice_dir(bufferevent_get_output(c->client),
		    &c->down_pipe, sfd, cfd, &c->server_eof, &c->down, &errfd);
		if (up == -1 || down == -1) {
			conn_close(c, errfd == cfd ?
			    "client connection error" :
			    "upstream connection error");
			return;
		}
		if (!up && !down)
			break;
	}
	if (i == CONN_SPLICE_ROUNDS)
		event_active(c->cev, EV_READ | EV_WRITE, 0);
	conn_splice_shut(c);
}

/*
 * May a tunnel leave its bufferevents for splice(2)?  Once it has moved
 * some bytes: idle and chatty tunnels keep theirs and spare the four
 * pipe descriptors.
 */
static int
conn_splice_ready(struct conn *c)
{
	return (!c->splice_tried && c->sniffed && !c->client_eof &&
	    !c->server_eof &&
	    c->up + c->down >= CONN_SPLICE_AFTER &&
	    (event_base_get_features(c->set->base) & EV_FEATURE_ET));
}

/*
 * Move the tunnel's bytes with splice(2) from now on: one pipe per
 * direction, one edge-triggered event per socket.  What the
 * bufferevents read is queued on their peer's output, written before
 * the pipe's bytes.  Without pipes (out of descriptors) the tunnel
 * stays on its bufferevents.
 */
static void
conn_splice_start(struct conn *c)
{
	struct event_base	*base = c->set->base;
	short			 ev = EV_READ | EV_WRITE | EV_PERSIST | EV_ET;

	c->splice_tried = 1;
	if (pipebuf_open(&c->up_pipe, CONN_PIPE) == -1 ||
	    pipebuf_open(&c->down_pipe, CONN_PIPE) == -1 ||
	    (c->cev = event_new(base, bufferevent_getfd(c->client), ev,
	    c->set->ev->splice, c)) == NULL ||
	    (c->sev = event_new(base, bufferevent_getfd(c->server), ev,
	    c->set->ev->splice, c)) == NULL)
		goto fail;
	conn_out_release(c);
	conn_read_release(c->client, &c->crd);
	conn_read_release(c->server, &c->srd);
	bufferevent_disable(c->client, EV_READ | EV_WRITE);
	bufferevent_disable(c->server, EV_READ | EV_WRITE);
	/* Socket bufferevents lock their output's start; we write it now. */
	evbuffer_unfreeze(bufferevent_get_output(c->client), 1);
	evbuffer_unfreeze(bufferevent_get_output(c->server), 1);
	conn_move(bufferevent_get_input(c->client),
	    bufferevent_get_output(c->server),
	    evbuffer_get_length(bufferevent_get_input(c->client)), &c->up);
	conn_move(bufferevent_get_input(c->server),
	    bufferevent_get_output(c->client),
	    evbuffer_get_length(bufferevent_get_input(c->server)), &c->down);
	if (event_add(c->cev, NULL) == -1 || event_add(c->sev, NULL) == -1)
		goto fail;
	c->spliced = 1;
	event_active(c->cev, EV_READ | EV_WRITE, 0);
	return;
fail:
	log_debug("%s: #%llu: %s", __func__, c->id, strerror(errno));
	conn_splice_free(c);
}

/* Move bytes both ways, as far as the other side can take them. */
void
conn_tunnel(struct conn *c)
{
	struct evbuffer	*cin = bufferevent_get_input(c->client);
	struct evbuffer	*sin = bufferevent_get_input(c->server);

	if (c->spliced) {
		conn_splice_shut(c);
		return;
	}
	/* A capture's first bytes go up only once judged. */
	if (c->sniffed && conn_outlen(c->server) < CONN_HIGH)
		conn_relay(cin, c->server, &c->up);
	if (conn_outlen(c->client) < CONN_HIGH) {
		conn_audit_barrier(c);
		conn_relay(sin, c->client, &c->down);
	}
	conn_tunnel_shut(c);
	if (!c->dead && conn_splice_ready(c))
		conn_splice_start(c);
}
