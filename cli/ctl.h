/*
 * The person's side of the control socket: find the user's running
 * sessions, speak the JSON-lines protocol to them, show what came from
 * the sandbox safely on a terminal.
 */
#ifndef CTL_H
#define CTL_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "lib/json.h"
#include "proxy/escalate/escalate.h"

#define CTL_SESSIONS_MAX	64
#define CTL_TIMEOUT_MS		5000
#define CTL_SESSION_LEN		ESCALATE_SESSION_LEN	/* a name, whole */

struct ctl_conn {
	int	fd;
	char	session[CTL_SESSION_LEN];
	int64_t	next_id;
	char	buf[16384];
	size_t	len;
	int	found;
};

/* Called for each item line of a reply. */
typedef void	ctl_item_cb(struct ctl_conn *, const struct json_obj *, void *);

/*
 * Connect to the user's sessions (only to want when it is not NULL); a
 * socket nobody listens on any more is removed.  Returns how many were
 * connected; 0 with err filled when none.
 */
size_t	ctl_open_all(struct ctl_conn *, size_t, const char *, char *, size_t);
void	ctl_close(struct ctl_conn *);

/*
 * Send a request: w holds an object still open (json_open() and its
 * members); an "id" is added, the object closed and sent as one line.
 */
int	ctl_send(struct ctl_conn *, struct json_writer *, int64_t *);
/* Read one line as an object; -1 at EOF, error or after timeout ms. */
int	ctl_read(struct ctl_conn *, struct json_obj *, int);
/* Read once what the socket holds; -1 at EOF or on error. */
int	ctl_fill(struct ctl_conn *);
/* Take a whole line from the buffer: 1 parsed, -1 bad (dropped), 0 none. */
int	ctl_take_line(struct ctl_conn *, struct json_obj *);
/*
 * Send and wait for the reply: items go to cb; reply gets the final
 * line.  Returns 0 when it says ok, else -1 with err filled.
 */
int	ctl_call(struct ctl_conn *, struct json_writer *, ctl_item_cb *,
	    void *, struct json_obj *, char *, size_t);

/* Find the session holding a pending request; NULL with err filled. */
struct ctl_conn	*ctl_find_request(struct ctl_conn *, size_t, const char *,
		    char *, size_t);

/*
 * Send a decision (w: an open object holding "op" and its members) to
 * the session holding request id ("SESSION/ID" names the session).
 * Prints the outcome; returns the exit status.
 */
int		 ctl_decide(const char *, const char *, const char *,
		    struct json_writer *);

/* Write untrusted text to a terminal, escaped (escalate_clean()). */
void	ctl_print_safe(FILE *, const char *);
/* Write HOST:PORT so (escaped; port 0, a DNS lookup, prints HOST alone). */
void	ctl_print_target(FILE *, const char *, int64_t);
/* Write a request's HOST:PORT so; port 0, any port: "HOST (any port)". */
void	ctl_print_request_target(FILE *, const char *, int64_t);
/*
 * Say a decision (a request object, of session) in words, no newline:
 * "approved ID: HOST:PORT always: added to FILE:LINE: allow RULE",
 * "... once: the next connection of sandbox N (session S)", "... for
 * this session (S), until it stops", "denied ID: ... the agent is told:
 * REASON".
 */
void	ctl_print_decision(FILE *, const char *, const struct json_obj *);
/*
 * Write the line saying what approving a request object lifts, after
 * indent: "approving lifts the request checks of the rule '...' (FILE:
 * LINE), which refused POST /x: ..." (escaped); nothing when it lifts none.
 */
void	ctl_print_lifts(FILE *, const char *, const struct json_obj *);
/*
 * Write the line naming the sandbox a request object came from, after
 * indent: "sandbox ID, pid N: CMD" (escaped), and how often it was asked
 * from elsewhere; nothing when the object names none.
 */
void	ctl_print_sandbox(FILE *, const char *, const struct json_obj *);

#endif
