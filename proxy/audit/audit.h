/*
 * The audit log: JSON Lines, one event a line, fixed schema, written
 * through audit_write() only.  Schema: docs/audit-log.md.
 */
#ifndef AUDIT_H
#define AUDIT_H

#include <stdint.h>

#include "lib/json.h"
#include "proxy/audit/chain.h"
#include "proxy/audit/line.h"

#define AUDIT_SCHEMA	2

struct audit;

/*
 * One event.  NULL strings and negative numbers are left out: start from
 * audit_event_init(), which sets every number to -1 (absent), since a
 * zeroed struct would log port 0, status 0 and so on.
 */
struct audit_event {
	const char	*event;		/* start stop reload connect request close dns ... */
	const char	*verdict;	/* allow deny */
	const char	*reason;
	const char	*session;	/* the gateway: run-HEX or a name */
	const char	*sandbox;	/* the command: its id in the session */
	const char	*cmd;		/* its argv, quoted as a shell would */
	int64_t		 pid;		/* its pid, as seen from outside */
	int64_t		 conn;		/* the client connection's number */
	const char	*client;	/* "addr:port" */
	const char	*host;
	int		 port;
	const char	*addr;		/* address dialed */
	const char	*via;		/* connect forward transparent dns */
	const char	*name_from;	/* transparent: fake-ip sni host */
	const char	*rule;		/* "file:line" */
	const char	*method;	/* HTTP requests: the method */
	const char	*path;		/* and the path, query cut */
	int		 status;	/* HTTP status */
	int64_t		 bytes_up;
	int64_t		 bytes_down;
	int64_t		 ms;
	const char	*qname;
	const char	*qtype;
	const char	*answer;
	const char	*detail;	/* free text (escaped) */
	const char	*request_id;	/* escalation request */
	const char	*scope;		/* once session always */
	int64_t		 ttl;		/* s a grant lasts */
	const char	*by;		/* who decided: "uid 1000 via cli" */
	const char	*decider;	/* the decider's URL, when it decided */
	const char	*ask;		/* refusals: "pinhole request HOST:PORT" */
	const char	*secret_scrubbed; /* secrets taken out of a response */
	int64_t		 lost;		/* loss: lines not written */
	int64_t		 lost_bytes;	/* loss: their bytes */
	const char	*lost_first;	/* loss: when the first was lost */
	const char	*lost_last;	/* loss: when the last was lost */
	int64_t		 gateway_pid;	/* start: the gateway's pid */
	int64_t		 count;		/* lines summed up, or dropped */
	const char	*first;		/* ts of the first of them */
	const char	*last;		/* and of the last */
	int64_t		 seq_first;	/* drop: their seq */
	int64_t		 seq_last;
	const char	*end_chain;	/* drop: the chain of the last */
	int64_t		 denied;	/* drop: refusals among them */
};

/* Clear an event: strings NULL, numbers -1. */
void		 audit_event_init(struct audit_event *);

/*
 * Who a line is about: a sandbox (one command attached to a session's
 * gateway), by its id, its command line as audit_cmdline() wrote it and
 * its pid (-1: none known).  struct sandbox (proxy/sandbox/sandbox.h)
 * keeps one first, and hands it to the lines its traffic causes.
 */
#define AUDIT_SANDBOX_ID_LEN	16
#define AUDIT_CMD_LEN		160	/* argv kept, with quotes and "..." */

struct audit_ident {
	char		id[AUDIT_SANDBOX_ID_LEN];
	char		cmd[AUDIT_CMD_LEN];
	long		pid;
};

/* What is left of a log budget (budget.h), in thousandths. */
struct audit_bucket {
	int64_t		lines;
	int64_t		bytes;
	uint64_t	at;		/* mono_ms() of the last refill; 0 never */
};

/* Name the sandbox (NULL: none) in an event. */
void		 audit_event_sandbox(struct audit_event *,
		    const struct audit_ident *);
/*
 * argv as one line a shell would read back: words of plain characters
 * as they are, others in single quotes; cut with "..." to fit.  Pure.
 */
void		 audit_cmdline(char *const [], char *, size_t);

/*
 * Where: a file path, "-" for stdout, "syslog" (RFC 5424 to /dev/log),
 * "journald" (native protocol, or syslog when there is no journal),
 * "syslog:PATH" or "journald:PATH" for another unix datagram socket;
 * NULL logs nothing.  An existing file's chain is resumed.
 * audit_default_path() gives the file used when no --log is given:
 * $XDG_STATE_HOME/pinhole/audit.log, or ~/.local/state/pinhole/audit.log;
 * -1 when neither can be named.
 */
int		 audit_default_path(char *, size_t);
struct audit	*audit_open(const char *, char *, size_t);
int		 audit_reopen(struct audit *);
void		 audit_close(struct audit *);
/*
 * Tell whether the log has room for the lines to come (a file: room
 * allocated past its end), as a gateway must before it starts: 0, or
 * -1 with err saying why not (a full disk, a quota, a size limit).
 */
int		 audit_check_room(struct audit *, char *, size_t);

/*
 * Options, set after audit_open() and before the first audit_write():
 * --log-key FILE makes the chain an HMAC; rotation renames FILE to
 * FILE.1 ... FILE.keep once a line would take it past max_size bytes
 * (0: never).
 */
#define AUDIT_MAX_SIZE	(100LL * 1024 * 1024)
#define AUDIT_KEEP	5
int		 audit_set_key(struct audit *, const char *, char *, size_t);
void		 audit_set_rotation(struct audit *, long long, int);
int		 audit_parse_size(const char *, long long *);

/*
 * --log-fsync: after lines are written, fdatasync() never (the default;
 * a crash of the gateway loses nothing written, a crash of the machine
 * what the kernel had not yet stored), after each write of a pass's
 * lines (batch), or after every line, each written on its own (always).
 */
enum audit_fsync {
	AUDIT_FSYNC_NEVER,
	AUDIT_FSYNC_BATCH,
	AUDIT_FSYNC_ALWAYS
};
int		 audit_parse_fsync(const char *);

/*
 * All of it at once, for the gateway commands: --log, --log-key,
 * --log-max-size, --log-keep, --log-fail, --log-fsync.
 * audit_config_init() sets the defaults.
 */
struct audit_config {
	const char	*log;		/* --log: see audit_open() */
	const char	*keyfile;	/* --log-key, or NULL */
	long long	 max_size;	/* --log-max-size */
	int		 keep;		/* --log-keep */
	int		 fail_open;	/* --log-fail=open */
	enum audit_fsync fsync;		/* --log-fsync */
};
void		 audit_config_init(struct audit_config *);
struct audit	*audit_open_config(const struct audit_config *, char *, size_t);

/*
 * Write one line.  A line that cannot be written is counted and never
 * leaves half a line in the file; the next line that can be written is
 * preceded by a "loss" line that records the count.  Failing and
 * writing again are each said once on stderr, and a loss still owed is
 * said by audit_close().  Returns the line's length, 0 when none.
 */
size_t		 audit_write(struct audit *, const struct audit_event *);

/*
 * On an event loop, a file's lines are held and written together at the
 * end of the pass of the loop that made them (at most 64 KiB held; a
 * longer line, or --log-fsync=always, is written at once).  Until then
 * they are in memory only: audit_flush() writes them now, as code that
 * is about to send something the lines describe must do unless what it
 * sends goes out in a later pass.  Returns -1 when they were lost
 * (counted, as for audit_write()).  audit_set_base() returns -1 when
 * out of memory.
 */
struct event_base;
int		 audit_set_base(struct audit *, struct event_base *);
int		 audit_flush(struct audit *);

/*
 * Tell whether new connections and questions may be served: the log can
 * be written (after lines were lost, the "loss" line is tried now), or
 * audit_set_fail_open() let traffic go on regardless (--log-fail=open).
 * With no log (NULL, or audit_open(NULL)) always yes.
 */
int		 audit_ready(struct audit *);

/*
 * Hand lines, once written whole (in the chain), to cb: one or more
 * whole lines, each ending in a newline, and their length; the lines of
 * one write together.  Shipping (ship.h).
 */
typedef void	(*audit_hook_cb)(void *, const char *, size_t);
void		 audit_set_hook(struct audit *, audit_hook_cb, void *);
void		 audit_set_fail_open(struct audit *, int);
struct metrics;
void		 audit_set_metrics(struct audit *, struct metrics *);

#endif
