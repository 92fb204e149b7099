/*
 * Inside proxy/audit/: what the log (audit.c), its sinks (sink.c) and
 * the shipper (ship.c) share and nothing outside the folder uses.
 */
#ifndef AUDIT_INT_H
#define AUDIT_INT_H

#include <stddef.h>

#include "proxy/audit/line.h"

/* The shipping sinks' message formats (RFC 5424; journald native). */
#define AUDIT_SD_ID	"pinhole@32473"
#define AUDIT_SYSLOG_SOCKET	"/dev/log"
#define AUDIT_JOURNAL_SOCKET	"/run/systemd/journal/socket"
size_t		 audit_syslog_format(char *, size_t, const char *, size_t,
		    const struct audit_rec *, const char *, long);
size_t		 audit_journal_format(char *, size_t, const char *, size_t,
		    const struct audit_rec *);
int		 audit_dgram_open(const char *, char *, size_t);
/* A stream's frame: "LEN SP MSG", MSG built at buf + AUDIT_FRAME_HEAD. */
#define AUDIT_FRAME_HEAD	24
size_t		 audit_frame(char *, size_t);

#endif
