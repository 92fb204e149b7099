/*
 * What the gateway reports to the queue (proxy/escalate/escalate.h): the
 * ring of recent blocked attempts, each sandbox's refusals (kept through
 * refused.h), and a sandbox gone.
 */
#include "config.h"

#include <sys/queue.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proxy/escalate/queue.h"
#include "proxy/escalate/refused.h"

/* Find the ring slot of (sandbox, host, port, via). */
static struct escalate_blocked *
escalate_blocked_find(struct escalate *e, const char *sandbox,
    const struct host *h, uint16_t port, const char *via)
{
	struct escalate_blocked	*b;
	size_t			 i;

	for (i = 0; i < e->nblocked; i++) {
		b = &e->blocked[i];
		if (b->port == port && strcmp(b->via, via) == 0 &&
		    strcmp(b->host.text, h->text) == 0 &&
		    strcmp(b->sandbox, sandbox) == 0)
			return (b);
	}
	return (NULL);
}

/* Note a blocked attempt in the ring of recent ones. */
void
escalate_blocked(struct escalate *e, struct sandbox *sb,
    const struct host *h, uint16_t port, const char *via, const char *fix)
{
	struct escalate_blocked	*b;
	const char		*sandbox = sandbox_id(sb);
	time_t			 now = e->now();

	if ((b = escalate_blocked_find(e, sandbox, h, port, via)) == NULL) {
		b = &e->blocked[e->blocked_head];
		e->blocked_head = (e->blocked_head + 1) % ESCALATE_BLOCKED_MAX;
		if (e->nblocked < ESCALATE_BLOCKED_MAX)
			e->nblocked++;
		memset(b, 0, sizeof *b);
		snprintf(b->sandbox, sizeof b->sandbox, "%s", sandbox);
		b->host = *h;
		b->port = port;
		snprintf(b->via, sizeof b->via, "%s", via);
		b->first = now;
	}
	b->count++;
	b->last = now;
	snprintf(b->fix, sizeof b->fix, "%s", fix != NULL ? fix : "");
	escalate_notify(e, ESCALATE_NOTE_BLOCKED, NULL, b);
}

/* Recent blocked attempts, newest (last seen) first. */
const struct escalate_blocked *
escalate_blocked_at(const struct escalate *e, size_t i)
{
	const struct escalate_blocked	*order[ESCALATE_BLOCKED_MAX], *t;
	size_t				 n, j, k;

	if (i >= e->nblocked)
		return (NULL);
	for (n = 0; n < e->nblocked; n++)
		order[n] = &e->blocked[n];
	for (j = 1; j < n; j++) {
		for (k = j; k > 0 && order[k - 1]->last < order[k]->last; k--) {
			t = order[k];
			order[k] = order[k - 1];
			order[k - 1] = t;
		}
	}
	return (order[i]);
}

/* A sandbox met a refusal: keep it, and tell the subscribers. */
void
escalate_refused(struct escalate *e, struct sandbox *sb,
    struct sandbox_refusal *f)
{
	const struct sandbox_refusal	*kept;
	struct escalate_event		 ev;

	snprintf(f->sandbox, sizeof f->sandbox, "%s", sandbox_id(sb));
	f->count = 1;
	f->first = f->last = e->now();
	if ((kept = refused_add(e->refused, sb, f, f->last)) != NULL) {
		f->count = kept->count;
		f->first = kept->first;
	}
	memset(&ev, 0, sizeof ev);
	ev.note = ESCALATE_NOTE_REFUSED;
	ev.refusal = f;
	ev.sandbox = f->sandbox;
	escalate_tell(e, &ev);
}

/* A sandbox's recent refusals, newest first. */
const struct sandbox_refusal *
escalate_refused_at(const struct escalate *e, const char *sandbox, size_t i)
{
	return (refused_at(e->refused, sandbox, i));
}

/* The next of a sandbox's recent refusals. */
const struct sandbox_refusal *
escalate_refused_next(const struct escalate *e, const char *sandbox,
    unsigned long long *below)
{
	return (refused_next(e->refused, sandbox, below));
}

/* A sandbox's newest refusal of host on port, or of its name. */
const struct sandbox_refusal *
escalate_refused_find(const struct escalate *e, const char *sandbox,
    const struct host *h, uint16_t port)
{
	return (refused_find(e->refused, sandbox, h, port));
}

/*
 * A sandbox has gone: forget that it asked, and keep its refusals for
 * the sandboxes attached after newest (0: forget them too).
 */
void
escalate_drop_sandbox(struct escalate *e, const char *sandbox,
    unsigned long long newest)
{
	struct escalate_request	*r;

	refused_drop(e->refused, sandbox, newest);
	TAILQ_FOREACH(r, &e->requests, entry)
		escalate_asker_drop(r, sandbox);
}
