/*
 * netns-probe: test-only.  Opens the sandbox, serves every listener with
 * a trivial echo (TCP: first a line "DST addr:port", the original
 * destination; UDP: the datagram back, from the address it was sent to),
 * runs a command in the sandbox and exits with its status.
 *
 *	netns-probe [-n CIDR] [-p PORT]... [-H PATH]... [-R PATH]... [-V]
 *	    CMD [ARG...]
 *
 * -H hides a path, -R makes it read-only (netns_guard), -V allows vsock.
 */
#include "config.h"

#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "netns/netns.h"

struct probe {
	struct event_base	*base;
	int			 status;
	struct evconnlistener	*tcp[NETNS_MAX_PORTS + 3];
	struct event		*udp[NETNS_MAX_PORTS + 3];
	size_t			 n;
};

/* Echo what came in. */
static void
probe_read_cb(struct bufferevent *bev, void *arg)
{
	bufferevent_write_buffer(bev, bufferevent_get_input(bev));
}

/* Close on EOF or error. */
static void
probe_event_cb(struct bufferevent *bev, short what, void *arg)
{
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		bufferevent_free(bev);
}

/* Greet with the original destination, then echo. */
static void
probe_accept_cb(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct bufferevent	*bev;
	struct sockaddr_in	 dst;
	socklen_t		 len = sizeof(dst);
	char			 buf[INET_ADDRSTRLEN];

	bev = bufferevent_socket_new(evconnlistener_get_base(l), fd,
	    BEV_OPT_CLOSE_ON_FREE);
	if (bev == NULL) {
		close(fd);
		return;
	}
	if (getsockname(fd, (struct sockaddr *)&dst, &len) == 0)
		evbuffer_add_printf(bufferevent_get_output(bev),
		    "DST %s:%u\n",
		    inet_ntop(AF_INET, &dst.sin_addr, buf, sizeof(buf)),
		    ntohs(dst.sin_port));
	bufferevent_setcb(bev, probe_read_cb, NULL, probe_event_cb, NULL);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
}

/* Answer a datagram from the address it was sent to (IP_PKTINFO). */
static void
probe_udp_cb(evutil_socket_t fd, short events, void *arg)
{
	char			 data[1500];
	union {
		char		 buf[CMSG_SPACE(sizeof(struct in_pktinfo))];
		struct cmsghdr	 align;
	}			 cm;
	struct sockaddr_in	 from;
	struct msghdr		 mh;
	struct iovec		 iov;
	ssize_t			 n;

	memset(&mh, 0, sizeof(mh));
	iov.iov_base = data;
	iov.iov_len = sizeof(data);
	mh.msg_name = &from;
	mh.msg_namelen = sizeof(from);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cm.buf;
	mh.msg_controllen = sizeof(cm.buf);
	if ((n = recvmsg(fd, &mh, 0)) <= 0)
		return;
	iov.iov_len = (size_t)n;
	mh.msg_flags = 0;
	sendmsg(fd, &mh, 0);
}

/* The command ended: stop the loop. */
static void
probe_done(int status, void *arg)
{
	struct probe	*p = arg;

	p->status = status;
	event_base_loopbreak(p->base);
}

/* Serve every listener of the sandbox. */
static void
probe_serve(struct probe *p, struct netns_sandbox *sb)
{
	struct event	*ev;
	size_t		 i;
	int		 fd;

	for (i = 0; i < sb->nlisteners; i++) {
		fd = netns_sandbox_take(sb, sb->listeners[i].type,
		    sb->listeners[i].port);
		if (sb->listeners[i].type == SOCK_STREAM) {
			p->tcp[p->n] = evconnlistener_new(p->base,
			    probe_accept_cb, p, LEV_OPT_CLOSE_ON_FREE, -1, fd);
			if (p->tcp[p->n++] == NULL)
				exit(1);
			continue;
		}
		ev = event_new(p->base, fd, EV_READ | EV_PERSIST,
		    probe_udp_cb, p);
		if (ev == NULL || event_add(ev, NULL) == -1)
			exit(1);
		p->udp[p->n++] = ev;
	}
}

/* Free the listeners and the loop. */
static void
probe_free(struct probe *p)
{
	size_t	i;

	for (i = 0; i < p->n; i++) {
		if (p->tcp[i] != NULL)
			evconnlistener_free(p->tcp[i]);
		if (p->udp[i] != NULL) {
			close(event_get_fd(p->udp[i]));
			event_free(p->udp[i]);
		}
	}
	event_base_free(p->base);
}

int
main(int argc, char **argv)
{
	struct netns_config	 cfg;
	struct netns_sandbox	*sb;
	struct netns_child	*child;
	struct probe		 p;
	uint16_t		 ports[NETNS_MAX_PORTS];
	struct netns_guard	 guards[8];
	const char		*errstr;
	char			 err[512];
	int			 ch;

	memset(&cfg, 0, sizeof(cfg));
	netns_net_parse(NETNS_NET_DEFAULT, &cfg.net, &errstr);
	cfg.proxy_port = NETNS_PROXY_PORT;
	cfg.dns_port = NETNS_DNS_PORT;
	cfg.tcp_ports = ports;
	cfg.guards = guards;
	while ((ch = getopt(argc, argv, "+n:p:H:R:V")) != -1) {
		if ((ch == 'H' || ch == 'R') && cfg.nguards < 8) {
			guards[cfg.nguards].path = optarg;
			guards[cfg.nguards++].how = ch == 'H' ?
			    NETNS_GUARD_HIDE : NETNS_GUARD_RO;
			continue;
		}
		if (ch == 'V') {
			cfg.allow_vsock = 1;
			continue;
		}
		if (ch == 'n' && netns_net_parse(optarg, &cfg.net,
		    &errstr) != 0) {
			fprintf(stderr, "netns-probe: %s: %s\n", optarg,
			    errstr);
			return (2);
		} else if (ch == 'p' && cfg.ntcp_ports < NETNS_MAX_PORTS)
			ports[cfg.ntcp_ports++] = (uint16_t)atoi(optarg);
		else if (ch != 'n' && ch != 'p')
			return (2);
	}
	if (optind >= argc)
		return (2);
	cfg.argv = argv + optind;

	if ((sb = netns_sandbox_open(&cfg, err, sizeof(err))) == NULL) {
		fprintf(stderr, "netns-probe: cannot open the sandbox: %s\n",
		    err);
		return (1);
	}
	memset(&p, 0, sizeof(p));
	if ((p.base = event_base_new()) == NULL)
		return (1);
	probe_serve(&p, sb);
	child = netns_child_start(p.base, sb, probe_done, &p, err,
	    sizeof(err));
	if (child == NULL) {
		fprintf(stderr, "netns-probe: cannot start the command: %s\n",
		    err);
		return (1);
	}
	event_base_dispatch(p.base);
	netns_child_free(child);
	netns_sandbox_close(sb);
	probe_free(&p);
	return (p.status);
}
