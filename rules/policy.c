/*
 * The policy in force (rules/policy.h): its rules, its grants, where an
 * always approval writes, and policy_decide(), the one decision that
 * puts the rules and the grants together.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/policy.h"

struct policy {
	struct rules	*rules;		/* NULL denies all */
	struct grants	*grants;
	char		*always;	/* NULL: nowhere */
	uint64_t	(*now_ms)(void);
};

/* Make a policy that denies everything. */
struct policy *
policy_create(uint64_t (*now_ms)(void))
{
	struct policy	*p;

	if ((p = calloc(1, sizeof *p)) == NULL)
		return (NULL);
	if ((p->grants = grants_create()) == NULL) {
		free(p);
		return (NULL);
	}
	p->now_ms = now_ms;
	return (p);
}

/* Free a policy, its rules and its grants. */
void
policy_free(struct policy *p)
{
	if (p == NULL)
		return;
	rules_free(p->rules);
	grants_free(p->grants);
	free(p->always);
	free(p);
}

/* Put rules in force; forget the always grants they now carry. */
void
policy_set_rules(struct policy *p, struct rules *r)
{
	rules_free(p->rules);
	p->rules = r;
	if (r != NULL)
		grants_drop_always(p->grants, r);
}

/* The rules in force, or NULL. */
const struct rules *
policy_rules(const struct policy *p)
{
	return (p->rules);
}

/* Say where an always approval writes its rule. */
int
policy_set_always(struct policy *p, const char *path)
{
	char	*copy = NULL;

	if (path != NULL && (copy = strdup(path)) == NULL)
		return (-1);
	free(p->always);
	p->always = copy;
	return (0);
}

/* Where an always approval writes its rule, or NULL. */
const char *
policy_always(const struct policy *p)
{
	return (p->always);
}

/* The policy's own grants. */
struct grants *
policy_grants(struct policy *p)
{
	return (p->grants);
}

/* The grants' clock. */
uint64_t
policy_now(const struct policy *p)
{
	return (p->now_ms != NULL ? p->now_ms() : 0);
}

/* Add an approval's grant: a sandbox's once grant to its own table. */
int
policy_grant(struct policy *p, struct grants *once, const struct host *h,
    uint16_t port, enum grant_scope scope, uint64_t ttl_ms, const char *id,
    const char *who, const char *sandbox)
{
	struct grants	*g = scope == GRANT_ONCE && once != NULL ? once :
			    p->grants;
	uint64_t	 now = policy_now(p);

	grants_expire(g, now);
	return (grants_add(g, h, port, scope, ttl_ms, id, who, sandbox, now,
	    NULL));
}

/*
 * Find the live grant that serves the ask on port (0: any port; every:
 * only a grant of every port): the policy's first, where lasting grants
 * are, then the sandbox's own.  *from is the table it is in.
 */
static int
policy_grant_find(const struct policy *p, const struct policy_ask *q,
    uint16_t port, int every, struct grant *g, struct grants **from)
{
	struct grants	*tab[2] = { p->grants, q->once };
	uint64_t	 now = policy_now(p);
	size_t		 i;

	for (i = 0; i < 2; i++) {
		if (tab[i] == NULL)
			continue;
		if (every ? grants_match_any_port(tab[i], q->host, q->sandbox,
		    now, g) : grants_match(tab[i], q->host, port, q->sandbox,
		    now, g)) {
			*from = tab[i];
			return (1);
		}
	}
	return (0);
}

/* The class of a special-purpose address no allow-private rule covers. */
static enum addr_class
decide_unguarded(const struct rules *r, const struct host *h)
{
	struct rules_verdict	v;
	size_t			alen = h->kind == HOST_IPV4 ? 4 : 16;
	enum addr_class		c;

	if (h->kind == HOST_NAME ||
	    (c = addr_classify(h->addr, alen)) == ADDR_PUBLIC ||
	    rules_private_ok(r, h->addr, alen, &v))
		return (ADDR_PUBLIC);
	return (c);
}

/* POLICY_GUARD: deny a special-purpose address no allow-private covers. */
static int
decide_guarded(const struct policy *p, const struct policy_ask *q,
    struct policy_decision *d)
{
	if ((q->flags & POLICY_GUARD) == 0 ||
	    (d->guard = decide_unguarded(p->rules, q->host)) == ADDR_PUBLIC)
		return (0);
	d->overridden = d->granted;
	d->allow = d->consume = 0;
	return (1);
}

/* An explicit deny rule decided: note a grant it overrides. */
static int
decide_denied(const struct policy *p, const struct policy_ask *q,
    uint16_t port, struct policy_decision *d)
{
	struct grants	*from;
	struct grant	 g;

	d->allow = 0;
	d->overridden = policy_grant_find(p, q, port, 0, &g, &from);
	return (0);
}

/* No rule allows (host, port): a live grant may. */
static int
decide_grant(struct policy *p, const struct policy_ask *q, uint16_t port,
    int every, struct policy_decision *d)
{
	struct grants	*from;

	if (!policy_grant_find(p, q, port, every, &d->grant, &from))
		return (0);
	d->allow = d->granted = 1;
	d->consume = d->grant.scope == GRANT_ONCE;
	if (decide_guarded(p, q, d))
		return (0);
	if (d->consume && (q->flags & POLICY_CONSUME))
		grants_consume(from, d->grant.id);
	return (1);
}

/* An allow rule decided (and the request's checks, when read). */
static int
decide_allowed(const struct policy *p, const struct policy_ask *q,
    struct policy_decision *d)
{
	d->allow = 1;
	decide_guarded(p, q, d);
	return (d->allow);
}

/* Decide (host, port): deny rule, allow rule (and checks), grant. */
static int
decide_port(struct policy *p, const struct policy_ask *q, uint16_t port,
    struct policy_decision *d)
{
	struct rules_verdict	*v = &d->verdict;
	struct rules_request	 rq;

	if (rules_match(p->rules, q->host, port, v)) {
		d->ruled = 1;
		d->inspect = v->inspect;
		d->exact = v->exact;
		if (v->inspect && q->request != NULL &&
		    q->request(q->arg, &rq)) {
			d->checked = 1;
			d->allow = rules_match_request(p->rules, q->host, port,
			    &rq, v);
			if (d->allow == 1)
				return (decide_allowed(p, q, d));
			if (d->allow == -1 || v->by_deny)
				return (d->allow);
		} else if ((q->flags & POLICY_EVERY) == 0 || !v->constrained)
			return (decide_allowed(p, q, d));
	} else if (v->file != NULL)
		return (decide_denied(p, q, port, d));
	return (decide_grant(p, q, port, 0, d));
}

/*
 * Decide a name on some port: an allow rule opens one, or a grant does
 * on a port (443 for every port) no deny rule closes.
 */
static int
decide_name(struct policy *p, const struct policy_ask *q,
    struct policy_decision *d)
{
	struct policy_decision	 on;
	struct policy_ask	 a = *q;
	struct grants		*from;
	struct grant		 g;

	if (rules_name_allowed(p->rules, q->host, &d->verdict))
		return (d->allow = 1);
	if (!policy_grant_find(p, q, 0, 0, &g, &from))
		return (0);
	a.port = g.port != 0 ? g.port : 443;
	a.request = NULL;
	a.flags &= ~(POLICY_CONSUME | POLICY_EVERY);
	if (policy_decide(p, &a, &on) != 1)
		return (0);
	*d = on;
	return (1);
}

/* Decide every port of a host: a grant of every port, no deny on 443. */
static int
decide_every_port(struct policy *p, const struct policy_ask *q,
    struct policy_decision *d)
{
	if (!rules_match(p->rules, q->host, 443, &d->verdict) &&
	    d->verdict.file != NULL)
		return (decide_denied(p, q, 0, d));
	return (decide_grant(p, q, 0, 1, d));
}

/* Decide: the rules, then the grants. */
int
policy_decide(struct policy *p, const struct policy_ask *q,
    struct policy_decision *d)
{
	d->allow = d->ruled = d->inspect = d->exact = d->checked = 0;
	d->granted = d->consume = d->overridden = 0;
	d->guard = ADDR_PUBLIC;
	if (p->rules == NULL) {
		memset(&d->verdict, 0, sizeof d->verdict);
		d->verdict.why = "no policy loaded";
		return (0);
	}
	if (q->port != 0)
		return (decide_port(p, q, q->port, d));
	if (q->flags & POLICY_EVERY)
		return (decide_every_port(p, q, d));
	return (decide_name(p, q, d));
}

/* What decided: "FILE:LINE", or "grant g1 (once)". */
void
policy_decision_rule(const struct policy_decision *d, char *buf, size_t len)
{
	if (d->granted)
		snprintf(buf, len, "grant %s (%s)", d->grant.id,
		    grant_scope_name(d->grant.scope));
	else
		policy_rule_text(&d->verdict, buf, len);
}

/* Why, in one line. */
void
policy_decision_why(const struct policy_decision *d, const struct host *h,
    char *buf, size_t len)
{
	const char	*over = d->overridden ? "; a grant cannot override it" :
			    "";
	char		 rule[1024];

	policy_decision_rule(d, rule, sizeof rule);
	if (d->guard != ADDR_PUBLIC)
		snprintf(buf, len, "%s is a special-purpose address (%s): "
		    "only an allow-private rule lets pinhole connect to it%s",
		    h->text, addr_class_name(d->guard), over);
	else if (d->allow)
		snprintf(buf, len, "allowed by %s%s", d->granted ? "" :
		    "rule ", rule);
	else if (d->verdict.file != NULL && (!d->checked ||
	    d->verdict.by_deny))
		snprintf(buf, len, "denied by rule %s%s", rule, over);
	else
		snprintf(buf, len, "%s", d->verdict.why != NULL ?
		    d->verdict.why : "denied");
}

/*
 * Say which rule decided: "FILE:LINE", or the origin of a one-line rule;
 * "system FILE:LINE" for a rule of the system layer.
 */
void
policy_rule_text(const struct rules_verdict *v, char *buf, size_t len)
{
	const char	*layer = v->layer == RULES_SYSTEM ? "system " : "";

	if (v->file != NULL && v->line > 0)
		snprintf(buf, len, "%s%s:%u", layer, v->file, v->line);
	else
		snprintf(buf, len, "%s%s", v->file != NULL ? layer : "",
		    v->file != NULL ? v->file : "");
}

/* Say which deny rule refused: "denied by the rule 'TEXT' (FILE:LINE)". */
int
policy_deny_text(const struct rules_verdict *v, char *buf, size_t len)
{
	char	where[1024];

	policy_rule_text(v, where, sizeof where);
	return (snprintf(buf, len, "denied by the rule '%.200s' (%.256s)",
	    v->text != NULL ? v->text : "deny", where));
}

/* Say what no grant can open, and the policy change that would. */
void
policy_private_fix(const char *addr, const char *kind, char *fix,
    size_t len)
{
	int	n;

	n = snprintf(fix, len, "%s is a special-purpose address (%s), which "
	    "no approval can open: to allow it, the policy needs the rule "
	    "'allow-private %s'", addr, kind, addr);
	if (strcmp(kind, "loopback") == 0 && n > 0 && (size_t)n < len)
		snprintf(fix + n, len - (size_t)n, "; in a sandbox it is the "
		    "sandbox's own, and a service on the host's loopback is "
		    RULES_HOST_LOOPBACK " (rule: 'allow " RULES_HOST_LOOPBACK
		    ":PORT')");
}

/* Can a grant lift a refusal of host:port? */
int
policy_grantable(const struct rules *r, const struct host *h, uint16_t port,
    char *fix, size_t len)
{
	struct rules_verdict	v;
	enum addr_class		c;
	int			n;

	if (len > 0)
		fix[0] = '\0';
	if (r == NULL)
		return (1);
	if (port == 0)
		port = 443;
	if (!rules_match(r, h, port, &v) && v.file != NULL) {
		n = policy_deny_text(&v, fix, len);
		if (n >= 0 && (size_t)n < len && v.layer == RULES_SYSTEM)
			snprintf(fix + n, len - n, ", which no approval nor "
			    "rule of yours can override: it is the system "
			    "policy, and only an administrator can change that "
			    "file");
		else if (n >= 0 && (size_t)n < len)
			snprintf(fix + n, len - n, ", which no approval can "
			    "override: to allow it, that rule must be removed "
			    "from the policy");
		return (0);
	}
	if ((c = decide_unguarded(r, h)) == ADDR_PUBLIC)
		return (1);
	policy_private_fix(h->text, addr_class_name(c), fix, len);
	return (0);
}

/* Would a grant lift the request checks of the rules allowing host:port? */
int
policy_lifts(const struct rules *r, const struct host *h, uint16_t port,
    char *text, size_t len)
{
	struct rules_verdict	v;
	char			where[1024];

	if (len > 0)
		text[0] = '\0';
	if (r == NULL || port == 0 || !rules_match(r, h, port, &v) ||
	    !v.constrained)
		return (0);
	policy_rule_text(&v, where, sizeof where);
	snprintf(text, len, "the request checks of the rule '%.200s' (%.256s)",
	    v.text != NULL ? v.text : "allow", where);
	return (1);
}
