/*
 * Escalation hooks over runtime grants: approvals become grants (the
 * grant's id is the request's id, its "who" the decider, a once grant's
 * sandbox the request's), `always` is written to the policy file too.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lib/clock.h"
#include "proxy/escalate/escalate.h"
#include "proxy/escalate/grants.h"
#include "rules/grants.h"
#include "rules/rules.h"

_Static_assert(GRANT_SANDBOX_LEN >= AUDIT_SANDBOX_ID_LEN,
    "a grant keeps a sandbox's id whole");

/*
 * Write "allow HOST:PORT" into the policy file for an `always` grant;
 * with a TTL, "allow HOST:PORT until TIME", so that the rule ends with
 * the grant even when no gateway is left to take it out.  The request's
 * written says where: "FILE:LINE: allow RULE".
 */
static int
eg_append(const struct escalate_grants *eg, struct escalate_request *r,
    char *err, size_t errlen)
{
	struct rules_edit	 res;
	char			 buf[HOST_TEXT_LEN + 64], end[32];

	if (eg->policy_path == NULL) {
		snprintf(err, errlen, "no policy file to write an always grant "
		    "to: approve --session instead");
		return (-1);
	}
	escalate_target(&r->host, r->port, buf, sizeof buf);
	if (r->port == 0)		/* any port */
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf), ":*");
	if (r->ttl > 0) {		/* the rule ends with the grant */
		rules_time_format(time(NULL) + r->ttl, end, sizeof end);
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf),
		    " until %s", end);
	}
	if (rules_file_append(eg->policy_path, buf, &res, err, errlen) == -1)
		return (-1);
	snprintf(r->written, sizeof r->written, "%s:%u: %s%s",
	    eg->policy_path, res.line, res.rule[0] != '\0' ? "" : "allow ",
	    res.rule[0] != '\0' ? res.rule : buf);
	return (0);
}

/* Approval: add the grant. */
static int
eg_grant(struct escalate_request *r, char *err, size_t errlen,
    void *arg)
{
	struct escalate_grants	*eg = arg;
	enum grant_scope	 scope;

	scope = r->scope == ESCALATE_SCOPE_ALWAYS ? GRANT_ALWAYS :
	    r->scope == ESCALATE_SCOPE_SESSION ? GRANT_SESSION : GRANT_ONCE;
	if (scope == GRANT_ALWAYS && eg_append(eg, r, err, errlen) == -1)
		return (-1);
	grants_expire(eg->grants, eg->now_ms());
	if (grants_add(eg->grants, &r->host, r->port, scope,
	    (uint64_t)r->ttl * 1000, r->id, r->by, r->sandbox, eg->now_ms(),
	    NULL) == -1) {
		snprintf(err, errlen, "cannot add the grant (out of memory)");
		return (-1);
	}
	return (0);
}

/* Is host:port allowed now for a sandbox (policy, then grants)? */
static int
eg_allowed(const struct host *h, uint16_t port, const char *sandbox,
    void *arg)
{
	struct escalate_grants	*eg = arg;
	struct policy_decision	 d;
	struct grant		 g;

	if (*eg->rules == NULL)
		return (0);
	if (port == 0)			/* every port: a grant of every port */
		return (grants_match_any_port(eg->grants, h, sandbox,
		    eg->now_ms(), &g) && policy_grantable(*eg->rules, h, 0,
		    NULL, 0));
	if (!policy_decide(*eg->rules, eg->grants, h, port, sandbox,
	    eg->now_ms(), &d))
		return (0);
	/* Request checks hold every request but those a grant lets by. */
	return (d.granted || !d.verdict.constrained || grants_match(eg->grants,
	    h, port, sandbox, eg->now_ms(), &g));
}

/* Would a grant lift request checks of host:port? */
static int
eg_lifts(const struct host *h, uint16_t port, char *text, size_t len,
    void *arg)
{
	struct escalate_grants	*eg = arg;

	return (policy_lifts(*eg->rules, h, port, text, len));
}

/* Could a grant lift a refusal of host:port? */
static int
eg_grantable(const struct host *h, uint16_t port, char *fix, size_t len,
    void *arg)
{
	struct escalate_grants	*eg = arg;

	return (policy_grantable(*eg->rules, h, port, fix, len));
}

/* The policy in force, one rule a line. */
static size_t
eg_policy_text(char *buf, size_t len, void *arg)
{
	struct escalate_grants	*eg = arg;

	if (len > 0)
		buf[0] = '\0';
	if (*eg->rules == NULL)
		return (0);
	return (rules_text(*eg->rules, buf, len));
}

/* Fill the hooks. */
void
escalate_grants_hooks(struct escalate_grants *eg, struct escalate_hooks *h)
{
	memset(h, 0, sizeof *h);
	h->grant = eg_grant;
	h->allowed = eg_allowed;
	h->grantable = eg_grantable;
	h->lifts = eg_lifts;
	h->policy_text = eg_policy_text;
	h->arg = eg;
	if (eg->now_ms == NULL)
		eg->now_ms = mono_ms;
}
