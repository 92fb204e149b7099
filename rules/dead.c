/*
 * Rules that cannot take effect.  A deny always wins, so an allow rule
 * whose host a deny covers on some of its ports never allows there.  Any
 * allow rule lets a request through, so a rule with constraints whose
 * host an allow rule without constraints covers on some of its ports
 * checks nothing there: its constraints never apply.  A policy written
 * one way and read another (README once allowed a push its comment said
 * was never allowed) is said at load, by check and by allow.
 *
 * Only rules that always hold are counted against another (none with an
 * "until"): a rule that ends leaves the other in force.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rules/policy.h"
#include "rules/rules-int.h"

#define DEAD_RANGES	64		/* port ranges kept of one rule */
#define DEAD_DENIES	64		/* deny rules tried one by one */

/* What the walk over the rules that cover one rule finds. */
struct dead_walk {
	const struct rule	*b;		/* the rule looked at */
	time_t			 now;
	struct port_range	 hit[DEAD_RANGES];	/* its ports taken */
	size_t			 nhit;
	const struct rule	*by;		/* the first that takes one */
};

/* Does rule a take rule b's place where they share ports? */
static int
dead_shadows(const struct rule *a, const struct rule *b, time_t now)
{
	if (a == b || a->until != 0 || (b->until != 0 && b->until <= now))
		return (0);
	if (a->action == RULE_DENY)
		return (1);
	/* No wildcard allows the host's loopback. */
	if (a->kind == TARGET_WILD && b->kind == TARGET_NAME &&
	    strcmp(b->target, RULES_HOST_LOOPBACK) == 0)
		return (0);
	return (a->action == RULE_ALLOW && a->req == NULL && b->req != NULL);
}

/* Note the ports two rules share. */
static void
dead_overlap(struct dead_walk *w, const struct rule *a)
{
	const struct rule	*b = w->b;
	size_t			 i, k;
	uint16_t		 lo, hi;

	for (i = 0; i < b->nports; i++) {
		for (k = 0; k < a->nports; k++) {
			lo = b->ports[i].lo > a->ports[k].lo ? b->ports[i].lo :
			    a->ports[k].lo;
			hi = b->ports[i].hi < a->ports[k].hi ? b->ports[i].hi :
			    a->ports[k].hi;
			if (lo > hi || w->nhit == DEAD_RANGES)
				continue;
			w->hit[w->nhit].lo = lo;
			w->hit[w->nhit++].hi = hi;
			/* A deny is named before an allow, then load order. */
			if (w->by == NULL || (a->action == RULE_DENY &&
			    w->by->action != RULE_DENY) ||
			    (a->action == w->by->action && a->seq < w->by->seq))
				w->by = a;
		}
	}
}

/* Look at one list of rules covering the rule's target. */
static void
dead_list(const struct rule *a, void *arg)
{
	struct dead_walk	*w = arg;

	for (; a != NULL; a = a->next) {
		if (dead_shadows(a, w->b, w->now))
			dead_overlap(w, a);
	}
}

static int
range_cmp(const void *x, const void *y)
{
	const struct port_range	*a = x, *b = y;

	return (a->lo < b->lo ? -1 : a->lo > b->lo);
}

/* Sort ranges and merge the ones that touch; returns how many remain. */
static size_t
ranges_merge(struct port_range *r, size_t n)
{
	size_t	i, k = 0;

	if (n == 0)
		return (0);
	qsort(r, n, sizeof *r, range_cmp);
	for (i = 1; i < n; i++) {
		if ((unsigned int)r[i].lo <= (unsigned int)r[k].hi + 1) {
			if (r[i].hi > r[k].hi)
				r[k].hi = r[i].hi;
		} else
			r[++k] = r[i];
	}
	return (k + 1);
}

/* How many ports merged ranges hold. */
static unsigned long
ranges_size(const struct port_range *r, size_t n)
{
	unsigned long	total = 0;
	size_t		i;

	for (i = 0; i < n; i++)
		total += (unsigned long)r[i].hi - r[i].lo + 1;
	return (total);
}

/* Write ranges as a policy writes them: "443", "22,8000-8100". */
static void
ranges_text(const struct port_range *r, size_t n, char *buf, size_t len)
{
	size_t	i, used = 0;
	int	w;

	buf[0] = '\0';
	for (i = 0; i < n && used < len; i++) {
		if (r[i].lo == r[i].hi)
			w = snprintf(buf + used, len - used, "%s%u",
			    i ? "," : "", r[i].lo);
		else
			w = snprintf(buf + used, len - used, "%s%u-%u",
			    i ? "," : "", r[i].lo, r[i].hi);
		if (w < 0)
			return;
		used += (size_t)w;
	}
}

/* Fill a verdict-like record of where a rule is. */
static void
dead_where(struct rules_verdict *v, const struct rule *rule)
{
	memset(v, 0, sizeof *v);
	v->allow = rule->action == RULE_ALLOW;
	v->file = rule->file;
	v->line = rule->line;
	v->text = rule->text;
	v->layer = rule->layer;
}

/* Is this allow rule dead somewhere?  Fills d when it is. */
static int
dead_rule(const struct rules *r, const struct rule *b, time_t now,
    struct rules_dead *d)
{
	struct dead_walk	w = { .b = b, .now = now };
	struct port_range	own[DEAD_RANGES];
	size_t			nown;

	rules_covering(r, b, dead_list, &w);
	if (w.by == NULL)
		return (0);
	for (nown = 0; nown < b->nports && nown < DEAD_RANGES; nown++)
		own[nown] = b->ports[nown];
	nown = ranges_merge(own, nown);
	w.nhit = ranges_merge(w.hit, w.nhit);
	memset(d, 0, sizeof *d);
	dead_where(&d->rule, b);
	dead_where(&d->by, w.by);
	d->by_deny = w.by->action == RULE_DENY;
	d->all = ranges_size(w.hit, w.nhit) >= ranges_size(own, nown);
	ranges_text(w.hit, w.nhit, d->ports, sizeof d->ports);
	return (1);
}

/* Does a's target cover all of b's? */
static int
dead_covers(const struct rule *a, const struct rule *b)
{
	const char	*an = a->target, *bn = b->target;
	size_t		 na, nb;

	if (a->kind == TARGET_ADDR || b->kind == TARGET_ADDR)
		return (a->kind == b->kind && a->alen == b->alen &&
		    a->plen <= b->plen && addr_in(b->target, a->target,
		    a->alen, a->plen));
	if (a->kind == TARGET_NAME)
		return (b->kind == TARGET_NAME && strcmp(an, bn) == 0);
	na = strlen(an);
	nb = strlen(bn);
	if (b->kind == TARGET_WILD && na == nb)
		return (strcmp(an, bn) == 0);
	return (nb > na && bn[nb - na - 1] == '.' &&
	    strcmp(bn + nb - na, an) == 0);
}

/* The deny rules of a policy, when they are few; -1 when many. */
static int
dead_denies(const struct rules *r, const struct rule **out, size_t *n)
{
	const struct rule	*a;

	*n = 0;
	for (a = r->first; a != NULL; a = a->order) {
		if (a->action != RULE_DENY || a->until != 0)
			continue;
		if (*n == DEAD_DENIES)
			return (-1);
		out[(*n)++] = a;
	}
	return (0);
}

/*
 * Might an allow rule without constraints be dead: does one of the few
 * deny rules cover its target?  (Many deny rules: look them up.)
 */
static int
dead_maybe(const struct rule *b, const struct rule **denies, size_t n,
    int many)
{
	size_t	i;

	if (b->req != NULL || many)
		return (1);
	for (i = 0; i < n; i++) {
		if (dead_covers(denies[i], b))
			return (1);
	}
	return (0);
}

/*
 * Call fn with every rule that cannot take effect, in load order.  A
 * policy's few deny rules are tried against each rule directly, and
 * only a rule they may cover, or one with constraints, is looked up.
 */
size_t
rules_dead(const struct rules *r, int (*fn)(const struct rules_dead *,
    void *), void *arg)
{
	const struct rule	*b, *denies[DEAD_DENIES];
	struct rules_dead	 d;
	time_t			 now = time(NULL);
	size_t			 n = 0, nd;
	int			 many;

	many = dead_denies(r, denies, &nd) == -1;
	for (b = r->first; b != NULL; b = b->order) {
		if (b->action != RULE_ALLOW || !dead_maybe(b, denies, nd,
		    many) || !dead_rule(r, b, now, &d))
			continue;
		n++;
		if (fn != NULL && fn(&d, arg) == -1)
			break;
	}
	return (n);
}

/* One sentence for a person, FILE:LINE first. */
void
rules_dead_text(const struct rules_dead *d, char *buf, size_t len)
{
	char	where[512], by[512], ports[160];

	policy_rule_text(&d->rule, where, sizeof where);
	policy_rule_text(&d->by, by, sizeof by);
	if (d->all)
		snprintf(ports, sizeof ports, "on any of its ports");
	else
		snprintf(ports, sizeof ports, "on port%s %s",
		    strpbrk(d->ports, ",-") != NULL ? "s" : "", d->ports);
	if (d->by_deny)
		snprintf(buf, len, "%s: '%s' never allows anything %s: '%s' "
		    "(%s) denies it there, and a deny always wins", where,
		    d->rule.text, ports, d->by.text, by);
	else
		snprintf(buf, len, "%s: the constraints of '%s' never apply "
		    "%s: '%s' (%s) allows it there without constraints, and a "
		    "request any allow rule lets through is allowed", where,
		    d->rule.text, ports, d->by.text, by);
}
