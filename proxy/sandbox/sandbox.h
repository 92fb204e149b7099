/*
 * A sandbox: one command attached to a session's gateway.  Everything
 * that came from it (listeners, connections, DNS queries, captured
 * datagrams, the requests it filed) holds a reference, and the last one
 * frees it.  It keeps who it is (struct audit_ident, first: every audit
 * line its traffic causes names it), the policy it is decided by, its
 * one-time grants, its recent refusals and its budget.
 *
 * Below the connection, the DNS server, the UDP catcher and the
 * escalation queue, above the audit log: no libevent, no I/O.
 */
#ifndef SANDBOX_H
#define SANDBOX_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "proxy/audit/audit.h"
#include "rules/policy.h"

#define SANDBOX_REFUSED_MAX	8	/* refusals kept a sandbox */
#define SANDBOX_VIA_LEN		16	/* "connect", "dns", ... */
#define SANDBOX_WHAT_LEN	320	/* "METHOD /path" refused */
#define SANDBOX_WHY_LEN		256	/* a refusal's reason */
#define SANDBOX_FIX_LEN		POLICY_FIX_LEN

/*
 * A refusal a sandbox met, as the person and the agent are told it:
 * what was refused, why, and either that a grant could lift it (ask)
 * or what the policy would have to change (fix), or neither.
 */
struct sandbox_refusal {
	char		sandbox[AUDIT_SANDBOX_ID_LEN];	/* "": none */
	struct host	host;
	uint16_t	port;		/* 0: its name, by the DNS */
	char		via[SANDBOX_VIA_LEN];
	char		what[SANDBOX_WHAT_LEN];	/* "GET /x" or "" */
	char		why[SANDBOX_WHY_LEN];
	char		fix[SANDBOX_FIX_LEN];
	int		ask;		/* a grant could lift it */
	unsigned int	count;		/* kept: times met */
	time_t		first;
	time_t		last;
};

/*
 * The refusals a sandbox met lately, a small ring: seq orders them (the
 * caller's counter, which may order several sandboxes' rings), 0 for a
 * free entry.
 */
struct sandbox_refusals {
	struct sandbox_refusal	 r[SANDBOX_REFUSED_MAX];
	unsigned long long	 seq[SANDBOX_REFUSED_MAX];
};

/* What a sandbox may spend. */
struct sandbox_budget {
	struct audit_bucket	 log;	/* its audit lines (budget.h) */
};

struct sandbox {
	struct audit_ident	 ident;		/* first: who, for the log */
	unsigned int		 refs;
	struct policy		*policy;	/* decides for it, or NULL */
	struct grants		*once;		/* its one-time grants */
	struct sandbox_refusals	*refused;	/* its recent ones, or NULL */
	struct sandbox_budget	 budget;
};

/*
 * A new sandbox (its id, its command line as audit_cmdline() wrote it,
 * its pid, and the policy that decides for it, the caller's, which must
 * outlive it) with one reference; NULL when out of memory.
 */
struct sandbox	*sandbox_new(const char *, const char *, long,
		    struct policy *);
struct sandbox	*sandbox_ref(struct sandbox *);
void		 sandbox_unref(struct sandbox *);

/* Its id ("" for none: a standalone run's or a proxy's clients). */
const char	*sandbox_id(const struct sandbox *);
/* Who it is, for an audit line (NULL for none). */
const struct audit_ident *sandbox_ident(const struct sandbox *);
/* Its log budget's bucket (NULL for none: the budget's own). */
struct audit_bucket *sandbox_log_bucket(struct sandbox *);
/* The policy that decides for it; for none, or one without, p. */
struct policy	*sandbox_policy(const struct sandbox *, struct policy *);
/*
 * Ask as the sandbox (NULL: none): fills q's sandbox and once (its
 * one-time grants), for policy_decide().
 */
void		 sandbox_ask(const struct sandbox *, struct policy_ask *);

/*
 * Keep a refusal the sandbox met at now, numbered seq: the same one
 * again (host, port, way and reason) is counted in its entry, which
 * keeps the latest request and advice; a new one takes a free entry or
 * the oldest.  Returns the entry kept, with its count and times, or
 * NULL when out of memory.
 */
const struct sandbox_refusal *sandbox_refused_add(struct sandbox *,
		    const struct sandbox_refusal *, time_t,
		    unsigned long long);
/* Forget its refusals. */
void		 sandbox_refused_clear(struct sandbox *);

#endif
