/*
 * Runtime grants: approvals that sit on top of the policy file, a table
 * of them (the policy's, and each sandbox's own one-time grants), which
 * policy_decide() (rules/policy.h) asks after the rules.  Pure: no
 * libevent, no clock, no I/O; the caller passes the time, a monotonic
 * value in milliseconds.
 *
 * Scopes:
 *   once     the next connection to that host and port from the one
 *            sandbox it is for (its id; "" for callers that name none,
 *            as a standalone run's and a proxy's).  DNS answers for the
 *            host are given to that sandbox while the grant lives, but
 *            do not use it up; the connection does (grants_consume).  A
 *            once grant without a TTL lives GRANTS_ONCE_TTL_MS.
 *   session  every connection to that host and port, from any sandbox,
 *            until the gateway stops (or the TTL runs out).
 *   always   as session, and written to the policy file as an allow
 *            rule (rules_file_append); once a reload has read the file
 *            the rule decides, and grants_drop_always() forgets these.
 *
 * A grant's port may be 0: every port of the host (asked for by a name
 * the DNS refused, before any port was tried).
 *
 * A grant for a host whose every allow rule has constraints lifts them:
 * the gateway decides a request those refuse by the grants.
 *
 * A grant never overrides an explicit deny rule (of the system layer or
 * the user's), nor the guard against special-purpose addresses (only
 * allow-private lifts it).
 */
#ifndef GRANTS_H
#define GRANTS_H

#include <stddef.h>
#include <stdint.h>

#include "rules/rules.h"

#define GRANT_ID_LEN		32
#define GRANT_WHO_LEN		64
#define GRANT_SANDBOX_LEN	16	/* a sandbox's id, NUL included */
#define GRANTS_ONCE_TTL_MS	(10 * 60 * 1000)

enum grant_scope {
	GRANT_ONCE,
	GRANT_SESSION,
	GRANT_ALWAYS
};

/* One grant, copied out to callers (never a pointer into the table). */
struct grant {
	char		 id[GRANT_ID_LEN];	/* "g1", or the caller's */
	struct host	 host;			/* canonical */
	uint16_t	 port;
	enum grant_scope scope;
	uint64_t	 added;			/* ms */
	uint64_t	 expires;		/* ms; 0: never */
	char		 who[GRANT_WHO_LEN];	/* who approved it */
	/* once: the sandbox it is for ("": callers naming none) */
	char		 sandbox[GRANT_SANDBOX_LEN];
};

struct grants;

struct grants	*grants_create(void);
void		 grants_free(struct grants *);
const char	*grant_scope_name(enum grant_scope);

/*
 * Add a grant for host:port (port 0: every port).  ttl_ms 0 is no
 * expiry (once: the default TTL).  id NULL assigns "g1", "g2", ...; who
 * may be NULL.  sandbox is the one a once grant is for (NULL: ""), and
 * is ignored for the other scopes.  A grant for the same host, port and
 * scope (and, once, the same sandbox) is replaced.  Fills *out when not
 * NULL.  Returns 0, or -1 (out of memory, id or sandbox too long).
 */
int	grants_add(struct grants *, const struct host *, uint16_t,
	    enum grant_scope, uint64_t, const char *, const char *,
	    const char *, uint64_t, struct grant *);

/*
 * Find a live grant for host:port at now, for a caller in sandbox (NULL:
 * ""); port 0 is any port (for a DNS answer), and a grant of port 0
 * serves every port.  A once grant matches only the sandbox it is for.
 * session and always grants are preferred over once grants, which are
 * not used up here.  Returns 1 with *out, or 0.
 */
int	grants_match(const struct grants *, const struct host *, uint16_t,
	    const char *, uint64_t, struct grant *);
/* The same, for a grant of every port (port 0) only. */
int	grants_match_any_port(const struct grants *, const struct host *,
	    const char *, uint64_t, struct grant *);

/*
 * Use up a once grant (a connection went through on it): it is removed.
 * Other scopes are left.  Returns 0, or -1 when no grant has this id.
 */
int	grants_consume(struct grants *, const char *);

/* Revoke a grant.  Returns 0, or -1 when no grant has this id. */
int	grants_remove(struct grants *, const char *);

/*
 * Remove the grants expired at now (expires <= now); returns how many.
 * They decide nothing once expired; this only frees their slots.  (The
 * escalation queue writes the audit `expire` event of a grant's TTL.)
 */
size_t	grants_expire(struct grants *, uint64_t);

/* Copy up to max grants to out, oldest first; returns how many there are. */
size_t	grants_list(const struct grants *, struct grant *, size_t);

/*
 * Forget the always grants that a rule of r now allows (a reload has
 * read the rule their approval appended to the policy file): a rule
 * without an end, or, for a grant with a TTL, any rule.
 */
void	grants_drop_always(struct grants *, const struct rules *);

#endif
