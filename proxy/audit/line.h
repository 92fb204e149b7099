/*
 * Audit lines read back (line.c).  Below the log (audit.h), which
 * includes it.
 */
#ifndef AUDIT_LINE_H
#define AUDIT_LINE_H

#include <stddef.h>

#include "lib/json.h"

/*
 * Reading lines back: lib/json's strict reader, kept to one line, with
 * room for more members than JSON_MEMBERS_MAX.  Strings are decoded into
 * the caller's store (at least as long as the line); raw keeps the
 * escaped text between the quotes.  Members are struct json_member.
 */
#define AUDIT_REC_MAX	40

struct audit_rec {
	size_t			 n;
	struct json_member	 f[AUDIT_REC_MAX];
};

int		 audit_rec_parse(const char *, size_t, char *, size_t,
		    struct audit_rec *);
const struct json_member *audit_rec_get(const struct audit_rec *,
		    const char *);
const char	*audit_rec_str(const struct audit_rec *, const char *);
long long	 audit_rec_num(const struct audit_rec *, const char *);

#endif
