/*
 * One query being answered: its reply sent back the way the query came
 * (a UDP datagram from the address it went to, or a TCP message), and a
 * query kept on the heap while the upstream answers.  Below server.c
 * (the sockets) and answer.c (what to say).
 */
#include "config.h"

#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "lib/log.h"
#include "proxy/dns/dns-int.h"
#include "proxy/resolver/resolver.h"

/* The client's "addr:port", written the first time it is asked for. */
const char *
dns_req_client(struct dns_req *r)
{
	if (r->client[0] == '\0')
		addr_sockaddr_text((struct sockaddr *)&r->peer, r->client,
		    sizeof r->client);
	return (r->client);
}

/* Fill a message header for a UDP reply from the address r went to. */
static void
dns_udp_msghdr(const struct dns_req *r, struct msghdr *mh,
    struct sockaddr_storage *peer, struct iovec *iov,
    union dns_udp_cbuf *cbuf)
{
	struct cmsghdr	*cm;

	memset(mh, 0, sizeof *mh);
	memcpy(peer, &r->peer, r->peerlen);
	mh->msg_name = peer;
	mh->msg_namelen = r->peerlen;
	mh->msg_iov = iov;
	mh->msg_iovlen = 1;
	if (r->pktinfo == 0)
		return;
	memset(cbuf, 0, sizeof *cbuf);
	mh->msg_control = cbuf->c;
	mh->msg_controllen = r->pktinfo == AF_INET ?
	    CMSG_SPACE(sizeof r->pi.v4) : CMSG_SPACE(sizeof r->pi.v6);
	cm = CMSG_FIRSTHDR(mh);
	if (r->pktinfo == AF_INET) {
		cm->cmsg_level = IPPROTO_IP;
		cm->cmsg_type = IP_PKTINFO;
		cm->cmsg_len = CMSG_LEN(sizeof r->pi.v4);
		memcpy(CMSG_DATA(cm), &r->pi.v4, sizeof r->pi.v4);
	} else {
		cm->cmsg_level = IPPROTO_IPV6;
		cm->cmsg_type = IPV6_PKTINFO;
		cm->cmsg_len = CMSG_LEN(sizeof r->pi.v6);
		memcpy(CMSG_DATA(cm), &r->pi.v6, sizeof r->pi.v6);
	}
}

/* Is r's reply to go out with the batch being answered? */
static int
dns_udp_batched(const struct dns_req *r)
{
	const struct dns_udp_out	*o = &r->srv->udp_out;

	return (r->conn == NULL && o->l != NULL && o->l == r->udp &&
	    o->n < DNS_UDP_MMSG);
}

/*
 * Where to build r's reply, and its room: the batch's next slot, so the
 * reply is sent from where it was built, or the server's buffer.
 */
uint8_t *
dns_req_buf(struct dns_req *r, size_t *cap)
{
	struct dns_udp_out	*o = &r->srv->udp_out;

	if (dns_udp_batched(r) && r->limit <= sizeof o->buf[0]) {
		*cap = sizeof o->buf[0];
		return (o->buf[o->n]);
	}
	*cap = sizeof r->srv->out;
	return (r->srv->out);
}

/* Send a UDP reply from the address the query went to, or queue it. */
static void
dns_udp_send(struct dns_req *r, const uint8_t *buf, size_t len)
{
	struct dns_udp_out	*o = &r->srv->udp_out;
	union dns_udp_cbuf	 cbuf;
	struct sockaddr_storage	 peer;
	struct msghdr		 mh;
	struct iovec		 iov = { (void *)buf, len };
	unsigned int		 i = o->n;

	if (dns_udp_batched(r) && len <= sizeof o->buf[i]) {
		if (buf != o->buf[i])
			memcpy(o->buf[i], buf, len);
		o->iov[i].iov_base = o->buf[i];
		o->iov[i].iov_len = len;
		dns_udp_msghdr(r, &o->mm[i].msg_hdr, &o->peer[i], &o->iov[i],
		    &o->cbuf[i]);
		o->n++;
		return;
	}
	dns_udp_msghdr(r, &mh, &peer, &iov, &cbuf);
	if (sendmsg(r->udp->fd, &mh, 0) == -1)
		log_debug("%s: %s", __func__, strerror(errno));
}

/* Open a batch: replies to queries from l wait for dns_udp_batch_end(). */
void
dns_udp_batch_start(struct dns_server *srv, struct dns_listener *l)
{
	srv->udp_out.l = l;
	srv->udp_out.n = 0;
}

/* Send a batch's replies, with as few calls as the socket takes. */
void
dns_udp_batch_end(struct dns_server *srv)
{
	struct dns_udp_out	*o = &srv->udp_out;
	unsigned int		 i = 0;
	int			 n;

	while (i < o->n) {
		n = sendmmsg(o->l->fd, o->mm + i, o->n - i, 0);
		if (n == -1) {
			/* Drop the one that failed and go on. */
			log_debug("%s: %s", __func__, strerror(errno));
			n = 1;
		}
		i += n;
	}
	o->l = NULL;
	o->n = 0;
}

/* Queue a TCP reply; stop reading while too much waits to be sent. */
static void
dns_tcp_send(struct dns_conn *c, const uint8_t *buf, size_t len)
{
	struct evbuffer	*out = bufferevent_get_output(c->bev);
	uint8_t		 pfx[2] = { len >> 8, len & 0xff };

	if (evbuffer_add(out, pfx, 2) == -1 ||
	    evbuffer_add(out, buf, len) == -1)
		log_warnx("%s: %s: out of memory", __func__, c->peer);
}

/* Send a reply to wherever its query came from. */
void
dns_req_send(struct dns_req *r, const uint8_t *buf, size_t len)
{
	if (r->conn != NULL)
		dns_tcp_send(r->conn, buf, len);
	else
		dns_udp_send(r, buf, len);
}

/* Keep a query while upstream answers: copy it onto the heap. */
struct dns_req *
dns_req_keep(const struct dns_req *r)
{
	struct dns_server	*srv = r->srv;
	struct dns_req		*k;

	if (srv->npending >= DNS_MAX_PENDING ||
	    (k = malloc(sizeof *k)) == NULL)
		return (NULL);
	memcpy(k, r, sizeof *k);
	k->rq = NULL;
	TAILQ_INSERT_TAIL(&srv->pending, k, entry);
	srv->npending++;
	if (k->conn != NULL) {
		TAILQ_INSERT_TAIL(&k->conn->reqs, k, centry);
		k->conn->nreqs++;
	}
	return (k);
}

/* Forget a kept query (answered, or its connection gone). */
void
dns_req_free(struct dns_req *k)
{
	struct dns_conn	*c = k->conn;

	if (k->rq != NULL)
		resolver_cancel(k->rq);
	TAILQ_REMOVE(&k->srv->pending, k, entry);
	k->srv->npending--;
	if (c != NULL) {
		TAILQ_REMOVE(&c->reqs, k, centry);
		c->nreqs--;
	}
	free(k);
	/* Room again: its read callback reads on, or closes at EOF. */
	if (c != NULL && !c->closing && (c->paused || c->eof))
		bufferevent_trigger(c->bev, EV_READ,
		    BEV_TRIG_IGNORE_WATERMARKS);
}

/* The sandbox a query came from, or NULL. */
struct sandbox *
dns_req_sandbox(const struct dns_req *r)
{
	if (r->conn != NULL)
		return (r->conn->l->sandbox);
	return (r->udp != NULL ? r->udp->sandbox : NULL);
}
