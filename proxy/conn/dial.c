/*
 * From an allowed host to a connected server: resolve the name (or take
 * the address literal), keep only the addresses that may be dialed
 * (public and not this host's own, or under allow-private), then dial
 * them in turn, each with a bounded timeout; for a client whose TLS
 * ended here, begin TLS with the server, verified.  Through an upstream
 * proxy the upstream is dialed instead and resolves the name itself (an
 * address literal is still vetted first), then opens a tunnel to the
 * host when asked with CONNECT (upstream-connect.c).
 */
#include "config.h"

#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>

#include <openssl/ssl.h>

#include "lib/log.h"
#include "proxy/audit/audit.h"
#include "proxy/conn/conn-int.h"
#include "proxy/escalate/escalate.h"
#include "proxy/resolver/resolver.h"
#include "proxy/tls/tls.h"
#include "proxy/wire/socks5.h"
#include "rules/policy.h"
#include "rules/rules.h"

/*
 * Learn this host's own addresses: dialing one reaches the host's own
 * services, so they are refused like private ones.
 */
void
conn_own_load(struct conn_set *set)
{
	struct ifaddrs		*ifa, *i;
	struct resolver_addr	*a;

	set->nown = 0;
	if (getifaddrs(&ifa) == -1) {
		log_warn("%s: getifaddrs", __func__);
		return;
	}
	for (i = ifa; i != NULL && set->nown < CONN_OWN_MAX;
	    i = i->ifa_next) {
		if (i->ifa_addr == NULL)
			continue;
		a = &set->own[set->nown];
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
		set->nown++;
	}
	freeifaddrs(ifa);
}

/* Is this one of the host's own addresses? */
static int
conn_own(const struct conn_set *set, const struct resolver_addr *a)
{
	size_t	i, len = a->family == AF_INET ? 4 : 16;

	for (i = 0; i < set->nown; i++) {
		if (set->own[i].family == a->family &&
		    memcmp(set->own[i].addr, a->addr, len) == 0)
			return (1);
	}
	return (0);
}

/*
 * May this address be dialed?  A public one may, unless it is the host's
 * own; a special-purpose one only under allow-private.  *what names the
 * kind of address refused.
 */
static int
conn_vet(struct conn *c, const struct resolver_addr *a,
    const char **what)
{
	const struct rules	*r;
	struct rules_verdict	 v;
	size_t			 len = a->family == AF_INET ? 4 : 16;
	enum addr_class		 cls;

	cls = addr_classify(a->addr, len);
	if (cls == ADDR_PUBLIC && !conn_own(c->set, a))
		return (1);
	*what = cls == ADDR_PUBLIC ? "this host's own" : addr_class_name(cls);
	r = policy_rules(conn_policy_in_force(c));
	return (r != NULL && rules_private_ok(r, a->addr, len, &v));
}

/* Dial the addresses in turn, or the upstream's in their place. */
static void
conn_dial_first(struct conn *c)
{
	c->next_addr = 0;
	c->dial_err = 0;
	c->dial_timeouts = 0;
	if (c->upstream != NULL && conn_upstream_addrs_take(c) == -1)
		return;
	conn_dial_next(c);
}

/*
 * host.pinhole.internal is the host's loopback: 127.0.0.1, without the
 * resolver and without allow-private, when a rule naming it exactly or a
 * grant for it allowed the connection; refused otherwise.
 */
static void
conn_host_loopback(struct conn *c)
{
	struct resolver_addr	a;

	if (!c->loopback) {
		conn_fix_set(c, "a wildcard never opens the "
		    "host's loopback: the policy needs the rule 'allow "
		    RULES_HOST_LOOPBACK ":%u'", c->port);
		conn_refuse(c, 403, "private-address", RULES_HOST_LOOPBACK
		    " is the host's loopback, and no rule names it exactly");
		return;
	}
	memset(&a, 0, sizeof a);
	a.family = AF_INET;
	a.addr[0] = 127;
	a.addr[3] = 1;
	if ((c->addrs = calloc(1, sizeof *c->addrs)) == NULL) {
		conn_refuse(c, 502, NULL, "out of memory");
		return;
	}
	c->addrs[0] = a;
	c->naddrs = 1;
	conn_dial_first(c);
}

/* Keep the addresses that may be dialed; refuse if none is left. */
static void
conn_vet_all(struct conn *c, const struct resolver_addr *a, size_t n)
{
	const char	*what = "special-purpose", *w = NULL;
	char		 text[INET6_ADDRSTRLEN] = "";
	size_t		i;

	c->naddrs = c->next_addr = 0;
	free(c->addrs);
	if (n > RESOLVER_MAX_ADDRS)
		n = RESOLVER_MAX_ADDRS;
	if ((c->addrs = calloc(n > 0 ? n : 1, sizeof *c->addrs)) == NULL) {
		conn_refuse(c, 502, NULL, "out of memory");
		return;
	}
	for (i = 0; i < n; i++) {
		if (conn_vet(c, &a[i], &w)) {
			c->addrs[c->naddrs++] = a[i];
		} else if (text[0] == '\0') {
			what = w;
			inet_ntop(a[i].family, a[i].addr, text, sizeof text);
		}
	}
	if (c->naddrs == 0) {
		char	why[256], fix[ESCALATE_FIX_LEN];

		snprintf(why, sizeof why, "%s is a %s address and no "
		    "allow-private rule covers it", text, what);
		snprintf(c->addr, sizeof c->addr, "%s", text);
		policy_private_fix(text, what, fix, sizeof fix);
		conn_fix_set(c, "%s", fix);
		if (c->set->esc != NULL)
			escalate_blocked(c->set->esc, c->sandbox, &c->host,
			    c->port, c->via, fix);
		conn_refuse(c, 403, "private-address", why);
		return;
	}
	conn_dial_first(c);
}

/* The resolver's answer: vet and dial, or refuse. */
void
conn_resolved(struct conn *c, int status, const char *errstr,
    const struct resolver_result *res)
{
	char	why[256];

	if (status != 0) {
		snprintf(why, sizeof why, "name resolution failed: %s",
		    errstr != NULL ? errstr : "unknown error");
		conn_refuse(c, errstr != NULL &&
		    strstr(errstr, "timed out") != NULL ? 504 : 502,
		    "resolve-failed", why);
		return;
	}
	conn_vet_all(c, res->a, res->n);
}

/*
 * Find the addresses for the host: it is one, or ask the resolver, or,
 * through the upstream, leave the name to it.
 */
void
conn_resolve(struct conn *c)
{
	struct resolver_addr	a;

	conn_upstream_route(c);
	if (c->host.kind == HOST_NAME &&
	    strcmp(c->host.text, RULES_HOST_LOOPBACK) == 0) {
		free(c->addrs);
		c->addrs = NULL;
		conn_host_loopback(c);
		return;
	}
	if (c->host.kind != HOST_NAME) {
		memset(&a, 0, sizeof a);
		a.family = c->host.kind == HOST_IPV4 ? AF_INET : AF_INET6;
		memcpy(a.addr, c->host.addr, sizeof a.addr);
		conn_vet_all(c, &a, 1);
		return;
	}
	if (c->upstream != NULL) {
		free(c->addrs);
		c->addrs = NULL;
		conn_dial_first(c);
		return;
	}
	c->state = S_RESOLVE;
	conn_update_io(c);
	conn_timer(c, c->set->connect_timeout);
	c->refs++;
	c->query = resolver_lookup(c->set->resolver, c->host.text,
	    c->set->ev->resolved, c);
	if (c->query == NULL) {
		c->refs--;
		conn_refuse(c, 502, "resolve-failed", "resolver failure");
	}
}

/* Fill a sockaddr for a vetted address. */
static socklen_t
conn_sockaddr(const struct resolver_addr *a, uint16_t port,
    struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof *ss);
	if (a->family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		memcpy(&in->sin_addr, a->addr, 4);
		return (sizeof *in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		memcpy(&in6->sin6_addr, a->addr, 16);
		return (sizeof *in6);
	}
}

/* All addresses failed: say why. */
static void
conn_dial_failed(struct conn *c)
{
	char	why[256];

	if (c->upstream != NULL) {
		conn_upstream_failed(c, "upstream-unreachable", "cannot be "
		    "reached (%s: %s)", c->addr, c->dial_timeouts > 0 &&
		    c->dial_err == ETIMEDOUT ? "timed out" : strerror(
		    c->dial_err != 0 ? c->dial_err : ECONNREFUSED));
		return;
	}
	if (c->dial_timeouts > 0 && c->dial_err == ETIMEDOUT) {
		snprintf(why, sizeof why, "connection to %s timed out", c->addr);
		conn_refuse(c, 504, "timeout", why);
	} else {
		snprintf(why, sizeof why, "cannot connect to %s: %s", c->addr,
		    strerror(c->dial_err != 0 ? c->dial_err : ECONNREFUSED));
		conn_refuse(c, 502, "connect-failed", why);
	}
}

/*
 * Connect a new socket to sa, in a bufferevent.  A connection that is
 * up when connect() returns (*done set: on loopback the handshake ends
 * within the call) needs no loop turn, no EPOLLOUT armed and disarmed,
 * to learn it; one under way is left to the bufferevent, which reports
 * it.  Returns NULL with errno set.
 */
static struct bufferevent *
conn_connect(struct conn *c, const struct sockaddr *sa, socklen_t len,
    int *done)
{
	struct sockaddr_storage	 peer;
	socklen_t		 plen = sizeof peer;
	struct bufferevent	*bev = NULL;
	int			 fd, err;

	*done = 0;
	if ((fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1)
		return (NULL);
	if (connect(fd, sa, len) == 0)
		*done = 1;
	else if (errno != EINPROGRESS)
		goto fail;
	else if (getpeername(fd, (struct sockaddr *)&peer, &plen) == 0)
		*done = 1;
	if ((bev = bufferevent_socket_new(c->set->base, fd,
	    BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS)) == NULL) {
		errno = ENOMEM;
		goto fail;
	}
	bufferevent_setcb(bev, c->set->ev->server_read,
	    c->set->ev->server_write, c->set->ev->server_event, c);
	/* Under way: the bufferevent waits for the socket's answer. */
	if (!*done && bufferevent_socket_connect(bev, NULL, 0) == -1) {
		err = errno != 0 ? errno : ENOMEM;
		bufferevent_free(bev);
		errno = err;
		return (NULL);
	}
	return (bev);
fail:
	err = errno;
	close(fd);
	errno = err;
	return (NULL);
}

/*
 * Dial the next vetted address, with a bounded connect timeout; a
 * connection up at once goes on to conn_dialed() in the same turn.
 */
void
conn_dial_next(struct conn *c)
{
	struct sockaddr_storage	 ss;
	struct bufferevent	*bev;
	const struct resolver_addr *a;
	socklen_t		 len;
	int			 done;

	conn_server_free(c);
	while (c->next_addr < c->naddrs) {
		a = &c->addrs[c->next_addr++];
		inet_ntop(a->family, a->addr, c->addr, sizeof c->addr);
		len = conn_sockaddr(a, c->upstream != NULL ?
		    c->upstream->port : c->port, &ss);
		if ((bev = conn_connect(c, (struct sockaddr *)&ss, len,
		    &done)) != NULL) {
			c->server = bev;
			c->state = S_DIAL;
			conn_timer(c, c->set->connect_timeout);
			if (done)
				conn_dialed(c);
			return;
		}
		c->dial_err = errno;
		if (errno == ENOMEM)
			break;
	}
	conn_dial_failed(c);
}

/*
 * Begin TLS again upstream, for a client whose TLS ended here: verified
 * against the system's trust store and for the host's name.  The
 * connection stays in S_DIAL until the handshake is done.
 */
static void
conn_tls_connect(struct conn *c)
{
	struct bufferevent	*bev;
	SSL			*ssl;
	char			 err[256];

	if ((ssl = tls_connect_new(c->set->tls, &c->host, err,
	    sizeof err)) == NULL) {
		conn_refuse(c, 502, "upstream-tls", err);
		return;
	}
	/* The filter reads the socket now. */
	conn_read_release(c->server, &c->srd);
	bev = bufferevent_openssl_filter_new(c->set->base, c->server, ssl,
	    BUFFEREVENT_SSL_CONNECTING,
	    BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
	if (bev == NULL) {
		c->server = NULL;
		conn_close(c, "out of memory");
		return;
	}
	c->server = bev;
	c->server_tls = 1;
	bufferevent_setcb(bev, c->set->ev->server_read,
	    c->set->ev->server_write, c->set->ev->server_event, c);
	bufferevent_set_max_single_read(bev, CONN_TLS_READ);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
	conn_timer(c, c->set->connect_timeout);
}

/*
 * Connected (through the upstream: its tunnel open, unless requests go
 * to it as they are; for a client whose TLS ended here, TLS begun
 * again): open the tunnel (saying so), or send the request.
 */
void
conn_dialed(struct conn *c)
{
	int	one = 1;

	if (!c->server_tls && !c->upstream_open) {
		setsockopt(bufferevent_getfd(c->server), IPPROTO_TCP,
		    TCP_NODELAY, &one, sizeof one);
		if (c->upstream != NULL && !conn_upstream_forward(c)) {
			conn_upstream_connect(c);
			return;
		}
	}
	if (!c->server_tls && c->client_tls) {
		conn_tls_connect(c);
		return;
	}
	bufferevent_setwatermark(c->server, EV_WRITE, CONN_LOW, 0);
	c->srv_port = c->port;
	c->reused = 0;
	if (c->bound ||
	    (!c->transparent && !c->socks && !c->req->is_connect)) {
		c->srv_name = strdup(c->host.text);	/* NULL: no reuse */
		conn_send_request(c);
		return;
	}
	if (!c->transparent && !c->socks)
		c->status = 200;
	conn_audit(c, "connect", "allow", NULL, 0);
	c->pending = P_TUNNEL;
	conn_count_tunnel(c, 1);
	conn_http_free(c);
	if (c->socks)
		conn_socks_send(c, SOCKS_REP_OK);
	else if (!c->transparent)
		conn_send_client(c, CONN_ESTABLISHED,
		    sizeof CONN_ESTABLISHED - 1);
	if (c->sniffed)
		bufferevent_setwatermark(c->client, EV_READ, 0, 0);
	conn_tunnel_io(c);
	c->state = S_TUNNEL;
	event_base_gettimeofday_cached(c->set->base, &c->start);
	c->last_active = conn_now(c);
	conn_timer(c, c->set->idle_timeout);
}

/* A kept-alive connection failed before answering: dial afresh once. */
int
conn_retry(struct conn *c)
{
	if (!c->reused || c->resp_got || c->req->h.body != HTTP_BODY_NONE)
		return (0);
	c->reused = 0;
	conn_server_free(c);
	c->up = 0;
	conn_resolve(c);
	return (1);
}
