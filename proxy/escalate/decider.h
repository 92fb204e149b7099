/*
 * The decider: a program pinhole asks, over HTTP on loopback TCP or a
 * unix socket, about each new request the queue files (a held
 * connection, or the agent's).  Its answer approves or denies the
 * request, or leaves it to a person; no answer in time, a connection
 * error, a status other than 2xx or a malformed answer denies.  A target
 * no grant can open is never filed, so never asked about.  One
 * connection per question, each bounded in time and size.
 */
#ifndef DECIDER_H
#define DECIDER_H

#define DECIDER_WAIT_DEFAULT	30	/* s, when --ask is not given */
#define DECIDER_QUESTIONS_MAX	16	/* asked at once */
#define DECIDER_HEAD_MAX	4096	/* an answer's head */

struct decider;
struct escalate;
struct event_base;

/*
 * Ask the decider at url about each new request of the queue, waiting
 * for each answer at most secs (what a held connection waits) less one,
 * when secs is more than 2.  NULL with err filled when url is not
 * one (decider_url_parse()) or out of memory.
 */
struct decider	*decider_create(struct event_base *, struct escalate *,
		    const char *, int, char *, size_t);
void		 decider_free(struct decider *);

#endif
