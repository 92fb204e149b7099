/*
 * The client connections of one gateway, as the gateway sees them: a
 * set it owns, with what every connection needs (limits, policy,
 * resolver, audit, escalation), and a connection opened on each
 * accepted socket.  A connection reads a request head (or, captured,
 * its first bytes), is decided, resolved, vetted and dialed, then
 * tunnels or forwards; proxy/conn/conn-int.h has the inside.
 */
#ifndef CONN_H
#define CONN_H

#include <sys/queue.h>
#include <sys/socket.h>

#include <stddef.h>

#include "proxy/resolver/resolver.h"
#include "proxy/wire/http.h"
#include "rules/rules.h"

#define CONN_OWN_MAX		64	/* own addresses remembered */

struct audit;
struct audit_budget;
struct metrics;
struct sandbox;
struct conn;
struct conn_events;
struct escalate;
struct event;
struct event_base;
struct fakeip;
struct policy;
struct rules;
struct rules_secret;
struct rules_upstream;
struct tls;

/* What a listener's clients speak. */
enum conn_kind {
	CONN_PROXY,		/* HTTP: CONNECT and absolute-form */
	CONN_TRANSPARENT,	/* captured: anything, to any address */
	CONN_SOCKS		/* SOCKS5 (RFC 1928) */
};

/* A secret of the policy and its value (NULL: none could be read). */
struct conn_secret {
	const struct rules_secret	*rule;
	const char			*value;
	size_t				 len;
};

/*
 * An upstream proxy (policy: upstream, upstream-auth): "HOST:PORT" as
 * the operator named it, the addresses the host's resolver gave for it
 * once, and the Proxy-Authorization value of its credentials (NULL:
 * none).  Counted: a connection going through it holds a reference, so
 * a reload may put another in force meanwhile.
 */
struct conn_upstream {
	unsigned int		 refs;
	char			 label[HOST_TEXT_LEN + 16];
	char			 detail[HOST_TEXT_LEN + 32];	/* audit */
	struct resolver_addr	 addrs[RESOLVER_MAX_ADDRS];
	size_t			 naddrs;
	uint16_t		 port;
	char			*auth;
};

struct conn_set {
	struct event_base	*base;
	struct http_limits	 lim;
	int			 handshake_timeout;	/* s to send a head */
	int			 idle_timeout;		/* s without traffic */
	int			 connect_timeout;	/* s per address */
	const char		*session;	/* audit "session", or NULL */
	const char		*about;		/* policy, for the info page */
	struct resolver		*resolver;
	struct conn_upstream	*upstream;	/* NULL: dial the hosts */
	struct audit		*audit;		/* or NULL */
	struct audit_budget	*budget;	/* of allowed lines, or NULL */
	struct metrics		*metrics;	/* or NULL */
	struct policy		*policy;	/* the gateway's */
	const struct fakeip	*fakeip;	/* NULL: no DNS side */
	struct tls		*tls;		/* inspection; NULL: none */
	const struct conn_secret *secrets;	/* the policy's, with values */
	size_t			 nsecrets;
	unsigned int		 secrets_gen;	/* changed by each setting */
	struct escalate		*esc;		/* or NULL */
	int			 ask;		/* s to hold, 0: no */
	int			 stopping;	/* no new requests */
	TAILQ_HEAD(, conn)	 conns;
	TAILQ_HEAD(, conn)	 dead;		/* closed, not yet freed */
	size_t			 nconns;	/* open and dead */
	struct event		*reaper;	/* the owner's: conn_reap() */
	TAILQ_HEAD(, conn)	 flushq;	/* clients' output to write */
	struct event		*flusher;	/* writes it: conn_flush() */
	const struct conn_events *ev;
	unsigned long long	 next_id;
	struct resolver_addr	 own[CONN_OWN_MAX];	/* this host's */
	size_t			 nown;
};

/*
 * Start an empty set on base; closing a connection activates reaper,
 * whose callback calls conn_reap().  Learns the host's own addresses.
 */
void	conn_set_init(struct conn_set *, struct event_base *,
	    struct event *);
void	conn_set_free(struct conn_set *);
/*
 * The upstream a policy names, with one reference: its addresses by
 * the host's resolver (getaddrinfo(), blocking), its credentials file
 * read.  NULL with err set (which never holds the credentials).
 */
struct conn_upstream *conn_upstream_create(const struct rules_upstream *,
	    char *, size_t);
struct conn_upstream *conn_upstream_ref(struct conn_upstream *);
void	conn_upstream_unref(struct conn_upstream *);

/* Learn this host's own addresses again (they are refused to dial). */
void	conn_own_load(struct conn_set *);

/*
 * Take over an accepted socket from a sandbox (NULL: none; a reference
 * is taken); returns -1 (socket closed) on failure.
 */
int	conn_open(struct conn_set *, int, const struct sockaddr *,
	    socklen_t, enum conn_kind, struct sandbox *);
/* Stopping: close the connections idle between requests. */
void	conn_stop_all(struct conn_set *);
void	conn_close_all(struct conn_set *, const char *);
/* Close the connections that came from one sandbox. */
void	conn_close_sandbox(struct conn_set *, const struct sandbox *,
	    const char *);
/*
 * Free the closed connections no asynchronous step still holds (all of
 * them when force is set).  Returns how many were freed.
 */
size_t	conn_reap(struct conn_set *, int);

#endif
