/*
 * What the DNS server answers.  A name no allow rule covers is answered
 * here and now, from memory: nothing about it ever leaves the gateway.
 * An allowed name gets a fake address for A, an empty answer for the
 * types that would bypass the fake address (AAAA, HTTPS, SVCB, ANY), and
 * the upstream's answer for the rest; --dns-real answers A and AAAA with
 * the resolver's addresses, special-purpose ones removed.
 */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "lib/metrics.h"
#include "proxy/audit/audit.h"
#include "proxy/dns/dns-int.h"
#include "proxy/dns/fakeip.h"
#include "proxy/escalate/escalate.h"
#include "proxy/resolver/resolver.h"
#include "proxy/sandbox/sandbox.h"
#include "rules/policy.h"
#include "rules/rules.h"

#define DNS_ANSWER_TEXT	160	/* the audit line's "answer" */

/* Write the audit line for a query (rate limited by querylog.c). */
static void
dns_answer_audit(struct dns_req *r, int allow, const char *answer)
{
	struct audit_event	 e;
	struct sandbox	*sb = dns_req_sandbox(r);
	char			 tbuf[12], hint[HOST_TEXT_LEN + 32];
	const char		*verdict = allow ? "allow" : "deny";
	const char		*qname = r->named ? r->host.text : r->q.qname;
	const char		*qtype;

	metrics_dns(r->srv->p.metrics, allow);
	qtype = dns_type_name(r->q.qtype, tbuf, sizeof tbuf);
	if (dns_log_counted(r->srv->log, sb, verdict, qtype, qname))
		return;
	audit_event_init(&e);
	e.event = "dns";
	e.verdict = verdict;
	e.session = r->srv->p.session;
	audit_event_sandbox(&e, sandbox_ident(sb));
	e.client = dns_req_client(r);
	e.via = "dns";
	e.qname = qname;
	e.qtype = qtype;
	e.answer = answer;
	e.rule = r->rule[0] != '\0' ? r->rule : NULL;
	e.reason = r->why[0] != '\0' ? r->why : NULL;
	if (!allow && r->named && r->blocked && !r->fixed) {
		escalate_hint(&r->host, 0, hint, sizeof hint);
		e.ask = hint;
	}
	dns_log_write(r->srv->log, &e, sb);
}

/* Build a reply and send it. */
static void
dns_answer_send(struct dns_req *r, const struct dns_reply *rep)
{
	uint8_t	*out;
	size_t	 cap, n;

	out = dns_req_buf(r, &cap);
	n = dns_reply_build(&r->q, rep, r->limit, out, cap);
	if (n == 0) {
		log_warnx("%s: %s: no room for the reply", __func__,
		    dns_req_client(r));
		return;
	}
	dns_req_send(r, out, n);
}

/* Answer with an rcode and nothing else. */
static void
dns_answer_rcode(struct dns_req *r, int rcode)
{
	struct dns_reply	rep = { rcode, 0, 0, NULL, -1, NULL, NULL };

	dns_answer_send(r, &rep);
}

/* Answer with addresses (none: NOERROR, no data). */
static void
dns_answer_addrs(struct dns_req *r, const struct dns_addr *a, size_t n,
    uint32_t ttl)
{
	struct dns_reply	rep = { DNS_R_NOERROR, ttl, n, a, -1, NULL,
				    NULL };

	dns_answer_send(r, &rep);
}

/* The IPv4 address of a reverse name ("4.3.2.1.in-addr.arpa"). */
static int
dns_answer_reverse(const char *name, uint8_t *a)
{
	static const char	 suffix[] = "in-addr.arpa";
	size_t			 len = strlen(name);
	size_t			 slen = sizeof suffix - 1;
	const char		*p = name;
	char			*end;
	unsigned long		 v;
	int			 i;

	if (len <= slen || strcasecmp(name + len - slen, suffix) != 0)
		return (-1);
	for (i = 3; i >= 0; i--) {
		if (!isdigit((unsigned char)*p))
			return (-1);
		v = strtoul(p, &end, 10);
		if (v > 255 || end - p > 3 || *end != '.')
			return (-1);
		a[i] = (uint8_t)v;
		p = end + 1;
	}
	return (p == name + len - slen ? 0 : -1);
}

/*
 * PTR for a fake address this sandbox was given: its name, from memory.
 * Returns 1 if answered.
 */
static int
dns_answer_ptr(struct dns_req *r)
{
	struct dns_server	*srv = r->srv;
	struct dns_reply	 rep = { DNS_R_NOERROR, 0, 0, NULL, -1, NULL,
				    NULL };
	uint8_t			 a[4];

	if (r->q.qtype != DNS_T_PTR ||
	    dns_answer_reverse(r->q.qname, a) == -1 ||
	    (rep.ptr = fakeip_lookup_name(srv->p.fakeip, a, 4,
	    sandbox_id(dns_req_sandbox(r)))) == NULL)
		return (0);
	rep.ttl = srv->p.ttl;
	snprintf(r->why, sizeof r->why, "a fake address");
	dns_answer_send(r, &rep);
	dns_answer_audit(r, 1, rep.ptr);
	return (1);
}

/* The policy that decides a query: its sandbox's, or the server's. */
static struct policy *
dns_answer_in_force(const struct dns_req *r)
{
	return (sandbox_policy(dns_req_sandbox(r), r->srv->p.policy));
}

/* Is the name allowed on some port?  Fills r->host, r->rule, r->why. */
static int
dns_answer_policy(struct dns_req *r)
{
	struct policy_decision	 d;
	struct policy_ask	 q = { .host = &r->host, .port = 0 };
	const char		*errstr;

	if (host_parse(r->q.qname, strlen(r->q.qname), &r->host,
	    &errstr) == -1) {
		snprintf(r->why, sizeof r->why, "not a host name: %s", errstr);
		return (0);
	}
	if (r->host.kind != HOST_NAME) {
		snprintf(r->why, sizeof r->why, "an address, not a name");
		return (0);
	}
	r->named = 1;
	sandbox_ask(dns_req_sandbox(r), &q);
	if (policy_decide(dns_answer_in_force(r), &q, &d) && d.granted) {
		policy_decision_rule(&d, r->rule, sizeof r->rule);
		snprintf(r->why, sizeof r->why, "granted");
		return (1);
	}
	policy_rule_text(&d.verdict, r->rule, sizeof r->rule);
	if (d.verdict.why != NULL)
		snprintf(r->why, sizeof r->why, "%s", d.verdict.why);
	return (d.allow);
}

/* Tell the escalation queue of a name refused, for its sandbox. */
static void
dns_answer_refused(struct dns_req *r, const char *fix)
{
	struct sandbox_refusal	f;

	memset(&f, 0, sizeof f);
	f.host = r->host;
	snprintf(f.via, sizeof f.via, "dns");
	snprintf(f.why, sizeof f.why, "%s", r->why);
	snprintf(f.fix, sizeof f.fix, "%s", r->fixed ? fix : "");
	f.ask = !r->fixed;
	escalate_refused(r->srv->p.esc, dns_req_sandbox(r), &f);
}

/*
 * Refuse a name: NXDOMAIN (or REFUSED) with EDE 15 and the command that
 * asks for it, or, when no grant can help, what the policy must change.
 */
static void
dns_answer_blocked(struct dns_req *r)
{
	struct dns_server	*srv = r->srv;
	struct dns_reply	rep;
	char			hint[HOST_TEXT_LEN + 32];
	char			fix[POLICY_FIX_LEN];
	char			text[POLICY_FIX_LEN + 64];

	if (r->named) {
		r->blocked = 1;
		r->fixed = !policy_grantable(policy_rules(
		    dns_answer_in_force(r)), &r->host, 0, fix, sizeof fix);
		escalate_hint(&r->host, 0, hint, sizeof hint);
		snprintf(text, sizeof text, "blocked by pinhole policy%s%s",
		    r->fixed ? ": " : "; ask: ", r->fixed ? fix : hint);
		if (srv->p.esc != NULL) {
			escalate_blocked(srv->p.esc, dns_req_sandbox(r),
			    &r->host, 0, "dns", r->fixed ? fix : NULL);
			dns_answer_refused(r, fix);
		}
	} else
		snprintf(text, sizeof text, "blocked by pinhole policy: %s",
		    r->why);
	memset(&rep, 0, sizeof rep);
	rep.rcode = r->srv->p.refuse ? DNS_R_REFUSED : DNS_R_NXDOMAIN;
	rep.ede = DNS_EDE_BLOCKED;
	rep.ede_text = text;
	dns_answer_send(r, &rep);
	dns_answer_audit(r, 0, dns_rcode_name(rep.rcode));
}

/* A fake address for a name (allowed, or held for approval in ask mode). */
static void
dns_answer_fake(struct dns_req *r, int allow)
{
	struct dns_server	*srv = r->srv;
	struct dns_addr		 a;
	char			 text[INET_ADDRSTRLEN];

	memset(&a, 0, sizeof a);
	a.type = DNS_T_A;
	if (fakeip_assign(srv->p.fakeip, r->host.text, sandbox_id(
	    dns_req_sandbox(r)), mono_sec(), srv->p.ttl, a.a) == -1) {
		log_warnx("%s: every fake address is in use", __func__);
		dns_answer_rcode(r, DNS_R_SERVFAIL);
		dns_answer_audit(r, allow, "SERVFAIL: fake addresses exhausted");
		return;
	}
	dns_answer_addrs(r, &a, 1, srv->p.ttl);
	addr_format(text, sizeof text, a.a, 4);
	dns_answer_audit(r, allow, text);
}

/* The upstream's answer to another type: relay it. */
static void
dns_answer_raw_cb(int status, const char *errstr, const uint8_t *msg,
    size_t len, void *arg)
{
	struct dns_req		*r = arg;
	struct dns_server	*srv = r->srv;
	char			 text[DNS_ANSWER_TEXT];
	size_t			 n = 0;

	r->rq = NULL;
	if (msg != NULL && len != 0)
		n = dns_relay_build(&r->q, msg, len, r->limit, srv->out,
		    sizeof srv->out, &errstr);
	if (n == 0) {
		dns_answer_rcode(r, DNS_R_SERVFAIL);
		snprintf(text, sizeof text, "SERVFAIL: %s",
		    errstr != NULL ? errstr : "no answer");
	} else {
		dns_req_send(r, srv->out, n);
		snprintf(text, sizeof text, "relayed %s",
		    dns_rcode_name(DNS_RCODE(srv->out[3])));
	}
	dns_answer_audit(r, 1, text);
	dns_req_free(r);
}

/* Ask upstream for a type we do not answer ourselves. */
static void
dns_answer_relay(struct dns_req *r)
{
	struct dns_req	*k;

	if ((k = dns_req_keep(r)) == NULL) {
		dns_answer_rcode(r, DNS_R_SERVFAIL);
		dns_answer_audit(r, 1, "SERVFAIL: too many queries waiting");
		return;
	}
	k->rq = resolver_raw(k->srv->p.resolver, k->host.text, k->q.qtype,
	    dns_answer_raw_cb, k);
	if (k->rq == NULL) {
		dns_answer_rcode(k, DNS_R_SERVFAIL);
		dns_answer_audit(k, 1, "SERVFAIL: cannot ask upstream");
		dns_req_free(k);
	}
}

/* May the sandbox see this address?  (--dns-real) */
static int
dns_answer_vet(struct dns_req *r, const struct resolver_addr *ra)
{
	const struct rules	*rules = policy_rules(dns_answer_in_force(r));
	struct rules_verdict	 v;
	size_t			 len = ra->family == AF_INET ? 4 : 16;

	if (addr_classify(ra->addr, len) == ADDR_PUBLIC)
		return (1);
	memset(&v, 0, sizeof v);
	return (rules_private_ok(rules, ra->addr, len, &v));
}

/* Pick the vetted addresses of the asked family; list them for audit. */
static size_t
dns_answer_pick(struct dns_req *r, const struct resolver_result *res,
    struct dns_addr *a, char *text, size_t size)
{
	size_t	i, n = 0, len, off = 0;
	int	family = r->q.qtype == DNS_T_A ? AF_INET : AF_INET6;
	char	buf[INET6_ADDRSTRLEN];

	text[0] = '\0';
	for (i = 0; i < res->n && i < RESOLVER_MAX_ADDRS; i++) {
		if (res->a[i].family != family)
			continue;
		inet_ntop(family, res->a[i].addr, buf, sizeof buf);
		if (!dns_answer_vet(r, &res->a[i])) {
			log_info("dns: %s: %s withheld: special-purpose "
			    "address", r->host.text, buf);
			continue;
		}
		len = family == AF_INET ? 4 : 16;
		a[n].type = r->q.qtype;
		memcpy(a[n].a, res->a[i].addr, len);
		n++;
		if (off < size)
			off += snprintf(text + off, size - off, "%s%s",
			    off != 0 ? " " : "", buf);
	}
	return (n);
}

/* The resolver's addresses for --dns-real. */
static void
dns_answer_lookup_cb(int status, const char *errstr,
    const struct resolver_result *res, void *arg)
{
	struct dns_req		*r = arg;
	struct dns_addr		 a[RESOLVER_MAX_ADDRS];
	char			 text[DNS_ANSWER_TEXT];
	size_t			 n = 0;
	int			 rcode = DNS_R_NOERROR;

	r->rq = NULL;
	if (status == 0)
		n = dns_answer_pick(r, res, a, text, sizeof text);
	else if (strcmp(errstr, "no such host") == 0)
		rcode = DNS_R_NXDOMAIN;
	else if (strcmp(errstr, "no address") != 0)
		rcode = DNS_R_SERVFAIL;
	if (rcode != DNS_R_NOERROR) {
		dns_answer_rcode(r, rcode);
		snprintf(text, sizeof text, "%s: %s", dns_rcode_name(rcode),
		    errstr);
	} else {
		dns_answer_addrs(r, a, n, status == 0 ? res->ttl : 0);
		if (n == 0)
			snprintf(text, sizeof text, "no data");
	}
	dns_answer_audit(r, 1, text);
	dns_req_free(r);
}

/* Look an allowed name up for real (--dns-real). */
static void
dns_answer_real(struct dns_req *r)
{
	struct dns_req	*k;

	if ((k = dns_req_keep(r)) == NULL) {
		dns_answer_rcode(r, DNS_R_SERVFAIL);
		dns_answer_audit(r, 1, "SERVFAIL: too many queries waiting");
		return;
	}
	k->rq = resolver_lookup(k->srv->p.resolver, k->host.text,
	    dns_answer_lookup_cb, k);
	if (k->rq == NULL) {
		dns_answer_rcode(k, DNS_R_SERVFAIL);
		dns_answer_audit(k, 1, "SERVFAIL: cannot look up");
		dns_req_free(k);
	}
}

/* An allowed name: answer by type. */
static void
dns_answer_type(struct dns_req *r)
{
	switch (r->q.qtype) {
	case DNS_T_A:
		if (r->srv->p.real)
			dns_answer_real(r);
		else
			dns_answer_fake(r, 1);
		return;
	case DNS_T_AAAA:
		if (r->srv->p.real) {
			dns_answer_real(r);
			return;
		}
		/* FALLTHROUGH */
	case DNS_T_HTTPS:
	case DNS_T_SVCB:
	case DNS_T_ANY:
		dns_answer_addrs(r, NULL, 0, 0);
		dns_answer_audit(r, 1, "no data");
		return;
	case DNS_T_OPT:
	case DNS_T_IXFR:
	case DNS_T_AXFR:
		dns_answer_rcode(r, DNS_R_REFUSED);
		dns_answer_audit(r, 1, "REFUSED: meta type");
		return;
	}
	dns_answer_relay(r);
}

/*
 * Ask mode: a denied name still gets a fake address (from memory, nothing
 * leaves), so that its connection reaches the gateway and can be held
 * while a person decides.  Types that would need upstream are refused.
 */
static void
dns_answer_held(struct dns_req *r)
{
	switch (r->q.qtype) {
	case DNS_T_A:
		dns_answer_fake(r, 0);
		return;
	case DNS_T_AAAA:
	case DNS_T_HTTPS:
	case DNS_T_SVCB:
	case DNS_T_ANY:
		dns_answer_addrs(r, NULL, 0, 0);
		dns_answer_audit(r, 0, "no data");
		return;
	}
	dns_answer_blocked(r);
}

/* Answer one message. */
void
dns_answer(struct dns_req *r, const uint8_t *msg, size_t len)
{
	const char	*errstr = NULL;
	int		 rv;

	rv = dns_query_parse(msg, len, &r->q, &errstr);
	if (rv == DNS_DROP) {
		log_debug("dns: %s: dropped: %s", dns_req_client(r),
		    errstr);
		return;
	}
	r->limit = r->conn != NULL ? DNS_MSG_MAX : dns_query_limit(&r->q);
	if (rv != 0) {
		log_debug("dns: %s: %s: %s", dns_req_client(r),
		    dns_rcode_name(rv), errstr);
		dns_answer_rcode(r, rv);
		return;
	}
	if (r->q.qclass != DNS_C_IN) {
		snprintf(r->why, sizeof r->why, "class %u, not IN",
		    r->q.qclass);
		dns_answer_rcode(r, DNS_R_REFUSED);
		dns_answer_audit(r, 0, "REFUSED");
		return;
	}
	if (!audit_ready(r->srv->p.audit)) {
		dns_answer_rcode(r, DNS_R_SERVFAIL);
		dns_answer_audit(r, 0, "SERVFAIL: the audit log cannot be "
		    "written");
		return;
	}
	if (dns_answer_ptr(r))
		return;
	if (!dns_answer_policy(r)) {
		if (r->srv->p.ask && r->named && policy_grantable(
		    policy_rules(dns_answer_in_force(r)), &r->host, 0, NULL, 0))
			dns_answer_held(r);
		else
			dns_answer_blocked(r);
		return;
	}
	dns_answer_type(r);
}
