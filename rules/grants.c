/*
 * Runtime grants: a small table of approvals (people approve them one
 * by one, so a linear scan is plenty), and policy_decide(), which puts
 * the policy file and the grants together.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/grants.h"

struct grants {
	struct grant	*tab;		/* oldest first */
	size_t		 n;
	size_t		 cap;
	unsigned long	 next_id;
};

static const char *const grant_scope_names[] = {
	[GRANT_ONCE] = "once",
	[GRANT_SESSION] = "session",
	[GRANT_ALWAYS] = "always",
};

/* Make an empty table. */
struct grants *
grants_create(void)
{
	return (calloc(1, sizeof(struct grants)));
}

/* Free a table. */
void
grants_free(struct grants *g)
{
	if (g == NULL)
		return;
	free(g->tab);
	free(g);
}

/* Name a scope for messages and logs. */
const char *
grant_scope_name(enum grant_scope s)
{
	if ((unsigned int)s >= sizeof grant_scope_names /
	    sizeof grant_scope_names[0])
		return ("unknown");
	return (grant_scope_names[s]);
}

/* Is this the same host (kind and canonical text)? */
static int
grant_same_host(const struct grant *gr, const struct host *h)
{
	return (gr->host.kind == h->kind &&
	    strcmp(gr->host.text, h->text) == 0);
}

/* Is a grant alive at now? */
static int
grant_live(const struct grant *gr, uint64_t now)
{
	return (gr->expires == 0 || now < gr->expires);
}

/* Find a grant by id; NULL when none has it. */
static struct grant *
grants_find(const struct grants *g, const char *id)
{
	size_t	i;

	for (i = 0; i < g->n; i++) {
		if (strcmp(g->tab[i].id, id) == 0)
			return (&g->tab[i]);
	}
	return (NULL);
}

/* Remove the grant at i, keeping the order of the rest. */
static void
grants_delete(struct grants *g, size_t i)
{
	memmove(&g->tab[i], &g->tab[i + 1], (g->n - i - 1) * sizeof *g->tab);
	g->n--;
}

/* Is gr the grant a new one of scope (and, once, sandbox) replaces? */
static int
grant_same_slot(const struct grant *gr, const struct host *h, uint16_t port,
    enum grant_scope scope, const char *sandbox)
{
	return (gr->port == port && gr->scope == scope &&
	    grant_same_host(gr, h) && (scope != GRANT_ONCE ||
	    strcmp(gr->sandbox, sandbox) == 0));
}

/* Does a grant serve a caller in sandbox?  A once grant, only its own. */
static int
grant_serves(const struct grant *gr, const char *sandbox)
{
	return (gr->scope != GRANT_ONCE || strcmp(gr->sandbox, sandbox) == 0);
}

/* The slot for a new grant: a replaced one, or a new one at the end. */
static struct grant *
grants_slot(struct grants *g, const struct grant *new)
{
	struct grant	*tab;
	size_t		 i, ncap;

	if (g->n == g->cap) {
		ncap = g->cap ? g->cap * 2 : 8;
		if ((tab = reallocarray(g->tab, ncap, sizeof *tab)) == NULL)
			return (NULL);
		g->tab = tab;
		g->cap = ncap;
	}
	for (i = 0; i < g->n; i++) {
		if (grant_same_slot(&g->tab[i], &new->host, new->port,
		    new->scope, new->sandbox)) {
			grants_delete(g, i);
			break;
		}
	}
	return (&g->tab[g->n]);
}

/* Add a grant for host:port. */
int
grants_add(struct grants *g, const struct host *h, uint16_t port,
    enum grant_scope scope, uint64_t ttl_ms, const char *id, const char *who,
    const char *sandbox, uint64_t now, struct grant *out)
{
	struct grant	*gr, new = { .port = port, .scope = scope };

	if ((id != NULL && (id[0] == '\0' ||
	    strlen(id) >= sizeof new.id)) || (sandbox != NULL &&
	    strlen(sandbox) >= sizeof new.sandbox))
		return (-1);
	if (scope == GRANT_ONCE && sandbox != NULL)
		snprintf(new.sandbox, sizeof new.sandbox, "%s", sandbox);
	if (id != NULL)
		snprintf(new.id, sizeof new.id, "%s", id);
	else
		snprintf(new.id, sizeof new.id, "g%lu", ++g->next_id);
	if (id != NULL && grants_find(g, id) != NULL)
		return (-1);
	new.host = *h;
	new.added = now;
	if (ttl_ms == 0 && scope == GRANT_ONCE)
		ttl_ms = GRANTS_ONCE_TTL_MS;
	new.expires = ttl_ms != 0 ? now + ttl_ms : 0;
	snprintf(new.who, sizeof new.who, "%s", who != NULL ? who : "");
	if ((gr = grants_slot(g, &new)) == NULL)
		return (-1);
	*gr = new;
	g->n++;
	if (out != NULL)
		*out = new;
	return (0);
}

/* Find a live grant for host:port for sandbox; lasting scopes first. */
int
grants_match(const struct grants *g, const struct host *h, uint16_t port,
    const char *sandbox, uint64_t now, struct grant *out)
{
	const struct grant	*gr, *best = NULL;
	size_t			 i;

	if (sandbox == NULL)
		sandbox = "";
	for (i = 0; i < g->n; i++) {
		gr = &g->tab[i];
		if ((port != 0 && gr->port != 0 && gr->port != port) ||
		    !grant_live(gr, now) || !grant_same_host(gr, h) ||
		    !grant_serves(gr, sandbox))
			continue;
		if (best == NULL || (best->scope == GRANT_ONCE &&
		    gr->scope != GRANT_ONCE))
			best = gr;
	}
	if (best == NULL)
		return (0);
	*out = *best;
	return (1);
}

/* Find a live grant for every port of host, for sandbox. */
int
grants_match_any_port(const struct grants *g, const struct host *h,
    const char *sandbox, uint64_t now, struct grant *out)
{
	const struct grant	*gr;
	size_t			 i;

	if (sandbox == NULL)
		sandbox = "";
	for (i = 0; i < g->n; i++) {
		gr = &g->tab[i];
		if (gr->port == 0 && grant_live(gr, now) &&
		    grant_same_host(gr, h) && grant_serves(gr, sandbox)) {
			*out = *gr;
			return (1);
		}
	}
	return (0);
}

/* Use up a once grant. */
int
grants_consume(struct grants *g, const char *id)
{
	struct grant	*gr;

	if ((gr = grants_find(g, id)) == NULL)
		return (-1);
	if (gr->scope == GRANT_ONCE)
		grants_delete(g, gr - g->tab);
	return (0);
}

/* Revoke a grant. */
int
grants_remove(struct grants *g, const char *id)
{
	struct grant	*gr;

	if ((gr = grants_find(g, id)) == NULL)
		return (-1);
	grants_delete(g, gr - g->tab);
	return (0);
}

/* Remove the grants expired at now; returns how many. */
size_t
grants_expire(struct grants *g, uint64_t now)
{
	size_t	i = 0, n = 0;

	while (i < g->n) {
		if (grant_live(&g->tab[i], now))
			i++;
		else {
			grants_delete(g, i);
			n++;
		}
	}
	return (n);
}

/* Copy up to max grants out, oldest first. */
size_t
grants_list(const struct grants *g, struct grant *out, size_t max)
{
	size_t	i;

	for (i = 0; i < g->n && i < max; i++)
		out[i] = g->tab[i];
	return (g->n);
}

/*
 * Forget the always grants whose host and port a rule now allows (a rule
 * without constraints: a grant lifts those of the others): one
 * without an end, or any when the grant has a TTL (the rule its approval
 * wrote ends with it).
 */
void
grants_drop_always(struct grants *g, const struct rules *r)
{
	struct rules_verdict	v;
	size_t			i = 0;

	while (i < g->n) {
		if (g->tab[i].scope == GRANT_ALWAYS &&
		    rules_match(r, &g->tab[i].host, g->tab[i].port, &v) &&
		    !v.constrained && (v.until == 0 ||
		    g->tab[i].expires != 0))
			grants_delete(g, i);
		else
			i++;
	}
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

/* Deny a special-purpose address that no allow-private rule covers. */
static int
decide_guard(const struct rules *r, const struct host *h,
    struct policy_decision *d)
{
	enum addr_class	c;

	if ((c = decide_unguarded(r, h)) == ADDR_PUBLIC)
		return (0);
	snprintf(d->why, sizeof d->why, "%s is a special-purpose address "
	    "(%s): only an allow-private rule lets pinhole connect to it%s",
	    h->text, addr_class_name(c), d->granted ?
	    "; a grant cannot override it" : "");
	d->allow = d->consume = 0;
	return (1);
}

/* Decide host:port: deny rule, allow rule, grant, default deny. */
int
policy_decide(const struct rules *r, const struct grants *g,
    const struct host *h, uint16_t port, const char *sandbox, uint64_t now,
    struct policy_decision *d)
{
	int	have_grant;

	memset(d, 0, sizeof *d);
	have_grant = g != NULL && port != 0 &&
	    grants_match(g, h, port, sandbox, now, &d->grant);
	if (port == 0) {
		snprintf(d->why, sizeof d->why, "port 0: default deny");
		return (0);
	}
	d->allow = rules_match(r, h, port, &d->verdict);
	policy_rule_text(&d->verdict, d->rule, sizeof d->rule);
	if (!d->allow && d->verdict.file != NULL) {
		snprintf(d->why, sizeof d->why, "denied by rule %s%s", d->rule,
		    have_grant ? "; a grant cannot override it" : "");
		return (0);
	}
	if (!d->allow && have_grant) {
		d->allow = d->granted = 1;
		d->consume = d->grant.scope == GRANT_ONCE;
		snprintf(d->rule, sizeof d->rule, "grant %s (%s)", d->grant.id,
		    grant_scope_name(d->grant.scope));
		snprintf(d->why, sizeof d->why, "allowed by %s", d->rule);
	} else if (d->allow)
		snprintf(d->why, sizeof d->why, "allowed by rule %s", d->rule);
	else
		snprintf(d->why, sizeof d->why, "%s", d->verdict.why);
	if (d->allow)
		decide_guard(r, h, d);
	return (d->allow);
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
