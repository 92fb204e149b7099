/*
 * What `pinhole log verify` says of the sessions the files hold: those
 * whose start or stop line is missing (logverify.c).
 */
#ifndef LOGVERIFY_H
#define LOGVERIFY_H

#include <stddef.h>
#include <stdio.h>

struct audit_verify;
struct audit_vsession;

/*
 * Tell whether a session with no stop line still runs: the gateway pid
 * of its start line is a live process named pinhole that started when
 * the session did.
 */
int	logverify_running(const struct audit_vsession *);

/*
 * Write to fp, each untrusted value through term (which escapes it for
 * a terminal), the sessions the files do not hold whole: their start is
 * missing (unless partial), or their stop and they do not run.  Returns
 * how many were reported as incomplete.
 */
size_t	logverify_report(const struct audit_verify *, int, FILE *,
	    int (*)(FILE *, const char *));

#endif
