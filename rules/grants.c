/*
 * Runtime grants: a small table of approvals (people approve them one
 * by one, so a linear scan is plenty).
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
