/*
 * Decide (host, port): a fake address as the name behind it, the
 * policy, then the grants in force; refuse saying how to ask, or, in
 * ask mode, hold the connection while a person decides.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "proxy/conn/conn-int.h"
#include "proxy/dns/fakeip.h"
#include "proxy/escalate/escalate.h"
#include "proxy/wire/http.h"
#include "rules/policy.h"
#include "rules/rules.h"

/*
 * A fake address stands for the name the DNS side gave it, to this
 * sandbox.
 */
int
conn_unfake(struct conn *c)
{
	const char	*name, *errstr;

	if (c->host.kind != HOST_IPV4 || c->set->fakeip == NULL ||
	    !fakeip_contains(c->set->fakeip, c->host.addr, 4))
		return (0);
	if ((name = fakeip_lookup_name(c->set->fakeip, c->host.addr, 4,
	    sandbox_id(c->sandbox))) == NULL) {
		conn_refuse(c, 502, NULL, "fake address not in use");
		return (-1);
	}
	if (host_parse(name, strlen(name), &c->host, &errstr) == -1) {
		conn_refuse(c, 502, NULL, errstr);
		return (-1);
	}
	return (0);
}

/* Would this host be allowed on another port? */
static int
conn_port_only(struct conn *c)
{
	const struct rules	*r = policy_rules(conn_policy_in_force(c));
	struct rules_verdict	 v;
	uint16_t		 ports[64];
	size_t			 n, i;

	n = rules_ports(r, ports, 62);
	if (n > 62)
		n = 62;
	ports[n++] = 80;
	ports[n++] = 443;
	for (i = 0; i < n; i++) {
		if (ports[i] != c->port &&
		    rules_match(r, &c->host, ports[i], &v))
			return (1);
	}
	return (0);
}

/* Remember what decided: the grant used, or the rule as "file:line". */
static void
conn_rule_keep(struct conn *c, const struct rules_verdict *v)
{
	char	buf[512];

	if (c->grant_id[0] != '\0')
		snprintf(buf, sizeof buf, "grant %s", c->grant_id);
	else
		policy_rule_text(v, buf, sizeof buf);
	conn_rule_set(c, buf);
}

/* The HTTP request being decided, as the policy sees it; 0: none. */
static int
conn_request_of(const struct conn *c, struct rules_request *rq)
{
	const struct http_request	*r = c->req;

	if (!c->have_req || r == NULL || r->is_connect)
		return (0);
	http_request_rules(r, rq);
	return (1);
}

/* The same, for policy_decide(), which asks only when it checks. */
static int
conn_request_cb(void *arg, struct rules_request *rq)
{
	return (conn_request_of(arg, rq));
}

/* An allowed request's secrets: put back, or the request refused. */
static int
conn_secrets_ok(struct conn *c)
{
	if (c->set->nsecrets == 0 || !c->have_req || c->req == NULL ||
	    c->req->is_connect)
		return (1);
	return (conn_secrets(c) == 0);
}

/*
 * Decide (host, port) by the policy, and when its rules check requests,
 * the request; then by the grants in force (policy_decide(): a deny rule
 * wins over a grant, and a grant for the host lifts the checks of its
 * allow rules); a once grant is used up here, by this connection or
 * request.  Returns 1 allow, 0 deny, -1 for a path that cannot be read
 * one way only.  The addresses are vetted later, as for any allowed host.
 */
static int
conn_policy(struct conn *c, struct policy_decision *d)
{
	struct policy_ask	q = { .host = &c->host, .port = c->port,
				    .request = conn_request_cb, .arg = c,
				    .flags = POLICY_CONSUME };
	int			rv;

	sandbox_ask(c->sandbox, &q);
	rv = policy_decide(conn_policy_in_force(c), &q, d);
	c->loopback = 0;
	if (d->ruled) {
		c->inspect = d->inspect;
		c->loopback = d->exact;
	}
	if (rv == 1 && d->granted) {
		snprintf(c->grant_id, sizeof c->grant_id, "%s", d->grant.id);
		c->loopback = 1;
	}
	return (rv);
}

/* Refuse a host the policy denies, saying how to ask for it. */
static void
conn_deny(struct conn *c, const struct rules_verdict *v)
{
	const char	*perr;
	char		 why[512];

	if (v->file != NULL || policy_rules(conn_policy_in_force(c)) == NULL)
		perr = "denied-by-policy";
	else if (c->host.kind != HOST_NAME)
		perr = "ip-literal";
	else if (conn_port_only(c))
		perr = "port";
	else
		perr = "denied-by-policy";
	if (v->file != NULL && v->text != NULL)
		policy_deny_text(v, why, sizeof why);
	else
		snprintf(why, sizeof why, "%s", v->why != NULL ? v->why :
		    "denied");
	conn_refuse(c, 403, perr, why);
}

/*
 * Refuse a request a rule's checks do not let through, saying which (in
 * the audit line's detail too); a deny rule names what the policy would
 * have to change instead of how to ask.
 */
static void
conn_deny_request(struct conn *c, const struct rules_verdict *v)
{
	char	why[512];

	if (v->by_deny) {
		policy_deny_text(v, why, sizeof why);
		conn_fix_set(c, "%s", why);
	} else if (v->why != NULL)
		conn_note_set(c, "%s", v->why);
	conn_refuse(c, 403, v->by_deny ? "denied-by-policy" : "constraint",
	    v->why != NULL ? v->why : "denied");
}

/* Ask mode: the person decided, or the time ran out. */
void
conn_asked(struct conn *c, const struct escalate_request *r, int timed_out)
{
	struct policy_decision	d;
	char			why[ESCALATE_BY_LEN + ESCALATE_TEXT_LEN + 16];

	conn_count_held(c, 0);
	if (r->state == ESCALATE_APPROVED && conn_policy(c, &d) == 1) {
		conn_rule_keep(c, &d.verdict);
		if (conn_secrets_ok(c))
			conn_go(c);
		return;
	}
	if (timed_out)
		snprintf(why, sizeof why, "no answer in time");
	else if (r->state == ESCALATE_DENIED)
		snprintf(why, sizeof why, "denied by %s%s%s", r->by,
		    r->answer[0] != '\0' ? ": " : "", r->answer);
	else if (r->state == ESCALATE_APPROVED)
		snprintf(why, sizeof why, "approved once, and used by another "
		    "connection or for another sandbox");
	else
		snprintf(why, sizeof why, "not approved");
	conn_refuse(c, 403, "denied-by-policy", why);
}

/*
 * Ask mode: hold the connection while the person (or the decider)
 * decides, telling what was asked and why no rule allowed it.
 */
static int
conn_hold(struct conn *c, const struct rules_verdict *v)
{
	enum escalate_filed	f;
	struct rules_request	rq;
	char			what[ESCALATE_WHAT_LEN];

	what[0] = '\0';
	if (conn_request_of(c, &rq))
		snprintf(what, sizeof what, "%.*s %.*s", (int)rq.method_len,
		    rq.method, (int)(rq.target_len > 256 ? 256 :
		    rq.target_len), rq.target);
	c->ask = escalate_ask(c->set->esc, &c->host, c->port, c->via,
	    c->sandbox, what, v->why, c->set->ask, c->set->ev->asked, c, &f);
	if (c->ask == NULL)
		return (-1);
	c->state = S_ASK;
	conn_count_held(c, 1);
	conn_timer(c, c->set->ask + 5);
	conn_update_io(c);
	return (0);
}

/*
 * Apply the policy and grants to (host, port).  Returns 0 to go on, 1
 * when held for a decision (ask mode), -1 when refused.
 */
int
conn_decide(struct conn *c)
{
	struct policy_decision	d;
	struct rules_verdict	*v = &d.verdict;
	char			fix[ESCALATE_FIX_LEN];
	int			rv;

	c->grant_id[0] = '\0';
	if ((rv = conn_policy(c, &d)) == 1) {
		conn_rule_keep(c, v);
		return (conn_secrets_ok(c) ? 0 : -1);
	}
	conn_rule_keep(c, v);
	if (rv == -1) {
		conn_refuse(c, 400, "bad-path", v->why);
		return (-1);
	}
	if (d.checked) {
		conn_deny_request(c, v);
		return (-1);
	}
	policy_grantable(policy_rules(conn_policy_in_force(c)), &c->host,
	    c->port, fix, sizeof fix);
	if (fix[0] != '\0' || c->fix != NULL)
		conn_fix_set(c, "%s", fix);
	if (c->set->esc != NULL) {
		escalate_blocked(c->set->esc, c->sandbox, &c->host, c->port,
		    c->via, fix[0] != '\0' ? fix : NULL);
		if (c->set->ask > 0 && v->file == NULL && fix[0] == '\0' &&
		    conn_hold(c, v) == 0)
			return (1);
	}
	conn_deny(c, v);
	return (-1);
}

/* Go on with an allowed request: reuse the idle server, or resolve. */
void
conn_go(struct conn *c)
{
	if (c->srv_idle && c->srv_name != NULL && c->srv_port == c->port &&
	    strcmp(c->srv_name, c->host.text) == 0) {
		c->reused = 1;
		conn_send_request(c);
		return;
	}
	conn_server_free(c);
	conn_resolve(c);
}
