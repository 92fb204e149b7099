/*
 * The DNS server's sockets: UDP answered from the address each query was
 * sent to (IP_PKTINFO / IPV6_PKTINFO), TCP with its 2-byte length prefix,
 * several queries a connection, an idle timeout and bounded buffers.
 * What to answer is decided in answer.c.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/types.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"
#include "proxy/audit/audit.h"
#include "proxy/dns/dns-int.h"
#include "proxy/dns/fakeip.h"
#include "proxy/resolver/resolver.h"
#include "proxy/sandbox/sandbox.h"
#include "rules/rules.h"

#define DNS_UDP_BATCH		64	/* datagrams a wake-up */
#define DNS_TCP_PENDING		16	/* queries waiting, per connection */
#define DNS_TCP_MAXOUT		(256 * 1024)

static void	dns_conn_free(struct dns_conn *);
static void	dns_tcp_read_cb(struct bufferevent *, void *);

/* Take the destination address out of a datagram's control data. */
static void
dns_udp_pktinfo(struct dns_req *r, struct msghdr *mh)
{
	struct cmsghdr	*cm;

	for (cm = CMSG_FIRSTHDR(mh); cm != NULL; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level == IPPROTO_IP &&
		    cm->cmsg_type == IP_PKTINFO &&
		    cm->cmsg_len >= CMSG_LEN(sizeof r->pi.v4)) {
			memcpy(&r->pi.v4, CMSG_DATA(cm), sizeof r->pi.v4);
			r->pi.v4.ipi_spec_dst = r->pi.v4.ipi_addr;
			r->pi.v4.ipi_ifindex = 0;
			r->pktinfo = AF_INET;
		} else if (cm->cmsg_level == IPPROTO_IPV6 &&
		    cm->cmsg_type == IPV6_PKTINFO &&
		    cm->cmsg_len >= CMSG_LEN(sizeof r->pi.v6)) {
			memcpy(&r->pi.v6, CMSG_DATA(cm), sizeof r->pi.v6);
			r->pktinfo = AF_INET6;
		}
	}
}

/* Answer datagram i of a batch. */
static void
dns_udp_take(struct dns_listener *l, struct mmsghdr *mm,
    struct sockaddr_storage *peer, int i)
{
	struct dns_server	*srv = l->srv;
	struct dns_req		 r;

	memset(&r, 0, sizeof r);
	memcpy(&r.peer, &peer[i], sizeof r.peer);
	r.srv = srv;
	r.udp = l;
	r.peerlen = mm[i].msg_hdr.msg_namelen;
	dns_udp_pktinfo(&r, &mm[i].msg_hdr);
	dns_answer(&r, srv->udp_in[i], mm[i].msg_len);
}

/*
 * Receive up to DNS_UDP_MMSG datagrams with one call, answer each, and
 * send the replies with one call.  Returns how many came, -1 when none
 * was left.
 */
static int
dns_udp_recv(struct dns_listener *l)
{
	struct dns_server	*srv = l->srv;
	struct mmsghdr		 mm[DNS_UDP_MMSG];
	struct iovec		 iov[DNS_UDP_MMSG];
	struct sockaddr_storage	 peer[DNS_UDP_MMSG];
	union dns_udp_cbuf	 cbuf[DNS_UDP_MMSG];
	int			 i, n;

	memset(mm, 0, sizeof mm);
	for (i = 0; i < DNS_UDP_MMSG; i++) {
		iov[i].iov_base = srv->udp_in[i];
		iov[i].iov_len = sizeof srv->udp_in[i];
		mm[i].msg_hdr.msg_name = &peer[i];
		mm[i].msg_hdr.msg_namelen = sizeof peer[i];
		mm[i].msg_hdr.msg_iov = &iov[i];
		mm[i].msg_hdr.msg_iovlen = 1;
		mm[i].msg_hdr.msg_control = cbuf[i].c;
		mm[i].msg_hdr.msg_controllen = sizeof cbuf[i].c;
	}
	if ((n = recvmmsg(l->fd, mm, DNS_UDP_MMSG, 0, NULL)) == -1) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			log_warn("%s: recvmmsg", __func__);
		return (-1);
	}
	dns_udp_batch_start(srv, l);
	for (i = 0; i < n; i++)
		dns_udp_take(l, mm, peer, i);
	dns_udp_batch_end(srv);
	return (n);
}

/* A UDP socket is readable: answer what is there, a batch at most. */
static void
dns_udp_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct dns_listener	*l = arg;
	int			 i, n;

	for (i = 0; i < DNS_UDP_BATCH; i += n) {
		if ((n = dns_udp_recv(l)) < DNS_UDP_MMSG)
			break;
	}
}

/* Answer one TCP query. */
static void
dns_tcp_query(struct dns_conn *c, const uint8_t *msg, size_t len)
{
	struct dns_req	r;

	memset(&r, 0, sizeof r);
	r.srv = c->srv;
	r.conn = c;
	snprintf(r.client, sizeof r.client, "%s", c->peer);
	dns_answer(&r, msg, len);
}

/* Can this connection take another query now? */
static int
dns_tcp_room(struct dns_conn *c)
{
	return (c->nreqs < DNS_TCP_PENDING &&
	    evbuffer_get_length(bufferevent_get_output(c->bev)) <
	    DNS_TCP_MAXOUT);
}

/* Take every whole query off a connection's input. */
static void
dns_tcp_read_cb(struct bufferevent *bev, void *arg)
{
	struct dns_conn	*c = arg;
	struct evbuffer	*in = bufferevent_get_input(bev);
	uint8_t		 pfx[2];
	size_t		 len;

	for (;;) {
		if (!dns_tcp_room(c)) {
			bufferevent_disable(bev, EV_READ);
			c->paused = 1;
			return;
		}
		if (evbuffer_copyout(in, pfx, 2) != 2)
			break;
		len = (size_t)pfx[0] << 8 | pfx[1];
		if (evbuffer_get_length(in) < 2 + len)
			break;
		evbuffer_drain(in, 2);
		evbuffer_remove(in, c->srv->in, len);
		if (len < DNS_HEADER_LEN) {
			log_debug("dns: %s: short message, closing", c->peer);
			c->eof = 1;
			break;
		}
		dns_tcp_query(c, c->srv->in, len);
	}
	if (c->paused && !c->eof) {
		c->paused = 0;
		bufferevent_enable(bev, EV_READ);
	}
	if (c->eof) {
		bufferevent_disable(bev, EV_READ);
		if (c->nreqs == 0 &&
		    evbuffer_get_length(bufferevent_get_output(bev)) == 0)
			dns_conn_free(c);
	}
}

/* Output drained: read again, or close when all is said. */
static void
dns_tcp_write_cb(struct bufferevent *bev, void *arg)
{
	struct dns_conn	*c = arg;

	if (c->eof) {
		if (c->nreqs == 0)
			dns_conn_free(c);
		return;
	}
	if (c->paused)
		dns_tcp_read_cb(bev, c);
}

/* EOF, error or idle: close once the answers are out. */
static void
dns_tcp_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct dns_conn	*c = arg;

	if ((what & BEV_EVENT_EOF) && !(what & BEV_EVENT_WRITING)) {
		c->eof = 1;
		dns_tcp_read_cb(bev, c);
		return;
	}
	if (what & BEV_EVENT_TIMEOUT)
		log_debug("dns: %s: idle, closing", c->peer);
	dns_conn_free(c);
}

/* Close a connection and forget its queries. */
static void
dns_conn_free(struct dns_conn *c)
{
	struct dns_server	*srv = c->srv;
	struct dns_listener	*l;
	struct dns_req		*k;

	c->closing = 1;
	while ((k = TAILQ_FIRST(&c->reqs)) != NULL)
		dns_req_free(k);
	bufferevent_free(c->bev);
	TAILQ_REMOVE(&srv->conns, c, entry);
	if (srv->nconns-- == DNS_TCP_MAXCONN) {
		TAILQ_FOREACH(l, &srv->listeners, entry) {
			if (l->lev != NULL && l->backoff != NULL &&
			    !evtimer_pending(l->backoff, NULL))
				evconnlistener_enable(l->lev);
		}
	}
	free(c);
}

/* A new TCP connection. */
static void
dns_tcp_accept_cb(struct evconnlistener *lev, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct dns_listener	*l = arg;
	struct dns_server	*srv = l->srv;
	struct dns_conn		*c;
	struct timeval		 idle = { DNS_TCP_IDLE, 0 };

	if ((c = calloc(1, sizeof *c)) == NULL) {
		close(fd);
		return;
	}
	c->srv = srv;
	c->l = l;
	TAILQ_INIT(&c->reqs);
	addr_sockaddr_text(sa, c->peer, sizeof c->peer);
	c->bev = bufferevent_socket_new(evconnlistener_get_base(lev), fd,
	    BEV_OPT_CLOSE_ON_FREE);
	if (c->bev == NULL) {
		close(fd);
		free(c);
		return;
	}
	bufferevent_setcb(c->bev, dns_tcp_read_cb, dns_tcp_write_cb,
	    dns_tcp_event_cb, c);
	bufferevent_setwatermark(c->bev, EV_READ, 0, 2 + DNS_MSG_MAX);
	bufferevent_set_timeouts(c->bev, &idle, &idle);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	TAILQ_INSERT_TAIL(&srv->conns, c, entry);
	if (++srv->nconns == DNS_TCP_MAXCONN)
		evconnlistener_disable(lev);
}

/* Accepting again after a pause. */
static void
dns_tcp_backoff_cb(evutil_socket_t fd, short what, void *arg)
{
	struct dns_listener	*l = arg;

	if (l->srv->nconns < DNS_TCP_MAXCONN)
		evconnlistener_enable(l->lev);
}

/* accept() failed (EMFILE...): pause a second instead of spinning. */
static void
dns_tcp_error_cb(struct evconnlistener *lev, void *arg)
{
	struct dns_listener	*l = arg;
	struct timeval		 tv = { 1, 0 };

	log_warn("%s: accept", __func__);
	evconnlistener_disable(lev);
	evtimer_add(l->backoff, &tv);
}

/* Ask for each datagram's destination address. */
static int
dns_udp_setup(struct dns_listener *l)
{
	int	one = 1;

	if (l->family == AF_INET6)
		return (setsockopt(l->fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one,
		    sizeof one));
	return (setsockopt(l->fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof one));
}

/* Start serving one socket. */
static int
dns_listener_start(struct dns_listener *l, int type)
{
	struct event_base	*base = l->srv->p.base;

	if (type == SOCK_DGRAM) {
		if (dns_udp_setup(l) == -1)
			return (-1);
		l->ev = event_new(base, l->fd, EV_READ | EV_PERSIST,
		    dns_udp_read_cb, l);
		return (l->ev == NULL ? -1 : event_add(l->ev, NULL));
	}
	l->backoff = evtimer_new(base, dns_tcp_backoff_cb, l);
	if (l->backoff == NULL)
		return (-1);
	l->lev = evconnlistener_new(base, dns_tcp_accept_cb, l,
	    LEV_OPT_CLOSE_ON_FREE, -1, l->fd);
	if (l->lev == NULL)
		return (-1);
	evconnlistener_set_error_cb(l->lev, dns_tcp_error_cb);
	return (0);
}

/* Free one listener and its socket. */
static void
dns_listener_free(struct dns_listener *l)
{
	if (l->ev != NULL)
		event_free(l->ev);
	if (l->backoff != NULL)
		event_free(l->backoff);
	if (l->lev != NULL)
		evconnlistener_free(l->lev);
	else if (l->fd != -1)
		close(l->fd);
	sandbox_unref(l->sandbox);
	free(l);
}

/*
 * A sandbox is gone: close its sockets, its TCP connections and forget
 * its queries still waiting for the upstream.
 */
void
dns_server_drop_sandbox(struct dns_server *srv, const struct sandbox *sb)
{
	struct dns_listener	*l, *lnext;
	struct dns_conn		*c, *cnext;
	struct dns_req		*k, *knext;

	for (c = TAILQ_FIRST(&srv->conns); c != NULL; c = cnext) {
		cnext = TAILQ_NEXT(c, entry);
		if (c->l->sandbox == sb)
			dns_conn_free(c);
	}
	for (k = TAILQ_FIRST(&srv->pending); k != NULL; k = knext) {
		knext = TAILQ_NEXT(k, entry);
		if (k->udp != NULL && k->udp->sandbox == sb)
			dns_req_free(k);
	}
	fakeip_drop_sandbox(srv->p.fakeip, sandbox_id(sb));
	for (l = TAILQ_FIRST(&srv->listeners); l != NULL; l = lnext) {
		lnext = TAILQ_NEXT(l, entry);
		if (l->sandbox == sb) {
			TAILQ_REMOVE(&srv->listeners, l, entry);
			dns_listener_free(l);
		}
	}
}

/* Serve a sandbox (or NULL) on a descriptor bound (UDP) or listening (TCP). */
int
dns_server_listen_fd(struct dns_server *srv, int fd, struct sandbox *sb,
    char *err, size_t errlen)
{
	struct dns_listener	*l;
	struct sockaddr_storage	 ss;
	socklen_t		 len = sizeof ss;
	int			 type;
	socklen_t		 tlen = sizeof type;

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) == -1 ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) == -1 ||
	    (type != SOCK_DGRAM && type != SOCK_STREAM)) {
		snprintf(err, errlen, "descriptor %d is not a UDP or TCP "
		    "socket", fd);
		close(fd);
		return (-1);
	}
	if ((l = calloc(1, sizeof *l)) == NULL) {
		snprintf(err, errlen, "out of memory");
		close(fd);
		return (-1);
	}
	l->srv = srv;
	l->fd = fd;
	l->sandbox = sandbox_ref(sb);
	l->family = ss.ss_family;
	if (evutil_make_socket_nonblocking(fd) == -1 ||
	    dns_listener_start(l, type) == -1) {
		snprintf(err, errlen, "cannot serve DNS on descriptor %d: %s",
		    fd, strerror(errno));
		dns_listener_free(l);
		return (-1);
	}
	TAILQ_INSERT_TAIL(&srv->listeners, l, entry);
	return (0);
}

/* Create, bind (and for TCP listen on) one socket. */
static int
dns_socket_open(const struct addrinfo *ai, int type, char *err,
    size_t errlen)
{
	int	fd, one = 1;

	fd = socket(ai->ai_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1)
		goto fail;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == -1 ||
	    (ai->ai_family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6,
	    IPV6_V6ONLY, &one, sizeof one) == -1) ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) == -1 ||
	    (type == SOCK_STREAM && listen(fd, 128) == -1))
		goto fail;
	return (fd);
fail:
	snprintf(err, errlen, "%s socket: %s",
	    type == SOCK_STREAM ? "TCP" : "UDP", strerror(errno));
	if (fd != -1)
		close(fd);
	return (-1);
}

/* Listen on UDP and TCP "ADDR:PORT". */
int
dns_server_listen(struct dns_server *srv, const char *spec, char *err,
    size_t errlen)
{
	struct addrinfo	*ai;
	int		 fd, rv = -1;

	if ((ai = addr_port_addrinfo(spec, SOCK_DGRAM, err, errlen)) == NULL)
		return (-1);
	if ((fd = dns_socket_open(ai, SOCK_DGRAM, err, errlen)) == -1 ||
	    dns_server_listen_fd(srv, fd, NULL, err, errlen) == -1)
		goto out;
	if ((fd = dns_socket_open(ai, SOCK_STREAM, err, errlen)) == -1 ||
	    dns_server_listen_fd(srv, fd, NULL, err, errlen) == -1)
		goto out;
	rv = 0;
out:
	freeaddrinfo(ai);
	return (rv);
}

/* Create a server; it answers once it has a listener. */
struct dns_server *
dns_server_create(const struct dns_server_params *p, char *err,
    size_t errlen)
{
	struct dns_server	*srv;

	if ((srv = calloc(1, sizeof *srv)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (NULL);
	}
	srv->p = *p;
	if (srv->p.ttl == 0)
		srv->p.ttl = DNS_FAKE_TTL;
	TAILQ_INIT(&srv->listeners);
	TAILQ_INIT(&srv->conns);
	TAILQ_INIT(&srv->pending);
	if ((srv->log = dns_log_create(p->base, p->audit,
	    DNS_LOG_WINDOW)) == NULL) {
		snprintf(err, errlen, "out of memory");
		free(srv);
		return (NULL);
	}
	return (srv);
}

/* Stop serving: close every socket, forget every query. */
void
dns_server_free(struct dns_server *srv)
{
	struct dns_listener	*l;
	struct dns_conn		*c;
	struct dns_req		*k;

	if (srv == NULL)
		return;
	while ((c = TAILQ_FIRST(&srv->conns)) != NULL)
		dns_conn_free(c);
	while ((k = TAILQ_FIRST(&srv->pending)) != NULL)
		dns_req_free(k);
	while ((l = TAILQ_FIRST(&srv->listeners)) != NULL) {
		TAILQ_REMOVE(&srv->listeners, l, entry);
		dns_listener_free(l);
	}
	dns_log_free(srv->log);
	free(srv);
}
