/*
 * Checking the audit chain (`pinhole log verify`): files are given oldest
 * first, each as one buffer; the first bad line is named, and the "loss"
 * lines (lines the writer could not write) counted, the first few
 * described as "FILE:LINE: what".  Pure: no I/O.
 */
#ifndef AUDITVERIFY_H
#define AUDITVERIFY_H

#include <stddef.h>

#include "proxy/audit/audit.h"

#define AUDIT_VERIFY_LOSSES	8	/* loss lines described */

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
};

int	audit_verify_init(struct audit_verify *, const unsigned char *, size_t);
void	audit_verify_free(struct audit_verify *);
int	audit_verify_file(struct audit_verify *, const char *, const char *,
	    size_t);

#endif
