/*
 * The decider: a program pinhole asks, over HTTP on loopback TCP, a
 * unix socket or HTTPS (a name, verified, with a client certificate if
 * the decider wants one), about each new request the queue files (a
 * held connection, or the agent's).  Its answer approves or denies the
 * request, or leaves it to a person; no answer in time, a connection
 * error, a status other than 2xx or a malformed answer denies.  A
 * target no grant can open is never filed, so never asked about.  At
 * most a few questions are out at once, each on a connection of its
 * own, kept for the next when the decider keeps it open; each answer
 * bounded in time (from when the request was filed) and size.
 */
#ifndef DECIDER_H
#define DECIDER_H

#define DECIDER_WAIT_DEFAULT	30	/* s, when --ask is not given */
#define DECIDER_QUESTIONS_MAX	16	/* asked at once, by default */
#define DECIDER_QUESTIONS_LIMIT	256	/* --decider-max */
#define DECIDER_WAITING_MAX	1024	/* waiting their turn */
#define DECIDER_HEAD_MAX	4096	/* an answer's head */

struct decider;
struct escalate;
struct event_base;

struct decider_config {
	const char	*url;
	int		 secs;		/* what a held connection waits */
	int		 max;		/* questions out at once; 0: default */
	const char	*ca;		/* https: CA file, NULL: the system's */
	const char	*cert;		/* https: client certificate and key */
	const char	*key;
};

/*
 * Ask the decider at cfg->url about each new request of the queue,
 * waiting for each answer at most secs less one, when secs is more than
 * 2.  Its address is resolved now, by the host's resolver.  NULL with
 * err filled when the URL is not one (decider_url_parse()), the name
 * does not resolve, a TLS file cannot be read, or out of memory.
 */
struct decider	*decider_create(struct event_base *, struct escalate *,
		    const struct decider_config *, char *, size_t);
void		 decider_free(struct decider *);

#endif
