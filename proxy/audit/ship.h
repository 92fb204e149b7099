/*
 * Shipping the audit log to a collector: syslog over TCP or TLS
 * (RFC 5424 messages, octet-counting framing of RFC 6587 and RFC 5425),
 * or over RELP (relp.h), in addition to the local log.  Every finished
 * line is put in the destination's spool (spool.h) and sent from there
 * on the gateway's event base; it leaves the spool once the collector's
 * TCP stack has acknowledged all its bytes, or over RELP once the
 * collector has answered that it took it.  A closed or failed connection
 * is made again with a growing delay, and sending starts again at the
 * first line not acknowledged.  docs/audit-log.md, "Shipping", says what this
 * guarantees and what it does not.
 */
#ifndef SHIP_H
#define SHIP_H

#include <stddef.h>
#include <stdint.h>

#include "proxy/audit/transport.h"

struct event_base;
struct ship;

/* Tell whether a --log value names a shipping destination. */
int		 ship_is_dest(const char *);

/*
 * A destination, "syslog+tcp://HOST:PORT", "syslog+tls://HOST:PORT",
 * "syslog+relp://HOST:PORT" or "syslog+relp+tls://HOST:PORT" (HOST a
 * name, resolved now, or an address; [v6] in brackets), or an OTLP one
 * (otlp.h), its spool opened; it connects at once.  NULL with err set on
 * error.
 */
struct ship	*ship_open(struct event_base *, const char *,
		    const struct ship_config *, char *, size_t);
/* Close it, saying (log_info) what was delivered and what waits. */
void		 ship_close(struct ship *);

/* Hand on finished audit lines (len bytes, each ending in '\n'). */
void		 ship_lines(struct ship *, const char *, size_t);

/*
 * The gateway stops: send what waits at once, connecting if the
 * connection is down and trying again every quarter of a second while
 * it fails; over RELP, end the session once the lines sent are
 * answered.  The caller runs the event loop until ship_busy() says it
 * is done, or its time is over; ship_close() then says on stderr what is
 * left, and where it waits.
 */
void		 ship_stop(struct ship *);
/* Tell whether lines wait to be delivered, or a RELP session closes. */
int		 ship_busy(const struct ship *);
/* Read its counts; cheap enough for every scrape. */
void		 ship_stats(const struct ship *, struct ship_stats *);

#endif
