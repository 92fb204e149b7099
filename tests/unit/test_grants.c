/*
 * Unit tests for runtime grants and the policy's one decision
 * (policy_decide): every scope, TTL expiry, once grants used up and kept
 * by their sandbox, deny rules and the special-address guard winning
 * over grants, request checks a grant lifts, a name for the DNS and
 * every port for the escalation queue, which refusals no grant can lift,
 * and the rule text the HTTP and DNS sides share.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rules/policy.h"

/* A canonical host from text. */
static struct host
H(const char *s)
{
	struct host	 h;
	const char	*errstr;

	if (host_parse(s, strlen(s), &h, &errstr) != 0)
		fail_msg("%s: %s", s, errstr);
	return (h);
}

/* A policy from text. */
static struct rules *
policy(const char *text)
{
	struct rules	*r = rules_create();
	char		 err[512];

	assert_non_null(r);
	if (rules_load_text(r, "policy", text, strlen(text), err,
	    sizeof err) != 0)
		fail_msg("refused: %s", err);
	return (r);
}

static uint64_t	clock_now;

/* The policy's clock. */
static uint64_t
clock_ms(void)
{
	return (clock_now);
}

/* A policy in force from text, its clock the test's. */
static struct policy *
in_force(const char *text)
{
	struct policy	*p = policy_create(clock_ms);

	assert_non_null(p);
	policy_set_rules(p, policy(text));
	return (p);
}

/* Ask p about host:port for sandbox at now, with flags. */
static struct policy_decision
ask(struct policy *p, const char *host, uint16_t port, const char *sandbox,
    uint64_t now, unsigned int flags)
{
	struct policy_decision	d;
	struct host		h = H(host);
	struct policy_ask	q = { .host = &h, .port = port,
				    .sandbox = sandbox, .flags = flags };
	int			rv;

	clock_now = now;
	rv = policy_decide(p, &q, &d);
	assert_int_equal(rv, d.allow);
	return (d);
}

/* Decide host:port by p at now for a caller naming no sandbox. */
static struct policy_decision
decide(struct policy *p, const char *host, uint16_t port, uint64_t now)
{
	return (ask(p, host, port, NULL, now, POLICY_GUARD));
}

/* Why a decision was made, as logs say it. */
static const char *
why(const struct policy_decision *d, const char *host)
{
	static char	buf[1536];
	struct host	h = H(host);

	policy_decision_why(d, &h, buf, sizeof buf);
	return (buf);
}

/* What decided, as logs say it. */
static const char *
rule(const struct policy_decision *d)
{
	static char	buf[1024];

	policy_decision_rule(d, buf, sizeof buf);
	return (buf);
}

/* Add a grant; fail the test if it is refused. */
static struct grant
add(struct grants *g, const char *host, uint16_t port, enum grant_scope s,
    uint64_t ttl, uint64_t now)
{
	struct host	h = H(host);
	struct grant	gr;

	assert_int_equal(grants_add(g, &h, port, s, ttl, NULL, "tester", NULL,
	    now, &gr), 0);
	return (gr);
}

/* Is host:port granted at now? */
static int
granted(const struct grants *g, const char *host, uint16_t port,
    uint64_t now)
{
	struct host	h = H(host);
	struct grant	gr;

	return (grants_match(g, &h, port, NULL, now, &gr));
}

/* A once grant serves until consumed; DNS (port 0) does not use it up. */
static void
test_once(void **state)
{
	struct grants	*g = grants_create();
	struct grant	 gr = add(g, "PyPI.org.", 443, GRANT_ONCE, 0, 1000);

	(void)state;
	assert_string_equal(gr.id, "g1");
	assert_int_equal(gr.expires, 1000 + GRANTS_ONCE_TTL_MS);
	assert_true(granted(g, "pypi.org", 0, 1001));	/* a DNS answer */
	assert_true(granted(g, "pypi.org", 443, 1001));
	assert_true(granted(g, "pypi.org", 443, 1002));	/* not used yet */
	assert_false(granted(g, "pypi.org", 80, 1001));
	assert_false(granted(g, "files.pypi.org", 443, 1001));
	assert_int_equal(grants_consume(g, "g1"), 0);
	assert_false(granted(g, "pypi.org", 443, 1003));
	assert_false(granted(g, "pypi.org", 0, 1003));
	assert_int_equal(grants_consume(g, "g1"), -1);
	grants_free(g);
}

/*
 * A once grant is for one sandbox: it serves that one alone, in the
 * decision as in a DNS answer; another sandbox's once grant for the
 * same host sits beside it rather than replacing it; a session grant
 * serves every sandbox.  A caller naming none ("" or NULL) is one more.
 */
static void
test_once_sandbox(void **state)
{
	struct policy		*p = in_force("allow ok.test\n");
	struct grants		*g = policy_grants(p);
	struct host		 h = H("pypi.org");
	struct grant		 gr, list[4];
	struct policy_decision	 d;

	(void)state;
	assert_int_equal(grants_add(g, &h, 443, GRANT_ONCE, 0, "r1", "me",
	    "1", 0, &gr), 0);
	assert_string_equal(gr.sandbox, "1");
	assert_int_equal(grants_add(g, &h, 443, GRANT_ONCE, 0, "r2", "me",
	    "2", 0, NULL), 0);
	assert_int_equal(grants_list(g, list, 4), 2);	/* side by side */
	assert_int_equal(grants_match(g, &h, 443, "1", 1, &gr), 1);
	assert_string_equal(gr.id, "r1");
	assert_int_equal(grants_match(g, &h, 0, "2", 1, &gr), 1);
	assert_string_equal(gr.id, "r2");
	assert_int_equal(grants_match(g, &h, 443, "3", 1, &gr), 0);
	assert_int_equal(grants_match(g, &h, 0, "3", 1, &gr), 0);
	assert_int_equal(grants_match(g, &h, 443, NULL, 1, &gr), 0);
	assert_int_equal(grants_match(g, &h, 443, "", 1, &gr), 0);
	assert_false(ask(p, "pypi.org", 443, "3", 1, 0).allow);
	d = ask(p, "pypi.org", 443, "1", 1, 0);
	assert_true(d.allow);
	assert_true(d.consume);
	assert_int_equal(grants_consume(g, d.grant.id), 0);
	assert_false(ask(p, "pypi.org", 443, "1", 2, 0).allow);
	assert_true(ask(p, "pypi.org", 443, "2", 2, 0).allow);
	/* The same sandbox's next once grant replaces its own. */
	assert_int_equal(grants_add(g, &h, 443, GRANT_ONCE, 0, "r3", "me",
	    "2", 2, NULL), 0);
	assert_int_equal(grants_list(g, list, 4), 1);
	assert_string_equal(list[0].id, "r3");
	/* None named is a caller of its own, served by its own grant. */
	assert_int_equal(grants_add(g, &h, 443, GRANT_ONCE, 0, "r4", "me",
	    NULL, 2, NULL), 0);
	assert_int_equal(grants_match(g, &h, 443, "", 3, &gr), 1);
	assert_string_equal(gr.id, "r4");
	assert_int_equal(grants_match(g, &h, 443, "1", 3, &gr), 0);
	/* A session grant serves them all, and is not tied to one. */
	assert_int_equal(grants_add(g, &h, 443, GRANT_SESSION, 0, "r5", "me",
	    "1", 3, &gr), 0);
	assert_string_equal(gr.sandbox, "");
	assert_int_equal(grants_match(g, &h, 443, "9", 4, &gr), 1);
	assert_string_equal(gr.id, "r5");
	/* A sandbox's id that does not fit is refused. */
	assert_int_equal(grants_add(g, &h, 80, GRANT_ONCE, 0, "r6", "me",
	    "0123456789abcdef", 4, NULL), -1);
	policy_free(p);
}

/*
 * A sandbox's own once grants: policy_grant() puts a once grant in the
 * table given, the others in the policy's; the decision asks the
 * policy's first (a lasting grant wins), then the sandbox's, which a
 * connection uses up with POLICY_CONSUME and a DNS answer does not.
 */
static void
test_once_own(void **state)
{
	struct policy		*p = in_force("deny bad.example\n");
	struct grants		*own = grants_create();
	struct host		 h = H("x.example");
	struct policy_ask	 q = { .host = &h, .port = 443,
				    .sandbox = "4", .once = own };
	struct policy_decision	 d;
	struct grant		 list[2];

	(void)state;
	clock_now = 1;
	assert_int_equal(policy_grant(p, own, &h, 443, GRANT_ONCE, 0, "r1",
	    "me", "4"), 0);
	assert_int_equal(grants_list(policy_grants(p), list, 2), 0);
	assert_int_equal(grants_list(own, list, 2), 1);
	assert_false(ask(p, "x.example", 443, "4", 1, 0).allow);
	q.port = 0;				/* the DNS: not used up */
	assert_true(policy_decide(p, &q, &d));
	assert_string_equal(rule(&d), "grant r1 (once)");
	q.port = 443;
	q.flags = POLICY_CONSUME;
	assert_true(policy_decide(p, &q, &d));
	assert_true(d.granted);
	assert_false(policy_decide(p, &q, &d));	/* used up */
	assert_int_equal(policy_grant(p, own, &h, 443, GRANT_ONCE, 0, "r2",
	    "me", "4"), 0);
	assert_int_equal(policy_grant(p, own, &h, 443, GRANT_SESSION, 0, "r3",
	    "me", NULL), 0);
	assert_int_equal(grants_list(policy_grants(p), list, 2), 1);
	assert_true(policy_decide(p, &q, &d));
	assert_string_equal(d.grant.id, "r3");	/* the lasting one */
	assert_int_equal(grants_list(own, list, 2), 1);
	h = H("bad.example");
	assert_int_equal(policy_grant(p, own, &h, 443, GRANT_ONCE, 0, "r4",
	    "me", "4"), 0);
	assert_false(policy_decide(p, &q, &d));	/* a deny rule wins */
	assert_true(d.overridden);
	assert_string_equal(why(&d, "bad.example"), "denied by rule "
	    "policy:1; a grant cannot override it");
	assert_int_equal(grants_list(own, list, 2), 2);	/* not used */
	grants_free(own);
	policy_free(p);
}

/* Session and always grants are not used up; ids, replacement, revoke. */
static void
test_session_always(void **state)
{
	struct grants	*g = grants_create();
	struct grant	 list[4];
	struct host	 h = H("github.com");
	struct rules	*r;

	(void)state;
	add(g, "github.com", 22, GRANT_SESSION, 0, 0);
	add(g, "203.0.113.7", 443, GRANT_ALWAYS, 0, 0);
	assert_int_equal(grants_consume(g, "g1"), 0);
	assert_int_equal(grants_consume(g, "g2"), 0);
	assert_true(granted(g, "github.com", 22, 1));
	assert_true(granted(g, "3405803783", 443, 1));	/* same address */
	assert_true(granted(g, "github.com", 22, UINT64_MAX - 1));
	assert_int_equal(grants_add(g, &h, 22, GRANT_SESSION, 0, "r7", "me",
	    NULL, 5, NULL), 0);				/* replaces g1 */
	assert_int_equal(grants_add(g, &h, 23, GRANT_SESSION, 0, "r7", "me",
	    NULL, 5, NULL), -1);				/* id in use */
	assert_int_equal(grants_list(g, list, 4), 2);
	assert_string_equal(list[0].id, "g2");
	assert_string_equal(list[1].id, "r7");
	assert_string_equal(list[1].who, "me");
	r = policy("allow 203.0.113.0/24:8443\n");
	grants_drop_always(g, r);		/* a rule, but not for 443 */
	assert_true(granted(g, "203.0.113.7", 443, 1));
	rules_free(r);
	r = policy("allow 203.0.113.7 until 2999-01-01T00:00:00Z\n");
	grants_drop_always(g, r);		/* that rule ends; this grant not */
	assert_true(granted(g, "203.0.113.7", 443, 1));
	rules_free(r);
	r = policy("allow 203.0.113.7\n");
	grants_drop_always(g, r);
	assert_false(granted(g, "203.0.113.7", 443, 1));
	rules_free(r);
	assert_int_equal(grants_remove(g, "r7"), 0);
	assert_int_equal(grants_remove(g, "r7"), -1);
	assert_false(granted(g, "github.com", 22, 1));
	grants_free(g);
}

/* A lasting grant is preferred to a once grant, which is kept. */
static void
test_prefer_lasting(void **state)
{
	struct grants	*g = grants_create();
	struct host	 h = H("x.example");
	struct grant	 gr;

	(void)state;
	add(g, "x.example", 443, GRANT_ONCE, 0, 0);
	add(g, "x.example", 443, GRANT_SESSION, 0, 0);
	assert_int_equal(grants_match(g, &h, 443, NULL, 1, &gr), 1);
	assert_int_equal(gr.scope, GRANT_SESSION);
	assert_string_equal(gr.id, "g2");
	grants_free(g);
}

/* TTLs: dead at expiry, then removed by grants_expire. */
static void
test_ttl(void **state)
{
	struct grants	*g = grants_create();
	struct grant	 list[4];

	(void)state;
	add(g, "a.example", 443, GRANT_SESSION, 500, 1000);	/* g1: 1500 */
	add(g, "b.example", 443, GRANT_ONCE, 200, 1000);	/* g2: 1200 */
	add(g, "c.example", 443, GRANT_SESSION, 0, 1000);	/* g3: never */
	add(g, "d.example", 443, GRANT_ALWAYS, 300, 1000);	/* g4: 1300 */
	assert_true(granted(g, "b.example", 443, 1199));
	assert_false(granted(g, "b.example", 443, 1200));
	assert_int_equal(grants_expire(g, 1199), 0);
	assert_int_equal(grants_expire(g, 1400), 2);		/* g2, g4 */
	assert_int_equal(grants_list(g, list, 4), 2);
	assert_string_equal(list[0].id, "g1");
	assert_string_equal(list[1].id, "g3");
	assert_true(granted(g, "a.example", 443, 1499));
	assert_int_equal(grants_expire(g, 1500), 1);
	assert_int_equal(grants_list(g, list, 4), 1);
	assert_string_equal(list[0].id, "g3");
	assert_true(granted(g, "c.example", 443, UINT64_MAX - 1));
	grants_free(g);
}

/* Rules first: deny beats a grant, allow needs none, a grant fills in. */
static void
test_decide(void **state)
{
	struct policy		*p = in_force("allow pypi.org\n"
				    "deny upload.pypi.org\n");
	struct policy		*bare = in_force("allow pypi.org\n"
				    "deny upload.pypi.org\n");
	struct grants		*g = policy_grants(p);
	struct policy_decision	 d;

	(void)state;
	add(g, "upload.pypi.org", 443, GRANT_SESSION, 0, 0);	/* g1 */
	add(g, "new.example", 443, GRANT_ONCE, 0, 0);		/* g2 */
	d = decide(p, "upload.pypi.org", 443, 1);
	assert_false(d.allow);
	assert_string_equal(why(&d, "upload.pypi.org"), "denied by rule "
	    "policy:2; a grant cannot override it");
	d = decide(bare, "upload.pypi.org", 443, 1);
	assert_string_equal(why(&d, "upload.pypi.org"), "denied by rule "
	    "policy:2");
	d = decide(p, "pypi.org", 443, 1);
	assert_true(d.allow);
	assert_false(d.granted);
	assert_string_equal(rule(&d), "policy:1");
	assert_string_equal(why(&d, "pypi.org"), "allowed by rule policy:1");
	d = decide(p, "new.example", 443, 1);
	assert_true(d.allow);
	assert_true(d.granted);
	assert_true(d.consume);
	assert_string_equal(rule(&d), "grant g2 (once)");
	assert_string_equal(why(&d, "new.example"), "allowed by grant g2 "
	    "(once)");
	assert_int_equal(grants_consume(g, d.grant.id), 0);
	d = decide(p, "new.example", 443, 2);
	assert_false(d.allow);
	assert_string_equal(why(&d, "new.example"), "no rule matches: "
	    "default deny");
	/* POLICY_CONSUME uses a once grant up as it decides. */
	add(g, "new.example", 443, GRANT_ONCE, 0, 2);		/* g3 */
	assert_true(ask(p, "new.example", 443, NULL, 3, POLICY_CONSUME).allow);
	assert_false(decide(p, "new.example", 443, 3).allow);
	/* No rules: everything denied, grants too. */
	policy_set_rules(bare, NULL);
	d = decide(bare, "pypi.org", 443, 1);
	assert_false(d.allow);
	assert_string_equal(why(&d, "pypi.org"), "no policy loaded");
	policy_free(bare);
	policy_free(p);
}

/*
 * Port 0, a DNS answer: a name an allow rule opens on some port, or a
 * grant does on its port (443 for every port) unless a deny rule closes
 * it; the rule then is the grant's.
 */
static void
test_decide_name(void **state)
{
	struct policy		*p = in_force("allow a.example:8443\n"
				    "deny b.example:22\n");
	struct grants		*g = policy_grants(p);
	struct policy_decision	 d;

	(void)state;
	d = decide(p, "a.example", 0, 1);
	assert_true(d.allow);
	assert_string_equal(rule(&d), "policy:1");
	assert_false(decide(p, "b.example", 0, 1).allow);
	add(g, "b.example", 22, GRANT_SESSION, 0, 0);		/* g1 */
	assert_false(decide(p, "b.example", 0, 1).allow);
	add(g, "b.example", 0, GRANT_SESSION, 0, 0);		/* g2 */
	d = decide(p, "b.example", 0, 1);
	assert_false(d.allow);		/* g1 first: its port is denied */
	assert_int_equal(grants_remove(g, "g1"), 0);
	d = decide(p, "b.example", 0, 1);
	assert_true(d.allow);
	assert_string_equal(rule(&d), "grant g2 (session)");
	add(g, "c.example", 80, GRANT_ONCE, 0, 0);
	assert_true(ask(p, "c.example", 0, NULL, 1, POLICY_CONSUME).allow);
	assert_true(decide(p, "c.example", 80, 1).allow);	/* not used */
	policy_free(p);
}

static int	checks_read;

/* The request: a POST, for the checks. */
static int
post_request(void *arg, struct rules_request *rq)
{
	memset(rq, 0, sizeof *rq);
	rq->method = "POST";
	rq->method_len = 4;
	rq->target = "/up";
	rq->target_len = 3;
	checks_read++;
	return (1);
}

/*
 * POLICY_EVERY: every request must pass, so a host allowed only with
 * request checks needs a grant; port 0 is every port, which only a
 * grant of every port opens (not a rule, not a grant of one port).  A
 * request the checks refuse is let by a grant; the request is read
 * only for a host whose rules check requests.
 */
static void
test_decide_every(void **state)
{
	struct policy		*p = in_force("allow ro.example read-only\n"
				    "allow open.example\n"
				    "deny ro.example:8443\n");
	struct grants		*g = policy_grants(p);
	struct host		 h = H("ro.example");
	struct policy_ask	 q = { .host = &h, .port = 443,
				    .request = post_request };
	struct policy_decision	 d;

	(void)state;
	clock_now = 1;
	assert_true(decide(p, "ro.example", 443, 1).allow);
	assert_false(ask(p, "ro.example", 443, "", 1, POLICY_EVERY).allow);
	assert_true(ask(p, "open.example", 443, "", 1, POLICY_EVERY).allow);
	assert_false(ask(p, "open.example", 0, "", 1, POLICY_EVERY).allow);
	checks_read = 0;
	assert_false(policy_decide(p, &q, &d));
	assert_int_equal(checks_read, 1);
	assert_true(d.checked);
	assert_true(d.ruled);
	assert_true(d.inspect);
	assert_string_equal(why(&d, "ro.example"), d.verdict.why);
	add(g, "ro.example", 443, GRANT_SESSION, 0, 0);
	assert_true(ask(p, "ro.example", 443, "", 1, POLICY_EVERY).allow);
	assert_true(policy_decide(p, &q, &d));
	assert_true(d.granted);
	q.host = &h;
	h = H("open.example");
	checks_read = 0;
	assert_true(policy_decide(p, &q, &d));
	assert_int_equal(checks_read, 0);	/* no checks: not read */
	add(g, "ro.example", 0, GRANT_SESSION, 0, 0);
	assert_true(ask(p, "ro.example", 0, "", 1, POLICY_EVERY).allow);
	assert_false(ask(p, "ro.example", 8443, "", 1, POLICY_EVERY).allow);
	policy_free(p);
}

/* A grant cannot open a special-purpose address; allow-private can. */
static void
test_decide_guard(void **state)
{
	struct policy		*p = in_force("allow 10.1.0.0/16:*\n"
				    "allow-private 10.1.2.0/24\n");
	struct grants		*g = policy_grants(p);
	struct policy_decision	 d;

	(void)state;
	add(g, "169.254.169.254", 80, GRANT_SESSION, 0, 0);
	add(g, "10.9.9.9", 22, GRANT_SESSION, 0, 0);
	d = decide(p, "169.254.169.254", 80, 1);
	assert_false(d.allow);
	assert_string_equal(why(&d, "169.254.169.254"), "169.254.169.254 is "
	    "a special-purpose address (cloud metadata): only an "
	    "allow-private rule lets pinhole connect to it; a grant cannot "
	    "override it");
	d = decide(p, "10.9.9.9", 22, 1);
	assert_false(d.allow);
	assert_false(d.consume);
	d = decide(p, "10.1.5.5", 22, 1);	/* rule, no allow-private */
	assert_false(d.allow);
	d = decide(p, "10.1.2.3", 22, 1);
	assert_true(d.allow);
	/* Without POLICY_GUARD (a connection vets what it dials). */
	assert_true(ask(p, "10.1.5.5", 22, NULL, 1, 0).allow);
	policy_free(p);
}

/* Ask policy_grantable() about host:port. */
static int
grantable(const struct rules *r, const char *host, uint16_t port, char *fix,
    size_t len)
{
	struct host	h = H(host);

	return (policy_grantable(r, &h, port, fix, len));
}

/*
 * No grant lifts a deny rule or a special-purpose address: the fix names
 * the rule to remove, or the allow-private rule to add.  Default deny, a
 * port no rule allows and an address allow-private covers can be granted.
 */
static void
test_grantable(void **state)
{
	struct rules	*r = policy("allow pypi.org\n"
			    "deny upload.pypi.org\n"
			    "deny mixed.example:22\n"
			    "allow-private 10.1.2.0/24\n");
	char		 fix[POLICY_FIX_LEN];

	(void)state;
	assert_int_equal(grantable(r, "upload.pypi.org", 443, fix,
	    sizeof fix), 0);
	assert_string_equal(fix, "denied by the rule 'deny upload.pypi.org' "
	    "(policy:2), which no approval can override: to allow it, that "
	    "rule must be removed from the policy");
	assert_int_equal(grantable(r, "upload.pypi.org", 0, fix, sizeof fix),
	    0);					/* DNS: as port 443 */
	assert_int_equal(grantable(r, "169.254.169.254", 80, fix, sizeof fix),
	    0);
	assert_string_equal(fix, "169.254.169.254 is a special-purpose address "
	    "(cloud metadata), which no approval can open: to allow it, the "
	    "policy needs the rule 'allow-private 169.254.169.254'");
	assert_int_equal(grantable(r, "127.0.0.1", 8080, fix, sizeof fix), 0);
	assert_non_null(strstr(fix, "'allow-private 127.0.0.1'"));
	assert_int_equal(grantable(r, "10.1.2.3", 22, fix, sizeof fix), 1);
	assert_string_equal(fix, "");
	assert_int_equal(grantable(r, "new.example", 443, fix, sizeof fix), 1);
	assert_int_equal(grantable(r, "pypi.org", 8443, fix, sizeof fix), 1);
	assert_int_equal(grantable(r, "mixed.example", 22, fix, sizeof fix), 0);
	assert_int_equal(grantable(r, "mixed.example", 443, fix, sizeof fix),
	    1);
	assert_int_equal(grantable(r, "93.184.216.34", 443, fix, sizeof fix),
	    1);
	assert_int_equal(grantable(NULL, "127.0.0.1", 80, fix, sizeof fix), 1);
	policy_private_fix("192.0.2.7", "this host's own", fix, sizeof fix);
	assert_non_null(strstr(fix, "'allow-private 192.0.2.7'"));
	rules_free(r);
}

/*
 * A host whose every allow rule has constraints is what a grant lifts
 * the checks of, said with the rule; one rule without constraints (or
 * none at all, or a deny) leaves nothing to lift.  An always grant stays
 * until a rule without constraints allows its host.
 */
static void
test_lifts(void **state)
{
	struct rules	*r = policy("allow ro.example read-only\n"
			    "allow two.example:443 methods GET\n"
			    "allow two.example:443 path /a/**\n"
			    "allow open.example:443 read-only\n"
			    "allow open.example:443\n"
			    "deny no.example\n");
	struct rules	*r2 = policy("allow ro.example read-only\n"
			    "allow ro.example:443\n");
	struct grants	*g = grants_create();
	struct host	 h;
	char		 text[POLICY_LIFTS_LEN];

	(void)state;
	h = H("ro.example");
	assert_int_equal(policy_lifts(r, &h, 443, text, sizeof text), 1);
	assert_string_equal(text, "the request checks of the rule "
	    "'allow ro.example read-only' (policy:1)");
	assert_int_equal(policy_lifts(r, &h, 8443, text, sizeof text), 0);
	assert_string_equal(text, "");
	assert_int_equal(policy_lifts(r, &h, 0, text, sizeof text), 0);
	h = H("two.example");
	assert_int_equal(policy_lifts(r, &h, 443, text, sizeof text), 1);
	h = H("open.example");
	assert_int_equal(policy_lifts(r, &h, 443, text, sizeof text), 0);
	h = H("no.example");
	assert_int_equal(policy_lifts(r, &h, 443, text, sizeof text), 0);
	h = H("new.example");
	assert_int_equal(policy_lifts(r, &h, 443, text, sizeof text), 0);
	assert_int_equal(policy_lifts(NULL, &h, 443, text, sizeof text), 0);
	add(g, "ro.example", 443, GRANT_ALWAYS, 0, 0);
	grants_drop_always(g, r);
	assert_true(granted(g, "ro.example", 443, 1));
	grants_drop_always(g, r2);
	assert_false(granted(g, "ro.example", 443, 1));
	grants_free(g);
	rules_free(r2);
	rules_free(r);
}

/*
 * A grant of every port (port 0), asked for a name the DNS refused,
 * serves any port of its host, once or for good, and the DNS (port 0);
 * grants_match_any_port() finds only such grants.  A deny rule on the
 * port still wins.
 */
static void
test_any_port(void **state)
{
	struct policy		*p = in_force("deny far.example:22\n");
	struct grants		*g = policy_grants(p);
	struct policy_decision	 d;
	struct grant		 gr;
	struct host		 h = H("far.example");

	(void)state;
	add(g, "port.example", 8443, GRANT_SESSION, 0, 0);
	h = H("port.example");
	assert_false(grants_match_any_port(g, &h, NULL, 1, &gr));
	gr = add(g, "far.example", 0, GRANT_ONCE, 0, 0);
	assert_int_equal(gr.port, 0);
	h = H("far.example");
	assert_true(grants_match_any_port(g, &h, NULL, 1, &gr));
	assert_true(granted(g, "far.example", 0, 1));		/* DNS */
	assert_true(granted(g, "far.example", 8080, 1));
	assert_true(granted(g, "far.example", 5432, 1));
	assert_false(granted(g, "other.example", 8080, 1));
	d = decide(p, "far.example", 8080, 1);
	assert_true(d.allow);
	assert_true(d.consume);
	assert_int_equal(grants_consume(g, d.grant.id), 0);
	assert_false(granted(g, "far.example", 8080, 1));	/* used up */
	add(g, "far.example", 0, GRANT_SESSION, 0, 0);
	d = decide(p, "far.example", 8080, 1);
	assert_true(d.allow);
	assert_false(d.consume);
	assert_true(decide(p, "far.example", 9090, 1).allow);
	assert_false(decide(p, "far.example", 22, 1).allow);
	policy_free(p);
}

/*
 * The rule text logs and refusals share: FILE:LINE, the origin alone,
 * nothing when no rule decided; a deny rule's text cut as documented;
 * and a refusal that does not fit cut where one snprintf would cut it.
 */
static void
test_rule_text(void **state)
{
	struct rules_verdict	 v = { 0 };
	struct rules		*r = policy("deny upload.pypi.org\n");
	const char		*full = "denied by the rule 'deny upload.pypi.org' "
				    "(policy:1), which no approval can override: "
				    "to allow it, that rule must be removed from "
				    "the policy";
	char			 buf[POLICY_FIX_LEN], text[300];
	size_t			 len;

	(void)state;
	snprintf(buf, sizeof buf, "x");
	policy_rule_text(&v, buf, sizeof buf);
	assert_string_equal(buf, "");
	v.file = "--allow";
	policy_rule_text(&v, buf, sizeof buf);
	assert_string_equal(buf, "--allow");
	v.file = "/etc/pinhole/policy";
	v.line = 12;
	policy_rule_text(&v, buf, 8);
	assert_string_equal(buf, "/etc/pi");
	assert_int_equal(policy_deny_text(&v, buf, sizeof buf),
	    strlen("denied by the rule 'deny' (/etc/pinhole/policy:12)"));
	assert_string_equal(buf, "denied by the rule 'deny' "
	    "(/etc/pinhole/policy:12)");
	memset(text, 'a', sizeof text - 1);
	text[sizeof text - 1] = '\0';
	v.text = text;
	policy_deny_text(&v, buf, sizeof buf);
	assert_int_equal(strlen(buf), strlen("denied by the rule '' "
	    "(/etc/pinhole/policy:12)") + 200);
	for (len = 1; len <= strlen(full) + 1; len += 7) {
		assert_int_equal(grantable(r, "upload.pypi.org", 443, buf, len),
		    0);
		assert_int_equal(strlen(buf), len - 1);
		assert_memory_equal(buf, full, len - 1);
	}
	assert_int_equal(grantable(r, "upload.pypi.org", 443, NULL, 0), 0);
	rules_free(r);
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(test_once),
		cmocka_unit_test(test_once_sandbox),
		cmocka_unit_test(test_once_own),
		cmocka_unit_test(test_session_always),
		cmocka_unit_test(test_prefer_lasting),
		cmocka_unit_test(test_ttl),
		cmocka_unit_test(test_decide),
		cmocka_unit_test(test_decide_guard),
		cmocka_unit_test(test_decide_name),
		cmocka_unit_test(test_decide_every),
		cmocka_unit_test(test_grantable),
		cmocka_unit_test(test_lifts),
		cmocka_unit_test(test_any_port),
		cmocka_unit_test(test_rule_text),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
