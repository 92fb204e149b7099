/*
 * One query being answered: its reply sent back the way the query came
 * (a UDP datagram from the address it went to, or a TCP message), and a
 * query kept on the heap while the upstream answers.  Below server.c
 * (the sockets) and answer.c (what to say).
 */
#include "config.h"

#include <sys/socket.h>

#include <netinet/in.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "lib/log.h"
#include "proxy/dns/dns-int.h"
#include "proxy/resolver/resolver.h"

/* Send a UDP reply from the address the query went to. */
static void
dns_udp_send(struct dns_req *r, const uint8_t *buf, size_t len)
{
	union {
		char		c[CMSG_SPACE(sizeof(struct in6_pktinfo))];
		struct cmsghdr	align;
	}			 cbuf;
	struct msghdr		 mh;
	struct iovec		 iov = { (void *)buf, len };
	struct cmsghdr		*cm;

	memset(&mh, 0, sizeof mh);
	memset(&cbuf, 0, sizeof cbuf);
	mh.msg_name = &r->peer;
	mh.msg_namelen = r->peerlen;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (r->pktinfo != 0) {
		mh.msg_control = cbuf.c;
		mh.msg_controllen = r->pktinfo == AF_INET ?
		    CMSG_SPACE(sizeof r->pi.v4) : CMSG_SPACE(sizeof r->pi.v6);
		cm = CMSG_FIRSTHDR(&mh);
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
	if (sendmsg(r->udp->fd, &mh, 0) == -1)
		log_debug("%s: %s: %s", __func__, r->client, strerror(errno));
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
struct audit_sandbox *
dns_req_sandbox(const struct dns_req *r)
{
	if (r->conn != NULL)
		return (r->conn->l->sandbox);
	return (r->udp != NULL ? r->udp->sandbox : NULL);
}
