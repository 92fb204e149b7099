/*
 * pinhole run's notices on its own stderr (daemon/notice.h says what and
 * how often): each a whole line in one write, never blocking the
 * gateway (a line the terminal or pipe cannot take now is dropped).
 */
#ifndef NOTIFY_H
#define NOTIFY_H

struct attach_notice;
struct escalate;
struct event_base;
struct notify;

/*
 * Say notices on stderr for the gateway named session (the approve
 * command names it; NULL: none).  NULL when out of memory.
 */
struct notify	*notify_create(struct event_base *, const char *);
/* Say what is still held back, then stop. */
void		 notify_free(struct notify *);
/* Say (or count) one notice about this run's sandbox. */
void		 notify_notice(struct notify *,
		    const struct attach_notice *);
/* The embedded gateway's queue: notices from its events.  0 or -1. */
int		 notify_subscribe(struct notify *, struct escalate *);

#endif
