/*
 * Opening the sandbox: the sandbox child, cloned into a new PID namespace
 * and the gateway netns (in a new user namespace when not root), creates
 * the listening sockets, the sandbox netns and the veth link, and hands
 * the namespace and socket descriptors back over a unix socketpair.  It
 * then stays in the sandbox netns and becomes the sandbox's init: one
 * process creation for all of it, and its mount namespace is made while
 * pinhole starts its gateway.  pinhole itself never leaves the host netns.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <linux/icmp.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <netlink/netlink.h>

#include "lib/fdpass.h"
#include "netns/netns-int.h"
#include "netns/netns.h"

/* The proxy, DNS (UDP, TCP), the ports, the catch-all (TCP, UDP, ICMP). */
#define SETUP_MAX_LISTENERS	(3 + NETNS_MAX_PORTS + 3)
#define SETUP_MAX_FDS		(3 + SETUP_MAX_LISTENERS)
_Static_assert(SETUP_MAX_FDS <= FDPASS_MAX, "descriptors of a setup message");

/* What the sandbox child sends back, with the descriptors alongside. */
struct setup_msg {
	int		ok;
	int		has_userns;
	int		capture;	/* the catch-all is in place */
	int		capture_udp;	/* for UDP too */
	char		capture_err[256];
	unsigned int	nlisteners;
	struct {
		int		type;
		uint16_t	port;
	}		listeners[SETUP_MAX_LISTENERS];
	char		err[512];
};

/* The sandbox child's state while it sets up. */
struct setup {
	const struct netns_config	*cfg;
	struct setup_msg		 msg;
	int				 fds[SETUP_MAX_FDS];
	unsigned int			 nfds;
	int				 userns;
	uid_t				 uid;	/* the invoking user's */
	gid_t				 gid;
};

/* Write a short string to a file (a /proc knob). */
int
netns_write_file(const char *path, const char *text)
{
	ssize_t	n;
	int	fd, saved;

	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return (-1);
	n = write(fd, text, strlen(text));
	saved = errno;
	close(fd);
	errno = saved;
	return (n == (ssize_t)strlen(text) ? 0 : -1);
}

/* Record a failed step in the message (errno names the cause). */
static int
setup_fail(struct setup *s, const char *step)
{
	snprintf(s->msg.err, sizeof(s->msg.err), "%s: %s", step,
	    strerror(errno));
	return (-1);
}

/* Map the invoking uid and gid to themselves in the new user namespace. */
static int
setup_maps(struct setup *s, uid_t uid, gid_t gid)
{
	char	buf[64];

	snprintf(buf, sizeof(buf), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	if (netns_write_file("/proc/self/uid_map", buf) != 0)
		return (setup_fail(s, "write /proc/self/uid_map"));
	if (netns_write_file("/proc/self/setgroups", "deny") != 0 &&
	    errno != ENOENT)
		return (setup_fail(s, "write /proc/self/setgroups"));
	snprintf(buf, sizeof(buf), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	if (netns_write_file("/proc/self/gid_map", buf) != 0)
		return (setup_fail(s, "write /proc/self/gid_map"));
	return (0);
}

/*
 * In a new user namespace, map the invoking user to itself.  Writing
 * the maps needs the process dumpable; once done it is not, so that the
 * command (same uid) cannot ptrace this copy of pinhole.
 */
static int
setup_userns(struct setup *s)
{
	int	r;

	if (!s->userns)
		return (prctl(PR_SET_DUMPABLE, 0) == -1 ?
		    setup_fail(s, "prctl") : 0);
	prctl(PR_SET_DUMPABLE, 1);
	r = setup_maps(s, s->uid, s->gid);
	prctl(PR_SET_DUMPABLE, 0);
	return (r);
}

/* Keep a descriptor to send back. */
static void
setup_keep(struct setup *s, int fd)
{
	if (s->nfds == SETUP_MAX_FDS)
		abort();	/* SETUP_MAX_FDS counts every one */
	s->fds[s->nfds++] = fd;
}

/* Open a namespace descriptor of this process. */
static int
setup_ns_fd(struct setup *s, const char *path)
{
	int	fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return (setup_fail(s, path));
	setup_keep(s, fd);
	return (fd);
}

/* Has this port and type a listener already? */
static int
setup_has_listener(const struct setup *s, int type, uint16_t port)
{
	unsigned int	i;

	for (i = 0; i < s->msg.nlisteners; i++) {
		if (s->msg.listeners[i].type == type &&
		    s->msg.listeners[i].port == port)
			return (1);
	}
	return (0);
}

/*
 * Keep a listener's descriptor and record what it listens on, or close
 * it when setting it up failed.  Returns 0, or -1 when it failed.
 */
static int
setup_keep_listener(struct setup *s, int fd, int failed, int type,
    uint16_t port)
{
	if (failed) {
		close(fd);
		return (-1);
	}
	if (s->msg.nlisteners == SETUP_MAX_LISTENERS)
		abort();	/* SETUP_MAX_LISTENERS counts every one */
	s->msg.listeners[s->msg.nlisteners].type = type;
	s->msg.listeners[s->msg.nlisteners].port = port;
	s->msg.nlisteners++;
	setup_keep(s, fd);
	return (0);
}

/* Open one listener on 0.0.0.0:port in the gateway netns. */
static int
setup_listener(struct setup *s, int type, uint16_t port)
{
	struct sockaddr_in	sin;
	char			step[64];
	int			fd, failed, one = 1;

	if (port == 0 || setup_has_listener(s, type, port))
		return (0);
	snprintf(step, sizeof(step), "listen on %s port %u",
	    type == SOCK_STREAM ? "TCP" : "UDP", port);
	fd = socket(AF_INET, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd == -1)
		return (setup_fail(s, step));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	failed = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    setsockopt(fd, IPPROTO_IP, IP_FREEBIND, &one, sizeof(one)) ||
	    (s->cfg->capture_port != 0 &&
	    setsockopt(fd, IPPROTO_IP, IP_TRANSPARENT, &one, sizeof(one))) ||
	    (type == SOCK_DGRAM &&
	    setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one))) ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    (type == SOCK_STREAM && listen(fd, SOMAXCONN) == -1);
	if (failed)
		setup_fail(s, step);
	return (setup_keep_listener(s, fd, failed, type, port));
}

/* Open every listener the configuration asks for. */
static int
setup_listeners(struct setup *s)
{
	const struct netns_config	*cfg = s->cfg;
	size_t				 i;

	if (setup_listener(s, SOCK_STREAM, cfg->proxy_port) != 0 ||
	    setup_listener(s, SOCK_DGRAM, cfg->dns_port) != 0 ||
	    setup_listener(s, SOCK_STREAM, cfg->dns_port) != 0)
		return (-1);
	for (i = 0; i < cfg->ntcp_ports; i++) {
		if (setup_listener(s, SOCK_STREAM, cfg->tcp_ports[i]) != 0)
			return (-1);
	}
	return (0);
}

/* Close the descriptors kept since the marks (a step that failed). */
static void
setup_unkeep(struct setup *s, unsigned int nfds, unsigned int nlisteners)
{
	while (s->nfds > nfds)
		close(s->fds[--s->nfds]);
	s->msg.nlisteners = nlisteners;
}

/*
 * The UDP side of the catch-all: a socket that takes the datagrams with
 * their original destination, and a raw ICMP socket (that reads
 * nothing) to answer port unreachable from that destination.
 */
static int
setup_capture_udp(struct setup *s)
{
	struct icmp_filter	f = { ~0U };
	uint16_t		port = s->cfg->capture_port;
	int			fd, one = 1;

	if (setup_listener(s, SOCK_DGRAM, port) != 0)
		return (-1);
	if (setsockopt(s->fds[s->nfds - 1], IPPROTO_IP, IP_RECVORIGDSTADDR,
	    &one, sizeof(one)) == -1)
		return (-1);
	fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    IPPROTO_ICMP);
	if (fd == -1)
		return (-1);
	return (setup_keep_listener(s, fd,
	    setsockopt(fd, SOL_RAW, ICMP_FILTER, &f, sizeof(f)) == -1,
	    SOCK_RAW, port));
}

/*
 * Bring every other TCP port, and UDP but DNS, to the catch-all, if one
 * is asked for and nftables can: failing that is not fatal (those ports
 * are then refused by the kernel), and the reason is passed back.
 */
static int
setup_capture(struct setup *s)
{
	uint16_t	ports[SETUP_MAX_LISTENERS];
	size_t		n = 0;
	unsigned int	i, nfds = s->nfds, nl = s->msg.nlisteners;
	int		udp;

	if (s->cfg->capture_port == 0)
		return (0);
	for (i = 0; i < s->msg.nlisteners; i++) {
		if (s->msg.listeners[i].type == SOCK_STREAM)
			ports[n++] = s->msg.listeners[i].port;
	}
	if (!(udp = setup_capture_udp(s) == 0)) {
		snprintf(s->msg.capture_err, sizeof(s->msg.capture_err),
		    "UDP: %s", strerror(errno));
		setup_unkeep(s, nfds, nl);
	}
	if (netns_nft_capture(ports, n, s->cfg->capture_port, udp,
	    s->msg.capture_err, sizeof(s->msg.capture_err)) != 0) {
		setup_unkeep(s, nfds, nl);
		return (0);
	}
	if (setup_listener(s, SOCK_STREAM, s->cfg->capture_port) != 0)
		return (-1);
	s->msg.capture = 1;
	s->msg.capture_udp = udp;
	return (0);
}

/* Turn IPv6 off on one link of the current netns (if IPv6 exists). */
static int
setup_no_ipv6(struct setup *s, const char *ifname)
{
	char	path[128];

	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/disable_ipv6",
	    ifname);
	if (netns_write_file(path, "1") != 0 && errno != ENOENT)
		return (setup_fail(s, "disable IPv6 on the link"));
	return (0);
}

/* Create both namespaces, the link and the listeners. */
static int
setup_run(struct setup *s)
{
	struct nl_sock	*gwsk = NULL, *sbsk = NULL;
	int		 gwfd, sbfd, ret = -1;

	if (setup_userns(s) != 0)
		goto out;
	if (s->userns && setup_ns_fd(s, "/proc/self/ns/user") == -1)
		goto out;
	if ((gwfd = setup_ns_fd(s, "/proc/self/ns/net")) == -1)
		goto out;
	if (setup_listeners(s) != 0 || setup_capture(s) != 0)
		goto out;
	if ((gwsk = netns_link_socket(s->msg.err, sizeof(s->msg.err))) == NULL)
		goto out;
	if (unshare(CLONE_NEWNET) == -1) {
		setup_fail(s, "create the sandbox netns");
		goto out;
	}
	if ((sbfd = setup_ns_fd(s, "/proc/self/ns/net")) == -1)
		goto out;
	if ((sbsk = netns_link_socket(s->msg.err, sizeof(s->msg.err))) == NULL)
		goto out;
	if (netns_link_gateway(gwsk, sbfd, &s->cfg->net, s->msg.err,
	    sizeof(s->msg.err)) != 0 ||
	    netns_link_sandbox(sbsk, &s->cfg->net, s->msg.err,
	    sizeof(s->msg.err)) != 0)
		goto out;
	if (setup_no_ipv6(s, NETNS_SANDBOX_IF) != 0)
		goto out;
	if (setns(gwfd, CLONE_NEWNET) == -1) {
		setup_fail(s, "return to the gateway netns");
		goto out;
	}
	if (setup_no_ipv6(s, NETNS_GATEWAY_IF) != 0)
		goto out;
	if (setns(sbfd, CLONE_NEWNET) == -1) {
		setup_fail(s, "enter the sandbox netns");
		goto out;
	}
	ret = 0;
out:
	if (sbsk != NULL)
		nl_socket_free(sbsk);
	if (gwsk != NULL)
		nl_socket_free(gwsk);
	return (ret);
}

/* Send the result (and on success the descriptors) to the parent. */
static int
setup_send(struct setup *s, int sock)
{
	return (fdpass_send(sock, &s->msg, sizeof(s->msg), s->fds,
	    s->msg.ok ? s->nfds : 0, 0) == -1 ? -1 : 0);
}

/*
 * The sandbox child: make the namespaces and listeners, send them, then
 * go on as the sandbox's init.  It dies with pinhole (and if pinhole died
 * before the death signal was set, its end of sock is closed: the send or
 * the wait for the word to start fails).  Never returns.
 */
static void __attribute__((noreturn))
setup_child(const struct netns_config *cfg, int sock, int unixfd, int userns,
    uid_t uid, gid_t gid, const sigset_t *ignored)
{
	struct setup	s;
	sigset_t	set;
	unsigned int	i;

	netns_init_signals(&set);
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1 ||
	    prctl(PR_SET_PDEATHSIG, SIGKILL) == -1)
		_exit(1);
	memset(&s, 0, sizeof(s));
	s.cfg = cfg;
	s.userns = userns;
	s.uid = uid;
	s.gid = gid;
	s.msg.ok = setup_run(&s) == 0;
	s.msg.has_userns = s.userns;
	if (setup_send(&s, sock) != 0 || !s.msg.ok)
		_exit(1);
	for (i = 0; i < s.nfds; i++)
		close(s.fds[i]);
	netns_exec_child(cfg, sock, unixfd, ignored);
}

/*
 * Clone the sandbox child into a new PID namespace and a new netns (the
 * gateway's), in a new user namespace unless root may do without (not in
 * a container lacking CAP_SYS_ADMIN).  Like fork(), it returns twice.
 */
static pid_t
sandbox_clone(int *userns, char *err, size_t errlen)
{
	unsigned long	flags = CLONE_NEWPID | CLONE_NEWNET | SIGCHLD;
	long		pid = -1;

	*userns = geteuid() != 0;
	if (!*userns) {
		pid = syscall(SYS_clone, flags, NULL, NULL, NULL, NULL);
		if (pid == -1 && errno != EPERM) {
			snprintf(err, errlen, "create the gateway netns: %s",
			    strerror(errno));
			return (-1);
		}
		*userns = pid == -1;
	}
	if (*userns && (pid = syscall(SYS_clone, flags | CLONE_NEWUSER, NULL,
	    NULL, NULL, NULL)) == -1)
		snprintf(err, errlen, "create a user namespace: %s",
		    strerror(errno));
	return ((pid_t)pid);
}

/* Receive the sandbox child's message and descriptors. */
static int
sandbox_receive(int sock, struct setup_msg *msg, int *fds, unsigned int *nfds)
{
	ssize_t	r;
	size_t	n;

	r = fdpass_recv(sock, msg, sizeof(*msg), fds, &n, 0);
	*nfds = (unsigned int)n;
	return (r == (ssize_t)sizeof(*msg) ? 0 : -1);
}

/* Fill the sandbox from the message and its descriptors. */
static int
sandbox_fill(struct netns_sandbox *sb, const struct setup_msg *msg,
    const int *fds, unsigned int nfds)
{
	unsigned int	i, k = 0, want;

	want = (msg->has_userns ? 3 : 2) + msg->nlisteners;
	if (nfds != want || msg->nlisteners > SETUP_MAX_LISTENERS)
		return (-1);
	if ((sb->listeners = calloc(msg->nlisteners,
	    sizeof(*sb->listeners))) == NULL)
		return (-1);
	sb->userns_fd = msg->has_userns ? fds[k++] : -1;
	sb->gateway_fd = fds[k++];
	for (i = 0; i < msg->nlisteners; i++) {
		sb->listeners[i].fd = fds[k++];
		sb->listeners[i].type = msg->listeners[i].type;
		sb->listeners[i].port = msg->listeners[i].port;
	}
	sb->nlisteners = msg->nlisteners;
	sb->sandbox_fd = fds[k];
	sb->capture = msg->capture;
	sb->capture_udp = msg->capture_udp;
	snprintf(sb->capture_err, sizeof(sb->capture_err), "%s",
	    msg->capture_err);
	return (0);
}

/* Start the sandbox child and collect what it made. */
static int
sandbox_setup(struct netns_sandbox *sb, const struct netns_config *cfg,
    char *err, size_t errlen)
{
	struct setup_msg	*msg = NULL;
	int			 sp[2] = { -1, -1 }, fds[FDPASS_MAX];
	int			 unixfd = -1;
	unsigned int		 i, nfds = 0;
	sigset_t		 ignored;
	uid_t			 uid = geteuid();
	gid_t			 gid = getegid();
	pid_t			 pid;
	int			 status, userns, ret = -1;

	if ((msg = calloc(1, sizeof(*msg))) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == -1) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		goto out;
	}
	/* The host's unix sockets, read by the child: hostsock.c. */
	if ((unixfd = open("/proc/self/net/unix", O_RDONLY | O_CLOEXEC)) ==
	    -1) {
		snprintf(err, errlen, "list the host's unix sockets: %s",
		    strerror(errno));
		goto out;
	}
	netns_init_ignored(&ignored);
	if ((pid = sandbox_clone(&userns, err, errlen)) == -1)
		goto out;
	if (pid == 0) {
		close(sp[0]);
		setup_child(cfg, sp[1], unixfd, userns, uid, gid, &ignored);
	}
	close(sp[1]);
	sp[1] = -1;
	close(unixfd);
	unixfd = -1;
	if (sandbox_receive(sp[0], msg, fds, &nfds) != 0)
		snprintf(err, errlen, "the sandbox child died");
	else if (!msg->ok)
		snprintf(err, errlen, "%s", msg->err);
	else if (sandbox_fill(sb, msg, fds, nfds) != 0)
		snprintf(err, errlen, "the sandbox child sent a bad message");
	else {
		sb->pid = pid;
		sb->sock = sp[0];
		sp[0] = -1;
		ret = 0;
	}
	if (ret != 0) {
		kill(pid, SIGKILL);
		while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
			;
	}
out:
	if (ret != 0) {
		for (i = 0; i < nfds; i++)
			close(fds[i]);
	}
	if (sp[0] != -1)
		close(sp[0]);
	if (sp[1] != -1)
		close(sp[1]);
	if (unixfd != -1)
		close(unixfd);
	free(msg);
	return (ret);
}

/* Create the namespaces, the link and the listeners. */
struct netns_sandbox *
netns_sandbox_open(const struct netns_config *cfg, char *err, size_t errlen)
{
	struct netns_sandbox	*sb;
	char			 hint[256];
	size_t			 len;

	if (cfg->ntcp_ports > NETNS_MAX_PORTS) {
		snprintf(err, errlen, "too many ports (at most %d)",
		    NETNS_MAX_PORTS);
		return (NULL);
	}
	if ((sb = calloc(1, sizeof(*sb))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (NULL);
	}
	sb->net = cfg->net;
	sb->proxy_port = cfg->proxy_port;
	sb->userns_fd = sb->gateway_fd = sb->sandbox_fd = sb->sock = -1;
	sb->pid = -1;
	if (sandbox_setup(sb, cfg, err, errlen) != 0) {
		netns_userns_hint(hint, sizeof(hint));
		len = strlen(err);
		if (hint[0] != '\0' && geteuid() != 0 && len + 3 < errlen)
			snprintf(err + len, errlen - len, " (%s)", hint);
		free(sb->listeners);
		free(sb);
		return (NULL);
	}
	return (sb);
}

/* Take a listener out of the sandbox: the caller owns it now. */
int
netns_sandbox_take(struct netns_sandbox *sb, int type, uint16_t port)
{
	size_t	i;
	int	fd;

	for (i = 0; i < sb->nlisteners; i++) {
		if (sb->listeners[i].type == type &&
		    sb->listeners[i].port == port && sb->listeners[i].fd != -1) {
			fd = sb->listeners[i].fd;
			sb->listeners[i].fd = -1;
			return (fd);
		}
	}
	return (-1);
}

/*
 * Close what is left of the sandbox; the namespaces die with it.  A
 * sandbox child whose command never started is killed.
 */
void
netns_sandbox_close(struct netns_sandbox *sb)
{
	size_t	i;
	int	status;

	if (sb == NULL)
		return;
	if (sb->sock != -1)
		close(sb->sock);
	if (sb->pid != -1) {
		kill(sb->pid, SIGKILL);
		while (waitpid(sb->pid, &status, 0) == -1 && errno == EINTR)
			;
	}
	for (i = 0; i < sb->nlisteners; i++) {
		if (sb->listeners[i].fd != -1)
			close(sb->listeners[i].fd);
	}
	if (sb->userns_fd != -1)
		close(sb->userns_fd);
	if (sb->gateway_fd != -1)
		close(sb->gateway_fd);
	if (sb->sandbox_fd != -1)
		close(sb->sandbox_fd);
	free(sb->listeners);
	free(sb);
}
