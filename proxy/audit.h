/*
 * The audit log: JSON Lines, one event a line, fixed schema, written
 * through audit_write() only.  Schema: docs/audit-log.md.
 */
#ifndef AUDIT_H
#define AUDIT_H

#include <stdint.h>

#define AUDIT_SCHEMA	1

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
	const char	*session;
	const char	*client;	/* "addr:port" */
	const char	*host;
	int		 port;
	const char	*addr;		/* address dialed */
	const char	*via;		/* connect forward transparent dns */
	const char	*rule;		/* "file:line" */
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
};

/* Clear an event: strings NULL, numbers -1. */
void		 audit_event_init(struct audit_event *);

/* path "-" is stdout, NULL logs nothing. */
struct audit	*audit_open(const char *, char *, size_t);
int		 audit_reopen(struct audit *);
void		 audit_close(struct audit *);

/*
 * Write one line.  A failed write is reported once on stderr and never
 * leaves half a line in the file.
 */
void		 audit_write(struct audit *, const struct audit_event *);

#endif
