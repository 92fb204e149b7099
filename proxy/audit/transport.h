/*
 * What every shipping transport (ship.c's syslog and RELP, otlpship.c's
 * OTLP/HTTP) takes and counts.  Below both; ship.h includes it.
 */
#ifndef AUDIT_TRANSPORT_H
#define AUDIT_TRANSPORT_H

#include <stdint.h>

struct ship_config {
	const char	*spool_dir;	/* --log-spool */
	uint64_t	 spool_max;	/* --log-spool-max */
	const char	*ca;		/* --log-tls-ca, or NULL: the system's */
	const char	*cert;		/* --log-tls-cert */
	const char	*key;		/* --log-tls-key */
};

/* A destination's counts since it was opened (its spool's since then). */
struct ship_stats {
	uint64_t	delivered;	/* lines the collector has (OTLP:
					   records it took) */
	uint64_t	pending;	/* bytes in the spool */
	uint64_t	dropped;	/* lines not spooled: it was full */
	uint64_t	connects;	/* connections made */
	int		otlp;		/* OTLP: the two below mean something */
	uint64_t	rejected;	/* records taken but rejected */
	uint64_t	refused;	/* records in requests it refused */
};

#endif
