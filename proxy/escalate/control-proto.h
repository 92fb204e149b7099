/*
 * The control protocol (docs/control-protocol.md), one JSON object a
 * line each way: a request line handled and answered, the event lines
 * of the queue's notes, and the members of a request, a blocked attempt
 * and a refusal, which the agent endpoint writes too.  Pure, but for
 * the queue.  Only proxy/escalate/ includes this: control.c serves it
 * on the control socket (control.h).
 */
#ifndef CONTROL_PROTO_H
#define CONTROL_PROTO_H

#include <sys/types.h>

#include <stddef.h>
#include <time.h>

#include "lib/json.h"
#include "proxy/escalate/escalate.h"

#define CONTROL_VERSION		1
#define CONTROL_ASKERS_SHOWN	8		/* a request's "sandboxes" */

/* What the protocol knows of one client connection. */
struct control_peer {
	uid_t	uid;
	int	subscribed;
};

/* What handling a line asks of the connection. */
#define CONTROL_WANT_SUBSCRIBE	0x1	/* start sending events */

/*
 * Handle one request line from a peer (pure, but for the queue): append
 * the reply lines, each ending in '\n', to out.  Returns CONTROL_WANT_*
 * flags.  agent may be NULL.
 */
int	control_handle(struct escalate *, struct control_peer *,
	    const char *, const char *, size_t, struct json_writer *);

/* Write the event line of a note, '\n' included. */
void	control_format_note(struct escalate *, enum escalate_note,
	    const struct escalate_request *, const struct escalate_blocked *,
	    struct json_writer *);

/* Members of a request, for events, replies and `pending --json`. */
void	control_put_request(struct json_writer *, const char *,
	    const struct escalate_request *);
void	control_put_blocked(struct json_writer *,
	    const struct escalate_blocked *);
/* Members of a sandbox's refusal, for the agent endpoint. */
void	control_put_refusal(struct json_writer *,
	    const struct sandbox_refusal *);
/* RFC 3339 UTC, seconds. */
void	control_time(time_t, char *, size_t);

#endif
