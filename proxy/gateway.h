/*
 * The gateway: listeners, and one connection (proxy/conn/) per client
 * speaking HTTP CONNECT and absolute-form HTTP, or SOCKS5, or captured
 * on its way anywhere, under a default-deny policy.  It lives on the
 * caller's event base and keeps no global state, so several can run in
 * one process.
 */
#ifndef GATEWAY_H
#define GATEWAY_H

#include <stddef.h>

#include "proxy/conn/conn.h"	/* enum conn_kind */

struct audit;
struct sandbox;
struct metrics;
struct fakeip;
struct event_base;
struct escalate;
struct gateway;
struct tls;
struct policy;
struct resolver;
struct rules;

struct gateway_config {
	size_t		 max_head;		/* request-head bytes */
	size_t		 max_headers;		/* header lines */
	unsigned int	 max_clients;		/* concurrent connections */
	int		 handshake_timeout;	/* s to send a request head */
	int		 idle_timeout;		/* s without traffic */
	int		 connect_timeout;	/* s per address dialed */
	const char	*session;		/* audit "session", or NULL */
	const char	*about;			/* policy, for the info page */
};

#define GATEWAY_MAX_CLIENTS		512
#define GATEWAY_HANDSHAKE_TIMEOUT	10
#define GATEWAY_IDLE_TIMEOUT		300
#define GATEWAY_CONNECT_TIMEOUT		10

void		 gateway_config_defaults(struct gateway_config *);

/* resolver and audit stay the caller's; audit may be NULL. */
struct gateway	*gateway_create(struct event_base *,
		    const struct gateway_config *, struct resolver *,
		    struct audit *);
void		 gateway_free(struct gateway *);

/*
 * Listen on "ADDR:PORT" ("[V6]:PORT") for clients of a kind (CONN_PROXY:
 * HTTP proxy, CONN_SOCKS: SOCKS5, RFC 1928 and 1929), or on a bound
 * socket of a sandbox (NULL: none; a reference is taken), taken over:
 * closed on failure too.
 * CONN_TRANSPARENT: captured connections, the destination each was made
 * to its local address (a fake address standing for a name, or a real
 * one).
 */
int		 gateway_listen(struct gateway *, const char *, enum conn_kind,
		    char *, size_t);
int		 gateway_listen_fd(struct gateway *, int, enum conn_kind,
		    struct sandbox *, char *, size_t);
/* A sandbox is gone: close its listeners and its connections. */
void		 gateway_drop_sandbox(struct gateway *,
		    const struct sandbox *);

/*
 * Escalation (proxy/escalate/escalate.h): report blocked attempts to esc,
 * serve the agent endpoint (origin-form /pinhole/...), and let esc decide
 * by the gateway's policy: its approvals become the policy's grants,
 * `always` ones appended to the file always names (NULL refuses them).
 * esc stays the caller's; NULL turns it off.  With ask seconds > 0, a
 * blocked connection is held that long while the person decides.
 * Returns 0, or -1 when out of memory.
 */
int		 gateway_set_escalate(struct gateway *, struct escalate *,
		    const char *, int);

/*
 * The policy in force (rules/policy.h), the gateway's: the one instance
 * the connections, the DNS server and the escalation queue decide by.
 */
struct policy	*gateway_policy(const struct gateway *);
/* Put rules in force (the policy owns them from now on; NULL denies all). */
void		 gateway_set_rules(struct gateway *, struct rules *);
/* Go through an upstream proxy (a reference is taken; NULL: none). */
void		 gateway_set_upstream(struct gateway *,
		    struct conn_upstream *);
void		 gateway_set_audit(struct gateway *, struct audit *);
/*
 * Write allowed connection lines through a log budget (NULL: each one);
 * it stays the caller's.
 */
struct audit_budget;
void		 gateway_set_budget(struct gateway *, struct audit_budget *);
/* Count decisions, bytes and tunnels in m (the caller's; NULL: not). */
void		 gateway_set_metrics(struct gateway *, struct metrics *);

/* Decide a fake address (from the DNS side) as the name behind it. */
void		 gateway_set_fakeip(struct gateway *, const struct fakeip *);
/* The policy's secrets and their values (the caller's, kept in step). */
struct conn_secret;
void		 gateway_set_secrets(struct gateway *,
		    const struct conn_secret *, size_t);
/* End TLS for hosts whose rules check requests (NULL: refuse them). */
void		 gateway_set_tls(struct gateway *, struct tls *);

/*
 * Stop accepting, close idle connections, let the others finish for at
 * most grace seconds, then call done (from the event loop).
 */
void		 gateway_stop(struct gateway *, int, void (*)(void *), void *);
size_t		 gateway_connections(const struct gateway *);

#endif
