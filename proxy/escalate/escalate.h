/*
 * Escalation: the queue of requests a sandbox files for hosts it may not
 * reach, one queue per gateway session.  Requests for the same (host,
 * port) coalesce, across the sandboxes of a session: each request keeps
 * the sandboxes that asked, each with the id, reason and time it was
 * given, and is theirs alone to see (ids are random, and a sandbox
 * asking for one not its own is told it does not exist; one joining
 * another's learns nothing of the other's).  A once approval is for
 * one of them; the others' ask stays open as a new request.  The
 * pending ones are bounded and their filing is rate limited; everything
 * the agent sends is cleaned before it is kept.
 * Decisions come only from the control socket (proxy/escalate/control.h); waiters
 * (an agent's long poll, a held connection) and subscribers (watchers on
 * the control socket) are called back.  The queue also keeps the recent
 * blocked attempts the gateway reports, and an index of the sandboxes
 * whose recent refusals, with their reasons, are kept (each in its
 * struct sandbox; refused.h).  A once approval's grant goes to the
 * sandbox it is for (struct sandbox's once).
 *
 * With an event base, waiters time out and pending requests expire on
 * timers; without one (tests, fuzzing) only the clock is read, on each
 * call.
 */
#ifndef ESCALATE_H
#define ESCALATE_H

#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "proxy/audit/audit.h"
#include "proxy/sandbox/sandbox.h"
#include "proxy/wire/decidermsg.h"
#include "rules/policy.h"
#include "rules/rules.h"

#define ESCALATE_ID_BYTES	8	/* random bytes of an id, */
#define ESCALATE_ID_LEN		24	/* as "r" + 16 hex, NUL, slack */
#define ESCALATE_SESSION_LEN	65	/* a session's name, whole, and NUL */
#define ESCALATE_REASON_MAX	200	/* bytes of a reason kept */
#define ESCALATE_TEXT_LEN	(ESCALATE_REASON_MAX * 4 + 1) /* cleaned */
#define ESCALATE_BY_LEN		48	/* "uid 1000 via protocol" */
#define ESCALATE_VIA_LEN	SANDBOX_VIA_LEN
#define ESCALATE_PENDING_MAX	16	/* open requests */
#define ESCALATE_DECIDED_MAX	64	/* decided requests kept for status */
#define ESCALATE_BLOCKED_MAX	32	/* recent blocked (host, port, via) */
#define ESCALATE_RATE		5	/* new requests a minute, */
#define ESCALATE_BURST		5	/* and at once */
#define ESCALATE_WAIT_MAX	300	/* longest wait, s */
#define ESCALATE_ASK_DEFAULT	60	/* a held connection waits, s */
#define ESCALATE_EXPIRE		900	/* an unanswered request expires, s */
#define ESCALATE_TTL_MAX	(366 * 86400)
#define ESCALATE_FIX_LEN	SANDBOX_FIX_LEN
#define ESCALATE_WHY_LEN	SANDBOX_WHY_LEN	/* a refusal's reason */
#define ESCALATE_WHAT_LEN	SANDBOX_WHAT_LEN /* "METHOD /path" refused */
#define ESCALATE_DECIDER_LEN	DECIDER_URL_MAX
#define ESCALATE_WRITTEN_LEN	1280	/* "FILE:LINE: allow RULE" */
#define ESCALATE_LIFTS_LEN	(POLICY_LIFTS_LEN + 256)	/* what a grant would lift */

enum escalate_state {
	ESCALATE_PENDING,
	ESCALATE_APPROVED,
	ESCALATE_DENIED,
	ESCALATE_EXPIRED
};

enum escalate_scope {
	ESCALATE_SCOPE_NONE,
	ESCALATE_SCOPE_ONCE,		/* one more connection */
	ESCALATE_SCOPE_SESSION,		/* while this gateway session lasts */
	ESCALATE_SCOPE_ALWAYS		/* written into the policy */
};

/* What filing a request came to. */
enum escalate_filed {
	ESCALATE_FILED_NEW,
	ESCALATE_FILED_SAME,		/* this sandbox's open request, again */
	/*
	 * Another sandbox's open request for the same (host, port), joined:
	 * for this sandbox a new request of its own (its id, reason and
	 * time), limited as a new one is; one approval answers both.
	 */
	ESCALATE_FILED_JOINED,
	ESCALATE_FILED_FULL,		/* too many open requests */
	ESCALATE_FILED_RATE,		/* too many requests lately */
	ESCALATE_FILED_FIXED,		/* no grant can lift the refusal */
	ESCALATE_FILED_NOMEM
};

struct escalate;
struct escalate_waiter;
struct escalate_sub;
struct audit;
struct metrics;
struct event_base;
struct policy;

/*
 * A sandbox that asked for a request ("": a caller naming none), and the
 * request as that sandbox knows it: the id it was given (the request's
 * own for the first), its reason, how it asked and when.
 */
struct escalate_asker {
	struct sandbox			*sb;	/* a reference, or NULL */
	char				 sandbox[AUDIT_SANDBOX_ID_LEN];
	char				 cmd[AUDIT_CMD_LEN];
	long				 pid;
	char				 id[ESCALATE_ID_LEN];
	char				 reason[ESCALATE_TEXT_LEN];
	char				 via[ESCALATE_VIA_LEN];
	time_t				 since;
};

struct escalate_request {
	TAILQ_ENTRY(escalate_request)	 entry;
	char				 id[ESCALATE_ID_LEN];
	struct host			 host;
	uint16_t			 port;
	char				 reason[ESCALATE_TEXT_LEN];
	char				 via[ESCALATE_VIA_LEN];
	time_t				 since;
	unsigned int			 count;		/* times asked */
	/*
	 * The sandbox that filed it first (or, once that one has gone,
	 * the next that asked; approved once, the one it is for): id ""
	 * and pid -1 when none.
	 */
	char				 sandbox[AUDIT_SANDBOX_ID_LEN];
	char				 cmd[AUDIT_CMD_LEN];
	long				 pid;
	unsigned int			 others;	/* from elsewhere */
	/* Every sandbox that asked and has not gone: those that see it. */
	struct escalate_asker		*askers;
	size_t				 naskers;
	/* Approved once: the others' ask went on as this request. */
	char				 moved[ESCALATE_ID_LEN];
	enum escalate_state		 state;
	enum escalate_scope		 scope;
	long				 ttl;		/* s, 0: none */
	time_t				 decided;
	char				 answer[ESCALATE_TEXT_LEN];
	char				 by[ESCALATE_BY_LEN];
	/* The decider that decided it ("": a person), its URL. */
	char				 decider[ESCALATE_DECIDER_LEN];
	/* A held connection's: "METHOD /path" or "", and why refused. */
	char				 what[ESCALATE_WHAT_LEN];
	char				 why[ESCALATE_WHY_LEN];
	/*
	 * What a grant would lift, for a host the policy allows only with
	 * request checks (policy_lifts()): "" for a host it does not allow.
	 */
	char				 lifts[ESCALATE_LIFTS_LEN];
	/* Approved always: where the rule went, "FILE:LINE: allow RULE". */
	char				 written[ESCALATE_WRITTEN_LEN];
	TAILQ_HEAD(, escalate_waiter)	 waiters;
};

struct escalate_blocked {
	char		sandbox[AUDIT_SANDBOX_ID_LEN];	/* "": none */
	struct host	host;
	uint16_t	port;
	char		via[ESCALATE_VIA_LEN];
	unsigned int	count;
	time_t		first;
	time_t		last;
	char		fix[ESCALATE_FIX_LEN];	/* "": a grant can lift it */
};

enum escalate_note {
	ESCALATE_NOTE_REQUEST,		/* filed, or asked again */
	ESCALATE_NOTE_BLOCKED,
	ESCALATE_NOTE_DECIDED,		/* approved, denied or expired */
	ESCALATE_NOTE_HELD,		/* a connection waits for one */
	ESCALATE_NOTE_REFUSED		/* a sandbox met a refusal */
};

/*
 * What a subscriber is told: request for REQUEST, DECIDED and HELD
 * (with sandbox, whose connection, "" none, and secs, how long it is
 * held), blocked for BLOCKED, refusal for REFUSED; for a REQUEST another
 * sandbox joined, asker, that sandbox's.
 */
struct escalate_event {
	enum escalate_note		 note;
	const struct escalate_request	*request;
	const struct escalate_asker	*asker;
	const struct escalate_blocked	*blocked;
	const struct sandbox_refusal	*refusal;
	const char			*sandbox;
	int				 secs;
};

typedef void	escalate_wait_cb(const struct escalate_request *, int, void *);
typedef void	escalate_note_cb(const struct escalate_event *, void *);

/* session NULL draws a random one.  base and audit may be NULL. */
struct escalate	*escalate_create(struct event_base *, const char *,
		    struct audit *);
void		 escalate_free(struct escalate *);
/*
 * Decide by p (rules/policy.h; the caller's, which outlives the queue):
 * an approval adds its grant to it (an always one's rule written where
 * it says), a target no grant can open is refused, and the agent is
 * told what is allowed.  NULL (as at first): approvals grant nothing.
 */
void		 escalate_set_policy(struct escalate *, struct policy *);
struct policy	*escalate_policy(const struct escalate *);
void		 escalate_set_audit(struct escalate *, struct audit *);
void		 escalate_set_metrics(struct escalate *, struct metrics *);
void		 escalate_set_clock(struct escalate *, time_t (*)(void));
const char	*escalate_session(const struct escalate *);
/*
 * Is (host, port) allowed right now for a caller in a sandbox (NULL:
 * none), by the policy that decides for it, every request to it (a host
 * the policy allows only with request checks is not, unless a grant
 * lifts them)?  Port 0: every port of it, by a grant of every port.
 * 1 yes, 0 no (and without a policy).
 */
int		 escalate_allowed(struct escalate *, const struct host *,
		    uint16_t, const struct sandbox *);

/*
 * File a request for (host, port) with a reason of len bytes (cleaned and
 * cut here) coming in some way ("agent", "connect", ...) from a sandbox
 * (NULL: none known).  A new request keeps a copy of the sandbox's id,
 * command and pid; one joined from another sandbox keeps the first,
 * counts the other and gives it an id of its own (JOINED).  *out is the
 * request for NEW, SAME and JOINED.  A target no grant can open for the
 * sandbox (escalate_fixed) is refused: FIXED.
 */
enum escalate_filed escalate_file(struct escalate *, const struct host *,
		    uint16_t, const char *, size_t, const char *,
		    struct sandbox *, struct escalate_request **);
const char	*escalate_filed_text(enum escalate_filed);

/*
 * Is (host, port) beyond any grant: policy_grantable() says so (a deny
 * rule, a special-purpose address), or the gateway refused it lately for
 * a reason no grant lifts (a name that resolved to a private address),
 * to this sandbox ("": none; NULL: to any, as the person sees it)?
 * Returns 1 with fix filled, or 0.
 */
int		 escalate_fixed(struct escalate *, const char *,
		    const struct host *, uint16_t, char *, size_t);

/* Find a request by its id or the id a sandbox that asked was given. */
struct escalate_request *escalate_find(struct escalate *, const char *);
/*
 * Find a request by id as a sandbox ("": none) sees it: one it asked
 * for and was given this id (the request it went on as, when one
 * approved once for another moved it).  NULL otherwise, as for an id no
 * request has.
 */
struct escalate_request *escalate_find_for(struct escalate *, const char *,
		    const char *);
/* Did this sandbox ("": none) ask for the request? */
int		 escalate_asked(const struct escalate_request *, const char *);
/* The request as a sandbox that asked knows it, or NULL. */
const struct escalate_asker *escalate_asker_of(
		    const struct escalate_request *, const char *);
/* The id a sandbox knows the request by: its own, or the request's. */
const char	*escalate_id_for(const struct escalate_request *,
		    const char *);
/*
 * What a grant for (host, port) would lift, told to a sandbox: which
 * rule's request checks, and what they refused that sandbox last; ""
 * when the policy does not allow the host only with request checks.
 */
void		 escalate_lifts_for(struct escalate *, const struct host *,
		    uint16_t, const char *, char *, size_t);
/* Requests, oldest first: pass NULL for the first. */
const struct escalate_request *escalate_next(const struct escalate *,
		    const struct escalate_request *);
size_t		 escalate_npending(const struct escalate *);

/*
 * Decide a pending request.  by says who ("uid 1000 via cli").  A once
 * approval is for one sandbox: sandbox, which must have asked, or NULL
 * for the request's own (its first); the other sandboxes that asked go
 * on waiting, their waiters moved to a new pending request (told to the
 * subscribers as a new request).  sandbox is refused for other scopes.
 * Returns 0, or -1 with err filled (unknown id, already decided, grant
 * failed, a sandbox that did not ask, or no grant could open it:
 * escalate_fixed; it stays pending then).
 */
int		 escalate_approve(struct escalate *, const char *,
		    enum escalate_scope, long, const char *, const char *,
		    char *, size_t);
int		 escalate_deny(struct escalate *, const char *, const char *,
		    const char *, char *, size_t);

/*
 * Wait, for a caller in sandbox ("": none), for a pending request's
 * decision for at most secs: cb(request, timed_out, arg) runs once,
 * from the event loop or from the deciding call, with the request the
 * wait ended on (another, when a once approval for another sandbox
 * moved the wait); the waiter is gone after it.  Cancel before the
 * caller goes away.
 */
struct escalate_waiter *escalate_wait(struct escalate *,
		    struct escalate_request *, const char *, int,
		    escalate_wait_cb *, void *);
void		 escalate_wait_cancel(struct escalate_waiter *);

/*
 * Ask mode: file (or join) the request for a held connection to (host,
 * port), coming in via from a sandbox (NULL: none), what it asked
 * ("METHOD /path", or NULL) and why it was refused (or NULL; both kept
 * by a new request, for a decider), and wait for its
 * decision for at most secs; subscribers are told it is held.
 * Returns the waiter, or NULL when no request could be filed (*filed
 * says why) or out of memory: refuse the connection then.
 */
struct escalate_waiter *escalate_ask(struct escalate *, const struct host *,
		    uint16_t, const char *, struct sandbox *,
		    const char *, const char *, int, escalate_wait_cb *,
		    void *, enum escalate_filed *);

/* Be told of each request, blocked attempt and decision. */
struct escalate_sub *escalate_subscribe(struct escalate *,
		    escalate_note_cb *, void *);
void		 escalate_unsubscribe(struct escalate_sub *);

/*
 * The gateway reports an attempt blocked for a sandbox (NULL: none); fix
 * is NULL when a grant could lift it, else why none can
 * (policy_grantable, policy_private_fix).
 */
void		 escalate_blocked(struct escalate *,
		    struct sandbox *, const struct host *,
		    uint16_t, const char *, const char *);
/* Recent blocked attempts, every sandbox's, newest first; NULL past them. */
const struct escalate_blocked *escalate_blocked_at(const struct escalate *,
		    size_t);

/*
 * A sandbox (NULL: none) met a refusal: keep it in the sandbox's ring
 * and tell the subscribers.  The refusal's own sandbox, count and times
 * are filled here.
 */
void		 escalate_refused(struct escalate *,
		    struct sandbox *, struct sandbox_refusal *);
/* A sandbox's recent refusals (id "" for none), newest first. */
const struct sandbox_refusal *escalate_refused_at(const struct escalate *,
		    const char *, size_t);
/* The same one by one: the next older than *below (~0 at first). */
const struct sandbox_refusal *escalate_refused_next(const struct escalate *,
		    const char *, unsigned long long *);
/* A sandbox's newest refusal of host on port, or of its name; or NULL. */
const struct sandbox_refusal *escalate_refused_find(const struct escalate *,
		    const char *, const struct host *, uint16_t);
/*
 * A sandbox has gone: forget that it asked; its refusals are kept for the
 * sandboxes attached after the one numbered newest (0: forgotten).
 */
void		 escalate_drop_sandbox(struct escalate *, const char *,
		    unsigned long long);

/* Expire what is due; done on each call and by a timer. */
void		 escalate_sweep(struct escalate *);

const char	*escalate_state_name(enum escalate_state);
const char	*escalate_scope_name(enum escalate_scope);
int		 escalate_scope_parse(const char *, enum escalate_scope *);
/* "90", "90s", "15m", "2h", "7d" -> seconds; -1 when malformed. */
long		 escalate_duration_parse(const char *);

/*
 * Clean untrusted text for keeping and showing: cut after max input
 * bytes at a character boundary; keep printable ASCII and valid UTF-8;
 * write C0 controls, DEL and bytes that are not UTF-8 as \xHH, and C1,
 * line separator and bidirectional controls as \uHHHH.  out of size
 * 4 * max + 1 always suffices.  Returns the length written.
 */
size_t		 escalate_clean(const char *, size_t, size_t, char *, size_t);

/*
 * The block-message hint: "pinhole request HOST:PORT" (IPv6 bracketed);
 * port 0, a name the DNS refused before any port was tried, "pinhole
 * request HOST --any-port", which asks for every port of it.
 */
void		 escalate_hint(const struct host *, uint16_t, char *, size_t);
/* "HOST:PORT" ("[IPV6]:PORT"); port 0, a DNS lookup, is "HOST" alone. */
void		 escalate_target(const struct host *, uint16_t, char *, size_t);

/* Fill buf with n random bytes as 2n hex digits. */
int		 escalate_random_hex(char *, size_t);

#endif
