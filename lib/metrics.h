/*
 * Counters, gauges and a histogram of one gateway process, kept up to
 * date as things happen (each update is O(1)), and written in the
 * Prometheus text format (0.0.4) by a pure function.  The caller owns
 * the struct; every subsystem it is handed to may find it NULL.
 * Label values come only from the fixed sets below and the operator's
 * shipping destinations, never from a host name or anything a sandbox
 * sends.
 */
#ifndef METRICS_H
#define METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* A decision's verdict: allowed, denied, or answered by pinhole itself. */
enum metrics_verdict {
	METRICS_ALLOW, METRICS_DENY, METRICS_LOCAL, METRICS_VERDICTS
};

/* The reasons the gateway gives (Pinhole-Error and the audit line's). */
enum metrics_reason {
	MR_NONE, MR_DENIED_BY_POLICY, MR_IP_LITERAL, MR_PORT, MR_CONSTRAINT,
	MR_BAD_PATH, MR_PRIVATE_ADDRESS, MR_RESOLVE_FAILED, MR_CONNECT_FAILED,
	MR_TIMEOUT, MR_UPSTREAM_TLS, MR_INSPECT, MR_INSPECT_UNAVAILABLE,
	MR_FRONTING, MR_SECRET_EXFILTRATION, MR_SECRET_UNSCANNABLE,
	MR_FIRST_BYTES, MR_UNKNOWN_FAKE_ADDRESS, MR_MALFORMED,
	MR_AUDIT_LOG_UNWRITABLE,
	MR_TLS_CLIENT_REJECTED, MR_TLS_HANDSHAKE_FAILED, MR_UPGRADE,
	MR_UPSTREAM_AUTH, MR_UPSTREAM_DENIED, MR_UPSTREAM_FAILED,
	MR_UPSTREAM_UNREACHABLE,
	MR_AGENT_ENDPOINT, MR_INFO_PAGE, MR_OTHER, METRICS_REASONS
};

/* Grants, by scope (escalate_scope_name()). */
enum metrics_scope {
	METRICS_ONCE, METRICS_SESSION, METRICS_ALWAYS, METRICS_SCOPES
};

/* Gauges: how many there are now. */
enum metrics_gauge {
	MG_TUNNELS, MG_HELD, MG_PENDING, MG_SANDBOXES, METRICS_GAUGES
};

/* Upper bounds of the resolver's histogram, in microseconds. */
#define METRICS_BUCKETS		12
#define METRICS_SHIPS_MAX	64		/* destinations written */
#define METRICS_TEXT_MAX	(256 * 1024)	/* the whole exposition */

struct metrics {
	time_t		 start;			/* process start, wall clock */
	uint64_t	 conns[METRICS_VERDICTS][METRICS_REASONS];
	uint64_t	 requests[METRICS_VERDICTS][METRICS_REASONS];
	uint64_t	 dns[2];		/* allow, deny */
	uint64_t	 bytes_up;		/* client to upstream */
	uint64_t	 bytes_down;
	uint64_t	 grants[METRICS_SCOPES];
	uint64_t	 audit_errors;		/* failed writes */
	uint64_t	 audit_lost;		/* lines not written */
	uint64_t	 resolver_errors;
	uint64_t	 resolver_le[METRICS_BUCKETS + 1];	/* +Inf last */
	uint64_t	 resolver_us;		/* sum */
	uint64_t	 resolver_cache[2];	/* lookups: hit, miss */
	uint64_t	 reloads[2];		/* ok, failed */
	int64_t		 gauges[METRICS_GAUGES];
};

/*
 * A shipping destination's counts, read when the text is written (the
 * owner's ship_stats(), proxy/audit/ship.h): no update on the way of a
 * line.  dest, the --log value, is the operator's, so a fair label.
 */
struct metrics_ship {
	const char	*dest;
	uint64_t	 delivered;
	uint64_t	 pending;		/* bytes in the spool */
	uint64_t	 dropped;
	uint64_t	 connects;
	int		 otlp;			/* rejected, refused written */
	uint64_t	 rejected;
	uint64_t	 refused;
};

void	metrics_init(struct metrics *, time_t);

/* The index of a reason (MR_NONE for NULL, MR_OTHER when not known). */
enum metrics_reason metrics_reason(const char *);

/*
 * Count a connection's (request 0) or an HTTP request's (request 1)
 * decision: verdict "allow", "deny" or NULL (pinhole answered).
 */
void	metrics_decision(struct metrics *, int, const char *, const char *);
void	metrics_bytes(struct metrics *, int64_t, int64_t);
void	metrics_dns(struct metrics *, int);
void	metrics_grant(struct metrics *, const char *);
/* One upstream question took us microseconds; failed: it came to error. */
void	metrics_resolved(struct metrics *, uint64_t, int);
/* A look-up answered without a question of its own (hit 1), or not. */
void	metrics_resolver_cache(struct metrics *, int);
void	metrics_reload(struct metrics *, int);
/*
 * Decisions made so far (connections, HTTP requests, DNS queries): when
 * it has not moved, nothing has been asked of the gateway.
 */
uint64_t metrics_decided(const struct metrics *);
/* Move a gauge by a difference, or set it. */
void	metrics_add(struct metrics *, enum metrics_gauge, int64_t);
void	metrics_set(struct metrics *, enum metrics_gauge, int64_t);

/*
 * Write the exposition of m and of n shipping destinations into buf
 * (len bytes).  Returns the length of the whole text, as snprintf()
 * does: len or more means it did not fit.
 */
size_t	metrics_write(const struct metrics *, const struct metrics_ship *,
	    size_t, char *, size_t);

#endif
