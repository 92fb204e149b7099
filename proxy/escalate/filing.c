/*
 * Filing a request for a host (proxy/escalate/escalate.h): a new one, or
 * one joined across sandboxes, each sandbox that asked kept with the id,
 * reason and time it was given; finding a request as a sandbox sees it;
 * and what no grant can open.
 */
#include "config.h"

#include <sys/queue.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/metrics.h"
#include "proxy/escalate/queue.h"
#include "proxy/escalate/refused.h"

/* Refill the token bucket and take a token if there is one. */
static int
escalate_take_token(struct escalate *e)
{
	time_t	now = e->now();

	if (now > e->refilled) {
		e->tokens += (double)(now - e->refilled) * ESCALATE_RATE / 60.0;
		if (e->tokens > ESCALATE_BURST)
			e->tokens = ESCALATE_BURST;
	}
	e->refilled = now;
	if (e->tokens < 1.0)
		return (-1);
	e->tokens -= 1.0;
	return (0);
}

/* Find the open request for (host, port). */
static struct escalate_request *
escalate_find_open(struct escalate *e, const struct host *h, uint16_t port)
{
	struct escalate_request	*r;

	TAILQ_FOREACH(r, &e->requests, entry) {
		if (r->state == ESCALATE_PENDING && r->port == port &&
		    strcmp(r->host.text, h->text) == 0)
			return (r);
	}
	return (NULL);
}

/* Draw an id no kept request has. */
int
escalate_new_id(struct escalate *e, char *id)
{
	int	tries;

	for (tries = 0; tries < 32; tries++) {
		id[0] = 'r';
		if (escalate_random_hex(id + 1, ESCALATE_ID_BYTES) == -1)
			return (-1);
		if (escalate_find(e, id) == NULL)
			return (0);
	}
	return (-1);
}

/* Name a request by one sandbox that asked. */
void
escalate_request_name(struct escalate_request *r,
    const struct escalate_asker *a)
{
	memcpy(r->sandbox, a->sandbox, sizeof r->sandbox);
	memcpy(r->cmd, a->cmd, sizeof r->cmd);
	r->pid = a->pid;
}

/* The asker entry of a sandbox ("": none); NULL when it did not ask. */
struct escalate_asker *
escalate_asker_find(const struct escalate_request *r, const char *sandbox)
{
	size_t	i;

	for (i = 0; i < r->naskers; i++) {
		if (strcmp(r->askers[i].sandbox, sandbox) == 0)
			return (&r->askers[i]);
	}
	return (NULL);
}

/* Did this sandbox ask for the request? */
int
escalate_asked(const struct escalate_request *r, const char *sandbox)
{
	return (escalate_asker_find(r, sandbox) != NULL);
}

/*
 * Note that a sandbox (NULL: none), which had not, asked for a request:
 * id is the one it is given, reason (len bytes, cleaned here) and via
 * its own.  Returns the asker, or NULL out of memory.
 */
static struct escalate_asker *
escalate_asker_add(struct escalate *e, struct escalate_request *r,
    struct sandbox *sb, const char *id, const char *reason,
    size_t len, const char *via)
{
	struct escalate_asker	*a;

	if ((a = reallocarray(r->askers, r->naskers + 1, sizeof *a)) == NULL)
		return (NULL);
	r->askers = a;
	a = &r->askers[r->naskers++];
	memset(a, 0, sizeof *a);
	a->pid = -1;
	a->sb = sandbox_ref(sb);
	if (sb != NULL) {
		snprintf(a->sandbox, sizeof a->sandbox, "%s", sb->ident.id);
		snprintf(a->cmd, sizeof a->cmd, "%s", sb->ident.cmd);
		a->pid = sb->ident.pid;
	}
	memcpy(a->id, id, sizeof a->id);
	escalate_clean(reason, len, ESCALATE_REASON_MAX, a->reason,
	    sizeof a->reason);
	snprintf(a->via, sizeof a->via, "%s", via);
	a->since = e->now();
	return (a);
}

/* The request as a sandbox that asked knows it. */
const struct escalate_asker *
escalate_asker_of(const struct escalate_request *r, const char *sandbox)
{
	return (escalate_asker_find(r, sandbox));
}

/* The id a sandbox knows the request by. */
const char *
escalate_id_for(const struct escalate_request *r, const char *sandbox)
{
	const struct escalate_asker	*a = escalate_asker_find(r, sandbox);

	return (a != NULL ? a->id : r->id);
}

/* Forget that a sandbox asked: it has gone. */
void
escalate_asker_drop(struct escalate_request *r, const char *sandbox)
{
	struct escalate_asker	*a;
	size_t			 i;

	if ((a = escalate_asker_find(r, sandbox)) == NULL)
		return;
	sandbox_unref(a->sb);
	i = a - r->askers;
	memmove(a, a + 1, (r->naskers - i - 1) * sizeof *a);
	r->naskers--;
	/* An open request names one that can still be answered. */
	if (r->state == ESCALATE_PENDING && r->naskers > 0 &&
	    strcmp(r->sandbox, sandbox) == 0)
		escalate_request_name(r, &r->askers[0]);
}

/* Tell whether a request was filed from this sandbox (NULL: none). */
static int
escalate_request_from(const struct escalate_request *r,
    struct sandbox *sb)
{
	return (strcmp(r->sandbox, sandbox_id(sb)) == 0);
}

/* Make a new pending request. */
static struct escalate_request *
escalate_request_new(struct escalate *e, const struct host *h, uint16_t port,
    const char *reason, size_t len, const char *via,
    struct sandbox *sb)
{
	struct escalate_request	*r;

	if ((r = calloc(1, sizeof *r)) == NULL)
		return (NULL);
	if (escalate_new_id(e, r->id) == -1 ||
	    escalate_asker_add(e, r, sb, r->id, reason, len, via) == NULL) {
		free(r->askers);
		free(r);
		return (NULL);
	}
	r->host = *h;
	r->port = port;
	memcpy(r->reason, r->askers[0].reason, sizeof r->reason);
	snprintf(r->via, sizeof r->via, "%s", via);
	escalate_request_name(r, &r->askers[0]);
	r->since = r->askers[0].since;
	r->count = 1;
	TAILQ_INIT(&r->waiters);
	TAILQ_INSERT_TAIL(&e->requests, r, entry);
	e->npending++;
	metrics_set(e->metrics, MG_PENDING, e->npending);
	return (r);
}

/*
 * Say what a grant would lift, when the policy allows the host only with
 * request checks: which rule's, and what they refused the sandbox last.
 */
void
escalate_lifts_for(struct escalate *e, const struct host *h, uint16_t port,
    const char *sandbox, char *buf, size_t len)
{
	const struct sandbox_refusal	*f;
	char				 text[POLICY_LIFTS_LEN];

	buf[0] = '\0';
	if (e->policy == NULL || !policy_lifts(policy_rules(e->policy), h,
	    port, text, sizeof text))
		return;
	f = refused_find(e->refused, sandbox, h, port);
	if (f != NULL && f->port == port && f->what[0] != '\0')
		snprintf(buf, len, "%s, which refused %.100s: %.100s", text,
		    f->what, f->why);
	else
		snprintf(buf, len, "%s", text);
}

/* May a new request be filed now?  NEW when it may. */
static enum escalate_filed
escalate_may_file(struct escalate *e)
{
	if (e->npending >= ESCALATE_PENDING_MAX)
		return (ESCALATE_FILED_FULL);
	if (escalate_take_token(e) == -1)
		return (ESCALATE_FILED_RATE);
	return (ESCALATE_FILED_NEW);
}

/*
 * A sandbox asks for an open request: again (SAME), or, another's, as a
 * new request of its own (JOINED), limited as a new one is and given an
 * id of its own, so that it learns nothing of the other's.
 */
static enum escalate_filed
escalate_join(struct escalate *e, struct escalate_request *r,
    const char *reason, size_t len, const char *via,
    struct sandbox *sb)
{
	struct escalate_asker	*a;
	struct escalate_event	 ev;
	enum escalate_filed	 f;
	char			 id[ESCALATE_ID_LEN];

	if ((a = escalate_asker_find(r, sandbox_id(sb))) != NULL) {
		r->count++;
		if (!escalate_request_from(r, sb))
			r->others++;
		if (a->reason[0] == '\0' && len > 0)
			escalate_clean(reason, len, ESCALATE_REASON_MAX,
			    a->reason, sizeof a->reason);
		if (r->reason[0] == '\0')
			memcpy(r->reason, a->reason, sizeof r->reason);
		escalate_notify(e, ESCALATE_NOTE_REQUEST, r, NULL);
		return (ESCALATE_FILED_SAME);
	}
	if ((f = escalate_may_file(e)) != ESCALATE_FILED_NEW)
		return (f);
	if (escalate_new_id(e, id) == -1 ||
	    (a = escalate_asker_add(e, r, sb, id, reason, len, via)) == NULL)
		return (ESCALATE_FILED_NOMEM);
	r->count++;
	r->others++;
	if (r->reason[0] == '\0')
		memcpy(r->reason, a->reason, sizeof r->reason);
	memset(&ev, 0, sizeof ev);
	ev.note = ESCALATE_NOTE_REQUEST;
	ev.request = r;
	ev.asker = a;
	escalate_tell(e, &ev);
	return (ESCALATE_FILED_JOINED);
}

/* File a request, or join the open one for the same (host, port). */
enum escalate_filed
escalate_file(struct escalate *e, const struct host *h, uint16_t port,
    const char *reason, size_t len, const char *via,
    struct sandbox *sb, struct escalate_request **out)
{
	struct escalate_request	*r;
	enum escalate_filed	 f;

	*out = NULL;
	escalate_sweep(e);
	if (escalate_fixed(e, sandbox_id(sb), h, port, NULL, 0))
		return (ESCALATE_FILED_FIXED);
	if ((r = escalate_find_open(e, h, port)) != NULL) {
		if ((f = escalate_join(e, r, reason, len, via, sb)) ==
		    ESCALATE_FILED_SAME || f == ESCALATE_FILED_JOINED)
			*out = r;
		return (f);
	}
	if ((f = escalate_may_file(e)) != ESCALATE_FILED_NEW)
		return (f);
	if ((r = escalate_request_new(e, h, port, reason, len, via,
	    sb)) == NULL)
		return (ESCALATE_FILED_NOMEM);
	escalate_lifts_for(e, &r->host, r->port, r->sandbox, r->lifts,
	    sizeof r->lifts);
	*out = r;
	escalate_audit(e, "request", r, r->reason[0] != '\0' ? r->reason :
	    NULL);
	escalate_notify(e, ESCALATE_NOTE_REQUEST, r, NULL);
	return (ESCALATE_FILED_NEW);
}

/* Is (host, port) beyond any grant? */
int
escalate_fixed(struct escalate *e, const char *sandbox, const struct host *h,
    uint16_t port, char *fix, size_t len)
{
	const struct escalate_blocked	*b;
	char				 buf[ESCALATE_FIX_LEN];
	size_t				 i;

	if (fix == NULL || len == 0) {
		fix = buf;
		len = sizeof buf;
	}
	if (e->policy != NULL && !policy_grantable(policy_rules(e->policy),
	    h, port, fix, len))
		return (1);
	for (i = 0; i < e->nblocked; i++) {
		b = &e->blocked[i];
		if (b->fix[0] != '\0' && b->port == port &&
		    strcmp(b->host.text, h->text) == 0 && (sandbox == NULL ||
		    strcmp(b->sandbox, sandbox) == 0)) {
			snprintf(fix, len, "%s", b->fix);
			return (1);
		}
	}
	return (0);
}

/* Does a request go by this id, its own or one a sandbox was given? */
static int
escalate_goes_by(const struct escalate_request *r, const char *id)
{
	size_t	i;

	if (strcmp(r->id, id) == 0)
		return (1);
	for (i = 0; i < r->naskers; i++) {
		if (strcmp(r->askers[i].id, id) == 0)
			return (1);
	}
	return (0);
}

/* Find a kept request by id. */
struct escalate_request *
escalate_find(struct escalate *e, const char *id)
{
	struct escalate_request	*r;

	TAILQ_FOREACH(r, &e->requests, entry) {
		if (escalate_goes_by(r, id))
			return (r);
	}
	return (NULL);
}

/*
 * Find a request as a sandbox sees it: the id it was given stays with
 * its ask, when a once approval for another moves that to a new request.
 */
struct escalate_request *
escalate_find_for(struct escalate *e, const char *id, const char *sandbox)
{
	struct escalate_request		*r;
	const struct escalate_asker	*a;

	TAILQ_FOREACH(r, &e->requests, entry) {
		if ((a = escalate_asker_find(r, sandbox)) != NULL &&
		    strcmp(a->id, id) == 0)
			return (r);
	}
	return (NULL);
}

/* Requests, oldest first. */
const struct escalate_request *
escalate_next(const struct escalate *e, const struct escalate_request *prev)
{
	if (prev == NULL)
		return (TAILQ_FIRST(&e->requests));
	return (TAILQ_NEXT(prev, entry));
}

/* How many requests are open. */
size_t
escalate_npending(const struct escalate *e)
{
	return (e->npending);
}
