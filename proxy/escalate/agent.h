/*
 * The agent endpoint: plain HTTP on the gateway's proxy port, origin-form
 * paths under /pinhole/, for the sandboxed command to ask for a host and
 * see what it may reach (documented in docs/control-protocol.md).  It
 * files requests and reads their state; it never decides one.
 *
 *   POST /pinhole/request          host, port, reason (form or JSON)
 *   GET  /pinhole/request/ID       [?wait=SECONDS] long poll
 *   GET  /pinhole/allowed          what is allowed right now
 *   GET  /pinhole/blocked          this sandbox's recent blocked attempts
 *   GET  /pinhole/refused          this sandbox's recent refusals, why
 *
 * A sandbox sees only its own: the requests it asked for, its blocked
 * attempts and refusals, and no other sandbox's once approvals; an id
 * not its own is answered as one that does not exist.
 *
 * Text by default; JSON with ?format=json or Accept: application/json.
 * The handler is pure but for the queue: a parsed request in, a response
 * out.  A long poll is left to the caller: the response says which
 * request to wait for and how long (agent_wait()).
 */
#ifndef AGENT_H
#define AGENT_H

#include <stddef.h>

#include "lib/json.h"
#include "proxy/escalate/escalate.h"

#define AGENT_PREFIX		"/pinhole"
#define AGENT_BODY_MAX		4096

/* A piece of the caller's buffer (laid out as struct http_str). */
struct agent_str {
	const char	*p;
	size_t		 len;
};

struct agent_request {
	struct agent_str	method;
	struct agent_str	target;		/* /pinhole/...?query */
	struct agent_str	content_type;	/* may be empty */
	struct agent_str	accept;		/* may be empty */
	struct agent_str	body;
	struct sandbox	*sandbox;	/* it came from, or NULL */
};

struct agent_response {
	int			status;
	const char		*ctype;
	struct json_writer	body;
	int			json;		/* the client wants JSON */
	int			wait;		/* > 0: hold for wait_id */
	char			wait_id[ESCALATE_ID_LEN];
	char			wait_sandbox[AUDIT_SANDBOX_ID_LEN]; /* whose */
};

/* Does this origin-form target belong to the agent endpoint? */
int	agent_match(const char *, size_t);

/* Handle a request.  Free the response with agent_response_free(). */
void	agent_handle(struct escalate *, const struct agent_request *,
	    struct agent_response *);
void	agent_response_free(struct agent_response *);

/*
 * Render the status of request id as the sandbox ("": none) sees it
 * (escalate_find_for()) into a fresh response: after a response asked
 * to wait, when woken or timed out.
 */
void	agent_status(struct escalate *, const char *, const char *, int,
	    struct agent_response *);

/*
 * Hold for the decision of resp->wait_id (a response that asked to
 * wait): cb(final, arg) runs once, when the request is decided or after
 * resp->wait seconds, with the response to send (the callee frees it
 * with agent_response_free()); after it the wait is over (do not cancel
 * it).  NULL when out of memory: send resp.  Cancel a wait still running
 * before the caller goes away (the client closed, the session ends).
 */
struct agent_wait;
struct agent_wait *agent_wait_start(struct escalate *,
	    const struct agent_response *,
	    void (*)(struct agent_response *, void *), void *);
void	agent_wait_cancel(struct agent_wait *);

/* Decode the value of key in a query string or form body (%XX and '+'). */
int	agent_form_get(const char *, size_t, const char *, char *, size_t);

#endif
