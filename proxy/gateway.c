/*
 * The gateway: listeners on the caller's event base, the policy in
 * force, and the set of connections (proxy/conn/).  Accepting pauses
 * when the connection limit is reached or descriptors run out, and resumes later: it never
 * spins.
 */
#include "config.h"

#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "proxy/audit/audit.h"
#include "proxy/conn/conn.h"
#include "proxy/gateway.h"
#include "proxy/escalate/escalate.h"
#include "proxy/sandbox/sandbox.h"
#include "rules/policy.h"
#include "rules/rules.h"

#define GATEWAY_RESUME_MS	250	/* pause after EMFILE */

struct gateway_listener {
	TAILQ_ENTRY(gateway_listener)	 entry;
	struct gateway			*gw;
	struct evconnlistener		*l;
	enum conn_kind			 kind;
	struct sandbox		*sandbox;	/* its clients', or NULL */
	int				 nodelay;	/* accepted sockets inherit it */
};

struct gateway {
	struct conn_set			 cs;		/* the connections */
	unsigned int			 max_clients;
	TAILQ_HEAD(, gateway_listener)	 listeners;
	struct event			*reaper;	/* frees dead connections */
	struct event			*resume;	/* after EMFILE */
	struct event			*grace;		/* end of stop */
	int				 paused_fd;
	int				 fd_warned;
	int				 paused_full;
	void				(*stopped)(void *);
	void				*stopped_arg;
};

/* Fill in the documented defaults. */
void
gateway_config_defaults(struct gateway_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->max_head = HTTP_MAX_HEAD;
	cfg->max_headers = HTTP_MAX_HEADERS;
	cfg->max_clients = GATEWAY_MAX_CLIENTS;
	cfg->handshake_timeout = GATEWAY_HANDSHAKE_TIMEOUT;
	cfg->idle_timeout = GATEWAY_IDLE_TIMEOUT;
	cfg->connect_timeout = GATEWAY_CONNECT_TIMEOUT;
}

/* Turn every listener on or off. */
static void
gateway_accepting(struct gateway *gw, int on)
{
	struct gateway_listener	*gl;

	TAILQ_FOREACH(gl, &gw->listeners, entry) {
		if (on)
			evconnlistener_enable(gl->l);
		else
			evconnlistener_disable(gl->l);
	}
}

/* Accept again if nothing holds it back. */
static void
gateway_maybe_resume(struct gateway *gw)
{
	if (gw->cs.stopping || gw->paused_fd)
		return;
	if (gw->paused_full && gw->cs.nconns < gw->max_clients) {
		gw->paused_full = 0;
		gateway_accepting(gw, 1);
	}
}

/* A new client connection. */
static void
gateway_accept_cb(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct gateway_listener	*gl = arg;
	struct gateway		*gw = gl->gw;
	int			 one = 1;

	if (gw->cs.stopping) {
		evutil_closesocket(fd);
		return;
	}
	gw->fd_warned = 0;
	if (!gl->nodelay)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	conn_open(&gw->cs, fd, sa, salen, gl->kind, gl->sandbox);
	if (gw->cs.nconns >= gw->max_clients && !gw->paused_full) {
		log_info("%s: %zu connections: not accepting for now",
		    __func__, gw->cs.nconns);
		gw->paused_full = 1;
		gateway_accepting(gw, 0);
	}
}

/* The pause after running out of descriptors is over. */
static void
gateway_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gateway	*gw = arg;

	gw->paused_fd = 0;
	if (!gw->cs.stopping && !gw->paused_full)
		gateway_accepting(gw, 1);
}

/* accept() failed: back off on descriptor or memory shortage. */
static void
gateway_accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct gateway_listener	*gl = arg;
	struct gateway	*gw = gl->gw;
	struct timeval	 tv = { 0, GATEWAY_RESUME_MS * 1000 };
	int		 err = EVUTIL_SOCKET_ERROR();

	if (err != EMFILE && err != ENFILE && err != ENOBUFS && err != ENOMEM)
		return;
	if (!gw->fd_warned)
		log_warnx("%s: accept: %s: pausing", __func__, strerror(err));
	gw->fd_warned = 1;
	gw->paused_fd = 1;
	gateway_accepting(gw, 0);
	evtimer_add(gw->resume, &tv);
}

/* Free the connections that were closed; report the end of a stop. */
static void
gateway_reaper_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gateway	*gw = arg;

	conn_reap(&gw->cs, 0);
	gateway_maybe_resume(gw);
	if (gw->cs.stopping && TAILQ_EMPTY(&gw->cs.conns) &&
	    gw->stopped != NULL) {
		void	(*cb)(void *) = gw->stopped;

		gw->stopped = NULL;
		if (gw->grace != NULL)
			evtimer_del(gw->grace);
		cb(gw->stopped_arg);
	}
}

/* Create a gateway on an event base. */
struct gateway *
gateway_create(struct event_base *base, const struct gateway_config *cfg,
    struct resolver *resolver, struct audit *audit)
{
	struct gateway	*gw;

	if ((gw = calloc(1, sizeof *gw)) == NULL)
		return (NULL);
	gw->reaper = event_new(base, -1, 0, gateway_reaper_cb, gw);
	conn_set_init(&gw->cs, base, gw->reaper);
	gw->cs.lim.max_head = cfg->max_head;
	gw->cs.lim.max_headers = cfg->max_headers;
	gw->cs.handshake_timeout = cfg->handshake_timeout;
	gw->cs.idle_timeout = cfg->idle_timeout;
	gw->cs.connect_timeout = cfg->connect_timeout;
	gw->cs.session = cfg->session;
	gw->cs.about = cfg->about;
	gw->cs.resolver = resolver;
	gw->cs.audit = audit;
	gw->cs.policy = policy_create(mono_ms);
	gw->max_clients = cfg->max_clients;
	TAILQ_INIT(&gw->listeners);
	gw->resume = evtimer_new(base, gateway_resume_cb, gw);
	gw->grace = NULL;
	if (gw->reaper == NULL || gw->resume == NULL || gw->cs.policy == NULL) {
		gateway_free(gw);
		return (NULL);
	}
	return (gw);
}

/* Close one listener. */
static void
gateway_listener_free(struct gateway *gw, struct gateway_listener *gl)
{
	TAILQ_REMOVE(&gw->listeners, gl, entry);
	evconnlistener_free(gl->l);
	sandbox_unref(gl->sandbox);
	free(gl);
}

/* Close every listener. */
static void
gateway_unlisten(struct gateway *gw)
{
	while (!TAILQ_EMPTY(&gw->listeners))
		gateway_listener_free(gw, TAILQ_FIRST(&gw->listeners));
}

/* A sandbox is gone: close its listeners and its connections. */
void
gateway_drop_sandbox(struct gateway *gw, const struct sandbox *sb)
{
	struct gateway_listener	*gl, *next;

	for (gl = TAILQ_FIRST(&gw->listeners); gl != NULL; gl = next) {
		next = TAILQ_NEXT(gl, entry);
		if (gl->sandbox == sb)
			gateway_listener_free(gw, gl);
	}
	conn_close_sandbox(&gw->cs, sb, "sandbox gone");
}

/* Free the gateway, closing every connection at once. */
void
gateway_free(struct gateway *gw)
{
	if (gw == NULL)
		return;
	gateway_unlisten(gw);
	conn_close_all(&gw->cs, "gateway freed");
	conn_reap(&gw->cs, 1);
	conn_set_free(&gw->cs);
	conn_upstream_unref(gw->cs.upstream);
	if (gw->reaper != NULL)
		event_free(gw->reaper);
	if (gw->resume != NULL)
		event_free(gw->resume);
	if (gw->grace != NULL)
		event_free(gw->grace);
	policy_free(gw->cs.policy);
	free(gw);
}

/*
 * Listen on a bound socket for clients of one kind (from a sandbox); the
 * socket is ours from now on, closed on failure too.
 */
int
gateway_listen_fd(struct gateway *gw, int fd, enum conn_kind kind,
    struct sandbox *sb, char *err, size_t errlen)
{
	struct gateway_listener	*gl;
	int			 one = 1;

	if ((gl = calloc(1, sizeof *gl)) == NULL) {
		snprintf(err, errlen, "out of memory");
		close(fd);
		return (-1);
	}
	evutil_make_socket_nonblocking(fd);
	gl->gw = gw;
	gl->kind = kind;
	gl->sandbox = sandbox_ref(sb);
	/* Set once here, not per connection: accepted sockets inherit it. */
	gl->nodelay = setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
	    sizeof one) == 0;
	gl->l = evconnlistener_new(gw->cs.base, gateway_accept_cb, gl,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_REUSEABLE,
	    -1, fd);
	if (gl->l == NULL) {
		snprintf(err, errlen, "listen: %s", strerror(errno));
		sandbox_unref(gl->sandbox);
		free(gl);
		close(fd);
		return (-1);
	}
	evconnlistener_set_error_cb(gl->l, gateway_accept_error_cb);
	TAILQ_INSERT_TAIL(&gw->listeners, gl, entry);
	if (gw->paused_fd || gw->paused_full || gw->cs.stopping)
		evconnlistener_disable(gl->l);
	return (0);
}

/* Create, bind and listen on a socket for "ADDR:PORT", for one kind. */
int
gateway_listen(struct gateway *gw, const char *spec, enum conn_kind kind,
    char *err, size_t errlen)
{
	struct addrinfo	*ai = NULL;
	int		 fd = -1, one = 1, rv = -1;

	if ((ai = addr_port_addrinfo(spec, SOCK_STREAM, err, errlen)) == NULL)
		return (-1);
	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, 0);
	if (fd == -1 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == -1 ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) == -1 ||
	    listen(fd, 128) == -1) {
		snprintf(err, errlen, "%s: %s", spec, strerror(errno));
		goto out;
	}
	rv = gateway_listen_fd(gw, fd, kind, NULL, err, errlen);
	fd = -1;
out:
	if (fd != -1)
		close(fd);
	freeaddrinfo(ai);
	return (rv);
}

/* Put new rules in force (and look at the host's addresses again). */
void
gateway_set_rules(struct gateway *gw, struct rules *rules)
{
	conn_own_load(&gw->cs);
	policy_set_rules(gw->cs.policy, rules);
}

/* The policy in force. */
struct policy *
gateway_policy(const struct gateway *gw)
{
	return (gw->cs.policy);
}

/*
 * Go through this upstream proxy from now on (NULL: dial the hosts);
 * the gateway takes a reference, connections under way keep theirs.
 */
void
gateway_set_upstream(struct gateway *gw, struct conn_upstream *u)
{
	conn_upstream_unref(gw->cs.upstream);
	gw->cs.upstream = conn_upstream_ref(u);
}

/* Count into the caller's metrics. */
void
gateway_set_metrics(struct gateway *gw, struct metrics *m)
{
	gw->cs.metrics = m;
}

/* Map fake addresses back to names. */
void
gateway_set_fakeip(struct gateway *gw, const struct fakeip *fakeip)
{
	gw->cs.fakeip = fakeip;
}

/* The policy's secrets with their values. */
void
gateway_set_secrets(struct gateway *gw, const struct conn_secret *secrets,
    size_t n)
{
	gw->cs.secrets = secrets;
	gw->cs.nsecrets = n;
	gw->cs.secrets_gen++;
}

/* End TLS for hosts whose rules check requests. */
void
gateway_set_tls(struct gateway *gw, struct tls *tls)
{
	gw->cs.tls = tls;
}

/* Log to a new audit handle (or none). */
void
gateway_set_audit(struct gateway *gw, struct audit *audit)
{
	gw->cs.audit = audit;
}

/* Write allowed connection lines through a log budget, or each one. */
void
gateway_set_budget(struct gateway *gw, struct audit_budget *b)
{
	gw->cs.budget = b;
}

/* How many connections are open. */
size_t
gateway_connections(const struct gateway *gw)
{
	return (gw->cs.nconns);
}

/* The grace period is over: close what is left. */
static void
gateway_grace_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gateway	*gw = arg;

	conn_close_all(&gw->cs, "stopping: grace period over");
	event_active(gw->reaper, EV_TIMEOUT, 0);
}

/* Stop accepting; let open connections finish within grace seconds. */
void
gateway_stop(struct gateway *gw, int grace, void (*done)(void *), void *arg)
{
	struct timeval	 tv = { grace, 0 };

	gw->cs.stopping = 1;
	gw->stopped = done;
	gw->stopped_arg = arg;
	gateway_unlisten(gw);
	conn_stop_all(&gw->cs);
	if (gw->grace == NULL)
		gw->grace = evtimer_new(gw->cs.base, gateway_grace_cb, gw);
	if (gw->grace != NULL)
		evtimer_add(gw->grace, &tv);
	event_active(gw->reaper, EV_TIMEOUT, 0);
}

/* Turn escalation on (or off with NULLs). */
int
gateway_set_escalate(struct gateway *gw, struct escalate *esc,
    const char *always, int ask)
{
	gw->cs.esc = esc;
	gw->cs.ask = esc != NULL ? ask : 0;
	if (esc != NULL)
		escalate_set_policy(esc, gw->cs.policy);
	return (policy_set_always(gw->cs.policy, esc != NULL ? always : NULL));
}
