/*
 * Talking to an upstream proxy, pure: the credentials file read into a
 * Proxy-Authorization value, the CONNECT request written, and what the
 * upstream's answer means (a tunnel open, the origin's answer to relay,
 * or the upstream's own refusal, and which); the words that say which
 * side refused.  The answer's head is parsed by http_response_parse().
 */
#ifndef WIRE_UPSTREAMMSG_H
#define WIRE_UPSTREAMMSG_H

#include <stddef.h>
#include <stdint.h>

#define UPSTREAM_CRED_MAX	512	/* "USER:PASSWORD" */
#define UPSTREAM_AUTH_MAX	(6 + 4 * ((UPSTREAM_CRED_MAX + 2) / 3) + 1)
#define UPSTREAM_HEAD_MAX	(2 * 272 + UPSTREAM_AUTH_MAX + 128)
#define UPSTREAM_SCHEME_MAX	32

struct host;
struct http_response;

/* What an answer from the upstream means. */
enum upstream_answer {
	UPSTREAM_OPEN,		/* CONNECT: the tunnel is open (2xx) */
	UPSTREAM_RELAY,		/* forward: the origin's answer */
	UPSTREAM_AUTH,		/* 407: credentials wanted or refused */
	UPSTREAM_DENIED,	/* 403 of its own: its policy refused */
	UPSTREAM_FAILED		/* any other refusal of its own */
};

struct upstream_verdict {
	enum upstream_answer	answer;
	int			status;
	char			reason[64];	/* its reason phrase, printable */
	char			scheme[UPSTREAM_SCHEME_MAX]; /* 407: it asks */
};

/*
 * The credentials file's text (len bytes): its first line, "USER:PASSWORD"
 * (a line end and anything after it are ignored), as the value of a
 * Proxy-Authorization header, "Basic BASE64", into out (at least
 * UPSTREAM_AUTH_MAX bytes, NUL-terminated).  Refused (-1, *errstr): no
 * ':', an empty user, a control byte, longer than UPSTREAM_CRED_MAX.
 */
int	upstream_credentials(const char *, size_t, char *, size_t,
	    const char **);

/*
 * Write "CONNECT HOST:PORT HTTP/1.1" with its Host and, when auth is not
 * NULL, Proxy-Authorization: auth.  Returns the length, or -1 when it
 * does not fit len bytes.
 */
int	upstream_connect_head(char *, size_t, const struct host *, uint16_t,
	    const char *);

/*
 * What the upstream's answer means: to a CONNECT (connect set) anything
 * but 2xx is its refusal; to a forwarded request, a 407, or an error
 * status it says is its own (Proxy-Status with an error, X-Squid-Error),
 * is; everything else is the origin's, to relay.
 */
void	upstream_answer_read(const struct http_response *, int,
	    struct upstream_verdict *);

/* The Pinhole-Error label of a refusal: upstream-auth, -denied, -failed. */
const char *upstream_label(enum upstream_answer);

/*
 * Say who refused, for the client and the audit line: "the upstream
 * proxy UPSTREAM refused it (403 Forbidden)", "... wants credentials
 * ...".  with_auth says credentials were sent.
 */
void	upstream_why(const struct upstream_verdict *, const char *, int,
	    char *, size_t);

#endif
