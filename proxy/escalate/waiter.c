/*
 * Waiting for a request's decision (proxy/escalate/escalate.h): an
 * agent's long poll or a connection held in ask mode, each bounded by a
 * timer.
 */
#include "config.h"

#include <sys/queue.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "proxy/escalate/queue.h"

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
