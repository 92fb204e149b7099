/*
 * The escalation queue of one gateway session: requests, their waiters
 * and subscribers, the rate limit, the ring of recent blocked
 * attempts, and each sandbox's recent refusals.  Decisions are written
 * to the audit log here, once each.
 */
#include "config.h"

#include <sys/queue.h>
#include <sys/random.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/metrics.h"
#include "proxy/audit/audit.h"
#include "proxy/escalate/escalate.h"
#include "proxy/escalate/refused.h"

#define ESCALATE_SWEEP_EVERY	5	/* s between timer sweeps */

#ifndef TAILQ_FOREACH_SAFE	/* glibc's sys/queue.h lacks it */
#define TAILQ_FOREACH_SAFE(var, head, field, tvar)			\
	for ((var) = TAILQ_FIRST(head);					\
	    (var) != NULL && ((tvar) = TAILQ_NEXT(var, field), 1);	\
	    (var) = (tvar))
#endif

_Static_assert(GRANT_SANDBOX_LEN >= AUDIT_SANDBOX_ID_LEN,
    "a grant keeps a sandbox's id whole");

struct escalate_waiter {
	TAILQ_ENTRY(escalate_waiter)	 entry;
	struct escalate_request		*req;
	char				 sandbox[AUDIT_SANDBOX_ID_LEN];
	int				 held;		/* a connection */
	time_t				 until;
	struct event			*timer;
	escalate_wait_cb		*cb;
	void				*arg;
};

struct escalate_sub {
	TAILQ_ENTRY(escalate_sub)	 entry;
	struct escalate			*e;
	escalate_note_cb		*cb;
	void				*arg;
};

TAILQ_HEAD(escalate_requests, escalate_request);

struct escalate {
	struct event_base		*base;
	struct audit			*audit;
	struct metrics			*metrics;	/* or NULL */
	struct policy			*policy;	/* or NULL */
	time_t				(*now)(void);
	char				 session[ESCALATE_SESSION_LEN];
	struct escalate_requests	 requests;	/* oldest first */
	size_t				 npending;
	size_t				 ndecided;
	double				 tokens;
	time_t				 refilled;
	struct escalate_blocked		 blocked[ESCALATE_BLOCKED_MAX];
	size_t				 nblocked;
	size_t				 blocked_head;	/* next slot */
	struct refused			*refused;	/* by sandbox */
	TAILQ_HEAD(, escalate_sub)	 subs;
	struct event			*sweeper;
};

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
static void
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
static void
escalate_tell(struct escalate *e, const struct escalate_event *ev)
{
	struct escalate_sub	*s, *next;

	TAILQ_FOREACH_SAFE(s, &e->subs, entry, next)
		s->cb(ev, s->arg);
}

/* Tell every subscriber of a request or a blocked attempt. */
static void
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
static void
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
static void
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
static void
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
static int
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
static void
escalate_request_name(struct escalate_request *r,
    const struct escalate_asker *a)
{
	memcpy(r->sandbox, a->sandbox, sizeof r->sandbox);
	memcpy(r->cmd, a->cmd, sizeof r->cmd);
	r->pid = a->pid;
}

/* The asker entry of a sandbox ("": none); NULL when it did not ask. */
static struct escalate_asker *
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
static void
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

/* Say what filing came to, for people. */
const char *
escalate_filed_text(enum escalate_filed f)
{
	switch (f) {
	case ESCALATE_FILED_NEW:
		return ("filed");
	case ESCALATE_FILED_SAME:
		return ("already asked: joined the open request");
	case ESCALATE_FILED_JOINED:
		return ("filed");
	case ESCALATE_FILED_FULL:
		return ("too many open requests: wait for an answer");
	case ESCALATE_FILED_RATE:
		return ("too many requests lately (a burst of 5, then 5 a "
		    "minute): ask again in a minute");
	case ESCALATE_FILED_FIXED:
		return ("no approval can open this: the policy must change");
	default:
		return ("out of memory");
	}
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

/* Find a request a person may still decide. */
static struct escalate_request *
escalate_find_pending(struct escalate *e, const char *id, char *err,
    size_t errlen)
{
	struct escalate_request	*r;

	escalate_sweep(e);
	if ((r = escalate_find(e, id)) == NULL) {
		snprintf(err, errlen, "no request %s in session %s", id,
		    e->session);
		return (NULL);
	}
	if (r->state != ESCALATE_PENDING) {
		snprintf(err, errlen, "request %s is already %s", id,
		    escalate_state_name(r->state));
		return (NULL);
	}
	return (r);
}

/*
 * A once approval of r is for sandbox only: move the other sandboxes
 * that asked, and their waiters, to a new pending request, as they
 * asked; r keeps sandbox.  Returns the new request, or NULL when no
 * other sandbox asked (or out of memory: they stay, and are told the
 * approval, which does not open the host for them).
 */
static struct escalate_request *
escalate_split(struct escalate *e, struct escalate_request *r,
    const char *sandbox)
{
	struct escalate_request	*n;
	struct escalate_waiter	*w, *next;
	size_t			 i, k = 0;

	if (r->naskers == 0 || (r->naskers == 1 && escalate_asked(r, sandbox)))
		return (NULL);
	if ((n = calloc(1, sizeof *n)) == NULL ||
	    (n->askers = calloc(r->naskers, sizeof *n->askers)) == NULL ||
	    escalate_new_id(e, n->id) == -1)
		goto fail;
	for (i = 0; i < r->naskers; i++) {
		if (strcmp(r->askers[i].sandbox, sandbox) == 0)
			r->askers[k++] = r->askers[i];
		else
			n->askers[n->naskers++] = r->askers[i];
	}
	r->naskers = k;
	n->host = r->host;
	n->port = r->port;
	memcpy(n->reason, n->askers[0].reason[0] != '\0' ?
	    n->askers[0].reason : r->reason, sizeof n->reason);
	memcpy(n->via, r->via, sizeof n->via);
	memcpy(n->what, r->what, sizeof n->what);
	memcpy(n->why, r->why, sizeof n->why);
	memcpy(n->lifts, r->lifts, sizeof n->lifts);
	escalate_request_name(n, &n->askers[0]);
	n->others = n->naskers - 1;
	n->since = r->since;
	n->count = 1;
	TAILQ_INIT(&n->waiters);
	TAILQ_FOREACH_SAFE(w, &r->waiters, entry, next) {
		if (strcmp(w->sandbox, sandbox) == 0)
			continue;
		TAILQ_REMOVE(&r->waiters, w, entry);
		w->req = n;
		TAILQ_INSERT_TAIL(&n->waiters, w, entry);
	}
	TAILQ_INSERT_AFTER(&e->requests, r, n, entry);
	e->npending++;
	metrics_set(e->metrics, MG_PENDING, e->npending);
	memcpy(r->moved, n->id, sizeof r->moved);
	return (n);
fail:
	if (n != NULL)
		free(n->askers);
	free(n);
	return (NULL);
}

/* Tell of the request a split made, and of the connections it holds. */
static void
escalate_tell_moved(struct escalate *e, struct escalate_request *n)
{
	struct escalate_waiter	*w;
	struct escalate_event	 ev;
	time_t			 now = e->now();

	escalate_audit(e, "request", n, n->reason[0] != '\0' ? n->reason :
	    NULL);
	escalate_notify(e, ESCALATE_NOTE_REQUEST, n, NULL);
	TAILQ_FOREACH(w, &n->waiters, entry) {
		if (!w->held)
			continue;
		memset(&ev, 0, sizeof ev);
		ev.note = ESCALATE_NOTE_HELD;
		ev.request = n;
		ev.sandbox = w->sandbox;
		ev.secs = w->until > now ? (int)(w->until - now) : 0;
		escalate_tell(e, &ev);
	}
}

/*
 * Write "allow HOST:PORT" into the policy file for an `always` grant;
 * with a TTL, "allow HOST:PORT until TIME", so that the rule ends with
 * the grant even when no gateway is left to take it out.  The request's
 * written says where: "FILE:LINE: allow RULE".
 */
static int
escalate_append(const char *path, struct escalate_request *r, char *err,
    size_t errlen)
{
	struct rules_edit	 res;
	char			 buf[HOST_TEXT_LEN + 64], end[32];

	if (path == NULL) {
		snprintf(err, errlen, "no policy file to write an always grant "
		    "to: approve --session instead");
		return (-1);
	}
	escalate_target(&r->host, r->port, buf, sizeof buf);
	if (r->port == 0)		/* any port */
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf), ":*");
	if (r->ttl > 0) {		/* the rule ends with the grant */
		rules_time_format(time(NULL) + r->ttl, end, sizeof end);
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf),
		    " until %s", end);
	}
	if (rules_file_append(path, buf, &res, err, errlen) == -1)
		return (-1);
	snprintf(r->written, sizeof r->written, "%s:%u: %s%s", path,
	    res.line, res.rule[0] != '\0' ? "" : "allow ", res.rule[0] != '\0' ?
	    res.rule : buf);
	return (0);
}

/*
 * Give an approval its grant in the policy: its id the request's, its
 * who the approver; a once grant is the request's sandbox's, kept with
 * it (or, for a caller naming none, the policy's); an always one is
 * written to the policy file too.  Without a policy, none.
 */
static int
escalate_grant(struct escalate *e, struct escalate_request *r, char *err,
    size_t errlen)
{
	const struct escalate_asker	*a;
	struct grants			*once = NULL;
	enum grant_scope		 scope;

	if (e->policy == NULL)
		return (0);
	scope = r->scope == ESCALATE_SCOPE_ALWAYS ? GRANT_ALWAYS :
	    r->scope == ESCALATE_SCOPE_SESSION ? GRANT_SESSION : GRANT_ONCE;
	if (scope == GRANT_ALWAYS && escalate_append(policy_always(e->policy),
	    r, err, errlen) == -1)
		return (-1);
	if (scope == GRANT_ONCE && (a = escalate_asker_find(r,
	    r->sandbox)) != NULL && a->sb != NULL)
		once = a->sb->once;
	if (policy_grant(e->policy, once, &r->host, r->port, scope,
	    (uint64_t)r->ttl * 1000, r->id, r->by, r->sandbox) == -1) {
		snprintf(err, errlen, "cannot add the grant (out of memory)");
		return (-1);
	}
	return (0);
}

/* Is (host, port) allowed now for a sandbox, every request to it? */
int
escalate_allowed(struct escalate *e, const struct host *h, uint16_t port,
    const struct sandbox *sb)
{
	struct policy		*p = sandbox_policy(sb, e->policy);
	struct policy_decision	 d;
	struct policy_ask	 q = { .host = h, .port = port,
				    .flags = POLICY_EVERY | POLICY_GUARD };

	if (p == NULL)
		return (0);
	sandbox_ask(sb, &q);
	return (policy_decide(p, &q, &d) == 1);
}

/*
 * The sandbox a once approval is for: the one named, which must have
 * asked, or the one given the id approved, or the request's own.  NULL
 * with err filled.
 */
static const char *
escalate_once_for(struct escalate_request *r, const char *id,
    enum escalate_scope scope, const char *sandbox, char *err, size_t errlen)
{
	size_t	i;

	for (i = 0; sandbox == NULL && i < r->naskers; i++) {
		if (strcmp(r->askers[i].id, id) == 0)
			return (r->askers[i].sandbox);
	}
	if (sandbox == NULL)
		return (r->sandbox);
	if (scope != ESCALATE_SCOPE_ONCE) {
		snprintf(err, errlen, "a sandbox is named only for a once "
		    "approval: a %s one is for every sandbox",
		    escalate_scope_name(scope));
		return (NULL);
	}
	if (!escalate_asked(r, sandbox) || sandbox[0] == '\0') {
		snprintf(err, errlen, "sandbox %s has not asked for %s (or has "
		    "gone)", sandbox, r->id);
		return (NULL);
	}
	return (sandbox);
}

/* Approve a pending request; its grant goes into the policy. */
int
escalate_approve(struct escalate *e, const char *id, enum escalate_scope scope,
    long ttl, const char *sandbox, const char *by, char *err, size_t errlen)
{
	struct escalate_request	*r, *moved = NULL;
	const struct escalate_asker *a;
	struct escalate_asker	 was;
	char			 fix[ESCALATE_FIX_LEN];

	if ((r = escalate_find_pending(e, id, err, errlen)) == NULL)
		return (-1);
	if (escalate_fixed(e, NULL, &r->host, r->port, fix, sizeof fix)) {
		snprintf(err, errlen, "cannot approve %s: %s", id, fix);
		return (-1);
	}
	if (scope == ESCALATE_SCOPE_NONE)
		scope = ESCALATE_SCOPE_ONCE;
	if (ttl < 0 || ttl > ESCALATE_TTL_MAX) {
		snprintf(err, errlen, "ttl out of range");
		return (-1);
	}
	if ((sandbox = escalate_once_for(r, id, scope, sandbox, err,
	    errlen)) == NULL)
		return (-1);
	memcpy(was.sandbox, r->sandbox, sizeof was.sandbox);
	memcpy(was.cmd, r->cmd, sizeof was.cmd);
	was.pid = r->pid;
	if (scope == ESCALATE_SCOPE_ONCE &&
	    (a = escalate_asker_find(r, sandbox)) != NULL)
		escalate_request_name(r, a);	/* the grant's is r->sandbox */
	r->scope = scope;
	r->ttl = ttl;
	snprintf(r->by, sizeof r->by, "%s", by);
	if (escalate_grant(e, r, err, errlen) == -1) {
		escalate_request_name(r, &was);
		r->written[0] = '\0';
		r->scope = ESCALATE_SCOPE_NONE;
		r->ttl = 0;
		r->by[0] = '\0';
		return (-1);
	}
	if (scope == ESCALATE_SCOPE_ONCE)
		moved = escalate_split(e, r, r->sandbox);
	r->state = ESCALATE_APPROVED;
	metrics_grant(e->metrics, escalate_scope_name(scope));
	escalate_audit(e, "grant", r, NULL);
	escalate_settle(e, r, ESCALATE_APPROVED);
	if (moved != NULL)
		escalate_tell_moved(e, moved);
	escalate_trim(e);
	return (0);
}

/* Deny a pending request; the reason reaches the agent. */
int
escalate_deny(struct escalate *e, const char *id, const char *reason,
    const char *by, char *err, size_t errlen)
{
	struct escalate_request	*r;

	if ((r = escalate_find_pending(e, id, err, errlen)) == NULL)
		return (-1);
	if (reason != NULL)
		escalate_clean(reason, strlen(reason), ESCALATE_REASON_MAX,
		    r->answer, sizeof r->answer);
	snprintf(r->by, sizeof r->by, "%s", by);
	r->state = ESCALATE_DENIED;
	escalate_audit(e, "deny", r, r->answer[0] != '\0' ? r->answer : NULL);
	escalate_settle(e, r, ESCALATE_DENIED);
	escalate_trim(e);
	return (0);
}

/* A waiter's time is up. */
static void
escalate_wait_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct escalate_waiter	*w = arg;
	struct escalate_request	*r = w->req;
	escalate_wait_cb	*cb = w->cb;
	void			*cbarg = w->arg;

	escalate_waiter_free(w);
	cb(r, 1, cbarg);
}

/* Wait for a pending request's decision. */
struct escalate_waiter *
escalate_wait(struct escalate *e, struct escalate_request *r,
    const char *sandbox, int secs, escalate_wait_cb *cb, void *arg)
{
	struct escalate_waiter	*w;
	struct timeval		 tv;

	if ((w = calloc(1, sizeof *w)) == NULL)
		return (NULL);
	w->req = r;
	snprintf(w->sandbox, sizeof w->sandbox, "%s", sandbox);
	w->cb = cb;
	w->arg = arg;
	if (secs > ESCALATE_WAIT_MAX)
		secs = ESCALATE_WAIT_MAX;
	w->until = e->now() + (secs > 0 ? secs : 0);
	if (e->base != NULL) {
		tv.tv_sec = secs > 0 ? secs : 0;
		tv.tv_usec = 0;
		w->timer = evtimer_new(e->base, escalate_wait_timeout_cb, w);
		if (w->timer == NULL || evtimer_add(w->timer, &tv) == -1) {
			if (w->timer != NULL)
				event_free(w->timer);
			free(w);
			return (NULL);
		}
	}
	TAILQ_INSERT_TAIL(&r->waiters, w, entry);
	return (w);
}

/* Ask mode: file or join a request, and wait for it. */
struct escalate_waiter *
escalate_ask(struct escalate *e, const struct host *h, uint16_t port,
    const char *via, struct sandbox *sb, const char *what,
    const char *why, int secs, escalate_wait_cb *cb, void *arg,
    enum escalate_filed *filed)
{
	struct escalate_request	*r;
	struct escalate_waiter	*w;
	struct escalate_event	 ev;

	*filed = escalate_file(e, h, port, "", 0, via, sb, &r);
	if (r == NULL || (w = escalate_wait(e, r, sandbox_id(sb), secs,
	    cb, arg)) == NULL)
		return (NULL);
	w->held = 1;
	if (*filed == ESCALATE_FILED_NEW) {
		snprintf(r->what, sizeof r->what, "%s", what != NULL ? what :
		    "");
		snprintf(r->why, sizeof r->why, "%s", why != NULL ? why : "");
	}
	memset(&ev, 0, sizeof ev);
	ev.note = ESCALATE_NOTE_HELD;
	ev.request = r;
	ev.sandbox = sandbox_id(sb);
	ev.secs = secs > ESCALATE_WAIT_MAX ? ESCALATE_WAIT_MAX : secs;
	escalate_tell(e, &ev);
	return (w);
}

/* Cancel a wait (its callback never runs). */
void
escalate_wait_cancel(struct escalate_waiter *w)
{
	if (w != NULL)
		escalate_waiter_free(w);
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

/* Name a state. */
const char *
escalate_state_name(enum escalate_state st)
{
	static const char	*names[] = { "pending", "approved", "denied",
	    "expired" };

	return (names[st]);
}

/* Name a scope. */
const char *
escalate_scope_name(enum escalate_scope sc)
{
	static const char	*names[] = { "none", "once", "session",
	    "always" };

	return (names[sc]);
}

/* Parse a scope name. */
int
escalate_scope_parse(const char *s, enum escalate_scope *sc)
{
	if (strcmp(s, "once") == 0)
		*sc = ESCALATE_SCOPE_ONCE;
	else if (strcmp(s, "session") == 0)
		*sc = ESCALATE_SCOPE_SESSION;
	else if (strcmp(s, "always") == 0)
		*sc = ESCALATE_SCOPE_ALWAYS;
	else
		return (-1);
	return (0);
}

/* Parse a duration: digits and an optional unit s, m, h or d. */
long
escalate_duration_parse(const char *s)
{
	long	v = 0, mul = 1;
	size_t	i;

	for (i = 0; s[i] >= '0' && s[i] <= '9'; i++) {
		if (i >= 9)
			return (-1);
		v = v * 10 + (s[i] - '0');
	}
	if (i == 0)
		return (-1);
	if (s[i] == 'm')
		mul = 60;
	else if (s[i] == 'h')
		mul = 3600;
	else if (s[i] == 'd')
		mul = 86400;
	else if (s[i] != 's' && s[i] != '\0')
		return (-1);
	if (s[i] != '\0' && s[i + 1] != '\0')
		return (-1);
	if (v > ESCALATE_TTL_MAX / mul)
		return (-1);
	return (v * mul);
}

/* Tell whether a code point is shown escaped. */
static int
escalate_unsafe(uint32_t cp)
{
	return (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) ||
	    (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
	    cp == 0xfeff);
}

/* Clean untrusted text (see escalate.h). */
size_t
escalate_clean(const char *in, size_t len, size_t max, char *out,
    size_t outsz)
{
	const uint8_t	*s = (const uint8_t *)in;
	size_t		 i = 0, n, o = 0;
	uint32_t	 cp;
	char		 esc[8];

	if (outsz == 0)
		return (0);
	while (i < len && s[i] != '\0') {
		if ((n = json_utf8(s + i, len - i, &cp)) == 0) {
			n = 1;
			cp = s[i];
			snprintf(esc, sizeof esc, "\\x%02x", (unsigned)cp);
		} else if (escalate_unsafe(cp) && cp < 0x80)
			snprintf(esc, sizeof esc, "\\x%02x", (unsigned)cp);
		else if (escalate_unsafe(cp))
			snprintf(esc, sizeof esc, "\\u%04x", (unsigned)cp);
		else
			esc[0] = '\0';
		if (i + n > max)
			break;
		if (esc[0] != '\0') {
			if (o + strlen(esc) >= outsz)
				break;
			memcpy(out + o, esc, strlen(esc));
			o += strlen(esc);
		} else {
			if (o + n >= outsz)
				break;
			memcpy(out + o, s + i, n);
			o += n;
		}
		i += n;
	}
	out[o] = '\0';
	return (o);
}

/* Write the command that requests a host (port 0: on every port). */
void
escalate_hint(const struct host *h, uint16_t port, char *buf, size_t len)
{
	char	target[HOST_TEXT_LEN + 16];

	escalate_target(h, port, target, sizeof target);
	snprintf(buf, len, "pinhole request %s%s", target, port == 0 ?
	    " --any-port" : "");
}

/* HOST:PORT, [IPV6]:PORT, or HOST alone for port 0 (a DNS lookup). */
void
escalate_target(const struct host *h, uint16_t port, char *buf, size_t len)
{
	if (port == 0)
		snprintf(buf, len, "%s", h->text);
	else
		snprintf(buf, len, h->kind == HOST_IPV6 ? "[%s]:%u" : "%s:%u",
		    h->text, port);
}
