/*
 * Inside the DNS server: shared by server.c (sockets), answer.c (what
 * to answer), req.c (a query's reply, a query kept) and querylog.c (audit lines, at most one per name and type
 * every few seconds).  Nothing else includes this.
 */
#ifndef DNS_INT_H
#define DNS_INT_H

#include <sys/queue.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "proxy/dns/dns.h"
#include "proxy/wire/dnsmsg.h"
#include "rules/rules.h"

struct audit_event;
struct sandbox;
struct dns_conn;
struct dns_listener;
struct dns_log;
struct resolver_query;

/* One query being answered; on the stack, or kept while upstream works. */
#define DNS_UDP_MMSG		16	/* datagrams a recvmmsg */

struct dns_req {
	struct dns_server	*srv;
	struct dns_conn		*conn;		/* TCP; NULL for UDP */
	struct dns_listener	*udp;		/* UDP: the socket it came on */
	struct sockaddr_storage	 peer;
	socklen_t		 peerlen;
	int			 pktinfo;	/* 0, AF_INET or AF_INET6 */
	union {
		struct in_pktinfo	v4;
		struct in6_pktinfo	v6;
	}			 pi;
	char			 client[64];	/* "addr:port", or "" until
						   dns_req_client() */
	size_t			 limit;		/* largest reply */
	struct dns_msg		 q;
	struct host		 host;		/* valid when named */
	int			 named;		/* q.qname is a host name */
	int			 blocked;	/* refused by the policy */
	int			 fixed;		/* ... and no grant can help */
	char			 rule[1024];	/* "file:line" that decided */
	char			 why[128];
	struct resolver_query	*rq;
	TAILQ_ENTRY(dns_req)	 entry;		/* srv->pending */
	TAILQ_ENTRY(dns_req)	 centry;	/* conn->reqs */
};
TAILQ_HEAD(dns_reqs, dns_req);

/* Control data room for one datagram's destination address. */
union dns_udp_cbuf {
	char		c[CMSG_SPACE(sizeof(struct in6_pktinfo)) +
			    CMSG_SPACE(sizeof(struct in_pktinfo))];
	struct cmsghdr	align;
};

/*
 * The replies to one recvmmsg batch, built in place and sent with one
 * sendmmsg when the batch is answered (req.c).  Open while l is set.
 */
struct dns_udp_out {
	struct dns_listener	*l;
	unsigned int		 n;
	struct mmsghdr		 mm[DNS_UDP_MMSG];
	struct iovec		 iov[DNS_UDP_MMSG];
	struct sockaddr_storage	 peer[DNS_UDP_MMSG];
	union dns_udp_cbuf	 cbuf[DNS_UDP_MMSG];
	uint8_t			 buf[DNS_UDP_MMSG][DNS_UDP_MAX];
};

struct dns_server {
	struct dns_server_params	 p;
	struct dns_log			*log;
	TAILQ_HEAD(, dns_listener)	 listeners;
	TAILQ_HEAD(, dns_conn)		 conns;
	size_t				 nconns;
	struct dns_reqs			 pending;
	size_t				 npending;
	uint8_t				 in[DNS_MSG_MAX];
	uint8_t				 out[DNS_MSG_MAX];
	struct dns_udp_out		 udp_out;
	/* Datagrams taken with one recvmmsg (pages touched only as used). */
	uint8_t				 udp_in[DNS_UDP_MMSG][DNS_MSG_MAX];
};

struct dns_listener {
	struct dns_server		*srv;
	int				 fd;
	int				 family;
	struct sandbox		*sandbox;	/* its queries', or NULL */
	struct event			*ev;	/* UDP */
	struct evconnlistener		*lev;	/* TCP */
	struct event			*backoff;
	TAILQ_ENTRY(dns_listener)	 entry;
};

struct dns_conn {
	struct dns_server	*srv;
	struct bufferevent	*bev;
	char			 peer[64];
	struct dns_listener	*l;		/* accepted on */
	struct dns_reqs		 reqs;
	size_t			 nreqs;
	int			 paused;	/* reading stopped: too much */
	int			 eof;		/* close once answered */
	int			 closing;	/* in dns_conn_free() */
	TAILQ_ENTRY(dns_conn)	 entry;
};

/* req.c */
const char	*dns_req_client(struct dns_req *);
uint8_t		*dns_req_buf(struct dns_req *, size_t *);
void		 dns_req_send(struct dns_req *, const uint8_t *, size_t);
void		 dns_udp_batch_start(struct dns_server *, struct dns_listener *);
void		 dns_udp_batch_end(struct dns_server *);
struct dns_req	*dns_req_keep(const struct dns_req *);
void		 dns_req_free(struct dns_req *);

/* answer.c */
void		 dns_answer(struct dns_req *, const uint8_t *, size_t);

/* querylog.c */
struct dns_log	*dns_log_create(struct event_base *, struct audit *,
		    unsigned int);
void		 dns_log_free(struct dns_log *);
int		 dns_log_counted(struct dns_log *, struct sandbox *,
		    const char *, const char *, const char *);
void		 dns_log_write(struct dns_log *, const struct audit_event *,
		    struct sandbox *);

/* server.c: the sandbox a query came from, or NULL. */
struct sandbox *dns_req_sandbox(const struct dns_req *);

#endif
