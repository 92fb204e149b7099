/*
 * Attaching sandboxes to a session: the session's listener and one
 * struct attached per sandbox (see daemon/attach-server.h).  Messages
 * are proxy/wire/attachmsg.h's, one SOCK_SEQPACKET message each,
 * descriptors alongside the "listeners" one, sent by attach_send()
 * (daemon/attach-client.c, which the run side is).
 */
#include "config.h"

#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "daemon/attach-int.h"
#include "daemon/attach-server.h"
#include "daemon/gwopts.h"
#include "daemon/notice.h"
#include "lib/fdpass.h"
#include "lib/log.h"
#include "lib/unixsock.h"
#include "netns/netns.h"
#include "proxy/audit/audit.h"
#include "proxy/capture/udpcatch.h"
#include "proxy/dns/dns.h"
#include "proxy/escalate/control.h"
#include "proxy/escalate/escalate.h"
#include "proxy/gateway.h"
#include "proxy/sandbox/sandbox.h"
#include "proxy/wire/attachmsg.h"
#include "rules/policy.h"
#include "rules/rules.h"

#define ATTACH_HELLO_MS		10000	/* from accept to "attach", at most */
#define ATTACH_HELLO_MAX	64	/* connections not yet attached */
#define ATTACH_PAUSE_MS		1000	/* after accept ran out of fds */

enum attached_state {
	A_HELLO,		/* waiting for "attach" */
	A_CONFIGURED,		/* waiting for "listeners" */
	A_SERVED,		/* its listeners are ours */
	A_EXITED		/* it told its exit status */
};

struct attach_server;

/* One sandbox, as long as its connection lasts. */
struct attached {
	struct attach_server		*srv;
	TAILQ_ENTRY(attached)		 entry;
	int				 fd;
	pid_t				 peer;		/* SO_PEERCRED */
	struct event			*ev;
	struct event			*setup;		/* until "attach" */
	enum attached_state		 state;
	struct sandbox		*sb;
	struct udpcatch			*udp;
	int				 status;
	int				 notices;	/* its run's wish */
};

struct attach_server {
	struct gwctx			*c;
	int				 fd;
	struct event			*ev;
	char				 path[256];
	char				*plan;		/* guards */
	unsigned int			 max;
	unsigned int			 n;		/* attached, or being */
	unsigned int			 nhello;	/* not yet */
	struct event			*pause;		/* accepting again */
	int				 full_said;
	unsigned long long		 total;
	struct escalate_sub		*sub;		/* notices */
	TAILQ_HEAD(, attached)		 all;
	void				(*changed)(void *);
	void				*changed_arg;
};

/* Send an error message. */
static void
attach_send_error(int fd, const char *fmt, const char *arg)
{
	struct attach_msg	m;

	attach_msg_init(&m, ATTACH_ERROR);
	snprintf(m.error, sizeof m.error, fmt, arg);
	attach_send(fd, &m, NULL, 0);
}

/* The sandbox is gone: close everything of it at once. */
static void
attached_free(struct attached *a)
{
	struct attach_server	*srv = a->srv;
	char			 detail[64];

	if (a->state >= A_SERVED) {
		if (a->state == A_EXITED)
			snprintf(detail, sizeof detail, "exit %d", a->status);
		else
			snprintf(detail, sizeof detail, "gone");
		gwctx_audit_sandbox(srv->c, a->sb, "detach", NULL, NULL,
		    detail);
		gateway_drop_sandbox(srv->c->gw, a->sb);
		dns_server_drop_sandbox(srv->c->dns, a->sb);
		if (srv->c->esc != NULL)
			escalate_drop_sandbox(srv->c->esc, a->sb->ident.id,
			    srv->total);
	}
	udpcatch_free(a->udp);
	if (a->ev != NULL)
		event_free(a->ev);
	if (a->setup != NULL)
		event_free(a->setup);
	close(a->fd);
	TAILQ_REMOVE(&srv->all, a, entry);
	sandbox_unref(a->sb);
	if (a->state == A_HELLO)
		srv->nhello--;
	else {
		srv->n--;
		metrics_set(&srv->c->metrics, MG_SANDBOXES, srv->n);
		if (srv->changed != NULL)
			srv->changed(srv->changed_arg);
	}
	free(a);
}

/* "attach": name the sandbox and send its configuration. */
static int
attached_hello(struct attached *a, const struct attach_msg *in)
{
	struct attach_server	*srv = a->srv;
	struct attach_msg	*m;
	const struct rules	*r;
	char			 id[ATTACH_ID_MAX];
	int			 rv;

	if (srv->n >= srv->max) {
		snprintf(id, sizeof id, "%u", srv->n);
		if (!srv->full_said)
			log_warnx("attach: %s sandboxes attached: refusing more",
			    id);
		srv->full_said = 1;
		attach_send_error(a->fd, "%s sandboxes are attached, as many "
		    "as the session takes (--max-sandboxes)", id);
		return (-1);
	}
	srv->full_said = 0;
	snprintf(id, sizeof id, "%llu", ++srv->total);
	if ((a->sb = sandbox_new(id, in->cmd, -1,
	    gateway_policy(srv->c->gw))) == NULL ||
	    (m = calloc(1, sizeof *m)) == NULL)
		return (-1);
	attach_msg_init(m, ATTACH_CONFIG);
	snprintf(m->sandbox, sizeof m->sandbox, "%s", id);
	r = policy_rules(gateway_policy(srv->c->gw));
	m->nports = rules_ports(r, m->ports, ATTACH_PORTS_MAX);
	if (m->nports > ATTACH_PORTS_MAX)
		m->nports = ATTACH_PORTS_MAX;
	m->vsock = rules_allow_vsock(r);
	snprintf(m->guards, sizeof m->guards, "%s", srv->plan);
	rv = attach_send(a->fd, m, NULL, 0);
	free(m);
	a->notices = in->notices;
	/*
	 * Making the sandbox takes what it takes on a loaded machine: a run
	 * side that dies on the way closes its end, and counts against
	 * --max-sandboxes until then.
	 */
	event_del(a->setup);
	a->state = A_CONFIGURED;
	srv->nhello--;
	srv->n++;
	metrics_set(&srv->c->metrics, MG_SANDBOXES, srv->n);
	if (srv->changed != NULL)
		srv->changed(srv->changed_arg);
	return (rv);
}

/* Is this an IPv4 socket, as a sandbox's listeners are? */
static int
attach_inet_socket(int fd)
{
	struct sockaddr_storage	ss;
	socklen_t		len = sizeof ss;

	return (getsockname(fd, (struct sockaddr *)&ss, &len) == 0 &&
	    ss.ss_family == AF_INET);
}

/* Is pid the peer itself or its child (the sandbox's init)? */
static int
attach_pid_ok(pid_t peer, long long pid)
{
	char	path[64], buf[512], *p;
	long	ppid;
	ssize_t	n;
	int	fd;

	if (pid == peer)
		return (1);
	snprintf(path, sizeof path, "/proc/%lld/stat", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return (0);
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return (0);
	buf[n] = '\0';
	/* "pid (comm) state ppid": comm may hold anything but ends last. */
	if ((p = strrchr(buf, ')')) == NULL || sscanf(p + 1, " %*c %ld",
	    &ppid) != 1)
		return (0);
	return (ppid == (long)peer);
}

/* Serve one listener of the sandbox; the descriptor is taken over. */
static int
attached_listen(struct attached *a, enum attach_fd kind, int fd, int *raw,
    char *err, size_t errlen)
{
	struct gwctx	*c = a->srv->c;
	int		 type, listening = 0;
	socklen_t	 len = sizeof type;

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == -1 ||
	    !attach_inet_socket(fd))
		type = -1;
	len = sizeof listening;
	if (type == SOCK_STREAM && getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN,
	    &listening, &len) == -1)
		listening = 0;
	switch (kind) {
	case ATTACH_FD_PROXY:
	case ATTACH_FD_CAPTURE:
		if (type != SOCK_STREAM || !listening)
			break;
		return (gateway_listen_fd(c->gw, fd, kind == ATTACH_FD_PROXY ?
		    CONN_PROXY : CONN_TRANSPARENT, a->sb, err, errlen));
	case ATTACH_FD_DNS:
		if (type != SOCK_DGRAM && (type != SOCK_STREAM || !listening))
			break;
		return (dns_server_listen_fd(c->dns, fd, a->sb, err, errlen));
	case ATTACH_FD_RAW:
		if (type != SOCK_RAW || *raw != -1)
			break;
		*raw = fd;
		return (0);
	case ATTACH_FD_UDP:
		if (type != SOCK_DGRAM || *raw == -1 || a->udp != NULL)
			break;
		a->udp = udpcatch_create(c->base, fd, *raw, c->audit,
		    c->o->cfg.session, a->sb, c->fakeip);
		*raw = -1;
		if (a->udp == NULL) {
			snprintf(err, errlen, "cannot catch UDP");
			return (-1);
		}
		return (0);
	}
	snprintf(err, errlen, "descriptor %d is not what it is said to be",
	    fd);
	close(fd);
	return (-1);
}

/* "listeners": serve them all, or none. */
static int
attached_take(struct attached *a, const struct attach_msg *in, int *fds,
    size_t nfds)
{
	struct attach_msg	m;
	char			err[256];
	size_t			i;
	int			raw = -1, failed = 0;

	if (nfds != in->nfds) {
		attach_send_error(a->fd, "%s", "descriptors missing");
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		return (-1);
	}
	if (!attach_pid_ok(a->peer, in->pid)) {
		attach_send_error(a->fd, "%s", "that pid is not yours");
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		return (-1);
	}
	a->sb->ident.pid = (long)in->pid;
	/* Raw first: the UDP catch-all takes it. */
	for (i = 0; i < nfds; i++) {
		if (in->fds[i] == ATTACH_FD_RAW && !failed)
			failed = attached_listen(a, in->fds[i], fds[i], &raw,
			    err, sizeof err) == -1;
		else if (in->fds[i] == ATTACH_FD_RAW)
			close(fds[i]);
	}
	for (i = 0; i < nfds; i++) {
		if (in->fds[i] == ATTACH_FD_RAW)
			continue;
		if (failed)
			close(fds[i]);
		else
			failed = attached_listen(a, in->fds[i], fds[i], &raw,
			    err, sizeof err) == -1;
	}
	if (raw != -1)
		close(raw);
	/* What was served is dropped with the sandbox. */
	a->state = A_SERVED;
	if (failed) {
		attach_send_error(a->fd, "%s", err);
		return (-1);
	}
	gwctx_audit_sandbox(a->srv->c, a->sb, "attach", NULL, NULL, NULL);
	attach_msg_init(&m, ATTACH_OK);
	return (attach_send(a->fd, &m, NULL, 0));
}

/* A message from the run side, or its end. */
static void
attached_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct attached		*a = arg;
	struct attach_msg	*m = NULL;
	char			 buf[ATTACH_MSG_MAX];
	int			 fds[FDPASS_MAX];
	const char		*errstr;
	size_t			 nfds, i;
	ssize_t			 n;
	int			 ok = 0;

	if ((n = fdpass_recv(fd, buf, sizeof buf, fds, &nfds, MSG_DONTWAIT)) == -1 &&
	    errno == EAGAIN)
		return;
	if (n > 0 && (m = malloc(sizeof *m)) != NULL &&
	    attach_parse(buf, (size_t)n, m, &errstr) == 0) {
		if (a->state == A_HELLO && m->op == ATTACH_ATTACH && nfds == 0)
			ok = attached_hello(a, m) == 0;
		else if (a->state == A_CONFIGURED &&
		    m->op == ATTACH_LISTENERS) {
			ok = attached_take(a, m, fds, nfds) == 0;
			nfds = 0;
		} else if (a->state == A_SERVED && m->op == ATTACH_EXIT &&
		    nfds == 0) {
			/* Done: dropped now, the exit status logged. */
			a->status = m->status;
			a->state = A_EXITED;
		}
	} else if (n > 0 && m != NULL)
		attach_send_error(fd, "%s", errstr);
	for (i = 0; i < nfds; i++)
		close(fds[i]);
	free(m);
	if (!ok)
		attached_free(a);
}

/* It did not say "attach" in time: drop it. */
static void
attached_setup_cb(evutil_socket_t fd, short what, void *arg)
{
	struct attached	*a = arg;

	log_warnx("attach: a client did not say attach within %d s",
	    ATTACH_HELLO_MS / 1000);
	attached_free(a);
}

/* A new run side: the same user (or root), or refused. */
static void
attach_accept_cb(evutil_socket_t lfd, short what, void *arg)
{
	struct attach_server	*srv = arg;
	struct attached		*a;
	struct timeval		 tv = { ATTACH_PAUSE_MS / 1000, 0 };
	struct ucred		 cred;
	socklen_t		 len = sizeof cred;
	uid_t			 uid = (uid_t)-1;
	int			 fd;

	if ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) ==
	    -1) {
		/* Out of descriptors: pause rather than spin. */
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		    errno == ENOMEM) {
			log_warn("attach: accept");
			event_del(srv->ev);
			evtimer_add(srv->pause, &tv);
		}
		return;
	}
	if (!control_peer_ok(fd, &uid) || getsockopt(fd, SOL_SOCKET,
	    SO_PEERCRED, &cred, &len) == -1) {
		log_warnx("attach: refused a client (uid %ld)", (long)uid);
		close(fd);
		return;
	}
	/*
	 * Those that have not attached yet are few and not for long: one
	 * more makes way for it by dropping the one waiting longest (a real
	 * run side speaks at once).
	 */
	if (srv->nhello >= ATTACH_HELLO_MAX) {
		TAILQ_FOREACH(a, &srv->all, entry) {
			if (a->state == A_HELLO)
				break;
		}
		if (a != NULL)
			attached_free(a);
	}
	if ((a = calloc(1, sizeof *a)) == NULL) {
		close(fd);
		return;
	}
	a->srv = srv;
	a->fd = fd;
	a->peer = cred.pid;
	a->status = -1;
	a->state = A_HELLO;
	TAILQ_INSERT_TAIL(&srv->all, a, entry);
	srv->nhello++;
	tv.tv_sec = ATTACH_HELLO_MS / 1000;
	a->ev = event_new(srv->c->base, fd, EV_READ | EV_PERSIST,
	    attached_read_cb, a);
	a->setup = evtimer_new(srv->c->base, attached_setup_cb, a);
	if (a->ev == NULL || a->setup == NULL || event_add(a->ev, NULL) == -1 ||
	    evtimer_add(a->setup, &tv) == -1)
		attached_free(a);
}

/*
 * An event of the session's queue: the notice it makes goes to the run
 * of the sandbox it is about (a decision to every run: each says it only
 * for the requests it told of), when that run asked for notices.  One
 * the run cannot take now is dropped.
 */
static void
attach_event_cb(const struct escalate_event *ev, void *arg)
{
	struct attach_server	*srv = arg;
	struct attached		*a;
	struct attach_msg	*m;
	const char		*sandbox;

	TAILQ_FOREACH(a, &srv->all, entry) {
		if (a->notices && a->state == A_SERVED)
			break;
	}
	if (a == NULL || (m = malloc(sizeof *m)) == NULL)
		return;
	attach_msg_init(m, ATTACH_NOTICE);
	if (notice_from_event(ev, &m->notice, &sandbox) == 0) {
		TAILQ_FOREACH(a, &srv->all, entry) {
			if (!a->notices || a->state != A_SERVED ||
			    (sandbox != NULL &&
			    strcmp(a->sb->ident.id, sandbox) != 0))
				continue;
			/* Each knows a request by the id it was given. */
			if (ev->request != NULL)
				snprintf(m->notice.request,
				    sizeof m->notice.request, "%s",
				    escalate_id_for(ev->request,
				    a->sb->ident.id));
			attach_send(a->fd, m, NULL, 0);
		}
	}
	free(m);
}

/* Accept again after running out of descriptors. */
static void
attach_pause_cb(evutil_socket_t fd, short what, void *arg)
{
	struct attach_server	*srv = arg;

	event_add(srv->ev, NULL);
}

/* Listen on path for the sandboxes of a gateway. */
struct attach_server *
attach_server_open(struct gwctx *c, const char *path, const char *plan,
    unsigned int max, char *err, size_t errlen)
{
	struct attach_server	*srv;

	if (strlen(path) >= sizeof srv->path) {
		snprintf(err, errlen, "%s: path too long", path);
		return (NULL);
	}
	if ((srv = calloc(1, sizeof *srv)) == NULL ||
	    (srv->plan = strdup(plan)) == NULL) {
		free(srv);
		snprintf(err, errlen, "out of memory");
		return (NULL);
	}
	srv->c = c;
	srv->max = max;
	srv->fd = -1;
	TAILQ_INIT(&srv->all);
	snprintf(srv->path, sizeof srv->path, "%s", path);
	unlink(path);
	srv->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, 0);
	if (srv->fd == -1 ||
	    (srv->pause = evtimer_new(c->base, attach_pause_cb, srv)) == NULL ||
	    unixsock_bind(srv->fd, path) == -1 ||
	    chmod(path, 0600) == -1 || listen(srv->fd, 128) == -1 ||
	    (srv->ev = event_new(c->base, srv->fd, EV_READ | EV_PERSIST,
	    attach_accept_cb, srv)) == NULL || event_add(srv->ev, NULL) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		attach_server_free(srv);
		return (NULL);
	}
	if (c->esc != NULL && (srv->sub = escalate_subscribe(c->esc,
	    attach_event_cb, srv)) == NULL) {
		snprintf(err, errlen, "out of memory");
		attach_server_free(srv);
		return (NULL);
	}
	return (srv);
}

/* Stop: every sandbox is dropped (it has no network from now on). */
void
attach_server_free(struct attach_server *srv)
{
	if (srv == NULL)
		return;
	srv->changed = NULL;
	escalate_unsubscribe(srv->sub);
	while (!TAILQ_EMPTY(&srv->all))
		attached_free(TAILQ_FIRST(&srv->all));
	if (srv->ev != NULL)
		event_free(srv->ev);
	if (srv->pause != NULL)
		event_free(srv->pause);
	if (srv->fd != -1) {
		close(srv->fd);
		unlink(srv->path);
	}
	free(srv->plan);
	free(srv);
}

/* Sandboxes attached now, and since the session started. */
unsigned int
attach_server_count(const struct attach_server *srv, unsigned long long *total)
{
	if (total != NULL)
		*total = srv != NULL ? srv->total : 0;
	return (srv != NULL ? srv->n : 0);
}

/* Call cb(arg) whenever a sandbox attaches or detaches. */
void
attach_server_on_change(struct attach_server *srv, void (*cb)(void *),
    void *arg)
{
	srv->changed = cb;
	srv->changed_arg = arg;
}
