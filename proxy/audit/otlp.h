/*
 * The audit log as OpenTelemetry logs: OTLP/HTTP with JSON encoding
 * (POST /v1/logs, an ExportLogsServiceRequest), a second transport of the
 * shipping module (ship.h) over the same spool.  docs/audit-log.md,
 * "OpenTelemetry", has the attribute mapping.
 *
 * The encoder and the reader of the collector's response are pure: no
 * I/O, no libevent.  The transport (otlp_open() ...) is in otlpship.c.
 */
#ifndef OTLP_H
#define OTLP_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include "lib/json.h"

#define OTLP_SEV_INFO		9
#define OTLP_SEV_WARN		13
#define OTLP_HEAD_MAX		8192		/* a response's head */
#define OTLP_BODY_MAX		16384		/* and its body */
#define OTLP_RETRY_AFTER_MAX	3600		/* s, Retry-After taken */

/* What the batch's resource says: service.version, host.name. */
struct otlp_resource {
	const char	*version;
	const char	*host;
};

/*
 * A batch: otlp_batch_begin(), then otlp_record() for each audit line,
 * then otlp_batch_end().  otlp_record() parses the line into store
 * (storelen at least the line's length + 1): 0, or -1 when the line is
 * not an audit line (its record then has the body only).
 */
void		 otlp_batch_begin(struct json_writer *,
		    const struct otlp_resource *);
int		 otlp_record(struct json_writer *, const char *, size_t, char *,
		    size_t);
void		 otlp_batch_end(struct json_writer *);

/* Convert an audit "ts" to nanoseconds since the epoch, as digits. */
int		 otlp_time(const char *, char *, size_t);

/* The head of the collector's response. */
struct otlp_resp {
	int		 status;
	long long	 length;	/* Content-Length; -1 none */
	int		 chunked;	/* Transfer-Encoding: chunked */
	int		 close;		/* the connection is not kept */
	int		 retry_after;	/* s; -1 none (or an HTTP-date) */
};

/*
 * Read a response's head from len bytes: its length, 0 when more bytes
 * are needed, -1 when it is not a response we take.
 */
ssize_t		 otlp_resp_parse(const char *, size_t, struct otlp_resp *);

/*
 * Read an ExportLogsServiceResponse body: the count of rejected records
 * (partialSuccess.rejectedLogRecords, 0 when absent) and its message
 * (as escaped in JSON, printable ASCII only, may be empty) in msg; -1
 * when it is not one.
 */
long long	 otlp_resp_rejected(const char *, size_t, char *, size_t);

/* The transport. */
struct event_base;
struct otlp;
struct ship_config;
struct ship_stats;

/* Tell whether a --log value names an OTLP collector. */
int		 otlp_is_dest(const char *);
/*
 * "otlp+http://HOST:PORT[/PATH]" (PATH /v1/logs by default), or
 * otlp+https:// (the config's --log-tls-* options), its spool in the
 * config's directory.  NULL with err set on error.
 */
struct otlp	*otlp_open(struct event_base *, const char *,
		    const struct ship_config *, char *, size_t);
void		 otlp_close(struct otlp *);
void		 otlp_lines(struct otlp *, const char *, size_t);
void		 otlp_stop(struct otlp *);
int		 otlp_busy(const struct otlp *);
void		 otlp_stats(const struct otlp *, struct ship_stats *);

#endif
