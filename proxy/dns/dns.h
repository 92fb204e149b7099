#ifndef DNS_DNS_H
#define DNS_DNS_H

#include <stdint.h>

/*
 * The DNS server (server.c).  An allowed name (an allow rule covers it on
 * some port, or a live grant does) gets a fake address for A, an empty answer for AAAA, HTTPS
 * and SVCB, and the upstream's answer for other types; with real set, A
 * and AAAA get the resolver's vetted addresses instead.  Any other name
 * gets NXDOMAIN (REFUSED with refuse set) with EDE 15 "Blocked", and no
 * packet leaves for it.
 */
#define DNS_FAKE_TTL		5	/* seconds */
#define DNS_LOG_WINDOW		5	/* one audit line per (name, type) */
#define DNS_TCP_IDLE		10	/* seconds */
#define DNS_TCP_MAXCONN		256
#define DNS_MAX_PENDING		1024	/* queries waiting for upstream */

struct event_base;
struct escalate;
struct policy;
struct resolver;
struct audit;
struct sandbox;
struct dns_server;

/* What the server needs; the pointers outlive it. */
struct dns_server_params {
	struct event_base	 *base;
	/*
	 * The policy in force (rules/policy.h: its rules, reloaded between
	 * queries, and its grants: a granted name resolves).
	 */
	struct policy		 *policy;
	struct resolver		 *resolver;
	struct audit		 *audit;	/* NULL: no audit */
	struct metrics		 *metrics;	/* queries counted; or NULL */
	struct escalate		 *esc;		/* told of blocked names, or
						   NULL */
	struct fakeip		 *fakeip;
	const char		 *session;	/* NULL or the session id */
	uint32_t		  ttl;		/* fake answers; 0: default */
	int			  real;		/* --dns-real */
	int			  refuse;	/* REFUSED, not NXDOMAIN */
	int			  ask;		/* denied names a grant
						   could open get a fake
						   address too, so that their
						   connections can be held
						   for approval */
};

struct dns_server *dns_server_create(const struct dns_server_params *,
		    char *, size_t);
void		 dns_server_free(struct dns_server *);

/* Listen on UDP and TCP "ADDR:PORT" ("[V6]:PORT"). Returns 0 or -1. */
int		 dns_server_listen(struct dns_server *, const char *, char *,
		    size_t);

/*
 * Serve on a descriptor already bound (UDP) or listening (TCP), e.g.
 * created in another network namespace, for a sandbox (NULL: none; a
 * reference is taken); the server owns it from now.
 */
int		 dns_server_listen_fd(struct dns_server *, int,
		    struct sandbox *, char *, size_t);
/* A sandbox is gone: close its sockets, connections and queries. */
void		 dns_server_drop_sandbox(struct dns_server *,
		    const struct sandbox *);

#endif
