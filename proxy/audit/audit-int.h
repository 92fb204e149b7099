/*
 * Inside the audit log: struct audit, shared by the writing (audit.c)
 * and the opening and closing (open.c), and nothing else.  Include
 * proxy/audit/audit.h first.
 */
#ifndef AUDIT_INT_H
#define AUDIT_INT_H

#include <sys/types.h>

#include <stdint.h>
#include <time.h>

#include "proxy/audit/chain.h"

#define AUDIT_FIELD_MAX	1024	/* bytes of a string value kept */
#define AUDIT_NFIELDS	32
#define AUDIT_LINE_MAX	(AUDIT_NFIELDS * (AUDIT_FIELD_MAX * 6 + 32) + 256)
#define AUDIT_SEAL_MAX	192	/* prev_chain, seq, chain and the end */
#define AUDIT_MSG_MAX	(AUDIT_LINE_MAX * 3)
#define AUDIT_BATCH_MAX	(64 * 1024)	/* lines held for one write */
#define AUDIT_ROOM	4096		/* room a new gateway must find */

enum audit_kind {
	AUDIT_FILE,		/* a file or stdout */
	AUDIT_SYSLOG,		/* RFC 5424 datagrams */
	AUDIT_JOURNALD		/* journald's native protocol */
};

struct audit {
	char		*path;		/* NULL: log nothing */
	enum audit_kind	 kind;
	char		*sock;		/* datagram socket of syslog, journald */
	int		 fd;
	int		 owned;		/* ours to close */
	int		 cuttable;	/* regular file, appending */
	int		 torn;		/* the output ends mid-line */
	int		 go_on;		/* --log-fail=open */
	struct metrics	*metrics;	/* or NULL */
	uint64_t	 lost;		/* lines not written; 0: not failing */
	uint64_t	 lost_bytes;
	char		 lost_first[48];	/* ts of the first lost line */
	char		 lost_last[48];		/* and of the last */
	char		 err[128];	/* why the last write failed */
	char		 why[128];	/* why the first lost line was lost */
	char		*buf;		/* one byte before the line, for '\n' */
	char		*msg;		/* a syslog or journald message */
	char		*store;		/* decoded strings; the resumed tail */

	struct audit_hash *hash;
	unsigned long long seq;		/* of the last line written */
	unsigned char	 chain[AUDIT_HASH_LEN];
	int		 link;		/* next line carries prev_chain */
	const char	*note;		/* a "resume" line to write first */

	audit_hook_cb	 hook;		/* each line written, handed on */
	void		*hook_arg;

	time_t		 ts_sec;	/* the second ts_head shows */
	char		 ts_head[24];	/* "YYYY-MM-DDTHH:MM:SS" */

	long long	 max_size;	/* rotate past this; 0 never */
	int		 keep;
	unsigned long long own_first;	/* seq of our first line; 0: none */
	struct audit_tally *dropped;	/* what rotation deleted of ours */
	long long	 size;		/* of the file now written */
	dev_t		 dev;
	ino_t		 ino;

	/*
	 * The lines made in this pass of the event loop, written together
	 * at its end (audit_flush()); the chain as it was before them, to
	 * go back to when they cannot be written.
	 */
	struct event	*flush;		/* NULL: each line at once */
	char		*out;		/* one byte before the lines, for '\n' */
	size_t		 outlen;
	uint64_t	 nout;
	char		 out_first[48];	/* ts of the first line held */
	char		 out_last[48];	/* and of the last */
	unsigned long long out_seq;
	unsigned char	 out_chain[AUDIT_HASH_LEN];
	int		 out_link;
	enum audit_fsync fsync;
	int		 sync_failed;	/* said once on stderr */
};

/* proxy/audit/audit.c */
const char	*audit_name(const struct audit *);
int		 audit_open_fd(const char *, char *, size_t);
void		 audit_take_fd(struct audit *, int);
ssize_t		 audit_last_line(const char *, size_t, int);
int		 audit_dgram_open(const char *, char *, size_t);

#endif
