/*
 * Checking the audit chain (`pinhole log verify`): files are given oldest
 * first, each as one buffer; the first bad line is named, and the "loss"
 * lines (lines the writer could not write) and "drop" lines (files
 * rotation deleted) counted, the first few described as "FILE:LINE:
 * what", and each session followed from its first line to its stop, so
 * that files that begin in a session's middle, and a session whose stop
 * line never came, can be told.  Pure: no I/O.
 */
#ifndef AUDITVERIFY_H
#define AUDITVERIFY_H

#include <stddef.h>

#include "proxy/audit/audit.h"

#define AUDIT_VERIFY_LOSSES	8	/* loss lines described */
#define AUDIT_VERIFY_NAME	64	/* bytes of a session's name kept */
#define AUDIT_VERIFY_TS		32
#define AUDIT_VERIFY_BUCKETS	4096
#define AUDIT_VERIFY_SESSIONS	(1024 * 1024)	/* sessions followed */

/*
 * A session (one gateway's life, "session" in its lines) met in the
 * files: where its lines begin, whether its start and stop lines are
 * there.  A session whose start is missing began in a file not given
 * (or deleted); one whose stop is missing is running, or its gateway
 * was killed or could not write.
 */
struct audit_vsession {
	char			 name[AUDIT_VERIFY_NAME];
	const char		*file;		/* of its first line here */
	unsigned long long	 line;		/* in that file */
	unsigned long long	 first_seq;	/* its first line's */
	unsigned long long	 last_seq;	/* its last line's */
	unsigned long long	 lines;
	int			 started;	/* its first line is "start" */
	int			 stopped;	/* a "stop" line came */
	int			 superseded;	/* a new start of its name came */
	long long		 gateway_pid;	/* the start line's, or -1 */
	char			 ts[AUDIT_VERIFY_TS];	/* its first line's */
	size_t			 next;		/* in its bucket; 0: none */
};

struct audit_verify {
	struct audit_hash	*hash;
	unsigned char		 seed[AUDIT_HASH_LEN];
	char			*store;		/* for the strict reader */
	size_t			 storelen;

	const char		*file;		/* the file being checked */
	const char		*prevfile;
	int			 known;		/* seq and chain below are set */
	unsigned long long	 seq;
	unsigned char		 chain[AUDIT_HASH_LEN];

	unsigned long long	 lines;		/* checked, all files */
	unsigned long long	 first_seq;
	int			 midchain;	/* began after a file not given */
	unsigned long long	 bad_line;	/* 0: intact so far */
	char			 msg[512];

	/* "loss" lines found: the writer could not write some lines. */
	unsigned long long	 losses;
	unsigned long long	 lost;		/* lines they count */
	char			 loss[AUDIT_VERIFY_LOSSES][256];

	/* "drop" lines: rotation deleted a file with lines of a session. */
	unsigned long long	 drops;
	unsigned long long	 dropped;	/* lines they count */
	unsigned long long	 dropped_denied;	/* refusals among them */
	long long		 drop_from;	/* the last one's seq_first */
	unsigned long long	 drop_cur, drop_cur_denied;	/* its counts */
	unsigned long long	 drop_base, drop_base_denied;	/* earlier ones' */
	char			 drop[AUDIT_VERIFY_LOSSES][384];

	/* The sessions met, from 1 (0 ends a bucket's list). */
	struct audit_vsession	*sess;
	size_t			 nsess;		/* used, with the unused 0 */
	size_t			 sesscap;
	size_t			 bucket[AUDIT_VERIFY_BUCKETS];
	size_t			 cur;		/* the last one met */
	unsigned long long	 untracked;	/* lines past the limit */
};

int	audit_verify_init(struct audit_verify *, const unsigned char *, size_t);
void	audit_verify_free(struct audit_verify *);
int	audit_verify_file(struct audit_verify *, const char *, const char *,
	    size_t);
/*
 * After the last file: the sessions met, in the order met; *n is their
 * count.
 */
const struct audit_vsession *audit_verify_sessions(const struct audit_verify *,
	    size_t *);

#endif
