/*
 * The sandboxes whose refusals are kept (proxy/escalate/refused.h), in
 * the order they last met one; each ring is its sandbox's own.
 */
#include "config.h"

#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include "proxy/escalate/refused.h"

/*
 * A sandbox whose refusals are kept.  While it lives, a reference to it,
 * its ring sb->refused; once it has ended, the ring it left (kept) and
 * ended, the newest sandbox id of the gateway then: sandboxes attached
 * after that see its refusals.
 */
struct refused_ring {
	TAILQ_ENTRY(refused_ring)	 entry;
	struct sandbox			*sb;
	struct sandbox_refusals		*kept;
	unsigned long long		 ended;
};

struct refused {
	/* Most recently used first. */
	TAILQ_HEAD(refused_ring_q, refused_ring) rings;
	size_t				 n;
	unsigned long long		 seq;
	struct sandbox			*none;	/* callers naming none */
};

/* Create the index of a queue. */
struct refused *
refused_create(void)
{
	struct refused	*rf;

	if ((rf = calloc(1, sizeof *rf)) == NULL)
		return (NULL);
	if ((rf->none = sandbox_new("", "", -1, NULL)) == NULL) {
		free(rf);
		return (NULL);
	}
	TAILQ_INIT(&rf->rings);
	return (rf);
}

/* Forget a sandbox's refusals. */
static void
refused_ring_free(struct refused *rf, struct refused_ring *g)
{
	TAILQ_REMOVE(&rf->rings, g, entry);
	rf->n--;
	if (g->sb != NULL) {
		sandbox_refused_clear(g->sb);
		sandbox_unref(g->sb);
	}
	free(g->kept);
	free(g);
}

/* Free the index. */
void
refused_free(struct refused *rf)
{
	if (rf == NULL)
		return;
	while (!TAILQ_EMPTY(&rf->rings))
		refused_ring_free(rf, TAILQ_FIRST(&rf->rings));
	sandbox_unref(rf->none);
	free(rf);
}

/* The ring of an entry: its sandbox's, or the one an ended one left. */
static const struct sandbox_refusals *
refused_ring(const struct refused_ring *g)
{
	return (g->sb != NULL ? g->sb->refused : g->kept);
}

/* Find a live sandbox's entry by its id. */
static struct refused_ring *
refused_ring_find(const struct refused *rf, const char *sandbox)
{
	struct refused_ring	*g;

	TAILQ_FOREACH(g, &rf->rings, entry) {
		if (g->sb != NULL && strcmp(sandbox_id(g->sb), sandbox) == 0)
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
	if (g->sb != NULL)
		return (strcmp(sandbox_id(g->sb), sandbox) == 0);
	return (n != 0 && n > g->ended);
}

/* Find or make a sandbox's entry, first in the list; the last may go. */
static struct refused_ring *
refused_ring_get(struct refused *rf, struct sandbox *sb)
{
	struct refused_ring	*g;

	if ((g = refused_ring_find(rf, sandbox_id(sb))) != NULL) {
		TAILQ_REMOVE(&rf->rings, g, entry);
		TAILQ_INSERT_HEAD(&rf->rings, g, entry);
		return (g);
	}
	if (rf->n >= REFUSED_SANDBOXES)
		refused_ring_free(rf, TAILQ_LAST(&rf->rings, refused_ring_q));
	if ((g = calloc(1, sizeof *g)) == NULL)
		return (NULL);
	g->sb = sandbox_ref(sb);
	TAILQ_INSERT_HEAD(&rf->rings, g, entry);
	rf->n++;
	return (g);
}

/* Keep a refusal a sandbox met at now, in its ring. */
const struct sandbox_refusal *
refused_add(struct refused *rf, struct sandbox *sb,
    const struct sandbox_refusal *in, time_t now)
{
	struct refused_ring	*g;

	if ((g = refused_ring_get(rf, sb != NULL ? sb : rf->none)) == NULL)
		return (NULL);
	return (sandbox_refused_add(g->sb, in, now, ++rf->seq));
}

/* The newest refusal a sandbox sees below seq below, or NULL. */
static const struct sandbox_refusal *
refused_below(const struct refused *rf, const char *sandbox,
    unsigned long long n, unsigned long long *below)
{
	const struct refused_ring	*g;
	const struct sandbox_refusals	*rs;
	const struct sandbox_refusal	*r = NULL;
	unsigned long long		 best = 0;
	size_t				 i;

	TAILQ_FOREACH(g, &rf->rings, entry) {
		if (!refused_sees(g, sandbox, n) ||
		    (rs = refused_ring(g)) == NULL)
			continue;
		for (i = 0; i < SANDBOX_REFUSED_MAX; i++) {
			if (rs->seq[i] > best && rs->seq[i] < *below) {
				best = rs->seq[i];
				r = &rs->r[i];
			}
		}
	}
	*below = best;
	return (r);
}

/* The next of a sandbox's refusals, older than *below (~0 at first). */
const struct sandbox_refusal *
refused_next(const struct refused *rf, const char *sandbox,
    unsigned long long *below)
{
	return (refused_below(rf, sandbox, refused_number(sandbox), below));
}

/*
 * A sandbox's refusals, and those of the sandboxes that had ended before
 * it attached, newest first.
 */
const struct sandbox_refusal *
refused_at(const struct refused *rf, const char *sandbox, size_t at)
{
	const struct sandbox_refusal	*r;
	unsigned long long		 below = ~0ULL;
	size_t				 k;

	for (k = 0; k <= at; k++) {
		if ((r = refused_next(rf, sandbox, &below)) == NULL)
			return (NULL);
	}
	return (r);
}

/* A sandbox's newest refusal of host on port, or of its name: one pass. */
const struct sandbox_refusal *
refused_find(const struct refused *rf, const char *sandbox,
    const struct host *h, uint16_t port)
{
	const struct refused_ring	*g;
	const struct sandbox_refusals	*rs;
	const struct sandbox_refusal	*r = NULL, *c;
	unsigned long long		 best = 0, n = refused_number(sandbox);
	size_t				 i;

	TAILQ_FOREACH(g, &rf->rings, entry) {
		if (!refused_sees(g, sandbox, n) ||
		    (rs = refused_ring(g)) == NULL)
			continue;
		for (i = 0; i < SANDBOX_REFUSED_MAX; i++) {
			c = &rs->r[i];
			if (rs->seq[i] > best &&
			    (c->port == port || c->port == 0) &&
			    strcmp(c->host.text, h->text) == 0) {
				best = rs->seq[i];
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
	if (newest == 0 || refused_number(sandbox) == 0) {
		refused_ring_free(rf, g);
		return;
	}
	g->kept = g->sb->refused;	/* the ring stays, the sandbox goes */
	g->sb->refused = NULL;
	sandbox_unref(g->sb);
	g->sb = NULL;
	g->ended = newest;
}

/* How many sandboxes have a ring. */
size_t
refused_nsandboxes(const struct refused *rf)
{
	return (rf->n);
}
