/*
 * The sinks' messages (sink.c): a line as syslog's RFC 5424 or
 * journald's native message, and a stream's frame.  Used by the log
 * (audit.c) and the shipper (ship.c), inside proxy/audit/ only.
 */
#ifndef AUDIT_SINK_H
#define AUDIT_SINK_H

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
/* A stream's frame: "LEN SP MSG", MSG built at buf + AUDIT_FRAME_HEAD. */
#define AUDIT_FRAME_HEAD	24
size_t		 audit_frame(char *, size_t);

#endif
