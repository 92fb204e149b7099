/*
 * The attach protocol between `pinhole run --session NAME` and the
 * session's gateway: one SOCK_SEQPACKET message at a time, each a flat
 * JSON object (docs/control-protocol.md, "Attaching").
 *
 *   run -> session   {"op":"attach","cmd":"uv lock","notices":true}
 *   session -> run   {"op":"config","sandbox":"7","ports":"80 443",
 *                     "vsock":false,"guards":"d /home/u/.config/pinhole\n..."}
 *   run -> session   {"op":"listeners","pid":4242,"fds":"proxy dns ..."}
 *                    with the listeners' descriptors, in that order
 *   session -> run   {"op":"ok"}
 *   session -> run   {"op":"notice","kind":"refused","host":"x.test",...}
 *                    any number, while the command runs, when asked for
 *   run -> session   {"op":"exit","status":0}
 *
 * Either side may answer {"op":"error","error":"..."} and close.  The
 * sandbox lives as long as the connection: when it closes, the session
 * closes the sandbox's listeners and connections.  Pure: no I/O.
 */
#ifndef WIRE_ATTACHMSG_H
#define WIRE_ATTACHMSG_H

#include <stddef.h>
#include <stdint.h>

#include "rules/rules.h"

#define ATTACH_MSG_MAX		16384	/* bytes of one message */
#define ATTACH_CMD_MAX		160
#define ATTACH_ID_MAX		16
#define ATTACH_ERROR_MAX	256
#define ATTACH_PORTS_MAX	64
#define ATTACH_FDS_MAX		80
#define ATTACH_GUARDS_MAX	8192
#define ATTACH_VIA_MAX		16
#define ATTACH_WHAT_MAX		320
#define ATTACH_TEXT_MAX		1024
#define ATTACH_FIX_MAX		640
#define ATTACH_WORD_MAX		48	/* ids, states, scopes, by */
#define ATTACH_SECS_MAX		86400

enum attach_op {
	ATTACH_ATTACH,
	ATTACH_CONFIG,
	ATTACH_LISTENERS,
	ATTACH_OK,
	ATTACH_EXIT,
	ATTACH_ERROR,
	ATTACH_NOTICE
};

/* What a notice tells the run, to say on its stderr. */
enum attach_notice_kind {
	ATTACH_NOTICE_REFUSED,	/* the sandbox met a refusal */
	ATTACH_NOTICE_HELD,	/* a connection of it waits for one */
	ATTACH_NOTICE_ASKED,	/* it filed a request */
	ATTACH_NOTICE_DECIDED	/* approved, denied or expired */
};

/*
 * A notice, for the sandbox it is about: kind, host and port (0: a name
 * the DNS refused) always.  A refusal has via, what ("GET /x", or ""),
 * text (why), and fix (what the policy must change) or ask (a grant can
 * lift it); a held connection request and secs (how long at most); a
 * request the agent filed request and text (its reason); a decision
 * request, state, scope, by and text (the answer).  Its strings are
 * printable text, cleaned again by whoever shows them on a terminal.
 */
struct attach_notice {
	enum attach_notice_kind	 kind;
	struct host		 host;
	uint16_t		 port;
	char			 via[ATTACH_VIA_MAX];
	char			 what[ATTACH_WHAT_MAX];
	char			 text[ATTACH_TEXT_MAX];
	char			 fix[ATTACH_FIX_MAX];
	int			 ask;
	char			 request[ATTACH_WORD_MAX];
	int			 secs;
	char			 state[ATTACH_WORD_MAX];
	char			 scope[ATTACH_WORD_MAX];
	char			 by[ATTACH_WORD_MAX];
};

/* What a descriptor of a "listeners" message is for. */
enum attach_fd {
	ATTACH_FD_PROXY,	/* TCP: the HTTP proxy port */
	ATTACH_FD_DNS,		/* UDP or TCP: DNS */
	ATTACH_FD_CAPTURE,	/* TCP: captured connections */
	ATTACH_FD_UDP,		/* UDP: the catch-all */
	ATTACH_FD_RAW		/* raw ICMP: its port-unreachable answers */
};

struct attach_msg {
	enum attach_op	 op;
	char		 cmd[ATTACH_CMD_MAX];		/* attach */
	int		 notices;			/* attach: wanted */
	char		 sandbox[ATTACH_ID_MAX];	/* config */
	uint16_t	 ports[ATTACH_PORTS_MAX];	/* config: captured */
	size_t		 nports;
	int		 vsock;				/* config */
	/*
	 * config: what the sandbox must not change or see, one line each:
	 * "d DIR" (read-only, made if missing), "f FILE" (its directories
	 * read-only), "l FILE" (the log: the same), "r FILE" (read-only),
	 * "h PATH" (hidden), "e NAME" (a secret, seen as its placeholder),
	 * "c FILE" and "t FILE" (the CA and the bundle to trust, when TLS
	 * is inspected); paths absolute.
	 */
	char		 guards[ATTACH_GUARDS_MAX];
	long long	 pid;				/* listeners */
	enum attach_fd	 fds[ATTACH_FDS_MAX];		/* listeners */
	size_t		 nfds;
	int		 status;			/* exit */
	char		 error[ATTACH_ERROR_MAX];	/* error */
	struct attach_notice notice;			/* notice */
};

/* An empty message of one kind (numbers -1). */
void	attach_msg_init(struct attach_msg *, enum attach_op);

/*
 * Read one message of len bytes.  Returns 0, or -1 with *errstr saying
 * what is wrong with it (unknown op, a member missing or out of range,
 * a guard line that is not KIND /PATH, a notice's host that is not one).
 */
int	attach_parse(const char *, size_t, struct attach_msg *,
	    const char **);

/* Write one message; returns its length, or 0 when it does not fit. */
size_t	attach_build(const struct attach_msg *, char *, size_t);

#endif
