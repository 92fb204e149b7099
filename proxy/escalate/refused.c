/*
 * The refusals each sandbox met lately (proxy/escalate/refused.h): one
 * ring a sandbox, the rings in the order they were last used.
 */
#include "config.h"

#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include "proxy/escalate/refused.h"

/*
 * One sandbox's refusals; seq orders them, 0 for a free entry.  ended is
 * 0 while the sandbox lives, then the newest sandbox id of the gateway
 * when it ended: sandboxes attached after that see its refusals.
 */
struct refused_ring {
	TAILQ_ENTRY(refused_ring)	 entry;
	char				 sandbox[AUDIT_SANDBOX_ID_LEN];
	unsigned long long		 ended;
	struct escalate_refusal		 r[ESCALATE_REFUSED_MAX];
	unsigned long long		 seq[ESCALATE_REFUSED_MAX];
};

struct refused {
	/* Most recently used first. */
	TAILQ_HEAD(refused_ring_q, refused_ring) rings;
	size_t				 n;
	unsigned long long		 seq;
};

/* Create the rings of a queue. */
struct refused *
refused_create(void)
{
	struct refused	*rf;

	if ((rf = calloc(1, sizeof *rf)) == NULL)
		return (NULL);
	TAILQ_INIT(&rf->rings);
	return (rf);
}

/* Free a ring. */
static void
refused_ring_free(struct refused *rf, struct refused_ring *g)
{
	TAILQ_REMOVE(&rf->rings, g, entry);
	rf->n--;
	free(g);
}

/* Free every ring. */
void
refused_free(struct refused *rf)
{
	if (rf == NULL)
		return;
	while (!TAILQ_EMPTY(&rf->rings))
		refused_ring_free(rf, TAILQ_FIRST(&rf->rings));
	free(rf);
}

/* Find a sandbox's ring. */
static struct refused_ring *
refused_ring_find(const struct refused *rf, const char *sandbox)
{
	struct refused_ring	*g;

	TAILQ_FOREACH(g, &rf->rings, entry) {
		if (g->ended == 0 && strcmp(g->sandbox, sandbox) == 0)
			return (g);
	}
	return (NULL);
}

/* A sandbox's number (ids are 1, 2, ... in the order they attached). */
static unsigned long long
refused_number(const char *sandbox)
{
	unsigned long long	 n = 0;

	if (*sandbox < '1' || *sandbox > '9')
		return (0);
	for (; *sandbox >= '0' && *sandbox <= '9'; sandbox++) {
		if (n > (~0ULL - 9) / 10)
			return (0);
		n = n * 10 + (unsigned long long)(*sandbox - '0');
	}
	return (*sandbox == '\0' ? n : 0);
}

/*
 * Does a sandbox (numbered n, 0 if not a number) see this ring: its own,
 * or one of a sandbox that had ended before it attached?
 */
static int
refused_sees(const struct refused_ring *g, const char *sandbox,
    unsigned long long n)
{
	if (g->ended == 0)
		return (strcmp(g->sandbox, sandbox) == 0);
	return (n != 0 && n > g->ended);
}

/* Find or make a sandbox's ring, first in the list; the last may go. */
static struct refused_ring *
refused_ring_get(struct refused *rf, const char *sandbox)
{
	struct refused_ring	*g;

	if ((g = refused_ring_find(rf, sandbox)) != NULL) {
		TAILQ_REMOVE(&rf->rings, g, entry);
		TAILQ_INSERT_HEAD(&rf->rings, g, entry);
		return (g);
	}
	if (rf->n >= ESCALATE_REFUSED_SANDBOXES)
		refused_ring_free(rf, TAILQ_LAST(&rf->rings, refused_ring_q));
	if ((g = calloc(1, sizeof *g)) == NULL)
		return (NULL);
	memcpy(g->sandbox, sandbox, strlen(sandbox) + 1);
	TAILQ_INSERT_HEAD(&rf->rings, g, entry);
	rf->n++;
	return (g);
}

/*
 * Is this entry the same refusal again?  The request refused may be
 * another (a crawler's every path would take the whole ring): the entry
 * keeps the latest.
 */
static int
refused_same(const struct escalate_refusal *a, const struct escalate_refusal *b)
{
	return (a->port == b->port && strcmp(a->host.text, b->host.text) == 0 &&
	    strcmp(a->via, b->via) == 0 && strcmp(a->why, b->why) == 0);
}

/* The entry a refusal goes in: its own, a free one, or the oldest. */
static size_t
refused_slot(const struct refused_ring *g, const struct escalate_refusal *in)
{
	size_t	i, oldest = 0;

	for (i = 0; i < ESCALATE_REFUSED_MAX; i++) {
		if (g->seq[i] != 0 && refused_same(&g->r[i], in))
			return (i);
	}
	for (i = 0; i < ESCALATE_REFUSED_MAX; i++) {
		if (g->seq[i] < g->seq[oldest])
			oldest = i;
	}
	return (oldest);
}

/* Keep a refusal met at now. */
const struct escalate_refusal *
refused_add(struct refused *rf, const struct escalate_refusal *in, time_t now)
{
	struct refused_ring	*g;
	struct escalate_refusal	*r;
	size_t			 i;

	if ((g = refused_ring_get(rf, in->sandbox)) == NULL)
		return (NULL);
	i = refused_slot(g, in);
	r = &g->r[i];
	if (g->seq[i] == 0 || !refused_same(r, in)) {
		*r = *in;
		r->count = 0;
		r->first = now;
	}
	/* The newest request and advice (a policy reloaded since). */
	memcpy(r->what, in->what, sizeof r->what);
	memcpy(r->fix, in->fix, sizeof r->fix);
	r->ask = in->ask;
	r->count++;
	r->last = now;
	g->seq[i] = ++rf->seq;
	return (r);
}

/* The newest refusal a sandbox sees below seq below, or NULL. */
static const struct escalate_refusal *
refused_below(const struct refused *rf, const char *sandbox,
    unsigned long long n, unsigned long long *below)
{
	const struct refused_ring	*g;
	const struct escalate_refusal	*r = NULL;
	unsigned long long		 best = 0;
	size_t				 i;

	TAILQ_FOREACH(g, &rf->rings, entry) {
		if (!refused_sees(g, sandbox, n))
			continue;
		for (i = 0; i < ESCALATE_REFUSED_MAX; i++) {
			if (g->seq[i] > best && g->seq[i] < *below) {
				best = g->seq[i];
				r = &g->r[i];
			}
		}
	}
	*below = best;
	return (r);
}

/* The next of a sandbox's refusals, older than *below (~0 at first). */
const struct escalate_refusal *
refused_next(const struct refused *rf, const char *sandbox,
    unsigned long long *below)
{
	return (refused_below(rf, sandbox, refused_number(sandbox), below));
}

/*
 * A sandbox's refusals, and those of the sandboxes that had ended before
 * it attached, newest first.
 */
const struct escalate_refusal *
refused_at(const struct refused *rf, const char *sandbox, size_t at)
{
	const struct escalate_refusal	*r;
	unsigned long long		 below = ~0ULL;
	size_t				 k;

	for (k = 0; k <= at; k++) {
		if ((r = refused_next(rf, sandbox, &below)) == NULL)
			return (NULL);
	}
	return (r);
}

/* A sandbox's newest refusal of host on port, or of its name: one pass. */
const struct escalate_refusal *
refused_find(const struct refused *rf, const char *sandbox,
    const struct host *h, uint16_t port)
{
	const struct refused_ring	*g;
	const struct escalate_refusal	*r = NULL, *c;
	unsigned long long		 best = 0, n = refused_number(sandbox);
	size_t				 i;

	TAILQ_FOREACH(g, &rf->rings, entry) {
		if (!refused_sees(g, sandbox, n))
			continue;
		for (i = 0; i < ESCALATE_REFUSED_MAX; i++) {
			c = &g->r[i];
			if (g->seq[i] > best &&
			    (c->port == port || c->port == 0) &&
			    strcmp(c->host.text, h->text) == 0) {
				best = g->seq[i];
				r = c;
			}
		}
	}
	return (r);
}

/*
 * A sandbox has ended, the newest of the gateway being numbered newest:
 * keep its refusals for the sandboxes attached later (newest 0: forget
 * them).
 */
void
refused_drop(struct refused *rf, const char *sandbox, unsigned long long newest)
{
	struct refused_ring	*g;

	if ((g = refused_ring_find(rf, sandbox)) == NULL)
		return;
	if (newest == 0 || refused_number(sandbox) == 0)
		refused_ring_free(rf, g);
	else
		g->ended = newest;
}

/* How many sandboxes have a ring. */
size_t
refused_nsandboxes(const struct refused *rf)
{
	return (rf->n);
}
