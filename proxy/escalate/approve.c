/*
 * Deciding a request (proxy/escalate/escalate.h): an approval's grant in
 * the policy (an always one's rule written to the policy file, a once
 * one kept by the sandbox it is for, the others that asked moved to a
 * request of their own), a denial, and whether the policy allows a
 * target already.
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

_Static_assert(GRANT_SANDBOX_LEN >= AUDIT_SANDBOX_ID_LEN,
    "a grant keeps a sandbox's id whole");

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
