/*
 * What pinhole run says on its own stderr while the command runs: a line
 * a refusal, a line for a connection held for approval (with the exact
 * approve command) and one when it is decided.  The pure half: notices
 * from the escalation queue's events (struct attach_notice, as a session
 * sends them to its attached runs too), their lines, and the limit on
 * refusal lines.  daemon/notify.h is the half that prints.
 *
 * The limit: one line per host and reason every NOTICE_WINDOW_MS; the
 * repeats in between are counted and said in one line when the window
 * ends ("refused x.test:443 again, 49 times").  Refusals of a host
 * count as the same when both say to ask (or say the same fix or
 * reason), whatever the port or request.  What follows a name's refusal
 * by the DNS within NOTICE_ECHO_MS (its other record types, the
 * retries, the connection to it) is the same lookup, not counted.  At
 * most NOTICE_RATE lines a second, NOTICE_BURST at once: what waits for
 * that is said as soon as it may, counted.  NOTICE_SLOTS hosts and
 * reasons are remembered; refusals beyond them are counted in one line.
 */
#ifndef NOTICE_H
#define NOTICE_H

#include <stddef.h>
#include <stdint.h>

#include "proxy/escalate/escalate.h"
#include "proxy/wire/attachmsg.h"

#define NOTICE_LINE_MAX		2048	/* < PIPE_BUF: one write */
#define NOTICE_WINDOW_MS	10000
#define NOTICE_ECHO_MS		1000
#define NOTICE_RATE		5	/* lines a second */
#define NOTICE_BURST		5
#define NOTICE_SLOTS		32

/*
 * The notice an event of the queue makes, if any: a refusal, a held
 * connection, a request the agent filed (new), a decision.  *sandbox is
 * the id of the sandbox it is for ("" none), or NULL for every sandbox
 * (a decision: each run says it only for the requests it told of).
 * Returns 0, or -1 when the event says nothing to a run.
 */
int	notice_from_event(const struct escalate_event *,
	    struct attach_notice *, const char **);

/*
 * The line for a notice, '\n' ended and cut to fit: every text in it
 * cleaned for a terminal.  session names the gateway in the approve
 * command (NULL: none).  A refusal's repeats: count of them, shown
 * whether a line of it was shown before (0 and 0: the refusal itself).
 * Returns the line's length.
 */
size_t	notice_format(const struct attach_notice *, const char *,
	    unsigned int, int, char *, size_t);

/* Does a notice go through the limit (a refusal), or always out? */
int	notice_limited(const struct attach_notice *);

struct notice_slot {
	struct attach_notice	 last;		/* the latest */
	uint64_t		 until;		/* its window ends, ms */
	uint64_t		 echo_until;	/* a lookup's echoes end */
	unsigned int		 count;		/* held back since */
	int			 shown;		/* one was said */
	int			 used;
};

struct notice_limit {
	struct notice_slot	 slot[NOTICE_SLOTS];
	unsigned int		 tokens;
	uint64_t		 refilled;	/* ms */
	unsigned int		 others;	/* held back, no slot */
	uint64_t		 others_until;
};

/* What is due: a refusal's repeats, or refusals no slot kept. */
struct notice_due {
	struct attach_notice	 n;
	unsigned int		 count;
	int			 shown;
	int			 others;	/* n unused: count others */
};

void	notice_limit_init(struct notice_limit *, uint64_t);
/* Take a refusal at now (ms): 1 to say it now, 0 held back. */
int	notice_limit_admit(struct notice_limit *,
	    const struct attach_notice *, uint64_t);
/*
 * The next line due at now, 1 with d filled; 0 none.  With all, every
 * repeat held back is due at once, whatever the time (the end).
 */
int	notice_limit_due(struct notice_limit *, uint64_t, int,
	    struct notice_due *);
/* Milliseconds from now to the next line due; -1 none. */
int64_t	notice_limit_next(const struct notice_limit *, uint64_t);
/* The line for what is due. */
size_t	notice_due_format(const struct notice_due *, char *, size_t);

#endif
