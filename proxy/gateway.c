/*
 * The gateway: listeners on the caller's event base, the policy in
 * force, and the set of sessions.  Accepting pauses when the session
 * limit is reached or descriptors run out, and resumes later: it never
 * spins.
 */
#include "config.h"

#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "lib/log.h"
#include "proxy/conn/conn.h"
#include "proxy/escalate/escalate.h"
#include "rules/rules.h"

#define GATEWAY_RESUME_MS	250	/* pause after EMFILE */

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
	if (gw->stopping || gw->paused_fd)
		return;
	if (gw->paused_full && gw->nsessions < gw->cfg.max_clients) {
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

	if (gw->stopping) {
		evutil_closesocket(fd);
		return;
	}
	gw->fd_warned = 0;
	if (!gl->nodelay)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	session_open(gw, fd, sa, salen, gl->transparent);
	if (gw->nsessions >= gw->cfg.max_clients && !gw->paused_full) {
		log_info("%s: %zu connections: not accepting for now",
		    __func__, gw->nsessions);
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
	if (!gw->stopping && !gw->paused_full)
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

/* Free the sessions that were closed; report the end of a stop. */
static void
gateway_reaper_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gateway	*gw = arg;

	gw->nsessions -= session_reap(gw, 0);
	gateway_maybe_resume(gw);
	if (gw->stopping && TAILQ_EMPTY(&gw->sessions) &&
	    gw->stopped != NULL) {
		void	(*cb)(void *) = gw->stopped;

		gw->stopped = NULL;
		if (gw->grace != NULL)
			evtimer_del(gw->grace);
		cb(gw->stopped_arg);
	}
}

/*
 * Learn this host's own addresses: dialing one reaches the host's own
 * services, so they are refused like private ones.
 */
static void
gateway_own_load(struct gateway *gw)
{
	struct ifaddrs		*ifa, *i;
	struct resolver_addr	*a;

	gw->nown = 0;
	if (getifaddrs(&ifa) == -1) {
		log_warn("%s: getifaddrs", __func__);
		return;
	}
	for (i = ifa; i != NULL && gw->nown < GATEWAY_OWN_MAX; i = i->ifa_next) {
		if (i->ifa_addr == NULL)
			continue;
		a = &gw->own[gw->nown];
		memset(a, 0, sizeof *a);
		a->family = i->ifa_addr->sa_family;
		if (a->family == AF_INET)
			memcpy(a->addr, &((struct sockaddr_in *)
			    i->ifa_addr)->sin_addr, 4);
		else if (a->family == AF_INET6)
			memcpy(a->addr, &((struct sockaddr_in6 *)
			    i->ifa_addr)->sin6_addr, 16);
		else
			continue;
		gw->nown++;
	}
	freeifaddrs(ifa);
}

/* Is this one of the host's own addresses? */
int
gateway_own(const struct gateway *gw, const struct resolver_addr *a)
{
	size_t	i, len = a->family == AF_INET ? 4 : 16;

	for (i = 0; i < gw->nown; i++) {
		if (gw->own[i].family == a->family &&
		    memcmp(gw->own[i].addr, a->addr, len) == 0)
			return (1);
	}
	return (0);
}

/* Create a gateway on an event base. */
struct gateway *
gateway_create(struct event_base *base, const struct gateway_config *cfg,
    struct resolver *resolver, struct audit *audit)
{
	struct gateway	*gw;

	if ((gw = calloc(1, sizeof *gw)) == NULL)
		return (NULL);
	gw->base = base;
	gw->cfg = *cfg;
	gw->lim.max_head = cfg->max_head;
	gw->lim.max_headers = cfg->max_headers;
	gw->resolver = resolver;
	gw->audit = audit;
	TAILQ_INIT(&gw->listeners);
	TAILQ_INIT(&gw->sessions);
	TAILQ_INIT(&gw->dead);
	gw->reaper = event_new(base, -1, 0, gateway_reaper_cb, gw);
	gw->resume = evtimer_new(base, gateway_resume_cb, gw);
	gw->grace = NULL;
	gateway_own_load(gw);
	if (gw->reaper == NULL || gw->resume == NULL) {
		gateway_free(gw);
		return (NULL);
	}
	return (gw);
}

/* Close every listener. */
static void
gateway_unlisten(struct gateway *gw)
{
	struct gateway_listener	*gl;

	while ((gl = TAILQ_FIRST(&gw->listeners)) != NULL) {
		TAILQ_REMOVE(&gw->listeners, gl, entry);
		evconnlistener_free(gl->l);
		free(gl);
	}
}

/* Free the gateway, closing every connection at once. */
void
gateway_free(struct gateway *gw)
{
	if (gw == NULL)
		return;
	gateway_unlisten(gw);
	session_close_all(gw, "gateway freed");
	session_reap(gw, 1);
	if (gw->reaper != NULL)
		event_free(gw->reaper);
	if (gw->resume != NULL)
		event_free(gw->resume);
	if (gw->grace != NULL)
		event_free(gw->grace);
	rules_free(gw->rules);
	free(gw);
}

/* Listen on a bound socket, for proxy or for captured connections. */
static int
gateway_listen_kind(struct gateway *gw, int fd, int transparent, char *err,
    size_t errlen)
{
	struct gateway_listener	*gl;
	int			 one = 1;

	if ((gl = calloc(1, sizeof *gl)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (-1);
	}
	evutil_make_socket_nonblocking(fd);
	gl->gw = gw;
	gl->transparent = transparent;
	/* Set once here, not per connection: accepted sockets inherit it. */
	gl->nodelay = setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
	    sizeof one) == 0;
	gl->l = evconnlistener_new(gw->base, gateway_accept_cb, gl,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_REUSEABLE,
	    -1, fd);
	if (gl->l == NULL) {
		snprintf(err, errlen, "listen: %s", strerror(errno));
		free(gl);
		return (-1);
	}
	evconnlistener_set_error_cb(gl->l, gateway_accept_error_cb);
	TAILQ_INSERT_TAIL(&gw->listeners, gl, entry);
	if (gw->paused_fd || gw->paused_full || gw->stopping)
		evconnlistener_disable(gl->l);
	return (0);
}

/* Listen on a socket that is already bound (and maybe listening). */
int
gateway_listen_fd(struct gateway *gw, int fd, char *err, size_t errlen)
{
	return (gateway_listen_kind(gw, fd, 0, err, errlen));
}

/* Listen on a bound socket for captured (transparent) connections. */
int
gateway_listen_transparent_fd(struct gateway *gw, int fd, char *err,
    size_t errlen)
{
	return (gateway_listen_kind(gw, fd, 1, err, errlen));
}

/* The address to bind for "ADDR:PORT" (addr_port_parse() says what). */
struct addrinfo *
gateway_addrinfo(const char *spec, int type, char *err, size_t errlen)
{
	struct addrinfo	 hints, *ai;
	struct host	 h;
	uint16_t	 port;
	const char	*errstr;
	char		 serv[8];
	int		 gai;

	if (addr_port_parse(spec, &h, &port, 0, &errstr) == -1) {
		snprintf(err, errlen, "%s: %s", spec, errstr);
		return (NULL);
	}
	snprintf(serv, sizeof serv, "%u", port);
	memset(&hints, 0, sizeof hints);
	hints.ai_socktype = type;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
	if ((gai = getaddrinfo(h.text, serv, &hints, &ai)) != 0) {
		snprintf(err, errlen, "%s: %s", spec, gai_strerror(gai));
		return (NULL);
	}
	return (ai);
}

/* Create, bind and listen on a socket for "ADDR:PORT". */
int
gateway_listen(struct gateway *gw, const char *spec, char *err, size_t errlen)
{
	struct addrinfo	*ai = NULL;
	int		 fd = -1, one = 1, rv = -1;

	if ((ai = gateway_addrinfo(spec, SOCK_STREAM, err, errlen)) == NULL)
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
	if (gateway_listen_fd(gw, fd, err, errlen) == -1)
		goto out;
	fd = -1;
	rv = 0;
out:
	if (fd != -1)
		close(fd);
	freeaddrinfo(ai);
	return (rv);
}

/* Put a new policy in force (and look at the host's addresses again). */
void
gateway_set_rules(struct gateway *gw, struct rules *rules)
{
	gateway_own_load(gw);
	rules_free(gw->rules);
	gw->rules = rules;
}

/* Map fake addresses back to names. */
void
gateway_set_fakeip(struct gateway *gw, const struct fakeip *fakeip)
{
	gw->fakeip = fakeip;
}

/* Log to a new audit handle (or none). */
void
gateway_set_audit(struct gateway *gw, struct audit *audit)
{
	gw->audit = audit;
}

/* How many connections are open. */
size_t
gateway_sessions(const struct gateway *gw)
{
	return (gw->nsessions);
}

/* The grace period is over: close what is left. */
static void
gateway_grace_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gateway	*gw = arg;

	session_close_all(gw, "stopping: grace period over");
	event_active(gw->reaper, EV_TIMEOUT, 0);
}

/* Stop accepting; let open connections finish within grace seconds. */
void
gateway_stop(struct gateway *gw, int grace, void (*done)(void *), void *arg)
{
	struct timeval	 tv = { grace, 0 };

	gw->stopping = 1;
	gw->stopped = done;
	gw->stopped_arg = arg;
	gateway_unlisten(gw);
	session_stop_all(gw);
	if (gw->grace == NULL)
		gw->grace = evtimer_new(gw->base, gateway_grace_cb, gw);
	if (gw->grace != NULL)
		evtimer_add(gw->grace, &tv);
	event_active(gw->reaper, EV_TIMEOUT, 0);
}

/* Turn escalation on (or off with NULLs). */
void
gateway_set_escalate(struct gateway *gw, struct escalate *esc,
    struct grants *grants, const char *policy_path, int ask)
{
	struct escalate_hooks	hooks;

	gw->esc = esc;
	gw->ask = esc != NULL ? ask : 0;
	memset(&gw->eg, 0, sizeof gw->eg);
	gw->eg.grants = grants;
	gw->eg.rules = &gw->rules;
	gw->eg.policy_path = policy_path;
	if (esc == NULL)
		return;
	escalate_grants_hooks(&gw->eg, &hooks);
	if (grants == NULL)
		hooks.grant = NULL;
	escalate_set_hooks(esc, &hooks);
}
