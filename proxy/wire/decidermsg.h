/*
 * The decider's protocol, pure: where it is (its URL), the question
 * pinhole asks it (a JSON object), and its answer, read strictly.
 * docs/decider.md describes every field.
 */
#ifndef WIRE_DECIDERMSG_H
#define WIRE_DECIDERMSG_H

#include <stddef.h>
#include <stdint.h>

#define DECIDER_URL_MAX		160	/* bytes of a URL */
#define DECIDER_PATH_MAX	108	/* a unix socket's path */
#define DECIDER_APPROVER_MAX	32	/* bytes of an approver's name */
#define DECIDER_NOTE_MAX	200	/* bytes of a note for the agent */
#define DECIDER_TTL_MAX		(366 * 86400)
#define DECIDER_BODY_MAX	8192	/* an answer's body */

enum decider_kind {
	DECIDER_TCP,			/* http://ADDR:PORT/PATH */
	DECIDER_UNIX,			/* unix:/PATH or /PATH */
	DECIDER_TLS			/* https://NAME:PORT/PATH */
};

struct decider_url {
	enum decider_kind	kind;
	char			addr[256];	/* TCP, TLS: no brackets */
	uint16_t		port;
	char			path[DECIDER_URL_MAX];	/* TCP: the request's */
	char			sock[DECIDER_PATH_MAX];	/* UNIX: the socket */
};

enum decider_decision {
	DECIDER_ALLOW,
	DECIDER_DENY,
	DECIDER_ASK			/* leave it to a person */
};

enum decider_scope {
	DECIDER_ONCE,
	DECIDER_SESSION,
	DECIDER_ALWAYS
};

struct decider_answer {
	enum decider_decision	decision;
	enum decider_scope	scope;		/* allow: once by default */
	long			ttl;		/* allow: s, 0 none */
	char			approver[DECIDER_APPROVER_MAX + 1]; /* "": none */
	char			note[DECIDER_NOTE_MAX + 1];	/* deny: "" none */
};

/* What pinhole asks about; NULL strings and -1 numbers are left out. */
struct decider_question {
	const char	*request;	/* the request's id */
	const char	*session;
	const char	*sandbox;
	const char	*cmd;
	long		 pid;
	const char	*host;
	uint16_t	 port;
	const char	*via;
	const char	*method;
	const char	*path;
	const char	*refused;	/* why no rule allowed it */
	const char	*reason;	/* the agent's, when it filed one */
	int		 timeout;	/* s the decider has */
};

struct json_writer;

/*
 * Read a decider's location: "http://ADDR[:PORT][/PATH]" (ADDR a
 * numeric IPv4 address or a bracketed IPv6 one; port 80 by default, path
 * "/"), "https://HOST[:PORT][/PATH]" (HOST a name too, which the
 * certificate must name; port 443), "unix:/PATH" or "/PATH".  Returns 0,
 * or -1 with *errstr set.
 */
int	decider_url_parse(const char *, struct decider_url *, const char **);

/* Write the question as one JSON object. */
void	decider_question_write(struct json_writer *,
	    const struct decider_question *);

/*
 * Read an answer's body of len bytes: one JSON object, "decision"
 * "allow", "deny" or "ask"; with allow "scope" (once, session, always)
 * and "ttl" (seconds, 0 to DECIDER_TTL_MAX); with deny "note" (printable
 * text, DECIDER_NOTE_MAX bytes at most); "approver" (printable ASCII,
 * DECIDER_APPROVER_MAX bytes at most) with any.  A member that does not
 * belong, or a value out of range, refuses the whole answer.  Returns 0,
 * or -1 with *errstr set.
 */
int	decider_answer_parse(const char *, size_t, struct decider_answer *,
	    const char **);

const char *decider_decision_name(enum decider_decision);
const char *decider_scope_name(enum decider_scope);

#endif
