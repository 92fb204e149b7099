/*
 * The policy in force: the rules (the policy files and the command
 * line's), the runtime grants on top of them (rules/grants.h), and where
 * an `always` approval writes its rule.  One decision, policy_decide(),
 * puts them together for whoever asks: a connection, a DNS answer, the
 * escalation queue, `pinhole check`.  Pure: no libevent, no I/O; the
 * grants' clock is the owner's (a monotonic value in milliseconds).
 *
 * Policy, then grants: an explicit deny rule denies (no grant overrides
 * it), an allow rule allows, a live grant allows, and everything else is
 * denied.  A grant for a host whose every allow rule has request checks
 * lifts them.  A one-time grant is for one sandbox; it lives in that
 * sandbox's own table (struct policy_ask's once) or, for a caller naming
 * none, in the policy's.
 */
#ifndef POLICY_H
#define POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "rules/grants.h"
#include "rules/rules.h"

struct policy;

/*
 * A new policy with no rules (everything denied) and no grants; now_ms
 * is the grants' clock (NULL: always 0).  NULL when out of memory.
 */
struct policy	*policy_create(uint64_t (*)(void));
void		 policy_free(struct policy *);

/*
 * Put rules in force (taken over, the old ones freed; NULL denies all),
 * and forget the always grants a rule of them now allows
 * (grants_drop_always()).
 */
void		 policy_set_rules(struct policy *, struct rules *);
const struct rules *policy_rules(const struct policy *);
/* Where an always approval writes its rule (copied; NULL: nowhere). */
int		 policy_set_always(struct policy *, const char *);
const char	*policy_always(const struct policy *);
/* The grants of every sandbox, and the one-time grants of none. */
struct grants	*policy_grants(struct policy *);
uint64_t	 policy_now(const struct policy *);

/*
 * Add an approval's grant (grants_add(), the expired ones dropped
 * first): a once grant for a sandbox to once, that sandbox's own table
 * (NULL: the policy's, for a caller naming none), any other to the
 * policy's.  Returns 0, or -1 (out of memory, an id or sandbox too
 * long).
 */
int		 policy_grant(struct policy *, struct grants *,
		    const struct host *, uint16_t, enum grant_scope, uint64_t,
		    const char *, const char *, const char *);

/* What is asked. */
struct policy_ask {
	const struct host		*host;
	/* 1 to 65535; 0: the name, on some port (a DNS answer). */
	uint16_t			 port;
	/*
	 * The request, read only when the rules for (host, port) check
	 * requests: fills it and returns 1, or 0 for none (a CONNECT).
	 * NULL: none.
	 */
	int				(*request)(void *,
					    struct rules_request *);
	void				*arg;
	const char			*sandbox;	/* its id; NULL: none */
	struct grants			*once;		/* its own, or NULL */
	unsigned int			 flags;
};

/* Use up the one-time grant that decides (a connection goes on it). */
#define POLICY_CONSUME	0x01
/*
 * Every request must pass: request checks hold unless a grant lifts
 * them; port 0, every port: only a grant of every port (port 0) opens
 * it.
 */
#define POLICY_EVERY	0x02
/*
 * Deny an address of a special-purpose range that no allow-private rule
 * covers, whatever allowed it (a connection vets each address it dials
 * instead).
 */
#define POLICY_GUARD	0x04

/* A decision on one host and port (or name). */
struct policy_decision {
	int			 allow;		/* 1, 0; -1: a path read two ways */
	int			 ruled;		/* an allow rule matched (host, port) */
	int			 inspect;	/* ... and requests must be read */
	int			 exact;		/* ... and names the host exactly */
	int			 checked;	/* the request was decided by checks */
	int			 granted;	/* a grant decided: grant set */
	int			 consume;	/* it is a once grant */
	int			 overridden;	/* a grant lost to a deny or guard */
	enum addr_class		 guard;		/* not ADDR_PUBLIC: the guard denied */
	struct grant		 grant;
	struct rules_verdict	 verdict;	/* what the rules say */
};

/*
 * Decide: the rules, then the grants in force at the policy's clock (the
 * policy's, then the sandbox's once).  Port 1 to 65535: an explicit
 * deny rule denies; an allow rule allows, and with a request whose host
 * the rules inspect, the request's checks decide (rules_match_request()),
 * but for a refusal of checks only, which a grant lifts; a live grant
 * for (host, port) allows.  Port 0: a name an allow rule opens on some
 * port (rules_name_allowed()), or one a live grant opens on some port
 * that no deny rule closes (443 for a grant of every port).  Lasting
 * grants are preferred over once grants.  With POLICY_CONSUME a once
 * grant that decides is used up.  Returns d->allow.
 */
int		 policy_decide(struct policy *, const struct policy_ask *,
		    struct policy_decision *);

/* What decided, as logs say it: "FILE:LINE", or "grant g1 (once)". */
void		 policy_decision_rule(const struct policy_decision *, char *,
		    size_t);
/*
 * Why, in one line for logs and refusals: "allowed by rule FILE:LINE",
 * "allowed by grant g1 (once)", "denied by rule FILE:LINE" (and "; a
 * grant cannot override it" when one was there), the guard's reason, or
 * the rules' (verdict.why).
 */
void		 policy_decision_why(const struct policy_decision *,
		    const struct host *, char *, size_t);

/*
 * Name the rule of a verdict, as logs and refusals do: "FILE:LINE", the
 * origin alone for a rule given on the command line (line 0), "" when no
 * rule decided (file NULL); "system FILE:LINE" for a rule of the system
 * layer.
 */
void	policy_rule_text(const struct rules_verdict *, char *, size_t);

/*
 * Say which deny rule refused, for the agent and the person: "denied by
 * the rule 'TEXT' (FILE:LINE)" (TEXT cut to 200 bytes, FILE:LINE to 256;
 * "deny" when the verdict has no text).  Returns what snprintf does.
 */
int	policy_deny_text(const struct rules_verdict *, char *, size_t);

/*
 * Can a grant lift a refusal of host:port?  None can when an explicit
 * deny rule decides it, nor for an address of a special-purpose range
 * that no allow-private rule covers (whatever a rule or grant allows).
 * Returns 1 when a grant can; 0 when none can, with fix (one line for
 * the agent and the person) saying why and what the person would have
 * to change in the policy, or, for a deny of the system layer, that
 * only an administrator can.  Port 0 (a DNS answer) is asked as 443, the
 * port `pinhole request HOST` asks for.
 */
#define POLICY_FIX_LEN	640
int	policy_grantable(const struct rules *, const struct host *, uint16_t,
	    char *, size_t);

/*
 * Does the policy allow host:port (1 to 65535) only with request checks
 * (read-only, methods, path: every allow rule for it has some), which a
 * grant for it would lift?  Returns 1 with text saying which ("the
 * request checks of the rule 'allow x.test read-only' (FILE:LINE)"), or
 * 0 (not allowed at all, or allowed without checks).
 */
#define POLICY_LIFTS_LEN	512
int	policy_lifts(const struct rules *, const struct host *, uint16_t,
	    char *, size_t);

/*
 * The fix for an address the gateway refused to dial (its text, and
 * what kind of address it is, as addr_class_name() says): no grant can
 * open it, an allow-private rule can.
 */
void	policy_private_fix(const char *, const char *, char *, size_t);

#endif
