/*
 * The inside of the escalation queue (proxy/escalate/escalate.h), which
 * only its own files include: queue.c is the queue (its life, its
 * clock, telling subscribers, the audit lines, expiry), filing.c a
 * request filed and the sandboxes that asked, approve.c the decisions
 * and the grants they give, waiter.c waiting for one, blocked.c the
 * blocked attempts and refusals the gateway reports, text.c the words
 * (names, durations, cleaning untrusted text).
 */
#ifndef QUEUE_H
#define QUEUE_H

#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "proxy/escalate/escalate.h"

struct event;

#ifndef TAILQ_FOREACH_SAFE	/* glibc's sys/queue.h lacks it */
#define TAILQ_FOREACH_SAFE(var, head, field, tvar)			\
	for ((var) = TAILQ_FIRST(head);					\
	    (var) != NULL && ((tvar) = TAILQ_NEXT(var, field), 1);	\
	    (var) = (tvar))
#endif

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

/* queue.c */
/* Free a waiter's timer and the waiter. */
void	escalate_waiter_free(struct escalate_waiter *);
/* Tell every subscriber of an event. */
void	escalate_tell(struct escalate *, const struct escalate_event *);
/* Tell the subscribers of a request or blocked attempt. */
void	escalate_notify(struct escalate *, enum escalate_note,
	    const struct escalate_request *, const struct escalate_blocked *);
/* Write one audit event about a request. */
void	escalate_audit(struct escalate *, const char *,
	    const struct escalate_request *, const char *);
/* Forget the oldest decided requests beyond what is kept. */
void	escalate_trim(struct escalate *);
/* Move a pending request to a decided state; tell everyone. */
void	escalate_settle(struct escalate *, struct escalate_request *,
	    enum escalate_state);

/* filing.c */
/* A fresh request id, "r" and 16 hex digits; -1 when none. */
int	escalate_new_id(struct escalate *, char *);
/* Name a request by one sandbox that asked. */
void	escalate_request_name(struct escalate_request *,
	    const struct escalate_asker *);
/* The asker entry of a sandbox ("": none); NULL when it did not ask. */
struct escalate_asker *escalate_asker_find(const struct escalate_request *,
	    const char *);
/* Forget that a sandbox asked: it has gone. */
void	escalate_asker_drop(struct escalate_request *, const char *);

#endif
