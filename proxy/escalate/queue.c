/*
 * The escalation queue of one gateway session (proxy/escalate/escalate.h):
 * its life and its clock, telling subscribers, the audit lines (written
 * here, once each decision) and expiry.
 * Its inside is queue.h; filing is filing.c, deciding approve.c, waiting
 * waiter.c, what the gateway reports blocked.c, the words text.c.
 */
#include "config.h"

#include <sys/queue.h>
#include <sys/random.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "lib/metrics.h"
#include "proxy/audit/audit.h"
#include "proxy/escalate/queue.h"
#include "proxy/escalate/refused.h"

#define ESCALATE_SWEEP_EVERY	5	/* s between timer sweeps */

static time_t
escalate_time(void)
{
	return (time(NULL));
}

/* Fill buf with n random bytes as 2n hex digits. */
int
escalate_random_hex(char *buf, size_t n)
{
	uint8_t	r[32];
	size_t	i;

	if (n > sizeof r || getrandom(r, n, 0) != (ssize_t)n)
		return (-1);
	for (i = 0; i < n; i++)
		snprintf(buf + 2 * i, 3, "%02x", r[i]);
	return (0);
}

/* Sweep expired requests on a timer, so expiry is told promptly. */
static void
escalate_sweep_cb(evutil_socket_t fd, short what, void *arg)
{
	escalate_sweep(arg);
}

/* Create the queue of a session. */
struct escalate *
escalate_create(struct event_base *base, const char *session,
    struct audit *audit)
{
	struct escalate	*e;
	struct timeval	 tv = { ESCALATE_SWEEP_EVERY, 0 };

	if ((e = calloc(1, sizeof *e)) == NULL)
		return (NULL);
	if ((e->refused = refused_create()) == NULL) {
		free(e);
		return (NULL);
	}
	e->base = base;
	e->audit = audit;
	e->now = escalate_time;
	TAILQ_INIT(&e->requests);
	TAILQ_INIT(&e->subs);
	if (session != NULL)
		snprintf(e->session, sizeof e->session, "%s", session);
	else if (escalate_random_hex(e->session, 4) == -1)
		goto fail;
	e->tokens = ESCALATE_BURST;
	e->refilled = e->now();
	if (base != NULL) {
		e->sweeper = event_new(base, -1, EV_PERSIST, escalate_sweep_cb,
		    e);
		if (e->sweeper == NULL || event_add(e->sweeper, &tv) == -1)
			goto fail;
	}
	return (e);
fail:
	escalate_free(e);
	return (NULL);
}

/* Free a waiter's timer and the waiter. */
void
escalate_waiter_free(struct escalate_waiter *w)
{
	TAILQ_REMOVE(&w->req->waiters, w, entry);
	if (w->timer != NULL)
		event_free(w->timer);
	free(w);
}

/* Free a request; its waiters are gone without a call. */
static void
escalate_request_free(struct escalate *e, struct escalate_request *r)
{
	struct escalate_waiter	*w;
	size_t			 i;

	while ((w = TAILQ_FIRST(&r->waiters)) != NULL)
		escalate_waiter_free(w);
	TAILQ_REMOVE(&e->requests, r, entry);
	if (r->state == ESCALATE_PENDING)
		e->npending--;
	else
		e->ndecided--;
	metrics_set(e->metrics, MG_PENDING, e->npending);
	for (i = 0; i < r->naskers; i++)
		sandbox_unref(r->askers[i].sb);
	free(r->askers);
	free(r);
}

/* Free the queue, its requests, waiters and subscriptions. */
void
escalate_free(struct escalate *e)
{
	struct escalate_sub	*s;

	if (e == NULL)
		return;
	while (!TAILQ_EMPTY(&e->requests))
		escalate_request_free(e, TAILQ_FIRST(&e->requests));
	while ((s = TAILQ_FIRST(&e->subs)) != NULL) {
		TAILQ_REMOVE(&e->subs, s, entry);
		free(s);
	}
	if (e->sweeper != NULL)
		event_free(e->sweeper);
	refused_free(e->refused);
	free(e);
}

/* Decide by the owner's policy. */
void
escalate_set_policy(struct escalate *e, struct policy *p)
{
	e->policy = p;
}

/* The policy decided by, or NULL. */
struct policy *
escalate_policy(const struct escalate *e)
{
	return (e->policy);
}

/* Set the audit log. */
void
escalate_set_audit(struct escalate *e, struct audit *audit)
{
	e->audit = audit;
}

/* Count pending requests and grants in m (NULL: not). */
void
escalate_set_metrics(struct escalate *e, struct metrics *m)
{
	e->metrics = m;
	metrics_set(m, MG_PENDING, e->npending);
}

/* Set the clock (tests). */
void
escalate_set_clock(struct escalate *e, time_t (*now)(void))
{
	e->now = now;
	e->refilled = now();
}

/* The session id. */
const char *
escalate_session(const struct escalate *e)
{
	return (e->session);
}

/* Tell every subscriber of an event. */
void
escalate_tell(struct escalate *e, const struct escalate_event *ev)
{
	struct escalate_sub	*s, *next;

	TAILQ_FOREACH_SAFE(s, &e->subs, entry, next)
		s->cb(ev, s->arg);
}

/* Tell every subscriber of a request or a blocked attempt. */
void
escalate_notify(struct escalate *e, enum escalate_note n,
    const struct escalate_request *r, const struct escalate_blocked *b)
{
	struct escalate_event	ev;

	memset(&ev, 0, sizeof ev);
	ev.note = n;
	ev.request = r;
	ev.blocked = b;
	escalate_tell(e, &ev);
}

/* Write one audit event about a request. */
void
escalate_audit(struct escalate *e, const char *event,
    const struct escalate_request *r, const char *reason)
{
	struct audit_event	ev;

	if (e->audit == NULL)
		return;
	audit_event_init(&ev);
	ev.event = event;
	ev.session = e->session;
	ev.request_id = r->id;
	ev.host = r->host.text;
	ev.port = r->port;
	ev.reason = reason;
	if (r->sandbox[0] != '\0') {
		ev.sandbox = r->sandbox;
		ev.cmd = r->cmd;
		ev.pid = r->pid;
	}
	if (strcmp(event, "request") == 0)
		ev.via = r->via;
	if (r->state == ESCALATE_APPROVED || r->state == ESCALATE_DENIED)
		ev.verdict = r->state == ESCALATE_APPROVED ? "allow" : "deny";
	if (r->scope != ESCALATE_SCOPE_NONE)
		ev.scope = escalate_scope_name(r->scope);
	if (r->state == ESCALATE_APPROVED && r->ttl > 0)
		ev.ttl = r->ttl;
	if (r->by[0] != '\0')
		ev.by = r->by;
	if (r->decider[0] != '\0')
		ev.decider = r->decider;
	if (strcmp(event, "request") == 0 && r->lifts[0] != '\0')
		ev.detail = r->lifts;
	else if (strcmp(event, "grant") == 0 && r->written[0] != '\0')
		ev.detail = r->written;
	audit_write(e->audit, &ev);
}

/* Wake every waiter of a request (each runs once, then is gone). */
static void
escalate_wake(struct escalate_request *r, int timed_out)
{
	struct escalate_waiter	*w;
	escalate_wait_cb	*cb;
	void			*arg;

	while ((w = TAILQ_FIRST(&r->waiters)) != NULL) {
		cb = w->cb;
		arg = w->arg;
		escalate_waiter_free(w);
		cb(r, timed_out, arg);
	}
}

/* Forget the oldest decided requests beyond what is kept. */
void
escalate_trim(struct escalate *e)
{
	struct escalate_request	*r, *next;

	TAILQ_FOREACH_SAFE(r, &e->requests, entry, next) {
		if (e->ndecided <= ESCALATE_DECIDED_MAX)
			break;
		if (r->state != ESCALATE_PENDING &&
		    (r->state != ESCALATE_APPROVED || r->ttl == 0))
			escalate_request_free(e, r);
	}
}

/* Move a pending request to a decided state; tell everyone. */
void
escalate_settle(struct escalate *e, struct escalate_request *r,
    enum escalate_state st)
{
	r->state = st;
	r->decided = e->now();
	e->npending--;
	e->ndecided++;
	metrics_set(e->metrics, MG_PENDING, e->npending);
	escalate_notify(e, ESCALATE_NOTE_DECIDED, r, NULL);
	escalate_wake(r, 0);
}

/* Expire unanswered requests and grants whose TTL ran out. */
void
escalate_sweep(struct escalate *e)
{
	struct escalate_request	*r, *next;
	time_t			 now = e->now();

	TAILQ_FOREACH_SAFE(r, &e->requests, entry, next) {
		if (r->state == ESCALATE_PENDING &&
		    now - r->since >= ESCALATE_EXPIRE) {
			escalate_audit(e, "expire", r, "unanswered");
			escalate_settle(e, r, ESCALATE_EXPIRED);
		} else if (r->state == ESCALATE_APPROVED && r->ttl > 0 &&
		    now - r->decided >= r->ttl) {
			r->state = ESCALATE_EXPIRED;
			escalate_audit(e, "expire", r, "ttl");
			escalate_notify(e, ESCALATE_NOTE_DECIDED, r, NULL);
		}
	}
	escalate_trim(e);
}

/* Subscribe to notes. */
struct escalate_sub *
escalate_subscribe(struct escalate *e, escalate_note_cb *cb, void *arg)
{
	struct escalate_sub	*s;

	if ((s = calloc(1, sizeof *s)) == NULL)
		return (NULL);
	s->e = e;
	s->cb = cb;
	s->arg = arg;
	TAILQ_INSERT_TAIL(&e->subs, s, entry);
	return (s);
}

/* Unsubscribe. */
void
escalate_unsubscribe(struct escalate_sub *s)
{
	if (s == NULL)
		return;
	TAILQ_REMOVE(&s->e->subs, s, entry);
	free(s);
}
