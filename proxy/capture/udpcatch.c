/*
 * UDP caught by the capture rule: log it (at most UDPCATCH_LOG_PER_SEC
 * lines a second, the rest counted) and answer ICMP port unreachable
 * from the address the datagram was sent to, through a raw socket of
 * the gateway netns.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "lib/log.h"
#include "proxy/audit/audit.h"
#include "proxy/capture/udpcatch.h"
#include "proxy/dns/fakeip.h"
#include "proxy/sandbox/sandbox.h"

#define UDPCATCH_BATCH	64	/* datagrams read per wakeup */

struct udpcatch {
	struct event		*ev;
	int			 fd;
	int			 raw;
	struct audit		*audit;
	const char		*session;
	struct sandbox	*sandbox;	/* whose datagrams, or NULL */
	const struct fakeip	*fakeip;
	time_t			 second;	/* of the last log line */
	unsigned int		 logged;	/* lines in that second */
	unsigned long		 quiet;		/* datagrams not logged */
};

/* The Internet checksum of a buffer. */
static uint16_t
udpcatch_sum(const uint8_t *p, size_t len)
{
	uint32_t	sum = 0;
	size_t		i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (~sum & 0xffff);
}

/* Put a 16-bit number, big-endian. */
static void
udpcatch_put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

/* Build ICMP port unreachable for a datagram from src to dst. */
size_t
udpcatch_icmp(uint8_t *out, const struct sockaddr_in *src,
    const struct sockaddr_in *dst, size_t len)
{
	uint8_t	*ip = out + 8, *udp = out + 28;

	memset(out, 0, UDPCATCH_ICMP_MAX);
	out[0] = 3;			/* destination unreachable */
	out[1] = 3;			/* port unreachable */
	ip[0] = 0x45;
	udpcatch_put16(ip + 2, len + 28 > 0xffff ? 0xffff : len + 28);
	ip[8] = 64;
	ip[9] = IPPROTO_UDP;
	memcpy(ip + 12, &src->sin_addr, 4);
	memcpy(ip + 16, &dst->sin_addr, 4);
	udpcatch_put16(ip + 10, udpcatch_sum(ip, 20));
	memcpy(udp, &src->sin_port, 2);
	memcpy(udp + 2, &dst->sin_port, 2);
	udpcatch_put16(udp + 4, len + 8 > 0xffff ? 0xffff : len + 8);
	udpcatch_put16(out + 2, udpcatch_sum(out, UDPCATCH_ICMP_MAX));
	return (UDPCATCH_ICMP_MAX);
}

/* Answer port unreachable, from the address the datagram went to. */
static void
udpcatch_refuse(struct udpcatch *u, const struct sockaddr_in *src,
    const struct sockaddr_in *dst, size_t len)
{
	uint8_t			 icmp[UDPCATCH_ICMP_MAX];
	struct msghdr		 mh;
	struct iovec		 iov;
	struct cmsghdr		*cm;
	struct in_pktinfo	*pi;
	struct sockaddr_in	 to = *src;
	union {
		char		buf[CMSG_SPACE(sizeof(struct in_pktinfo))];
		struct cmsghdr	align;
	}			 c;

	iov.iov_base = icmp;
	iov.iov_len = udpcatch_icmp(icmp, src, dst, len);
	memset(&mh, 0, sizeof mh);
	memset(&c, 0, sizeof c);
	to.sin_port = 0;
	mh.msg_name = &to;
	mh.msg_namelen = sizeof to;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = c.buf;
	mh.msg_controllen = sizeof c.buf;
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = IPPROTO_IP;
	cm->cmsg_type = IP_PKTINFO;
	cm->cmsg_len = CMSG_LEN(sizeof *pi);
	pi = (struct in_pktinfo *)CMSG_DATA(cm);
	pi->ipi_spec_dst = dst->sin_addr;
	if (sendmsg(u->raw, &mh, MSG_DONTWAIT) == -1)
		log_debug("%s: sendmsg: %s", __func__, strerror(errno));
}

/* Log one datagram, within the rate limit. */
static void
udpcatch_log(struct udpcatch *u, const struct sockaddr_in *src,
    const struct sockaddr_in *dst)
{
	struct audit_event	 e;
	struct timeval		 tv;
	const char		*name = NULL;
	char			 client[INET_ADDRSTRLEN + 8];
	char			 addr[INET_ADDRSTRLEN];
	char			 detail[96];

	if (u->audit == NULL)
		return;
	gettimeofday(&tv, NULL);
	if (tv.tv_sec != u->second) {
		u->second = tv.tv_sec;
		u->logged = 0;
	}
	if (u->logged >= UDPCATCH_LOG_PER_SEC) {
		u->quiet++;
		return;
	}
	u->logged++;
	inet_ntop(AF_INET, &src->sin_addr, addr, sizeof addr);
	snprintf(client, sizeof client, "%s:%u", addr, ntohs(src->sin_port));
	inet_ntop(AF_INET, &dst->sin_addr, addr, sizeof addr);
	if (u->fakeip != NULL)
		name = fakeip_lookup_name(u->fakeip,
		    (const uint8_t *)&dst->sin_addr, 4,
		    sandbox_id(u->sandbox));
	if (u->quiet > 0)
		snprintf(detail, sizeof detail, "UDP; %lu more not logged",
		    u->quiet);
	else
		snprintf(detail, sizeof detail, "UDP");
	u->quiet = 0;
	audit_event_init(&e);
	e.event = "connect";
	e.verdict = "deny";
	e.reason = "udp";
	e.session = u->session;
	audit_event_sandbox(&e, sandbox_ident(u->sandbox));
	e.client = client;
	e.host = name != NULL ? name : addr;
	e.port = ntohs(dst->sin_port);
	e.via = "transparent";
	e.name_from = name != NULL ? "fake-ip" : NULL;
	e.detail = detail;
	audit_write(u->audit, &e);
}

/* Read one datagram and its original destination.  Returns -1 if none. */
static int
udpcatch_recv(struct udpcatch *u, struct sockaddr_in *src,
    struct sockaddr_in *dst, size_t *len)
{
	static uint8_t	 sink[65536];
	struct msghdr	 mh;
	struct iovec	 iov = { sink, sizeof sink };
	struct cmsghdr	*cm;
	union {
		char		buf[CMSG_SPACE(sizeof(*dst)) + 64];
		struct cmsghdr	align;
	}		 c;
	ssize_t		 n;

	memset(&mh, 0, sizeof mh);
	mh.msg_name = src;
	mh.msg_namelen = sizeof *src;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = c.buf;
	mh.msg_controllen = sizeof c.buf;
	if ((n = recvmsg(u->fd, &mh, MSG_DONTWAIT)) == -1)
		return (-1);
	*len = n;
	memset(dst, 0, sizeof *dst);
	for (cm = CMSG_FIRSTHDR(&mh); cm != NULL; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level == IPPROTO_IP &&
		    cm->cmsg_type == IP_ORIGDSTADDR &&
		    cm->cmsg_len >= CMSG_LEN(sizeof *dst))
			memcpy(dst, CMSG_DATA(cm), sizeof *dst);
	}
	return (dst->sin_family == AF_INET && src->sin_family == AF_INET ?
	    0 : 1);
}

/* Datagrams are waiting: refuse and log each. */
static void
udpcatch_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct udpcatch		*u = arg;
	struct sockaddr_in	 src, dst;
	size_t			 len;
	int			 i, rv;

	for (i = 0; i < UDPCATCH_BATCH; i++) {
		if ((rv = udpcatch_recv(u, &src, &dst, &len)) == -1)
			return;
		if (rv == 1)
			continue;
		udpcatch_refuse(u, &src, &dst, len);
		udpcatch_log(u, &src, &dst);
	}
}

/* Take over the catch-all UDP socket and the raw ICMP socket. */
struct udpcatch *
udpcatch_create(struct event_base *base, int fd, int raw,
    struct audit *audit, const char *session, struct sandbox *sb,
    const struct fakeip *fakeip)
{
	struct udpcatch	*u;

	if ((u = calloc(1, sizeof *u)) == NULL) {
		close(fd);
		close(raw);
		return (NULL);
	}
	u->fd = fd;
	u->raw = raw;
	u->audit = audit;
	u->session = session;
	u->sandbox = sandbox_ref(sb);
	u->fakeip = fakeip;
	u->ev = event_new(base, fd, EV_READ | EV_PERSIST, udpcatch_read_cb, u);
	if (u->ev == NULL || event_add(u->ev, NULL) == -1) {
		if (u->ev != NULL)
			event_free(u->ev);
		close(fd);
		close(raw);
		sandbox_unref(u->sandbox);
		free(u);
		return (NULL);
	}
	return (u);
}

/* Close both sockets. */
void
udpcatch_free(struct udpcatch *u)
{
	if (u == NULL)
		return;
	event_free(u->ev);
	close(u->fd);
	close(u->raw);
	sandbox_unref(u->sandbox);
	free(u);
}
