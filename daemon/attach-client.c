/*
 * The run side of attaching to a session (daemon/attach-client.h), one
 * step at a time on a connected socket, and the one send both sides
 * use.  Messages are proxy/wire/attachmsg.h's, one SOCK_SEQPACKET
 * message each, descriptors alongside the "listeners" one.
 */
#include "config.h"

#include <sys/socket.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon/attach-client.h"
#include "daemon/attach-int.h"
#include "lib/clock.h"
#include "lib/fdpass.h"
#include "netns/netns.h"
#include "proxy/wire/attachmsg.h"

#define ATTACH_REPLY_MS		10000	/* the run side waits this long */
#define ATTACH_BYE_MS		10000	/* for the session to close */

/* Send one message (and descriptors).  Returns 0 or -1. */
int
attach_send(int fd, const struct attach_msg *m, const int *fds, size_t nfds)
{
	char	buf[ATTACH_MSG_MAX];
	size_t	len;

	if ((len = attach_build(m, buf, sizeof buf)) == 0) {
		errno = EMSGSIZE;
		return (-1);
	}
	return (fdpass_send(fd, buf, len, fds, nfds, MSG_DONTWAIT) ==
	    (ssize_t)len ? 0 : -1);
}

/* Wait for one message (up to ATTACH_REPLY_MS). */
static int
attach_wait(int fd, struct attach_msg *m, char *err, size_t errlen)
{
	char		 buf[ATTACH_MSG_MAX];
	int		 fds[FDPASS_MAX];
	struct pollfd	 pfd = { .fd = fd, .events = POLLIN };
	const char	*errstr;
	size_t		 nfds, i;
	ssize_t		 n;
	int		 r;

	while ((r = poll(&pfd, 1, ATTACH_REPLY_MS)) == -1 && errno == EINTR)
		;
	if (r == 0) {
		snprintf(err, errlen, "it does not answer");
		return (-1);
	}
	n = fdpass_recv(fd, buf, sizeof buf, fds, &nfds, MSG_DONTWAIT);
	for (i = 0; i < nfds; i++)
		close(fds[i]);
	if (n <= 0) {
		snprintf(err, errlen, "%s", n == 0 ? "it has gone" :
		    strerror(errno));
		return (-1);
	}
	if (attach_parse(buf, (size_t)n, m, &errstr) == -1) {
		snprintf(err, errlen, "it sent a bad message: %s", errstr);
		return (-1);
	}
	if (m->op == ATTACH_ERROR) {
		snprintf(err, errlen, "%s", m->error);
		return (-1);
	}
	return (0);
}

/*
 * Send the command line, and whether notices are wanted; read the
 * sandbox's configuration.
 */
int
attach_hello(int fd, const char *cmd, int notices, struct attach_msg *cfg,
    char *err, size_t errlen)
{
	attach_msg_init(cfg, ATTACH_ATTACH);
	snprintf(cfg->cmd, sizeof cfg->cmd, "%s", cmd);
	cfg->notices = notices;
	/* A session that refuses says why first: read that too. */
	if (attach_send(fd, cfg, NULL, 0) == -1 && errno != EPIPE &&
	    errno != ECONNRESET) {
		snprintf(err, errlen, "%s", strerror(errno));
		return (-1);
	}
	if (attach_wait(fd, cfg, err, errlen) == -1)
		return (-1);
	if (cfg->op != ATTACH_CONFIG) {
		snprintf(err, errlen, "it sent an unexpected message");
		return (-1);
	}
	return (0);
}

/* What one listener of the sandbox is for. */
static enum attach_fd
attach_kind(const struct netns_listener *l)
{
	if (l->type == SOCK_RAW)
		return (ATTACH_FD_RAW);
	if (l->port == NETNS_DNS_PORT)
		return (ATTACH_FD_DNS);
	if (l->type == SOCK_DGRAM)
		return (ATTACH_FD_UDP);
	return (l->port == NETNS_PROXY_PORT ? ATTACH_FD_PROXY :
	    ATTACH_FD_CAPTURE);
}

/* Hand over the sandbox's listeners (our copies closed); wait for "ok". */
int
attach_handover(int fd, struct netns_sandbox *sb, char *err, size_t errlen)
{
	struct attach_msg	m;
	int			fds[ATTACH_FDS_MAX];
	size_t			i;
	int			k;

	attach_msg_init(&m, ATTACH_LISTENERS);
	m.pid = sb->pid;
	for (i = 0; i < sb->nlisteners && m.nfds < ATTACH_FDS_MAX; i++) {
		if (sb->listeners[i].type == SOCK_DGRAM &&
		    sb->listeners[i].port != NETNS_DNS_PORT && !sb->capture_udp)
			continue;
		k = netns_sandbox_take(sb, sb->listeners[i].type,
		    sb->listeners[i].port);
		if (k == -1)
			continue;
		m.fds[m.nfds] = attach_kind(&sb->listeners[i]);
		fds[m.nfds++] = k;
	}
	k = attach_send(fd, &m, fds, m.nfds);
	for (i = 0; i < m.nfds; i++)
		close(fds[i]);
	if (k == -1) {
		snprintf(err, errlen, "%s", strerror(errno));
		return (-1);
	}
	if (attach_wait(fd, &m, err, errlen) == -1)
		return (-1);
	if (m.op != ATTACH_OK) {
		snprintf(err, errlen, "it sent an unexpected message");
		return (-1);
	}
	return (0);
}

/*
 * Tell the exit status, then wait (at most ATTACH_BYE_MS) until the
 * session closes the socket: it has ended the sandbox then, so a command
 * started after this one finds it ended (its refusals listed, for one).
 * What comes before the close is dropped.
 */
void
attach_bye(int fd, int status)
{
	struct attach_msg	m;
	struct pollfd		pfd = { .fd = fd, .events = POLLIN };
	uint64_t		end = mono_ms() + ATTACH_BYE_MS, now;
	char			buf[64];
	ssize_t			n;

	attach_msg_init(&m, ATTACH_EXIT);
	m.status = status;
	attach_send(fd, &m, NULL, 0);
	while ((now = mono_ms()) < end &&
	    poll(&pfd, 1, (int)(end - now)) != 0) {
		n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
		if (n == 0 || (n == -1 && errno != EINTR && errno != EAGAIN))
			return;
	}
}

/*
 * Read what the session sent while the command runs, without waiting:
 * 1 a notice (in m), 0 nothing more now (or a message that is not a
 * notice, dropped), -1 the session has gone.
 */
int
attach_recv_notice(int fd, struct attach_msg *m)
{
	char		 buf[ATTACH_MSG_MAX];
	int		 fds[FDPASS_MAX];
	const char	*errstr;
	size_t		 nfds, i;
	ssize_t		 n;

	n = fdpass_recv(fd, buf, sizeof buf, fds, &nfds, MSG_DONTWAIT);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return (0);
	if (n <= 0)
		return (-1);
	for (i = 0; i < nfds; i++)
		close(fds[i]);
	if (attach_parse(buf, (size_t)n, m, &errstr) == -1 ||
	    m->op != ATTACH_NOTICE)
		return (0);
	return (1);
}
