/*
 * The attach protocol between `pinhole run --session NAME` and the
 * session's gateway: one SOCK_SEQPACKET message at a time, each a flat
 * JSON object (docs/control-protocol.md, "Attaching").
 *
 *   run -> session   {"op":"attach","cmd":"uv lock"}
 *   session -> run   {"op":"config","sandbox":"7","ports":"80 443",
 *                     "vsock":false,"guards":"d /home/u/.config/pinhole\n..."}
 *   run -> session   {"op":"listeners","pid":4242,"fds":"proxy dns ..."}
 *                    with the listeners' descriptors, in that order
 *   session -> run   {"op":"ok"}
 *   run -> session   {"op":"exit","status":0}
 *
 * Either side may answer {"op":"error","error":"..."} and close.  The
 * sandbox lives as long as the connection: when it closes, the session
 * closes the sandbox's listeners and connections.  Pure: no I/O.
 */
#ifndef WIRE_ATTACH_H
#define WIRE_ATTACH_H

#include <stddef.h>
#include <stdint.h>

#define ATTACH_MSG_MAX		16384	/* bytes of one message */
#define ATTACH_CMD_MAX		160
#define ATTACH_ID_MAX		16
#define ATTACH_ERROR_MAX	256
#define ATTACH_PORTS_MAX	64
#define ATTACH_FDS_MAX		80
#define ATTACH_GUARDS_MAX	8192

enum attach_op {
	ATTACH_ATTACH,
	ATTACH_CONFIG,
	ATTACH_LISTENERS,
	ATTACH_OK,
	ATTACH_EXIT,
	ATTACH_ERROR
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
	char		 sandbox[ATTACH_ID_MAX];	/* config */
	uint16_t	 ports[ATTACH_PORTS_MAX];	/* config: captured */
	size_t		 nports;
	int		 vsock;				/* config */
	/*
	 * config: what the sandbox must not change or see, one line each:
	 * "d DIR" (read-only, made if missing), "f FILE" (its directories
	 * read-only), "r FILE" (read-only), "h PATH" (hidden), "e NAME" (a
	 * secret, seen as its placeholder), "c FILE" and "t FILE" (the CA
	 * and the bundle to trust, when TLS is inspected); paths absolute.
	 */
	char		 guards[ATTACH_GUARDS_MAX];
	long long	 pid;				/* listeners */
	enum attach_fd	 fds[ATTACH_FDS_MAX];		/* listeners */
	size_t		 nfds;
	int		 status;			/* exit */
	char		 error[ATTACH_ERROR_MAX];	/* error */
};

/* An empty message of one kind (numbers -1). */
void	attach_msg_init(struct attach_msg *, enum attach_op);

/*
 * Read one message of len bytes.  Returns 0, or -1 with *errstr saying
 * what is wrong with it (unknown op, a member missing or out of range,
 * a guard line that is not KIND /PATH).
 */
int	attach_parse(const char *, size_t, struct attach_msg *,
	    const char **);

/* Write one message; returns its length, or 0 when it does not fit. */
size_t	attach_build(const struct attach_msg *, char *, size_t);

#endif
